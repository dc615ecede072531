import { createConfig } from "ponder";
import { ponderPgliteDir } from "./api/access/pglite";
import { registryV1Abi } from "./core/abi/registryV1";
import { registryV2Abi } from "./core/abi/registryV2";
import { configuredChains, ignoredRpcVariables } from "./core/chains";
import { type IndexedChain, planChains, type Registry, startBlocksFile } from "./core/discovery";

const ignored = ignoredRpcVariables();
if (ignored.length > 0) {
  console.warn(`${ignored.join(", ")}: not a chain id the service knows (see core/chains.ts); ignored`);
}
const configured = configuredChains();
if (configured.length === 0) {
  throw new Error(
    "No chain to index: set PONDER_RPC_URL_<chainId> for each chain to index, e.g. PONDER_RPC_URL_1=https://… (several URLs may be given, comma-separated).",
  );
}

/** The chains indexed and the registries on each; the API serves exactly these. */
export const plan: IndexedChain[] = (await planChains(configured, { memoryFile: startBlocksFile(process.env) })).filter(
  (p) => {
    if (p.v1 === undefined && p.v2 === undefined)
      console.warn(`chain ${p.chain.id} (${p.chain.title}): neither registry is there; not indexed`);
    return p.v1 !== undefined || p.v2 !== undefined;
  },
);
if (plan.length === 0) throw new Error("None of the configured chains has a registry deployed: nothing to index.");

const contract = (version: "v1" | "v2") =>
  Object.fromEntries(
    plan.flatMap((p) => {
      const registry: Registry | undefined = p[version];
      return registry ? [[p.chain.name, { address: registry.address, startBlock: registry.startBlock }]] : [];
    }),
  );

export default createConfig({
  database: process.env.DATABASE_URL
    ? { kind: "postgres", connectionString: process.env.DATABASE_URL }
    : { kind: "pglite", directory: ponderPgliteDir() },
  chains: Object.fromEntries(
    plan.map(({ chain, rpc }) => [
      chain.name,
      // Caching a local chain's RPC answers would serve an earlier run's data (see also scripts/launcher/replaced-chains.ts).
      { id: chain.id, rpc: rpc.length === 1 ? rpc[0] : rpc, disableCache: chain.local === true },
    ]),
  ),
  contracts: {
    RegistryV1: { abi: registryV1Abi, chain: contract("v1") },
    RegistryV2: { abi: registryV2Abi, chain: contract("v2") },
  },
});
