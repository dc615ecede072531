/**
 * Answers at any indexed block, and the events themselves, from the history tables the indexer
 * appends to (ponder.schema.ts): `v2_event`, `v1_event`, `v1_delegation_change` and
 * `v1_version_change`, with `v2_delegation` for each v2 delegation's fixed list position.
 *
 * - v2: a delegation's state after an event depends on that event alone (it sets `enable` or the
 *   amount whole), so its state at block N is its last event at or before N; its list position is
 *   where it was first enabled, which is fixed once it happened.
 * - v1: each write's resulting key state is logged (`v1_delegation_change`), and so is every
 *   version counter's value (`v1_version_change`): the state at N is the last change at or before N
 *   of the key and of both counters, in force as `core/v1.ts` says.
 *
 * Every read is one statement of index range scans that stop at the page's limit: a page costs the
 * same at any depth of a wallet's list or of the history. Blocks are the caller's to choose: it
 * asks only about blocks already indexed, so the rows at or before them no longer change (but for
 * a reorganization, which changes them to the new branch's).
 *
 * The columns rows are ordered by (blocks, log indexes) are selected as they are, never cast to
 * text: ORDER BY names the select list's columns, and text orders block 10 before block 9.
 */
import { type SQL, sql } from "drizzle-orm";
import type { Address, Hex } from "viem";
import type { Sample } from "../../core/moment";
import type { Direction } from "../../core/parse";
import type { V1Key } from "../../core/v1";
import type { V1SetEvent } from "../../core/v1-sets";
import type { V2State } from "../../core/v2";
import { v1InForceSql, v1KeysSql, v2EnablesSql } from "./rules-sql";
import type { Execute, Page, PageRequest, Position, V1Row, V2Row } from "./store";
import { INDEXED_BLOCK_SQL, positionsSql, tableSql, v1RowOf, v2RowOf, waitingOutLocks } from "./store";

export type { Page, PageRequest, Position } from "./store";

/** The block range of a history request, both ends included. */
export type BlockRange = { from: bigint; to: bigint };

/** A wallet in one role of an event: the column that names it. */
type Party = { column: SQL; wallet: Address };

export type V2EventRow = {
  /** The delegation hash the event writes. */
  hash: Hex;
  blockNumber: bigint;
  /** Not in the history's records: the change feed knows an event by it (api/feed/log.ts). */
  blockHash: Hex;
  blockTimestamp: bigint;
  transactionHash: Hex;
  logIndex: number;
  kind: string;
  from: Address;
  to: Address;
  contract: Address | null;
  tokenId: bigint | null;
  rights: Hex;
  amount: bigint | null;
  enable: boolean | null;
};

export type V1EventRow = V1SetEvent & {
  blockNumber: bigint;
  /** As V2EventRow's. */
  blockHash: Hex;
  blockTimestamp: bigint;
  transactionHash: Hex;
  logIndex: number;
};

