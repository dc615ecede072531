/**
 * Reorganizations deeper than the indexer's finality depth. Ponder reverts what a reorganization
 * replaces only down to the block it holds as finalized; below that it keeps what it indexed, so
 * after a deeper one the tables mix two branches and every answer could be wrong. Such a chain is
 * never served silently: the watcher compares the hashes of blocks the indexer indexed at or below
 * its finalized block (the newest blocks with registry events, and blocks it noted as they were
 * finalized) with the chain's, and on a difference raises an alarm for the chain. Every answer for
 * it is then a `503 chain_reorganized` until it is re-indexed (docs/operations.md).
 */
import { type SQL, sql } from "drizzle-orm";
import { createPublicClient, fallback, type Hex, http } from "viem";
import { checkpointsSql } from "../../ponder/ponder-0.16.10";
import { type Execute, tableSql } from "../store/store";
import type { ChainAlarms } from "./chain-alarms";

/** A block as the indexer indexed it. */
export type IndexedBlock = { number: bigint; hash: Hex };

/** What was found: the indexed block the chain now has under another hash. */
export type Replaced = IndexedBlock & { chainHash: Hex };

/**
 * The first of `indexed` at or below `final` whose hash the chain now gives differently, or
 * undefined. A block the chain does not give (null: not there, or the RPC lags) proves nothing.
 */
export function replacedBlock(
  indexed: readonly IndexedBlock[],
  chainHashes: ReadonlyMap<bigint, Hex | null>,
  final: bigint,
): Replaced | undefined {
  for (const block of [...indexed].sort((a, b) => (a.number < b.number ? -1 : 1))) {
    if (block.number > final) continue;
    const chainHash = chainHashes.get(block.number);
    if (chainHash != null && chainHash.toLowerCase() !== block.hash.toLowerCase()) return { ...block, chainHash };
  }
  return undefined;
}

/** How a chain is re-indexed: by the operator, on a new schema; or by the launcher, where chains are indexed apart. */
export const REINDEX_REMEDY = {
  operator: "start the indexer on a new DATABASE_SCHEMA (docs/operations.md)",
  launcher: "the launcher re-indexes it alone, from its registries' start blocks (docs/deployment.md)",
} as const;

/** The alarm for a chain whose indexed history mixes two branches: what was found, and what to do. */
export function deepReorgDetail(
  chainId: number,
  replaced: Replaced,
  final: bigint,
  remedy: string = REINDEX_REMEDY.operator,
): string {
  return (
    `chain ${chainId}: block ${replaced.number} was indexed as ${replaced.hash}, but the chain now has ` +
    `${replaced.chainHash} there: a reorganization deeper than the indexer's finality depth (it held block ` +
    `${final} as final) replaced blocks it had indexed, so the indexed state mixes two branches. Answers for ` +
    `this chain are refused until it is re-indexed: ${remedy}.`
  );
}

/** How many of the newest final blocks with registry events are compared each round, and of the final blocks noted. */
const NEWEST = 8;

/**
 * A chain to watch: its id, its RPC URLs and the WebSocket URL its new heads are heard on, if any
 * (PONDER_WS_URL_<id>).
 */
export type WatchedChain = { id: number; rpc: string[]; ws?: string };

/** How often the indexer's final block is read, to note the chain's hash for it as soon as it moves. */
const NOTE_FINAL_MS = 500;

/**
 * Every `everyMs`, for each chain, compares with the chain's hashes: the newest final blocks with
 * registry events (each new one once, then the newest again each round) and the indexer's final
 * blocks, noted within `NOTE_FINAL_MS` of each move (they catch a reorganization that replaced only
 * blocks without registry events, whose new branch may hold some the indexer never saw; noted a
 * round later, a final block the chain replaced in between would be noted under its new hash). A
 * difference raises the chain's alarm and logs what happened and how to recover. Stops with `stop()`.
 */
