/** Where a log is on chain: what the listings are ordered by. */

export type Position = { block: bigint; logIndex: number };

/** Whether `a` comes before `b` on chain. */
export const before = (a: Position, b: Position) =>
  a.block < b.block || (a.block === b.block && a.logIndex < b.logIndex);
