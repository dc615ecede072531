import { type Address, type Hex, zeroAddress, zeroHash } from "viem";
import { describe, expect, it } from "vitest";
import { ChainState, rowKey, type StateRow, type V1Entry, type V2Entry } from "./chain-state";

const A = "0x000000000000000000000000000000000000000a" as Address;
const B = "0x000000000000000000000000000000000000000b" as Address;
const C = "0x000000000000000000000000000000000000000c" as Address;
const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as Hex;

const v2 = (n: number, from: Address, to: Address, at: [number, number], more: Partial<V2Entry> = {}): StateRow => ({
  table: "v2",
  row: {
    hash: hash(n),
    delegationType: "ALL",
    from,
    to,
    contract: null,
    tokenId: null,
    rights: zeroHash,
    amount: null,
    enabled: true,
    firstBlock: at[0],
    firstLogIndex: at[1],
    updatedBlock: at[0],
    ...more,
  },
});
const v1 = (vault: Address, delegate: Address, at: [number, number], more: Partial<V1Entry> = {}): StateRow => ({
  table: "v1",
  row: {
    type: "ALL",
    vault,
    delegate,
    contract: zeroAddress,
    tokenId: 0n,
    enabled: true,
    vaultVersion: 0,
    pairVersion: 0,
    createdBlock: at[0],
    createdLogIndex: at[1],
    updatedBlock: at[0],
    ...more,
  },
});
const put = (s: ChainState, r: StateRow, final = 0) => s.put(rowKey(r), r, final);
const hashesOf = (s: ChainState, w: Address) => s.v2Wallet(w).map((r) => r.to + r.from);

describe("ChainState", () => {
  it("lists a wallet's enabled v2 rows, incoming and outgoing, in first-enable order; a self-delegation once", () => {
    const s = new ChainState();
    put(s, v2(1, A, B, [5, 0]));
    put(s, v2(2, C, A, [3, 1]));
    put(s, v2(3, A, A, [7, 2]));
    put(s, v2(4, A, C, [6, 0], { enabled: false }));
    expect(s.v2Wallet(A).map((r) => [r.from, r.to])).toEqual([
      [C, A],
      [A, B],
      [A, A],
    ]);
    expect(s.v2Wallet(B).map((r) => r.from)).toEqual([A]);
  });

  it("an update keeps the row's place; a revoke hides it and a re-enable shows it in its first place", () => {
    const s = new ChainState();
    put(s, v2(1, A, B, [1, 0]));
    put(s, v2(2, A, C, [2, 0]));
    put(s, v2(1, A, B, [1, 0], { enabled: false, updatedBlock: 3 }));
    expect(s.v2Wallet(A).map((r) => r.to)).toEqual([C]);
    expect(s.v2Enabled([hash(1), hash(2)])).toEqual(new Map([[hash(2), { enabled: true, amount: 0n }]]));
    put(s, v2(1, A, B, [1, 0], { updatedBlock: 4 }));
    expect(s.v2Wallet(A).map((r) => r.to)).toEqual([B, C]);
  });

  it("amounts: v2Enabled reports the amount of enabled amount rows, nothing for others", () => {
    const s = new ChainState();
    put(s, v2(1, A, B, [1, 0], { delegationType: "ERC20", contract: C, amount: 7n }));
    put(s, v2(2, A, B, [1, 1], { delegationType: "ERC20", contract: C, amount: 0n, enabled: false }));
    expect(s.v2Enabled([hash(1), hash(2), hash(3)])).toEqual(new Map([[hash(1), { enabled: true, amount: 7n }]]));
  });

  it("a row put back in another place (after a reorganization) is listed there", () => {
    const s = new ChainState();
    put(s, v2(1, A, B, [1, 0]));
    put(s, v2(2, A, C, [2, 0]));
    put(s, v2(3, A, B, [3, 0]));
    s.put(rowKey(v2(1, A, B, [1, 0])), undefined, 0);
    put(s, v2(1, A, B, [4, 0]));
    put(s, v2(4, C, A, [2, 5]));
    expect(s.v2Wallet(A).map((r) => r.to + r.from)).toEqual([C + A, A + C, B + A, B + A]);
    expect(hashesOf(s, B).length).toBe(2);
  });

  it("v1: in force only at the current vault and pair versions, ordered by creation", () => {
    const s = new ChainState();
    put(s, v1(A, B, [4, 0]));
    put(s, v1(A, C, [2, 0]));
    put(s, v1(C, A, [3, 0], { type: "TOKEN", contract: B, tokenId: 9n }));
    expect(s.v1Wallet(A).map((r) => [r.vault, r.delegate])).toEqual([
      [A, C],
      [C, A],
      [A, B],
    ]);
    // revokeDelegate(B) by A: the pair's version moves on.
    put(s, { table: "pair", row: { vault: A, delegate: B, version: 1, updatedBlock: 5 } });
    expect(s.v1Wallet(A).map((r) => r.delegate)).toEqual([C, A]);
    // revokeAllDelegates by A.
    put(s, { table: "vault", row: { vault: A, version: 1, updatedBlock: 6 } });
    expect(s.v1Wallet(A).map((r) => r.vault)).toEqual([C]);
    // Delegated again at the new versions: in force, at its new place.
    put(s, v1(A, B, [7, 0], { vaultVersion: 1, pairVersion: 1 }));
    expect(s.v1InForce([{ type: "ALL", vault: A, delegate: B, contract: zeroAddress, tokenId: 0n }])).toEqual([
      { type: "ALL", vault: A, delegate: B, contract: zeroAddress, tokenId: 0n },
    ]);
    put(s, v1(A, B, [7, 0], { vaultVersion: 1, pairVersion: 1, enabled: false, updatedBlock: 8 }));
    expect(s.v1InForce([{ type: "ALL", vault: A, delegate: B, contract: zeroAddress, tokenId: 0n }])).toEqual([]);
  });

  it("remembers the rows each block past the final one changed, and forgets final blocks", () => {
    const s = new ChainState();
    put(s, v2(1, A, B, [3, 0]), 4);
    put(s, v2(2, A, B, [5, 0]), 4);
    put(s, v1(A, B, [6, 0]), 4);
    put(s, { table: "vault", row: { vault: A, version: 1, updatedBlock: 7 } }, 4);
    expect([...s.touched.keys()].sort()).toEqual([5, 6, 7]);
    expect(s.takeTouchedAfter(5)).toEqual(new Set([rowKey(v1(A, B, [6, 0])), `vault:${A}`]));
    expect([...s.touched.keys()]).toEqual([5]);
    s.fingerprints.set(5, "x").set(9, "y");
    s.finalize(5);
    expect([...s.touched.keys()]).toEqual([]);
    expect([...s.fingerprints.keys()]).toEqual([9]);
  });

  it("removing a row takes it out of every wallet's list", () => {
    const s = new ChainState();
    put(s, v2(1, A, B, [1, 0]));
    put(s, v1(A, B, [1, 1]));
    s.put(rowKey(v2(1, A, B, [1, 0])), undefined, 0);
    s.put(rowKey(v1(A, B, [1, 1])), undefined, 0);
    expect(s.v2Wallet(A)).toEqual([]);
    expect(s.v2Wallet(B)).toEqual([]);
    expect(s.v1Wallet(A)).toEqual([]);
    expect(s.v2Enabled([hash(1)]).size).toBe(0);
  });
});
