/**
 * Chains whose indexed state can no longer be trusted, kept in the service's own tables under the
 * indexer's schema name, so that every API process on the database refuses them:
 * - alarms: a reorganization deeper than the indexer's finality depth (api/watch/deep-reorg.ts)
 *   mixed two branches; an alarm outlives a restart, and a new indexer schema (a re-index) starts
 *   without any; where chains are indexed apart the launcher re-indexes the chain in its schema and
 *   clears the alarm once that is done (scripts/launcher/reindex.ts);
 * - replaced heads: the chain replaced the block the indexer is at (api/watch/replaced-head.ts);
 *   answered 503 until the indexer follows the new branch, when the watcher clears it.
 */
import type { MiddlewareHandler } from "hono";
import { table } from "../../core/sql";
import { type AccessDb, migrate, noRowsIfMissing } from "../database/db";
import { Problem } from "../http/problem";
import type { ChainSchemas } from "../store/chain-schemas";

/** The alarms every API process holds in memory, and how the watcher raises one. */
export type ChainAlarms = {
  /** Each alarmed chain's detail: what was found and what to do. */
  current(): ReadonlyMap<number, string>;
  /** Raises (or keeps) the alarm for a chain, in every process on the database. */
  raise(chainId: number, detail: string): Promise<void>;
  /** Each chain whose indexed block the chain replaced, until the indexer follows it: what was found. */
  replaced(): ReadonlyMap<number, string>;
  /** Marks (`detail`) or clears (undefined) a chain's replaced head, in every process on the database. */
  markReplaced(chainId: number, detail: string | undefined): Promise<void>;
  close(): void;
};

/** No alarm ever: where nothing is indexed (the waiting room) or nothing is watched. */
export const NO_ALARMS: ChainAlarms = {
  current: () => new Map(),
  raise: async () => {},
  replaced: () => new Map(),
  markReplaced: async () => {},
  close: () => {},
};

/** The tables of the alarms and the replaced heads, in the access schema `schema`. */
const alarmTables = (schema: string) => ({
  alarms: table(schema, "chain_alarm"),
  heads: table(schema, "chain_replaced_head"),
});

/**
 * The alarms of the indexers writing each chain's schema (`schemas`), read again every `refreshMs`
 * (other processes raise them).
 */
