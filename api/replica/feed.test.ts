import { type Address, type Hex, zeroHash } from "viem";
import { describe, expect, it } from "vitest";
import type { Sample } from "../../core/moment";
import type { Query } from "../../core/sql";
import { xorshift32 } from "../../core/xorshift";
import { ChainSchemas } from "../store/chain-schemas";
import { type ChainFeed, ReplicaFeed } from "./feed";

/**
 * ReplicaFeed against a database that commits as Ponder does (ponder/ponder-0.16.10.ts): one
 * transaction per indexed block (its rows, its events, the checkpoint); a reorganization's revert in
 * a transaction of its own, the checkpoint left on the replaced block until the next block moves it;
 * finality moving on. The copy syncs at random commits, as a replica on a standby does (a standby
 * replays the primary's commits in order, and a replica may read any of them), and any query may
 * fail midway, as a standby cancels a query that conflicts with its replay. After every sync that
 * succeeds, every wallet's listing and every check equal the database's state at the block the
 * copy reports. A sync at the commit of the copy's last successful one is a single statement (the
 * snapshot's); any other is a whole sync.
 *
 * Only v2 rows: v1's tables take the same paths through the feed (api/replica/feed.ts).
 */

const SEED = Number(process.env.SEED ?? Date.now() % 2 ** 31);
const CHAIN_ID = 1;
const FINALITY = 30;
const WALLETS = Array.from({ length: 6 }, (_, i) => `0x${(i + 10).toString(16).padStart(40, "0")}` as Address);
const hashOf = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as Hex;

/** A v2_delegation row as the database holds it (the columns the feed reads). */
type DbRow = {
  hash: Hex;
  from: Address;
  to: Address;
  enabled: boolean;
  first_block: number;
  first_log_index: number;
  updated_block: number;
};

/** One committed state of the database. */
type Committed = {
  /** Which commit this is (pg_current_snapshot's answer: it changes with every commit). */
  snapshot: number;
  /** The chain_head row's version (xmin): a new one with every commit that writes or reverts events. */
  head: number;
  checkpoint: string;
  /** The block the state is at (INDEXED_BLOCK_SQL's answer). */
  block: number;
  final: number;
  rows: Map<Hex, DbRow>;
  /** Per block, its events' ids. */
  events: Map<number, string[]>;
  /** Per block, its timestamp. */
  stamps: number[];
};

/** The chain as indexed: each block's state on the current branch, and the commits so far. */
class Indexer {
  /** The state after each block of the current branch (index: block number). */
  private readonly states: Map<Hex, DbRow>[] = [new Map()];
  private readonly eventsOf: string[][] = [[]];
  /** Each block's timestamp: a branch's own, some shared by consecutive blocks (sub-second blocks). */
  readonly stamps: number[] = [1_000];
  private branch = 0;
  current: Committed = {
    snapshot: 0,
    head: 0,
    checkpoint: "start",
    block: 0,
    final: 0,
    rows: new Map(),
    events: new Map(),
    stamps: [],
  };

  constructor(
    private readonly int: (n: number) => number,
    /** Which indexing of the chain this is (a chain indexed afresh has another). */
    readonly name = "first",
  ) {}

  get head() {
    return this.states.length - 1;
  }

  /** The state of the current branch at `block`. */
  stateAt(block: number): Map<Hex, DbRow> {
    return this.states[block]!;
  }

  /** The blocks of the current branch up to `block` with events, and their timestamps. */
  eventBlocksTo(block: number): Sample[] {
    const blocks = [...this.eventsOf.keys()].filter((b) => b <= block && this.eventsOf[b]!.length > 0);
    return blocks.map((b) => ({ block: BigInt(b), timestamp: BigInt(this.stamps[b]!) }));
  }

  /** Indexes one new block with a few random writes (some to hashes other blocks wrote). */
  block() {
    const number = this.states.length;
    const rows = new Map([...this.states[number - 1]!].map(([h, r]) => [h, { ...r }]));
    const events: string[] = [];
    for (let log = 0; log < this.int(4); log++) {
      const n = 1 + this.int(40);
      const hash = hashOf(n);
      const row = rows.get(hash);
      const enable = this.int(3) > 0;
      events.push(`${this.branch}-${number}-${log}`);
      if (row === undefined) {
        if (!enable) continue;
        rows.set(hash, {
          hash,
          from: WALLETS[n % WALLETS.length]!,
          to: WALLETS[(n * 7) % WALLETS.length]!,
          enabled: true,
          first_block: number,
          first_log_index: log,
          updated_block: number,
        });
      } else rows.set(hash, { ...row, enabled: enable, updated_block: number });
    }
    this.states.push(rows);
    this.eventsOf.push(events);
    this.stamps.push(this.stamps.at(-1)! + this.int(3));
    // As Ponder's, the checkpoint names the block's timestamp and number, not its hash: a block
    // replacing one of the same second has the checkpoint of the block it replaced.
    this.commit(`${this.stamps.at(-1)}:${number}`, number);
  }

