/**
 * Tools for the chain-table tests (discovery, multichain): a recording JSON-RPC proxy, HTTP calls
 * to the service that carry its access headers, and a service start that finds the port ponder
 * really listens on.
 */
import { createServer, type Server } from "node:http";
import { stripVTControlCharacters } from "node:util";
import { type Abi, type Address, decodeFunctionResult, encodeFunctionData, type Hex } from "viem";
import { rpc, untilPast } from "./common";
import { freePort, type Service, waitFor } from "./processes";

export { rpc };

// ---------------------------------------------------------------------------------------------
// Calls to the service

/** The headers every request to the service carries: its API key, so the keyless limit does not apply. */
export function serviceHeaders(service: Service): Record<string, string> {
  return service.headers;
}

export type HttpAnswer = { path: string; status: number; headers: Headers; text: string };

/** GET `path` from the service, with its access headers; 429s are waited out, never counted. */
export async function serviceGet(service: Service, path: string): Promise<HttpAnswer> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(service.url + path, {
      headers: serviceHeaders(service),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    if (res.status === 429 && attempt < 20) {
      const seconds = Number(res.headers.get("retry-after")) || 1;
      await new Promise((ok) => setTimeout(ok, Math.min(seconds, 11) * 1000));
      continue;
    }
    return { path, status: res.status, headers: res.headers, text };
  }
}

/** X-Indexed-Block of an answer, when it has a valid one. */
/** One chain of `GET /registry/chains`, as README documents it. */
export type ListedChain = {
  chainId: number;
  name: string;
  title: string;
  testnet: boolean;
  registries: Record<"v1" | "v2", { address: string; startBlock: number } | null>;
  indexedBlock: number | null;
  status: string;
  lagSeconds: number | null;
};

export function indexedBlockOf(a: HttpAnswer): bigint | undefined {
  const header = a.headers.get("x-indexed-block");
  return header !== null && /^\d+$/.test(header) ? BigInt(header) : undefined;
}

/** The service's output without colour codes. */
export const plainOutput = (service: Service) => stripVTControlCharacters(service.child.output);

// ---------------------------------------------------------------------------------------------
// A recording JSON-RPC proxy

export type RecordedCall = { method: string; params: unknown[]; at: number; id?: unknown; batch?: boolean };

/** A call answered by the proxy itself (with the call's id), as an RPC would: an error or a result. */
export type Reply = { error: { code: number; message: string } } | { result: unknown };

/**
 * What the proxy does instead of forwarding: drop the connection; answer with this status and
 * body; or answer the calls `reply` answers itself and forward the others (a batch stays a batch).
 */
export type Fault =
  | { drop: true }
  | { status: number; body: string }
  | { reply: (call: RecordedCall) => Reply | undefined };
/**
 * Called with each request's calls before it is forwarded; it may take its time (holding the
 * request), and may return a fault to answer with instead.
 */
export type Intercept = (calls: RecordedCall[]) => Promise<Fault | undefined> | Fault | undefined;

export type RpcProxy = {
  url: string;
  /** Every JSON-RPC call forwarded, batches unpacked, in arrival order. */
  readonly calls: RecordedCall[];
  /** Forgets what was recorded. */
  clear(): void;
  close(): Promise<void>;
};

/** A JSON-RPC proxy in front of `target` (node:http) that records every method and its params. */
export async function startRpcProxy(target: string, intercept?: Intercept): Promise<RpcProxy> {
  let calls: RecordedCall[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString();
    const at = Date.now();
    const these: RecordedCall[] = [];
    let items: unknown[] | undefined;
    let batch = false;
    try {
      const parsed = JSON.parse(body) as unknown;
      batch = Array.isArray(parsed);
      items = Array.isArray(parsed) ? parsed : [parsed];
      for (const item of items) {
        const { method, params, id } = item as { method?: unknown; params?: unknown; id?: unknown };
        these.push({ method: String(method), params: Array.isArray(params) ? params : [], at, id, batch });
      }
    } catch {
      these.push({ method: "(not JSON)", params: [body.slice(0, 200)], at });
    }
    calls.push(...these);
    const forward = async (text: string) => {
      const upstream = await fetch(target, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: text,
      });
      return { status: upstream.status, text: await upstream.text() };
    };
    const send = (status: number, text: string) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(text);
    };
    try {
      const fault = await intercept?.(these);
      if (fault && "drop" in fault) return void res.destroy();
      if (fault && "status" in fault) return send(fault.status, fault.body);
      const replies = fault && items ? these.map((call) => fault.reply(call)) : [];
      if (!replies.some((r) => r !== undefined)) {
        const upstream = await forward(body);
        return send(upstream.status, upstream.text);
      }
      // Some calls answered here: the others go upstream together, their answers matched by id.
      const rest = items!.filter((_, i) => replies[i] === undefined);
      const upstream =
        rest.length > 0 ? (JSON.parse((await forward(JSON.stringify(rest))).text) as { id?: unknown }[]) : [];
      const answers = these.map((call, i) =>
        replies[i] ? { jsonrpc: "2.0", id: call.id ?? null, ...replies[i] } : upstream.find((a) => a.id === call.id),
      );
      send(200, JSON.stringify(batch ? answers : answers[0]));
    } catch {
      res.destroy();
    }
  });
  const port = await freePort();
  await new Promise<void>((ok) => server.listen(port, "127.0.0.1", ok));
  return {
    url: `http://127.0.0.1:${port}`,
    get calls() {
      return calls;
    },
    clear() {
      calls = [];
    },
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC

export const hex = (n: bigint | number) => `0x${BigInt(n).toString(16)}`;

/** Sends one transaction from an unlocked anvil account and waits for it; throws unless it succeeded. */
export async function sendTx(
  url: string,
  from: Address,
  to: Address,
  data: Hex,
  gas = 500_000,
): Promise<{ block: bigint; hash: Hex }> {
  const hash = (await rpc(url, "eth_sendTransaction", [{ from, to, data, gas: hex(gas) }])) as Hex;
  const receipt = await waitFor(
    `the receipt of ${hash}`,
    async () =>
      ((await rpc(url, "eth_getTransactionReceipt", [hash])) as { status: Hex; blockNumber: Hex } | null) ?? undefined,
    60_000,
  );
  if (receipt.status !== "0x1") throw new Error(`transaction ${hash} from ${from} to ${to} reverted`);
  return { block: BigInt(receipt.blockNumber), hash };
}

/** A registry write: encodes the call and sends it. */
export const sendWrite = (
  url: string,
  abi: Abi,
  from: Address,
  registry: Address,
  functionName: string,
  args: readonly unknown[],
) => sendTx(url, from, registry, encodeFunctionData({ abi, functionName, args } as never)).then((r) => r.block);

/** A registry view at a block, by eth_call. */
export async function callView(
  url: string,
  abi: Abi,
  registry: Address,
  functionName: string,
  args: readonly unknown[],
  block: bigint,
  /** Set while mining is paused: then the newest block is whole. */
  paused = false,
): Promise<unknown> {
  if (!paused) await untilPast(url, block);
  const data = (await rpc(url, "eth_call", [
    { to: registry, data: encodeFunctionData({ abi, functionName, args } as never) },
    hex(block),
  ])) as Hex;
  return decodeFunctionResult({ abi, functionName, data } as never) as unknown;
}
