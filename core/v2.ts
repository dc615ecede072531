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

/** A delegation a check consults, but for its parties: its type, rights and scope. */
export type V2Scope = { type: V2DelegationType; rights: Hex; contract?: Address; tokenId?: bigint };

/** For one rights value: the delegations that grant everything, and the one that grants a part, by index. */
type Consulted = { full: number[]; partial?: number };

/**
 * The delegations a check consults for one rights value, its parties aside: ALL, CONTRACT, then a
 * token type's. Array literals, each as long as it holds: a batch makes 10,000.
 */
function scopesFor(q: Omit<V2CheckQuery, "from" | "to">, rights: Hex): V2Scope[] {
  const all: V2Scope = { type: "ALL", rights };
  if (q.kind === "all") return [all];
  const contract: V2Scope = { type: "CONTRACT", rights, contract: q.contract };
  if (q.kind === "contract") return [all, contract];
  const type = q.kind === "erc721" ? "ERC721" : q.kind === "erc20" ? "ERC20" : "ERC1155";
  return [all, contract, { type, rights, contract: q.contract, tokenId: hasTokenId(type) ? q.tokenId : undefined }];
}

/** The delegations a check consults, its parties aside: checks with non-empty rights also accept empty rights. */
function checkScopes(q: Omit<V2CheckQuery, "from" | "to">): V2Scope[] {
  const empty = scopesFor(q, zeroHash);
  return q.rights === zeroHash ? empty : empty.concat(scopesFor(q, q.rights));
}

/**
 * checkScopes' scopes by index, grouped by rights: ALL and CONTRACT grant everything, a token
 * type's a part. The same for every check of a kind, with or without rights: made once here, not
 * per check (a batch makes 10,000).
 */
const CONSULTED = Object.fromEntries(
  V2_CHECK_KINDS.map((kind) => {
    const layout = (rights: Hex) => {
      const groups: Consulted[] = [];
      checkScopes({ kind, rights, contract: zeroAddress, tokenId: 0n }).forEach((scope, i, scopes) => {
        if (i === 0 || scope.rights !== scopes[i - 1]!.rights) groups.push({ full: [] });
        const group = groups[groups.length - 1]!;
        if (scope.type === "ALL" || scope.type === "CONTRACT") group.full.push(i);
        else group.partial = i;
      });
      return groups;
    };
    return [kind, { empty: layout(zeroHash), rights: layout(`0x${"ff".repeat(32)}`) }];
  }),
) as Record<V2CheckKind, { empty: Consulted[]; rights: Consulted[] }>;

/** How a check of `q`'s consults its checkScopes. */
const consultedOf = (q: Omit<V2CheckQuery, "from" | "to">) =>
  q.rights === zeroHash ? CONSULTED[q.kind].empty : CONSULTED[q.kind].rights;

/** `from` = 0x0 (empty) and 0x1 (the contract's revoked marker) never delegate. */
export const INVALID_FROM: ReadonlySet<string> = new Set<string>([
  zeroAddress,
  "0x0000000000000000000000000000000000000001",
]);

const isBalance = (kind: V2CheckKind) => kind === "erc20" || kind === "erc1155";

/**
 * The contract's answer from the states of the delegations a check consults: a boolean, or a
 * balance (2^256-1 when an ALL or CONTRACT delegation covers it, else the larger amount).
 */
function answerOf(consulted: readonly Consulted[], balance: boolean, state: (scope: number) => V2State | undefined) {
  let best = 0n;
  for (const { full, partial } of consulted) {
    let covered = false;
    // A loop, not a closure: a batch answers 10,000 checks.
    for (let i = 0; i < full.length && !covered; i++) covered = state(full[i]!) !== undefined;
    const part = partial === undefined ? undefined : state(partial);
    const value = covered ? maxUint256 : balance ? (part?.amount ?? 0n) : part !== undefined ? 1n : 0n;
    if (value > best) best = value;
  }
  return balance ? best : best !== 0n;
}

