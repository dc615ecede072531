import { numberToBytes } from "viem";
import { describe, expect, it } from "vitest";
import { writeHex, writeUint256 } from "./hex";
import { streamBytes, xorshift32 } from "./xorshift";

const SEED = Number(process.env.SEED ?? Date.now() % 2 ** 31);
const hexOf = (b: Uint8Array) => `0x${Buffer.from(b).toString("hex")}`;

describe(`writeHex (SEED=${SEED})`, () => {
  it("writes what Buffer.from(hex) reads, in lower and upper case, at an offset, and says where it ended", () => {
    const next = xorshift32(SEED ^ 0x9e3779b9);
    for (let i = 0; i < 500; i++) {
      const b = streamBytes(next, 1 + (i % 40));
      const target = new Uint8Array(b.length + 5);
      expect(writeHex(target, 3, hexOf(b))).toBe(3 + b.length);
      expect(target.subarray(3, 3 + b.length)).toEqual(b);
      target.fill(0);
      writeHex(target, 3, `0x${hexOf(b).slice(2).toUpperCase()}`);
      expect(target.subarray(3, 3 + b.length)).toEqual(b);
      expect([...target.subarray(0, 3), ...target.subarray(3 + b.length)]).toEqual([0, 0, 0, 0, 0]);
    }
  });
});

describe(`writeUint256 (SEED=${SEED})`, () => {
  it("writes abi.encodePacked's 32 big-endian bytes of 0, 1, 2^256-1 and seeded values of every width", () => {
    const next = xorshift32(SEED ^ 0x85ebca6b);
    const values = [0n, 1n, 2n ** 256n - 1n];
    for (let i = 0; i < 300; i++) values.push(BigInt(hexOf(streamBytes(next, 1 + (i % 32)))));
    for (const value of values) {
      // Over bytes already written: every one of the 32 is written, zeros too.
      const target = new Uint8Array(2 + 32 + 2).fill(0xff);
      expect(writeUint256(target, 2, value)).toBe(34);
      expect(target.subarray(2, 34), String(value)).toEqual(numberToBytes(value, { size: 32 }));
      expect([...target.subarray(0, 2), ...target.subarray(34)]).toEqual([0xff, 0xff, 0xff, 0xff]);
    }
  });
});
