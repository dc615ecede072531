/**
 * Reorganizations deeper than the indexer's finality depth. Ponder reverts what a reorganization
 * replaces only down to the block it holds as finalized; below that it keeps what it indexed, so
 * after a deeper one the tables mix two branches and every answer could be wrong. Such a chain is
 * never served silently: the watcher compares the hashes of blocks the indexer indexed at or below
 * its finalized block (the newest blocks with registry events, and blocks it noted as they were
 * finalized) with the chain's, and on a difference raises an alarm for the chain. Every answer for
 * it is then a `503 chain_reorganized` until it is re-indexed (README, Operations).
 */
import type { Hex } from "viem";

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

/** The alarm for a chain whose indexed history mixes two branches: what was found, and what to do. */
export function deepReorgDetail(chainId: number, replaced: Replaced, final: bigint): string {
  return (
    `chain ${chainId}: block ${replaced.number} was indexed as ${replaced.hash}, but the chain now has ` +
    `${replaced.chainHash} there: a reorganization deeper than the indexer's finality depth (it held block ` +
    `${final} as final) replaced blocks it had indexed, so the indexed state mixes two branches. Answers for ` +
    "this chain are refused until it is re-indexed: start the indexer on a new DATABASE_SCHEMA (README, Operations)."
  );
}
