import type { Address, Hex } from "viem";
import type { Sample } from "../../core/moment";
import type { Query } from "../../core/sql";
import { table } from "../../core/sql";
import { PONDER_STATE_TABLES, readySql } from "../../ponder/ponder-0.16.10";
import { missingTable } from "../database/db";
import type { ChainSchemas } from "../store/chain-schemas";
import { INDEXED_BLOCK_SQL, lockNotAvailable, positionsSql, v1RowOf, v2RowOf } from "../store/store";
import { ChainState, rowKey, type StateRow } from "./chain-state";
import { EventTimes } from "./event-times";

/**
 * Runs `work` in one read-only snapshot of the database (REPEATABLE READ on Postgres; on PGlite a
 * transaction, which runs alone on its instance).
 */
export type Snapshot = <T>(work: (query: Query) => Promise<T>) => Promise<T>;

const CURRENT_SNAPSHOT = "SELECT pg_current_snapshot()::text AS snapshot";

/** The database's current snapshot as text, read by `query`. */
const snapshotOf = async (query: Query) => String((await query(CURRENT_SNAPSHOT)).rows[0]?.snapshot);

/**
 * Rows fetched per round trip while loading a whole table: few enough that a batch's row objects
 * can die young, in V8's new space. With batches of 20,000 the replicas came ready at 1M
 * delegations with ~120 MB more memory (docs/performance.md).
 */
const LOAD_BATCH = 2_000;

const num = (value: unknown) => Number(value);

const COLUMNS = {
  v2: `hash, delegation_type, "from", "to", contract, token_id::text, rights, amount::text, enabled,
       first_block::text, first_log_index, updated_block::text`,
  v1: `vault, delegate, type, contract, token_id::text, enabled, vault_version, pair_version,
       created_block::text, created_log_index, first_block::text, updated_block::text`,
  vault: `vault, version, updated_block::text`,
  pair: `vault, delegate, version, updated_block::text`,
} as const;
type Table = keyof typeof COLUMNS;
const TABLE_NAME: Record<Table, string> = {
  v2: "v2_delegation",
  v1: "v1_delegation",
  vault: "v1_vault_version",
  pair: "v1_pair_version",
};
/** Every table a sync reads. */
const READ_TABLES = [
  ...Object.values(PONDER_STATE_TABLES),
  "chain_head",
  "v2_event",
  "v1_event",
  ...Object.values(TABLE_NAME),
];
/** Load order within a table: v2 and v1 rows in list order, so wallet lists are built without sorting. */
const LOAD_ORDER: Record<Table, string> = {
  v2: "first_block, first_log_index",
  v1: "created_block, created_log_index",
  vault: "vault",
  pair: "vault, delegate",
};

function stateRow(t: Table, r: Record<string, unknown>): StateRow {
  switch (t) {
    case "v2":
      return {
        table: t,
        row: {
          ...v2RowOf(r),
          hash: r.hash as Hex,
          enabled: r.enabled as boolean,
          firstBlock: num(r.first_block),
          firstLogIndex: num(r.first_log_index),
          updatedBlock: num(r.updated_block),
        },
      };
    case "v1":
      return {
        table: t,
        row: {
          ...v1RowOf(r),
          enabled: r.enabled as boolean,
          vaultVersion: num(r.vault_version),
          pairVersion: num(r.pair_version),
          createdBlock: num(r.created_block),
          createdLogIndex: num(r.created_log_index),
          firstBlock: num(r.first_block),
          updatedBlock: num(r.updated_block),
        },
      };
    case "vault":
      return {
        table: t,
        row: { vault: r.vault as Address, version: num(r.version), updatedBlock: num(r.updated_block) },
      };
    case "pair":
      return {
        table: t,
        row: {
          vault: r.vault as Address,
          delegate: r.delegate as Address,
          version: num(r.version),
          updatedBlock: num(r.updated_block),
        },
      };
  }
}

export type ChainFeed = {
  state: ChainState;
  /** The blocks with registry events and their timestamps: a moment's samples (api/routes/moment.ts). */
  times: EventTimes;
  /** A checkpoint left behind by a revert: while it is current, `state.block` stays at the fork. */
  heldAt?: string;
  final: number;
  /**
   * The chain's position when the copy last took in all there was (its checkpoint: Ponder's, whole,
   * which changes with every block indexed). While the position is the same, there is nothing to read.
   */
  seen: Position;
};

