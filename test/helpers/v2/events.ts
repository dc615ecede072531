/** What v2 transactions did on chain: their events, and where each delegation was first enabled. */
import { type Abi, type Address, decodeEventLog, type Hex } from "viem";
import { type V2DelegationType, type V2EventArgs, v2DelegationHash } from "../../../core/v2";
import type { Receipt } from "../../../devkit/send";
import { before, type Position } from "../position";

/** The events of the receipts, with what each logged and the delegation hash it touches. */
export type ChainEvent = Position & { type: V2DelegationType; args: V2EventArgs; hash: Hex; enabling: boolean };

const EVENT_TYPE: Record<string, V2DelegationType> = {
  DelegateAll: "ALL",
  DelegateContract: "CONTRACT",
  DelegateERC721: "ERC721",
  DelegateERC20: "ERC20",
  DelegateERC1155: "ERC1155",
};

/** The registry's events in the receipts, in chain order, each with the hash of the delegation it touches. */
export function decodeEvents(abi: Abi, registry: Address, receipts: Receipt[]): ChainEvent[] {
  const events: ChainEvent[] = [];
  for (const r of receipts) {
    for (const log of r.logs) {
      if (log.address.toLowerCase() !== registry.toLowerCase()) continue;
      const { eventName, args } = decodeEventLog({ abi, data: log.data, topics: log.topics }) as unknown as {
        eventName: string;
        args: V2EventArgs;
      };
      const type = EVENT_TYPE[eventName];
      if (!type) throw new Error(`unexpected event ${eventName}`);
      const hash = v2DelegationHash({
        type,
        from: args.from,
        to: args.to,
        rights: args.rights,
        contract: args.contract_,
        tokenId: args.tokenId,
      });
      const enabling = args.enable !== undefined ? args.enable : args.amount !== 0n;
      events.push({ type, args, hash, enabling, block: BigInt(log.blockNumber), logIndex: Number(log.logIndex) });
    }
  }
  return events.sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
}

/** Where each delegation was first enabled: the order of the contract's lists and the API's. */
export function firstEnabled(events: ChainEvent[], into = new Map<Hex, Position>()): Map<Hex, Position> {
  for (const e of events)
    if (e.enabling && !into.has(e.hash)) into.set(e.hash, { block: e.block, logIndex: e.logIndex });
  return into;
}