/** Reads at a block, and of the events in a range; see the module's head. */
export interface HistoryStore {
  /** The newest block of the chain whose state the tables hold; undefined: none yet. */
  indexedBlock(chainId: number): Promise<bigint | undefined>;
  /**
   * The blocks with registry events nearest `timestamp`: the newest stamped at or before it, and the
   * oldest stamped after it (core/moment.ts's samples).
   */
  eventSamples(chainId: number, timestamp: bigint): Promise<{ before?: Sample; after?: Sample }>;
  /**
   * The blocks up to `head` the indexer followed live (chain_tip: ponder.schema.ts) nearest
   * `timestamp`, as eventSamples: where the moment is among them, two adjacent blocks.
   */
  liveSamples(chainId: number, timestamp: bigint, head: bigint): Promise<{ before?: Sample; after?: Sample }>;
  /** The v2 delegations among `hashes` enabled at the end of block `at`, with their amounts. */
  v2Enabled(chainId: number, hashes: readonly Hex[], at: bigint): Promise<Map<Hex, V2State>>;
  /** A page of the wallet's v2 delegations enabled at `at`, in `direction`, in first-enable order. */
  v2Wallet(
    chainId: number,
    wallet: Address,
    at: bigint,
    page: PageRequest,
    direction?: Direction,
  ): Promise<Page<V2Row>>;
  /** Each wallet's v2 listing at `at`, as v2Wallet's, in one statement; see WalletsRead. */
  v2Wallets(
    chainId: number,
    wallets: readonly Address[],
    at: bigint,
    most: number,
    direction?: Direction,
  ): WalletsRead<V2Row>;
  /** The v2 delegation with this hash, if enabled at `at`. */
  v2Delegation(chainId: number, hash: Hex, at: bigint): Promise<V2Row | undefined>;
  /** A page of the v2 delegations enabled at `at` scoped to `contract` (and `tokenId`), in first-enable order. */
  v2Contract(
    chainId: number,
    contract: Address,
    tokenId: bigint | undefined,
    at: bigint,
    page: PageRequest,
  ): Promise<Page<V2Row>>;
  /** The v1 delegations among `keys` (of any vaults and delegates) in force at `at`. */
  v1InForce(chainId: number, keys: readonly V1Key[], at: bigint): Promise<V1Row[]>;
  /** A page of the wallet's v1 delegations in force at `at`, in `direction`, in creation order. */
  v1Wallet(
    chainId: number,
    wallet: Address,
    at: bigint,
    page: PageRequest,
    direction?: Direction,
  ): Promise<Page<V1Row>>;
  /** Each wallet's v1 listing at `at`, as v1Wallet's, in one statement; see WalletsRead. */
  v1Wallets(
    chainId: number,
    wallets: readonly Address[],
    at: bigint,
    most: number,
    direction?: Direction,
  ): WalletsRead<V1Row>;
  /** A page of the v1 delegations in force at `at` scoped to `contract` (and `tokenId`), in creation order. */
  v1Contract(
    chainId: number,
    contract: Address,
    tokenId: bigint | undefined,
    at: bigint,
    page: PageRequest,
  ): Promise<Page<V1Row>>;
  /** A page of the v2 events in `range` (of the wallet's, when given: as `from` or `to`), oldest first. */
  v2Events(
    chainId: number,
    wallet: Address | undefined,
    range: BlockRange,
    page: PageRequest,
  ): Promise<Page<V2EventRow>>;
  /** A page of the v1 events in `range` (of the wallet's, when given), oldest first. */
  v1Events(
    chainId: number,
    wallet: Address | undefined,
    range: BlockRange,
    page: PageRequest,
  ): Promise<Page<V1EventRow>>;
}

const bigintOrNull = (value: unknown) => (value === null ? null : BigInt(value as string));
const addressOrNull = (value: unknown) => (value ?? null) as Address | null;

/**
 * The position a row is ordered by. Its block column is selected as it is (bigint: a string, a
 * number or a bigint, by driver), never as text, because the pages are ordered by that column: as
 * text "35" sorts before "6", and no index gives that order.
 */
const positionOf = (row: Record<string, unknown>, block: string, logIndex: string): Position => ({
  block: BigInt(row[block] as string | number | bigint),
  logIndex: Number(row[logIndex]),
});

/** `(block, logIndex) > after`, on the given columns, or true. */
const afterSql = (block: SQL, logIndex: SQL, after: Position | undefined) =>
  after === undefined
    ? sql`true`
    : sql`(${block}, ${logIndex}) > (${after.block.toString()}::bigint, ${after.logIndex})`;

/** LIMIT one past the page (to tell whether more follow), or none for the whole rest. */
const limitSql = (page: PageRequest) => (page.limit === undefined ? sql`` : sql`LIMIT ${page.limit + 1}`);

/** The page's items, and whether a row past the limit came back. */
function pageOf<T>(
  rows: Record<string, unknown>[],
  page: PageRequest,
  item: (row: Record<string, unknown>) => T & { position: Position },
): Page<T> {
  const more = page.limit !== undefined && rows.length > page.limit;
  return { items: (more ? rows.slice(0, page.limit) : rows).map(item), more };
}

/**
 * Ordered branches (each an index range scan in the order of `order`), merged in that order: a
 * wallet is `from` or `to`, vault or delegate, so its list is the merge of one scan per role, each
 * excluding the rows an earlier role already gives.
 */