/**
 * A chain's position in one snapshot: its checkpoint, the block its state is at, its final block,
 * and the version of its chain_head row (xmin): every event rewrites that row, and so does a revert
 * of events (store.ts, INDEXED_BLOCK_SQL). While none of the four changes, neither did a row.
 */
type Position = { checkpoint: string; block: number; final: number; head: string | null };
/** A schema's positions as read: whether its Ponder is ready, and a row per chain (readPositions). */
type Positions = { ready: boolean; rows: Record<string, unknown>[] };
const positionOf = (c: Record<string, unknown>): Position => ({
  checkpoint: c.checkpoint as string,
  block: num(c.block),
  final: num(c.final),
  head: (c.head as string | null) ?? null,
});
const samePosition = (a: Position, b: Position) =>
  a.checkpoint === b.checkpoint && a.block === b.block && a.final === b.final && a.head === b.head;

/**
 * Keeps in-memory copies of the indexer's state tables up to date, one consistent snapshot at a
 * time: each sync reads Ponder's checkpoint and the rows changed since the last one
 * (`updated_block`), in one snapshot, so the copy is always the state at exactly one indexed block.
 *
 * Reorganizations: Ponder reverts the rows of blocks that left the chain. Each sync compares a
 * fingerprint of the history rows of every block not yet final with the one held; from the first
 * block that differs, every row changed since is read again (the rows the copy changed then, and
 * the rows the database changed then). Ponder reverts before it moves its checkpoint, so until the
 * checkpoint moves again the copy reports the last block both agree on.
 */
export class ReplicaFeed {
  readonly chains = new Map<number, ChainFeed>();
  /**
   * The schemas whose Ponder is ready (every chain it indexes backfilled). A schema's chains are
   * copied only then: until a chain's schema is ready, `chains` does not hold it.
   */
  readonly ready = new Set<string>();
  /** Each chain's indexed block and its timestamp, also while not ready (answers are then 503 anyway). */
  readonly positions = new Map<number, { block: number; timestamp: number }>();

  /**
   * The database's snapshot (pg_current_snapshot) at the last sync that succeeded. Two equal
   * snapshots see the same committed transactions, so the same rows: a sync from the same one
   * changes nothing, and is one statement instead of a scan of every chain's recent events.
   */
  private synced: string | undefined;

  /**
   * `query`, when given, runs a statement outside any snapshot: a sync first asks it for the current
   * snapshot, so that one with nothing committed since the last is one statement, not four (BEGIN,
   * SET, the snapshot, COMMIT). Syncs run ten times a second; blocks come every second at most.
   */
  constructor(
    private readonly snapshot: Snapshot,
    private readonly schemas: ChainSchemas,
    private readonly query?: Query,
  ) {}

  /** The chain's table `name`. */
  private t(chainId: number, name: string) {
    return table(this.schemas.of(chainId), name);
  }

  /**
   * One sync of every chain: nothing more than a look at the snapshot while nothing was committed
   * since the last (between blocks). Otherwise, per schema, it takes every table it reads, or none
   * if that schema's indexer holds or awaits one (55P03: the schema is skipped, the others synced).
   * A sync that waited for a table while holding others could be what Ponder's reorg revert waits
   * for, and Postgres would cancel one of the two: the revert, which Ponder then retries for a
   * minute, holding the tables meanwhile.
   */
  async sync(): Promise<void> {
    // A look that fails says nothing: the sync below fails or succeeds on its own.
    if (this.query && this.synced !== undefined) {
      const current = await snapshotOf(this.query).catch(() => undefined);
      if (current === this.synced) return;
    }
    await this.snapshot(async (query) => {
      // First: in REPEATABLE READ it is the statement that takes the snapshot every read below sees.
      const snapshot = await snapshotOf(query);
      if (snapshot === this.synced) return;
      const { all } = this.schemas;
      // One schema alone needs no savepoint: its failure is the sync's.
      if (all.length === 1) await this.syncSchema(query, all[0]!);
      else if (!(await this.syncMoved(query))) return;
      this.synced = snapshot;
    });
  }

  /** Schemas whose indexer has made every table a sync reads (the others have not started yet). */
  private readonly present = new Set<string>();

