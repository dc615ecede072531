/**
 * Where chains are indexed apart (scripts/launcher/apart.ts), the launcher's account of each chain's
 * indexer, kept in the access schema so that every API process on the database tells operators
 * (/registry/chains, /metrics): whether the chain's Ponder runs and since when, since when its RPC
 * has not answered, whether it is being indexed afresh. Where one Ponder indexes every chain there
 * is no such account: its process is the API's own.
 */
import { table } from "../../core/sql";
import { type AccessDb, migrate, noRowsIfMissing } from "../database/db";
import type { ChainSchemas } from "../store/chain-schemas";

/** What a chain's indexer is doing. */
export const INDEXER_STATES = ["running", "reindexing", "waiting", "restarting", "not indexed"] as const;
export type IndexerActivity = (typeof INDEXER_STATES)[number];

/** One chain's indexer, as the launcher last noted it; times in ISO 8601. */
export type ChainIndexer = {
  /**
   * running: its Ponder runs; reindexing: it runs, indexing the chain afresh (its alarm raised);
   * waiting: for its RPC to answer; restarting: its Ponder exited and is run again shortly;
   * not indexed: neither registry is on the chain.
   */
  state: IndexerActivity;
  /** Since when it is in this state. */
  since: string;
  /** Since when none of its RPC URLs answers for the chain; null while one does. */
  rpcFailingSince: string | null;
  /** Why it waits or restarts (RPC URLs redacted); else null. */
  detail: string | null;
  /** While its Ponder backfills the chain: blocks done of all; null once live, or before Ponder counts them. */
  backfill: { blocks: number; ofBlocks: number } | null;
};

const indexerTable = (schema: string) => table(schema, "chain_indexer");

/** The launcher's note of a chain's indexer, as it writes it: the time it changed is the database's. */
export type IndexerNote = Omit<ChainIndexer, "since"> & { indexerSchema: string; chainId: number };

/** Makes the table of the indexers' states in the access schema `schema` (the launcher, its writer, makes it). */
export const makeIndexerTable = (db: AccessDb, schema: string) =>
  migrate(db, schema, [
    `CREATE TABLE IF NOT EXISTS ${indexerTable(schema)} (indexer_schema text NOT NULL, chain_id integer NOT NULL,
       state text NOT NULL, since timestamptz NOT NULL DEFAULT now(), rpc_failing_since timestamptz,
       detail text, PRIMARY KEY (indexer_schema, chain_id))`,
    `ALTER TABLE ${indexerTable(schema)} ADD COLUMN IF NOT EXISTS backfill_blocks bigint,
       ADD COLUMN IF NOT EXISTS backfill_of_blocks bigint`,
  ]);

/** Notes a chain's indexer: `since` moves only when its state does. */
export async function noteIndexer(db: AccessDb, schema: string, note: IndexerNote): Promise<void> {
  await db.query(
    `INSERT INTO ${indexerTable(schema)} AS t (indexer_schema, chain_id, state, rpc_failing_since, detail,
       backfill_blocks, backfill_of_blocks) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (indexer_schema, chain_id) DO UPDATE SET state = excluded.state,
       since = CASE WHEN t.state = excluded.state THEN t.since ELSE now() END,
       rpc_failing_since = excluded.rpc_failing_since, detail = excluded.detail,
       backfill_blocks = excluded.backfill_blocks, backfill_of_blocks = excluded.backfill_of_blocks`,
    [
      ...[note.indexerSchema, note.chainId, note.state, note.rpcFailingSince, note.detail],
      ...[note.backfill?.blocks ?? null, note.backfill?.ofBlocks ?? null],
    ],
  );
}

const iso = (value: unknown) => (value === null || value === undefined ? null : new Date(String(value)).toISOString());

/**
 * Each chain's indexer as noted for its own schema (`schemas`), read again every `refreshMs`; none
 * where nothing was noted (one Ponder for every chain: the table is not there).
 */
export async function openChainIndexers(
  db: AccessDb,
  schema: string,
  schemas: ChainSchemas,
  refreshMs = 1_000,
): Promise<{ current(): ReadonlyMap<number, ChainIndexer>; close(): void }> {
  let held = new Map<number, ChainIndexer>();
  const refresh = async () => {
    const { rows } = await db
      .query(
        `SELECT indexer_schema, chain_id, state, since, rpc_failing_since, detail, backfill_blocks,
           backfill_of_blocks FROM ${indexerTable(schema)} WHERE indexer_schema = ANY($1)`,
        [schemas.all],
      )
      .catch(noRowsIfMissing);
    held = new Map(
      rows
        .filter((row) => schemas.holds(Number(row.chain_id), row.indexer_schema))
        .map((row): [number, ChainIndexer] => [
          Number(row.chain_id),
          {
            state: String(row.state) as IndexerActivity,
            since: iso(row.since)!,
            rpcFailingSince: iso(row.rpc_failing_since),
            detail: row.detail === null ? null : String(row.detail),
            backfill:
              row.backfill_of_blocks === null || row.backfill_of_blocks === undefined
                ? null
                : { blocks: Number(row.backfill_blocks), ofBlocks: Number(row.backfill_of_blocks) },
          },
        ]),
    );
  };
  await refresh().catch(() => {});
  // A database that does not answer keeps what was read; its outage is answered elsewhere.
  const timer = setInterval(() => refresh().catch(() => {}), refreshMs);
  timer.unref();
  return { current: () => held, close: () => clearInterval(timer) };
}