function merged(branches: SQL[], order: SQL, page: PageRequest): SQL {
  const parts = branches.map((b) => sql`(${b} ORDER BY ${order} ${limitSql(page)})`);
  return sql`SELECT * FROM (${sql.join(parts, sql` UNION ALL `)}) merged ORDER BY ${order} ${limitSql(page)}`;
}

/**
 * Many wallets' whole listings, in the order asked (a wallet asked twice, twice), with no more than
 * `most` rows read in all: `more` when they hold more together (the lists are then partial).
 */
export type WalletsRead<Row> = Promise<{ lists: (Row & { position: Position })[][]; more: boolean }>;

/**
 * One statement for many wallets' listings: `listing` (a wallet's, naming it as `w.wallet`) for each
 * wallet of the list in turn, stopped once one row past `most` came back. Without an ORDER BY the
 * rows that come before that one are some, not the first: enough to tell that the lists hold more.
 */
const eachWallet = (wallets: readonly Address[], listing: SQL, most: number) => sql`
  SELECT w.i, m.* FROM jsonb_array_elements_text(${JSON.stringify(wallets)}::jsonb) WITH ORDINALITY AS w(wallet, i)
  CROSS JOIN LATERAL (${listing}) m LIMIT ${most + 1}`;

/** eachWallet's rows as each wallet's list, in list order. */
function listsOf<T>(
  rows: Record<string, unknown>[],
  wallets: number,
  most: number,
  item: (row: Record<string, unknown>) => T & { position: Position },
): Awaited<WalletsRead<T>> {
  const lists: (T & { position: Position })[][] = Array.from({ length: wallets }, () => []);
  for (const row of rows) lists[Number(row.i) - 1]!.push(item(row));
  const before = (a: Position, b: Position) =>
    a.block === b.block ? a.logIndex - b.logIndex : a.block < b.block ? -1 : 1;
  for (const list of lists) list.sort((a, b) => before(a.position, b.position));
  return { lists, more: rows.length > most };
}

/** Runs one statement and gives its rows (createHistoryStore: waiting out the indexer's locks). */
type Rows = (query: SQL) => Promise<Record<string, unknown>[]>;
/** A table of the store's schema, schema-qualified (tableSql). */
type Table = (name: string) => SQL;

