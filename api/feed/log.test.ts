import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessBackends } from "../database/backends";
import type { AccessDb } from "../database/db";
import { type ChangeLog, type FeedEntry, type FeedEvent, openChangeLog } from "./log";

const SCHEMA = `feed_unit_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;

/** An event of block `block` on branch `branch` (its hash), with a record naming both. */
const ev = (block: number, logIndex: number, branch = "a"): FeedEvent => ({
  block: BigInt(block),
  blockHash: `0x${branch}${block.toString(16).padStart(63, "0")}`,
  logIndex,
  record: `{"blockNumber":${block},"logIndex":${logIndex},"branch":"${branch}"}`,
});

/** The log's events less those retracted, as (block, logIndex, branch). */
function live(entries: FeedEntry[]): string[] {
  const retracted = new Set(entries.flatMap((e) => (e.retracts === null ? [] : [e.retracts])));
  return entries.filter((e) => e.retracts === null && !retracted.has(e.seq)).map((e) => e.record);
}

describe.each(accessBackends("feed-log-", SCHEMA))("the change log on %s", (_, open) => {
  let db: AccessDb;
  let dispose: () => Promise<void>;
  let log: ChangeLog;
  const all = () => log.entries(0n, 1_000);

  beforeAll(async () => {
    ({ db, dispose } = await open());
    log = await openChangeLog(db, SCHEMA);
  });
  afterAll(async () => dispose?.());

  it("starts a chain's log above its final block: earlier events are the history's", async () => {
    expect(await log.floor(1, "v2")).toBeUndefined();
    expect(await log.write(1, "v2", undefined, [ev(5, 0), ev(7, 0), ev(7, 1)], 6n)).toBe(true);
    expect(await log.floor(1, "v2")).toBe(6n);
    expect(live(await all())).toEqual([ev(7, 0).record, ev(7, 1).record]);
  });

  it("appends new events once, in chain order, however often the same events are written", async () => {
    for (let i = 0; i < 2; i++) expect(await log.write(1, "v2", 6n, [ev(7, 0), ev(7, 1), ev(8, 0)], 6n)).toBe(true);
    expect((await all()).map((e) => e.record)).toEqual([ev(7, 0).record, ev(7, 1).record, ev(8, 0).record]);
  });

  it("retracts a replaced branch's entries newest first, with their records, then logs the new branch", async () => {
    const before = await all();
    expect(await log.write(1, "v2", 6n, [ev(7, 0), ev(8, 0, "b"), ev(9, 0, "b")], 7n)).toBe(true);
    const added = (await all()).slice(before.length);
    expect(added.map((e) => [e.retracts, e.record])).toEqual([
      [before[2]!.seq, ev(8, 0).record],
      [before[1]!.seq, ev(7, 1).record],
      [null, ev(8, 0, "b").record],
      [null, ev(9, 0, "b").record],
    ]);
    for (const e of added) expect(e.seq > before[before.length - 1]!.seq).toBe(true);
    expect(live(await all())).toEqual([ev(7, 0).record, ev(8, 0, "b").record, ev(9, 0, "b").record]);
    expect(await log.floor(1, "v2")).toBe(7n);
  });

  it("a write whose floor moved meanwhile writes nothing; chains and registries are apart", async () => {
    const count = (await all()).length;
    expect(await log.write(1, "v2", 6n, [], 9n)).toBe(false);
    expect(await log.write(1, "v2", undefined, [], 9n)).toBe(false);
    expect((await all()).length).toBe(count);
    expect(await log.write(1, "v1", undefined, [ev(3, 0)], 2n)).toBe(true);
    expect(await log.write(2, "v2", undefined, [ev(3, 0)], 2n)).toBe(true);
    const entries = await all();
    expect(entries.slice(count).map((e) => [e.chainId, e.version])).toEqual([
      [1, "v1"],
      [2, "v2"],
    ]);
    expect(await log.floor(1, "v2")).toBe(7n);
  });

  it("two writers of the same floor at once: one writes, the other finds the floor moved", async () => {
    const count = (await all()).length;
    const events = [ev(7, 0), ev(8, 0, "b"), ev(9, 0, "b"), ev(10, 0, "b")];
    const results = await Promise.all([log.write(1, "v2", 7n, events, 8n), log.write(1, "v2", 7n, events, 8n)]);
    expect(results.sort()).toEqual([false, true]);
    expect((await all()).slice(count).map((e) => e.record)).toEqual([ev(10, 0, "b").record]);
  });

  it("gives each floor with the last seq logged when it was raised; writers of two chains take turns", async () => {
    const before = await all();
    const results = await Promise.all([
      log.write(1, "v1", 2n, [ev(3, 0), ev(4, 0)], 3n),
      log.write(2, "v2", 2n, [ev(3, 0), ev(4, 0), ev(4, 1)], 4n),
    ]);
    expect(results).toEqual([true, true]);
    const added = (await all()).slice(before.length);
    // One write's entries, then the other's: never interleaved.
    const chains = added.map((e) => e.chainId);
    expect(chains.join(",")).toMatch(/^(1,2,2|2,2,1)$/);
    const floors = await log.floors();
    const lastOf = (chainId: number) => added.filter((e) => e.chainId === chainId).at(-1)!.seq;
    // Each write appended, so the last seq when its floor rose is its own last entry's.
    expect(floors.get("1:v1")).toEqual({ floor: 3n, through: lastOf(1) });
    expect(floors.get("2:v2")).toEqual({ floor: 4n, through: lastOf(2) });
    expect(floors.get("1:v2")!.floor).toBe(8n);
  });

  it("pages by seq, keeps what a reopened log had, and prunes the oldest", async () => {
    const entries = await all();
    expect(await log.entries(entries[1]!.seq, 2)).toEqual(entries.slice(2, 4));
    expect(await (await openChangeLog(db, SCHEMA)).entries(0n, 1_000)).toEqual(entries);
    expect(await log.oldest()).toBe(entries[0]!.seq);
    expect(await log.newest()).toBe(entries[entries.length - 1]!.seq);
    expect(await log.pruned()).toBe(0n);
    expect(await log.prune(new Date(Date.now() - 3_600_000))).toBe(0);
    expect(await log.pruned()).toBe(0n);
    expect(await log.prune(new Date(Date.now() + 1_000))).toBe(entries.length);
    expect(await log.oldest()).toBeUndefined();
    expect(await log.pruned()).toBe(entries[entries.length - 1]!.seq);
    // Empty, the log still knows where the next entry's reader starts.
    expect(await log.newest()).toBe(entries[entries.length - 1]!.seq);
    expect(await log.prune(new Date(Date.now() + 1_000))).toBe(0);
    expect(await log.pruned()).toBe(entries[entries.length - 1]!.seq);
  });

  it("logs thousands of events in one write, each exact, in chain order, and retracts them so", async () => {
    const bulk = await openChangeLog(db, `${SCHEMA}_bulk`);
    // Records with what JSON escapes and what it does not: they must come back byte for byte.
    const events = Array.from({ length: 1_234 }, (_, i) => {
      const e = ev(10 + Math.floor(i / 7), i % 7);
      return { ...e, record: JSON.stringify({ ...JSON.parse(e.record), note: `\\ "q" ü 🙂 \u0000 ${i}` }) };
    });
    expect(await bulk.write(3, "v1", 9n, events, 9n)).toBe(true);
    const logged = await bulk.entries(0n, 10_000);
    expect(logged.map((e) => [e.chainId, e.version, e.block, e.blockHash, e.logIndex, e.record, e.retracts])).toEqual(
      events.map((e) => [3, "v1", e.block, e.blockHash, e.logIndex, e.record, null]),
    );
    for (let i = 1; i < logged.length; i++) expect(logged[i]!.seq > logged[i - 1]!.seq).toBe(true);
    // A replaced branch from the first event's block on: every entry retracted, newest first.
    expect(await bulk.write(3, "v1", 9n, [ev(10, 0, "b")], 9n)).toBe(true);
    const added = (await bulk.entries(logged.at(-1)!.seq, 10_000)).map((e) => [e.retracts, e.record]);
    expect(added).toEqual([...[...logged].reverse().map((e) => [e.seq, e.record]), [null, ev(10, 0, "b").record]]);
  });

  it("leaves the entries above the block the events were read through while those before them match", async () => {
    const own = await openChangeLog(db, `${SCHEMA}_through`);
    expect(await own.write(4, "v2", undefined, [ev(3, 0), ev(4, 0), ev(5, 0)], 2n, 5n)).toBe(true);
    const logged = await own.entries(0n, 100);
    // The indexer went back to block 4 (it will index block 5 again): nothing is retracted.
    expect(await own.write(4, "v2", 2n, [ev(3, 0), ev(4, 0)], 2n, 4n)).toBe(true);
    expect(await own.entries(0n, 100)).toEqual(logged);
    // Block 4 replaced: its entry and block 5's, newest first, then the new branch.
    expect(await own.write(4, "v2", 2n, [ev(3, 0), ev(4, 0, "b")], 2n, 4n)).toBe(true);
    const added = (await own.entries(logged.at(-1)!.seq, 100)).map((e) => [e.retracts, e.record]);
    expect(added).toEqual([
      [logged[2]!.seq, ev(5, 0).record],
      [logged[1]!.seq, ev(4, 0).record],
      [null, ev(4, 0, "b").record],
    ]);
  });
});
