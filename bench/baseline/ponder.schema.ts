import { onchainTable } from "ponder";

/** One row per registry event: where it is and its arguments as logged, nothing derived. */
export const event = onchainTable("event", (t) => ({
  id: t.text().primaryKey(),
  blockNumber: t.bigint().notNull(),
  blockHash: t.hex().notNull(),
  blockTimestamp: t.bigint().notNull(),
  transactionHash: t.hex().notNull(),
  logIndex: t.integer().notNull(),
  name: t.text().notNull(),
  from: t.hex().notNull(),
  to: t.hex().notNull(),
  contract: t.hex(),
  tokenId: t.bigint(),
  rights: t.hex().notNull(),
  amount: t.bigint(),
  enable: t.boolean(),
}));
