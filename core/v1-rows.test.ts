import { type Address, getAddress, zeroAddress } from "viem";
import { describe, expect, it } from "vitest";
import type { EventPlace } from "./rows";
import type { V1State } from "./v1";
import { v1Delegated, v1DelegateWrites, v1RevokeWrites } from "./v1-rows";

const vault: Address = "0x1111111111111111111111111111111111111111";
const delegate: Address = "0x2222222222222222222222222222222222222222";
const token: Address = "0x3333333333333333333333333333333333333333";

const place = (block: bigint, logIndex: number): EventPlace => ({
  chainId: 7,
  id: `event-${block}-${logIndex}`,
  block: { number: block, hash: `0x${block.toString(16).padStart(64, "0")}`, timestamp: 1000n + block },
  transactionHash: `0x${"0f".repeat(32)}`,
  logIndex,
});
const history = (block: bigint, logIndex: number) => ({
  id: `event-${block}-${logIndex}`,
  chainId: 7,
  blockNumber: block,
  blockHash: `0x${block.toString(16).padStart(64, "0")}`,
  blockTimestamp: 1000n + block,
  transactionHash: `0x${"0f".repeat(32)}`,
  logIndex,
});
const tokenLog = (value: boolean) =>
  v1Delegated("TOKEN", {
    vault: getAddress(vault),
    delegate: getAddress(delegate),
    contract_: getAddress(token),
    tokenId: 5n,
    value,
  });
const current = { vault: 0, pair: 0 };

describe("v1Delegated", () => {
  it("keys the delegation as the tables do: lowercase, the zero address and token 0 where its type has none", () => {
    expect(tokenLog(true).key).toEqual({ type: "TOKEN", vault, delegate, contract: token, tokenId: 5n });
    const all = v1Delegated("ALL", { vault, delegate, value: true });
    expect(all.key).toEqual({ type: "ALL", vault, delegate, contract: zeroAddress, tokenId: 0n });
  });
});

describe("v1DelegateWrites", () => {
  it("writes the event, the key's state and its change at the current versions, and chain_head", () => {
    const { insert, put } = v1DelegateWrites(place(9n, 2), tokenLog(true), undefined, { vault: 1, pair: 3 });
    const key = { type: "TOKEN", vault, delegate, contract: token, tokenId: 5n };
    const state = { enabled: true, vaultVersion: 1, pairVersion: 3, createdBlock: 9n, createdLogIndex: 2 };
    expect(insert.v1Event).toEqual({
      ...history(9n, 2),
      kind: "DelegateForToken",
      vault,
      delegate,
      contract: token,
      tokenId: 5n,
      value: true,
      revokedDelegate: null,
    });
    expect(put.v1Delegation).toEqual({ chainId: 7, ...key, ...state, firstBlock: 9n, updatedBlock: 9n });
    expect(insert.v1DelegationChange).toEqual({
      chainId: 7,
      ...key,
      ...state,
      id: "event-9-2",
      blockNumber: 9n,
      logIndex: 2,
    });
    expect(put.chainHead).toEqual({ chainId: 7, lastEventBlock: 9n });
  });

  it("logs an ALL delegation's event without contract or token", () => {
    const all = v1Delegated("ALL", { vault, delegate, value: true });
    expect(v1DelegateWrites(place(1n, 0), all, undefined, current).insert.v1Event).toMatchObject({
      contract: null,
      tokenId: null,
    });
  });

  it("writes only the event for an unset of what was never set", () => {
    const { insert, put } = v1DelegateWrites(place(9n, 2), tokenLog(false), undefined, current);
    expect(insert.v1DelegationChange).toBeUndefined();
    expect(put.v1Delegation).toBeUndefined();
    expect(insert.v1Event.value).toBe(false);
  });

  it("keeps the creation of a delegation in force, and creates anew one that a revocation voided", () => {
    const prev: V1State & { firstBlock: bigint; updatedBlock: bigint } = {
      enabled: true,
      vaultVersion: 0,
      pairVersion: 0,
      createdBlock: 4n,
      createdLogIndex: 1,
      firstBlock: 3n,
      updatedBlock: 4n,
    };
    const kept = v1DelegateWrites(place(9n, 2), tokenLog(true), prev, current).put.v1Delegation;
    expect(kept).toMatchObject({ createdBlock: 4n, createdLogIndex: 1, updatedBlock: 9n });
    const voided = v1DelegateWrites(place(9n, 2), tokenLog(true), prev, { vault: 1, pair: 0 }).put.v1Delegation;
    expect(voided).toMatchObject({ vaultVersion: 1, createdBlock: 9n, createdLogIndex: 2 });
    const unset = v1DelegateWrites(place(9n, 2), tokenLog(false), prev, current);
    expect(unset.insert.v1DelegationChange).toMatchObject({ enabled: false, createdBlock: 4n, blockNumber: 9n });
    // Where the key was first written, whatever was written since: the change rows do not carry it.
    for (const row of [kept, voided, unset.put.v1Delegation]) expect(row?.firstBlock).toBe(3n);
    expect(unset.insert.v1DelegationChange).not.toHaveProperty("firstBlock");
  });
});

describe("v1RevokeWrites", () => {
  it("bumps the vault's counter for revokeAllDelegates", () => {
    const { insert, put } = v1RevokeWrites(place(6n, 0), { kind: "RevokeAllDelegates", vault }, 2);
    expect(put.v1VaultVersion).toEqual({ chainId: 7, vault, version: 3, updatedBlock: 6n });
    expect(put.v1PairVersion).toBeUndefined();
    expect(insert.v1VersionChange).toEqual({
      id: "event-6-0",
      chainId: 7,
      blockNumber: 6n,
      logIndex: 0,
      vault,
      delegate: null,
      version: 3,
    });
    expect(insert.v1Event).toEqual({
      ...history(6n, 0),
      kind: "RevokeAllDelegates",
      vault,
      delegate: null,
      contract: null,
      tokenId: null,
      value: null,
      revokedDelegate: null,
    });
  });

  it("bumps the pair's counter for a RevokeDelegate, and logs its sender and the delegate revoked", () => {
    const pair = { vault, delegate };
    const { insert, put } = v1RevokeWrites(place(6n, 1), { kind: "RevokeDelegate", vault, sender: vault, pair }, 0);
    expect(put.v1PairVersion).toEqual({ chainId: 7, vault, delegate, version: 1, updatedBlock: 6n });
    expect(put.v1VaultVersion).toBeUndefined();
    expect(insert.v1VersionChange).toMatchObject({ vault, delegate, version: 1 });
    expect(insert.v1Event).toMatchObject({ kind: "RevokeDelegate", vault, delegate: vault, revokedDelegate: delegate });
    expect(put.chainHead).toEqual({ chainId: 7, lastEventBlock: 6n });
  });
});
