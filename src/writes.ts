import { type Context, type Event, type EventNames, ponder } from "ponder:registry";
import {
  chainHead,
  v1Delegation,
  v1DelegationChange,
  v1Event,
  v1PairVersion,
  v1VaultVersion,
  v1VersionChange,
  v2Delegation,
  v2Event,
} from "ponder:schema";
import type { EventPlace } from "../core/rows";

/** The tables core/ writes, by the names its writes give them (ponder.schema.ts's). */
const TABLES = {
  chainHead,
  v1Delegation,
  v1DelegationChange,
  v1Event,
  v1PairVersion,
  v1VaultVersion,
  v1VersionChange,
  v2Delegation,
  v2Event,
};
/** Rows by table, each as its table takes it: the type holds core/'s rows to ponder.schema.ts. */
type Rows = { [T in keyof typeof TABLES]?: (typeof TABLES)[T]["$inferInsert"] };
/** Any of the tables, as Ponder's store takes it: which one only the name says, at run time. */
const tableOf = (name: string) => TABLES[name as keyof typeof TABLES] as typeof chainHead;

/** An event's place, as core/'s row rules take it. */
export const eventPlace = (
  event: Pick<Event<Extract<EventNames, `Registry${string}`>>, "id" | "block" | "transaction" | "log">,
  context: { chain: { id: number } },
): EventPlace => ({
  chainId: context.chain.id,
  id: event.id,
  block: event.block,
  transactionHash: event.transaction.hash,
  logIndex: event.log.logIndex,
});

/**
 * Writes what core/ says an event writes (core/v2-rows.ts, core/v1-rows.ts): `insert` rows as new
 * rows, `put` rows over any of the same key. Ponder's upsert reads the row it may replace, which
 * the handler has just read (its cache holds it): no more reads than a handler that writes itself.
 */
export async function write(db: Context["db"], writes: { insert: Rows; put: Rows }) {
  for (const [name, row] of Object.entries(writes.insert)) {
    if (row) await db.insert(tableOf(name)).values(row as never);
  }
  for (const [name, row] of Object.entries(writes.put)) {
    if (row)
      await db
        .insert(tableOf(name))
        .values(row as never)
        .onConflictDoUpdate(row as never);
  }
}

// The chain_head row exists from the start, so that a revert of a chain's first events rewrites it
// rather than deleting it.
async function start({ context }: { context: Context }) {
  await context.db.insert(chainHead).values({ chainId: context.chain.id, lastEventBlock: 0n }).onConflictDoNothing();
}
ponder.on("RegistryV1:setup", start);
ponder.on("RegistryV2:setup", start);
