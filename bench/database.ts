/**
 * A database of the bench's own on the DATABASE_URL server, dropped at the end.
 *
 * Not merely fresh schemas: Ponder keeps the logs it backfills in a `ponder_sync` schema shared by
 * every indexer on the database, keyed by chain and block, and keeps them even for a chain with
 * disableCache (that only stops it from trusting its cached intervals). Every local chain is chain
 * 31337 with the registries at the same addresses, so an indexer backfilling one would also index
 * the logs that earlier chains' backfills left at the same block numbers.
 */
import pg from "pg";
import type { Cleanup } from "./cleanup";

/** Creates the database, points DATABASE_URL (and so every process started from now on) at it, and connects. */
export async function scratchDatabase(cleanup: Cleanup): Promise<pg.Client> {
  const server = new URL(process.env.DATABASE_URL!);
  const admin = new pg.Client({ connectionString: server.toString() });
  await admin.connect();
  const name = `bench_${process.pid}_${Date.now().toString(36)}`;
  await admin.query(`CREATE DATABASE "${name}"`);
  cleanup.add(`database ${name}`, async () => {
    try {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  });
  server.pathname = `/${name}`;
  process.env.DATABASE_URL = server.toString();
  const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  cleanup.add("database connection", () => db.end());
  return db;
}
