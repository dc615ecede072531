/** One chain of `GET /registry/chains`, as docs/chains.md documents it. */
export type ListedChain = {
  chainId: number;
  name: string;
  title: string;
  testnet: boolean;
  registries: Record<"v1" | "v2", { address: string; startBlock: number } | null>;
  indexedBlock: number | null;
  status: string;
  lagSeconds: number | null;
};
