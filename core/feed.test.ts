import { describe, expect, it } from "vitest";
import { eventKey, FinalQueue, type Floor, type LoggedEntry, reconcile } from "./feed";
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

/**
 * The writer over an append-only log: reconciles above the chain's final block, with the events
 * of the indexer's tables, which reach block `through` of the chain.
 */
function write(log: Entry[], chain: Chain, final: number, through = chain.blocks.length - 1) {
  const retracted = new Set(log.flatMap((e) => (e.retracts === undefined ? [] : [e.retracts])));
  const logged: LoggedEntry[] = log
    .filter((e) => e.event && e.event.block > final && !retracted.has(e.seq))
    .map((e) => ({ seq: e.seq, key: key(e.event!), block: BigInt(e.event!.block) }));
  const indexed = chain.events(final).filter((e) => e.block <= through);
  const { retract, append } = reconcile(logged, indexed, key, BigInt(through));
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
  /** Entries logged in block order: each given as [seq, hash, logIndex, block]. */
  const entries = (...list: [bigint, string, number, bigint][]): LoggedEntry[] =>
    list.map(([seq, hash, logIndex, block]) => ({ seq, key: k(e(hash, logIndex)), block }));

  it("appends what follows the entries already logged", () => {
    const logged = entries([1n, "0xa", 0, 1n]);
    expect(reconcile(logged, [e("0xa", 0), e("0xb", 0), e("0xb", 1)], k)).toEqual({
      retract: [],
      append: [e("0xb", 0), e("0xb", 1)],
    });
  });

  it("retracts a replaced suffix newest first, then appends the new branch", () => {
    const logged = entries([4n, "0xa", 0, 1n], [5n, "0xb", 0, 2n], [6n, "0xc", 2, 3n]);
    expect(reconcile(logged, [e("0xa", 0), e("0xB2", 0)], k)).toEqual({ retract: [6n, 5n], append: [e("0xB2", 0)] });
  });

  it("retracts everything when the tables hold nothing above the final block", () => {
    const logged = entries([9n, "0xa", 0, 1n]);
    expect(reconcile(logged, [], k)).toEqual({ retract: [9n], append: [] });
  });

  it("leaves the entries above the block read through while all before them match", () => {
    // The indexer went back to block 1 (it took block 2, seen again as the head, for a reorganization).
    const logged = entries([4n, "0xa", 0, 1n], [5n, "0xb", 0, 2n], [6n, "0xb", 1, 2n]);
    expect(reconcile(logged, [e("0xa", 0)], k, 1n)).toEqual({ retract: [], append: [] });
    // Once it is past them, as before: what matches stays, what follows is appended.
    expect(reconcile(logged, [e("0xa", 0), e("0xb", 0), e("0xb", 1), e("0xc", 0)], k, 3n)).toEqual({
      retract: [],
      append: [e("0xc", 0)],
    });
  });

  it("retracts the entries above the block read through when one at or below it differs, or comes before them", () => {
    const logged = entries([4n, "0xa", 0, 1n], [5n, "0xb", 0, 2n], [6n, "0xc", 0, 3n]);
    // Block 2 replaced: its entry and the one above the block read through go.
    expect(reconcile(logged, [e("0xa", 0), e("0xB2", 0)], k, 2n)).toEqual({
      retract: [6n, 5n],
      append: [e("0xB2", 0)],
    });
    // A new event read at block 1 must come before the entries of blocks 2 and 3.
    expect(reconcile(logged, [e("0xa", 0), e("0xa", 1)], k, 1n)).toEqual({ retract: [6n, 5n], append: [e("0xa", 1)] });
  });

  it("keys by block hash in any case and log index", () => {
    expect(eventKey("0xAbC", 3)).toBe(eventKey("0xabc", 3));
    expect(eventKey("0xabc", 3)).not.toBe(eventKey("0xabc", 4));
    expect(eventKey("0xabc", 3)).not.toBe(eventKey("0xabd", 3));
  });

  it(`random chains, reorganizations within finality, missed runs and an indexer behind or gone back: the live \
log is the chain, and only what it no longer holds is retracted (SEED=${SEED})`, () => {
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
        // The indexer's tables: mostly the whole chain; else behind it, or gone back below blocks it
        // had indexed (as Ponder does when it sees one of them again as the head), never below final.
        const tip = chain.blocks.length - 1;
        const through = next() % 3 === 0 ? final + (next() % (tip - final + 1)) : tip;
        // Above the block it last took as final: a block that became final since it last ran may
        // have been replaced meanwhile.
        const { retract } = write(log, chain, final, through);
        final = Math.max(final, Math.min(tip - finality, through));
        const where = `round ${round}, step ${step}, through ${through} of ${tip} (SEED=${SEED})`;
        // The live log is the chain as far as the indexer reads it. Above, entries of a branch
        // replaced by a shorter one stay until the indexer passes their blocks (below).
        const upTo = (events: Event[]) => events.filter((x) => x.block <= through).map(key);
        expect(upTo(live(log)), where).toEqual(upTo(chain.events()));
        // Only what the chain no longer holds is retracted, each once, after itself.
        for (const seq of retract) {
          const original = log[Number(seq) - 1]!;
          expect(original.event && before.has(key(original.event)), where).toBe(false);
        }
        const retractions = log.filter((x) => x.retracts !== undefined);
        expect(new Set(retractions.map((x) => x.retracts)).size, where).toBe(retractions.length);
        for (const x of retractions) expect(x.retracts! < x.seq, where).toBe(true);
      }
      // Once the chain is past every block logged and the indexer has read it all: the live log is the chain.
      const highest = Math.max(-1, ...log.flatMap((x) => (x.event ? [x.event.block] : [])));
      chain.mine(Math.max(1, highest - chain.blocks.length + 2));
      write(log, chain, final);
      expect(live(log).map(key), `round ${round}, caught up (SEED=${SEED})`).toEqual(chain.events().map(key));
    }
  });
});

