import { createConfig } from "ponder";
import { registryV1Abi } from "./core/abi/registryV1";
import { registryV2Abi } from "./core/abi/registryV2";
import { configuredChains, rpcUrls } from "./core/chains";

const chains = configuredChains();
if (chains.length === 0) {
  throw new Error(
    "No chain to index: set PONDER_RPC_URL_<chainId> for each chain to index, e.g. PONDER_RPC_URL_1=https://… (several URLs may be given, comma-separated).",
  );
}

export default createConfig({
  database: process.env.DATABASE_URL
    ? { kind: "postgres", connectionString: process.env.DATABASE_URL }
    : { kind: "pglite", directory: process.env.PGLITE_DIR ?? ".ponder/pglite" },
  chains: Object.fromEntries(
    chains.map((chain) => {
      const urls = rpcUrls(chain.id);
      // A local chain reorganizes and restarts at will: caching its RPC answers would serve stale data.
      return [chain.name, { id: chain.id, rpc: urls.length === 1 ? urls[0] : urls, disableCache: chain.id === 31337 }];
    }),
  ),
  contracts: {
    RegistryV1: {
      abi: registryV1Abi,
      chain: Object.fromEntries(
        chains.map((chain) => [chain.name, { address: chain.v1.address, startBlock: chain.v1.startBlock }]),
      ),
    },
    RegistryV2: {
      abi: registryV2Abi,
      chain: Object.fromEntries(
        chains.map((chain) => [chain.name, { address: chain.v2.address, startBlock: chain.v2.startBlock }]),
      ),
    },
  },
});
