import { type Abi, type Address, decodeFunctionResult, encodeFunctionData, type Hex, toHex } from "viem";

/** Test utilities shared by the differential tests: the seeded random stream, JSON-RPC, exact JSON. */

/** The run's seed: `SEED` from the environment (decimal), or a fresh random one. */
export function chooseSeed(env: NodeJS.ProcessEnv = process.env): number {
  const given = env.SEED?.trim();
  if (given) {
    if (!/^[0-9]+$/.test(given) || Number(given) > 0xffffffff)
      throw new Error(`SEED must be a decimal integer 0..2^32-1, got ${given}`);
    return Number(given);
  }
  return Math.floor(Math.random() * 0x1_0000_0000);
}

/** sfc32, seeded through splitmix32: small, fast, and the same stream on every platform. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    let s = seed >>> 0;
    const split = () => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = split();
    this.b = split();
    this.c = split();
    this.d = split();
    for (let i = 0; i < 16; i++) this.u32();
  }

  u32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** A float in [0, 1). */
  next(): number {
    return this.u32() / 0x1_0000_0000;
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("pick from an empty list");
    return items[this.int(items.length)]!;
  }

  /** Picks by weight: [[weight, value], ...]. */
  weighted<T>(items: readonly (readonly [number, T])[]): T {
    const total = items.reduce((sum, [w]) => sum + w, 0);
    let x = this.next() * total;
    for (const [w, v] of items) {
      x -= w;
      if (x < 0) return v;
    }
    return items[items.length - 1]![1];
  }

  bigint(bits: number): bigint {
    let v = 0n;
    for (let i = 0; i < bits; i += 32) v = (v << 32n) | BigInt(this.u32());
    return v & ((1n << BigInt(bits)) - 1n);
  }

  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [items[i], items[j]] = [items[j]!, items[i]!];
    }
    return items;
  }
}

export type RpcCall = { method: string; params: unknown[] };

/** One JSON-RPC batch request; results in the order of `calls`. */
export async function rpcBatch(url: string, calls: RpcCall[]): Promise<unknown[]> {
  if (calls.length === 0) return [];
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(calls.map((c, id) => ({ jsonrpc: "2.0", id, method: c.method, params: c.params }))),
  });
  if (!res.ok) throw new Error(`JSON-RPC batch: HTTP ${res.status}: ${(await res.text()).slice(0, 500)}`);
  const body = (await res.json()) as { id: number; result?: unknown; error?: { message: string } }[];
  const out: unknown[] = new Array(calls.length);
  for (const item of body) {
    if (item.error) throw new Error(`${calls[item.id]?.method}: ${item.error.message}`);
    out[item.id] = item.result;
  }
  return out;
}

export async function rpc(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  return (await rpcBatch(url, [{ method, params }]))[0];
}

/** How many GETs were sent again because the server closed a kept-alive connection under them. */
export const resentAfterClose = { count: 0 };

/**
 * A GET that is sent again (a few times) when the connection closes before any answer: a server may
 * close an idle kept-alive connection just as the client reuses it, and clients retry idempotent
 * requests then. Any answer at all, whatever its status, is returned as it is.
 */
export async function getResending(url: string, headers: Record<string, string> = {}): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fetch(url, { headers, signal: AbortSignal.timeout(30_000) });
    } catch (error) {
      const code = ((error as Error).cause as { code?: string } | undefined)?.code;
      if (attempt >= 3 || (code !== "UND_ERR_SOCKET" && code !== "ECONNRESET")) throw error;
      resentAfterClose.count++;
    }
  }
}

/** How many answers were asked again, by status (429, 503). */
export const retried: Record<number, number> = {};

export type Answer = { url: string; status: number; contentType: string; body: string; block: bigint | undefined };

/**
 * Asks the service as a client would: a 429 (limit) or a 503 with Retry-After (a chain being
 * written, a store busy) is asked again after the wait it names (capped), a few dozen times.
 */
export async function askService(
  serviceUrl: string,
  url: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  for (let attempt = 0; ; attempt++) {
    const res = await getResending(serviceUrl + url, headers);
    const body = await res.text();
    if ((res.status === 429 || res.status === 503) && attempt < 30) {
      retried[res.status] = (retried[res.status] ?? 0) + 1;
      const seconds = Number(res.headers.get("retry-after")) || 1;
      await new Promise((ok) => setTimeout(ok, Math.min(seconds, res.status === 503 ? 2 : 11) * 1000));
      continue;
    }
    const header = res.headers.get("x-indexed-block");
    return {
      url,
      status: res.status,
      contentType: res.headers.get("content-type") ?? "",
      body,
      block: header !== null && /^\d+$/.test(header) ? BigInt(header) : undefined,
    };
  }
}

