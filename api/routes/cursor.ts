/**
 * Page cursors (api-contract.md, "Pages"): opaque to clients, they carry the block the first page
 * pinned, the position of the last item given, and a digest of the request they continue (its path
 * and every query parameter but `cursor` and `limit`), so that a cursor handed to another endpoint,
 * wallet, chain or range is refused rather than read as something it is not.
 */
import { createHash } from "node:crypto";
import { Problem } from "../http/problem";
import type { Position } from "../store/history-store";

/** Where the next page starts, and at which block every page answers. */
export type Cursor = { block: bigint; after: Position };

const VERSION = 1;

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
export function encodeCursor(digest: string, cursor: Cursor): string {
  const body = [VERSION, digest, cursor.block.toString(), cursor.after.block.toString(), cursor.after.logIndex];
  return Buffer.from(JSON.stringify(body)).toString("base64url");
}

const DIGITS = /^(0|[1-9][0-9]{0,18})$/;

/** The cursor a client sent, checked to continue the request with `digest`; a 400 naming `cursor` if not. */
export function decodeCursor(text: string, digest: string): Cursor {
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
  const [version, of, block, afterBlock, afterLog] = Array.isArray(body) && body.length === 5 ? body : [];
  const isDigits = (value: unknown): value is string => typeof value === "string" && DIGITS.test(value);
  const validLog = Number.isSafeInteger(afterLog) && (afterLog as number) >= 0;
  if (version !== VERSION || typeof of !== "string" || !isDigits(block) || !isDigits(afterBlock) || !validLog) {
    throw invalid("not a cursor this service made");
  }
  if (of !== digest) throw invalid("it continues another request (another path, chain or parameters)");
  return { block: BigInt(block), after: { block: BigInt(afterBlock), logIndex: afterLog as number } };
}
