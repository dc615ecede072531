import type { Hex } from "viem";
import { describe, expect, it } from "vitest";
import { replacedBlock } from "./deep-reorg";

const h = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as Hex;
const indexed = [
  { number: 10n, hash: h(10) },
  { number: 20n, hash: h(20) },
  { number: 30n, hash: h(30) },
];

describe("replacedBlock", () => {
  it("finds nothing while the chain has every indexed block at or below the final one (case aside)", () => {
    const chain = new Map([
      [10n, h(10)],
      [20n, h(20).toUpperCase().replace("0X", "0x") as Hex],
      [30n, h(30)],
    ]);
    expect(replacedBlock(indexed, chain, 30n)).toBeUndefined();
  });

  it("finds the lowest indexed block at or below the final one that the chain has under another hash", () => {
    const chain = new Map([
      [10n, h(10)],
      [20n, h(21)],
      [30n, h(31)],
    ]);
    expect(replacedBlock(indexed, chain, 30n)).toEqual({ number: 20n, hash: h(20), chainHash: h(21) });
  });

  it("leaves blocks past the final one to the indexer, which reverts them itself", () => {
    const chain = new Map([
      [10n, h(10)],
      [20n, h(20)],
      [30n, h(31)],
    ]);
    expect(replacedBlock(indexed, chain, 29n)).toBeUndefined();
    expect(replacedBlock(indexed, chain, 30n)?.number).toBe(30n);
  });

  it("takes a block the chain does not give as no evidence", () => {
    expect(replacedBlock(indexed, new Map([[20n, null]]), 30n)).toBeUndefined();
  });
});
