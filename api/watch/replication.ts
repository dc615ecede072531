import type { AccessDb } from "../database/db";
import type { Store } from "../store/store";
import { type Replication, replicationBehind, type StatusPosition } from "./chain-status";

/** How often a replica asks the database it reads how far it trails its primary. */
export const REPLICATION_EVERY_MS = 1_000;

/**
 * SQL, for any role: whether the database is a hot standby, and by how many seconds its replay
 * trails its primary: none while it streams from the primary and has replayed all it received;
 * else the age of the last transaction it replayed (null: none since it started).
 */
export const REPLICATION_SQL = `SELECT pg_is_in_recovery() AS standby,
  CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() AND EXISTS (SELECT FROM pg_stat_wal_receiver)
    THEN 0 ELSE extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp()) END::float8 AS lag`;

/** How far a standby trails, in the words of /ready and the log. */
export const trailing = ({ lagSeconds, behindAfterSeconds }: Replication) =>
  lagSeconds === undefined
    ? "the standby it reads cannot tell how far it trails its primary (it receives no stream from it)"
    : `the standby it reads trails its primary by ${Math.round(lagSeconds)} s (more than ${behindAfterSeconds} s)`;

/** A watch on how far the database read trails its primary (watchReplication). */
export type ReplicationWatch = { current(): Replication | undefined; stop(): void };

/**
 * How far the database `db` trails its primary, read every `everyMs` while it is a hot standby;
 * undefined on a primary. The lag held is the lower of the last two readings: a write arriving
 * after a quiet spell makes one reading the spell's length, for the moment its replay takes. A
 * standby that does not answer cannot tell. Going behind, and back, is logged.
 */
export function watchReplication(
  db: Pick<AccessDb, "query">,
  behindAfterSeconds: number,
  { everyMs = REPLICATION_EVERY_MS, log = console.error }: { everyMs?: number; log?: (line: string) => void } = {},
): ReplicationWatch {
  let standby = false;
  let readings: (number | undefined)[] = [];
  let held: Replication | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const read = async () => {
    const reading = await db.query(REPLICATION_SQL).then(
      ({ rows }) => {
        standby = rows[0]?.standby === true;
        // Never below 0: the primary's clock, which stamped the transaction, may run ahead of this one.
        return rows[0]?.lag === null ? undefined : Math.max(0, Number(rows[0]?.lag));
      },
      () => undefined,
    );
    readings = [readings.at(-1), reading];
    const known = readings.filter((lag) => lag !== undefined);
    const next = standby
      ? { lagSeconds: known.length ? Math.min(...known) : undefined, behindAfterSeconds }
      : undefined;
    if (replicationBehind(next) !== replicationBehind(held))
      log(replicationBehind(next) ? `replica: ${trailing(next!)}` : "replica: the standby has caught up");
    held = next;
    // After the reading, not on a clock: a database slow to answer is not asked again meanwhile.
    if (!stopped) timer = setTimeout(read, everyMs);
  };
  void read();
  return {
    current: () => held,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * `store`, whose every chain's position also holds how far the standby read trails its primary
 * while `replication` knows it (chain-status.ts tells a chain behind from it).
 */
export function withReplication<S extends Store>(store: S, replication: ReplicationWatch): S {
  return {
    ...store,
    chainStates: async (): Promise<Map<number, StatusPosition>> => {
      const held = replication.current();
      const states = [...(await store.chainStates())];
      return new Map(held === undefined ? states : states.map(([id, state]) => [id, { ...state, replication: held }]));
    },
  };
}
