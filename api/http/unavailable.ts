import { causes } from "../../core/errors";
import { Problem } from "./problem";

/**
 * Whether an error means the database cannot be reached right now (refused, dropped, shutting
 * down, timed out) rather than a bug: such a request gets a 503 with Retry-After, not a 500.
 * Drivers wrap errors (Ponder's query builder, drizzle), so the whole `cause` chain is examined.
 */
const CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENOTFOUND",
  // SQLSTATE class 08 (connection exception) and 57P01-57P03 (admin shutdown, crash shutdown, cannot connect now).
  "08000",
  "08001",
  "08003",
  "08004",
  "08006",
  "57P01",
  "57P02",
  "57P03",
]);
const MESSAGES = new RegExp(
  [
    "Connection terminated",
    "connection timeout",
    "timeout exceeded when trying to connect",
    "Client has encountered a connection error",
    "the database system is (starting up|shutting down)",
  ].join("|"),
  "i",
);

/** Whether `error` (or an error it wraps) means the database cannot be reached right now. */
export function databaseUnavailable(error: unknown): boolean {
  for (const e of causes(error)) {
    const { code } = e as { code?: unknown };
    if (typeof code === "string" && CODES.has(code)) return true;
    if (MESSAGES.test(e.message)) return true;
    if (e instanceof AggregateError && e.errors.some(databaseUnavailable)) return true;
  }
  return false;
}

/** The answer to a request whose database cannot be reached: 503 chain_syncing, ask again in 5 s. */
export function databaseUnreachable(): Problem {
  return new Problem("chain_syncing", "the service's database cannot be reached; ask again in a moment", {
    headers: { "Retry-After": "5" },
  });
}
