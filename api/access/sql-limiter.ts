import { table } from "../../core/sql";
import { type AccessDb, migrate } from "./db";
import { KEYLESS, type Policy, type RateLimiter, slide } from "./limit";

/** How often rows of clients whose window has emptied are deleted. */
const SWEEP_EVERY_MS = 30_000;

/**
 * The keyless limit shared by every process on one Postgres: each client's window is a row of an
 * UNLOGGED table (fast, and losing it in a crash only forgives a few seconds of requests).
 *
 * Exact under concurrency: a request reads, decides and writes its client's row under a
 * transaction-level advisory lock on the client, so requests of one client through any process
 * are decided one after another; the time is the database's, one clock for all processes.
 */
export async function sqlLimiter(db: AccessDb, schema: string, policy: Policy = KEYLESS): Promise<RateLimiter> {
  const windows = table(schema, "rate_window");
  await migrate(db, schema, [
    `CREATE UNLOGGED TABLE IF NOT EXISTS ${windows}
       (client text PRIMARY KEY, hits float8[] NOT NULL, newest float8 NOT NULL)`,
    `CREATE INDEX IF NOT EXISTS rate_window_newest ON ${windows} (newest)`,
  ]);
  const lockSpace = `rate ${schema}`;

  const sweep = setInterval(() => {
    db.query(`DELETE FROM ${windows} WHERE newest <= (extract(epoch FROM clock_timestamp()) * 1000) - $1`, [
      policy.windowMs,
    ]).catch((error: Error) => console.error("rate limit sweep:", error.message));
  }, SWEEP_EVERY_MS);
  sweep.unref();

  return {
    take: (client, count = 1) =>
      db.transaction(async (query) => {
        await query("SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))", [lockSpace, client]);
        const { rows } = await query(
          `SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now,
                  (SELECT hits FROM ${windows} WHERE client = $1) AS hits`,
          [client],
        );
        const now = Number(rows[0]!.now);
        const { verdict, hits } = slide(((rows[0]!.hits as number[] | null) ?? []).map(Number), now, policy, count);
        if (verdict.allowed) {
          await query(
            `INSERT INTO ${windows} (client, hits, newest) VALUES ($1, $2, $3)
             ON CONFLICT (client) DO UPDATE SET hits = excluded.hits, newest = excluded.newest`,
            [client, hits, now],
          );
        }
        return verdict;
      }),
    async close() {
      clearInterval(sweep);
    },
  };
}
