/**
 * A recording JSON-RPC proxy (a server, node:http) in front of a chain: it records every call the
 * service makes, and can hold calls, drop connections, or answer as a faulty RPC would.
 */
import { createServer, type Server } from "node:http";
import { freePort } from "../../devkit/processes";

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

/**
 * A JSON-RPC proxy in front of `target` (node:http) that records every method and its params, on
 * `port` (default: a free one).
 */
export async function startRpcProxy(target: string, intercept?: Intercept, port?: number): Promise<RpcProxy> {
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
  const listening = port ?? (await freePort());
  await new Promise<void>((ok) => server.listen(listening, "127.0.0.1", ok));
  return {
    url: `http://127.0.0.1:${listening}`,
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
