import type { Address } from "viem";
import { anvil, mainnet } from "viem/chains";

/**
 * Every chain the service knows, as data: adding a chain is adding an entry. A chain is indexed
 * when its RPC URL is configured (`PONDER_RPC_URL_<id>`).
 */
export type ChainEntry = {
  id: number;
  /** Ponder's chain name; viem's name for the chain where viem has it. */
  name: string;
  title: string;
  v1: { address: Address; startBlock: number };
  v2: { address: Address; startBlock: number };
};

export const V1_ADDRESS: Address = "0x00000000000076A84feF008CDAbe6409d2FE638B";

export const V2_ADDRESS: Address = "0x00000000000000447e69651d841bD8D104Bed493";

export const CHAINS: readonly ChainEntry[] = [
  // Start blocks of 0 scan from genesis: correct, but slow on a long chain.
  { id: mainnet.id, name: "mainnet", title: mainnet.name, v1: { address: V1_ADDRESS, startBlock: 0 }, v2: { address: V2_ADDRESS, startBlock: 0 } },
  { id: anvil.id, name: "anvil", title: "Local development chain", v1: { address: V1_ADDRESS, startBlock: 0 }, v2: { address: V2_ADDRESS, startBlock: 0 } },
];

/** The RPC URLs configured for a chain: `PONDER_RPC_URL_<id>`, several separated by commas. */
export function rpcUrls(chainId: number, env: NodeJS.ProcessEnv = process.env): string[] {
  return (env[`PONDER_RPC_URL_${chainId}`] ?? "")
    .split(",")
    .map((url) => url.trim())
    .filter((url) => url !== "");
}

/** The chains this instance indexes: those with an RPC URL. */
export function configuredChains(env: NodeJS.ProcessEnv = process.env): ChainEntry[] {
  return CHAINS.filter((chain) => rpcUrls(chain.id, env).length > 0);
}