  /** A reorganization `depth` blocks deep: the revert's commit, the checkpoint left where it was. */
  revert(depth: number) {
    const fork = this.head - depth;
    this.states.length = fork + 1;
    this.eventsOf.length = fork + 1;
    this.stamps.length = fork + 1;
    this.branch++;
    // The state's block: the last block with events up to the fork (INDEXED_BLOCK_SQL's chain_head).
    let block = fork;
    while (block > this.current.final && this.eventsOf[block]!.length === 0) block--;
    this.commit(this.current.checkpoint, block);
  }

  /** Finality moves on (Ponder's finalize: the checkpoint table alone). */
  finalize() {
    const { snapshot, final } = this.current;
    this.current = { ...this.current, snapshot: snapshot + 1, final: Math.max(final, this.head - FINALITY) };
  }

  private commit(checkpoint: string, block: number) {
    const events = new Map<number, string[]>();
    for (const [b, list] of this.eventsOf.entries()) if (list.length > 0) events.set(b, list);
    const { snapshot, final } = this.current;
    const wrote = JSON.stringify([...events]) !== JSON.stringify([...this.current.events]);
    const head = this.current.head + (wrote ? 1 : 0);
    this.current = {
      snapshot: snapshot + 1,
      head,
      checkpoint,
      block,
      final,
      rows: this.states[this.head]!,
      events,
      stamps: [...this.stamps],
    };
  }
}

/**
 * Answers the feed's statements from a committed state of chain `chainId`; `fail` decides whether a
 * statement fails, `ready` whether Ponder is.
 */
function queryOf(state: Committed, fail: () => boolean, chainId = CHAIN_ID, ready = true): Query {
  const columns = (r: DbRow) => ({
    ...r,
    delegation_type: "ALL",
    contract: null,
    token_id: null,
    rights: zeroHash,
    amount: null,
    first_block: String(r.first_block),
    updated_block: String(r.updated_block),
  });
  const v2 = (sql: string) => sql.includes('"v2_delegation"');
  return async (sql, params = []) => {
    if (fail()) throw new Error("canceling statement due to conflict with recovery");
    if (sql.includes("pg_current_snapshot()")) return { rows: [{ snapshot: `${state.snapshot}:${state.snapshot}:` }] };
    if (sql.startsWith("LOCK TABLE") || sql.startsWith("CLOSE")) return { rows: [] };
    if (sql.includes("AS final"))
      return {
        rows: [
          {
            schema: 0,
            ready: ready ? 1 : 0,
            chain_id: chainId,
            checkpoint: state.checkpoint,
            block: String(state.block),
            block_timestamp: "0",
            final: String(state.final),
            head: String(state.head),
          },
        ],
      };
    if (sql.includes("md5(")) {
      const after = Number(params[1]);
      const rows = [...state.events]
        .filter(([block]) => block > after)
        .map(([block, ids]) => ({
          block: String(block),
          timestamp: String(state.stamps[block]),
          fingerprint: ids.join(","),
        }));
      return { rows };
    }
    if (sql.startsWith("DECLARE replica_times")) {
      const final = Number(params[1]);
      cursor = [...state.events.keys()]
        .filter((block) => block <= final)
        .sort((a, b) => a - b)
        .map((block) => ({ block: String(block), timestamp: String(state.stamps[block]) }));
      return { rows: [] };
    }
    const all = [...state.rows.values()].sort(
      (a, b) => a.first_block - b.first_block || a.first_log_index - b.first_log_index,
    );
    if (sql.startsWith("DECLARE")) {
      cursor = v2(sql) ? all.map(columns) : [];
      return { rows: [] };
    }
    if (sql.startsWith("FETCH")) {
      const rows = cursor;
      cursor = [];
      return { rows };
    }
    if (!v2(sql)) return { rows: [] };
    if (sql.includes("updated_block >"))
      return { rows: all.filter((r) => r.updated_block > Number(params[1])).map(columns) };
    if (sql.includes("= ANY"))
      return { rows: all.filter((r) => (params[1] as string[]).includes(r.hash)).map(columns) };
    throw new Error(`a statement this database does not know: ${sql}`);
  };
}
let cursor: Record<string, unknown>[] = [];

