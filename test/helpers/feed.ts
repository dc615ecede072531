/**
 * The change log as its consumers read it: the pull pages (GET /registry/feed/events) and the
 * stream (GET /registry/feed) as a standard EventSource client parses it (eventsource-parser),
 * reconnecting with Last-Event-ID as a browser does. Nothing here uses the service's code.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createParser } from "eventsource-parser";
import { Webhook } from "standardwebhooks";
import type { Hex } from "viem";
import type { Answer } from "../../devkit/ask";
import type { Rng } from "../../devkit/random";
import type { ApiRecord } from "./compare-listings";
import { parseJsonExact } from "./json";

/** An entry of the change log, as parsed with exact integers. */
export type FeedEntry = {
  seq: bigint;
  chainId: number;
  version: "v1" | "v2";
  blockNumber: bigint;
  blockHash: Hex;
  logIndex: number;
  retracts: bigint | null;
  event: ApiRecord;
};

/** An entry's JSON as the feed writes it, parsed. */
const entryOf = (text: string | FeedEntry): FeedEntry => {
  const e = (typeof text === "string" ? parseJsonExact(text) : text) as FeedEntry;
  return { ...e, chainId: Number(e.chainId), logIndex: Number(e.logIndex) };
};

/** The whole change log, page by page (at random limits) from the oldest entry. */
export async function pullFeed(get: (path: string) => Promise<Answer>, rng: Rng): Promise<FeedEntry[]> {
  const entries: FeedEntry[] = [];
  let cursor = 0n;
  for (;;) {
    const answer = await get(`/registry/feed/events?cursor=${cursor}&limit=${1 + rng.int(50)}`);
    if (answer.status !== 200) throw new Error(`the change log after ${cursor}: ${answer.status} ${answer.text}`);
    const page = parseJsonExact(answer.text) as { entries: FeedEntry[]; cursor: bigint };
    if (page.entries.length === 0) return entries;
    entries.push(...page.entries.map(entryOf));
    cursor = page.cursor;
  }
}

/** The entries of the log not retracted, in log order. */
export function liveEntries(entries: readonly FeedEntry[]): FeedEntry[] {
  const retracted = new Set(entries.flatMap((e) => (e.retracts === null ? [] : [e.retracts])));
  return entries.filter((e) => e.retracts === null && !retracted.has(e.seq));
}

/** What a stream's reader got: each event's id and entry, over every connection. */
export type Streamed = { ids: string[]; entries: FeedEntry[]; connections: number };

/**
 * Reads the events of a stream's answer into `got` as a standard EventSource client parses them, and
 * closes the connection (aborts `stop`) once `count` have come or `enough` says so.
 */
