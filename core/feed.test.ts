import { describe, expect, it } from "vitest";
import { eventKey, type LoggedEntry, reconcile } from "./feed";
import { xorshift32 } from "./xorshift";

const SEED = Number(process.env.SEED) || 20261201;

type Event = { block: number; hash: string; logIndex: number };
const key = (e: Event) => eventKey(e.hash, e.logIndex);
/** A log entry: an event, or the retraction of an entry before it. */
type Entry = { seq: bigint; event?: Event; retracts?: bigint };

/** A chain of blocks, each with a hash and 0–3 events; reorganizations replace a suffix. */
class Chain {
  blocks: { hash: string; events: Event[] }[] = [];
  private minted = 0;
  constructor(private readonly next: () => number) {}

  mine(count: number) {
    for (let i = 0; i < count; i++) {
      const number = this.blocks.length;
      const hash = `0x${(++this.minted).toString(16).padStart(64, "0")}`;
      const events = Array.from({ length: this.next() % 4 }, (_, logIndex) => ({ block: number, hash, logIndex }));
      this.blocks.push({ hash, events });
    }
  }

  /** Replaces the last `depth` blocks with `length` new ones. */
  reorg(depth: number, length: number) {
    this.blocks.length -= Math.min(depth, this.blocks.length);
    this.mine(length);
  }

  events(above = -1): Event[] {
    return this.blocks.slice(above + 1).flatMap((b) => b.events);
  }
}

/** The writer over an append-only log: reconciles above the chain's final block. */
function write(log: Entry[], chain: Chain, final: number) {
  const retracted = new Set(log.flatMap((e) => (e.retracts === undefined ? [] : [e.retracts])));
  const logged: LoggedEntry[] = log
    .filter((e) => e.event && e.event.block > final && !retracted.has(e.seq))
    .map((e) => ({ seq: e.seq, key: key(e.event!) }));
  const { retract, append } = reconcile(logged, chain.events(final), key);
  for (const seq of retract) log.push({ seq: BigInt(log.length + 1), retracts: seq });
  for (const event of append) log.push({ seq: BigInt(log.length + 1), event });
  return { retract, append };
}

/** The log's events less those retracted, in log order. */
function live(log: Entry[]): Event[] {
  const retracted = new Set(log.flatMap((e) => (e.retracts === undefined ? [] : [e.retracts])));
  return log.filter((e) => e.event && !retracted.has(e.seq)).map((e) => e.event!);
}

describe("reconcile", () => {
  const e = (hash: string, logIndex: number) => ({ hash, logIndex });
  const k = (x: { hash: string; logIndex: number }) => eventKey(x.hash, x.logIndex);

  it("appends what follows the entries already logged", () => {
    const logged = [{ seq: 1n, key: k(e("0xa", 0)) }];
    expect(reconcile(logged, [e("0xa", 0), e("0xb", 0), e("0xb", 1)], k)).toEqual({
      retract: [],
      append: [e("0xb", 0), e("0xb", 1)],
    });
  });

  it("retracts a replaced suffix newest first, then appends the new branch", () => {
    const logged = [
      { seq: 4n, key: k(e("0xa", 0)) },
      { seq: 5n, key: k(e("0xb", 0)) },
      { seq: 6n, key: k(e("0xc", 2)) },
    ];
    expect(reconcile(logged, [e("0xa", 0), e("0xB2", 0)], k)).toEqual({ retract: [6n, 5n], append: [e("0xB2", 0)] });
  });

  it("retracts everything when the tables hold nothing above the final block", () => {
    const logged = [{ seq: 9n, key: k(e("0xa", 0)) }];
    expect(reconcile(logged, [], k)).toEqual({ retract: [9n], append: [] });
  });

  it("keys by block hash in any case and log index", () => {
    expect(eventKey("0xAbC", 3)).toBe(eventKey("0xabc", 3));
    expect(eventKey("0xabc", 3)).not.toBe(eventKey("0xabc", 4));
    expect(eventKey("0xabc", 3)).not.toBe(eventKey("0xabd", 3));
  });

  it(`random chains, reorganizations within finality and missed runs: the live log is the chain (SEED=${SEED})`, () => {
    for (let round = 0; round < 200; round++) {
      const next = xorshift32(SEED + round);
      const finality = 1 + (next() % 6);
      const chain = new Chain(next);
      const log: Entry[] = [];
      let final = -1;
      for (let step = 0; step < 60; step++) {
        const action = next() % 3;
        if (action === 0) chain.mine(1 + (next() % 3));
        else if (action === 1) {
          // Never below the final block: the writer may take what is final as settled.
          const depth = Math.min(1 + (next() % finality), chain.blocks.length - final - 1);
          chain.reorg(depth, next() % (depth + 2));
        }
        if (next() % 4 === 0) continue; // the writer did not run this step
        const before = new Set(chain.events().map(key));
        // Above the block it last took as final: a block that became final since it last ran may
        // have been replaced meanwhile.
        const { retract } = write(log, chain, final);
        final = Math.max(final, chain.blocks.length - 1 - finality);
        const where = `round ${round}, step ${step} (SEED=${SEED})`;
        expect(live(log).map(key), where).toEqual(chain.events().map(key));
        // Only what the chain no longer holds is retracted, each once, after itself.
        for (const seq of retract) {
          const original = log[Number(seq) - 1]!;
          expect(original.event && before.has(key(original.event)), where).toBe(false);
        }
        const retractions = log.filter((x) => x.retracts !== undefined);
        expect(new Set(retractions.map((x) => x.retracts)).size, where).toBe(retractions.length);
        for (const x of retractions) expect(x.retracts! < x.seq, where).toBe(true);
      }
    }
  });
});
