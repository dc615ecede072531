import { eventKey, type Floor, reconcile } from "../../core/feed";
import { type Query, table } from "../../core/sql";
import { type AccessDb, migrate, noRowsIfMissing } from "../database/db";

/**
 * The change log: every history event the API serves, in the order the writer took them in, each
 * numbered by `seq`, and a retraction for each event a reorganization removed (core/feed.ts). It
 * lives beside the keys (the service's own tables, which replicas read too). Entries are appended,
 * never rewritten; only retention deletes the oldest.
 *
 * The log of a chain begins where the writer first found it: its first write takes the chain's
 * final block then as the floor, and the events at or before it are the history's, not the log's
 * (GET /registry/{v2,v1}/history serves them); a feed is of changes from then on.
 *
 * Per chain and registry, a cursor holds the writer's floor: the block it took as final when it
 * last wrote. A write reads the live entries above the floor, appends what reconciles them with the
 * tables' events above it, and raises the floor, in one transaction that locks the log against
 * other writes: two writers cannot interleave, a crash leaves either all of a write or none of it,
 * and seqs become visible in their order (a reader that has read through a seq can never find an
 * earlier one committed after: with several writers, say a worker per CPU, bigserial alone would
 * let a later seq commit first).
 */

export type FeedVersion = "v1" | "v2";

/** A history event as the writer reads it from the indexer's tables, with its record as the API writes it. */
export type FeedEvent = { block: bigint; blockHash: string; logIndex: number; record: string };

/** One entry of the log: an event, or (`retracts`) the retraction of an earlier entry, with that entry's record. */
export type FeedEntry = {
  seq: bigint;
  chainId: number;
  version: FeedVersion;
  block: bigint;
  blockHash: string;
  logIndex: number;
  /** The event's history record, as JSON text: exactly what the history routes answer for it. */
  record: string;
  retracts: bigint | null;
  createdAt: Date;
};

export interface ChangeLog {
  /**
   * The block above which the writer reconciles the chain's events next; undefined before its first
   * write, which starts the chain's log above its final block then.
   */
  floor(chainId: number, version: FeedVersion): Promise<bigint | undefined>;
  /**
   * Appends what makes the live entries above the floor the `events` (every event above it, in chain
   * order), then raises the floor to `final`. `floor` is what `floor` answered (undefined: the first
   * write, whose floor is `final`). False, with nothing written, when the floor moved meanwhile
   * (another write came first: read the events again). `through`: the block the events were read
   * through, where the indexer is; the entries above it are left as they are unless an event read
   * differs from or comes before them (core/feed.ts, `reconcile`).
   */
  write(
    chainId: number,
    version: FeedVersion,
    floor: bigint | undefined,
    events: readonly FeedEvent[],
    final: bigint,
    through?: bigint,
  ): Promise<boolean>;
  /**
   * Each chain and registry's floor (`chainId:version`), with the last seq logged when it was
   * raised: once a reader has read through `through`, an entry at or below `floor` that it has not
   * seen retracted never will be (core/feed.ts: the writer reconciles only above its floor).
   */
  floors(): Promise<Map<string, Floor>>;
  /** Up to `limit` entries after `after`, oldest first. */
  entries(after: bigint, limit: number): Promise<FeedEntry[]>;
  /** The newest entry's seq, or the newest pruned (0: none ever logged): where a reader of what comes next starts. */
  newest(): Promise<bigint>;
  /** The oldest entry's seq still kept, or undefined while the log is empty. */
  oldest(): Promise<bigint | undefined>;
  /**
   * The largest seq retention deleted (0: none): a reader whose cursor is below it has missed
   * entries. Not `oldest`: seqs have gaps (a transaction rolled back still used its numbers).
   */
  pruned(): Promise<bigint>;
  /** Deletes the entries logged before `before`; how many. */
  prune(before: Date): Promise<number>;
}

/**
 * Selected as text (bigints exactly); ORDER BY names the table's `e.seq`, as the select list's `seq`
 * is text, in which 10 comes before 9.
 */
const COLUMNS = "seq::text, chain_id, version, block::text, block_hash, log_index, record, retracts::text, created_at";

