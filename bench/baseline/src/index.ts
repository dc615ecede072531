import { type Context, type Event, ponder } from "ponder:registry";
import { event } from "ponder:schema";

type Name =
  | "RegistryV2:DelegateAll"
  | "RegistryV2:DelegateContract"
  | "RegistryV2:DelegateERC721"
  | "RegistryV2:DelegateERC20"
  | "RegistryV2:DelegateERC1155";

/** Each event of the v2 registry, one insert. */
async function insert({ event: e, context }: { event: Event<Name>; context: Context<Name> }) {
  await context.db.insert(event).values({ id: e.id, blockNumber: e.block.number });
}

ponder.on("RegistryV2:DelegateAll", insert);
ponder.on("RegistryV2:DelegateContract", insert);
ponder.on("RegistryV2:DelegateERC721", insert);
ponder.on("RegistryV2:DelegateERC20", insert);
ponder.on("RegistryV2:DelegateERC1155", insert);