/** The v2 reads at a block: from v2_event, with v2_delegation for the list positions. */
function v2Reads(
  table: Table,
  rows: Rows,
): Pick<HistoryStore, "v2Enabled" | "v2Wallet" | "v2Wallets" | "v2Delegation" | "v2Contract"> {
  /** The hash's last event at or before `at`: its state then (see the module's head). */
  const v2LastEvent = (hash: SQL, chainId: number, at: bigint) => sql`
    SELECT e.enable, e.amount FROM ${table("v2_event")} e
    WHERE e.chain_id = ${chainId} AND e.hash = ${hash} AND e.block_number <= ${at.toString()}::bigint
    ORDER BY e.block_number DESC, e.log_index DESC LIMIT 1`;

  /** v2_delegation rows matching `where`, enabled at `at`, as listed, in first-enable order past `after`. */
  const v2Listed = (chainId: number, where: SQL, at: bigint, after: Position | undefined) => sql`
    SELECT d.hash, d.delegation_type, d."from", d."to", d.contract, d.token_id::text AS token_id, d.rights,
           e.amount::text AS amount, d.first_block, d.first_log_index
    FROM ${table("v2_delegation")} d
    CROSS JOIN LATERAL (${v2LastEvent(sql`d.hash`, chainId, at)}) e
    WHERE d.chain_id = ${chainId} AND ${where} AND d.first_block <= ${at.toString()}::bigint
      AND ${afterSql(sql`d.first_block`, sql`d.first_log_index`, after)} AND ${v2EnablesSql(sql`e`)}`;
  const v2Order = sql`first_block, first_log_index`;
  /** A page of a wallet's listing; `wallet`, a parameter or a column. */
  const v2WalletSql = (chainId: number, wallet: SQL, at: bigint, page: PageRequest, direction: Direction) => {
    // Incoming: as `to` (self-delegations too); outgoing: as `from`; both: each delegation once.
    const outgoing = v2Listed(chainId, sql`d."from" = ${wallet}`, at, page.after);
    const incoming = (others: SQL) => v2Listed(chainId, sql`d."to" = ${wallet} AND ${others}`, at, page.after);
    const branches = {
      both: [outgoing, incoming(sql`d."from" <> ${wallet}`)],
      incoming: [incoming(sql`true`)],
      outgoing: [outgoing],
    }[direction];
    return merged(branches, v2Order, page);
  };
  const v2Item = (row: Record<string, unknown>) => ({
    ...v2RowOf(row),
    position: positionOf(row, "first_block", "first_log_index"),
  });

  return {
    async v2Enabled(chainId, hashes, at) {
      if (hashes.length === 0) return new Map();
      // One parameter, however many hashes (a batch of checks asks up to 60,000).
      const found = await rows(sql`
        SELECT h.hash, e.amount::text AS amount
        FROM jsonb_array_elements_text(${JSON.stringify([...new Set(hashes)])}::jsonb) AS h(hash)
        CROSS JOIN LATERAL (${v2LastEvent(sql`h.hash`, chainId, at)}) e
        WHERE ${v2EnablesSql(sql`e`)}`);
      return new Map(found.map((row) => [row.hash as Hex, { enabled: true, amount: bigintOrNull(row.amount) ?? 0n }]));
    },

    async v2Wallet(chainId, wallet, at, page, direction = "both") {
      return pageOf(await rows(v2WalletSql(chainId, sql`${wallet}`, at, page, direction)), page, v2Item);
    },

    async v2Wallets(chainId, wallets, at, most, direction = "both") {
      const listing = v2WalletSql(chainId, sql`w.wallet`, at, { limit: most }, direction);
      return listsOf(await rows(eachWallet(wallets, listing, most)), wallets.length, most, v2Item);
    },

    async v2Delegation(chainId, hash, at) {
      const found = await rows(v2Listed(chainId, sql`d.hash = ${hash}`, at, undefined));
      return found[0] && v2RowOf(found[0]);
    },

    async v2Contract(chainId, contract, tokenId, at, page) {
      const branches =
        tokenId === undefined
          ? [v2Listed(chainId, sql`d.contract = ${contract}`, at, page.after)]
          : [
              v2Listed(
                chainId,
                sql`d.contract = ${contract} AND d.token_id = ${tokenId.toString()}::numeric`,
                at,
                page.after,
              ),
              // CONTRACT delegations cover every token of the contract (ERC20 ones have no token). By
              // type, not by a null token: an index range in list order (IS NULL gives no order).
              v2Listed(chainId, sql`d.contract = ${contract} AND d.delegation_type = 'CONTRACT'`, at, page.after),
            ];
      return pageOf(await rows(merged(branches, v2Order, page)), page, v2Item);
    },
  };
}

