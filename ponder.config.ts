import { createConfig } from "ponder";
import { registryV1Abi } from "./core/abi/registryV1";
import { registryV2Abi } from "./core/abi/registryV2";
import { ponderSettings } from "./core/settings";

/**
 * What Ponder indexes: the plan `npm start` works out (the chains, their RPC URLs, the registries
 * found on each and their start blocks) and hands over in DELEGATION_LOOKUP_PLAN (core/plan.ts).
 * Without it (`ponder dev`, `ponder start` alone) it does not build, and says to run `npm start`.
 */

const { plan, database, poolMax } = ponderSettings(process.env);

/** Where registry `version` is indexed: per chain name, its address and start block. */
const deployments = (version: "v1" | "v2") =>
  Object.fromEntries(plan.flatMap(({ chain, [version]: registry }) => (registry ? [[chain.name, registry]] : [])));

export default createConfig({
  database: database.url
    ? { kind: "postgres", connectionString: database.url, ...(poolMax && { poolConfig: { max: poolMax } }) }
    : { kind: "pglite", directory: database.pgliteDir },
  chains: Object.fromEntries(
    plan.map(({ chain, rpc, ws }) => [
      chain.name,
      // A local chain's cached RPC answers would be an earlier run's (see scripts/launcher/replaced-chains.ts).
      // With `ws`, Ponder hears each new block as it comes rather than asking every second (and asks
      // again if the subscription keeps failing).
      { id: chain.id, rpc: rpc.length === 1 ? rpc[0] : rpc, ...(ws && { ws }), disableCache: chain.local === true },
    ]),
  ),
  contracts: {
    RegistryV1: { abi: registryV1Abi, chain: deployments("v1") },
    RegistryV2: { abi: registryV2Abi, chain: deployments("v2") },
  },
  // Every block from the live start on (src/ChainTip.ts): the hash the indexer saw, which the
  // replaced-head watcher needs; from "latest", so a backfill fetches no block it would not.
  blocks: {
    ChainTip: {
      chain: Object.fromEntries(plan.map(({ chain }) => [chain.name, { startBlock: "latest" as const }])),
      interval: 1,
    },
  },
});
