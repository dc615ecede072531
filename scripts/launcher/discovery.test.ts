/**
 * findDeploymentBlock: the first block with code, by binary search over [0, latest], exact for
 * every deployment block and in O(log n) eth_getCode calls.
 */
import { describe, expect, it } from "vitest";
import { findDeploymentBlock } from "./discovery";

/** A chain whose registry was deployed in block `d` (undefined: never), counting the lookups. */
function fakeChain(d: bigint | undefined) {
  const asked: bigint[] = [];
  const hasCode = async (block: bigint) => {
    asked.push(block);
    return d !== undefined && block >= d;
  };
  return { hasCode, asked };
}

/** ceil(log2(n)) for n >= 1. */
const ceilLog2 = (n: bigint) => {
  let bits = 0;
  while (1n << BigInt(bits) < n) bits++;
  return bits;
};

/** One call at latest, then at most ceil(log2(latest + 1)) bisection steps. */
const maxCalls = (latest: bigint) => 1 + ceilLog2(latest + 1n);

describe("findDeploymentBlock", () => {
  it("is exact for every deployment block d in [0, latest], for every latest up to 130", async () => {
    for (let latest = 0n; latest <= 130n; latest++) {
      for (let d = 0n; d <= latest; d++) {
        const { hasCode, asked } = fakeChain(d);
        const found = await findDeploymentBlock(hasCode, latest);
        expect(found, `latest ${latest}, deployed in ${d}`).toBe(d);
        expect(asked.length, `latest ${latest}, deployed in ${d}: ${asked.length} lookups`).toBeLessThanOrEqual(
          maxCalls(latest),
        );
        expect(
          asked.every((b) => b >= 0n && b <= latest),
          `latest ${latest}: asked outside [0, latest]: ${asked}`,
        ).toBe(true);
      }
    }
  });

  it("returns undefined, after one lookup at latest, when there is no code at latest", async () => {
    for (const [latest, d] of [
      [0n, undefined],
      [100n, undefined],
      [100n, 101n],
      [20_000_000n, 20_000_001n],
      [20_000_000n, undefined],
    ] as const) {
      const { hasCode, asked } = fakeChain(d);
      expect(await findDeploymentBlock(hasCode, latest), `latest ${latest}, deployed ${d ?? "never"}`).toBeUndefined();
      expect(asked).toEqual([latest]);
    }
  });

  it("uses O(log n) lookups on long chains: exact at the edges and at random points", async () => {
    let state = 0x2545f491n;
    const random = (below: bigint) => {
      // xorshift64: deterministic, so a failure reproduces.
      state ^= (state << 13n) & 0xffffffffffffffffn;
      state ^= state >> 7n;
      state ^= (state << 17n) & 0xffffffffffffffffn;
      return state % below;
    };
    for (const latest of [1n, 2n, 1_000n, 1_023n, 1_024n, 21_000_000n, 300_000_000n, (1n << 48n) - 1n, 1n << 48n]) {
      const points = [
        0n,
        1n,
        latest / 2n,
        latest - 1n,
        latest,
        ...Array.from({ length: 200 }, () => random(latest + 1n)),
      ];
      for (const d of points.filter((p) => p >= 0n && p <= latest)) {
        const { hasCode, asked } = fakeChain(d);
        expect(await findDeploymentBlock(hasCode, latest), `latest ${latest}, deployed in ${d}`).toBe(d);
        expect(asked.length, `latest ${latest}, deployed in ${d}`).toBeLessThanOrEqual(maxCalls(latest));
      }
    }
    // 21M blocks (Ethereum today) takes at most 26 lookups.
    expect(maxCalls(21_000_000n)).toBe(26);
  });

  it("never asks the same block twice, and the lookups it makes justify the answer", async () => {
    for (const [latest, d] of [
      [1_000_000n, 765_432n],
      [999n, 0n],
      [999n, 999n],
      [64n, 33n],
    ] as const) {
      const { hasCode, asked } = fakeChain(d);
      const found = await findDeploymentBlock(hasCode, latest);
      expect(new Set(asked).size, `latest ${latest}, d ${d}: ${asked}`).toBe(asked.length);
      // The answer is certain from what was asked: code at `found` (or found = latest, asked first),
      // none at found - 1 (unless found = 0).
      expect(asked.includes(found!) || found === latest).toBe(true);
      if (found! > 0n) expect(asked, `latest ${latest}, d ${d}`).toContain(found! - 1n);
    }
  });

  it("passes on a failing lookup's error instead of guessing", async () => {
    const failing = async (block: bigint) => {
      if (block <= 500n) throw new Error(`missing trie node at ${block}`);
      return block >= 700n;
    };
    await expect(findDeploymentBlock(failing, 1000n)).rejects.toThrow(/missing trie node/);
  });
});
