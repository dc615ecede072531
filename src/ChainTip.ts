import { ponder } from "ponder:registry";
import { chainTip } from "ponder:schema";

ponder.on("ChainTip:block", async ({ event, context }) => {
  const tip = { blockNumber: event.block.number, blockHash: event.block.hash };
  await context.db
    .insert(chainTip)
    .values({ chainId: context.chain.id, ...tip })
    .onConflictDoUpdate(tip);
});
