import { type Address, type Hex, maxUint256, zeroAddress, zeroHash } from "viem";
import { writeHex, writeUint256 } from "./hex";
import { keccak256Hex } from "./keccak";

/**
 * The v2 DelegateRegistry's rules, written once and used by the indexer and the API alike.
 * Addresses are lowercase; rights are bytes32 hex.
 */

/** The contract's `DelegationType` enum, by name; its index is the enum value. */
export const V2_DELEGATION_TYPES = ["NONE", "ALL", "CONTRACT", "ERC721", "ERC20", "ERC1155"] as const;
export type V2DelegationType = Exclude<(typeof V2_DELEGATION_TYPES)[number], "NONE">;

/** The spec's coarser `type` of a v2 delegation record. */
export const V2_RECORD_TYPE: Record<V2DelegationType, "ALL" | "CONTRACT" | "TOKEN"> = {
  ALL: "ALL",
  CONTRACT: "CONTRACT",
  ERC721: "TOKEN",
  ERC20: "CONTRACT",
  ERC1155: "TOKEN",
};

/** The registry's event for each delegation type, as the history table records it (`kind`). */
export const V2_EVENT_NAME = {
  ALL: "DelegateAll",
  CONTRACT: "DelegateContract",
  ERC721: "DelegateERC721",
  ERC20: "DelegateERC20",
  ERC1155: "DelegateERC1155",
} as const satisfies Record<V2DelegationType, string>;
export type V2EventName = (typeof V2_EVENT_NAME)[V2DelegationType];

/** What a v2 event logs, as viem decodes it: each event has some of the optional ones. */
export type V2EventArgs = {
  from: Address;
  to: Address;
  rights: Hex;
  contract_?: Address;
  tokenId?: bigint;
  enable?: boolean;
  amount?: bigint;
};

/** ERC20 and ERC1155 delegations carry an amount; `amount == 0` revokes them. */
export const isAmountType = (type: V2DelegationType) => type === "ERC20" || type === "ERC1155";
const hasContract = (type: V2DelegationType) => type !== "ALL";
const hasTokenId = (type: V2DelegationType) => type === "ERC721" || type === "ERC1155";

export type V2DelegationKey = {
  type: V2DelegationType;
  from: Address;
  to: Address;
  rights: Hex;
  contract?: Address;
  tokenId?: bigint;
};

/** A key's fields as the tables store them (v2_event, v2_delegation): those its type lacks are null. */
export const v2KeyColumns = (key: V2DelegationKey) => ({
  from: key.from,
  to: key.to,
  contract: key.contract ?? null,
  tokenId: key.tokenId ?? null,
  rights: key.rights,
});

/** The packed fields of the widest key (rights, from, to, contract, tokenId), rewritten by each hash. */
const packed = new Uint8Array(32 + 20 + 20 + 20 + 32);
/** Each type's last byte of its hashes, as hex. */
const TYPE_BYTE = Object.fromEntries(
  V2_DELEGATION_TYPES.map((type, index) => [type, index.toString(16).padStart(2, "0")]),
) as Record<V2DelegationType, string>;

/**
 * The delegation hash exactly as the contract computes it (RegistryHashes): keccak256 of the packed
 * (rights, from, to[, contract][, tokenId]), shifted left one byte, with the type in the last byte.
 */
export function v2DelegationHash(key: V2DelegationKey): Hex {
  return delegationHash(key.type, key.rights, key.from, key.to, key.contract, key.tokenId);
}

/** `v2DelegationHash` of a key given as its fields: a check hashes up to six keys, without key objects. */
function delegationHash(
  type: V2DelegationType,
  rights: Hex,
  from: Address,
  to: Address,
  contract: Address = zeroAddress,
  tokenId = 0n,
): Hex {
  // Packed as bytes by hand: every field has a fixed width.
  let at = writeHex(packed, 0, rights);
  at = writeHex(packed, at, from);
  at = writeHex(packed, at, to);
  if (hasContract(type)) at = writeHex(packed, at, contract);
  if (hasTokenId(type)) at = writeUint256(packed, at, tokenId);
  // Shifting a 32-byte word left one byte drops its first byte; the type fills the last.
  return `0x${keccak256Hex(packed.subarray(0, at)).slice(4)}${TYPE_BYTE[type]}`;
}

