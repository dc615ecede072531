/**
 * `timestamp`: a chain's block at a moment (docs/architecture.md, "Answers at a moment"). The
 * samples around the moment come from the blocks with registry events (the in-memory copy's, else
 * the history's time index), the indexed head, the headers this process read before, and the
 * blocks the indexer followed live; between them core/moment.ts tells the block, reading headers
 * from the chain's RPC where it must. The final samples that bracket a moment are kept, so the
 * same moment asked again is told from memory, with no statement. The block found is then answered
 * as `blockNumber` would be.
 */
import { createPublicClient, fallback, http } from "viem";
import { blockAt, blockBetween, type Moment, type Sample } from "../../core/moment";
import { ponderFinalityDepth } from "../../ponder/ponder-0.16.10";
import type { Budget } from "../access/middleware";
import { Problem } from "../http/problem";
import type { HistoryStore } from "../store/history-store";
import type { ChainPosition, Store } from "../store/store";
import type { WatchedChain } from "../watch/deep-reorg";

/** Reads the timestamps of blocks of a chain (its RPC's headers), in the order asked. */
export type ReadHeaders = (blocks: bigint[]) => Promise<Sample[]>;

/**
 * What finding a moment's block reads: the samples the store holds in memory, else the history's;
 * the request's budget pays header reads.
 */
type MomentVars = {
  store?: Pick<Store, "eventSamples">;
  history: HistoryStore | undefined;
  budget?: Pick<Budget, "spend">;
};

/** Headers kept per chain, at most: past it the oldest half is dropped (a dropped one is read again). */
const KEPT = 100_000;

/**
 * This process's headers read while finding moments' blocks, kept where they cannot change (final
 * blocks, `finalDepth` below the newest indexed), so that a moment found once costs no header again.
 */
export class MomentClock {
  private readonly kept = new Map<number, Sample[]>();

  constructor(
    /** Per chain; a chain this process is given no RPC for refuses a moment its samples do not tell. */
    private readonly readHeaders: ReadonlyMap<number, ReadHeaders>,
    /** Blocks after which a block is final, per chain. */
    private readonly finalDepth: (chainId: number) => bigint,
    /** The least seconds between a chain's consecutive blocks, by its rules (0: timestamps may repeat). */
    private readonly step: (chainId: number) => bigint = () => 0n,
  ) {}

  /** The kept headers nearest `timestamp`, on each side. */
  nearest(chainId: number, timestamp: bigint): { before?: Sample; after?: Sample } {
    const list = this.kept.get(chainId) ?? [];
    // The first kept past the moment: timestamps never decrease with the block.
    let [low, high] = [0, list.length];
    while (low < high) {
      const mid = (low + high) >> 1;
      if (list[mid]!.timestamp <= timestamp) low = mid + 1;
      else high = mid;
    }
    return { before: list[low - 1], after: list[low] };
  }

  /** Keeps the final ones of `samples` (read at `head`), each in its place by block: no sort per request. */
  keep(chainId: number, samples: readonly Sample[], head: bigint): void {
    let list = this.kept.get(chainId) ?? [];
    for (const sample of samples) {
      if (sample.block > head - this.finalDepth(chainId)) continue;
      let [low, high] = [0, list.length];
      while (low < high) {
        const mid = (low + high) >> 1;
        if (list[mid]!.block < sample.block) low = mid + 1;
        else high = mid;
      }
      if (list[low]?.block !== sample.block) list.splice(low, 0, sample);
    }
    if (list.length > KEPT) list = list.slice(list.length - KEPT / 2);
    this.kept.set(chainId, list);
  }

  /** The nearest samples on each side of `timestamp`: `events`, the kept headers and the head. */
  private bracket(chainId: number, timestamp: bigint, head: Sample, events: { before?: Sample; after?: Sample }) {
    const kept = this.nearest(chainId, timestamp);
    return {
      before: [events.before, kept.before].reduce(later, undefined),
      after: [events.after, kept.after, head].reduce(earlier, undefined)!,
    };
  }

  /**
   * What memory tells of a moment before the head: the samples the store holds in memory (undefined
   * where it holds none), the bracket with the kept headers, and the block where that bracket tells it.
   */
  private inMemory(store: MomentVars["store"], chainId: number, timestamp: bigint, head: Sample) {
    const events = store?.eventSamples?.(chainId, timestamp, head.block);
    const bracket = this.bracket(chainId, timestamp, head, events ?? {});
    const told = bracket.before && blockBetween(timestamp, bracket.before, bracket.after, this.step(chainId));
    return { events, bracket, told };
  }

  /** The chain's block at `moment` where memory tells it, with no statement nor header (else undefined). */
  toldFromMemory(
    store: MomentVars["store"],
    chainId: number,
    position: ChainPosition,
    { timestamp }: Moment,
  ): bigint | undefined {
    const head = headOf(position);
    return timestamp < head.timestamp ? this.inMemory(store, chainId, timestamp, head).told : undefined;
  }

