import { describe, expect, it } from "vitest";
import type { Sample } from "../../core/moment";
import { xorshift32 } from "../../core/xorshift";
import { Problem } from "../http/problem";
import type { HistoryStore } from "../store/history-store";
import type { ChainPosition } from "../store/store";
import { MomentClock, rpcHeaders } from "./moment";

const CHAIN = 31337;
const SEED = Number(process.env.SEED) || 29112026;

/**
 * A chain of 5,000 blocks: runs of blocks sharing a second, and pauses; events at some blocks; the
 * blocks from `liveFrom` on followed live (chain_tip), none by default.
 */
function world(seed: number, liveFrom = 5_000) {
  const next = xorshift32(seed);
  const stamps = [1_700_000_000n];
  for (let i = 1; i < 5_000; i++) stamps.push(stamps[i - 1]! + BigInt([0, 0, 1, 2, 30][next() % 5]!));
  const events = [...new Set(Array.from({ length: 40 }, () => 100 + (next() % 4_800)))].sort((a, b) => a - b);
  const sample = (block: number): Sample => ({ block: BigInt(block), timestamp: stamps[block]! });
  let statements = 0;
  let liveStatements = 0;
  const history = {
    eventSamples: async (_: number, timestamp: bigint) => {
      statements++;
      const before = events.filter((b) => stamps[b]! <= timestamp).at(-1);
      const after = events.find((b) => stamps[b]! > timestamp);
      return {
        before: before === undefined ? undefined : sample(before),
        after: after === undefined ? undefined : sample(after),
      };
    },
    liveSamples: async (_: number, timestamp: bigint, head: bigint) => {
      liveStatements++;
      const live = stamps.map((_, b) => b).filter((b) => b >= liveFrom && b <= Number(head));
      const before = live.filter((b) => stamps[b]! <= timestamp).at(-1);
      const after = live.find((b) => stamps[b]! > timestamp);
      return {
        before: before === undefined ? undefined : sample(before),
        after: after === undefined ? undefined : sample(after),
      };
    },
  } as Pick<HistoryStore, "eventSamples" | "liveSamples"> as HistoryStore;
  const position = (head: number): ChainPosition =>
    ({ indexedBlock: BigInt(head), indexedTimestamp: Number(stamps[head]), ready: true }) as ChainPosition;
  const truth = (timestamp: bigint) => {
    let block = stamps.length - 1;
    while (stamps[block]! > timestamp) block--;
    return BigInt(block);
  };
  let reads = 0;
  let rounds = 0;
  const read = async (blocks: bigint[]) => {
    reads += blocks.length;
    rounds++;
    return blocks.map((b) => sample(Number(b)));
  };
  const readHeaders = new Map([[CHAIN, read]]);
  const counts = {
    reads: () => reads,
    rounds: () => rounds,
    statements: () => statements + liveStatements,
    eventStatements: () => statements,
  };
  return { next, stamps, history, position, truth, readHeaders, ...counts };
}