export function watchDeepReorgs(options: {
  chains: readonly WatchedChain[];
  execute: Execute;
  schema: string;
  alarms: ChainAlarms;
  everyMs: number;
  /** What the alarm says to do (REINDEX_REMEDY). */
  remedy?: string;
  log?: (message: string) => void;
}): { stop(): void } {
  const log = options.log ?? ((message: string) => console.error(message));
  const table = (name: string) => tableSql(options.schema, name);
  const rows = async (query: SQL) => (await options.execute(query)).rows;
  const watched = options.chains.map((chain) => ({
    id: chain.id,
    client: createPublicClient({ transport: fallback(chain.rpc.map((url) => http(url))) }),
    /** Final blocks with events compared once already, by "number:hash". */
    verified: new Set<string>(),
    /** The indexer's final blocks as the chain gave them when each became final, newest last. */
    finals: [] as IndexedBlock[],
  }));

  type Watched = (typeof watched)[number];
  /** The indexer's final block on `chain`, or undefined before it has one. */
  async function finalOf(chain: Watched): Promise<bigint | undefined> {
    const [position] = await rows(
      sql`SELECT c.finalized_block::text AS final FROM ${sql.raw(checkpointsSql(options.schema))} c
        WHERE c.chain_id = ${chain.id}`,
    );
    return position === undefined ? undefined : BigInt(position.final as string);
  }

  /** Notes the chain's hash for the indexer's final block `final`, once per block. */
  function noteFinal(chain: Watched, final: bigint, hash: Hex | null | undefined) {
    if (!hash || chain.finals.some((b) => b.number === final)) return;
    chain.finals.push({ number: final, hash });
    chain.finals.splice(0, chain.finals.length - NEWEST);
  }

  /**
   * Whether the chain is alarmed; then what was noted of it is forgotten: it is re-indexed from
   * the new branch before the alarm is cleared, and the old branch's hashes would raise it again.
   */
  function alarmed(chain: Watched): boolean {
    if (!options.alarms.current().has(chain.id)) return false;
    chain.verified.clear();
    chain.finals.length = 0;
    return true;
  }

  async function check(chain: Watched) {
    if (alarmed(chain)) return;
    const final = await finalOf(chain);
    if (final === undefined) return;
    const events = (
      await rows(sql`
        SELECT block_number::text AS number, block_hash AS hash FROM (
          (SELECT block_number, block_hash FROM ${table("v2_event")}
           WHERE chain_id = ${chain.id} AND block_number <= ${final.toString()}::bigint
           ORDER BY block_number DESC LIMIT ${NEWEST})
          UNION
          (SELECT block_number, block_hash FROM ${table("v1_event")}
           WHERE chain_id = ${chain.id} AND block_number <= ${final.toString()}::bigint
           ORDER BY block_number DESC LIMIT ${NEWEST})) b
        ORDER BY block_number DESC LIMIT ${NEWEST}`)
    ).map((row) => ({ number: BigInt(row.number as string), hash: row.hash as Hex }));
    const key = (b: IndexedBlock) => `${b.number}:${b.hash}`;
    const compared = [...events.filter((b, i) => i === 0 || !chain.verified.has(key(b))), ...chain.finals];
    const numbers = [...new Set([...compared.map((b) => b.number), final])];
    const hashes = new Map<bigint, Hex | null>(
      await Promise.all(
        numbers.map(async (number): Promise<[bigint, Hex | null]> => {
          const block = await chain.client.getBlock({ blockNumber: number }).catch(() => null);
          return [number, block?.hash ?? null];
        }),
      ),
    );
    const replaced = replacedBlock(compared, hashes, final);
    if (replaced !== undefined) {
      const detail = deepReorgDetail(chain.id, replaced, final, options.remedy);
      log(`DEEP REORGANIZATION: ${detail}`);
      await options.alarms.raise(chain.id, detail);
      return;
    }
    for (const b of events) chain.verified.add(key(b));
    noteFinal(chain, final, hashes.get(final));
  }

  async function note(chain: Watched) {
    if (alarmed(chain)) return;
    const final = await finalOf(chain);
    if (final === undefined || chain.finals.at(-1)?.number === final) return;
    noteFinal(chain, final, (await chain.client.getBlock({ blockNumber: final })).hash);
  }

  let stopped = false;
  const timers: { check?: NodeJS.Timeout; note?: NodeJS.Timeout } = {};
  /** Runs `what` for every chain, then again `everyMs` after it finished, until stopped. */
  const repeat = (name: keyof typeof timers, what: (chain: Watched) => Promise<void>, everyMs: number) => {
    const round = async () => {
      // One chain's RPC or the database failing is not evidence of anything: the next round asks again.
      await Promise.all(watched.map((chain) => what(chain).catch(() => {})));
      if (!stopped) timers[name] = setTimeout(round, everyMs);
    };
    timers[name] = setTimeout(round, everyMs);
  };
  repeat("check", check, options.everyMs);
  repeat("note", note, Math.min(NOTE_FINAL_MS, options.everyMs));
  return {
    stop() {
      stopped = true;
      clearTimeout(timers.check);
      clearTimeout(timers.note);
    },
  };
}
