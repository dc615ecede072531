/**
 * The change log's rule: what to append so that its entries, less those retracted, are the history
 * tables' events in chain order. The log is append-only: an entry is never rewritten or deleted,
 * so an event a reorganization removed is taken back by a retraction, an entry of its own that
 * names the one it retracts.
 *
 * Per chain and registry, the writer compares the entries it logged and has not retracted with the
 * events the tables hold, both in chain order, above the block it took as final when it last ran:
 * not the chain's final block now, as a block that became final since may have been replaced before
 * it did, and its old entries would then stay. Once reconciled, it takes the chain's final block
 * as its floor. An event is known by its block's hash and its log index: an event of a
 * replaced block has another key than its twin on the new branch, even at the same number.
 */

import { parseOneOf } from "./parse";

/** The names `type` takes: events of both registries, and delegation types. */
export const FEED_TYPES = [
  "DelegateAll",
  "DelegateContract",
  "DelegateERC721",
  "DelegateERC20",
  "DelegateERC1155",
  "DelegateForAll",
  "DelegateForContract",
  "DelegateForToken",
  "RevokeAllDelegates",
  "RevokeDelegate",
  "ALL",
  "CONTRACT",
  "ERC721",
  "ERC20",
  "ERC1155",
  "TOKEN",
] as const;

/** A list of `type`s, comma-separated. */
export const parseFeedTypes = (text: string): string[] => text.split(",").map(parseOneOf(FEED_TYPES));

/** Which side of a delegation `wallet` is on. */
export const ROLES = ["from", "vault", "to", "delegate", "either"] as const;

/** An entry logged and not retracted: its sequence number, its event's key (`eventKey`) and block. */
export type LoggedEntry = { seq: bigint; key: string; block: bigint };

/** What to append: retractions of these entries (newest first), then these events, in chain order. */
export type Reconciled<E> = { retract: bigint[]; append: E[] };

/** An event's key in the log: its block's hash and its log index (one block, one chain). */
export const eventKey = (blockHash: string, logIndex: number): string => `${blockHash.toLowerCase()}:${logIndex}`;

/**
 * The entries to retract and the events to append, given the live entries (`logged`) and the
 * tables' events (`current`) above the same block, each in chain order. The longest common prefix
 * stays; every entry after it is retracted and every event after it appended. A reorganization
 * replaces a suffix of the chain, so the prefix holds every event before the fork; and were an
 * event ever to appear before entries already logged, those entries are retracted and logged again
 * after it, so the live entries stay in chain order whatever the writer saw before.
 *
 * With `through`, the block the tables were read through: entries above it are undecided, not
 * gone, while every event read matches the entries before them. The indexer went back below them
 * and decides them again as it passes them: Ponder takes a block it indexed before, seen again as
 * the head (after a revert, or from an RPC node a block behind), for a reorganization and indexes it
 * again, and its entries would otherwise be retracted and logged again unchanged.
 */
export function reconcile<E>(
  logged: readonly LoggedEntry[],
  current: readonly E[],
  keyOf: (event: E) => string,
  through?: bigint,
): Reconciled<E> {
  let kept = 0;
  while (kept < logged.length && kept < current.length && logged[kept]!.key === keyOf(current[kept]!)) kept++;
  if (through !== undefined && kept === current.length && logged.slice(kept).every((e) => e.block > through))
    return { retract: [], append: [] };
  return {
    retract: logged
      .slice(kept)
      .map((entry) => entry.seq)
      .reverse(),
    append: current.slice(kept),
  };
}

/** An entry as a stream reads it: its place in the log and on its chain, and what it retracts. */
export type StreamedEntry = { seq: bigint; chain: string; block: bigint; retracts: bigint | null };

/**
 * A chain's floor (`chain` is the chain and registry the writer keeps a floor for) with the last seq
 * logged when it was raised: once a reader has read through `through`, an entry at or below `floor`
 * it has not seen retracted never will be, as the writer reconciles only above its floor.
 */
export type Floor = { floor: bigint; through: bigint };

/**
 * What a stream of final entries only (never one a reorganization may retract) holds back, in log
 * order: each entry it read waits until its chain's floor passes its block and the reader has read
 * through the seq logged with that floor; a retraction drops its entry, and is not sent. Entries
 * leave in seq order, so a reader resuming after the last one sent misses none: a chain slow to
 * finalize holds back the entries of others logged after its own.
 */
export class FinalQueue<E extends StreamedEntry> {
  private held: E[] = [];

  /** Takes the next entry the reader read. */
  push(entry: E): void {
    if (entry.retracts === null) this.held.push(entry);
    else this.held = this.held.filter((e) => e.seq !== entry.retracts);
  }

  /** The entries now final, from the oldest held, for a reader that has read through `read`. */
  release(read: bigint, floors: ReadonlyMap<string, Floor>): E[] {
    let n = 0;
    for (const e of this.held) {
      const floor = floors.get(e.chain);
      if (floor === undefined || floor.floor < e.block || floor.through > read) break;
      n++;
    }
    return n === 0 ? [] : this.held.splice(0, n);
  }

  /** How many entries are held. */
  get size(): number {
    return this.held.length;
  }

  /** Where a reader resumes without losing an entry held: before the oldest held, else `read`. */
  resumeAfter(read: bigint): bigint {
    return this.held.length > 0 ? this.held[0]!.seq - 1n : read;
  }
}
