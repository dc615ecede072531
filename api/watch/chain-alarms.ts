/**
 * Chains whose indexed history can no longer be trusted (a reorganization deeper than the
 * indexer's finality depth, api/watch/deep-reorg.ts), kept in the service's own tables under the
 * indexer's schema name: every API process on the database refuses them, and an alarm outlives a
 * restart. A new indexer schema (a re-index) starts without any.
 */
import type { MiddlewareHandler } from "hono";
import { table } from "../../core/sql";
import { type AccessDb, migrate } from "../access/db";
import { Problem } from "../http/problem";

/** The alarms every API process holds in memory, and how the watcher raises one. */
export type ChainAlarms = {
  /** Each alarmed chain's detail: what was found and what to do. */
  current(): ReadonlyMap<number, string>;
  /** Raises (or keeps) the alarm for a chain, in every process on the database. */
  raise(chainId: number, detail: string): Promise<void>;
  close(): void;
};

/** No alarm ever: where nothing is indexed (the waiting room) or nothing is watched. */
export const NO_ALARMS: ChainAlarms = { current: () => new Map(), raise: async () => {}, close: () => {} };

/** The alarms of the indexer writing `indexerSchema`, read again every `refreshMs` (other processes raise them). */
export async function openChainAlarms(
  db: AccessDb,
  schema: string,
  indexerSchema: string,
  refreshMs = 1_000,
): Promise<ChainAlarms> {
  const alarms = table(schema, "chain_alarm");
  await migrate(db, schema, [
    `CREATE TABLE IF NOT EXISTS ${alarms} (indexer_schema text NOT NULL, chain_id integer NOT NULL,
       detail text NOT NULL, raised_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (indexer_schema, chain_id))`,
  ]);
  let held = new Map<number, string>();
  /**
   * Alarms raised in this process, held whatever a read of the table returns: a read begun before
   * the alarm's insert committed does not hold it, and would drop it here until the next read.
   */
  const raisedHere = new Map<number, string>();
  const refresh = async () => {
    const { rows } = await db.query(`SELECT chain_id, detail FROM ${alarms} WHERE indexer_schema = $1`, [
      indexerSchema,
    ]);
    held = new Map([...raisedHere, ...rows.map((row): [number, string] => [Number(row.chain_id), String(row.detail)])]);
  };
  await refresh();
  const timer = setInterval(() => {
    // A database that does not answer keeps the alarms held; its outage is answered elsewhere.
    refresh().catch(() => {});
  }, refreshMs);
  timer.unref();
  return {
    current: () => held,
    async raise(chainId, detail) {
      raisedHere.set(chainId, detail);
      held = new Map(held).set(chainId, detail);
      await db.query(
        `INSERT INTO ${alarms} (indexer_schema, chain_id, detail) VALUES ($1, $2, $3)
         ON CONFLICT (indexer_schema, chain_id) DO NOTHING`,
        [indexerSchema, chainId, detail],
      );
    },
    close: () => clearInterval(timer),
  };
}

/**
 * Refuses every request while any chain is alarmed (503 chain_reorganized with its detail): for
 * reads that span every chain's tables at once, such as GraphQL.
 */
export function refuseWhileAlarmed(alarms: ChainAlarms): MiddlewareHandler {
  return async (_, next) => {
    const [alarm] = alarms.current().values();
    if (alarm !== undefined) return new Problem("chain_reorganized", alarm).response();
    await next();
  };
}
