import type { Address } from "viem";
import { describe, expect, it } from "vitest";
import { type V1SetEvent, V1Sets } from "./v1-sets";

const VAULT: Address = "0x00000000000000000000000000000000000000aa";
const [A, B, C] = ["0x0a", "0x0b", "0x0c"].map((n) => `0x${n.slice(2).padStart(40, "0")}` as Address) as [
  Address,
  Address,
  Address,
];

const all = (delegate: Address, value: boolean, vault = VAULT): V1SetEvent => ({
  kind: "DelegateForAll",
  vault,
  delegate,
  contract: null,
  tokenId: null,
  value,
  revokedDelegate: null,
});
const revoke = (delegate: Address): V1SetEvent => ({
  ...all(VAULT, false),
  kind: "RevokeDelegate",
  revokedDelegate: delegate,
});
const revokeAll: V1SetEvent = { ...all(VAULT, false), kind: "RevokeAllDelegates", delegate: null };

const delegatesOf = (sets: V1Sets) => sets.vaultEntries(VAULT, "ALL").map((entry) => entry.delegate);

describe("V1Sets", () => {
  it("moves the last entry into a removed one's place, as EnumerableSet does", () => {
    const sets = new V1Sets();
    for (const event of [all(A, true), all(B, true), all(C, true), all(A, true), all(A, false)]) sets.apply(event);
    expect(delegatesOf(sets)).toEqual([C, B]);
    expect(sets.delegateEntries(C).map((entry) => entry.vault)).toEqual([VAULT]);
  });

  it("keeps a revoked pair's entry in place, void, and appends its new one", () => {
    const sets = new V1Sets();
    for (const event of [all(A, true), all(B, true), all(C, true), revoke(B), all(B, true)]) sets.apply(event);
    expect(delegatesOf(sets)).toEqual([A, C, B]);
    // Removing B now removes its new entry only: the void one stays, skipped.
    sets.apply(all(B, false));
    expect(delegatesOf(sets)).toEqual([A, C]);
    expect(sets.delegateEntries(B)).toEqual([]);
  });

  it("starts a new vault set at each revokeAllDelegates; the delegate's set keeps the void entries", () => {
    const sets = new V1Sets();
    for (const event of [all(A, true), all(B, true), revokeAll, all(B, true)]) sets.apply(event);
    expect(delegatesOf(sets)).toEqual([B]);
    expect(sets.delegateEntries(A)).toEqual([]);
    expect(sets.delegateEntries(B).map((entry) => entry.vaultVersion)).toEqual([1]);
  });
});