export async function openChainAlarms(
  db: AccessDb,
  schema: string,
  schemas: ChainSchemas,
  refreshMs = 500,
): Promise<ChainAlarms> {
  const { alarms, heads } = alarmTables(schema);
  await migrate(db, schema, [
    `CREATE TABLE IF NOT EXISTS ${alarms} (indexer_schema text NOT NULL, chain_id integer NOT NULL,
       detail text NOT NULL, raised_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (indexer_schema, chain_id))`,
    `CREATE TABLE IF NOT EXISTS ${heads} (indexer_schema text NOT NULL, chain_id integer NOT NULL,
       detail text NOT NULL, PRIMARY KEY (indexer_schema, chain_id))`,
  ]);
  let held = new Map<number, string>();
  let replaced = new Map<number, string>();
  /** Replaced heads marked or cleared here, which a read begun before the write must not undo. */
  const markedHere = new Map<number, string | undefined>();
  /**
   * Alarms raised in this process, held whatever a read of the table returns until a read begun
   * after the alarm's insert committed: one begun before does not hold it, and would drop it here
   * until the next read. A read begun after it that does not hold it means it was cleared.
   */
  const raisedHere = new Map<number, { detail: string; committed: boolean }>();
  // A chain's rows under another schema than its own are an earlier indexer's.
  const byChain = (rows: Record<string, unknown>[]) =>
    rows
      .filter((row) => schemas.holds(Number(row.chain_id), row.indexer_schema))
      .map((row): [number, string] => [Number(row.chain_id), String(row.detail)]);
  const refresh = async () => {
    const read = (name: string) =>
      db.query(`SELECT indexer_schema, chain_id, detail FROM ${name} WHERE indexer_schema = ANY($1)`, [schemas.all]);
    const committed = [...raisedHere].filter(([, raised]) => raised.committed).map(([chainId]) => chainId);
    const [raisedRows, replacedRows] = await Promise.all([read(alarms), read(heads)]);
    const raised = new Map(byChain(raisedRows.rows));
    for (const chainId of committed) if (!raised.has(chainId)) raisedHere.delete(chainId);
    held = new Map([...[...raisedHere].map(([chainId, { detail }]): [number, string] => [chainId, detail]), ...raised]);
    const marked = new Map(byChain(replacedRows.rows));
    for (const [chainId, detail] of markedHere) {
      if (detail === undefined) marked.delete(chainId);
      else marked.set(chainId, detail);
    }
    replaced = marked;
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
      const raised = { detail, committed: false };
      raisedHere.set(chainId, raised);
      held = new Map(held).set(chainId, detail);
      await db.query(
        `INSERT INTO ${alarms} (indexer_schema, chain_id, detail) VALUES ($1, $2, $3)
         ON CONFLICT (indexer_schema, chain_id) DO NOTHING`,
        [schemas.of(chainId), chainId, detail],
      );
      raised.committed = true;
    },
    replaced: () => replaced,
    async markReplaced(chainId, detail) {
      if (replaced.get(chainId) === detail) return;
      markedHere.set(chainId, detail);
      replaced = new Map(replaced);
      if (detail === undefined) replaced.delete(chainId);
      else replaced.set(chainId, detail);
      await (detail === undefined
        ? db.query(`DELETE FROM ${heads} WHERE indexer_schema = $1 AND chain_id = $2`, [schemas.of(chainId), chainId])
        : db.query(
            `INSERT INTO ${heads} (indexer_schema, chain_id, detail) VALUES ($1, $2, $3)
             ON CONFLICT (indexer_schema, chain_id) DO UPDATE SET detail = excluded.detail`,
            [schemas.of(chainId), chainId, detail],
          ));
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
    const [replaced] = alarms.replaced().values();
    if (replaced !== undefined) return replacedHead(replaced).response();
    await next();
  };
}

/** The 503 of a chain whose indexed block the chain replaced: ask again in a moment. */
export const replacedHead = (detail: string) =>
  new Problem("chain_syncing", detail, { headers: { "Retry-After": "1" } });

/** A raised alarm: the indexer's schema and chain it is for, and what was found. */
export type RaisedAlarm = { indexerSchema: string; chainId: number; detail: string };

/**
 * The alarms raised for each chain in its own schema (by whichever process watches it), from the
 * access schema `schema`, by chain; none while its tables do not exist yet (no API process has
 * opened them).
 */
export async function raisedAlarms(
  db: AccessDb,
  schema: string,
  schemas: ChainSchemas,
): Promise<Map<number, RaisedAlarm>> {
  const { rows } = await db
    .query(
      `SELECT indexer_schema, chain_id, detail FROM ${alarmTables(schema).alarms} WHERE indexer_schema = ANY($1)`,
      [schemas.all],
    )
    .catch(noRowsIfMissing);
  return new Map(
    rows
      .filter((row) => schemas.holds(Number(row.chain_id), row.indexer_schema))
      .map((row) => [
        Number(row.chain_id),
        { indexerSchema: String(row.indexer_schema), chainId: Number(row.chain_id), detail: String(row.detail) },
      ]),
  );
}

/** Adds `note` to an alarm's detail (once): what is being done about it, for every process to say. */
export async function noteOnAlarm(db: AccessDb, schema: string, alarm: RaisedAlarm, note: string): Promise<void> {
  await db.query(
    `UPDATE ${alarmTables(schema).alarms} SET detail = detail || ' ' || $3
     WHERE indexer_schema = $1 AND chain_id = $2 AND strpos(detail, $3) = 0`,
    [alarm.indexerSchema, alarm.chainId, note],
  );
}

/** Clears a chain's alarm and replaced head in the indexer's schema `indexerSchema`: it was indexed afresh. */
export async function clearAlarm(db: AccessDb, schema: string, indexerSchema: string, chainId: number): Promise<void> {
  const { alarms, heads } = alarmTables(schema);
  for (const name of [alarms, heads])
    await db.query(`DELETE FROM ${name} WHERE indexer_schema = $1 AND chain_id = $2`, [indexerSchema, chainId]);
}
