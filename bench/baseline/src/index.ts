import { type Context, type Event, ponder } from "ponder:registry";
import { event } from "ponder:schema";
import type { Address, Hex } from "viem";

type Name =
  | "RegistryV2:DelegateAll"
  | "RegistryV2:DelegateContract"
  | "RegistryV2:DelegateERC721"
  | "RegistryV2:DelegateERC20"
  | "RegistryV2:DelegateERC1155";

/** Any v2 event's arguments: each event has some of them. */
type Args = {
  from: Address;
  to: Address;
  rights: Hex;
  contract_?: Address;
  tokenId?: bigint;
  amount?: bigint;
  enable?: boolean;
};

/** Each event of the v2 registry, one insert of what it logged. */
const insert =
  (name: string) =>
  async ({ event: e, context }: { event: Event<Name>; context: Context<Name> }) => {
    const args = e.args as Args;
    await context.db.insert(event).values({
      id: e.id,
      blockNumber: e.block.number,
      blockHash: e.block.hash,
      blockTimestamp: e.block.timestamp,
      transactionHash: e.transaction.hash,
      logIndex: e.log.logIndex,
      name,
      from: args.from,
      to: args.to,
      contract: args.contract_ ?? null,
      tokenId: args.tokenId ?? null,
      rights: args.rights,
      amount: args.amount ?? null,
      enable: args.enable ?? null,
    });
  };

ponder.on("RegistryV2:DelegateAll", insert("DelegateAll"));
ponder.on("RegistryV2:DelegateContract", insert("DelegateContract"));
ponder.on("RegistryV2:DelegateERC721", insert("DelegateERC721"));
ponder.on("RegistryV2:DelegateERC20", insert("DelegateERC20"));
ponder.on("RegistryV2:DelegateERC1155", insert("DelegateERC1155"));
