import type { Address } from "viem";
import { type ChainEntry, chainById } from "./chains";
import { ADDRESS_PATTERN } from "./parse";

/**
 * The plan `npm start` works out before it runs Ponder: the chains to index, their RPC URLs, and on
 * each the registries found there with the block their indexing starts from. It hands the plan to
 * the Ponder process in an environment variable (PLAN_VARIABLE), so that ponder.config.ts only
 * declares what the plan says and the API serves exactly its chains: nothing in the Ponder process
 * asks a chain where the registries are.
 */

/** A registry to index on a chain: where it is, and the block its indexing starts from. */
export type Registry = { address: Address; startBlock: number };

/**
 * A chain to index: its table entry, its RPC URLs (several: fallback), the WebSocket URL its new
 * blocks are heard on (if any) and the registries found there.
 */
export type IndexedChain = { chain: ChainEntry; rpc: string[]; ws?: string; v1?: Registry; v2?: Registry };

/** The environment variable that carries the plan from `npm start` to the Ponder process it runs. */
export const PLAN_VARIABLE = "DELEGATION_LOOKUP_PLAN";

/** The plan as PLAN_VARIABLE's value: JSON of each chain's id, RPC and WebSocket URLs and registries. */
export function encodePlan(plan: readonly IndexedChain[]): string {
  return JSON.stringify(plan.map(({ chain, rpc, ws, v1, v2 }) => ({ id: chain.id, rpc, ws, v1, v2 })));
}

const ADDRESS = new RegExp(ADDRESS_PATTERN);

/** A URL Ponder can subscribe to new blocks on (its chains' `ws`). */
export const isWebSocketUrl = (url: string) => /^wss?:\/\/./.test(url);

function registry(value: unknown, where: string): Registry | undefined {
  if (value === undefined) return undefined;
  const { address, startBlock } = (value ?? {}) as Partial<Registry>;
  if (typeof address !== "string" || !ADDRESS.test(address)) throw new Error(`${where}: no registry address`);
  if (!Number.isSafeInteger(startBlock) || startBlock! < 0) throw new Error(`${where}: no start block`);
  return { address, startBlock: startBlock! };
}

/** The plan a PLAN_VARIABLE value holds; throws, saying what is wrong, when encodePlan did not write it. */
export function decodePlan(text: string): IndexedChain[] {
  let chains: unknown;
  try {
    chains = JSON.parse(text);
  } catch {
    throw new Error("not JSON");
  }
  if (!Array.isArray(chains) || chains.length === 0) throw new Error("not a list of chains");
  return chains.map((value: { id?: unknown; rpc?: unknown; ws?: unknown; v1?: unknown; v2?: unknown }, i) => {
    const chain = typeof value?.id === "number" ? chainById(value.id) : undefined;
    if (chain === undefined) throw new Error(`chain ${i}: ${JSON.stringify(value?.id)} is not a chain of the table`);
    const { rpc } = value;
    if (!Array.isArray(rpc) || rpc.length === 0 || !rpc.every((url) => typeof url === "string" && url !== ""))
      throw new Error(`chain ${chain.id}: no RPC URL`);
    const planned: IndexedChain = { chain, rpc };
    if (value.ws !== undefined) {
      if (typeof value.ws !== "string" || !isWebSocketUrl(value.ws))
        throw new Error(`chain ${chain.id}: no WebSocket URL`);
      planned.ws = value.ws;
    }
    for (const version of ["v1", "v2"] as const) {
      const found = registry(value[version], `chain ${chain.id}, ${version}`);
      if (found !== undefined) planned[version] = found;
    }
    if (!planned.v1 && !planned.v2) throw new Error(`chain ${chain.id}: no registry`);
    return planned;
  });
}

/**
 * Set (to `true`) by `npm start` on each indexer it runs when it indexes every chain apart
 * (INDEX_CHAINS_APART): that Ponder process indexes and serves no API; the API process beside it does.
 */
export const INDEX_ONLY_VARIABLE = "DELEGATION_LOOKUP_INDEX_ONLY";

/**
 * Set (to `true`) by `npm start` on the API process it runs beside chains indexed apart: that process
 * watches the chains' RPCs for reorganizations (api/watch/), as the indexer's own does otherwise.
 */
export const WATCH_VARIABLE = "DELEGATION_LOOKUP_WATCH_CHAINS";

/**
 * The schema of the indexer whose lowest chain id is `chainId` (a chain alone, or a group of chains:
 * core/settings.ts, chainGroups), in a deployment named `schema` that indexes chains apart.
 */
export const chainSchema = (schema: string, chainId: number) => `${schema}_${chainId}`;
