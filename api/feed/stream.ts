import type { ServerResponse } from "node:http";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Context } from "hono";
import { FinalQueue, type Floor } from "../../core/feed";
import { parseOneOf, parseSeq } from "../../core/parse";
import { Params, parseParam } from "../http/params";
import { Problem } from "../http/problem";
import type { Env } from "../routes/env";
import { entryJson } from "./entry";
import { type FeedFilter, feedFilterOf, passes } from "./filter";
import { type FeedHub, HUB_PAGE, type HubEntry, type Reader } from "./hub";
import { sseComment, sseMessage, sseRetry } from "./sse";

/** How long a client waits before it reconnects after the stream ends. */
const RETRY_MS = 2_000;
/**
 * What a stream may have queued, unsent, before it is closed: a client that reads slower than the
 * log grows resumes with Last-Event-ID rather than holding the process's memory.
 */
const MAX_QUEUED_BYTES = 1 << 20;
/** Entries a `delivery=finalized` stream may hold back waiting for finality before it is closed. */
const MAX_HELD = 10_000;

/** How long a stream catching up waits when the hub has read entries its own read does not see yet. */
const HUB_RETRY_MS = 100;

const encoder = new TextEncoder();

/**
 * Each entry's message, encoded once for every stream it goes to: the hub hands the same entry to
 * all of them, and with thousands of streams, serializing it for each cost the process most of the
 * CPU its fan-out took. A chunk written is never changed, so one may go to many streams.
 */
const messages = new WeakMap<HubEntry, Uint8Array>();
function messageOf(e: HubEntry): Uint8Array {
  let bytes = messages.get(e);
  if (!bytes) {
    bytes = encoder.encode(sseMessage({ id: String(e.seq), data: entryJson(e) }));
    messages.set(e, bytes);
  }
  return bytes;
}
/** The heartbeat, encoded once. */
const HEARTBEAT = encoder.encode(sseComment("heartbeat"));

/** Where a stream starts: after Last-Event-ID (a reconnecting client's), else `cursor`; absent: what comes next. */
function startOf(c: Context<Env>, params: Params): bigint | undefined {
  const cursor = params.optional("cursor", parseSeq);
  const last = c.req.header("Last-Event-ID");
  return last !== undefined && last !== "" ? parseParam("Last-Event-ID", last, parseSeq) : cursor;
}

/** Holds one of the client's streams, or refuses it (429) when it holds as many as it may. */
function holdStream(hub: FeedHub, c: Context<Env>): () => void {
  const { id, keyed, streams } = c.var.client;
  const held = hub.held.get(id) ?? 0;
  if (held >= streams)
    throw new Problem(
      "rate_limited",
      `at most ${streams} streams of the feed at once ${keyed ? "for this key" : "without an API key"}; ` +
        "close one, or page GET /registry/feed/events",
      { headers: { "Retry-After": "5" } },
    );
  hub.held.set(id, held + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const now = (hub.held.get(id) ?? 1) - 1;
    if (now === 0) hub.held.delete(id);
    else hub.held.set(id, now);
  };
}

/**
 * One stream's reader of the log: it takes every entry after its cursor, sends those its filter
 * lets through (instant) or holds them until final (finalized), and closes when its client lags.
 */
class StreamReader implements Reader {
  cursor: bigint;
  private readonly final: FinalQueue<HubEntry> | undefined;

  constructor(
    start: bigint,
    private readonly filter: FeedFilter,
    finalized: boolean,
    private readonly send: (chunk: string | Uint8Array) => boolean,
    private readonly end: () => void,
  ) {
    this.cursor = start;
    this.final = finalized ? new FinalQueue() : undefined;
  }

  take(entries: readonly HubEntry[], floors: ReadonlyMap<string, Floor>): void {
    for (const e of entries) {
      if (e.seq <= this.cursor) continue;
      this.cursor = e.seq;
      if (!passes(this.filter, e, e.subject)) continue;
      if (this.final) this.final.push(e);
      else if (!this.message(e)) return;
    }
    if (!this.final) return;
    for (const e of this.final.release(this.cursor, floors)) if (!this.message(e)) return;
    if (this.final.size > MAX_HELD) {
      this.send(sseComment(`more than ${MAX_HELD} entries wait for finality: resume with Last-Event-ID`));
      this.end();
    }
  }

  beat(): void {
    this.send(HEARTBEAT);
  }

  private message(e: HubEntry): boolean {
    return this.send(messageOf(e));
  }
}