  /**
   * The sync of several schemas: one statement reads every chain's position, and only the schemas
   * where one moved (or the readiness changed) are read further, each in a savepoint, skipped when
   * its indexer holds its tables. False when one was skipped.
   */
  private async syncMoved(query: Query): Promise<boolean> {
    const { all } = this.schemas;
    const missing = all.filter((schema) => !this.present.has(schema));
    if (missing.length > 0) {
      const { rows } = await query(
        `SELECT s AS schema FROM unnest($1::text[]) s WHERE NOT EXISTS (SELECT FROM unnest($2::text[]) t
           WHERE to_regclass(quote_ident(s) || '.' || quote_ident(t)) IS NULL)`,
        [missing, READ_TABLES],
      );
      for (const row of rows) this.present.add(String(row.schema));
      // A schema without its tables holds no chain: what was copied of one dropped (to be indexed
      // afresh) must not be advanced from the new tables' rows.
      for (const schema of missing) if (!this.present.has(schema)) this.forgetSchema(schema);
    }
    const present = all.filter((schema) => this.present.has(schema));
    if (present.length === 0) return true;
    const positions = await this.readPositions(query, present).catch((error: unknown) => {
      // A schema dropped since (a chain re-indexed afresh): asked again which are there.
      if (!missingTable(error)) throw error;
      this.present.clear();
      return undefined;
    });
    if (positions === undefined) return false;
    let whole = true;
    for (const schema of present) {
      const read = positions.get(schema)!;
      const moved =
        read.ready !== this.ready.has(schema) ||
        read.rows.some((c) => {
          const feed = this.chains.get(num(c.chain_id));
          return feed === undefined ? read.ready : !samePosition(positionOf(c), feed.seen);
        });
      for (const c of read.rows) this.notePosition(c, schema);
      if (!moved) continue;
      await query("SAVEPOINT replica_schema");
      try {
        await this.syncSchema(query, schema, read);
        await query("RELEASE SAVEPOINT replica_schema");
      } catch (error) {
        if (!lockNotAvailable(error)) throw error;
        await query("ROLLBACK TO SAVEPOINT replica_schema");
        whole = false;
      }
    }
    return whole;
  }

  /**
   * Per schema, in one statement: whether its Ponder is ready, and its chains' positions. The block
   * is the state's (INDEXED_BLOCK_SQL): a copy loaded after a revert, before the checkpoint moves
   * again, is at the revert's block, not the checkpoint's.
   */
  private async readPositions(query: Query, schemas: readonly string[]): Promise<Map<string, Positions>> {
    const { rows } = await query(
      schemas
        .map(
          (schema, i) =>
            `SELECT ${i} AS schema, ${readySql(schema)} AS ready, c.chain_id, c.checkpoint,
               ${INDEXED_BLOCK_SQL}::text AS block, c.block_timestamp::text, c.finalized_block::text AS final,
               h.xmin::text AS head
             FROM ${positionsSql(schema)}`,
        )
        .join(" UNION ALL "),
    );
    const read = new Map(schemas.map((schema): [string, Positions] => [schema, { ready: false, rows: [] }]));
    for (const row of rows) {
      const at = read.get(schemas[num(row.schema)]!)!;
      at.ready = num(row.ready ?? 0) === 1;
      at.rows.push(row);
    }
    return read;
  }

  /** The chain's indexed block and its time, from its position's row, if `schema` holds the chain. */
  private notePosition(c: Record<string, unknown>, schema: string) {
    const chainId = num(c.chain_id);
    if (this.schemas.of(chainId) === schema)
      this.positions.set(chainId, { block: num(c.block), timestamp: num(c.block_timestamp) });
  }

  /** The sync of the chains in one indexer's schema, from its positions (`read`: as read in this snapshot). */
  private async syncSchema(query: Query, schema: string, read?: Positions): Promise<void> {
    await query(`LOCK TABLE ${READ_TABLES.map((name) => table(schema, name)).join(", ")} IN ACCESS SHARE MODE NOWAIT`);
    const { ready, rows } = read ?? (await this.readPositions(query, [schema])).get(schema)!;
    for (const c of rows) {
      const chainId = num(c.chain_id);
      // A chain another schema holds now (this one is an earlier indexer's).
      if (this.schemas.of(chainId) !== schema) continue;
      this.notePosition(c, schema);
      if (!ready) continue;
      const at = positionOf(c);
      const feed = this.chains.get(chainId);
      if (feed === undefined) this.chains.set(chainId, await this.load(query, chainId, at));
      else await this.advance(query, chainId, feed, at);
    }
    if (ready) this.ready.add(schema);
    else this.forgetSchema(schema);
  }