export type V2Check = {
  /** The check's parties. */
  from: Address;
  to: Address;
  /** Every delegation the check may consult, but for its parties (none when `from` never delegates). */
  scopes: readonly V2Scope[];
  /** The scopes' delegation hashes, in their order: hashed when first read (a store may find them by fields). */
  readonly hashes: Hex[];
  /**
   * The answer of the contract's checkDelegateFor*: a boolean for all/contract/erc721, a balance
   * for erc20/erc1155 (2^256-1 when an ALL or CONTRACT delegation covers it). `state` gives the
   * enabled delegations among `scopes`, each asked by its index there.
   */
  answerOf(state: (scope: number) => V2State | undefined): boolean | bigint;
  /** The same, the enabled delegations given by hash (of those in `hashes`). */
  answer(enabled: (hash: Hex) => V2State | undefined): boolean | bigint;
};

/** A check's consulted delegations, and how to answer it from their states; hashed only when asked. */
export function v2Check(q: V2CheckQuery): V2Check {
  return new ConsultedCheck(q);
}

// A class: as object literals with a getter, a batch's 10,000 checks took three times as long to make.
class ConsultedCheck implements V2Check {
  readonly from: Address;
  readonly to: Address;
  readonly scopes: readonly V2Scope[];
  private readonly consulted: readonly Consulted[];
  private readonly balance: boolean;
  private hashed: Hex[] | undefined;

  constructor(q: V2CheckQuery) {
    this.from = q.from;
    this.to = q.to;
    this.balance = isBalance(q.kind);
    const never = INVALID_FROM.has(q.from);
    this.scopes = never ? [] : checkScopes(q);
    this.consulted = never ? [] : consultedOf(q);
  }

  get hashes(): Hex[] {
    this.hashed ??= this.scopes.map((s) => delegationHash(s.type, s.rights, this.from, this.to, s.contract, s.tokenId));
    return this.hashed;
  }

  answerOf(state: (scope: number) => V2State | undefined): boolean | bigint {
    return answerOf(this.consulted, this.balance, state);
  }

  answer(enabled: (hash: Hex) => V2State | undefined): boolean | bigint {
    const hashes = this.hashes;
    return answerOf(this.consulted, this.balance, (i) => enabled(hashes[i]!));
  }
}

/** A delegation's scope as one string: scopes are equal exactly when their strings are. */
const scopeString = (s: V2Scope) => `${s.type}|${s.rights}|${s.contract ?? ""}|${s.tokenId ?? ""}`;

/** A vault a hot wallet may act for, and the check's answer for it (true, or a non-zero amount). */
export type V2Vault = { vault: Address; answer: true | bigint };

/**
 * Every vault for which the check `q` of hot wallet `q.to` answers true or a non-zero amount, given
 * the wallet's enabled incoming delegations, ordered by the vault's address: what `v2Check` would
 * answer for each `from`, with the same delegations consulted, matched by their fields, not hashed.
 */
export function v2Vaults(
  q: Omit<V2CheckQuery, "from">,
  incoming: readonly (V2Scope & { from: Address; amount: bigint | null })[],
): V2Vault[] {
  const scopes = checkScopes(q).map(scopeString);
  const consulted = consultedOf(q);
  const byVault = new Map<Address, Map<string, V2State>>();
  for (const d of incoming) {
    if (INVALID_FROM.has(d.from)) continue;
    const held = byVault.get(d.from) ?? new Map<string, V2State>();
    held.set(scopeString(d), { enabled: true, amount: d.amount ?? 0n });
    byVault.set(d.from, held);
  }
  const vaults: V2Vault[] = [];
  for (const [vault, held] of byVault) {
    const answer = answerOf(consulted, isBalance(q.kind), (i) => held.get(scopes[i]!));
    if (answer !== false && answer !== 0n) vaults.push({ vault, answer });
  }
  return vaults.sort((a, b) => (a.vault < b.vault ? -1 : 1));
}
