import { index, onchainTable, primaryKey } from "ponder";

/**
 * Per chain, the block of the last registry event indexed (0 before any). Every event writes it,
 * so when Ponder reverts a reorganized block's rows it rewrites this row too, before it moves its
 * checkpoint: the API tells a reverted state by this row being newer than the checkpoint's
 * (api/store.ts) and then reports this block.
 */
export const chainHead = onchainTable("chain_head", (t) => ({
  chainId: t.integer().primaryKey(),
  lastEventBlock: t.bigint().notNull(),
}));

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
    // API replicas read what changed since the block they hold (api/replica/feed.ts).
    updatedIndex: index().on(table.chainId, table.updatedBlock),
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

/**
 * v1 state. The contract voids delegations by bumping version counters, so the state is the
 * counters plus each delegation key's last write with the versions it was made at (core/v1.ts):
 * a revocation bumps one counter and rewrites nothing else.
 */
export const v1VaultVersion = onchainTable(
  "v1_vault_version",
  (t) => ({
    chainId: t.integer().notNull(),
    vault: t.hex().notNull(),
    /** revokeAllDelegates calls so far. */
    version: t.integer().notNull(),
    updatedBlock: t.bigint().notNull(),
  }),
  (table) => ({
    pk: primaryKey({ columns: [table.chainId, table.vault] }),
    updatedIndex: index().on(table.chainId, table.updatedBlock),
  }),
);

export const v1PairVersion = onchainTable(
  "v1_pair_version",
  (t) => ({
    chainId: t.integer().notNull(),
    vault: t.hex().notNull(),
    delegate: t.hex().notNull(),
    /** revokeDelegate/revokeSelf calls for this pair so far. */
    version: t.integer().notNull(),
    updatedBlock: t.bigint().notNull(),
  }),
  (table) => ({
    pk: primaryKey({ columns: [table.chainId, table.vault, table.delegate] }),
    updatedIndex: index().on(table.chainId, table.updatedBlock),
  }),
);

export const v1Delegation = onchainTable(
  "v1_delegation",
  (t) => ({
    chainId: t.integer().notNull(),
    vault: t.hex().notNull(),
    delegate: t.hex().notNull(),
    /** ALL, CONTRACT or TOKEN. */
    type: t.text().notNull(),
    /** The zero address for ALL. */
    contract: t.hex().notNull(),
    /** 0 unless TOKEN. */
    tokenId: t.bigint().notNull(),
    enabled: t.boolean().notNull(),
    /** The versions it was set at; it is in force only while they are current. */
    vaultVersion: t.integer().notNull(),
    pairVersion: t.integer().notNull(),
    createdBlock: t.bigint().notNull(),
    createdLogIndex: t.integer().notNull(),
    updatedBlock: t.bigint().notNull(),
  }),
  (table) => ({
    pk: primaryKey({
      columns: [table.chainId, table.vault, table.delegate, table.type, table.contract, table.tokenId],
    }),
    vaultIndex: index().on(table.chainId, table.vault, table.vaultVersion),
    delegateIndex: index().on(table.chainId, table.delegate),
    updatedIndex: index().on(table.chainId, table.updatedBlock),
  }),
);

/** Every v1 event, append-only. */
export const v1Event = onchainTable(
  "v1_event",
  (t) => ({
    id: t.text().primaryKey(),
    chainId: t.integer().notNull(),
    blockNumber: t.bigint().notNull(),
    blockTimestamp: t.bigint().notNull(),
    transactionHash: t.hex().notNull(),
    logIndex: t.integer().notNull(),
    /** DelegateForAll, DelegateForContract, DelegateForToken, RevokeAllDelegates or RevokeDelegate. */
    kind: t.text().notNull(),
    vault: t.hex().notNull(),
    /** As the event names it; for RevokeDelegate that is msg.sender, see revokedDelegate. */
    delegate: t.hex(),
    contract: t.hex(),
    tokenId: t.bigint(),
    value: t.boolean(),
    /** RevokeDelegate only: the delegate whose pair was revoked, recovered from the call. */
    revokedDelegate: t.hex(),
  }),
  (table) => ({
    blockIndex: index().on(table.chainId, table.blockNumber, table.logIndex),
    vaultIndex: index().on(table.chainId, table.vault),
    delegateIndex: index().on(table.chainId, table.delegate),
  }),
);
