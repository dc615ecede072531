import { describe, expect, it } from "vitest";
import { blockAt, blockBetween, nearest, probes, type Sample } from "./moment";
import { xorshift32 } from "./xorshift";

const SEED = Number(process.env.SEED) || 20261129;

/** A chain of `length` blocks from `start`, each `gap()` seconds after the one before. */
function chain(length: number, gap: () => number, start = 1_700_000_000): bigint[] {
  const stamps = [BigInt(start)];
  for (let i = 1; i < length; i++) stamps.push(stamps[i - 1]! + BigInt(gap()));
  return stamps;
}

/** The newest block at or before `moment`, by reading every block. */
function truth(stamps: bigint[], moment: bigint): bigint {
  let block = stamps.length - 1;
  while (stamps[block]! > moment) block--;
  return BigInt(block);
}

const sampleOf = (stamps: bigint[], block: number): Sample => ({ block: BigInt(block), timestamp: stamps[block]! });

/** blockAt over `stamps` between the nearest of `known` blocks; the headers it read, counted. */
async function find(stamps: bigint[], moment: bigint, known: number[], step: bigint, k = 32) {
  const before = Math.max(...known.filter((b) => stamps[b]! <= moment));
  const after = Math.min(...known.filter((b) => stamps[b]! > moment));
  let reads = 0;
  const { block, read } = await blockAt(
    moment,
    sampleOf(stamps, before),
    sampleOf(stamps, after),
    step,
    async (blocks) => {
      reads += blocks.length;
      return blocks.map((b) => sampleOf(stamps, Number(b)));
    },
    k,
  );
  for (const s of read) expect(s.timestamp).toBe(stamps[Number(s.block)]);
  return { block, reads };
}

/** Random moments from the first block's timestamp to just before the last's. */
function moments(stamps: bigint[], next: () => number, count: number): bigint[] {
  const first = stamps[0]!;
  const span = Number(stamps.at(-1)! - first);
  return Array.from({ length: count }, () => first + BigInt(next() % span));
}

describe("blockAt", () => {
  it(`finds the newest block at or before any moment, where timestamps repeat and jump (SEED=${SEED})`, async () => {
    const next = xorshift32(SEED);
    // Sub-second blocks (many share a second), pauses, and single steps.
    const gaps = [0, 0, 0, 0, 1, 1, 2, 12, 300];
    const stamps = chain(20_000, () => gaps[next() % gaps.length]!);
    const known = [0, 19_999, ...Array.from({ length: 20 }, () => next() % 20_000)];
    for (const moment of moments(stamps, next, 300)) {
      const { block, reads } = await find(stamps, moment, known, 0n);
      expect(block, `moment ${moment} (SEED=${SEED})`).toBe(truth(stamps, moment));
      // Each round of 32 headers narrows the gap 33 times: 20,000 blocks in three rounds.
      expect(reads).toBeLessThanOrEqual(3 * 32);
    }
  });

  it("reads no header on a chain whose every block is the step after the one before", async () => {
    const stamps = chain(5_000, () => 2);
    const next = xorshift32(SEED);
    for (const moment of moments(stamps, next, 100)) {
      const { block, reads } = await find(stamps, moment, [0, 4_999], 2n);
      expect(block).toBe(truth(stamps, moment));
      expect(reads).toBe(0);
    }
  });

  it(`reads headers only to split off a missed slot, then counts steps (SEED=${SEED + 1})`, async () => {
    const next = xorshift32(SEED + 1);
    // Ethereum's slots: 12 s, and now and then one or two slots without a block.
    const stamps = chain(10_000, () => (next() % 100 === 0 ? 24 + 12 * (next() % 2) : 12));
    for (const moment of moments(stamps, next, 200)) {
      const { block } = await find(stamps, moment, [0, 9_999], 12n);
      expect(block, `moment ${moment} (SEED=${SEED + 1})`).toBe(truth(stamps, moment));
    }
    // A moment in a stretch without a missed slot, pinned by samples at its ends: no header read.
    const regular = chain(1_000, () => 12);
    expect(await find(regular, regular[500]! + 5n, [0, 999], 12n)).toEqual({ block: 500n, reads: 0 });
  });

  it("answers the last block of a run of equal timestamps, and the block before a jump", async () => {
    // Blocks 0..9: 100, then 10..19: 105, then 20: 200.
    const stamps = [...Array(10).fill(100n), ...Array(10).fill(105n), 200n] as bigint[];
    for (const [moment, expected] of [
      [100n, 9n],
      [104n, 9n],
      [105n, 19n],
      [199n, 19n],
    ] as const)
      expect((await find(stamps, moment, [0, 20], 0n, 2)).block).toBe(expected);
  });

  it("throws when the headers read are not of the samples' chain, or a moment is outside them", async () => {
    const before = { block: 0n, timestamp: 100n };
    const after = { block: 10n, timestamp: 200n };
    await expect(
      blockAt(150n, before, after, 0n, async (b) => b.map((block) => ({ block, timestamp: 300n }))),
    ).rejects.toThrow(/not of one chain/);
    await expect(blockAt(150n, before, after, 0n, async () => [])).rejects.toThrow(/asked for the headers/);
    await expect(blockAt(200n, before, after, 0n, async () => [])).rejects.toThrow(RangeError);
  });
});

describe("blockBetween, probes, nearest", () => {
  it("tells the block from adjacent samples, or from a gap of whole steps only", () => {
    const at = (block: bigint, timestamp: bigint) => ({ block, timestamp });
    expect(blockBetween(150n, at(7n, 100n), at(8n, 200n), 0n)).toBe(7n);
    expect(blockBetween(125n, at(0n, 100n), at(10n, 220n), 12n)).toBe(2n);
    // 10 blocks in 121 s with a step of 12: one step is longer, which is unknown.
    expect(blockBetween(125n, at(0n, 100n), at(10n, 221n), 12n)).toBeUndefined();
    expect(blockBetween(125n, at(0n, 100n), at(10n, 220n), 0n)).toBeUndefined();
  });

  it("spreads at most k probes strictly between the samples, each once", () => {
    const low = { block: 100n, timestamp: 0n };
    for (const [high, k] of [
      [102n, 32],
      [105n, 32],
      [1_000_000n, 32],
      [134n, 32],
      [10n ** 30n, 7],
    ] as const) {
      const blocks = probes(low, { block: high, timestamp: 1n }, k);
      expect(blocks.length).toBe(Math.min(k, Number(high - low.block - 1n)));
      for (let i = 0; i < blocks.length; i++) {
        expect(blocks[i]! > (i === 0 ? low.block : blocks[i - 1]!)).toBe(true);
        expect(blocks[i]! < high).toBe(true);
      }
    }
  });

  it("keeps the nearest sample on each side of the moment", () => {
    const s = (block: bigint, timestamp: bigint) => ({ block, timestamp });
    expect(nearest(150n, s(0n, 100n), s(10n, 200n), [s(3n, 120n), s(5n, 150n), s(7n, 151n), s(9n, 190n)])).toEqual([
      s(5n, 150n),
      s(7n, 151n),
    ]);
  });
});
