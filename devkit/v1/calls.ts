/**
 * The v1 DelegationRegistry's writes, as calls, and the key of a delegation: what the tests, the
 * demo and their models name delegations by.
 */
import { type Abi, type Address, encodeFunctionData, type Hex, zeroAddress } from "viem";

const lower = (a: string) => a.toLowerCase() as Address;

export type RegistryCall =
  | { fn: "delegateForAll"; delegate: Address; value: boolean }
  | { fn: "delegateForContract"; delegate: Address; contract: Address; value: boolean }
  | { fn: "delegateForToken"; delegate: Address; contract: Address; tokenId: bigint; value: boolean }
  | { fn: "revokeAllDelegates" }
  | { fn: "revokeDelegate"; delegate: Address }
  | { fn: "revokeSelf"; vault: Address }
  /** A view called with CALL (not STATICCALL): it emits nothing. Used only where asked for. */
  | { fn: "checkDelegateForAll"; delegate: Address; vault: Address };

export type DelegateCall = Extract<RegistryCall, { value: boolean }>;

/** The calldata of a registry call. */
export function encodeCall(abi: Abi, c: RegistryCall): Hex {
  const args: readonly unknown[] = (() => {
    switch (c.fn) {
      case "delegateForAll":
        return [c.delegate, c.value];
      case "delegateForContract":
        return [c.delegate, c.contract, c.value];
      case "delegateForToken":
        return [c.delegate, c.contract, c.tokenId, c.value];
      case "revokeAllDelegates":
        return [];
      case "revokeDelegate":
        return [c.delegate];
      case "revokeSelf":
        return [c.vault];
      case "checkDelegateForAll":
        return [c.delegate, c.vault];
    }
  })();
  return encodeFunctionData({ abi, functionName: c.fn, args } as never);
}

export type V1Type = "ALL" | "CONTRACT" | "TOKEN";
/** A delegation's key: the contract stores one delegation per key (at the vault's and the pair's versions). */
export type Key = { type: V1Type; vault: Address; delegate: Address; contract: Address; tokenId: bigint };

/** A key as a string, addresses lowercase: one per delegation. */
export const keyString = (k: Key) =>
  `${k.type}|${lower(k.vault)}|${lower(k.delegate)}|${lower(k.contract)}|${k.tokenId}`;

/** The key of the delegation a delegateFor* call of `vault` writes. */
export function keyOf(vault: Address, c: DelegateCall): Key {
  const v = lower(vault);
  const d = lower(c.delegate);
  switch (c.fn) {
    case "delegateForAll":
      return { type: "ALL", vault: v, delegate: d, contract: zeroAddress, tokenId: 0n };
    case "delegateForContract":
      return { type: "CONTRACT", vault: v, delegate: d, contract: lower(c.contract), tokenId: 0n };
    case "delegateForToken":
      return { type: "TOKEN", vault: v, delegate: d, contract: lower(c.contract), tokenId: c.tokenId };
  }
}
