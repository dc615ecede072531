import { describe, expect, it } from "vitest";
import { writeHex } from "./hex";
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
