import { type Context, ponder } from "ponder:registry";
import { chainHead } from "ponder:schema";

/** Every event handler calls this (see chainHead in ponder.schema.ts). */
export const recordEventBlock = (context: { db: Context["db"]; chain: { id: number } }, block: bigint) =>
  context.db
    .insert(chainHead)
    .values({ chainId: context.chain.id, lastEventBlock: block })
    .onConflictDoUpdate({ lastEventBlock: block });

// The row exists from the start, so that a revert of a chain's first events rewrites it rather
// than deleting it.
async function start({ context }: { context: Context }) {
  await context.db.insert(chainHead).values({ chainId: context.chain.id, lastEventBlock: 0n }).onConflictDoNothing();
}
ponder.on("RegistryV1:setup", start);
ponder.on("RegistryV2:setup", start);
