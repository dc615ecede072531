import { type Context, type Event, ponder } from "ponder:registry";
import { v2Delegation, v2Event } from "ponder:schema";
import type { Address, Hex } from "viem";
import {
  isAmountType,
  V2_EVENT_NAME,
  type V2DelegationType,
  type V2EventArgs,
  type V2EventName,
  v2DelegationHash,
  v2EnabledState,
  v2KeyColumns,
  v2NextState,
} from "../core/v2";
import { recordEventBlock } from "./ChainHead";

type Name = `RegistryV2:${V2EventName}`;

async function handle(type: V2DelegationType, event: Event<Name>, context: Context<Name>) {
  const args = event.args as V2EventArgs;
  const chainId = context.chain.id;
  const key = {
    type,
    from: args.from.toLowerCase() as Address,
    to: args.to.toLowerCase() as Address,
    rights: args.rights.toLowerCase() as Hex,
    contract: args.contract_?.toLowerCase() as Address | undefined,
    tokenId: args.tokenId,
  };
  const hash = v2DelegationHash(key);
  const amounts = isAmountType(type);

  await context.db.insert(v2Event).values({
    id: event.id,
    chainId,
    blockNumber: event.block.number,
    blockHash: event.block.hash,
    blockTimestamp: event.block.timestamp,
    transactionHash: event.transaction.hash,
    logIndex: event.log.logIndex,
    kind: V2_EVENT_NAME[type],
    hash,
    ...v2KeyColumns(key),
    amount: args.amount ?? null,
    enable: args.enable ?? null,
  });
  await recordEventBlock(context, event.block.number);

  const change = amounts ? { amount: args.amount! } : { enable: args.enable! };
  const state = v2EnabledState(type, change);
  if (state) {
    // The state an enabling event sets does not depend on the one before: one upsert, no read.
    const set = { enabled: state.enabled, amount: amounts ? state.amount : null, updatedBlock: event.block.number };
    await context.db
      .insert(v2Delegation)
      .values({
        ...set,
        chainId,
        hash,
        delegationType: type,
        ...v2KeyColumns(key),
        firstBlock: event.block.number,
        firstLogIndex: event.log.logIndex,
        eventCount: 1,
      })
      .onConflictDoUpdate((prev) => ({ ...set, eventCount: prev.eventCount + 1 }));
    return;
  }
  // A revoke changes only a delegation that exists.
  const prev = await context.db.find(v2Delegation, { chainId, hash });
  if (!prev) return;
  const next = v2NextState(type, { enabled: prev.enabled, amount: prev.amount ?? 0n }, change)!;
  await context.db.update(v2Delegation, { chainId, hash }).set({
    enabled: next.enabled,
    amount: amounts ? next.amount : null,
    updatedBlock: event.block.number,
    eventCount: prev.eventCount + 1,
  });
}

ponder.on("RegistryV2:DelegateAll", ({ event, context }) => handle("ALL", event, context));
ponder.on("RegistryV2:DelegateContract", ({ event, context }) => handle("CONTRACT", event, context));
ponder.on("RegistryV2:DelegateERC721", ({ event, context }) => handle("ERC721", event, context));
ponder.on("RegistryV2:DelegateERC20", ({ event, context }) => handle("ERC20", event, context));
ponder.on("RegistryV2:DelegateERC1155", ({ event, context }) => handle("ERC1155", event, context));
