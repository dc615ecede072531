import { ponder } from "ponder:registry";
import { chainTip } from "ponder:schema";

/**
 * Blocks held per chain: more than twice the deepest finality depth Ponder takes
 * (ponderFinalityDepth, ponder/ponder-0.16.10.ts), so that every block not yet final is held, and
 * the newest final ones.
 */
const TIP_BLOCKS = 1024n;

ponder.on("ChainTip:block", async ({ event, context }) => {
  const { number, hash, timestamp } = event.block;
  const tip = { blockNumber: number, blockHash: hash, blockTimestamp: timestamp };
  await context.db
    .insert(chainTip)
    .values({ chainId: context.chain.id, slot: Number(number % TIP_BLOCKS), ...tip })
    .onConflictDoUpdate(tip);
});
