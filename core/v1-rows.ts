import { type Address, zeroAddress } from "viem";
import { chainHeadRow, type EventPlace, eventRow } from "./rows";
import { V1_EVENT_NAME, type V1Key, type V1State, type V1Type, type V1Versions, v1NextState } from "./v1";

/**
 * The rows one v1 event writes, from the event and the rows it reads: written once, for the indexer
 * (src/RegistryV1.ts) and for what fills its tables without a chain (the bench's seeding,
 * test/helpers/indexer-rows.ts). `insert` rows are new (history); `put` rows are state rows whole,
 * as they stand after the event: inserted, or replacing the row of their key.
 */

/** What a delegateFor*(…, value) event logs: its delegation's key (addresses lowercase), and the value. */
export type V1Delegated = { key: V1Key; value: boolean };

/**
 * A revocation: RevokeAllDelegates(vault), or RevokeDelegate(vault, sender) with the pair it voids,
 * which the indexer recovers from the call (core/v1.ts's v1RevokedPair). Addresses lowercase.
 */
export type V1Revoked =
  | { kind: "RevokeAllDelegates"; vault: Address }
  | { kind: "RevokeDelegate"; vault: Address; sender: Address; pair: { vault: Address; delegate: Address } };

const lower = (address: Address) => address.toLowerCase() as Address;

/** What a delegateFor* event logs, from its arguments as viem decodes them (contract_, tokenId as its type has). */
export function v1Delegated(
  type: V1Type,
  args: { vault: Address; delegate: Address; contract_?: Address; tokenId?: bigint; value: boolean },
): V1Delegated {
  const key = {
    type,
    vault: lower(args.vault),
    delegate: lower(args.delegate),
    contract: type === "ALL" ? zeroAddress : lower(args.contract_!),
    tokenId: type === "TOKEN" ? args.tokenId! : 0n,
  };
  return { key, value: args.value };
}

/** What v1_delegation and v1_delegation_change share: the key, and of the state only its own fields. */
const delegationColumns = (chainId: number, key: V1Key, s: V1State) => ({
  chainId,
  type: key.type,
  vault: key.vault,
  delegate: key.delegate,
  contract: key.contract,
  tokenId: key.tokenId,
  enabled: s.enabled,
  vaultVersion: s.vaultVersion,
  pairVersion: s.pairVersion,
  createdBlock: s.createdBlock,
  createdLogIndex: s.createdLogIndex,
});

/**
 * A delegateFor* event's rows, given its key's v1_delegation row before it (none: never written)
 * and the current versions of its vault and pair: v1_event; unless it unsets what was never set,
 * the key's v1_delegation row and its v1_delegation_change; and chain_head. The row keeps the block
 * it was first written at: before it the key was in no set (the copy tells such blocks).
 */
export function v1DelegateWrites(
  at: EventPlace,
  { key, value }: V1Delegated,
  prev: (V1State & { firstBlock: bigint }) | undefined,
  current: V1Versions,
) {
  const next = v1NextState(prev, value, current, { block: at.block.number, logIndex: at.logIndex });
  const place = { id: at.id, blockNumber: at.block.number, logIndex: at.logIndex };
  return {
    insert: {
      v1Event: v1EventRow(at, V1_EVENT_NAME[key.type], key.vault, {
        delegate: key.delegate,
        contract: key.type === "ALL" ? null : key.contract,
        tokenId: key.type === "TOKEN" ? key.tokenId : null,
        value,
      }),
      v1DelegationChange: next && Object.assign(delegationColumns(at.chainId, key, next), place),
    },
    put: {
      chainHead: chainHeadRow(at),
      v1Delegation:
        next &&
        Object.assign(delegationColumns(at.chainId, key, next), {
          firstBlock: prev?.firstBlock ?? at.block.number,
          updatedBlock: at.block.number,
        }),
    },
  };
}

/**
 * A revocation's rows, given the counter's value before it (0: never bumped): v1_event; the counter
 * it bumps (v1_vault_version, or v1_pair_version for a pair) and its v1_version_change; chain_head.
 */
export function v1RevokeWrites(at: EventPlace, revoked: V1Revoked, version: number) {
  const { chainId } = at;
  const updatedBlock = at.block.number;
  const pair = revoked.kind === "RevokeDelegate" ? revoked.pair : undefined;
  const logged = revoked.kind === "RevokeDelegate" ? { delegate: revoked.sender, revokedDelegate: pair!.delegate } : {};
  return {
    insert: {
      v1Event: v1EventRow(at, revoked.kind, revoked.vault, logged),
      v1VersionChange: {
        id: at.id,
        chainId,
        blockNumber: updatedBlock,
        logIndex: at.logIndex,
        vault: pair?.vault ?? revoked.vault,
        delegate: pair?.delegate ?? null,
        version: version + 1,
      },
    },
    put: {
      chainHead: chainHeadRow(at),
      v1VaultVersion: pair ? undefined : { chainId, vault: revoked.vault, version: version + 1, updatedBlock },
      v1PairVersion: pair && {
        chainId,
        vault: pair.vault,
        delegate: pair.delegate,
        version: version + 1,
        updatedBlock,
      },
    },
  };
}

/** A v1_event row; what the event does not log is null. */
const v1EventRow = (
  at: EventPlace,
  kind: string,
  vault: Address,
  logged: {
    delegate?: Address;
    contract?: Address | null;
    tokenId?: bigint | null;
    value?: boolean;
    revokedDelegate?: Address;
  },
) =>
  eventRow(at, {
    kind,
    vault,
    delegate: logged.delegate ?? null,
    contract: logged.contract ?? null,
    tokenId: logged.tokenId ?? null,
    value: logged.value ?? null,
    revokedDelegate: logged.revokedDelegate ?? null,
  });

/** A v1_delegation row as an event leaves it. */
export type V1DelegationRow = NonNullable<ReturnType<typeof v1DelegateWrites>["put"]["v1Delegation"]>;