describe("MomentClock", () => {
  it(`finds any moment's block before the head's, and keeps the final headers it read (SEED=${SEED})`, async () => {
    const w = world(SEED);
    const clock = new MomentClock(w.readHeaders, () => 64n);
    const head = w.position(4_999);
    const span = Number(w.stamps[4_999]! - w.stamps[0]!);
    const moments = Array.from({ length: 200 }, () => w.stamps[0]! + BigInt(w.next() % span));
    for (const timestamp of moments)
      expect(await clock.blockAt({ history: w.history }, CHAIN, head, { timestamp }), `${timestamp}`).toBe(
        w.truth(timestamp),
      );
    // Asked again, every moment whose block is final is told by what was kept: no header, no statement.
    const [before, statements] = [w.reads(), w.statements()];
    const final = moments.filter((t) => w.truth(t) + 1n <= 4_999n - 64n);
    for (const timestamp of final)
      expect(await clock.blockAt({ history: w.history }, CHAIN, head, { timestamp })).toBe(w.truth(timestamp));
    expect(w.reads()).toBe(before);
    expect(w.statements(), "samples' statements for moments asked before").toBe(statements);
    expect(final.length).toBeGreaterThan(100);
  });

  it("takes the event samples from the store where it holds them in memory: no statement for them", async () => {
    const w = world(SEED);
    const clock = new MomentClock(w.readHeaders, () => 64n);
    const head = w.position(4_999);
    let held = 0;
    // The same samples as the history's, told at once (an in-memory copy: api/replica/event-times.ts).
    const told = new Map<bigint, { before?: Sample; after?: Sample }>();
    const store = {
      eventSamples: (_: number, timestamp: bigint) => {
        held++;
        return told.get(timestamp);
      },
    };
    const span = Number(w.stamps[4_999]! - w.stamps[0]!);
    const moments = Array.from({ length: 200 }, () => w.stamps[0]! + BigInt(w.next() % span));
    for (const timestamp of moments) told.set(timestamp, await w.history.eventSamples(CHAIN, timestamp));
    const statements = w.eventStatements();
    for (const timestamp of moments)
      expect(await clock.blockAt({ store, history: w.history }, CHAIN, head, { timestamp })).toBe(w.truth(timestamp));
    expect(w.eventStatements(), "event samples' statements").toBe(statements);
    expect(held).toBeGreaterThan(100);
  });

  it("tells a moment among the blocks followed live from them, with no header, even without an RPC", async () => {
    const w = world(SEED, 4_000);
    const withRpc = new MomentClock(w.readHeaders, () => 64n);
    const withoutRpc = new MomentClock(new Map(), () => 64n);
    const head = w.position(4_999);
    const span = Number(w.stamps[4_999]! - w.stamps[4_000]!);
    const moments = Array.from({ length: 100 }, () => w.stamps[4_000]! + BigInt(w.next() % span));
    for (const timestamp of moments)
      for (const clock of [withRpc, withoutRpc])
        expect(await clock.blockAt({ history: w.history }, CHAIN, head, { timestamp }), `${timestamp}`).toBe(
          w.truth(timestamp),
        );
    expect(w.reads(), "headers read").toBe(0);
    // Before the live start the headers tell it, as before.
    const older = w.stamps[100]! + BigInt(w.next() % Number(w.stamps[3_900]! - w.stamps[100]!));
    expect(await withRpc.blockAt({ history: w.history }, CHAIN, head, { timestamp: older })).toBe(w.truth(older));
    expect(w.reads()).toBeGreaterThan(0);
  });

  it("refuses a moment at or past the newest indexed block's timestamp: the next block may share it", async () => {
    const w = world(SEED);
    const clock = new MomentClock(w.readHeaders, () => 64n);
    const head = w.position(3_000);
    const problem = await clock
      .blockAt({ history: w.history }, CHAIN, head, { timestamp: w.stamps[3_000]! })
      .catch((e: unknown) => e);
    expect(problem).toBeInstanceOf(Problem);
    expect((problem as Problem).code).toBe("block_not_indexed");
  });

  it("without an RPC, answers from samples alone and refuses with a reason where they do not tell", async () => {
    const w = world(SEED);
    // Given another chain's RPC, not this one's.
    const clock = new MomentClock(new Map([[1, w.readHeaders.get(CHAIN)!]]), () => 64n);
    const head = w.position(4_999);
    const answers = await Promise.all(
      Array.from({ length: 100 }, async () => {
        const timestamp = w.stamps[0]! + BigInt(w.next() % Number(w.stamps[4_999]! - w.stamps[0]!));
        return clock.blockAt({ history: w.history }, CHAIN, head, { timestamp }).then(
          (block) => ({ timestamp, block }),
          (error: Problem) => error,
        );
      }),
    );
    for (const answer of answers) {
      if (answer instanceof Problem)
        expect(answer.detail).toMatch(/RPC, which this process is not given \(PONDER_RPC_URL_31337\)/);
      else expect(answer.block).toBe(w.truth(answer.timestamp));
    }
    expect(answers.some((a) => a instanceof Problem)).toBe(true);
  });

  it("charges the request a unit per round of headers, before reading them", async () => {
    const w = world(SEED);
    const clock = new MomentClock(w.readHeaders, () => 64n);
    const spent: number[] = [];
    const budget = { spend: async (units: number) => void spent.push(units) };
    const timestamp = w.stamps[2_500]!;
    await clock.blockAt({ history: w.history, budget }, CHAIN, w.position(4_999), { timestamp });
    // As many units as rounds of headers read, all of one.
    expect(spent.length).toBe(w.rounds());
    expect(spent.every((u) => u === 1) && spent.length > 0).toBe(true);
    const refused = new Problem("rate_limited", "spent");
    const broke = { spend: async () => Promise.reject(refused) };
    const before = w.reads();
    const other = w.stamps[1_000]!;
    await expect(
      new MomentClock(w.readHeaders, () => 64n).blockAt(
        { history: w.history, budget: broke },
        CHAIN,
        w.position(4_999),
        {
          timestamp: other,
        },
      ),
    ).rejects.toBe(refused);
    expect(w.reads(), "no header read once the budget refused").toBe(before);
  });

  it("refuses a moment before the chain's first block", async () => {
    const w = world(SEED);
    const clock = new MomentClock(w.readHeaders, () => 64n);
    const problem = await clock
      .blockAt({ history: w.history }, CHAIN, w.position(4_999), { timestamp: w.stamps[0]! - 1n })
      .catch((e: unknown) => e);
    expect((problem as Problem).code).toBe("invalid_parameter");
  });

  it("says an RPC that fails is the chain's trouble, never naming its URL (it may hold a key)", async () => {
    const readers = rpcHeaders([
      { id: CHAIN, rpc: ["http://127.0.0.1:1/v2/secret-key-42"] },
      { id: 1, rpc: [] },
    ]);
    const problem = (await readers.get(CHAIN)!([1n]).catch((e: unknown) => e)) as Problem;
    expect(problem).toBeInstanceOf(Problem);
    expect(problem.status).toBe(503);
    expect(problem.code).toBe("chain_syncing");
    expect(JSON.stringify(problem)).not.toMatch(/secret-key-42|127\.0\.0\.1/);
    // A chain given no URL has no reader: its moments are refused as not told (above).
    expect([...readers.keys()]).toEqual([CHAIN]);
  });
});
