/**
 * GET /registry/feed in process, over a real change log (PGlite in memory, api/feed/log.ts): read
 * as a standard client reads Server-Sent Events (eventsource-parser), each stream's events are
 * held to the pull pages (GET /registry/feed/events) and to filters decided here, independently of
 * api/feed/filter.ts.
 */
import { PGlite } from "@electric-sql/pglite";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pgliteDb } from "../../api/database/pglite";
import { FeedHub, type HubEntry, type Reader } from "../../api/feed/hub";
import { type ChangeLog, type FeedEvent, openChangeLog } from "../../api/feed/log";
import { waitFor } from "../../devkit/processes";
import { chooseSeed, Rng } from "../../devkit/random";
import { CHAIN, emptyApp, SOCKET, servedApp, wallet } from "../helpers/empty-app";

const SEED = chooseSeed();
const rng = new Rng(SEED);
const tag = (what: string) => `${what} (SEED=${SEED})`;
const KEY = "a key of this test";

let db: PGlite;
let log: ChangeLog;
let hub: FeedHub;
let app: ReturnType<typeof emptyApp>;
/** The app on node:http, where streams are written to Node's response. */
let served: Awaited<ReturnType<typeof servedApp>>;

/** A stream as a client reads it: its messages so far, the raw text, and whether it ended. */
type Stream = { status: number; messages: EventSourceMessage[]; text: string; ended: boolean; close(): Promise<void> };

async function open(query: string, headers: Record<string, string> = {}): Promise<Stream> {
  const res = await served.request(`/registry/feed${query}`, { headers });
  const stream: Stream = { status: res.status, messages: [], text: "", ended: false, close: async () => {} };
  if (!res.headers.get("content-type")?.startsWith("text/event-stream")) {
    stream.text = await res.text();
    stream.ended = true;
    return stream;
  }
  const reader = res.body!.getReader();
  const parser = createParser({ onEvent: (m) => stream.messages.push(m) });
  const decoder = new TextDecoder();
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) break;
      const text = decoder.decode(value, { stream: true });
      stream.text += text;
      parser.feed(text);
    }
    stream.ended = true;
  })();
  stream.close = () => reader.cancel();
  return stream;
}

/** A v2 or v1 event's record as the history writes it (the fields the filters read, and which it is). */
function record(version: "v1" | "v2", i: number, from: string, to: string, contract: string | null, event: string) {
  const delegationType = event.slice("Delegate".length).toUpperCase();
  return version === "v2"
    ? JSON.stringify({ event, from, to, contract, rights: `0x${"0".repeat(64)}`, delegationType, i })
    : JSON.stringify({ event, vault: from, delegate: to, contract, revokedDelegate: null, i });
}

/** The events the log holds live above the registry's floor, as a write gives them again. */
async function liveEvents(version: "v1" | "v2"): Promise<{ floor: bigint; events: FeedEvent[] }> {
  const floor = (await log.floor(CHAIN, version))!;
  const all = (await log.entries(0n, 100_000)).filter((e) => e.chainId === CHAIN && e.version === version);
  const retracted = new Set(all.flatMap((e) => (e.retracts === null ? [] : [e.retracts])));
  const events = all
    .filter((e) => e.retracts === null && !retracted.has(e.seq) && e.block > floor)
    .map((e) => ({ block: e.block, blockHash: e.blockHash, logIndex: e.logIndex, record: e.record }));
  return { floor, events };
}

const V2_EVENTS = ["DelegateAll", "DelegateContract", "DelegateERC721"];
const V1_EVENTS = ["DelegateForAll", "DelegateForContract", "RevokeDelegate"];
let made = 0;
/** Events of blocks `blocks` on branch `branch`, with random parties, contracts and kinds. */
function events(version: "v1" | "v2", blocks: number[], branch = "a"): FeedEvent[] {
  return blocks.map((block, logIndex) => {
    const kinds = version === "v2" ? V2_EVENTS : V1_EVENTS;
    return {
      block: BigInt(block),
      blockHash: `0x${branch}${block.toString(16).padStart(63, "0")}`,
      logIndex,
      // Every party on each side, whatever the seed: cold wallets 1-3, hot wallets 4-6.
      record: record(
        version,
        made,
        wallet(1 + (made % 3)),
        wallet(4 + ((made + (made++ >> 2)) % 3)),
        rng.pick([null, wallet(9)]),
        rng.pick(kinds),
      ),
    };
  });
}

