import type { Address, Chain } from "viem";
import * as viemChains from "viem/chains";

/**
 * Every chain the registries are deployed on (the registries' public deployment list), as data:
 * adding a chain is adding a line. Names and metadata come from viem's chain definitions, but for
 * the chains viem lacks (UNDEFINED_BY_VIEM).
 * A chain is indexed when its RPC URL is configured (`PONDER_RPC_URL_<id>`, core/settings.ts).
 */

export const V1_ADDRESS: Address = "0x00000000000076A84feF008CDAbe6409d2FE638B";
export const V2_ADDRESS: Address = "0x00000000000000447e69651d841bD8D104Bed493";
/** zkSync-type chains derive CREATE2 addresses differently, so v2 lives elsewhere there. */
export const V2_ADDRESS_ZKSYNC: Address = "0x0000000059A24EB229eED07Ac44229DB56C5d797";

export type ChainEntry = {
  id: number;
  /** Ponder's name for the chain: viem's export name. */
  name: string;
  /** viem's display name. */
  title: string;
  testnet: boolean;
  /** viem's default RPC for the chain: public, slow and rate-limited; for trying the service only. */
  publicRpc?: string;
  v2: { address: Address; startBlock?: number };
  /** Where v1 is known to be absent, false; otherwise looked up on the chain at startup. */
  v1: { address: Address; startBlock?: number } | false;
  /** A local chain: it reorganizes and starts afresh at will, so nothing fetched from it is kept. */
  local?: true;
};

type Line = [name: keyof typeof viemChains, options?: { zksync?: true }];

// Start blocks are not listed: the service finds each registry's deployment block on first start
// (scripts/launcher/discovery.ts) and remembers it. A known one can be added here as `startBlock`.
const MAINNETS: Line[] = [
  ["mainnet"],
  ["optimism"],
  ["bsc"],
  ["gnosis"],
  ["polygon"],
  ["fantom"],
  ["zksync", { zksync: true }],
  ["shape"],
  ["polygonZkEvm"],
  ["moonbeam"],
  ["moonriver"],
  ["sei"],
  ["sanko"],
  ["ronin"],
  ["abstract", { zksync: true }],
  ["hychain"],
  ["mantle"],
  ["zetachain"],
  ["canto"],
  ["base"],
  ["apeChain"],
  ["arbitrum"],
  ["arbitrumNova"],
  ["celo"],
  ["avalanche"],
  ["linea"],
  ["treasure", { zksync: true }],
  ["blast"],
  ["plumeMainnet"],
  ["taiko"],
  ["scroll"],
  ["zora"],
];
const TESTNETS: Line[] = [
  ["sepolia"],
  ["holesky"],
  ["baseSepolia"],
  ["berachainTestnetbArtio"],
  ["monadTestnet"],
  ["abstractTestnet", { zksync: true }],
];

function entry([name, options]: Line): ChainEntry {
  // biome-ignore lint/performance/noDynamicNamespaceImportAccess: the table names viem's chains (no tree-shaking)
  const chain = viemChains[name] as Chain;
  return {
    id: chain.id,
    name,
    title: chain.name,
    testnet: chain.testnet ?? false,
    publicRpc: chain.rpcUrls.default.http[0],
    v2: { address: options?.zksync ? V2_ADDRESS_ZKSYNC : V2_ADDRESS },
    // v1 was deployed with plain CREATE2, which zkSync-type chains do not reproduce.
    v1: options?.zksync ? false : { address: V1_ADDRESS },
  };
}

/** The local development chain (anvil, hardhat): both registries, at the canonical addresses. */
const DEV_CHAIN: ChainEntry = {
  id: 31337,
  name: "anvil",
  title: "Local development chain",
  testnet: true,
  v2: { address: V2_ADDRESS },
  v1: { address: V1_ADDRESS },
  local: true,
};

/**
 * Chains of the deployment list that viem's definitions lack: Animechain has none, and viem's chain
 * 2021 is Edgeware (its Ronin Saigon is the testnet's later id, 202601). Neither is zkSync-type. No
 * public RPC is named: none is known to serve them, so a URL must be set to index them.
 */
const UNDEFINED_BY_VIEM: ChainEntry[] = [
  { id: 69000, name: "animechain", title: "Animechain", testnet: false },
  { id: 2021, name: "roninSaigon", title: "Ronin Saigon Testnet", testnet: true },
].map((chain) => ({ ...chain, v2: { address: V2_ADDRESS }, v1: { address: V1_ADDRESS } }));

export const CHAINS: readonly ChainEntry[] = [
  ...MAINNETS.map(entry),
  ...TESTNETS.map(entry),
  ...UNDEFINED_BY_VIEM,
  DEV_CHAIN,
];

/** The table's entry for chain `id`; undefined when the table has none. */
export function chainById(id: number): ChainEntry | undefined {
  return CHAINS.find((chain) => chain.id === id);
}
