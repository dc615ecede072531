/**
 * Batch checks (api-contract.md, "Batch checks"): `POST /registry/v{1,2}/check` with
 * `{"chainId", "blockNumber", "checks": [{"type": "all", "to": "0x…", …}, …]}`. Each item is read
 * with the GET check's parameters and rules, named `checks[17].to` in errors; every item is
 * answered at one block.
 *
 * The body is parsed with exact numbers (lossless-json): a `tokenId` may be a JSON integer of any
 * size. Keyless clients spend one request of their budget per item, all or none.
 */
import type { Context } from "hono";
import { isLosslessNumber, parse } from "lossless-json";
import { Params } from "../http/params";
import { Problem } from "../http/problem";
import { MAX_BATCH_BYTES, MAX_BATCH_ITEMS } from "../limits";
import type { Env } from "./env";

/** One item of a batch: its check type and its parameters. */
export type BatchItem<K extends string> = { type: K; params: Params };

/** A batch as asked: the chain's parameters (`chainId`, `blockNumber`) and the items. */
export type Batch<K extends string> = { params: Params; items: BatchItem<K>[] };

/**
 * The body as text, refused (413) as soon as it is known to exceed MAX_BATCH_BYTES: by its
 * Content-Length, or while it is read. A refused body is left readable (hono's bodyLimit keeps it
 * locked), so that the app reads the rest before answering (api/app.ts, drainBody).
 */
async function bodyText(request: Request): Promise<string> {
  const tooLarge = () =>
    new Problem("content_too_large", `a batch's body may hold at most ${MAX_BATCH_BYTES} bytes (4 MiB)`);
  if (Number(request.headers.get("Content-Length")) > MAX_BATCH_BYTES) throw tooLarge();
  if (request.body === null) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      size += read.value.length;
      if (size > MAX_BATCH_BYTES) throw tooLarge();
      chunks.push(read.value);
    }
  } finally {
    reader.releaseLock();
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

/** A JSON value as a parameter's text: strings as they are, numbers exactly as written; else undefined. */
function text(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (isLosslessNumber(value)) return value.value;
  return undefined;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** An object's fields as parameters; a field the checks read (`names`) must be a string or a number. */
function fields(object: Record<string, unknown>, prefix: string, names: ReadonlySet<string>): Params {
  const entries: [string, string][] = [];
  for (const [name, value] of Object.entries(object)) {
    const given = text(value);
    if (given !== undefined) entries.push([name, given]);
    else if (names.has(name)) {
      const param = prefix === "" ? name : `${prefix}.${name}`;
      throw new Problem("invalid_parameter", `'${param}': expected a string (or, for a number, a JSON number)`, {
        param,
      });
    }
  }
  return new Params(entries, prefix);
}

/**
 * The batch in the request's body, its items' types checked against `types`; the keyless budget
 * is spent for its items (or for one request, when the body is refused).
 */
export async function readBatch<K extends string>(
  c: Context<Env>,
  types: readonly K[],
  names: ReadonlySet<string>,
): Promise<Batch<K>> {
  let items: unknown[];
  let params: Params;
  try {
    const raw = await bodyText(c.req.raw);
    const type = c.req.header("Content-Type") ?? "";
    if (!/^application\/json\s*(;|$)/i.test(type)) {
      throw new Problem("unsupported_media_type", "a batch's body is JSON: send Content-Type: application/json");
    }
    let body: unknown;
    try {
      body = parse(raw);
    } catch (error) {
      throw new Problem("invalid_body", `the body is not valid JSON (${(error as Error).message})`);
    }
    if (!isObject(body) || !Array.isArray(body.checks)) {
      throw new Problem(
        "invalid_body",
        'the body is a JSON object with an array "checks" (and optional "chainId", "blockNumber")',
      );
    }
    if (body.checks.length === 0) throw new Problem("invalid_body", `"checks" holds 1 to ${MAX_BATCH_ITEMS} checks`);
    if (body.checks.length > MAX_BATCH_ITEMS) {
      throw new Problem("content_too_large", `"checks" holds at most ${MAX_BATCH_ITEMS} checks; split the batch`);
    }
    items = body.checks;
    params = fields(body, "", new Set(["chainId", "blockNumber"]));
  } catch (error) {
    // A refused body still counts as one request of a keyless client's budget.
    await c.var.spendKeyless(1);
    throw error;
  }
  await c.var.spendKeyless(items.length);
  return {
    params,
    items: items.map((item, i) => {
      const at = `checks[${i}]`;
      if (!isObject(item)) throw new Problem("invalid_parameter", `'${at}': expected an object`, { param: at });
      const type = item.type;
      if (type === undefined)
        throw new Problem("missing_parameter", `'${at}.type' is required`, { param: `${at}.type` });
      if (typeof type !== "string" || !types.includes(type as K)) {
        throw new Problem("invalid_parameter", `'${at}.type': expected one of ${types.join(", ")}`, {
          param: `${at}.type`,
        });
      }
      return { type: type as K, params: fields(item, at, names) };
    }),
  };
}
