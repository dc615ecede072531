import { createConfig } from "ponder";
import type { Address } from "viem";
import { registryV2Abi } from "../../core/abi/registryV2";

/**
 * The minimal Ponder indexer the backfill is measured against: the same v2 registry on
 * the same chain, each event one insert, no logic. bench/backfill.ts runs it with `ponder start
 * --root bench/baseline` after the service's indexer, over the same blocks and database.
 */
const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: bench/backfill.ts runs this indexer`);
  return value;
};

export default createConfig({
  database: { kind: "postgres", connectionString: env("DATABASE_URL") },
  chains: { local: { id: Number(env("BASELINE_CHAIN_ID")), rpc: env("BASELINE_RPC_URL"), disableCache: true } },
  contracts: {
    RegistryV2: {
      abi: registryV2Abi,
      chain: "local",
      address: env("BASELINE_REGISTRY") as Address,
      startBlock: Number(env("BASELINE_START_BLOCK")),
    },
  },
});