  /** Holds none of the chains of `schema`: its Ponder is not ready, or its tables are gone. */
  private forgetSchema(schema: string): void {
    this.ready.delete(schema);
    for (const chainId of this.chains.keys()) if (this.schemas.of(chainId) === schema) this.chains.delete(chainId);
  }

  private async load(query: Query, chainId: number, at: Position): Promise<ChainFeed> {
    const state = new ChainState();
    for (const t of Object.keys(COLUMNS) as Table[]) {
      const cursor = `replica_${t}`;
      await query(
        `DECLARE ${cursor} NO SCROLL CURSOR FOR
         SELECT ${COLUMNS[t]} FROM ${this.t(chainId, TABLE_NAME[t])} WHERE chain_id = $1 ORDER BY ${LOAD_ORDER[t]}`,
        [chainId],
      );
      for (;;) {
        const { rows } = await query(`FETCH ${LOAD_BATCH} FROM ${cursor}`);
        for (const r of rows) {
          const row = stateRow(t, r);
          state.put(rowKey(row), row, at.final);
        }
        if (rows.length < LOAD_BATCH) break;
      }
      await query(`CLOSE ${cursor}`);
    }
    state.trim();
    const times = await this.finalTimes(query, chainId, at.final);
    times.trim();
    const recent = await this.fingerprints(query, chainId, at.final);
    for (const [block, fingerprint] of recent.fingerprints) state.fingerprints.set(block, fingerprint);
    times.replaceRecent(recent.samples);
    state.block = at.block;
    return { state, times, final: at.final, seen: at };
  }

  /** The blocks up to `final` with registry events, and their timestamps. */
  private async finalTimes(query: Query, chainId: number, final: number): Promise<EventTimes> {
    const times = new EventTimes();
    await query(
      `DECLARE replica_times NO SCROLL CURSOR FOR
       SELECT block_number::text AS block, min(block_timestamp)::text AS timestamp
       FROM (SELECT block_number, block_timestamp FROM ${this.t(chainId, "v2_event")}
             WHERE chain_id = $1 AND block_number <= $2
             UNION ALL
             SELECT block_number, block_timestamp FROM ${this.t(chainId, "v1_event")}
             WHERE chain_id = $1 AND block_number <= $2) e
       GROUP BY block_number ORDER BY block_number`,
      [chainId, final],
    );
    for (;;) {
      const { rows } = await query(`FETCH ${LOAD_BATCH} FROM replica_times`);
      for (const r of rows) times.appendFinal(num(r.block), num(r.timestamp));
      if (rows.length < LOAD_BATCH) break;
    }
    await query(`CLOSE replica_times`);
    return times;
  }

  /** Per block after `after`, a digest of its registry events (ids and transactions), and its timestamp. */
  private async fingerprints(query: Query, chainId: number, after: number) {
    const { rows } = await query(
      `SELECT block_number::text AS block, min(block_timestamp)::text AS timestamp,
         md5(string_agg(id || transaction_hash, ',' ORDER BY id)) AS fingerprint
       FROM (SELECT block_number, block_timestamp, id, transaction_hash FROM ${this.t(chainId, "v2_event")}
             WHERE chain_id = $1 AND block_number > $2
             UNION ALL
             SELECT block_number, block_timestamp, id, transaction_hash FROM ${this.t(chainId, "v1_event")}
             WHERE chain_id = $1 AND block_number > $2) e
       GROUP BY block_number`,
      [chainId, after],
    );
    return {
      fingerprints: new Map(rows.map((r) => [num(r.block), r.fingerprint as string])),
      samples: rows.map(
        (r): Sample => ({ block: BigInt(r.block as string), timestamp: BigInt(r.timestamp as string) }),
      ),
    };
  }

