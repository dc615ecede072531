/**
 * Whole wallet listings kept rendered: a listing's JSON costs far more than its rows
 * (EIP-55 checksums, records, serialization), and a wallet large enough to matter is asked again and
 * again between the blocks that change it. A store that numbers each wallet's changes (a revision,
 * api/replica) lets a listing be answered from here until its revision moves.
 */

/** A rendered listing, how many records it holds, and the revision of the wallet's rows it was rendered from. */
export type HeldListing = { revision: string; json: Uint8Array<ArrayBuffer>; records: number };

/** What an API process spends on rendered listings: a 10,000-delegation wallet's is about 2.5 MB. */
export const LISTING_CACHE_BYTES = 16 * 1024 * 1024;

/** Listings shorter than this are rendered each time: they are cheap, and would crowd out the large. */
export const LISTING_CACHE_MIN_ROWS = 32;

/** Rendered listings by key, least recently used first out, within a budget of bytes. */
export class ListingCache {
  private readonly entries = new Map<string, HeldListing>();
  private bytes = 0;

  constructor(private readonly budget: number) {}

  /** The listing held for `key`, now the most recently used. */
  get(key: string): HeldListing | undefined {
    const held = this.entries.get(key);
    if (held === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, held);
    return held;
  }

  /** Holds `held` for `key` (replacing what was), dropping the least recently used beyond the budget. */
  set(key: string, held: HeldListing) {
    this.delete(key);
    if (held.json.byteLength > this.budget) return;
    this.entries.set(key, held);
    this.bytes += held.json.byteLength;
    for (const [oldest] of this.entries) {
      if (this.bytes <= this.budget) break;
      this.delete(oldest);
    }
  }

  /** The bytes held. */
  get size(): number {
    return this.bytes;
  }

  private delete(key: string) {
    const held = this.entries.get(key);
    if (held === undefined) return;
    this.entries.delete(key);
    this.bytes -= held.json.byteLength;
  }
}
