import { type AbiFunction, type Address, decodeFunctionData, type Hex, toFunctionSelector, zeroAddress } from "viem";
import { registryV1Abi } from "./abi/registryV1";

/**
 * The v1 DelegationRegistry's rules, written once for the indexer and the API. Addresses are
 * lowercase.
 *
 * The contract voids delegations through version counters: `revokeAllDelegates` bumps the vault's
 * version, `revokeDelegate`/`revokeSelf` bump the (vault, delegate) pair's version, and a
 * delegation counts only while it was set at the versions now current. So a revocation is O(1)
 * here too: it bumps a counter and rewrites no delegation.
 */

export type V1Type = "ALL" | "CONTRACT" | "TOKEN";

/** The registry's event for each delegation type, as the history table records it (`kind`). */
export const V1_EVENT_NAME: Record<V1Type, string> = {
  ALL: "DelegateForAll",
  CONTRACT: "DelegateForContract",
  TOKEN: "DelegateForToken",
};

export type V1Key = {
  type: V1Type;
  vault: Address;
  delegate: Address;
  /** The zero address for ALL. */
  contract: Address;
  /** 0 unless TOKEN. */
  tokenId: bigint;
};

/** A key's identity as one string: keys are equal exactly when their strings are. */
export const v1KeyString = (k: V1Key) => `${k.vault}|${k.delegate}|${k.type}|${k.contract}|${k.tokenId}`;

/** The key a `v1KeyString` names. */
export function v1KeyOfString(key: string): V1Key {
  const [vault, delegate, type, contract, tokenId] = key.split("|") as [Address, Address, V1Type, Address, string];
  return { type, vault, delegate, contract, tokenId: BigInt(tokenId) };
}

export type V1Versions = { vault: number; pair: number };

/** One delegation key's last write: enabled or not, at which versions, created where. */
export type V1State = {
  enabled: boolean;
  vaultVersion: number;
  pairVersion: number;
  /** (block, log index) at which the delegation now in force was created. */
  createdBlock: bigint;
  createdLogIndex: number;
};

/** Whether a delegation counts now: set at the current vault and pair versions, and not unset since. */
export function v1InForce(
  state: Pick<V1State, "enabled" | "vaultVersion" | "pairVersion"> | undefined,
  current: V1Versions,
): boolean {
  return state?.enabled === true && state.vaultVersion === current.vault && state.pairVersion === current.pair;
}

/**
 * The state after `delegateFor*(…, value)` at `position`. `value = false` removes only the
 * delegation of the current versions (a voided one stays voided); re-enabling a delegation that is
 * in force keeps its creation position, as the contract's set keeps its entry.
 */
export function v1NextState(
  prev: V1State | undefined,
  value: boolean,
  current: V1Versions,
  position: { block: bigint; logIndex: number },
): V1State | undefined {
  const inForce = v1InForce(prev, current);
  if (!value) return inForce ? { ...prev!, enabled: false } : prev;
  if (inForce) return prev;
  return {
    enabled: true,
    vaultVersion: current.vault,
    pairVersion: current.pair,
    createdBlock: position.block,
    createdLogIndex: position.logIndex,
  };
}

/** The v1 checks, as the API names them (`/check/<kind>`). */
export const V1_CHECK_KINDS = ["all", "contract", "token"] as const;
export type V1CheckKind = (typeof V1_CHECK_KINDS)[number];
export type V1CheckQuery = {
  kind: V1CheckKind;
  delegate: Address;
  vault: Address;
  contract?: Address;
  tokenId?: bigint;
};

/** checkDelegateForToken falls back to the contract, which falls back to the whole vault. */
export function v1CheckKeys(q: V1CheckQuery): V1Key[] {
  // Literals, not spreads of a common base: this runs for every v1 check answered.
  const { vault, delegate } = q;
  const keys: V1Key[] = [{ vault, delegate, type: "ALL", contract: zeroAddress, tokenId: 0n }];
  if (q.kind !== "all") keys.push({ vault, delegate, type: "CONTRACT", contract: q.contract!, tokenId: 0n });
  if (q.kind === "token") keys.push({ vault, delegate, type: "TOKEN", contract: q.contract!, tokenId: q.tokenId! });
  return keys;
}

