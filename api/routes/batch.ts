/**
 * The POST bodies (docs/api.md, "Batch checks", "Bulk listings"): `POST /registry/v{1,2}/check`
 * with `{"chainId", "blockNumber", "checks": [{"type": "all", "to": "0x…", …}, …]}`, each item read
 * with the GET check's parameters and rules, named `checks[17].to` in errors; and
 * `POST /registry/v{1,2}/wallets` with `{"chainId", "blockNumber", "direction", "wallets": [...]}`.
 * Either may give `timestamp` in place of `blockNumber`.
 *
 * A body is parsed with exact numbers (parseExactJson): a `tokenId` may be a JSON integer of any
 * size. Keyless clients spend one request of their budget per item, all or none.
 */
import type { Context } from "hono";
import { isLosslessNumber } from "lossless-json";
import type { Address } from "viem";
import { parseAddress } from "../../core/parse";
import { parseExactJson } from "../http/json";
import { Params, parseParam } from "../http/params";
import { Problem } from "../http/problem";
import { utf8 } from "../http/utf8";
import { KEYLESS_MAX_BODY_BYTES, MAX_BATCH_BYTES, MAX_BATCH_ITEMS, MAX_BULK_WALLETS } from "../limits";
import type { Env } from "./env";

/** One item of a batch: its check type and its parameters. */
export type BatchItem<K extends string> = { type: K; params: Params };

/** A batch as asked: the chain's parameters (`chainId`, `blockNumber` or `timestamp`) and the items. */
export type Batch<K extends string> = { params: Params; items: BatchItem<K>[] };

/**
 * The body as text, refused (413) as soon as it is known to exceed MAX_BATCH_BYTES (a keyless
 * client's: KEYLESS_MAX_BODY_BYTES, so that a refused body is not read whole): by its
 * Content-Length, or while it is read. A refused body is left readable (hono's bodyLimit keeps it
 * locked), so that the app reads the rest before answering (api/app.ts, drainBody).
 */
export async function bodyText(request: Request, keyless: boolean): Promise<string> {
  const max = keyless ? KEYLESS_MAX_BODY_BYTES : MAX_BATCH_BYTES;
  const tooLarge = () =>
    new Problem(
      "content_too_large",
      keyless
        ? `a body without an API key may hold at most ${max} bytes, more than its budget's 25 items need; ` +
            "send an X-API-KEY for more"
        : `a body may hold at most ${max} bytes (4 MiB)`,
    );
  if (Number(request.headers.get("Content-Length")) > max) throw tooLarge();
  if (request.body === null) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      size += read.value.length;
      if (size > max) throw tooLarge();
      chunks.push(read.value);
    }
  } finally {
    reader.releaseLock();
  }
  return utf8(Buffer.concat(chunks));
}

/** A JSON value as a parameter's text: strings as they are, numbers exactly as written; else undefined. */
function text(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (isLosslessNumber(value)) return value.value;
  // A number parseExactJson left plain is written as String writes it.
  if (typeof value === "number") return String(value);
  return undefined;
}

const NO_ENTRIES: [string, string][] = [];

/** How errors name a batch's check: `checks[17]`. */
const checkName = (index: number) => `checks[${index}]`;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * A JSON object's fields as parameters, read where they lie: a batch's items are read by the
 * thousand, and copying each one's fields into entries and a map took 6% of an airdrop's time, and
 * garbage (docs/performance.md). A field the routes read (`names`) must be a string or a number;
 * any other field is not a parameter.
 */
class FieldParams extends Params {
  /** `item`: the object's index in the body's checks (errors name its fields `checks[17].to`); else the body's own. */
  constructor(
    private readonly object: Record<string, unknown>,
    private readonly item: number | undefined,
    names: ReadonlySet<string>,
  ) {
    super(NO_ENTRIES);
    for (const name in object) {
      if (text(object[name]) !== undefined || !names.has(name)) continue;
      const param = this.named(name);
      throw new Problem("invalid_parameter", `'${param}': expected a string (or, for a number, a JSON number)`, {
        param,
      });
    }
  }

  protected override named(name: string): string {
    // Named only for an error: a batch's items are read by the thousand.
    return this.item === undefined ? name : `${checkName(this.item)}.${name}`;
  }

