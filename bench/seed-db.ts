/**
 * Bulk-writes seeded rows into the tables a running indexer created (ponder.schema.ts), in its
 * schema: one INSERT … SELECT FROM unnest(column arrays) per batch, columns and types read from the
 * schema's own table definitions.
 */
import { getTableColumns, getTableName } from "drizzle-orm";
import type pg from "pg";
import { v1Delegation, v1PairVersion, v1VaultVersion, v2Delegation } from "../ponder.schema";
import type { Growth } from "./dataset";

type Table = typeof v2Delegation | typeof v1Delegation | typeof v1VaultVersion | typeof v1PairVersion;

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
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
  const names = columns.map(([, column]) => quote(column.name)).join(", ");
  const arrays = columns.map(([, column], i) => `$${i + 1}::${column.getSQLType()}[]`).join(", ");
  const values = columns.map(([key]) => rows.map((row) => cell((row as Record<string, unknown>)[key])));
  await client.query(
    `INSERT INTO ${quote(schema)}.${quote(getTableName(table))} (${names}) SELECT * FROM unnest(${arrays}) ` +
      `${onConflict}`,
    values,
  );
}

/** A version counter already written by an earlier step is moved on, not inserted again. */
const moveOn = (key: string) =>
  `ON CONFLICT (${key}) DO UPDATE SET version = excluded.version, updated_block = excluded.updated_block`;

/**
 * Writes one growth step. The session skips triggers (session_replication_role = replica): the
 * indexer's own triggers record its writes for reorgs and live queries, and these rows are neither.
 */
export async function seed(
  client: pg.ClientBase,
  schema: string,
  growth: Growth,
): Promise<{ rows: number; ms: number }> {
  const started = Date.now();
  let rows = 0;
  await client.query("SET session_replication_role = replica");
  try {
    for (const batch of growth.v2) {
      await insert(client, schema, v2Delegation, batch);
      rows += batch.length;
    }
    for (const batch of growth.v1) {
      await insert(client, schema, v1Delegation, batch);
      rows += batch.length;
    }
    const { vaults, pairs } = growth.versions();
    await insert(client, schema, v1VaultVersion, vaults, moveOn("chain_id, vault"));
    await insert(client, schema, v1PairVersion, pairs, moveOn("chain_id, vault, delegate"));
  } finally {
    await client.query("SET session_replication_role = DEFAULT");
  }
  // Fresh statistics, as autovacuum would give them in time: the planner must see the real sizes.
  for (const table of [v2Delegation, v1Delegation, v1VaultVersion, v1PairVersion]) {
    await client.query(`ANALYZE ${quote(schema)}.${quote(getTableName(table))}`);
  }
  return { rows, ms: Date.now() - started };
}
