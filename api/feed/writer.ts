import { sql } from "drizzle-orm";
import { readySql } from "../../ponder/ponder-0.16.10";
import { toJson } from "../http/json";
import { v1EventRecord, v2EventRecord } from "../routes/records";
import type { ChainSchemas } from "../store/chain-schemas";
import type { HistoryStore, Page, V1EventRow, V2EventRow } from "../store/history-store";
import type { ServedChain } from "../store/served-chains";
import { type Execute, INDEXED_BLOCK_SQL, positionsSql, REVERTED_SQL } from "../store/store";
import type { ChangeLog, FeedEvent, FeedVersion } from "./log";

const HOUR_MS = 3_600_000;

/** Events read per statement while catching up (after a restart, the blocks indexed while it was down). */
const PAGE = 1_000;

/**
 * A ready chain's position: the block its state is at, the block Ponder holds final, and what moves
 * with any change of its events or of its final block: the version of its chain_head row, which
 * every event rewrites, and so does a revert of events (api/store/store.ts), with the final block,
 * which Ponder moves in steps (ponder/ponder-0.16.10.ts, ponderFinalizedAt): the floor then rises
 * with it, and a `delivery=finalized` stream sends what it passed. Not Ponder's checkpoint, which
 * moves with every block: a write per block, events or none, doubled the statements an idle
 * indexer runs on PGlite.
 */
type Position = { block: bigint; final: bigint; moved: string; lastEvent: bigint };

/**
 * Each chain's position in `schema`, in one statement, once its indexer is ready (while it
 * backfills, the events it indexes are the history's, not changes), and not while Ponder has
 * reverted rows but not yet indexed the new branch (REVERTED_SQL): it may revert blocks the new
 * branch shares, and a write then would retract their events only to log them again.
 */
async function positions(execute: Execute, schema: string): Promise<Map<number, Position>> {
  const { rows } = await execute(
    sql`SELECT c.chain_id, ${sql.raw(INDEXED_BLOCK_SQL)}::text AS block, c.finalized_block::text AS final,
        coalesce(h.xmin::text, '') || ':' || c.finalized_block::text AS moved,
        coalesce(h.last_event_block, 0)::text AS last_event
      FROM ${sql.raw(positionsSql(schema))}
      WHERE ${sql.raw(readySql(schema))} = 1 AND NOT coalesce(${sql.raw(REVERTED_SQL)}, false)`,
  );
  return new Map(
    rows.map((r) => [
      Number(r.chain_id),
      {
        block: BigInt(r.block as string),
        final: BigInt(r.final as string),
        moved: r.moved as string,
        lastEvent: BigInt(r.last_event as string),
      },
    ]),
  );
}

type Read = (
  chainId: number,
  from: bigint,
  to: bigint,
  after?: { block: bigint; logIndex: number },
) => Promise<Page<V2EventRow | V1EventRow>>;

/** Every event of the registry in blocks `from`…`to`, in chain order, as the log takes them. */
async function eventsIn(read: Read, record: (e: never) => unknown, chainId: number, from: bigint, to: bigint) {
  const events: FeedEvent[] = [];
  let after: { block: bigint; logIndex: number } | undefined;
  for (;;) {
    const page = await read(chainId, from, to, after);
    for (const e of page.items)
      events.push({
        block: e.blockNumber,
        blockHash: e.blockHash,
        logIndex: e.logIndex,
        record: toJson(record(e as never)),
      });
    if (!page.more || page.items.length === 0) return events;
    after = page.items[page.items.length - 1]!.position;
  }
}

/**
 * Writes the change log from the indexer's tables (api/feed/log.ts), in the indexer's process only:
 * every `everyMs`, each ready chain whose state moved since its last write has the events above its
 * floor read and reconciled. The position is read before the events: the floor then rises only to
 * a block final before they were read, so no event below it can be missed.
 */
export function writeChangeLog(options: {
  log: ChangeLog;
  schemas: ChainSchemas;
  chains: readonly ServedChain[];
  execute: Execute;
  history: HistoryStore;
  everyMs: number;
  /** How long entries are kept: older ones are pruned once an hour. */
  retainMs: number;
  onError?: (error: Error) => void;
}): { tick(): Promise<void>; stop(): void } {
  const { log, schemas, chains, execute, history } = options;
  /** Each chain and registry's position at its last write. */
  const written = new Map<string, string>();
  const reads: Record<FeedVersion, { read: Read; record: (e: never) => unknown }> = {
    v2: {
      read: (chainId, from, to, after) => history.v2Events(chainId, undefined, { from, to }, { after, limit: PAGE }),
      record: v2EventRecord,
    },
    v1: {
      read: (chainId, from, to, after) => history.v1Events(chainId, undefined, { from, to }, { after, limit: PAGE }),
      record: v1EventRecord,
    },
  };

  async function writeChain(chain: ServedChain, version: FeedVersion, at: Position) {
    const key = `${chain.id}:${version}`;
    if (written.get(key) === at.moved) return;
    const floor = await log.floor(chain.id, version);
    // The first write starts above the final block: below it is the history's.
    const from = (floor ?? at.final) + 1n;
    const { read, record } = reads[version];
    const events = from > at.block ? [] : await eventsIn(read, record, chain.id, from, at.block);
    const final = at.final < at.block ? at.final : at.block;
    // Written through the last event the chain_head row names: Ponder may write that row before it
    // moves the checkpoint past its block, and the events read stop at the checkpoint's block.
    if ((await log.write(chain.id, version, floor, events, final, at.block)) && at.block >= at.lastEvent)
      written.set(key, at.moved);
  }

  async function writeAll() {
    for (const schema of schemas.all) {
      const found = await positions(execute, schema);
      for (const chain of chains) {
        const at = found.get(chain.id);
        if (!at || schemas.of(chain.id) !== schema) continue;
        for (const version of ["v2", "v1"] as const) if (chain[version]) await writeChain(chain, version, at);
      }
    }
  }
  // One write at a time: a tick while one runs joins it (the next tick reads what changed meanwhile).
  let running: Promise<void> | undefined;
  const tick = (): Promise<void> => {
    running ??= writeAll().finally(() => {
      running = undefined;
    });
    return running;
  };
  const failed = (error: Error) => options.onError?.(error);
  const timer = setInterval(() => tick().catch(failed), options.everyMs);
  const pruning = setInterval(() => log.prune(new Date(Date.now() - options.retainMs)).catch(failed), HOUR_MS);
  timer.unref();
  pruning.unref();
  return {
    tick,
    stop: () => {
      clearInterval(timer);
      clearInterval(pruning);
    },
  };
}
