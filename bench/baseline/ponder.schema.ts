import { onchainTable } from "ponder";

/** One row per registry event: its id and block, nothing derived. */
export const event = onchainTable("event", (t) => ({
  id: t.text().primaryKey(),
  blockNumber: t.bigint().notNull(),
}));
