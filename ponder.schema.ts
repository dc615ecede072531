import { index, onchainTable, primaryKey } from "ponder";

/**
 * Current v2 state: one row per delegation hash the contract has ever enabled, keyed as the
 * contract keys it. A revoked row stays (enabled = false) because it keeps its list position.
 */
export const v2Delegation = onchainTable(
  "v2_delegation",
  (t) => ({
    chainId: t.integer().notNull(),
    /** The contract's own delegation hash (`getDelegationsFromHashes` takes it). */
    hash: t.hex().notNull(),
    /** The contract's DelegationType: ALL, CONTRACT, ERC721, ERC20, ERC1155. */
    delegationType: t.text().notNull(),
    from: t.hex().notNull(),
    to: t.hex().notNull(),
    /** Null for ALL. */
    contract: t.hex(),
    /** Null unless ERC721 or ERC1155. */
    tokenId: t.bigint(),
    rights: t.hex().notNull(),
    /** Null unless ERC20 or ERC1155; 0 while revoked. */
    amount: t.bigint(),
    enabled: t.boolean().notNull(),
    /** Where it was first enabled: the order of getOutgoing/IncomingDelegations. */
    firstBlock: t.bigint().notNull(),
    firstLogIndex: t.integer().notNull(),
    updatedBlock: t.bigint().notNull(),
    /** Events seen for this hash, including those that changed nothing. */
    eventCount: t.integer().notNull(),
  }),
  (table) => ({
    pk: primaryKey({ columns: [table.chainId, table.hash] }),
    fromIndex: index().on(table.chainId, table.from, table.firstBlock, table.firstLogIndex),
    toIndex: index().on(table.chainId, table.to, table.firstBlock, table.firstLogIndex),
  }),
);

/** Every v2 event, append-only: the history analysts query. */
export const v2Event = onchainTable(
  "v2_event",
  (t) => ({
    /** Ponder's event id: unique per chain, block and log. */
    id: t.text().primaryKey(),
    chainId: t.integer().notNull(),
    blockNumber: t.bigint().notNull(),
    blockTimestamp: t.bigint().notNull(),
    transactionHash: t.hex().notNull(),
    logIndex: t.integer().notNull(),
    /** DelegateAll, DelegateContract, DelegateERC721, DelegateERC20 or DelegateERC1155. */
    kind: t.text().notNull(),
    hash: t.hex().notNull(),
    from: t.hex().notNull(),
    to: t.hex().notNull(),
    contract: t.hex(),
    tokenId: t.bigint(),
    rights: t.hex().notNull(),
    amount: t.bigint(),
    /** Null for ERC20 and ERC1155, whose events carry an amount instead. */
    enable: t.boolean(),
  }),
  (table) => ({
    blockIndex: index().on(table.chainId, table.blockNumber, table.logIndex),
    hashIndex: index().on(table.chainId, table.hash),
    fromIndex: index().on(table.chainId, table.from),
    toIndex: index().on(table.chainId, table.to),
  }),
);
