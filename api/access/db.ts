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

/**
 * Creates `schema` and runs `statements` (each idempotent: `IF NOT EXISTS`) in one transaction,
 * under a lock on the schema's name: processes starting together on one Postgres would otherwise
 * race on the catalog (`CREATE ... IF NOT EXISTS` is not safe against a concurrent create).
 */
export async function migrate(db: AccessDb, schema: string, statements: string[]): Promise<void> {
  await db.transaction(async (query) => {
    await query("SELECT pg_advisory_xact_lock(hashtext($1))", [`migrate ${schema}`]);
    await query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)}`);
    for (const statement of statements) await query(statement);
  });
}