  override get(name: string): string | undefined {
    return Object.hasOwn(this.object, name) ? text(this.object[name]) : undefined;
  }

  override entries(): [string, string][] {
    return Object.entries(this.object).flatMap(([name, value]): [string, string][] => {
      const given = text(value);
      return given === undefined ? [] : [[name, given]];
    });
  }
}

/** A body's list (`checks`, `wallets`) and its other fields, as parameters. */
type ListBody = { params: Params; items: unknown[] };

/**
 * The JSON object in the request's body, with its list `name` (1 to `max` items) and its fields
 * `fields` as parameters. The keyless budget is spent for its items (or for one request, when the
 * body is refused).
 */
async function readListBody(
  c: Context<Env>,
  list: { name: string; max: number; what: string },
  fields: readonly string[],
): Promise<ListBody> {
  let body: ListBody;
  try {
    const raw = await bodyText(c.req.raw, c.var.budget.rows() !== undefined);
    const type = c.req.header("Content-Type") ?? "";
    if (!/^application\/json\s*(;|$)/i.test(type)) {
      throw new Problem("unsupported_media_type", "the body is JSON: send Content-Type: application/json");
    }
    let json: unknown;
    try {
      json = parseExactJson(raw);
    } catch (error) {
      throw new Problem("invalid_body", `the body is not valid JSON (${(error as Error).message})`);
    }
    const items = isObject(json) ? json[list.name] : undefined;
    if (!isObject(json) || !Array.isArray(items)) {
      const optional = fields.map((f) => `"${f}"`).join(", ");
      throw new Problem(
        "invalid_body",
        `the body is a JSON object with an array "${list.name}" (and optional ${optional})`,
      );
    }
    if (items.length === 0) throw new Problem("invalid_body", `"${list.name}" holds 1 to ${list.max} ${list.what}`);
    if (items.length > list.max) {
      throw new Problem("content_too_large", `"${list.name}" holds at most ${list.max} ${list.what}; split the list`);
    }
    body = { items, params: new FieldParams(json, undefined, new Set(fields)) };
  } catch (error) {
    // A refused body still costs a keyless client one unit.
    await c.var.budget.charge(1);
    throw error;
  }
  await c.var.budget.spend(body.items.length, `one per item of "${list.name}"`);
  return body;
}

/** The batch of checks in the request's body, its items' types checked against `types`. */
export async function readBatch<K extends string>(
  c: Context<Env>,
  types: readonly K[],
  names: ReadonlySet<string>,
): Promise<Batch<K>> {
  const { params, items } = await readListBody(c, { name: "checks", max: MAX_BATCH_ITEMS, what: "checks" }, [
    "chainId",
    "blockNumber",
    "timestamp",
  ]);
  return {
    params,
    items: items.map((item, index) => {
      if (!isObject(item)) {
        const at = checkName(index);
        throw new Problem("invalid_parameter", `'${at}': expected an object`, { param: at });
      }
      const type = item.type;
      if (type === undefined) {
        const param = `${checkName(index)}.type`;
        throw new Problem("missing_parameter", `'${param}' is required`, { param });
      }
      if (typeof type !== "string" || !types.includes(type as K)) {
        const param = `${checkName(index)}.type`;
        throw new Problem("invalid_parameter", `'${param}': expected one of ${types.join(", ")}`, { param });
      }
      return { type: type as K, params: new FieldParams(item, index, names) };
    }),
  };
}

/** A bulk listing's wallets, and its parameters (`chainId`, `blockNumber` or `timestamp`, `direction`). */
export async function readWallets(c: Context<Env>): Promise<{ params: Params; wallets: Address[] }> {
  const { params, items } = await readListBody(c, { name: "wallets", max: MAX_BULK_WALLETS, what: "wallets" }, [
    "chainId",
    "blockNumber",
    "timestamp",
    "direction",
  ]);
  const wallets = items.map((item, i) => {
    const at = `wallets[${i}]`;
    if (typeof item !== "string") throw new Problem("invalid_parameter", `'${at}': expected an address`, { param: at });
    return parseParam(at, item, parseAddress);
  });
  return { params, wallets };
}