/** The v1 reads at a block: from v1_delegation_change, with v1_version_change for the versions. */
function v1Reads(table: Table, rows: Rows): Pick<HistoryStore, "v1InForce" | "v1Wallet" | "v1Wallets" | "v1Contract"> {
  /** A v1 counter's value at `at` (0 before its first change): the vault's when `delegate` is NULL. */
  const v1VersionAt = (vault: SQL, delegate: SQL | null, chainId: number, at: bigint) => sql`coalesce((
    SELECT v.version FROM ${table("v1_version_change")} v
    WHERE v.chain_id = ${chainId} AND v.vault = ${vault}
      AND ${delegate === null ? sql`v.delegate IS NULL` : sql`v.delegate = ${delegate}`}
      AND v.block_number <= ${at.toString()}::bigint
    ORDER BY v.block_number DESC, v.log_index DESC LIMIT 1), 0)`;

  /**
   * Change rows `c` matching `where` that are their key's last change at or before `at` and in force
   * then, past `after` in creation order. The row's checks are one subplan, fenced by OFFSET 0: the
   * planner cannot estimate it, whereas as separate clauses its guesses (an equality each) make it
   * expect no row to pass, and then it reads the whole range and sorts rather than stop at the limit.
   */
  const v1Listed = (chainId: number, where: SQL, at: bigint, after: Position | undefined) => sql`
    SELECT c.type, c.vault, c.delegate, c.contract, c.token_id::text AS token_id,
           c.created_block, c.created_log_index
    FROM ${table("v1_delegation_change")} c
    WHERE c.chain_id = ${chainId} AND ${where} AND c.block_number <= ${at.toString()}::bigint
      AND ${afterSql(sql`c.created_block`, sql`c.created_log_index`, after)}
      AND EXISTS (SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM ${table("v1_delegation_change")} l
          WHERE l.chain_id = c.chain_id AND l.vault = c.vault AND l.delegate = c.delegate AND l.type = c.type
            AND l.contract = c.contract AND l.token_id = c.token_id AND l.block_number <= ${at.toString()}::bigint
            AND (l.block_number, l.log_index) > (c.block_number, c.log_index))
        AND ${v1InForceSql(
          sql`c`,
          v1VersionAt(sql`c.vault`, null, chainId, at),
          v1VersionAt(sql`c.vault`, sql`c.delegate`, chainId, at),
        )} OFFSET 0)`;
  const v1Order = sql`created_block, created_log_index`;
  /** A page of a wallet's listing; `wallet`, a parameter or a column. */
  const v1WalletSql = (chainId: number, wallet: SQL, at: bigint, page: PageRequest, direction: Direction) => {
    // As vault, only the rows at the vault's version then (an index range): one revokeAllDelegates
    // voids any number of rows, and they are never read again (as api/store/store.ts reads the head).
    const vaultVersion = v1VersionAt(wallet, null, chainId, at);
    const outgoing = v1Listed(chainId, sql`c.vault = ${wallet} AND c.vault_version = ${vaultVersion}`, at, page.after);
    const incoming = (others: SQL) => v1Listed(chainId, sql`c.delegate = ${wallet} AND ${others}`, at, page.after);
    const branches = {
      both: [outgoing, incoming(sql`c.vault <> ${wallet}`)],
      incoming: [incoming(sql`true`)],
      outgoing: [outgoing],
    }[direction];
    return merged(branches, v1Order, page);
  };
  const v1Item = (row: Record<string, unknown>) => ({
    ...v1RowOf(row),
    position: positionOf(row, "created_block", "created_log_index"),
  });

  return {
    async v1InForce(chainId, keys, at) {
      if (keys.length === 0) return [];
      const found = await rows(sql`
        SELECT c.type, c.vault, c.delegate, c.contract, c.token_id::text AS token_id
        FROM ${v1KeysSql(keys)}
        CROSS JOIN LATERAL (
          SELECT * FROM ${table("v1_delegation_change")} c
          WHERE c.chain_id = ${chainId} AND c.vault = k.vault AND c.delegate = k.delegate AND c.type = k.type
            AND c.contract = k.contract AND c.token_id = k."tokenId" AND c.block_number <= ${at.toString()}::bigint
          ORDER BY c.block_number DESC, c.log_index DESC LIMIT 1) c
        WHERE ${v1InForceSql(
          sql`c`,
          v1VersionAt(sql`c.vault`, null, chainId, at),
          v1VersionAt(sql`c.vault`, sql`c.delegate`, chainId, at),
        )}`);
      return found.map(v1RowOf);
    },

    async v1Wallet(chainId, wallet, at, page, direction = "both") {
      return pageOf(await rows(v1WalletSql(chainId, sql`${wallet}`, at, page, direction)), page, v1Item);
    },

    async v1Wallets(chainId, wallets, at, most, direction = "both") {
      const listing = v1WalletSql(chainId, sql`w.wallet`, at, { limit: most }, direction);
      return listsOf(await rows(eachWallet(wallets, listing, most)), wallets.length, most, v1Item);
    },

    async v1Contract(chainId, contract, tokenId, at, page) {
      const scoped = sql`c.contract = ${contract} AND c.type <> 'ALL'`;
      const branches =
        tokenId === undefined
          ? [v1Listed(chainId, scoped, at, page.after)]
          : [
              v1Listed(
                chainId,
                sql`${scoped} AND c.token_id = ${tokenId.toString()}::numeric AND c.type = 'TOKEN'`,
                at,
                page.after,
              ),
              // Contract-level delegations cover every token of the contract.
              v1Listed(chainId, sql`${scoped} AND c.token_id = 0 AND c.type = 'CONTRACT'`, at, page.after),
            ];
      return pageOf(await rows(merged(branches, v1Order, page)), page, v1Item);
    },
  };
}