  /** The chain's block at `moment`: see the module's head. */
  async blockAt(vars: MomentVars, chainId: number, position: ChainPosition, moment: Moment) {
    const { timestamp } = moment;
    const head = headOf(position);
    // The next block may share the head's timestamp: only a moment before it is told.
    if (timestamp >= head.timestamp)
      throw new Problem(
        "block_not_indexed",
        `chain ${chainId}'s newest indexed block ${head.block} is stamped ${head.timestamp}: the block at ` +
          `timestamp ${timestamp} is not indexed yet`,
        { param: "timestamp", indexedBlock: Number(head.block) },
      );
    const memory = this.inMemory(vars.store, chainId, timestamp, head);
    if (memory.told !== undefined) return memory.told;
    // Samples the store does not hold in memory are the history's: one statement.
    let { before, after } =
      memory.events !== undefined || vars.history === undefined
        ? memory.bracket
        : this.bracket(chainId, timestamp, head, await vars.history.eventSamples(chainId, timestamp));
    // Among the blocks the indexer followed live, every block is a sample: one statement, no header.
    const told = before && blockBetween(timestamp, before, after, this.step(chainId));
    if (vars.history !== undefined && told === undefined) {
      const live = await vars.history.liveSamples(chainId, timestamp, head.block);
      [before, after] = [later(before, live.before), earlier(after, live.after)!];
    }
    const readHeaders = this.readHeaders.get(chainId);
    const read = async (blocks: bigint[]) => {
      if (readHeaders === undefined)
        throw new Problem(
          "block_not_indexed",
          `the block of chain ${chainId} at timestamp ${timestamp} is not known here yet: finding it reads block ` +
            `headers from the chain's RPC, which this process is not given (PONDER_RPC_URL_${chainId})`,
          { param: "timestamp", indexedBlock: Number(head.block) },
        );
      // Each round of headers costs RPC calls: a keyless client pays it a unit, before it is read.
      await vars.budget?.spend(1, "a round of block headers read to find a moment's block");
      return readHeaders(blocks);
    };
    if (before === undefined) {
      // Older than every sample: the chain's first block bounds it.
      const [genesis] = await read([0n]);
      this.keep(chainId, [genesis!], head.block);
      if (timestamp < genesis!.timestamp)
        throw new Problem("invalid_parameter", `timestamp ${timestamp} is before chain ${chainId}'s first block`, {
          param: "timestamp",
        });
      before = genesis!;
    }
    const found = await blockAt(timestamp, before, after, this.step(chainId), read);
    // The bracket found is among these: kept (where final), the same moment is told from memory.
    this.keep(chainId, [before, after, ...found.read], head.block);
    return found.block;
  }
}

const headOf = (position: ChainPosition): Sample => ({
  block: position.indexedBlock,
  timestamp: BigInt(position.indexedTimestamp),
});
const later = (a: Sample | undefined, b: Sample | undefined) =>
  a === undefined || (b !== undefined && b.block > a.block) ? b : a;
const earlier = (a: Sample | undefined, b: Sample | undefined) =>
  a === undefined || (b !== undefined && b.block < a.block) ? b : a;

/** Reads headers over the chains' RPCs, each round's blocks in one JSON-RPC batch. */
export function rpcHeaders(chains: readonly WatchedChain[]): Map<number, ReadHeaders> {
  return new Map(chains.filter((chain) => chain.rpc.length > 0).map((chain) => [chain.id, rpcChainHeaders(chain)]));
}

function rpcChainHeaders({ id: chainId, rpc }: WatchedChain): ReadHeaders {
  const client = createPublicClient({
    transport: fallback(rpc.map((url) => http(url, { batch: { batchSize: 64 } }))),
  });
  return async (blocks) => {
    try {
      const headers = await Promise.all(blocks.map((blockNumber) => client.getBlock({ blockNumber })));
      return headers.map((header) => ({ block: header.number, timestamp: header.timestamp }));
    } catch {
      // Not the error's words: viem's name the RPC's URL, which may hold the operator's key.
      throw new Problem(
        "chain_syncing",
        `chain ${chainId}'s RPC did not give the block headers a moment's block needs`,
        {
          headers: { "Retry-After": "5" },
        },
      );
    }
  };
}

/** Where no clock is given (a process without the chains' RPCs): samples only. */
const WITHOUT_RPC = new MomentClock(new Map(), (chainId) => BigInt(ponderFinalityDepth(chainId)));

/** The block of a moment where memory tells it (MomentClock.toldFromMemory), else undefined. */
export function blockInMemory(
  vars: Pick<MomentVars, "store"> & { moments?: MomentClock },
  chainId: number,
  position: ChainPosition,
  moment: Moment,
): bigint | undefined {
  return (vars.moments ?? WITHOUT_RPC).toldFromMemory(vars.store, chainId, position, moment);
}

/** The block a moment asked for names on the chain (indexedBlock's, for `timestamp`). */
export function blockAtMoment(
  vars: MomentVars & { moments?: MomentClock },
  chainId: number,
  position: ChainPosition,
  moment: Moment,
): Promise<bigint> {
  return (vars.moments ?? WITHOUT_RPC).blockAt(vars, chainId, position, moment);
}