/**
 * The response the stream is written to: @hono/node-server hands the app Node's (api/service.ts).
 * A stream writes its messages to it directly, not through a web stream as the body of a Response:
 * with thousands of streams, each message's trip through a ReadableStream and its reader took most
 * of the CPU the fan-out cost (docs/performance.md).
 */
function outgoingOf(c: Context<Env>): ServerResponse {
  const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
  if (outgoing === undefined) throw new Error("GET /registry/feed streams on node:http only (@hono/node-server)");
  return outgoing;
}

/**
 * GET /registry/feed: the change log as Server-Sent Events (api/feed/sse.ts), from where the client
 * asks, then as entries are logged. A stream is a reader of the process's hub (api/feed/hub.ts).
 */
export async function feedStream(c: Context<Env>, hub: FeedHub): Promise<Response> {
  const params = Params.ofUrl(c.req.url);
  const filter = feedFilterOf(
    params,
    c.var.chains.map((chain) => chain.id),
  );
  const finalized =
    (params.optional("delivery", parseOneOf(["instant", "finalized"] as const)) ?? "instant") === "finalized";
  const asked = startOf(c, params);
  const log = c.var.changes;
  if (!log) throw new Problem("chain_syncing", "the change log is not open yet", { headers: { "Retry-After": "5" } });
  const [pruned, newest] = await Promise.all([log.pruned(), log.newest()]);
  if (asked !== undefined && asked < pruned && asked > 0n)
    throw new Problem(
      "cursor_expired",
      `entries after ${asked} are no longer kept: resume after ${pruned} at the earliest`,
    );
  // Past the newest (an id from a replica whose database is ahead of this one's): the stream waits
  // for the log to pass it.
  const start = asked ?? newest;
  const headers = {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-store",
    // Through nginx: sent as written, not buffered.
    "X-Accel-Buffering": "no",
    // A keyless client's budget, which the access middleware would add to a Response.
    ...c.var.budget.headers(),
  };
  // A HEAD has no body to stream: nothing is held for it.
  if (c.req.method === "HEAD") return c.body(null, 200, headers);
  const outgoing = outgoingOf(c);
  // The client left while the log was read: its response's close is past, nothing is held for it.
  if (outgoing.destroyed) return alreadySent();
  const release = holdStream(hub, c);
  // The headers Hono would send: the route's, and those set before it (CORS's).
  outgoing.writeHead(200, Object.fromEntries(c.body(null, 200, headers).headers));

  let reader: StreamReader | undefined;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    release();
    if (reader) hub.leave(reader);
    outgoing.end();
  };
  // The client gone, or the response ended.
  outgoing.on("close", close);
  const send = (chunk: string | Uint8Array) => {
    if (closed) return false;
    outgoing.write(chunk);
    // What waits unsent in the response and its socket.
    if (outgoing.writableLength <= MAX_QUEUED_BYTES) return true;
    close();
    return false;
  };
  reader = new StreamReader(start, filter, finalized, send, close);
  send(sseRetry(RETRY_MS));
  send(sseComment(`the change log after ${start}`));
  void catchUp(hub, reader, newest, () => closed).catch(() => {
    send(sseComment("the change log could not be read: resume with Last-Event-ID"));
    close();
  });
  return alreadySent();
}

/** What tells @hono/node-server the response is written already (a Response of its own for each). */
const alreadySent = () => new Response(null, { headers: RESPONSE_ALREADY_SENT.headers });

/**
 * Reads the log from the reader's cursor until it has read as far as the hub, then joins the hub.
 * `through`: a seq the log is known to hold entries up to (the newest when the stream began).
 */
async function catchUp(hub: FeedHub, reader: StreamReader, newest: bigint, closed: () => boolean): Promise<void> {
  let through = newest;
  while (!closed()) {
    // The floors before the entries: an entry read then is never below a floor its retraction followed.
    const floors = await hub.readFloors();
    const entries = await hub.read(reader.cursor);
    if (closed()) return;
    reader.take(entries, floors);
    if (entries.length > 0 && entries[entries.length - 1]!.seq > through) through = entries[entries.length - 1]!.seq;
    if (entries.length < HUB_PAGE && !closed() && hub.join(reader, through)) return;
    // Nothing read, and the hub is ahead: what it read is not readable here yet (a standby behind).
    if (entries.length === 0) await new Promise((ok) => setTimeout(ok, HUB_RETRY_MS));
  }
}