const entryOf = (r: Record<string, unknown>): FeedEntry => ({
  seq: BigInt(r.seq as string),
  chainId: Number(r.chain_id),
  version: r.version as FeedVersion,
  block: BigInt(r.block as string),
  blockHash: r.block_hash as string,
  logIndex: Number(r.log_index),
  record: r.record as string,
  retracts: r.retracts === null ? null : BigInt(r.retracts as string),
  createdAt: new Date(r.created_at as string),
});

/**
 * Appends to `log` (in the caller's transaction) what reconciles the chain's live entries above
 * `floor` with `events` (core/feed.ts): retractions, newest first, each with its entry's record,
 * then the new events in chain order.
 */
async function appendReconciled(
  query: Query,
  log: string,
  at: { chainId: number; version: FeedVersion; floor: bigint; through?: bigint },
  events: readonly FeedEvent[],
): Promise<void> {
  const { chainId, version, floor, through } = at;
  // The entries above the floor not retracted, in the order they were logged (their chain order).
  const live = await query(
    `SELECT ${COLUMNS} FROM ${log} e
      WHERE chain_id = $1 AND version = $2 AND block > $3 AND retracts IS NULL
        AND NOT EXISTS (SELECT 1 FROM ${log} r WHERE r.retracts = e.seq)
      ORDER BY e.seq`,
    [chainId, version, floor.toString()],
  );
  const logged = live.rows.map(entryOf);
  const bySeq = new Map(logged.map((e) => [e.seq, e]));
  const { retract, append } = reconcile(
    logged.map((e) => ({ seq: e.seq, key: eventKey(e.blockHash, e.logIndex), block: e.block })),
    events.filter((e) => e.block > floor),
    (e) => eventKey(e.blockHash, e.logIndex),
    through,
  );
  const rows = [
    ...retract.map((seq) => ({ ...bySeq.get(seq)!, retracts: seq as bigint | null })),
    ...append.map((e) => ({ ...e, retracts: null })),
  ];
  // A statement per INSERT_ROWS entries, not per entry: on PGlite each statement is a round of its
  // protocol through files in the data directory, and a backfill logs thousands of events. The rows
  // go in as one JSON array, numbered in its order (ORDER BY n: bigserial's nextval is taken per row
  // as the sorted rows arrive).
  for (let i = 0; i < rows.length; i += INSERT_ROWS) {
    const chunk = rows.slice(i, i + INSERT_ROWS).map((r) => ({
      block: r.block.toString(),
      blockHash: r.blockHash,
      logIndex: r.logIndex,
      record: r.record,
      retracts: r.retracts?.toString() ?? null,
    }));
    await query(
      `INSERT INTO ${log} (chain_id, version, block, block_hash, log_index, record, retracts)
       SELECT $1::integer, $2::text, (r->>'block')::bigint, r->>'blockHash', (r->>'logIndex')::integer,
              r->>'record', (r->>'retracts')::bigint
         FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS t(r, n)
        ORDER BY n`,
      [chainId, version, JSON.stringify(chunk)],
    );
  }
}

/** Entries appended by one statement (appendReconciled): a few hundred kB of records at most. */
const INSERT_ROWS = 500;

/** Every chain and registry's floor in `cursor`, by `chainId:version`. */
async function floorsOf(db: AccessDb, cursor: string): Promise<Map<string, Floor>> {
  const { rows } = await db
    .query(`SELECT chain_id, version, floor::text, through::text FROM ${cursor}`)
    .catch(noRowsIfMissing);
  return new Map(
    rows.map((r) => [
      `${r.chain_id}:${r.version}`,
      { floor: BigInt(r.floor as string), through: BigInt(r.through as string) },
    ]),
  );
}