export const chunks = <T>(items: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

/**
 * Waits until `block` is no longer the chain's newest. Anvil answers a call at its newest block
 * from its live state, which already holds part of the next block while that is being mined
 * (seen under load: one eth_call at block N gave block N+1's answer, the next gave N's).
 */
export async function untilPast(url: string, block: bigint): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (BigInt((await rpc(url, "eth_blockNumber")) as string) <= block) {
    if (Date.now() > deadline) throw new Error(`block ${block} is still the newest after 60 s`);
    await new Promise((ok) => setTimeout(ok, 100));
  }
}

/** Many eth_calls of a contract, each at its own block, in JSON-RPC batches. */
export async function ethCalls(
  o: { rpcUrl: string; registry: Address; abi: Abi },
  calls: { functionName: string; args: readonly unknown[]; block: bigint }[],
): Promise<unknown[]> {
  if (calls.length > 0)
    await untilPast(
      o.rpcUrl,
      calls.reduce((max, c) => (c.block > max ? c.block : max), 0n),
    );
  const requests = calls.map((c) => ({
    method: "eth_call",
    params: [
      { to: o.registry, data: encodeFunctionData({ abi: o.abi, functionName: c.functionName, args: c.args } as never) },
      toHex(c.block),
    ],
  }));
  const raw = (await pool(chunks(requests, 250), 4, (batch) => rpcBatch(o.rpcUrl, batch))).flat() as Hex[];
  return raw.map((data, i) =>
    decodeFunctionResult({ abi: o.abi, functionName: calls[i]!.functionName, data } as never),
  );
}

export type Mismatch = { what: string; query: string; expected: string; got: string };

/**
 * The check answers fit to compare with the contract (200, JSON, an X-Indexed-Block at least
 * `minBlock`), each with its index and block; the others as mismatches.
 */
export function screenCheckAnswers(
  answers: Answer[],
  minBlock: bigint,
): { toCall: { i: number; block: bigint }[]; mismatches: Mismatch[] } {
  const mismatches: Mismatch[] = [];
  const toCall: { i: number; block: bigint }[] = [];
  for (const [i, a] of answers.entries()) {
    const shape = (got: string) =>
      mismatches.push({
        what: "check answer",
        query: a.url,
        expected: "200 application/json with X-Indexed-Block",
        got,
      });
    if (a.status !== 200) {
      shape(`${a.status} ${a.body.slice(0, 300)}`);
      continue;
    }
    if (!a.contentType.startsWith("application/json")) {
      shape(`Content-Type ${a.contentType}`);
      continue;
    }
    if (a.block === undefined) {
      shape("no X-Indexed-Block");
      continue;
    }
    if (a.block < minBlock) {
      shape(`X-Indexed-Block ${a.block} < ${minBlock}, the last write's block`);
      continue;
    }
    toCall.push({ i, block: a.block });
  }
  return { toCall, mismatches };
}

/** Runs `work` over `items` with at most `limit` in flight; results in input order. */
export async function pool<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** A JSON number that is not an integer (the API must never send one). */
/** Marks a number literal while the JSON is parsed, to turn it into an exact bigint. */
const NUMBER_MARK = "\u0000#num:";

export class NonInteger {
  constructor(readonly source: string) {}
}

/** JSON.parse, but every number becomes an exact bigint (or a NonInteger). */
export function parseJsonExact(text: string): unknown {
  const marked = text.replace(/"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g, (token) =>
    token.startsWith('"') ? token : JSON.stringify(NUMBER_MARK + token),
  );
  return JSON.parse(marked, (_key, value: unknown) => {
    if (typeof value !== "string" || !value.startsWith(NUMBER_MARK)) return value;
    const source = value.slice(NUMBER_MARK.length);
    return /^-?(0|[1-9]\d*)$/.test(source) ? BigInt(source) : new NonInteger(source);
  });
}

/** A canonical string of a value: sorted keys, bigints marked, for exact comparison. */
export function canonical(value: unknown): string {
  if (typeof value === "bigint") return `${value}n`;
  if (value instanceof NonInteger) return `NonInteger(${value.source})`;
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "undefined";
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
}
