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

/** An entry logged and not retracted: its sequence number, and its event's key (`eventKey`). */
export type LoggedEntry = { seq: bigint; key: string };

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
 */
export function reconcile<E>(
  logged: readonly LoggedEntry[],
  current: readonly E[],
  keyOf: (event: E) => string,
): Reconciled<E> {
  let kept = 0;
  while (kept < logged.length && kept < current.length && logged[kept]!.key === keyOf(current[kept]!)) kept++;
  return {
    retract: logged
      .slice(kept)
      .map((entry) => entry.seq)
      .reverse(),
    append: current.slice(kept),
  };
}
