import { type Context, type Event, ponder } from "ponder:registry";
import { event } from "ponder:schema";
import { V2_EVENT_NAME, type V2EventArgs, type V2EventName } from "../../../core/v2";

type Name = `RegistryV2:${V2EventName}`;

/** Each event of the v2 registry, one insert of what it logged. */
const insert =
  (name: V2EventName) =>
  async ({ event: e, context }: { event: Event<Name>; context: Context<Name> }) => {
    const args = e.args as V2EventArgs;
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

ponder.on("RegistryV2:DelegateAll", insert(V2_EVENT_NAME.ALL));
ponder.on("RegistryV2:DelegateContract", insert(V2_EVENT_NAME.CONTRACT));
ponder.on("RegistryV2:DelegateERC721", insert(V2_EVENT_NAME.ERC721));
ponder.on("RegistryV2:DelegateERC20", insert(V2_EVENT_NAME.ERC20));
ponder.on("RegistryV2:DelegateERC1155", insert(V2_EVENT_NAME.ERC1155));
