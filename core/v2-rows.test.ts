import { type Address, getAddress, type Hex, zeroHash } from "viem";
import { describe, expect, it } from "vitest";
import type { EventPlace } from "./rows";
import { v2DelegationHash } from "./v2";
import { type V2Logged, type V2Prev, v2Logged, v2Writes } from "./v2-rows";

const from: Address = "0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const to: Address = "0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
const token: Address = "0xcccccccccccccccccccccccccccccccccccccccc";
const rights: Hex = `0x${"ab".repeat(32)}`;

const place = (block: bigint, logIndex: number): EventPlace => ({
  chainId: 7,
  id: `event-${block}-${logIndex}`,
  block: { number: block, hash: `0x${block.toString(16).padStart(64, "0")}`, timestamp: 1000n + block },
  transactionHash: `0x${"0f".repeat(32)}`,
  logIndex,
});

/** The event's rows, and the delegation's row after it (for the next event to read). */
function apply(at: EventPlace, logged: V2Logged, prev: V2Prev | undefined) {
  const writes = v2Writes(at, logged, prev);
  return { writes, row: writes.put.v2Delegation ?? prev };
}

describe("v2Logged", () => {
  it("lowercases addresses and rights, hashes the key as the contract does, and reads the change by type", () => {
    const args = {
      from: getAddress(from),
      to: getAddress(to),
      rights: rights.toUpperCase().replace("0X", "0x") as Hex,
    };
    const log = v2Logged("ERC1155", { ...args, contract_: getAddress(token), tokenId: 9n, amount: 4n });
    const key = { type: "ERC1155", from, to, rights, contract: token, tokenId: 9n } as const;
    expect(log.key).toEqual(key);
    expect(log.hash).toBe(v2DelegationHash(key));
    expect(log.change).toEqual({ amount: 4n });
    expect(v2Logged("ALL", { ...args, enable: false }).change).toEqual({ enable: false });
  });
});

describe("v2Writes", () => {
  const erc20 = (amount: bigint) => v2Logged("ERC20", { from, to, rights: zeroHash, contract_: token, amount });

  it("writes the event's history row, and chain_head at its block", () => {
    const { insert, put } = v2Writes(place(12n, 4), erc20(50n), undefined);
    expect(insert.v2Event).toEqual({
      id: "event-12-4",
      chainId: 7,
      blockNumber: 12n,
      blockHash: `0x${"0".repeat(63)}c`,
      blockTimestamp: 1012n,
      transactionHash: `0x${"0f".repeat(32)}`,
      logIndex: 4,
      kind: "DelegateERC20",
      hash: erc20(50n).hash,
      from,
      to,
      contract: token,
      tokenId: null,
      rights: zeroHash,
      amount: 50n,
      enable: null,
    });
    expect(put.chainHead).toEqual({ chainId: 7, lastEventBlock: 12n });
  });

  it("creates a delegation at its first enable, and keeps that position through a revoke and a new amount", () => {
    const first = apply(place(12n, 4), erc20(50n), undefined);
    expect(first.row).toEqual({
      chainId: 7,
      hash: erc20(50n).hash,
      delegationType: "ERC20",
      from,
      to,
      contract: token,
      tokenId: null,
      rights: zeroHash,
      enabled: true,
      amount: 50n,
      firstBlock: 12n,
      firstLogIndex: 4,
      updatedBlock: 12n,
      eventCount: 1,
    });
    const revoked = apply(place(20n, 0), erc20(0n), first.row);
    expect(revoked.row).toMatchObject({
      enabled: false,
      amount: 0n,
      firstBlock: 12n,
      updatedBlock: 20n,
      eventCount: 2,
    });
    const again = apply(place(30n, 1), erc20(70n), revoked.row);
    expect(again.row).toMatchObject({ enabled: true, amount: 70n, firstBlock: 12n, firstLogIndex: 4, eventCount: 3 });
  });

  it("writes no delegation for a revoke of what was never enabled, but counts one that changes nothing", () => {
    const revoke = v2Logged("ALL", { from, to, rights, enable: false });
    const never = v2Writes(place(3n, 0), revoke, undefined);
    expect(never.put.v2Delegation).toBeUndefined();
    expect(never.insert.v2Event.enable).toBe(false);
    const enabled = apply(place(4n, 1), v2Logged("ALL", { from, to, rights, enable: true }), undefined).row;
    expect(enabled).toMatchObject({ amount: null, contract: null, tokenId: null, enabled: true });
    const twice = apply(place(6n, 0), revoke, apply(place(5n, 0), revoke, enabled).row).row;
    expect(twice).toMatchObject({ enabled: false, amount: null, firstBlock: 4n, updatedBlock: 6n, eventCount: 3 });
  });
});