/** The copy's listings, checks and moments' samples equal the indexer's state at the block it reports. */
function expectTruth(indexer: Indexer, copy: ChainFeed, label: string, int: (n: number) => number) {
  const at = `${label} at block ${copy.state.block}`;
  expect(copy.state.block, at).toBeLessThanOrEqual(indexer.head);
  const truth = indexer.stateAt(copy.state.block);
  for (const wallet of WALLETS) {
    const want = [...truth.values()]
      .filter((r) => r.enabled && (r.from === wallet || r.to === wallet))
      .sort((a, b) => a.first_block - b.first_block || a.first_log_index - b.first_log_index)
      .map((r) => r.hash);
    expect(
      copy.state.v2Wallet(wallet).map((r) => r.hash),
      `${at}: ${wallet}'s listing`,
    ).toEqual(want);
  }
  const hashes = Array.from({ length: 41 }, (_, n) => hashOf(n));
  const enabled = [...copy.state.v2Enabled(hashes).keys()].sort();
  const wantEnabled = [...truth.values()].filter((r) => r.enabled).map((r) => r.hash);
  expect(enabled, `${at}: the enabled hashes`).toEqual(wantEnabled.sort());
  // A moment's samples: the event blocks up to the copy's, as a scan of them all tells them.
  const samples = indexer.eventBlocksTo(copy.state.block);
  for (let ask = 0; ask < 5; ask++) {
    const moment = BigInt(995 + int(indexer.stamps.at(-1)! - 990));
    expect(copy.times.around(moment, BigInt(copy.state.block)), `${at}: the samples of moment ${moment}`).toEqual({
      before: samples.filter((x) => x.timestamp <= moment).at(-1),
      after: samples.find((x) => x.timestamp > moment),
    });
  }
}

/** Chain 1 in one schema, chain 2 in another, each indexed by its own process. */
const twoIndexers = (int: (n: number) => number) => ({
  indexers: new Map([
    [1, new Indexer(int)],
    [2, new Indexer(int)],
  ]),
  schemas: new ChainSchemas(
    new Map([
      [1, "chain_1"],
      [2, "chain_2"],
    ]),
    "none",
  ),
});

/** What the two-schema database does besides answering from its indexers' commits. */
type TwoSchemas = {
  /** Whether chain 2's Ponder is ready. */
  backfilled: () => boolean;
  /** Whether chain 2's indexer holds its tables (a revert): its schema's lock is not available. */
  locked?: () => boolean;
  /** Whether chain 2's schema is dropped (to be indexed afresh): its tables are not there. */
  dropped?: () => boolean;
  onLock?: (chainId: number) => void;
};

/**
 * A feed over chain 1 in schema chain_1 and chain 2 in chain_2, each indexed by its own process
 * (`indexers`, read at each sync: one may be replaced).
 */
function twoSchemaFeed(indexers: Map<number, Indexer>, schemas: ChainSchemas, o: TwoSchemas): ReplicaFeed {
  let last = "chain_1";
  return new ReplicaFeed(async (work) => {
    const [one, two] = [indexers.get(1)!.current, indexers.get(2)!.current];
    const queries = new Map([
      ["chain_1", queryOf(one, () => false, 1)],
      ["chain_2", queryOf(two, () => false, 2, o.backfilled())],
    ]);
    const dropped = o.dropped?.() ?? false;
    return work(async (sql, params) => {
      if (sql.includes("pg_current_snapshot()"))
        return { rows: [{ snapshot: `${one.snapshot}-${two.snapshot}-${dropped}-${indexers.get(2)!.name}` }] };
      if (/^(SAVEPOINT|RELEASE|ROLLBACK)/.test(sql)) return { rows: [] };
      if (sql.includes("to_regclass"))
        return {
          rows: (params![0] as string[]).filter((n) => !dropped || n !== "chain_2").map((schema) => ({ schema })),
        };
      if (dropped && sql.includes('"chain_2".'))
        throw Object.assign(new Error('relation "chain_2.v2_delegation" does not exist'), { code: "42P01" });
      // Every schema's positions at once: each part from its own, numbered as the parts are.
      if (sql.includes(" UNION ALL ") && sql.includes("AS final")) {
        const parts = sql.split(" UNION ALL ");
        const rows = await Promise.all(
          parts.map(async (part, i) => {
            const name = [...queries.keys()].find((n) => part.includes(`"${n}".`))!;
            return (await queries.get(name)!(part, params)).rows.map((row) => ({ ...row, schema: i }));
          }),
        );
        return { rows: rows.flat() };
      }
      if (sql.startsWith("LOCK TABLE")) o.onLock?.(sql.includes('"chain_1".') ? 1 : 2);
      if (o.locked?.() && sql.startsWith("LOCK TABLE") && sql.includes('"chain_2".'))
        throw Object.assign(new Error("could not obtain lock"), { code: "55P03" });
      // A statement naming no table (FETCH, CLOSE) is of the schema last named.
      last = [...queries.keys()].find((name) => sql.includes(`"${name}".`)) ?? last;
      return queries.get(last)!(sql, params);
    });
  }, schemas);
}

