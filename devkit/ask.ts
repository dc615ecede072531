/**
 * The HTTP client for the service's answers. By default it asks as a patient client would: a 429
 * (a limit) or a 503 with Retry-After (a chain being written, a store busy) is asked again after
 * the wait it names (capped: 11 s and 2 s), up to 30 times; and a GET or HEAD whose connection the
 * server closed before any answer (an idle kept-alive connection closed just as it was reused) is
 * sent again, up to 3 times. With `reask: false` the first answer, or failure, is the result: for
 * what a test asserts of limits, 503s and connections themselves. Every answer is held to the
 * OpenAPI document (devkit/openapi-check.ts): one that does not match it fails the test.
 */
import { Client, type Dispatcher } from "undici";
import { zeroAddress } from "viem";
import { checkAnswer } from "./openapi-check";
import { waitFor } from "./processes";

export type Answer = {
  /** The path and query asked. */
  path: string;
  status: number;
  headers: Headers;
  text: string;
  /** X-Indexed-Block, when it is a block number. */
  block: bigint | undefined;
};

export type AskOptions = {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Per attempt (default 30 s; 0: no limit). */
  timeoutMs?: number;
  /** Ask again after a 429, a 503 with Retry-After or a closed connection (default true). */
  reask?: boolean;
  /** The connections to ask over (default: fetch's shared pool); one undici Client pins one connection. */
  dispatcher?: Dispatcher;
};

/** How many requests were asked again, by cause ("429", "503", "connection closed"), for the tests' logs. */
export const reasked: Record<string, number> = {};

const count = (cause: string) => {
  reasked[cause] = (reasked[cause] ?? 0) + 1;
};

/** Asks `base + path` (see the module's head): the answer, its body read whole. */
export async function ask(base: string, path: string, options: AskOptions = {}): Promise<Answer> {
  const { method = "GET", headers = {}, body, timeoutMs = 30_000, reask = true, dispatcher } = options;
  let resent = 0;
  for (let asked = 0; ; ) {
    let res: Response;
    try {
      const signal = timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined;
      res = await fetch(base + path, { method, headers, body, signal, dispatcher } as RequestInit);
    } catch (error) {
      if (!reask || resent >= 3 || !closedBeforeAnswer(error) || (method !== "GET" && method !== "HEAD")) throw error;
      resent++;
      count("connection closed");
      continue;
    }
    const text = await res.text();
    checkAnswer({ method, path, status: res.status, headers: res.headers, text });
    const wait = reask && asked < 30 ? waitBeforeAskingAgain(res) : undefined;
    if (wait === undefined) {
      const header = res.headers.get("x-indexed-block");
      const block = header !== null && /^\d+$/.test(header) ? BigInt(header) : undefined;
      return { path, status: res.status, headers: res.headers, text, block };
    }
    asked++;
    count(String(res.status));
    await new Promise((ok) => setTimeout(ok, wait));
  }
}

/** The server closed the connection before answering. */
function closedBeforeAnswer(error: unknown): boolean {
  const code = ((error as Error).cause as { code?: string } | undefined)?.code;
  return code === "UND_ERR_SOCKET" || code === "ECONNRESET";
}

/** Milliseconds to wait before asking again, for a 429 or a 503 with Retry-After; undefined for any other answer. */
function waitBeforeAskingAgain(res: Response): number | undefined {
  const retryAfter = res.headers.get("retry-after");
  if (res.status === 429) return Math.min(Number(retryAfter) || 1, 11) * 1000;
  if (res.status === 503 && retryAfter !== null) return Math.min(Number(retryAfter) || 1, 2) * 1000;
  return undefined;
}

/** The block the service has indexed a chain up to (a check's X-Indexed-Block); undefined until it answers. */
export async function indexedBlock(o: {
  serviceUrl: string;
  chainId: number;
  headers?: Record<string, string>;
  dispatcher?: Dispatcher;
}): Promise<bigint | undefined> {
  const a = await ask(
    o.serviceUrl,
    `/registry/v2/check/all?chainId=${o.chainId}&to=${zeroAddress}&from=${zeroAddress}`,
    { headers: o.headers, dispatcher: o.dispatcher },
  );
  return a.status === 200 ? a.block : undefined;
}

/**
 * New connections asked in a row by untilIndexed: an API replica's cluster hands new connections to
 * its workers in turn (two in the tests), and each worker follows the chain on its own (one was 3
 * blocks behind the other after a reorganization, under CI's load); one kept-alive connection would
 * ask only one of them.
 */
const CONNECTIONS = 4;

/**
 * Waits until the service at `serviceUrl` has indexed `block` of the chain, on each of its worker
 * processes: asked on CONNECTIONS new connections in a row, each must say it. Returns the lowest
 * block they said.
 */
export async function untilIndexed(
  o: { serviceUrl: string; chainId: number; headers?: Record<string, string> },
  block: bigint,
  timeoutMs = 180_000,
): Promise<bigint> {
  const onNewConnection = async () => {
    const dispatcher = new Client(o.serviceUrl);
    try {
      return await indexedBlock({ ...o, dispatcher });
    } finally {
      await dispatcher.close();
    }
  };
  return waitFor(
    `${o.serviceUrl} (each worker) to index block ${block}`,
    async () => {
      let lowest: bigint | undefined;
      for (let i = 0; i < CONNECTIONS; i++) {
        const indexed = await onNewConnection();
        if (indexed === undefined || indexed < block) return undefined;
        if (lowest === undefined || indexed < lowest) lowest = indexed;
      }
      return lowest;
    },
    timeoutMs,
  );
}