  private async advance(query: Query, chainId: number, feed: ChainFeed, at: Position) {
    // Another chain's block: this one's rows are as the copy last read them.
    if (samePosition(at, feed.seen)) return;
    const { state } = feed;
    // Compared whenever the position moved, the checkpoint or not: Ponder reverts a reorganized
    // block's rows (rewriting chain_head) before it moves its checkpoint.
    const recent = await this.fingerprints(query, chainId, feed.final);
    const { fingerprints } = recent;
    // The last block, among those the copy holds, before the first whose events differ now.
    let fork: number | undefined;
    for (const block of new Set([
      ...state.fingerprints.keys(),
      ...[...fingerprints.keys()].filter((b) => b <= state.block),
    ])) {
      if (state.fingerprints.get(block) !== fingerprints.get(block) && (fork === undefined || block - 1 < fork))
        fork = block - 1;
    }
    // The state behind the copy's block with no event differing: a revert of blocks without events.
    // The copy's rows are the state at `at.block` too, but its block may not be on the new branch.
    if (at.block < state.block) fork = Math.min(fork ?? at.block, at.block);
    if (fork === undefined && at.checkpoint === feed.seen.checkpoint) {
      feed.seen = at;
      return;
    }

    const since = fork ?? state.block;
    const changed: StateRow[] = [];
    for (const t of Object.keys(COLUMNS) as Table[]) {
      const { rows } = await query(
        `SELECT ${COLUMNS[t]} FROM ${this.t(chainId, TABLE_NAME[t])} WHERE chain_id = $1 AND updated_block > $2`,
        [chainId, since],
      );
      for (const r of rows) changed.push(stateRow(t, r));
    }
    // Rows of a block past the checkpoint: the snapshot is mid-write; take the next one.
    if (changed.some((r) => r.row.updatedBlock > at.block)) return;

    // What the copy changed after the fork is forgotten only once it has been read again: a query
    // may fail before (a standby cancels queries that conflict with its replay), and the next sync
    // must still know which rows to read.
    const reread = fork === undefined ? [] : await this.reread(query, chainId, state.touchedAfter(fork));
    if (fork !== undefined) state.forgetTouchedAfter(fork);
    for (const [key, row] of reread) state.put(key, row, at.final);
    // New v2 and v1 rows in list order, so that wallet lists stay sorted without sorting.
    const listOrder = (r: StateRow) =>
      r.table === "v2"
        ? [r.row.firstBlock, r.row.firstLogIndex]
        : r.table === "v1"
          ? [r.row.createdBlock, r.row.createdLogIndex]
          : [0, 0];
    changed.sort((a, b) => listOrder(a)[0]! - listOrder(b)[0]! || listOrder(a)[1]! - listOrder(b)[1]!);
    for (const row of changed) state.put(rowKey(row), row, at.final);

    state.fingerprints.clear();
    for (const [block, fingerprint] of fingerprints) state.fingerprints.set(block, fingerprint);
    feed.times.replaceRecent(recent.samples);
    const held = Math.min(state.block, fork ?? state.block);
    // A replacing block may have the checkpoint of the block it replaced (Ponder's holds no hash):
    // events past the fork are the replacement's, indexed.
    const reindexed = [...fingerprints.keys()].some((block) => block > held);
    if ((at.checkpoint === feed.seen.checkpoint || at.checkpoint === feed.heldAt) && !reindexed) {
      // Reverted, not yet re-indexed: the checkpoint still names the block that left the chain.
      feed.heldAt = at.checkpoint;
      state.block = held;
    } else {
      feed.heldAt = undefined;
      state.block = at.block;
    }
    feed.final = Math.max(feed.final, at.final);
    state.finalize(feed.final);
    feed.times.finalize(feed.final);
    feed.seen = at;
  }

  /** The rows now in the database for `keys` (undefined for those no longer there). */
  private async reread(query: Query, chainId: number, keys: Set<string>): Promise<Map<string, StateRow | undefined>> {
    const out = new Map<string, StateRow | undefined>([...keys].map((k) => [k, undefined]));
    const ids = (prefix: string) =>
      [...keys].filter((k) => k.startsWith(`${prefix}:`)).map((k) => k.slice(prefix.length + 1));
    const vaultsOf = (list: string[]) => [...new Set(list.map((id) => id.split("|")[0]!))];
    const reads: [Table, string, unknown][] = [
      ["v2", "hash = ANY($2)", ids("v2")],
      ["v1", "vault = ANY($2)", vaultsOf(ids("v1"))],
      ["vault", "vault = ANY($2)", ids("vault")],
      ["pair", "vault = ANY($2)", vaultsOf(ids("pair"))],
    ];
    for (const [t, where, values] of reads) {
      if ((values as unknown[]).length === 0) continue;
      const { rows } = await query(
        `SELECT ${COLUMNS[t]} FROM ${this.t(chainId, TABLE_NAME[t])} WHERE chain_id = $1 AND ${where}`,
        [chainId, values],
      );
      for (const r of rows) {
        const row = stateRow(t, r);
        const key = rowKey(row);
        if (out.has(key)) out.set(key, row);
      }
    }
    return out;
  }
}
