/**
 * Page cursors (docs/api.md, "Pages"): opaque to clients, they carry the block the first page
 * pinned, where the last item given sits (a position on the chain, or for lists ordered by address
 * the last address), and a digest of the request they continue (its path and every query parameter
 * but `cursor` and `limit`), so that a cursor handed to another endpoint, wallet, chain or range is
 * refused rather than read as something it is not.
 */
import { createHash } from "node:crypto";
import type { Address } from "viem";
import { MAX_BLOCK_NUMBER } from "../../core/parse";
import { Problem } from "../http/problem";
import type { Position } from "../store/history-store";

/** Where the next page starts (after a position, or after an address), and at which block every page answers. */
export type Cursor<A extends Position | Address = Position> = { block: bigint; after: A };

/** What a list is ordered by: the chain's positions, or addresses. */
export type CursorKind = "position" | "address";

const VERSION = 1;
/** The largest log index a cursor may carry: the column is a 32-bit integer. */
const MAX_LOG_INDEX = 2 ** 31 - 1;

/** The digest a cursor carries of the request it continues: path and parameters, in a fixed order. */
export function requestDigest(path: string, params: Iterable<[string, string]>): string {
  const kept = [...params]
    .filter(([name]) => name !== "cursor" && name !== "limit")
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return createHash("sha256")
    .update(JSON.stringify([path, kept]))
    .digest("base64url")
    .slice(0, 16);
}

/** The cursor for the page after `after`, at `block`, of the request with `digest`. */
export function encodeCursor(digest: string, cursor: Cursor<Position | Address>): string {
  const { after } = cursor;
  const where = typeof after === "string" ? [after] : [after.block.toString(), after.logIndex];
  return Buffer.from(JSON.stringify([VERSION, digest, cursor.block.toString(), ...where])).toString("base64url");
}

const DIGITS = /^(0|[1-9][0-9]{0,18})$/;
const ADDRESS = /^0x[0-9a-f]{40}$/;

const isBlock = (value: unknown): value is string =>
  typeof value === "string" && DIGITS.test(value) && BigInt(value) <= MAX_BLOCK_NUMBER;

/** Where a cursor's body says the last item was, if it is of `kind`. */
function afterOf(kind: CursorKind, where: unknown[]): Position | Address | undefined {
  if (kind === "address")
    return where.length === 1 && typeof where[0] === "string" && ADDRESS.test(where[0])
      ? (where[0] as Address)
      : undefined;
  const [block, logIndex] = where;
  const validLog = Number.isSafeInteger(logIndex) && (logIndex as number) >= 0 && (logIndex as number) <= MAX_LOG_INDEX;
  return where.length === 2 && isBlock(block) && validLog
    ? { block: BigInt(block), logIndex: logIndex as number }
    : undefined;
}

/** The cursor a client sent, checked to continue the request with `digest`; a 400 naming `cursor` if not. */
export function decodeCursor(text: string, digest: string, kind: "address"): Cursor<Address>;
export function decodeCursor(text: string, digest: string, kind?: "position"): Cursor<Position>;
export function decodeCursor(text: string, digest: string, kind: CursorKind = "position"): Cursor<Position | Address> {
  const invalid = (why: string) =>
    new Problem("invalid_parameter", `'cursor': ${why}; use the cursor of a Link header as it was given`, {
      param: "cursor",
    });
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    throw invalid("not a cursor this service made");
  }
  const [version, of, block, ...where] = Array.isArray(body) ? body : [];
  const after = afterOf(kind, where);
  if (version !== VERSION || typeof of !== "string" || !isBlock(block) || after === undefined) {
    throw invalid("not a cursor this service made");
  }
  if (of !== digest) throw invalid("it continues another request (another path, chain or parameters)");
  return { block: BigInt(block), after };
}
