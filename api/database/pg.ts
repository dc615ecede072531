import pg from "pg";
import type { AccessDb } from "./db";

/** How a pool's connections present themselves and wait (unset: Postgres's defaults, but STATEMENT_TIMEOUT_MS). */
export type ConnectionSettings = { applicationName?: string; lockTimeoutMs?: number; max?: number };

/** No statement of the service's own pools runs longer: what one request may cost is bounded here too. */
const STATEMENT_TIMEOUT_MS = 15_000;

/** The access tables on Postgres, through the service's own small pool (Ponder's handle is read-only). */
export function pgAccessDb(connectionString: string, settings: ConnectionSettings = {}): AccessDb {
  // A server that does not answer must not hold requests forever: give up connecting after 5 s.
  const pool = new pg.Pool({
    connectionString,
    max: settings.max ?? 4,
    connectionTimeoutMillis: 5_000,
    application_name: settings.applicationName,
    lock_timeout: settings.lockTimeoutMs,
    statement_timeout: STATEMENT_TIMEOUT_MS,
  });
  // An idle connection dropped by the server must not crash the process; the next query reconnects.
  pool.on("error", (error) => console.error("access database:", error.message));
  return {
    query: (text, params) => pool.query(text, params),
    async transaction(work) {
      const client = await pool.connect();
      // A checked-out client's lost connection is also an 'error' event, which with no listener
      // would end the process: keep it, and let the transaction fail with its next query.
      let lost: Error | undefined;
      const onLost = (error: Error) => {
        lost = error;
      };
      client.on("error", onLost);
      try {
        await client.query("BEGIN");
        const result = await work((text, params) => client.query(text, params));
        await client.query("COMMIT");
        return result;
      } catch (error) {
        // A connection whose rollback failed is in an unknown state: destroy it.
        lost ??= await client.query("ROLLBACK").then(
          () => undefined,
          (e: Error) => e,
        );
        throw error;
      } finally {
        client.removeListener("error", onLost);
        client.release(lost);
      }
    },
    close: () => pool.end(),
  };
}
