/**
 * Bulk-writes seeded rows into the tables a running indexer created (ponder.schema.ts), in its
 * schema: one INSERT … SELECT FROM unnest(column arrays) per batch, columns and types read from the
 * schema's own table definitions.
 */
import { getTableColumns, getTableName } from "drizzle-orm";
import type pg from "pg";
import { quoteIdentifier, table as tableName } from "../core/sql";
import {
  v1Delegation,
  v1DelegationChange,
  v1Event,
  v1PairVersion,
  v1VaultVersion,
  v1VersionChange,
  v2Delegation,
  v2Event,
} from "../ponder.schema";
import type { Growth, RowBatch } from "./dataset";

type Table =
  | typeof v2Delegation
  | typeof v2Event
  | typeof v1Delegation
  | typeof v1Event
  | typeof v1DelegationChange
  | typeof v1VersionChange
  | typeof v1VaultVersion
  | typeof v1PairVersion;

const cell = (value: unknown) => (typeof value === "bigint" ? value.toString() : (value ?? null));

async function insert<T extends Table>(
  client: pg.ClientBase,
  schema: string,
  table: T,
  rows: T["$inferInsert"][],
  onConflict = "",
) {
  if (rows.length === 0) return;
  const columns = Object.entries(getTableColumns(table));
  const names = columns.map(([, column]) => quoteIdentifier(column.name)).join(", ");
  const arrays = columns.map(([, column], i) => `$${i + 1}::${column.getSQLType()}[]`).join(", ");
  const values = columns.map(([key]) => rows.map((row) => cell((row as Record<string, unknown>)[key])));
  await client.query(
    `INSERT INTO ${tableName(schema, getTableName(table))} (${names}) SELECT * FROM unnest(${arrays}) ${onConflict}`,
    values,
  );
}

/** A version counter already written by an earlier step is moved on, not inserted again. */
const moveOn = (key: string) =>
  `ON CONFLICT (${key}) DO UPDATE SET version = excluded.version, updated_block = excluded.updated_block`;

/** Where each batch's rows go. */
const BATCH_TABLES: [keyof RowBatch, Table][] = [
  ["v2Delegations", v2Delegation],
  ["v2Events", v2Event],
  ["v1Events", v1Event],
  ["v1Changes", v1DelegationChange],
  ["v1VersionChanges", v1VersionChange],
];

/**
 * Writes one growth step; the rows of the delegations it made (v2 and v1), and of their events. The
 * session skips triggers (session_replication_role = replica): the indexer's own triggers record its
 * writes for reorgs and live queries, and these rows are neither.
 */
export async function seed(
  client: pg.ClientBase,
  schema: string,
  growth: Growth,
): Promise<{ rows: number; events: number; ms: number }> {
  const started = Date.now();
  let rows = 0;
  let events = 0;
  await client.query("SET session_replication_role = replica");
  try {
    for (const batch of growth.batches) {
      for (const [name, table] of BATCH_TABLES) await insert(client, schema, table, batch[name]);
      rows += batch.v2Delegations.length;
      events += batch.v2Events.length + batch.v1Events.length;
    }
    const { v1Delegations, vaults, pairs } = growth.final();
    await insert(client, schema, v1Delegation, v1Delegations);
    rows += v1Delegations.length;
    await insert(client, schema, v1VaultVersion, vaults, moveOn("chain_id, vault"));
    await insert(client, schema, v1PairVersion, pairs, moveOn("chain_id, vault, delegate"));
  } finally {
    await client.query("SET session_replication_role = DEFAULT");
  }
  // As autovacuum leaves tables in time: fresh statistics (the planner must see the real sizes), and
  // the visibility map and hint bits set (else the first reads of each page would write them).
  for (const table of [...BATCH_TABLES.map(([, t]) => t), v1Delegation, v1VaultVersion, v1PairVersion]) {
    await client.query(`VACUUM (ANALYZE) ${tableName(schema, getTableName(table))}`);
  }
  return { rows, events, ms: Date.now() - started };
}