/** What the contract keeps for one delegation hash. */
export type V2State = { enabled: boolean; amount: bigint };

/** What one v2 event logs about its delegation's state: a flag, or (ERC20/ERC1155) an amount. */
export type V2Change = { enable: boolean } | { amount: bigint };

/**
 * The state an enabling event (enable, or a non-zero amount) sets, whatever the state before it;
 * `undefined` for a revoke, whose outcome depends on that state (v2NextState).
 */
export function v2EnabledState(type: V2DelegationType, change: V2Change): V2State | undefined {
  const amount = "amount" in change ? change.amount : 0n;
  const active = "amount" in change ? amount !== 0n : change.enable;
  return active ? { enabled: true, amount: isAmountType(type) ? amount : 0n } : undefined;
}

/**
 * The next state of a delegation after one of its events, or `undefined` when the contract writes
 * nothing (a revoke of what was never enabled). A delegation's list position is fixed by the first
 * event that enables it, so a row that exists keeps its position through revokes and re-enables.
 */
export function v2NextState(type: V2DelegationType, prev: V2State | undefined, change: V2Change): V2State | undefined {
  const enabled = v2EnabledState(type, change);
  if (enabled !== undefined || prev === undefined) return enabled;
  return prev.enabled ? { enabled: false, amount: 0n } : prev;
}

/** The v2 checks, as the API names them (`/check/<kind>`). */
export const V2_CHECK_KINDS = ["all", "contract", "erc721", "erc1155", "erc20"] as const;
export type V2CheckKind = (typeof V2_CHECK_KINDS)[number];
export type V2CheckQuery = {
  kind: V2CheckKind;
  to: Address;
  from: Address;
  rights: Hex;
  contract?: Address;
  tokenId?: bigint;
};

/** For one rights value: the hashes whose delegations grant everything, and the one that grants a part. */
type RightsKeys = { full: Hex[]; partial?: Hex };

function keysForRights(q: V2CheckQuery, rights: Hex): RightsKeys {
  const all = delegationHash("ALL", rights, q.from, q.to);
  if (q.kind === "all") return { full: [all] };
  const contract = delegationHash("CONTRACT", rights, q.from, q.to, q.contract);
  if (q.kind === "contract") return { full: [all, contract] };
  const type = q.kind === "erc721" ? "ERC721" : q.kind === "erc20" ? "ERC20" : "ERC1155";
  return { full: [all, contract], partial: delegationHash(type, rights, q.from, q.to, q.contract, q.tokenId) };
}

/** `from` = 0x0 (empty) and 0x1 (the contract's revoked marker) never delegate. */
const INVALID_FROM = new Set<string>([zeroAddress, "0x0000000000000000000000000000000000000001"]);

/** Checks with non-empty rights also accept delegations with empty rights. */
function checkRights(q: V2CheckQuery): RightsKeys[] {
  if (INVALID_FROM.has(q.from)) return [];
  const empty = keysForRights(q, zeroHash);
  return q.rights === zeroHash ? [empty] : [empty, keysForRights(q, q.rights)];
}

export type V2Check = {
  /** Every delegation hash the check may need to look up. */
  hashes: Hex[];
  /**
   * The answer of the contract's checkDelegateFor*: a boolean for all/contract/erc721, a balance
   * for erc20/erc1155 (2^256-1 when an ALL or CONTRACT delegation covers it). `enabled` gives the
   * enabled delegations among `hashes`.
   */
  answer(enabled: (hash: Hex) => V2State | undefined): boolean | bigint;
};

/** A check's hashes, hashed once, and how to answer it from their states. */
export function v2Check(q: V2CheckQuery): V2Check {
  const rights = checkRights(q);
  const balance = q.kind === "erc20" || q.kind === "erc1155";
  return {
    hashes: rights.flatMap((k) => (k.partial ? [...k.full, k.partial] : k.full)),
    answer(enabled) {
      let best = 0n;
      for (const keys of rights) {
        const full = keys.full.some((h) => enabled(h) !== undefined);
        const part = keys.partial === undefined ? undefined : enabled(keys.partial);
        const value = full ? maxUint256 : balance ? (part?.amount ?? 0n) : part !== undefined ? 1n : 0n;
        if (value > best) best = value;
      }
      return balance ? best : best !== 0n;
    },
  };
}
