import type { Address, Hex } from "viem";
import { chainHeadRow, type EventPlace, eventRow } from "./rows";
import {
  isAmountType,
  V2_EVENT_NAME,
  type V2Change,
  type V2DelegationKey,
  type V2DelegationType,
  type V2EventArgs,
  v2DelegationHash,
  v2KeyColumns,
  v2NextState,
} from "./v2";

/**
 * The rows one v2 event writes, from the event and the v2_delegation row it reads: written once,
 * for the indexer (src/RegistryV2.ts) and for what fills its tables without a chain (the bench's
 * seeding, test/helpers/indexer-rows.ts). `insert` rows are new (history); `put` rows are state
 * rows whole, as they stand after the event: inserted, or replacing the row of their key.
 */

/** What a v2 event logs: its delegation (addresses lowercase), that delegation's hash, and the change. */
export type V2Logged = { key: V2DelegationKey; hash: Hex; change: V2Change };

const lower = <T extends Hex>(hex: T) => hex.toLowerCase() as T;

/** What a v2 event logs, from its arguments as viem decodes them. */
export function v2Logged(type: V2DelegationType, args: V2EventArgs): V2Logged {
  const key = {
    type,
    from: lower(args.from),
    to: lower(args.to),
    rights: lower(args.rights),
    contract: args.contract_ && lower<Address>(args.contract_),
    tokenId: args.tokenId,
  };
  const change = isAmountType(type) ? { amount: args.amount! } : { enable: args.enable! };
  return { key, hash: v2DelegationHash(key), change };
}

/** What an event reads of its delegation's v2_delegation row before it (none: never enabled). */
export type V2Prev = {
  enabled: boolean;
  amount: bigint | null;
  firstBlock: bigint;
  firstLogIndex: number;
  eventCount: number;
};

/**
 * The event's v2_event row; its v2_delegation row, unless it revokes what was never enabled (the
 * contract writes nothing then); and chain_head.
 */
export function v2Writes(at: EventPlace, { key, hash, change }: V2Logged, prev: V2Prev | undefined) {
  const next = v2NextState(key.type, prev && { enabled: prev.enabled, amount: prev.amount ?? 0n }, change);
  const amount = "amount" in change ? change.amount : null;
  const enable = "enable" in change ? change.enable : null;
  return {
    insert: {
      v2Event: eventRow(at, Object.assign(v2KeyColumns(key), { kind: V2_EVENT_NAME[key.type], hash, amount, enable })),
    },
    put: {
      chainHead: chainHeadRow(at),
      v2Delegation:
        next &&
        Object.assign(v2KeyColumns(key), {
          chainId: at.chainId,
          hash,
          delegationType: key.type,
          enabled: next.enabled,
          amount: isAmountType(key.type) ? next.amount : null,
          // Its list position: where it was first enabled, kept through revokes and re-enables.
          firstBlock: prev?.firstBlock ?? at.block.number,
          firstLogIndex: prev?.firstLogIndex ?? at.logIndex,
          updatedBlock: at.block.number,
          eventCount: (prev?.eventCount ?? 0) + 1,
        }),
    },
  };
}

/** A v2_delegation row as an event leaves it. */
export type V2DelegationRow = NonNullable<ReturnType<typeof v2Writes>["put"]["v2Delegation"]>;