describe(`ReplicaFeed over Ponder's commits, synced at random and failing at random (SEED=${SEED})`, () => {
  it("after every sync that succeeds, the copy is the database's state at the block it reports", async () => {
    const next = xorshift32(SEED);
    const int = (n: number) => next() % n;
    const indexer = new Indexer(int);
    let failing = 0;
    let statements = 0;
    let snapshots = 0;
    /** Whether the last look at the snapshot outside one failed. */
    let lookFailed = false;
    const fails = () => failing > 0 && int(failing) === 0;
    const replica = () =>
      new ReplicaFeed(
        async (work) => {
          snapshots++;
          const query = queryOf(indexer.current, fails);
          return work((sql, params) => {
            statements++;
            return query(sql, params);
          });
        },
        ChainSchemas.one("delegations"),
        // The look outside a snapshot, which fails as the others do.
        (sql, params) => {
          lookFailed = fails();
          if (lookFailed) return Promise.reject(new Error("canceled"));
          return queryOf(indexer.current, () => false)(sql, params);
        },
      );
    /** Per copy, the commit of its last sync that succeeded. */
    const syncedAt = new Map<ReplicaFeed, number>();
    const feeds: [string, ReplicaFeed][] = [["first", replica()]];
    let synced = 0;
    let repeated = 0;
    let failed = 0;
    let reorganized = 0;
    for (let step = 0; step < 3_500; step++) {
      const roll = int(100);
      // Reorganizations up to 25 blocks deep, never past finality.
      const reorganizable = Math.min(25, indexer.head - indexer.current.final - 1);
      if (roll < 4 && reorganizable > 0) {
        indexer.revert(1 + int(reorganizable));
        reorganized++;
      } else if (roll < 10) indexer.finalize();
      else indexer.block();
      // Queries fail in bursts, as a lagging standby's replay cancels them.
      failing = int(10) === 0 ? 2 + int(6) : int(3) === 0 ? 0 : failing;
      // A replica started late loads the final blocks' samples whole, at once.
      if (step === 1_500) feeds.push(["late", replica()]);
      if (int(3) > 0) continue;
      for (const [name, feed] of feeds) {
        // Some syncs again at the same commit, after one that succeeded or one that failed.
        for (let again = 0; again === 0 || int(3) === 0; again++) {
          const label = `[SEED=${SEED}] step ${step}, the ${name} copy${again > 0 ? `, again (${again})` : ""}`;
          const [before, snapshotsBefore] = [statements, snapshots];
          lookFailed = false;
          try {
            await feed.sync();
          } catch {
            failed++;
            continue;
          }
          synced++;
          // Nothing committed since its last success: a look outside a snapshot, none taken (or,
          // when the look failed, the snapshot's statement alone). Otherwise more.
          const unchanged = syncedAt.get(feed) === indexer.current.snapshot;
          const taken = snapshots - snapshotsBefore;
          if (unchanged && !lookFailed) expect(taken, `${label}: snapshots taken`).toBe(0);
          else if (unchanged) expect(statements - before, `${label}: statements`).toBe(1);
          else expect(statements - before, `${label}: statements`).toBeGreaterThan(1);
          repeated += unchanged ? 1 : 0;
          syncedAt.set(feed, indexer.current.snapshot);
          const copy = feed.chains.get(CHAIN_ID);
          if (copy !== undefined) expectTruth(indexer, copy, label, int);
        }
      }
    }
    // The run exercised what it is about.
    expect(synced, `[SEED=${SEED}] syncs`).toBeGreaterThan(300);
    expect(failed, `[SEED=${SEED}] failed syncs`).toBeGreaterThan(50);
    expect(repeated, `[SEED=${SEED}] syncs with nothing committed since`).toBeGreaterThan(100);
    expect(reorganized, `[SEED=${SEED}] reorganizations`).toBeGreaterThan(20);
    expect(feeds[1]![1].chains.get(CHAIN_ID)?.final, `[SEED=${SEED}] the late copy's final block`).toBeGreaterThan(
      1_000,
    );
  }, 60_000);

  it("copies chains of several schemas, each once its own is ready, each despite the other's locks", async () => {
    const next = xorshift32(SEED);
    const int = (n: number) => next() % n;
    const { indexers, schemas } = twoIndexers(int);
    let backfilled = false;
    let locked = false;
    /** The schemas whose tables this sync took (by chain), and chain 1's commit at the last sync. */
    let lockedNow: number[] = [];
    const feed = twoSchemaFeed(indexers, schemas, {
      backfilled: () => backfilled,
      locked: () => locked,
      onLock: (chainId) => lockedNow.push(chainId),
    });
    let skipped = 0;
    let oneSyncedAt = -1;
    let untouched = 0;
    for (let step = 0; step < 600; step++) {
      const chainId = 1 + int(2);
      const indexer = indexers.get(chainId)!;
      const reorganizable = Math.min(25, indexer.head - indexer.current.final - 1);
      if (int(100) < 5 && reorganizable > 0) indexer.revert(1 + int(reorganizable));
      else if (int(10) === 0) indexer.finalize();
      else indexer.block();
      if (step === 200) backfilled = true;
      locked = int(4) === 0;
      lockedNow = [];
      await feed.sync();
      const label = `[SEED=${SEED}] step ${step}`;
      // Chain 1's tables are read further only where its indexer committed since the last sync.
      const oneNow = indexers.get(1)!.current.snapshot;
      if (oneNow === oneSyncedAt) {
        expect(lockedNow, `${label}: the schemas read further`).not.toContain(1);
        untouched++;
      }
      oneSyncedAt = oneNow;
      // Chain 1 is live from the start, synced to its checkpoint whatever chain 2's lock.
      expect(feed.chains.get(1)?.seen.checkpoint, `${label}: chain 1's checkpoint`).toBe(
        indexers.get(1)!.current.checkpoint,
      );
      expectTruth(indexers.get(1)!, feed.chains.get(1)!, `${label}, chain 1`, int);
      // Chain 2 is copied once its own indexer is ready; left as it was while its tables are held.
      const two = feed.chains.get(2);
      if (!backfilled) expect(two, `${label}: chain 2 before its backfill`).toBeUndefined();
      else if (locked) skipped++;
      else {
        expect(two?.seen.checkpoint, `${label}: chain 2's checkpoint`).toBe(indexers.get(2)!.current.checkpoint);
        expectTruth(indexers.get(2)!, two!, `${label}, chain 2`, int);
      }
    }
    expect(skipped, `[SEED=${SEED}] syncs with chain 2's tables held`).toBeGreaterThan(50);
    expect(untouched, `[SEED=${SEED}] syncs with nothing new on chain 1`).toBeGreaterThan(100);
  });

  it("forgets a chain whose schema was dropped, and copies it afresh from its new tables", async () => {
    const next = xorshift32(SEED ^ 0x5bd1e995);
    const int = (n: number) => next() % n;
    const { indexers, schemas } = twoIndexers(int);
    let dropped = false;
    const feed = twoSchemaFeed(indexers, schemas, { backfilled: () => true, dropped: () => dropped });
    const label = `[SEED=${SEED}]`;
    for (let step = 0; step < 60; step++) {
      indexers.get(1 + int(2))!.block();
      await feed.sync();
    }
    expectTruth(indexers.get(2)!, feed.chains.get(2)!, `${label} chain 2 as first indexed`, int);
    // Dropped, to be indexed afresh: while its tables are gone the copy holds nothing of it.
    dropped = true;
    for (let step = 0; step < 3; step++) {
      indexers.get(1)!.block();
      await feed.sync();
    }
    expect(feed.chains.has(2), `${label} chain 2 while its schema is dropped`).toBe(false);
    expectTruth(indexers.get(1)!, feed.chains.get(1)!, `${label} chain 1 meanwhile`, int);
    // Indexed afresh, another history, and ready by the copy's next look: copied from its new tables.
    const afresh = new Indexer(int, "afresh");
    for (let step = 0; step < 20; step++) afresh.block();
    indexers.set(2, afresh);
    dropped = false;
    await feed.sync();
    expect(feed.chains.get(2)?.seen.checkpoint, `${label} chain 2's checkpoint afresh`).toBe(afresh.current.checkpoint);
    expectTruth(afresh, feed.chains.get(2)!, `${label} chain 2 indexed afresh`, int);
  });
});
