/**
 * Where chains are indexed apart (scripts/launcher/apart.ts), a chain whose alarm is raised — a
 * reorganization deeper than its indexer's finality depth left its tables mixing two branches
 * (api/watch/deep-reorg.ts) — is indexed afresh, alone (with the chains of its group, if any): its
 * Ponder is stopped, its schema and views schema dropped with Ponder's sync cache of the chain
 * (which holds the old branch's blocks and logs), and its Ponder started again from the registries'
 * start blocks. The alarm stays raised
 * meanwhile (every answer for that chain `503 chain_reorganized`, saying it is being re-indexed;
 * the other chains untouched) and is cleared once the new Ponder is ready.
 */
import type { AccessDb } from "../../api/database/db";
import type { ChainSchemas } from "../../api/store/chain-schemas";
import { clearAlarm, noteOnAlarm, type RaisedAlarm, raisedAlarms } from "../../api/watch/chain-alarms";
import { quoteIdentifier } from "../../core/sql";
import { dropSyncedChain, SYNC_CACHE_PRESENT_SQL } from "../../ponder/ponder-0.16.10";

/** How often the launcher reads the chains' alarms: a re-index starts within this long of one. */
export const ALARM_POLL_MS = 2_000;

/**
 * Reads the alarms of each chain's own schema every ALARM_POLL_MS and hands them to `seen`, by
 * chain, with when the read began; a read that fails is tried again at the next. Stops with `stop()`.
 */
export function pollAlarms(
  db: AccessDb,
  accessSchema: string,
  schemas: ChainSchemas,
  seen: (alarms: ReadonlyMap<number, RaisedAlarm>, readAt: number) => void,
): { stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const round = async () => {
    const readAt = Date.now();
    const alarms = await raisedAlarms(db, accessSchema, schemas).catch(() => undefined);
    if (alarms && !stopped) seen(alarms, readAt);
    if (!stopped) timer = setTimeout(round, ALARM_POLL_MS);
  };
  timer = setTimeout(round, 0);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * Drops what an indexer wrote, for its Ponder to index its chains afresh: its schema (the alarms
 * are kept: they name the schema, not its tables), its views schema, and the alarmed chains' rows of
 * Ponder's sync cache (the old branch's blocks and logs); and says on each alarm, since when, that
 * it is being re-indexed.
 */
export async function dropIndex(
  db: AccessDb,
  o: { accessSchema: string; alarms: readonly RaisedAlarm[]; indexerSchema: string; viewsSchema: string },
): Promise<void> {
  for (const alarm of o.alarms)
    await noteOnAlarm(db, o.accessSchema, alarm, `Re-indexing it since ${new Date().toISOString()}.`);
  await db.transaction(async (query) => {
    await query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(o.viewsSchema)} CASCADE`);
    await query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(o.indexerSchema)} CASCADE`);
    if ((await query(SYNC_CACHE_PRESENT_SQL)).rows[0]?.present)
      for (const alarm of o.alarms) await dropSyncedChain(query, alarm.chainId);
  });
}

/** The chains one Ponder process indexes (core/settings.ts, chainGroups), told by the lowest. */
export type IndexerGroup = { key: number; chainIds: readonly number[]; name: string };

/**
 * The re-indexing of the indexers of one deployment, each a chain alone or a group of chains: reads
 * the chains' alarms (pollAlarms), stops the Ponder of a group with a chain alarmed anew, drops its
 * tables before its Ponder runs again, and clears its chains' alarms once that Ponder is ready. A
 * group is re-indexed whole: its chains share a schema.
 */
export class Reindexer {
  /** Each chain's alarm, as last read (less those cleared here since the read began). */
  private alarms = new Map<number, RaisedAlarm>();
  /** The groups whose tables were dropped, until their Ponder is ready. */
  private readonly reindexing = new Set<number>();
  /** When each chain's alarm was last cleared here: a read begun before still holds it. */
  private readonly cleared = new Map<number, number>();
  /** Each group's running Ponder's stop. */
  private readonly running = new Map<number, AbortController>();
  /** Each chain's group. */
  private readonly groupOf = new Map<number, number>();
  private readonly polling: { stop(): void };