/** The whole log as the pull twin pages it, each entry's JSON by seq. */
async function pulled(): Promise<Map<string, string>> {
  const all = new Map<string, string>();
  for (let cursor = "0"; ; ) {
    const res = await app.request(`/registry/feed/events?cursor=${cursor}&limit=1000`, {}, SOCKET);
    const text = await res.text();
    // Each entry's own JSON, as written: split at the entries' boundaries.
    const body = JSON.parse(text) as { entries: { seq: number }[] };
    if (body.entries.length === 0) return all;
    const raw = text.slice(text.indexOf("[") + 1, text.lastIndexOf("]"));
    const pieces = raw.split(/,(?=\{"seq":)/);
    expect(pieces.length).toBe(body.entries.length);
    for (const piece of pieces) all.set(String(/^\{"seq":(\d+)/.exec(piece)![1]), piece);
    cursor = [...all.keys()].at(-1)!;
  }
}

beforeAll(async () => {
  db = new PGlite();
  log = await openChangeLog(pgliteDb(db), "feed_app_test");
  hub = new FeedHub(() => log, { everyMs: 20, heartbeatMs: 100 });
  app = emptyApp({}, { changes: log, feed: hub, key: KEY });
  served = await servedApp(app);
});
afterAll(async () => {
  await served.close();
  await db.close();
});

describe("GET /registry/feed", () => {
  it("streams the entries after a cursor, then those logged next, as the pull pages give them", async () => {
    expect(await log.write(CHAIN, "v2", undefined, events("v2", [1, 2, 2]), 0n)).toBe(true);
    const stream = await open("?cursor=0");
    expect(stream.status).toBe(200);
    await waitFor("the first entries", async () => (stream.messages.length >= 3 ? true : undefined), 5_000);
    expect(await log.write(CHAIN, "v2", 0n, [...events("v2", [1, 2, 2]), ...events("v2", [3, 4])], 0n)).toBe(true);
    const all = await pulled();
    await waitFor("entries logged next", async () => (stream.messages.length >= all.size ? true : undefined), 5_000);
    await stream.close();
    expect(stream.messages.map((m) => m.id)).toEqual([...all.keys()]);
    expect(stream.messages.map((m) => m.data)).toEqual([...all.values()]);
    expect(stream.text.startsWith("retry: ")).toBe(true);
  });

  it("resumes after Last-Event-ID (before `cursor`, which a reconnecting \
client repeats); without either, from what comes next", async () => {
    const all = [...(await pulled()).keys()];
    const resumed = await open("?cursor=0", { "Last-Event-ID": all[2]! });
    const fresh = await open("");
    await waitFor(
      "the entries after the id",
      async () => (resumed.messages.length >= all.length - 3 ? true : undefined),
      5_000,
    );
    expect(resumed.messages.map((m) => m.id)).toEqual(all.slice(3));
    expect(await log.write(CHAIN, "v1", undefined, events("v1", [7]), 0n)).toBe(true);
    await waitFor("the next entry", async () => (fresh.messages.length >= 1 ? true : undefined), 5_000);
    await waitFor(
      "the next entry, resumed",
      async () => (resumed.messages.length > all.length - 3 ? true : undefined),
      5_000,
    );
    expect(fresh.messages.map((m) => JSON.parse(m.data).version)).toEqual(["v1"]);
    // An id past the log's end (a replica ahead of this one): it waits for the log to pass it, and a
    // stream opened after it, even first of all, holds no other back.
    await Promise.all([resumed.close(), fresh.close()]);
    await waitFor("no stream open", async () => (hub.size === 0 ? true : undefined), 5_000);
    const newest = await log.newest();
    const ahead = await open("", { "Last-Event-ID": String(newest + 2n) });
    const next = await open("");
    expect([ahead.status, next.status]).toEqual([200, 200]);
    // Both read by the hub, neither catching up on its own.
    await waitFor("both streams joined", async () => (hub.size === 2 ? true : undefined), 5_000);
    for (let i = 0; i < 3; i++)
      expect(
        await log.write(CHAIN, "v1", 0n, [...(await liveEvents("v1")).events, ...events("v1", [60 + i])], 0n),
      ).toBe(true);
    await waitFor("the three entries", async () => (next.messages.length >= 3 ? true : undefined), 5_000);
    await waitFor("the third, past the id", async () => (ahead.messages.length >= 1 ? true : undefined), 5_000);
    expect(ahead.messages.map((m) => BigInt(m.id!))).toEqual([newest + 3n]);
    await Promise.all([ahead.close(), next.close()]);
  });

  it("lets through what its filters ask, as decided here from each entry's event", async () => {
    for (let i = 0; i < 3; i++) {
      const live = await liveEvents("v2");
      const more = events("v2", [10 + i, 10 + i]);
      expect(await log.write(CHAIN, "v2", live.floor, [...live.events, ...more], live.floor)).toBe(true);
    }
    expect(await log.write(CHAIN, "v1", 0n, [...events("v1", [8, 9, 9])], 0n)).toBe(true);
    const entries = [...(await pulled()).values()].map((text) => JSON.parse(text) as Record<string, never>);
    const sides = (e: Record<string, Record<string, string | null>>) => {
      const ev = e.event!;
      return { from: ev.from ?? ev.vault, to: ev.to ?? ev.delegate, contract: ev.contract, name: ev.event };
    };
    const filters: [string, (e: Record<string, never>) => boolean][] = [
      ["?cursor=0&version=v1", (e) => e.version === "v1"],
      [`?cursor=0&chainId=${CHAIN}&version=v2`, (e) => e.version === "v2"],
      [`?cursor=0&wallet=${wallet(2)}`, (e) => [sides(e).from, sides(e).to].includes(wallet(2))],
      [`?cursor=0&wallet=${wallet(2)}&role=vault`, (e) => sides(e).from === wallet(2)],
      [
        `?cursor=0&wallet=${wallet(5).toUpperCase().replace("0X", "0x")}&role=delegate`,
        (e) => sides(e).to === wallet(5),
      ],
      [`?cursor=0&contract=${wallet(9)}`, (e) => sides(e).contract === wallet(9)],
      ["?cursor=0&type=DelegateAll,RevokeDelegate", (e) => ["DelegateAll", "RevokeDelegate"].includes(sides(e).name!)],
      ["?cursor=0&type=ALL", (e) => ["DelegateAll", "DelegateForAll"].includes(sides(e).name!)],
    ];
    for (const [query, wanted] of filters) {
      const want = entries.filter(wanted).map((e) => String(e.seq));
      const stream = await open(query, { "X-API-KEY": KEY });
      await waitFor(query, async () => (stream.messages.length >= want.length ? true : undefined), 5_000);
      // Nothing more comes: the hub has read the whole log by now.
      await new Promise((ok) => setTimeout(ok, 100));
      await stream.close();
      expect(
        stream.messages.map((m) => m.id),
        tag(query),
      ).toEqual(want);
      expect(want.length, tag(`${query} lets some through, not all`)).toBeGreaterThan(0);
      expect(want.length, tag(`${query} lets some through, not all`)).toBeLessThan(entries.length);
    }
  });

  it("delivery=finalized: an entry once its chain's floor passes it, never \
a retraction nor what one retracts", async () => {
    const chainOf = "v1";
    const { floor, events: kept } = await liveEvents(chainOf);
    const stream = await open(`?cursor=0&version=${chainOf}&delivery=finalized`);
    // Two more blocks, then the second replaced: its entry is retracted.
    const [a, b] = [events(chainOf, [20]), events(chainOf, [21])];
    expect(await log.write(CHAIN, chainOf, floor, [...kept, ...a, ...b], floor)).toBe(true);
    expect(await log.write(CHAIN, chainOf, floor, [...kept, ...a, ...events(chainOf, [21], "b")], floor)).toBe(true);
    await new Promise((ok) => setTimeout(ok, 200));
    const sentBefore = stream.messages.map((m) => m.id);
    // The floor rises past block 20 only.
    expect(await log.write(CHAIN, chainOf, floor, [...kept, ...a, ...events(chainOf, [21], "b")], 20n)).toBe(true);
    const all = (await log.entries(0n, 10_000)).filter((e) => e.version === chainOf);
    const retracted = new Set(all.flatMap((e) => (e.retracts === null ? [] : [e.retracts])));
    const want = all
      .filter((e) => e.retracts === null && !retracted.has(e.seq) && e.block <= 20n)
      .map((e) => String(e.seq));
    await waitFor("the final entries", async () => (stream.messages.length >= want.length ? true : undefined), 5_000);
    await new Promise((ok) => setTimeout(ok, 200));
    await stream.close();
    expect(
      stream.messages.map((m) => m.id),
      tag("final entries only, in seq order"),
    ).toEqual(want);
    // Held until then: every entry was above the old floor.
    expect(sentBefore).toEqual([]);
    expect(stream.messages.some((m) => JSON.parse(m.data).retracts !== null)).toBe(false);
  });

  it("a comment at least every heartbeat; a client without a key holds 2 \
streams, a third is 429 until one closes", async () => {
    const first = await open("");
    const second = await open("");
    await new Promise((ok) => setTimeout(ok, 300));
    expect(first.text).toMatch(/\n: heartbeat\n\n/);
    const third = await open("");
    expect(third.status).toBe(429);
    expect(JSON.parse(third.text)).toMatchObject({ code: "rate_limited", status: 429 });
    expect(JSON.parse(third.text).detail).toMatch(/^at most 2 streams of the feed at once without an API key;/);
    // With a key, as many as the operator sets (here 2, on top of the keyless ones), then 429 naming the key.
    const keyed = await Promise.all([1, 2].map(() => open("", { "X-API-KEY": KEY })));
    expect(keyed.map((s) => s.status)).toEqual([200, 200]);
    const fourth = await open("", { "X-API-KEY": KEY });
    expect(fourth.status).toBe(429);
    expect(JSON.parse(fourth.text).detail).toMatch(/^at most 2 streams of the feed at once for this key;/);
    await first.close();
    const again = await open("");
    expect(again.status).toBe(200);
    await Promise.all([second.close(), again.close(), ...keyed.map((s) => s.close())]);
    await waitFor("every stream gone", async () => (hub.held.size === 0 && hub.size === 0 ? true : undefined), 5_000);
  });

  it("refuses what it cannot serve with a problem: bad ids and cursors, \
chains not served, a role without a wallet", async () => {
    const cases: [string, Record<string, string>, number, string, string?][] = [
      ["", { "Last-Event-ID": "x" }, 400, "invalid_parameter", "Last-Event-ID"],
      ["?cursor=-1", {}, 400, "invalid_parameter", "cursor"],
      ["?chainId=5", {}, 400, "unsupported_chain", "chainId"],
      ["?role=from", {}, 400, "missing_parameter", "wallet"],
      ["?type=Delegate", {}, 400, "invalid_parameter", "type"],
      ["?delivery=now", {}, 400, "invalid_parameter", "delivery"],
    ];
    for (const [query, headers, status, code, param] of cases) {
      const res = await open(query, headers);
      expect(res.status, query).toBe(status);
      expect(JSON.parse(res.text), query).toMatchObject({ code, ...(param && { param }) });
    }
  });

  it("closes a client that does not read once 1 MiB waits unsent; it resumes with Last-Event-ID", async () => {
    const { floor, events: kept } = await liveEvents("v2");
    // More than the sockets' buffers take from a client that does not read, beside the 1 MiB.
    const count = 8_000;
    const big = events(
      "v2",
      Array.from({ length: count }, () => 40),
    ).map((e) => ({
      ...e,
      record: e.record.replace("{", `{"pad":"${"x".repeat(1_000)}",`),
    }));
    expect(await log.write(CHAIN, "v2", floor, [...kept, ...big], floor)).toBe(true);
    const res = await served.request("/registry/feed?cursor=0", { headers: { "X-API-KEY": KEY } });
    // Not read: the stream fills, then ends; its held stream is given back.
    await waitFor("the stream closed", async () => (hub.held.size === 0 ? true : undefined), 10_000);
    const text = await res.text();
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => m[1]!);
    // What waited unsent was written as HTTP chunks: each message's framing (its length and two line
    // ends, under 12 bytes) counted beside its text.
    expect(text.length + 12 * ids.length).toBeGreaterThan(1 << 20);
    expect(text.length).toBeLessThan(count * 1_000);
    // Resumed after the last id it got: the next entry follows.
    const all = [...(await pulled()).keys()];
    const resumed = await open("", { "Last-Event-ID": ids.at(-1)!, "X-API-KEY": KEY });
    await waitFor("the entry after", async () => (resumed.messages.length > 0 ? true : undefined), 5_000);
    await resumed.close();
    expect(resumed.messages[0]!.id).toBe(all[all.indexOf(ids.at(-1)!) + 1]);
  });

  it("hands each entry to every stream in seq order, a slice of streams at a time, \
other work let in between", async () => {
    await waitFor("no stream open", async () => (hub.size === 0 ? true : undefined), 5_000);
    const through = await hub.newest();
    // Other work: a turn of the event loop's check phase, counted.
    let turns = 0;
    let turning = true;
    const turn = () => {
      turns++;
      if (turning) setImmediate(turn);
    };
    turn();
    /** A stream as the hub sees one: the seqs it took, and the turn it took each in. */
    class Taker implements Reader {
      cursor = through;
      readonly taken: bigint[] = [];
      readonly turnOf = new Map<bigint, number>();
      take(entries: readonly HubEntry[]) {
        for (const e of entries.filter((e) => e.seq > this.cursor)) {
          this.cursor = e.seq;
          this.taken.push(e.seq);
          this.turnOf.set(e.seq, turns);
        }
      }
      beat() {}
    }
    const takers = Array.from({ length: 1_200 }, () => new Taker());
    for (const taker of takers) expect(hub.join(taker, through)).toBe(true);
    try {
      const { floor, events: kept } = await liveEvents("v2");
      expect(await log.write(CHAIN, "v2", floor, [...kept, ...events("v2", [41, 41, 42])], floor)).toBe(true);
      const logged = (await log.entries(through, 100)).map((e) => e.seq);
      expect(logged, tag("the entries written")).toHaveLength(3);
      await waitFor(
        "every stream took them",
        async () => takers.every((t) => t.taken.length === 3) || undefined,
        5_000,
      );
      for (const taker of takers) expect(taker.taken, tag("each stream's seqs")).toEqual(logged);
      // Written at once, read in one poll: handed out in slices, with other work between them.
      const turnsOfFirst = new Set(takers.map((t) => t.turnOf.get(logged[0]!)));
      expect(turnsOfFirst.size, tag("the turns the first entry was handed out in")).toBeGreaterThanOrEqual(3);
    } finally {
      turning = false;
      for (const taker of takers) hub.leave(taker);
    }
  });

  it("holds nothing for a client gone before its stream began", async () => {
    await waitFor("no stream open", async () => (hub.size === 0 && hub.held.size === 0 ? true : undefined), 5_000);
    // The log held up (PGlite runs one transaction at a time): the request waits for it.
    let free!: () => void;
    const busy = db.transaction(() => new Promise<void>((ok) => (free = ok)));
    const leaving = new AbortController();
    const asked = served.request("/registry/feed", { signal: leaving.signal }).catch(() => undefined);
    await new Promise((ok) => setTimeout(ok, 300));
    leaving.abort();
    await asked;
    await new Promise((ok) => setTimeout(ok, 100));
    free();
    await busy;
    await new Promise((ok) => setTimeout(ok, 300));
    expect(hub.held.size, "streams held").toBe(0);
    expect(hub.size, "streams joined").toBe(0);
  });
});