async function readEvents(res: Response, got: Streamed, count: number, stop: AbortController, enough = () => false) {
  let left = count;
  const parser = createParser({
    onEvent: (event) => {
      if (left <= 0) return;
      got.ids.push(event.id!);
      got.entries.push(entryOf(event.data));
      if (--left === 0 || enough()) stop.abort();
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
    parser.feed(decoder.decode(chunk, { stream: true }));
}

/**
 * Reads GET /registry/feed?`query` until `enough` says so (or `timeoutMs` passes: an error), closing
 * the connection after a random number of events (1 to 20) and opening it again with the last id
 * received as Last-Event-ID, the same URL otherwise, as EventSource does.
 */
export async function streamFeed(
  base: string,
  query: string,
  options: { headers?: Record<string, string>; rng: Rng; enough: (got: Streamed) => boolean; timeoutMs?: number },
): Promise<Streamed> {
  const got: Streamed = { ids: [], entries: [], connections: 0 };
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  while (!options.enough(got)) {
    if (Date.now() > deadline)
      throw new Error(`GET /registry/feed${query}: ${got.ids.length} events in ${got.connections} connections`);
    const last = got.ids.at(-1);
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), Math.max(0, deadline - Date.now()));
    const res = await fetch(`${base}/registry/feed${query}`, {
      headers: { ...options.headers, ...(last === undefined ? {} : { "Last-Event-ID": last }) },
      signal: stop.signal,
    });
    got.connections++;
    if (res.status !== 200) throw new Error(`GET /registry/feed${query}: ${res.status} ${await res.text()}`);
    try {
      await readEvents(res, got, 1 + options.rng.int(20), stop, () => options.enough(got));
    } catch (error) {
      if (!stop.signal.aborted) throw error;
    } finally {
      clearTimeout(timer);
    }
  }
  return got;
}

/** A stream followed through its server's crashes: what it got, and what it met that it should not have. */
export type Follower = Streamed & { faults: string[]; stop(): Promise<Streamed> };

/**
 * Follows GET /registry/feed?`query` on whatever server `base()` names now, as EventSource does
 * through a server's crash: a connection that fails or ends is opened again after a pause, with the
 * last id received as Last-Event-ID; it also closes one itself after 1 to 50 events. A refusal while
 * the server starts (503) is waited out; any other status is a fault.
 */
export function followFeed(
  base: () => string,
  query: string,
  options: { headers?: Record<string, string>; rng: Rng },
): Follower {
  const got: Follower = { ids: [], entries: [], connections: 0, faults: [], stop: async () => got };
  let stopped = false;
  let current: AbortController | undefined;
  const pause = () => new Promise((ok) => setTimeout(ok, 200 + options.rng.int(800)));
  const follow = async () => {
    while (!stopped) {
      const last = got.ids.at(-1);
      const stop = new AbortController();
      current = stop;
      try {
        const res = await fetch(`${base()}/registry/feed${query}`, {
          headers: { ...options.headers, ...(last === undefined ? {} : { "Last-Event-ID": last }) },
          signal: stop.signal,
        });
        got.connections++;
        if (res.status !== 200) {
          if (res.status !== 503) got.faults.push(`GET /registry/feed${query}: ${res.status} ${await res.text()}`);
          else await res.body?.cancel();
          await pause();
          continue;
        }
        await readEvents(res, got, 1 + options.rng.int(50), stop);
      } catch {
        // Refused, reset or aborted: the server is down, or this reader closed it.
      }
      if (!stopped && !stop.signal.aborted) await pause();
    }
  };
  const running = follow();
  got.stop = async () => {
    stopped = true;
    current?.abort();
    await running;
    return got;
  };
  return got;
}

/** What a webhook receiver took: each accepted delivery's entries, and what was wrong with any delivery. */
export type Receiver = {
  url: string;
  /** Entries of the deliveries it answered 2xx, in the order they came. */
  entries: FeedEntry[];
  /** Deliveries it refused (with 500) on purpose, by webhook-id. */
  refused: Set<string>;
  faults: string[];
  close(): Promise<void>;
};

/**
 * A webhook endpoint on loopback: it verifies each delivery's signature with the Standard Webhooks
 * reference library, refuses (500) a random share of first attempts so that they are retried, and
 * checks that a retry carries the same body as its first attempt.
 */
export async function webhookReceiver(rng: Rng, refuseShare: number): Promise<Receiver & { secret?: string }> {
  const receiver: Receiver & { secret?: string } = {
    url: "",
    entries: [],
    refused: new Set(),
    faults: [],
    close: async () => {},
  };
  const bodies = new Map<string, string>();
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const id = String(req.headers["webhook-id"]);
      try {
        new Webhook(receiver.secret!).verify(body, req.headers as Record<string, string>);
      } catch (error) {
        receiver.faults.push(`${id}: ${(error as Error).message}`);
      }
      if (bodies.has(id) && bodies.get(id) !== body) receiver.faults.push(`${id}: a retry with another body`);
      bodies.set(id, body);
      if (!receiver.refused.has(id) && rng.int(1_000) < refuseShare * 1_000) {
        receiver.refused.add(id);
        res.writeHead(500).end();
        return;
      }
      const parsed = parseJsonExact(body) as { entries: FeedEntry[] };
      receiver.entries.push(...parsed.entries.map(entryOf));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () =>
    new Promise((ok) => {
      server.closeAllConnections();
      server.close(() => ok());
    });
  return receiver;
}

/**
 * Makes `receiver` a webhook endpoint of the service at `url` through the admin API, from the log's
 * oldest entry, and keeps the signing secret it is shown once: the receiver verifies with it.
 */
export async function subscribeReceiver(
  service: { url: string; adminToken: string | undefined },
  receiver: Receiver & { secret?: string },
): Promise<void> {
  const made = await fetch(`${service.url}/admin/webhooks`, {
    method: "POST",
    headers: { Authorization: `Bearer ${service.adminToken}`, "Content-Type": "application/json" },
    body: JSON.stringify({ url: receiver.url, cursor: "0" }),
  });
  if (made.status !== 201) throw new Error(`POST /admin/webhooks: ${made.status} ${await made.text()}`);
  receiver.secret = ((await made.json()) as { secret: string }).secret;
}