describe("FinalQueue", () => {
  type Logged = { seq: bigint; chain: string; block: bigint; retracts: bigint | null; key: string };

  it(`two chains' writers, one log, a reader at random places: only final entries leave, in order \
(SEED=${SEED})`, () => {
    for (let round = 0; round < 200; round++) {
      const next = xorshift32(SEED * 7 + round);
      const log: Logged[] = [];
      const chains = ["a", "b"].map((name) => ({
        name,
        finality: 1 + (next() % 5),
        chain: new Chain(next),
        entries: [] as Entry[],
        final: -1,
      }));
      const floors = new Map<string, Floor>();
      const queue = new FinalQueue<Logged>();
      const sent: Logged[] = [];
      let read = 0;
      const readTo = (to: number) => {
        for (; read < to; read++) queue.push(log[read]!);
        sent.push(...queue.release(BigInt(read), floors));
      };
      const run = (c: (typeof chains)[number]) => {
        // Each chain's writer keeps its own log (core/feed.ts's rule), copied into the shared one.
        const from = c.entries.length;
        write(c.entries, c.chain, c.final);
        const seqOf = new Map<bigint, bigint>();
        for (const e of c.entries.slice(0, from)) seqOf.set(e.seq, log.find((x) => x.key === `${c.name}${e.seq}`)!.seq);
        for (const e of c.entries.slice(from)) {
          const seq = BigInt(log.length + 1);
          seqOf.set(e.seq, seq);
          const event = e.event ?? c.entries[Number(e.retracts) - 1]!.event!;
          log.push({ seq, chain: c.name, block: BigInt(event.block), key: `${c.name}${e.seq}`, retracts: null });
          if (e.retracts !== undefined) log[log.length - 1]!.retracts = seqOf.get(e.retracts)!;
        }
        c.final = Math.max(c.final, c.chain.blocks.length - 1 - c.finality);
        floors.set(c.name, { floor: BigInt(c.final), through: BigInt(log.length) });
      };
      for (let step = 0; step < 60; step++) {
        const c = chains[next() % 2]!;
        if (next() % 2 === 0) c.chain.mine(1 + (next() % 3));
        else {
          const depth = Math.min(1 + (next() % c.finality), c.chain.blocks.length - c.final - 1);
          c.chain.reorg(depth, next() % (depth + 2));
        }
        if (next() % 3 !== 0) run(c);
        if (next() % 2 === 0) readTo(read + (next() % (log.length - read + 1)));
      }
      // Both chains final past every block written before, every entry read: all of it that lives has left.
      for (const c of chains) {
        c.chain.mine(c.finality + 1);
        run(c);
      }
      readTo(log.length);
      const where = `round ${round} (SEED=${SEED})`;
      const retracted = new Set(log.flatMap((e) => (e.retracts === null ? [] : [e.retracts])));
      const live = log.filter((e) => e.retracts === null && !retracted.has(e.seq));
      const final = (e: Logged) => e.block <= floors.get(e.chain)!.floor;
      // Seq order holds back a final entry logged after one not yet final.
      const firstHeld = live.findIndex((e) => !final(e));
      const want = firstHeld < 0 ? live : live.slice(0, firstHeld);
      expect(
        sent.map((e) => e.seq),
        where,
      ).toEqual(want.map((e) => e.seq));
      expect(queue.size, where).toBe(live.length - want.length);
    }
  });

  it("holds an entry until its floor passes it and its through is read; a retraction drops it", () => {
    const queue = new FinalQueue<{ seq: bigint; chain: string; block: bigint; retracts: bigint | null }>();
    queue.push({ seq: 1n, chain: "a", block: 5n, retracts: null });
    queue.push({ seq: 2n, chain: "b", block: 9n, retracts: null });
    queue.push({ seq: 3n, chain: "a", block: 6n, retracts: null });
    expect(queue.release(3n, new Map([["a", { floor: 4n, through: 3n }]]))).toEqual([]);
    expect(queue.release(3n, new Map([["a", { floor: 6n, through: 4n }]]))).toEqual([]);
    expect(queue.resumeAfter(3n)).toBe(0n);
    const floors = new Map([
      ["a", { floor: 6n, through: 3n }],
      ["b", { floor: 8n, through: 3n }],
    ]);
    // The first leaves; the second holds the third back (seq order), though the third is final.
    expect(queue.release(3n, floors).map((e) => e.seq)).toEqual([1n]);
    expect(queue.resumeAfter(3n)).toBe(1n);
    queue.push({ seq: 4n, chain: "b", block: 9n, retracts: 2n });
    expect(queue.release(4n, floors).map((e) => e.seq)).toEqual([3n]);
    expect(queue.size).toBe(0);
    expect(queue.resumeAfter(4n)).toBe(4n);
  });
});
