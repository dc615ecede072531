import { describe, expect, it } from "vitest";
import { writeHex } from "../../core/hex";
import { streamBytes, xorshift32 } from "../../core/xorshift";
import { ByteKeys, trimmed, withRoom } from "./byte-keys";

const SEED = Number(process.env.SEED ?? Date.now() % 2 ** 31);
const hexOf = (b: Uint8Array) => `0x${Buffer.from(b).toString("hex")}`;

describe(`ByteKeys (SEED=${SEED})`, () => {
  it("numbers keys in the order first added, finds each again, and knows the ones never added", () => {
    const next = xorshift32(SEED);
    const keys = new ByteKeys(20, 2);
    const reference = new Map<string, number>();
    // Few distinct bytes, so that keys share prefixes and hash slots; many more keys than the first
    // capacity. Trimmed now and then, as a loaded copy is: the keys added after it grow it again.
    for (let i = 0; i < 20_000; i++) {
      if (next() % 1_000 === 0) keys.trim();
      const key = streamBytes(next, 20).map((b) => b & 0x3);
      const hex = hexOf(key);
      const id = keys.add(key);
      if (!reference.has(hex)) reference.set(hex, reference.size);
      expect(id).toBe(reference.get(hex));
    }
    expect(keys.size).toBe(reference.size);
    for (const [hex, id] of reference) {
      const key = new Uint8Array(20);
      writeHex(key, 0, hex);
      expect(keys.find(key)).toBe(id);
      expect(keys.hex(id)).toBe(hex);
      expect(keys.hex(id, 4, 8)).toBe(`0x${hex.slice(2 + 8, 2 + 24)}`);
      expect(keys.byte(id, 19)).toBe(Number.parseInt(hex.slice(40, 42), 16));
    }
    expect(keys.find(Uint8Array.from({ length: 20 }, () => 0xff))).toBe(-1);
    // Keys never added, so many that some share with a key held the bits of the hash its slot
    // keeps (16 bits at this size): those bits alone must not find a key.
    for (let i = 0; i < 1_000_000; i++) {
      const absent = streamBytes(next, 20).map((b) => b & 0x3);
      absent[i % 20] = 4;
      if (keys.find(absent) !== -1) expect.fail(`found ${hexOf(absent)}, never added`);
    }
  });

  it("reads only the first `width` bytes of a longer buffer", () => {
    const keys = new ByteKeys(2);
    const id = keys.add(Uint8Array.of(1, 2, 3));
    expect(keys.find(Uint8Array.of(1, 2, 9))).toBe(id);
    expect(keys.find(Uint8Array.of(1, 3))).toBe(-1);
  });
});

describe("trimmed", () => {
  it("keeps an array with little room to spare; cuts one with more to its items and an eighth more", () => {
    const a = Int32Array.from({ length: 18 }, (_, i) => i);
    expect(trimmed(a, 16)).toBe(a);
    const cut = trimmed(a, 8);
    expect(cut).toBeInstanceOf(Int32Array);
    expect([...cut]).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    // Still grows from there as before.
    expect([...withRoom(trimmed(Uint8Array.of(1, 2, 3, 4), 1), 2, 9)]).toEqual([1, 9]);
  });
});

describe("withRoom", () => {
  it("keeps the array when it has room; otherwise a larger one of the same kind, items kept, the rest filled", () => {
    const a = Int32Array.of(1, 2, 3);
    expect(withRoom(a, 3)).toBe(a);
    const grown = withRoom(a, 4, -1);
    expect(grown).toBeInstanceOf(Int32Array);
    expect([...grown]).toEqual([1, 2, 3, -1, -1, -1]);
    expect([...withRoom(Float64Array.of(0.5), 5)]).toEqual([0.5, 0, 0, 0, 0]);
  });
});
