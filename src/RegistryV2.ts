import { type Context, type Event, ponder } from "ponder:registry";
import { v2Delegation } from "ponder:schema";
import type { V2DelegationType, V2EventArgs, V2EventName } from "../core/v2";
import { v2Logged, v2Writes } from "../core/v2-rows";
import { eventPlace, write } from "./writes";

type Name = `RegistryV2:${V2EventName}`;

async function handle(type: V2DelegationType, event: Event<Name>, context: Context<Name>) {
  const logged = v2Logged(type, event.args as V2EventArgs);
  const prev = await context.db.find(v2Delegation, { chainId: context.chain.id, hash: logged.hash });
  await write(context.db, v2Writes(eventPlace(event, context), logged, prev ?? undefined));
}

ponder.on("RegistryV2:DelegateAll", ({ event, context }) => handle("ALL", event, context));
ponder.on("RegistryV2:DelegateContract", ({ event, context }) => handle("CONTRACT", event, context));
ponder.on("RegistryV2:DelegateERC721", ({ event, context }) => handle("ERC721", event, context));
ponder.on("RegistryV2:DelegateERC20", ({ event, context }) => handle("ERC20", event, context));
ponder.on("RegistryV2:DelegateERC1155", ({ event, context }) => handle("ERC1155", event, context));
