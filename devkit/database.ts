import pg from "pg";
import { lockNotAvailable } from "../api/store/store";

export type ScratchDatabase = { url: string; drop(): Promise<void> };

/**
 * A new database on the server of `serverUrl`, and how to drop it.
 *
 * Not merely a fresh schema: Ponder keeps the logs it backfills in a sync cache schema shared by
 * every indexer on the database, keyed by chain and block, even for a chain with disableCache (that
 * only stops it from trusting its cached intervals). Every local chain is chain 31337 with the
 * registries at the same addresses, so an indexer backfilling one would also index the logs that
 * another chain's indexer left there at the same block numbers.
 */
export async function scratchDatabase(serverUrl: string, prefix: string): Promise<ScratchDatabase> {
  const url = new URL(serverUrl);
  const name = `${prefix}_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`;
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } catch (error) {
    await admin.end();
    throw error;
  }
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      try {
        await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}

/**
 * The rows of `sql` on the live database at `url`, read as the service reads while Ponder indexes:
 * giving up on a table lock after 200 ms and asking again (for up to 60 s). Ponder's reorg revert
 * drops and recreates triggers, holding each table's lock until it commits; a plain read of two
 * tables may wait for one while holding the other, and Postgres then cancels one of the two as a
 * deadlock (api/store/store.ts, waitingOutLocks).
 */
export async function readLive(url: string, sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url, lock_timeout: 200 });
  await client.connect();
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        return (await client.query(sql, params)).rows;
      } catch (error) {
        if (!lockNotAvailable(error) || Date.now() > deadline) throw error;
      }
    }
  } finally {
    await client.end();
  }
}