  constructor(
    private readonly db: AccessDb,
    private readonly o: {
      accessSchema: string;
      /** Each chain's schema: its group's. */
      schemas: ChainSchemas;
      groups: readonly IndexerGroup[];
      viewsSchemaOf: (group: IndexerGroup) => string;
      /** Grants the replicas' reader the chains' schemas again (made afresh by a re-index). */
      grantReaders: () => Promise<void>;
    },
  ) {
    for (const group of o.groups) for (const id of group.chainIds) this.groupOf.set(id, group.key);
    this.polling = pollAlarms(db, o.accessSchema, o.schemas, (seen, readAt) => {
      this.alarms = new Map([...seen].filter(([id]) => (this.cleared.get(id) ?? 0) < readAt));
      for (const id of this.alarms.keys()) {
        const key = this.groupOf.get(id);
        if (key !== undefined && !this.reindexing.has(key)) this.running.get(key)?.abort();
      }
    });
  }

  private alarmsOf(group: IndexerGroup): RaisedAlarm[] {
    return group.chainIds.flatMap((id) => this.alarms.get(id) ?? []);
  }

  /** Before the group's Ponder runs: drops what it indexed if an alarm is raised anew; why that failed, if so. */
  async prepare(group: IndexerGroup): Promise<string | undefined> {
    const alarms = this.alarmsOf(group);
    if (alarms.length === 0 || this.reindexing.has(group.key)) return undefined;
    for (const alarm of alarms) console.error(`${group.name}: ${alarm.detail} Indexing it afresh, alone.`);
    const dropped = await dropIndex(this.db, {
      accessSchema: this.o.accessSchema,
      alarms,
      indexerSchema: this.o.schemas.of(group.key),
      viewsSchema: this.o.viewsSchemaOf(group),
    })
      .then(this.o.grantReaders)
      .catch((error: Error) => error);
    if (dropped instanceof Error) return `cannot drop its tables to index it afresh (${dropped.message})`;
    this.reindexing.add(group.key);
    return undefined;
  }

  /**
   * The stop of the group's Ponder, about to run on `port`: aborted when an alarm of its chains is
   * raised anew. A group indexed afresh has its alarms cleared once that Ponder is ready (then `cleared`).
   */
  starting(group: IndexerGroup, port: number, cleared?: () => void): AbortSignal {
    const stop = new AbortController();
    this.running.set(group.key, stop);
    if (this.reindexing.has(group.key))
      untilReady(port, stop.signal)
        .then(async (ready) => {
          if (!ready) return;
          for (const raised of this.alarmsOf(group)) {
            await clearAlarm(this.db, this.o.accessSchema, raised.indexerSchema, raised.chainId);
            this.cleared.set(raised.chainId, Date.now());
            this.alarms.delete(raised.chainId);
          }
          this.reindexing.delete(group.key);
          console.log(`${group.name}: indexed afresh; its alarm is cleared.`);
          cleared?.();
        })
        // Its alarms stay raised: cleared once its Ponder, run again, is ready.
        .catch((error: Error) => console.error(`${group.name}: cannot clear its alarm (${error.message}).`));
    return stop.signal;
  }

  /** Whether the group is being indexed afresh (its tables dropped, its alarms not yet cleared). */
  afresh(group: IndexerGroup): boolean {
    return this.reindexing.has(group.key);
  }

  /** Its Ponder exited: whether to index it afresh (at once: it was stopped for that). */
  exited(group: IndexerGroup): boolean {
    this.running.get(group.key)?.abort();
    this.running.delete(group.key);
    return this.alarmsOf(group).length > 0 && !this.reindexing.has(group.key);
  }

  stop(): void {
    this.polling.stop();
  }
}

/** Resolves true once the Ponder on `port` says it is ready (every second), false if `stop` aborts first. */
async function untilReady(port: number, stop: AbortSignal): Promise<boolean> {
  while (!stop.aborted) {
    const ok = await fetch(`http://127.0.0.1:${port}/ready`, { signal: AbortSignal.timeout(5_000) }).then(
      (res) => res.status === 200,
      () => false,
    );
    if (ok) return true;
    await new Promise((wait) => setTimeout(wait, 1_000));
  }
  return false;
}
