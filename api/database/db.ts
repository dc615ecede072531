import { type Query, quoteIdentifier } from "../../core/sql";

/**
 * What the service's own tables (keys, key usage, shared rate limits) need of a database. Postgres
 * (pg.ts) and PGlite (pglite.ts) both provide it, so the logic over it is written once.
 */
export interface AccessDb {
  query: Query;
  /** Runs `work` in one transaction, on one connection. */
  transaction<T>(work: (query: Query) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Whether a statement failed because a table it names, or that table's schema, does not exist (yet). */
export const missingTable = (error: unknown) => {
  const code = (error as { code?: string } | null)?.code;
  return code === "42P01" || code === "3F000";
};

/** A read's answer with no rows where its table is not there; any other failure as it was. */
export const noRowsIfMissing = (error: unknown): { rows: Record<string, unknown>[] } => {
  if (missingTable(error)) return { rows: [] };
  throw error;
};

/**
 * Whether this connection may create `schema`'s tables: not on a read-only server (a hot standby) or
 * as a read-only role, and only with CREATE on the schema (or, before it exists, on the database).
 */
const MAY_CREATE_SQL = `SELECT NOT current_setting('transaction_read_only')::boolean AND coalesce(
  has_schema_privilege((SELECT oid FROM pg_namespace WHERE nspname = $1), 'CREATE'),
  has_database_privilege(current_database(), 'CREATE')) AS may`;

/**
 * Creates `schema` and runs `statements` (each idempotent: `IF NOT EXISTS`) in one transaction,
 * under a lock on the schema's name: processes starting together on one Postgres would otherwise
 * race on the catalog (`CREATE ... IF NOT EXISTS` is not safe against a concurrent create).
 *
 * A connection that may not create them does nothing: an API replica's role allowed only to use the
 * access tables (docs/deployment.md) uses them as the indexer, their owner, made them.
 */
export async function migrate(db: AccessDb, schema: string, statements: string[]): Promise<void> {
  await db.transaction(async (query) => {
    const { rows } = await query(MAY_CREATE_SQL, [schema]);
    if (rows[0]?.may !== true) return;
    await query("SELECT pg_advisory_xact_lock(hashtext($1))", [`migrate ${schema}`]);
    await query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)}`);
    for (const statement of statements) await query(statement);
  });
}