/** The events themselves, of either registry, from v2_event and v1_event. */
function eventReads(table: Table, rows: Rows): Pick<HistoryStore, "v2Events" | "v1Events"> {
  /**
   * The events in the range past the cursor: the chain's, or a wallet's in one role (`party`). A
   * wallet's range and cursor are written on (its column, block, log index), so that only the
   * wallet's index can bound them: without statistics (PGlite) the planner may otherwise walk the
   * chain's block index in order and filter it by the wallet.
   */
  const eventsIn = (range: BlockRange, after: Position | undefined, party?: Party) => {
    const tuple = (lead: SQL | undefined, items: SQL[]) => sql`(${sql.join(lead ? [lead, ...items] : items, sql`, `)})`;
    const key = (...columns: SQL[]) => tuple(party?.column, columns);
    const value = (...values: SQL[]) => tuple(party && sql`${party.wallet}`, values);
    const block = (n: bigint) => sql`${n.toString()}::bigint`;
    return sql`${party ? sql`${party.column} = ${party.wallet}` : sql`true`}
      AND ${key(sql`e.block_number`)} BETWEEN ${value(block(range.from))} AND ${value(block(range.to))}
      AND ${
        after === undefined
          ? sql`true`
          : sql`${key(sql`e.block_number`, sql`e.log_index`)} > ${value(block(after.block), sql`${after.logIndex}`)}`
      }`;
  };
  const eventOrder = sql`block_number, log_index`;
  const eventColumns = sql`e.block_number, e.block_hash, e.block_timestamp::text AS block_timestamp,
    e.transaction_hash, e.log_index, e.kind, e.contract, e.token_id::text AS token_id`;
  /**
   * The fields every event has, in an object the version's fields are then set on: spread into
   * another, a page of 1,000 made each twice (docs/performance.md, "History pages as bytes").
   */
  const eventBase = <E extends V2EventRow | V1EventRow>(row: Record<string, unknown>) => {
    const position = positionOf(row, "block_number", "log_index");
    return {
      blockNumber: position.block,
      blockHash: row.block_hash as Hex,
      blockTimestamp: BigInt(row.block_timestamp as string),
      transactionHash: row.transaction_hash as Hex,
      logIndex: position.logIndex,
      kind: row.kind as string,
      contract: addressOrNull(row.contract),
      tokenId: bigintOrNull(row.token_id),
      position,
      // The version's fields: set by the caller, next.
    } as unknown as E & { position: Position };
  };

  return {
    async v2Events(chainId, wallet, range, page) {
      const select = (party?: Party, other = sql`true`) => sql`
        SELECT ${eventColumns}, e.hash, e."from", e."to", e.rights, e.amount::text AS amount, e.enable
        FROM ${table("v2_event")} e
        WHERE e.chain_id = ${chainId} AND ${eventsIn(range, page.after, party)} AND ${other}`;
      const branches =
        wallet === undefined
          ? [select()]
          : [
              select({ column: sql`e."from"`, wallet }),
              select({ column: sql`e."to"`, wallet }, sql`e."from" <> ${wallet}`),
            ];
      return pageOf(await rows(merged(branches, eventOrder, page)), page, (row) => {
        const e = eventBase<V2EventRow>(row);
        e.hash = row.hash as Hex;
        e.from = row.from as Address;
        e.to = row.to as Address;
        e.rights = row.rights as Hex;
        e.amount = bigintOrNull(row.amount);
        e.enable = (row.enable ?? null) as boolean | null;
        return e;
      });
    },

    async v1Events(chainId, wallet, range, page) {
      const select = (party?: Party, other = sql`true`) => sql`
        SELECT ${eventColumns}, e.vault, e.delegate, e.value, e.revoked_delegate
        FROM ${table("v1_event")} e
        WHERE e.chain_id = ${chainId} AND ${eventsIn(range, page.after, party)} AND ${other}`;
      // A wallet takes part as vault, as the event's delegate, or as the delegate a revokeDelegate revoked.
      const branches =
        wallet === undefined
          ? [select()]
          : [
              select({ column: sql`e.vault`, wallet }),
              select({ column: sql`e.delegate`, wallet }, sql`e.vault <> ${wallet}`),
              select(
                { column: sql`e.revoked_delegate`, wallet },
                sql`e.vault <> ${wallet} AND e.delegate IS DISTINCT FROM ${wallet}`,
              ),
            ];
      return pageOf(await rows(merged(branches, eventOrder, page)), page, (row) => {
        const e = eventBase<V1EventRow>(row);
        e.vault = row.vault as Address;
        e.delegate = addressOrNull(row.delegate);
        e.value = (row.value ?? null) as boolean | null;
        e.revokedDelegate = addressOrNull(row.revoked_delegate);
        return e;
      });
    },
  };
}