export async function openChangeLog(db: AccessDb, schema: string): Promise<ChangeLog> {
  const log = table(schema, "feed_entry");
  const cursor = table(schema, "feed_cursor");
  const pruned = table(schema, "feed_pruned");
  await migrate(db, schema, [
    `CREATE TABLE IF NOT EXISTS ${log} (
      seq bigserial PRIMARY KEY,
      chain_id integer NOT NULL,
      version text NOT NULL,
      block bigint NOT NULL,
      block_hash text NOT NULL,
      log_index integer NOT NULL,
      record text NOT NULL,
      retracts bigint,
      created_at timestamptz NOT NULL DEFAULT now()
    )`,
    // The live entries above a floor: a write's read.
    `CREATE INDEX IF NOT EXISTS feed_entry_chain ON ${log} (chain_id, version, block, seq)`,
    `CREATE INDEX IF NOT EXISTS feed_entry_retracts ON ${log} (retracts) WHERE retracts IS NOT NULL`,
    `CREATE TABLE IF NOT EXISTS ${cursor} (
      chain_id integer NOT NULL,
      version text NOT NULL,
      floor bigint NOT NULL,
      through bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (chain_id, version)
    )`,
    `CREATE TABLE IF NOT EXISTS ${pruned} (one boolean PRIMARY KEY DEFAULT true CHECK (one), through bigint NOT NULL)`,
  ]);

  const prunedThrough = async () => {
    const { rows } = await db.query(`SELECT through::text FROM ${pruned}`).catch(noRowsIfMissing);
    return rows[0] ? BigInt(rows[0].through as string) : 0n;
  };

  return {
    async floor(chainId, version) {
      const { rows } = await db.query(`SELECT floor::text FROM ${cursor} WHERE chain_id = $1 AND version = $2`, [
        chainId,
        version,
      ]);
      return rows[0] ? BigInt(rows[0].floor as string) : undefined;
    },

    write: (chainId, version, given, events, final, through) =>
      db.transaction(async (query) => {
        // Readers (ACCESS SHARE) go on; another write waits for this one's commit.
        await query(`LOCK TABLE ${log} IN SHARE ROW EXCLUSIVE MODE`);
        // The first write makes the cursor; of two first writes, the second finds it made.
        const made = await query(
          `INSERT INTO ${cursor} (chain_id, version, floor) VALUES ($1, $2, $3)
           ON CONFLICT (chain_id, version) DO NOTHING RETURNING floor`,
          [chainId, version, final.toString()],
        );
        if (given === undefined && made.rows.length === 0) return false;
        const held = await query(`SELECT floor::text FROM ${cursor} WHERE chain_id = $1 AND version = $2 FOR UPDATE`, [
          chainId,
          version,
        ]);
        const floor = BigInt(held.rows[0]!.floor as string);
        if (given !== undefined && floor !== given) return false;
        await appendReconciled(query, log, { chainId, version, floor, through }, events);
        await query(
          `UPDATE ${cursor} SET floor = greatest(floor, $3), through = (SELECT coalesce(max(seq), 0) FROM ${log})
           WHERE chain_id = $1 AND version = $2`,
          [chainId, version, final.toString()],
        );
        return true;
      }),

    floors: () => floorsOf(db, cursor),

    async entries(after, limit) {
      // A replica may ask before the indexer's process has made the tables.
      const { rows } = await db
        .query(`SELECT ${COLUMNS} FROM ${log} e WHERE seq > $1 ORDER BY e.seq LIMIT $2`, [after.toString(), limit])
        .catch(noRowsIfMissing);
      return rows.map(entryOf);
    },

    async newest() {
      const { rows } = await db.query(`SELECT max(seq)::text AS seq FROM ${log}`).catch(noRowsIfMissing);
      const seq = rows[0]?.seq == null ? 0n : BigInt(rows[0].seq as string);
      const pruned = await prunedThrough();
      return seq > pruned ? seq : pruned;
    },

    async oldest() {
      const { rows } = await db.query(`SELECT min(seq)::text AS seq FROM ${log}`);
      return rows[0]?.seq == null ? undefined : BigInt(rows[0].seq as string);
    },

    pruned: prunedThrough,

    prune: (before) =>
      db.transaction(async (query) => {
        const { rows } = await query(
          `WITH gone AS (DELETE FROM ${log} WHERE created_at < $1 RETURNING seq)
           SELECT count(*)::int AS n, max(seq)::text AS through FROM gone`,
          [before.toISOString()],
        );
        const through = (rows[0]?.through ?? null) as string | null;
        if (through !== null)
          await query(
            `INSERT INTO ${pruned} (through) VALUES ($1)
             ON CONFLICT (one) DO UPDATE SET through = greatest(${pruned}.through, excluded.through)`,
            [through],
          );
        return Number(rows[0]?.n ?? 0);
      }),
  };
}
