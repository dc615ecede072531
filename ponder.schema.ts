import { index, onchainTable, primaryKey } from "ponder";

/**
 * Per chain, the block of the last registry event indexed (0 before any). Every event writes it,
 * so when Ponder reverts a reorganized block's rows it rewrites this row too, before it moves its
 * checkpoint: the API tells a reverted state by this row being newer than the checkpoint's
 * (api/store/store.ts) and then reports this block.
 */
export const chainHead = onchainTable("chain_head", (t) => ({
  chainId: t.integer().primaryKey(),
  lastEventBlock: t.bigint().notNull(),
}));

/**
 * Per chain, the newest blocks the indexer followed live (one row a block, in a ring of slots:
 * src/ChainTip.ts), each with its hash and timestamp as the indexer saw it: written by every block
 * from the live start on, in the block's own transaction, so a revert takes it back with the block
 * (the slot then holds what it held before). The replaced-head watcher compares the newest
 * with the chain's (api/watch/replaced-head.ts); a moment's block is told from them where no
 * registry event is near (api/routes/moment.ts), without reading headers from the chain's RPC.
 */
export const chainTip = onchainTable(
  "chain_tip",
  (t) => ({
    chainId: t.integer().notNull(),
    slot: t.integer().notNull(),
    blockNumber: t.bigint().notNull(),
    blockHash: t.hex().notNull(),
    blockTimestamp: t.bigint().notNull(),
  }),
  (table) => ({
    pk: primaryKey({ columns: [table.chainId, table.slot] }),
    // As the event tables': the newest block, and a moment's two samples, by an index probe each.
    timeIndex: index().on(table.chainId, table.blockTimestamp, table.blockNumber),
  }),
);

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
    // Contract listings: the contract's, a token's, and beside a token's the contract-wide ones by type
    // (api/store/history-store.ts).
    contractIndex: index().on(table.chainId, table.contract, table.firstBlock, table.firstLogIndex),
    contractTokenIndex: index().on(table.chainId, table.contract, table.tokenId, table.firstBlock, table.firstLogIndex),
    contractTypeIndex: index().on(
      table.chainId,
      table.contract,
      table.delegationType,
      table.firstBlock,
      table.firstLogIndex,
    ),
    // API replicas read what changed since the block they hold (api/replica/feed.ts).
    updatedIndex: index().on(table.chainId, table.updatedBlock),
  }),
);

/**
 * Every v2 event, append-only: the history analysts query, and the state at any block (a
 * delegation's state is set whole by each of its events: see api/store/history-store.ts).
 */
export const v2Event = onchainTable(
  "v2_event",
  (t) => ({
    /** Ponder's event id: unique per chain, block and log. */
    id: t.text().primaryKey(),
    chainId: t.integer().notNull(),
    blockNumber: t.bigint().notNull(),
    /** Compared with the chain's to find a reorganization deeper than the indexer's finality depth. */
    blockHash: t.hex().notNull(),
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
    /** The blocks with events nearest a moment (`timestamp`: api/store/history-store.ts, eventSamples). */
    timeIndex: index().on(table.chainId, table.blockTimestamp, table.blockNumber),
    hashIndex: index().on(table.chainId, table.hash, table.blockNumber, table.logIndex),
    fromIndex: index().on(table.chainId, table.from, table.blockNumber, table.logIndex),
    toIndex: index().on(table.chainId, table.to, table.blockNumber, table.logIndex),
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
    /**
     * Where the key was first written (set: writes that unset what was never set write no row);
     * before it the key was in none of the contract's sets.
     */
    firstBlock: t.bigint().notNull(),
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
    blockHash: t.hex().notNull(),
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
    timeIndex: index().on(table.chainId, table.blockTimestamp, table.blockNumber),
    vaultIndex: index().on(table.chainId, table.vault, table.blockNumber, table.logIndex),
    delegateIndex: index().on(table.chainId, table.delegate, table.blockNumber, table.logIndex),
    revokedIndex: index().on(table.chainId, table.revokedDelegate, table.blockNumber, table.logIndex),
  }),
);

/**
 * v1 history of state, append-only: after each delegateFor* write, the key's state as v1_delegation
 * then held it (none when the write left no state: a revoke of what was never set). The state of a
 * key at block N is its last change at or before N (api/store/history-store.ts).
 */
export const v1DelegationChange = onchainTable(
  "v1_delegation_change",
  (t) => ({
    /** The event's id. */
    id: t.text().primaryKey(),
    chainId: t.integer().notNull(),
    blockNumber: t.bigint().notNull(),
    logIndex: t.integer().notNull(),
    vault: t.hex().notNull(),
    delegate: t.hex().notNull(),
    type: t.text().notNull(),
    contract: t.hex().notNull(),
    tokenId: t.bigint().notNull(),
    enabled: t.boolean().notNull(),
    vaultVersion: t.integer().notNull(),
    pairVersion: t.integer().notNull(),
    createdBlock: t.bigint().notNull(),
    createdLogIndex: t.integer().notNull(),
  }),
  (table) => ({
    keyIndex: index().on(
      table.chainId,
      table.vault,
      table.delegate,
      table.type,
      table.contract,
      table.tokenId,
      table.blockNumber,
      table.logIndex,
    ),
    // A vault's listing reads only the rows at its version then (api/store/history-store.ts).
    vaultIndex: index().on(table.chainId, table.vault, table.vaultVersion, table.createdBlock, table.createdLogIndex),
    delegateIndex: index().on(table.chainId, table.delegate, table.createdBlock, table.createdLogIndex),
    contractIndex: index().on(table.chainId, table.contract, table.createdBlock, table.createdLogIndex),
    contractTokenIndex: index().on(
      table.chainId,
      table.contract,
      table.tokenId,
      table.createdBlock,
      table.createdLogIndex,
    ),
  }),
);

/**
 * v1 history of the version counters, append-only: each counter's value after each revocation.
 * `delegate` is null for the vault's own counter (revokeAllDelegates), else the pair's
 * (revokeDelegate, revokeSelf).
 */
export const v1VersionChange = onchainTable(
  "v1_version_change",
  (t) => ({
    /** The event's id. */
    id: t.text().primaryKey(),
    chainId: t.integer().notNull(),
    blockNumber: t.bigint().notNull(),
    logIndex: t.integer().notNull(),
    vault: t.hex().notNull(),
    delegate: t.hex(),
    version: t.integer().notNull(),
  }),
  (table) => ({
    counterIndex: index().on(table.chainId, table.vault, table.delegate, table.blockNumber, table.logIndex),
  }),
);
