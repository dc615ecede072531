import { trimmed, withRoom } from "./byte-keys";

/** No row. */
const NONE = -1;
/** A slot's fields: its pair's numbers (the first + 1; 0: an empty slot), first row and rows. */
const A = 0;
const B = 1;
const FIRST = 2;
const COUNT = 3;
/** Fields per slot: a slot's lie side by side, four slots to a cache line. */
const STRIDE = 4;

/**
 * Rows by an ordered pair of numbers (a v2 row's from and to): a check finds its pair's rows in one
 * read of the table, where walking a party's list of rows read each row at random, most of a
 * batch's time over a million rows (docs/performance.md). An open-addressing table of pairs, at
 * most three quarters full (half full, it was a sixth of a worker's copy); a pair's rows chained
 * through the rows, newest first.
 *
 * Rows are only added, each once: a row keeps its number and its pair for good, and one no longer
 * live is still found here (its owner skips it).
 */
export class PairIndex {
  private slots = new Int32Array(64 * STRIDE);
  /** Per row, the next (older) row of its pair. */
  private after = new Int32Array(0);
  private pairs = 0;
  /** Rows added: rows are numbered 0, 1, 2… and added in that order. */
  private rows = 0;

  /** Adds row `row` under (a, b), once: a row added before is left as it is. */
  add(row: number, a: number, b: number) {
    if (row < this.rows) return;
    if (row > this.rows) throw new Error(`row ${row} added before row ${this.rows}`);
    this.rows++;
    this.after = withRoom(this.after, this.rows);
    const slot = this.slotOf(a, b);
    if (this.slots[slot + A] === 0) {
      this.slots[slot + A] = a + 1;
      this.slots[slot + B] = b;
      this.slots[slot + FIRST] = NONE;
      this.pairs++;
    }
    this.after[row] = this.slots[slot + FIRST]!;
    this.slots[slot + FIRST] = row;
    this.slots[slot + COUNT]!++;
    if (this.pairs * 4 * STRIDE > this.slots.length * 3) this.grow();
  }

  /** Gives back the room for rows not added (byte-keys.ts, `trimmed`). */
  trim() {
    this.after = trimmed(this.after, this.rows);
  }

  /** The newest row of (a, b), or NONE; `next` walks on to older ones. */
  first(a: number, b: number): number {
    const slot = this.slotOf(a, b);
    return this.slots[slot + A] === 0 ? NONE : this.slots[slot + FIRST]!;
  }

  /** The row of the same pair added before `row`, or NONE. */
  next(row: number): number {
    return this.after[row]!;
  }

  /** How many rows (a, b) has. */
  count(a: number, b: number): number {
    return this.slots[this.slotOf(a, b) + COUNT]!;
  }

  /** The slot that holds (a, b), or the empty one where it would go. */
  private slotOf(a: number, b: number): number {
    const mask = this.slots.length - 1;
    for (let slot = Math.imul(hashPair(a, b), STRIDE) & mask; ; slot = (slot + STRIDE) & mask) {
      const held = this.slots[slot + A]!;
      if (held === 0 || (held === a + 1 && this.slots[slot + B] === b)) return slot;
    }
  }

  private grow() {
    const old = this.slots;
    this.slots = new Int32Array(old.length * 2);
    for (let from = 0; from < old.length; from += STRIDE) {
      if (old[from + A] === 0) continue;
      const slot = this.slotOf(old[from + A]! - 1, old[from + B]!);
      this.slots.set(old.subarray(from, from + STRIDE), slot);
    }
  }
}

/** A pair's hash: the two numbers mixed, then murmur3's finalizer, so that near pairs spread. */
function hashPair(a: number, b: number): number {
  let h = Math.imul(a, 0x9e3779b1) ^ b;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}
