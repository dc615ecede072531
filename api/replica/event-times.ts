import type { Sample } from "../../core/moment";
import { trimmed, withRoom } from "./byte-keys";

/**
 * A chain's blocks with registry events and their timestamps, as the copy holds them: the samples
 * a moment's block is found between (api/routes/moment.ts), told by a binary search in memory
 * rather than a statement per request. Final blocks are held in two columns (16 bytes a block);
 * the blocks past the final one are replaced whole at each sync, as a reorganization may change them.
 */
export class EventTimes {
  private blocks = new Float64Array(0);
  private stamps = new Float64Array(0);
  private length = 0;
  /** The blocks past the final one, by block. */
  private recent: Sample[] = [];

  /** Holds a final block, after every one held. */
  appendFinal(block: number, timestamp: number) {
    if (this.length > 0 && block <= this.blocks[this.length - 1]!) return;
    this.blocks = withRoom(this.blocks, this.length + 1);
    this.stamps = withRoom(this.stamps, this.length + 1);
    this.blocks[this.length] = block;
    this.stamps[this.length] = timestamp;
    this.length++;
  }

  /** Gives back the room for blocks not held (byte-keys.ts, `trimmed`). */
  trim() {
    this.blocks = trimmed(this.blocks, this.length);
    this.stamps = trimmed(this.stamps, this.length);
  }

  /** The blocks past the final one, as they are now (any order). */
  replaceRecent(samples: readonly Sample[]) {
    this.recent = [...samples].sort((x, y) => (x.block < y.block ? -1 : x.block > y.block ? 1 : 0));
  }

  /** The recent blocks at or before `final` become final. */
  finalize(final: number) {
    while (this.recent.length > 0 && this.recent[0]!.block <= BigInt(final)) {
      const { block, timestamp } = this.recent.shift()!;
      this.appendFinal(Number(block), Number(timestamp));
    }
  }

  /** The event blocks up to `head` nearest `timestamp`: the newest at or before it, the oldest past it. */
  around(timestamp: bigint, head: bigint): { before?: Sample; after?: Sample } {
    const upTo = this.firstPast(this.blocks, Number(head), this.length);
    // The first final block past the moment: timestamps never decrease with the block.
    const first = this.firstPast(this.stamps, Number(timestamp), upTo);
    const held = (i: number): Sample | undefined =>
      i >= 0 && i < upTo ? { block: BigInt(this.blocks[i]!), timestamp: BigInt(this.stamps[i]!) } : undefined;
    let [before, after] = [held(first - 1), held(first)];
    for (const sample of this.recent) {
      if (sample.block > head) break;
      if (sample.timestamp <= timestamp) before = sample;
      else after ??= sample;
    }
    return { before, after };
  }

  /** The first of `column`'s first `length` values past `value` (they never decrease). */
  private firstPast(column: Float64Array, value: number, length: number): number {
    let [low, high] = [0, length];
    while (low < high) {
      const mid = (low + high) >> 1;
      if (column[mid]! <= value) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}
