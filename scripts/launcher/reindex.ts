/**
 * Where chains are indexed apart (scripts/launcher/apart.ts), a chain whose alarm is raised — a
 * reorganization deeper than its indexer's finality depth left its tables mixing two branches
 * (api/watch/deep-reorg.ts) — is indexed afresh, alone: its Ponder is stopped, its schema and views
 * schema dropped with Ponder's sync cache of the chain (which holds the old branch's blocks and
 * logs), and its Ponder started again from the registries' start blocks. The alarm stays raised
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
 * Drops what the chain's indexer wrote, for its Ponder to index it afresh: its schema (the alarm is
 * kept: it names the schema, not its tables), its views schema, and its rows of Ponder's sync cache;
 * and says on the alarm, since when, that it is being re-indexed.
 */
export async function dropChainIndex(
  db: AccessDb,
  o: { accessSchema: string; alarm: RaisedAlarm; viewsSchema: string },
): Promise<void> {
  await noteOnAlarm(db, o.accessSchema, o.alarm, `Re-indexing it since ${new Date().toISOString()}.`);
  await db.transaction(async (query) => {
    await query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(o.viewsSchema)} CASCADE`);
    await query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(o.alarm.indexerSchema)} CASCADE`);
    if ((await query(SYNC_CACHE_PRESENT_SQL)).rows[0]?.present) await dropSyncedChain(query, o.alarm.chainId);
  });
}

/**
 * The re-indexing of the chains of one deployment: reads their alarms (pollAlarms), stops the
 * Ponder of a chain alarmed anew, drops its tables before its Ponder runs again, and clears its
 * alarm once that Ponder is ready.
 */
export class Reindexer {
  /** Each chain's alarm, as last read (less those cleared here since the read began). */
  private alarms = new Map<number, RaisedAlarm>();
  /** The chains whose tables were dropped, until their Ponder is ready. */
  private readonly reindexing = new Set<number>();
  /** When each chain's alarm was last cleared here: a read begun before still holds it. */
  private readonly cleared = new Map<number, number>();
  /** Each running Ponder's stop. */
  private readonly running = new Map<number, AbortController>();
  private readonly polling: { stop(): void };

  constructor(
    private readonly db: AccessDb,
    private readonly o: {
      accessSchema: string;
      /** Each chain's schema, and its views schema. */
      schemas: ChainSchemas;
      viewsSchemaOf: (chainId: number) => string;
      /** Grants the replicas' reader the chains' schemas again (made afresh by a re-index). */
      grantReaders: () => Promise<void>;
    },
  ) {
    this.polling = pollAlarms(db, o.accessSchema, o.schemas, (seen, readAt) => {
      this.alarms = new Map([...seen].filter(([id]) => (this.cleared.get(id) ?? 0) < readAt));
      for (const id of this.alarms.keys()) if (!this.reindexing.has(id)) this.running.get(id)?.abort();
    });
  }

  /** Before the chain's Ponder runs: drops what it indexed if its alarm is raised anew; why that failed, if so. */
  async prepare(chainId: number, name: string): Promise<string | undefined> {
    const alarm = this.alarms.get(chainId);
    if (alarm === undefined || this.reindexing.has(chainId)) return undefined;
    console.error(`${name}: ${alarm.detail} Indexing it afresh, alone.`);
    const dropped = await dropChainIndex(this.db, {
      accessSchema: this.o.accessSchema,
      alarm,
      viewsSchema: this.o.viewsSchemaOf(chainId),
    })
      .then(this.o.grantReaders)
      .catch((error: Error) => error);
    if (dropped instanceof Error) return `cannot drop its tables to index it afresh (${dropped.message})`;
    this.reindexing.add(chainId);
    return undefined;
  }

  /**
   * The stop of the chain's Ponder, about to run on `port`: aborted when the chain's alarm is raised
   * anew. A chain indexed afresh has its alarm cleared once that Ponder is ready (then `cleared`).
   */
  starting(chainId: number, port: number, name: string, cleared?: () => void): AbortSignal {
    const stop = new AbortController();
    this.running.set(chainId, stop);
    if (this.reindexing.has(chainId))
      untilReady(port, stop.signal)
        .then(async (ready) => {
          if (!ready) return;
          const raised = this.alarms.get(chainId);
          if (raised !== undefined) await clearAlarm(this.db, this.o.accessSchema, raised.indexerSchema, chainId);
          this.cleared.set(chainId, Date.now());
          this.alarms.delete(chainId);
          this.reindexing.delete(chainId);
          console.log(`${name}: indexed afresh; its alarm is cleared.`);
          cleared?.();
        })
        // Its alarm stays raised: cleared once its Ponder, run again, is ready.
        .catch((error: Error) => console.error(`${name}: cannot clear its alarm (${error.message}).`));
    return stop.signal;
  }

  /** Whether the chain is being indexed afresh (its tables dropped, its alarm not yet cleared). */
  afresh(chainId: number): boolean {
    return this.reindexing.has(chainId);
  }

  /** Its Ponder exited: whether to index it afresh (at once: it was stopped for that). */
  exited(chainId: number): boolean {
    this.running.get(chainId)?.abort();
    this.running.delete(chainId);
    return this.alarms.has(chainId) && !this.reindexing.has(chainId);
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
