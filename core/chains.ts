import type { Address } from "viem";

/**
 * Every chain the registries are deployed on (the registries' public deployment list), as data:
 * adding a chain is adding a line. Names, titles and public RPCs are viem's chain definitions',
 * written out (Line), but for the chains viem lacks (UNDEFINED_BY_VIEM).
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

/**
 * A chain as viem defines it (its export name, id, display name and default public RPC), written
 * out rather than read from viem/chains: loading viem's 750 definitions took a second or more of
 * every process's start. core/chains.test.ts holds each line to viem's definition.
 */
type Line = [name: string, id: number, title: string, publicRpc: string, options?: { zksync?: true }];

// Start blocks are not listed: the service finds each registry's deployment block on first start
// (scripts/launcher/discovery.ts) and remembers it. A known one can be added here as `startBlock`.
const MAINNETS: Line[] = [
  ["mainnet", 1, "Ethereum", "https://ethereum.reth.rs/rpc"],
  ["optimism", 10, "OP Mainnet", "https://mainnet.optimism.io"],
  ["bsc", 56, "BNB Smart Chain", "https://56.rpc.thirdweb.com"],
  ["gnosis", 100, "Gnosis", "https://rpc.gnosischain.com"],
  ["polygon", 137, "Polygon", "https://polygon.drpc.org"],
  ["fantom", 250, "Fantom", "https://250.rpc.thirdweb.com"],
  ["zksync", 324, "ZKsync Era", "https://mainnet.era.zksync.io", { zksync: true }],
  ["shape", 360, "Shape", "https://mainnet.shape.network"],
  ["polygonZkEvm", 1101, "Polygon zkEVM", "https://zkevm-rpc.com"],
  ["moonbeam", 1284, "Moonbeam", "https://rpc.api.moonbeam.network"],
  ["moonriver", 1285, "Moonriver", "https://rpc.api.moonriver.moonbeam.network"],
  ["sei", 1329, "Sei Network", "https://evm-rpc.sei-apis.com/"],
  ["sanko", 1996, "Sanko", "https://mainnet.sanko.xyz"],
  ["ronin", 2020, "Ronin", "https://api.roninchain.com/rpc"],
  ["abstract", 2741, "Abstract", "https://api.mainnet.abs.xyz", { zksync: true }],
  ["hychain", 2911, "HYCHAIN", "https://rpc.hychain.com/http"],
  ["mantle", 5000, "Mantle", "https://rpc.mantle.xyz"],
  ["zetachain", 7000, "ZetaChain", "https://zetachain-evm.blockpi.network/v1/rpc/public"],
  ["canto", 7700, "Canto", "https://canto.gravitychain.io"],
  ["base", 8453, "Base", "https://mainnet.base.org"],
  ["apeChain", 33139, "ApeChain", "https://rpc.apechain.com/http"],
  ["arbitrum", 42161, "Arbitrum One", "https://arb1.arbitrum.io/rpc"],
  ["arbitrumNova", 42170, "Arbitrum Nova", "https://nova.arbitrum.io/rpc"],
  ["celo", 42220, "Celo", "https://forno.celo.org"],
  ["avalanche", 43114, "Avalanche", "https://api.avax.network/ext/bc/C/rpc"],
  ["linea", 59144, "Linea Mainnet", "https://rpc.linea.build"],
  ["treasure", 61166, "Treasure", "https://rpc.treasure.lol", { zksync: true }],
  ["blast", 81457, "Blast", "https://rpc.blast.io"],
  ["plumeMainnet", 98866, "Plume", "https://rpc.plume.org"],
  ["taiko", 167000, "Taiko Mainnet", "https://rpc.mainnet.taiko.xyz"],
  ["scroll", 534352, "Scroll", "https://rpc.scroll.io"],
  ["zora", 7777777, "Zora", "https://rpc.zora.energy"],
];
const TESTNETS: Line[] = [
  ["sepolia", 11155111, "Sepolia", "https://11155111.rpc.thirdweb.com"],
  ["holesky", 17000, "Holesky", "https://ethereum-holesky-rpc.publicnode.com"],
  ["baseSepolia", 84532, "Base Sepolia", "https://sepolia.base.org"],
  ["berachainTestnetbArtio", 80084, "Berachain bArtio", "https://bartio.rpc.berachain.com"],
  ["monadTestnet", 10143, "Monad Testnet", "https://testnet-rpc.monad.xyz"],
  ["abstractTestnet", 11124, "Abstract Testnet", "https://api.testnet.abs.xyz", { zksync: true }],
];

const entry =
  (testnet: boolean) =>
  ([name, id, title, publicRpc, options]: Line): ChainEntry => ({
    id,
    name,
    title,
    testnet,
    publicRpc,
    v2: { address: options?.zksync ? V2_ADDRESS_ZKSYNC : V2_ADDRESS },
    // v1 was deployed with plain CREATE2, which zkSync-type chains do not reproduce.
    v1: options?.zksync ? false : { address: V1_ADDRESS },
  });

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
  ...MAINNETS.map(entry(false)),
  ...TESTNETS.map(entry(true)),
  ...UNDEFINED_BY_VIEM,
  DEV_CHAIN,
];

/** The table's entry for chain `id`; undefined when the table has none. */
export function chainById(id: number): ChainEntry | undefined {
  return CHAINS.find((chain) => chain.id === id);
}
