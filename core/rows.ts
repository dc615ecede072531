import type { Hex } from "viem";

/**
 * What every registry event writes, whichever its version (core/v2-rows.ts, core/v1-rows.ts): its
 * history row's place columns, and its chain's chain_head row. Rows are keyed as ponder.schema.ts's
 * tables take them; that file states their columns, and the indexer's writes are checked against it
 * (src/writes.ts).
 *
 * Rows are built with Object.assign, not spreads: V8 copies a spread followed by more properties
 * ten times slower, and the bench builds millions of rows (bench/dataset.ts).
 */

/** Where an event is: its chain, Ponder's event id, its block, transaction and log. */
export type EventPlace = {
  chainId: number;
  id: string;
  block: { number: bigint; hash: Hex; timestamp: bigint };
  transactionHash: Hex;
  logIndex: number;
};

/** A history row (v2_event, v1_event): the event's place, then what it logged. */
export const eventRow = <T extends object>(at: EventPlace, logged: T) =>
  Object.assign(
    {
      id: at.id,
      chainId: at.chainId,
      blockNumber: at.block.number,
      blockHash: at.block.hash,
      blockTimestamp: at.block.timestamp,
      transactionHash: at.transactionHash,
      logIndex: at.logIndex,
    },
    logged,
  );

/** The chain's chain_head row after the event (see chainHead in ponder.schema.ts). */
export const chainHeadRow = (at: EventPlace) => ({ chainId: at.chainId, lastEventBlock: at.block.number });
