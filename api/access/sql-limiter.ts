import { table } from "../../core/sql";
import { type AccessDb, migrate } from "../database/db";
import { KEYLESS, type Policy, type RateLimiter, type Spend, slide, type Verdict } from "./limit";

/** How often rows of clients whose window has emptied are deleted. */
const SWEEP_EVERY_MS = 30_000;
/** Refusals remembered, by client: past this many, the memory starts again. */
const REMEMBERED = 100_000;

/**
 * The keyless budget shared by every process on one Postgres: each client's window is a row of an
 * UNLOGGED table (fast, and losing it in a crash only forgives a few seconds of requests).
 *
 * Exact under concurrency: a request reads, decides and writes its client's row under a
 * transaction-level advisory lock on the client, so requests of one client through any process
 * are decided one after another; the time is the database's, one clock for all processes.
 *
 * A client refused is refused again from this process's memory, with no transaction, until its
 * window frees what the request needs: a client over its budget costs the database nothing.
 */
export async function sqlLimiter(db: AccessDb, schema: string, policy: Policy = KEYLESS): Promise<RateLimiter> {
  const windows = table(schema, "keyless_spend");
  await migrate(db, schema, [
    `CREATE UNLOGGED TABLE IF NOT EXISTS ${windows}
       (client text PRIMARY KEY, spends jsonb NOT NULL, newest float8 NOT NULL)`,
    `CREATE INDEX IF NOT EXISTS keyless_spend_newest ON ${windows} (newest)`,
  ]);
  const lockSpace = `keyless ${schema}`;
  /** Each client's last verdict, while it refuses: until when, in this process's clock. */
  const refused = new Map<string, { verdict: Verdict; until: number }>();

  const sweep = setInterval(() => {
    db.query(`DELETE FROM ${windows} WHERE newest <= (extract(epoch FROM clock_timestamp()) * 1000) - $1`, [
      policy.windowMs,
    ]).catch((error: Error) => console.error("keyless budget sweep:", error.message));
  }, SWEEP_EVERY_MS);
  sweep.unref();

  const spend = async (client: string, units: number, force: boolean): Promise<Verdict> => {
    const verdict = await db.transaction(async (query) => {
      await query("SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))", [lockSpace, client]);
      const { rows } = await query(
        `SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now,
                (SELECT spends FROM ${windows} WHERE client = $1) AS spends`,
        [client],
      );
      const now = Number(rows[0]!.now);
      const held = rows[0]!.spends;
      const before = ((typeof held === "string" ? JSON.parse(held) : held) ?? []) as Spend[];
      const step = slide(before, now, policy, units, force);
      if (step.verdict.allowed) {
        await query(
          `INSERT INTO ${windows} (client, spends, newest) VALUES ($1, $2, $3)
           ON CONFLICT (client) DO UPDATE SET spends = excluded.spends, newest = excluded.newest`,
          [client, JSON.stringify(step.spends), now],
        );
      }
      return step.verdict;
    });
    if (verdict.remaining === 0 && verdict.resetMs > 0) {
      if (refused.size >= REMEMBERED) refused.clear();
      refused.set(client, { verdict: { ...verdict, allowed: false }, until: Date.now() + verdict.resetMs });
    } else refused.delete(client);
    return verdict;
  };

  return {
    take: async (client, units = 1) => {
      const known = refused.get(client);
      if (known !== undefined && Date.now() < known.until)
        return { ...known.verdict, resetMs: known.until - Date.now() };
      return spend(client, units, false);
    },
    charge: (client, units) => spend(client, units, true),
    async close() {
      clearInterval(sweep);
    },
  };
}