/**
 * A HistoryStore over the tables Ponder writes in `schema` (see the module's head): its reads
 * grouped by what they read, each group small enough to read at once.
 */
export function createHistoryStore(execute: Execute, schema: string): HistoryStore {
  const table = (name: string) => tableSql(schema, name);
  const read = waitingOutLocks(execute);
  const rows = async (query: SQL) => (await read(query)).rows;

  /**
   * The blocks of `tables` (each with a time index) nearest `timestamp` where `where` holds: the
   * newest stamped at or before it, and the oldest stamped after it. Timestamps never decrease along
   * a chain: each side is one probe per table.
   */
  async function nearestSamples(chainId: number, timestamp: bigint, tables: string[], where: SQL) {
    const nearest = (side: string, name: string, at: SQL, order: SQL) =>
      sql`(SELECT ${sql.raw(`'${side}'`)} AS side, block_number::text AS block, block_timestamp::text AS timestamp
        FROM ${table(name)} WHERE chain_id = ${chainId} AND ${where} AND ${at} ORDER BY ${order} LIMIT 1)`;
    const [before, after] = [sql`block_timestamp <= ${timestamp}`, sql`block_timestamp > ${timestamp}`];
    const [newest, oldest] = [sql`block_timestamp DESC, block_number DESC`, sql`block_timestamp, block_number`];
    const probes = [
      ...tables.map((name) => nearest("before", name, before, newest)),
      ...tables.map((name) => nearest("after", name, after, oldest)),
    ];
    // Opened by SELECT, as every read is (a standby's log is held to that: test/standby.test.ts).
    const found = await rows(sql`SELECT * FROM (${sql.join(probes, sql` UNION ALL `)}) AS samples`);
    const side = (name: string) =>
      found
        .filter((r) => r.side === name)
        .map((r): Sample => ({ block: BigInt(r.block as string), timestamp: BigInt(r.timestamp as string) }))
        .sort((x, y) => (x.block < y.block ? -1 : x.block > y.block ? 1 : 0));
    return { before: side("before").at(-1), after: side("after")[0] };
  }

  return {
    async indexedBlock(chainId) {
      const [row] = await rows(
        sql`SELECT ${sql.raw(INDEXED_BLOCK_SQL)}::text AS block
          FROM ${sql.raw(positionsSql(schema))} WHERE c.chain_id = ${chainId}`,
      );
      return row && BigInt(row.block as string);
    },
    async eventSamples(chainId, timestamp) {
      return nearestSamples(chainId, timestamp, ["v2_event", "v1_event"], sql`TRUE`);
    },
    async liveSamples(chainId, timestamp, head) {
      return nearestSamples(chainId, timestamp, ["chain_tip"], sql`block_number <= ${head.toString()}::bigint`);
    },
    ...v2Reads(table, rows),
    ...v1Reads(table, rows),
    ...eventReads(table, rows),
  };
}