const WRITE_SELECTORS = new Set(
  registryV1Abi
    .filter((item) => item.type === "function" && item.stateMutability === "nonpayable")
    .map((item) => toFunctionSelector(item as AbiFunction)),
);

/** A call frame of a `callTracer` trace (debug_traceTransaction). */
export type CallFrame = { type: string; from: Address; to?: Address; input: Hex; error?: string; calls?: CallFrame[] };

/**
 * The calls a transaction made to the registry that took effect, in execution order. Every v1
 * write emits exactly one log, so the k-th of these made the registry's k-th log in the
 * transaction. A reverted frame's logs are discarded, and so are its sub-calls.
 */
export function registryCalls(root: CallFrame, registry: Address): CallFrame[] {
  const calls: CallFrame[] = [];
  const walk = (frame: CallFrame) => {
    if (frame.error !== undefined) return;
    const toRegistry = frame.type === "CALL" && frame.to?.toLowerCase() === registry.toLowerCase();
    // A view called with CALL emits nothing: only writes pair with logs.
    if (toRegistry && WRITE_SELECTORS.has(frame.input.slice(0, 10).toLowerCase() as Hex)) calls.push(frame);
    for (const child of frame.calls ?? []) walk(child);
  };
  walk(root);
  return calls;
}

type Pair = { vault: Address; delegate: Address };

/** The pair a `revokeDelegate`/`revokeSelf` call by `caller` voids; undefined for another function. */
function pairRevokedBy(caller: Address, input: Hex): Pair | undefined {
  const call = decodeFunctionData({ abi: registryV1Abi, data: input });
  const sender = caller.toLowerCase() as Address;
  if (call.functionName === "revokeDelegate") return { vault: sender, delegate: call.args[0].toLowerCase() as Address };
  if (call.functionName === "revokeSelf") return { vault: call.args[0].toLowerCase() as Address, delegate: sender };
  return undefined;
}

/**
 * The pair a RevokeDelegate voids, from the call that emitted it. The event is
 * `RevokeDelegate(vault, msg.sender)`: for `revokeSelf(vault)` that is the pair itself, but
 * `revokeDelegate(x)` emits `(vault, vault)`, so only the call's input names `x`.
 */
export function v1RevokedPair(caller: Address, input: Hex): Pair {
  const pair = pairRevokedBy(caller, input);
  if (pair !== undefined) return pair;
  const { functionName } = decodeFunctionData({ abi: registryV1Abi, data: input });
  throw new Error(`a RevokeDelegate log came from a call to ${functionName}`);
}

/**
 * The pairs voided by those of `calls` (registryCalls) that emit `RevokeDelegate(vault, vault)`, in
 * execution order: the log is (the pair's vault, the caller), so the calls by `vault` that void a
 * pair of its own. When they all void one pair, a log of that shape needs only the trace.
 */
export function v1PairsRevokedAs(calls: readonly CallFrame[], vault: Address): Pair[] {
  const self = vault.toLowerCase() as Address;
  return calls.flatMap((call) => {
    const pair = call.from.toLowerCase() === self ? pairRevokedBy(call.from, call.input) : undefined;
    return pair?.vault === self ? [pair] : [];
  });
}

/**
 * Every vault for which the check `q` of delegate `q.delegate` holds, given the delegate's
 * delegations in force, ordered by the vault's address: each vault's check keys (v1CheckKeys)
 * looked up among them.
 */
export function v1Vaults(q: Omit<V1CheckQuery, "vault">, inForce: readonly V1Key[]): Address[] {
  const held = new Set(inForce.map(v1KeyString));
  const vaults = new Set(inForce.filter((k) => k.delegate === q.delegate).map((k) => k.vault));
  return [...vaults]
    .filter((vault) => v1CheckKeys({ ...q, vault }).some((k) => held.has(v1KeyString(k))))
    .sort((a, b) => (a < b ? -1 : 1));
}
