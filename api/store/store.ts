import { type SQL, sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import type { Address, Hex } from "viem";
import { causes } from "../../core/errors";
import type { Sample } from "../../core/moment";
import type { Direction } from "../../core/parse";
import { type Query, table } from "../../core/sql";
import type { V1Key, V1Type } from "../../core/v1";
import type { V2Check, V2CheckQuery, V2DelegationType, V2Scope, V2State } from "../../core/v2";
import { checkpointsSql, readySql } from "../../ponder/ponder-0.16.10";
import type { JsonBytes } from "../http/json-bytes";
import { v1InForceSql, v1KeysSql } from "./rules-sql";

/**
 * What a store tells of checks (or keys) at a block without the history: what they consult, but for
 * those `untold`, which a row they read changed after it (always none at the head).
 */
export type Told<K, T> = { found: T; untold: ReadonlySet<K> };

/** What the store knows of a chain at the moment of one answer. */
export type ChainView<T> = {
  /** The last block whose events the answer reflects. */
  indexedBlock: bigint;
  /** False while the chain's history is still being backfilled. */
  ready: boolean;
  data: T;
};

/** Where the store is on a chain, for operators: `/registry/chains`. */
export type ChainPosition = Omit<ChainView<never>, "data"> & {
  /** The timestamp (unix seconds) of the block Ponder's checkpoint names. */
  indexedTimestamp: number;
};

export type V2Row = {
  /** The contract's delegation hash (as getIncomingDelegationHashes gives it). */
  hash: Hex;
  delegationType: V2DelegationType;
  from: Address;
  to: Address;
  contract: Address | null;
  tokenId: bigint | null;
  rights: Hex;
  amount: bigint | null;
};

/** Where an event, or the event a listed delegation is ordered by, sits on the chain. */
export type Position = { block: bigint; logIndex: number };

/** A page of a listing: after which position, and how many at most (undefined: all the rest). */
export type PageRequest<A = Position> = { after?: A; limit?: number };

/** One page's items, each with the position it is ordered by, and whether more items follow. */
export type Page<T, A = Position> = { items: (T & { position: A })[]; more: boolean };

export type V1Row = { type: V1Type; vault: Address; delegate: Address; contract: Address; tokenId: bigint };

/**
 * A wallet's whole listing. `revision` (from stores that number each wallet's changes) names the
 * rows: the same revision, the same rows. Asked with the revision the caller holds, such a store
 * leaves `data` undefined while it is still the current one.
 */
export type WalletView<T> = ChainView<T[] | undefined> & Spelt & { revision?: string };
/** Listings written as JSON, and how many records they hold. */
export type ListingsJson = { json: Uint8Array<ArrayBuffer>; records: number };
/** A page written as JSON (a list of its items' records): how many, the last one's position, whether more follow. */
export type PageJson<A = Position> = {
  json: Uint8Array<ArrayBuffer>;
  count: number;
  last: A | undefined;
  more: boolean;
};
/** Vaults written as JSON, and how many of the hot wallet's incoming rows were read for them. */
export type VaultsJson = { json: Uint8Array<ArrayBuffer>; incoming: number };
/** Spells an address in EIP-55 case (core's `checksumAddress`, or a store's that keeps each one's case). */
export type Checksum = (address: Address) => Address;
/** Listings from a store that keeps each address's EIP-55 case: it spells those their rows name, without hashing. */
export type Spelt = { checksum?: Checksum };
/**
 * Writes an address (0x and 40 hex digits, as the tables hold it) to `out` as a JSON string in
 * EIP-55 case, from a store that keeps its case; false, and nothing written, where it does not.
 */
export type AddressJson = (address: string, out: JsonBytes) => boolean;

/**
 * The indexed state the API reads. Each call answers from one consistent snapshot, so that the
 * data is never newer or older than the block it reports. `undefined`: the chain has no indexed
 * state yet.
 */
export interface Store {
  /** A writer of addresses the store keeps the case of (an in-memory copy's), for the chain's history pages. */
  addressJson?(chainId: number): AddressJson | undefined;
  /** The enabled v2 delegations among `hashes`. */
  v2Enabled(chainId: number, hashes: readonly Hex[]): Promise<ChainView<Map<Hex, V2State>> | undefined>;
  /**
   * The wallet's enabled v2 delegations, incoming and outgoing, in first-enable order. `spell`: every
   * row is to be rendered, and a store that keeps addresses' case spells them as it reads (checksum).
   */
  v2Wallet(chainId: number, wallet: Address, held?: string, spell?: boolean): Promise<WalletView<V2Row> | undefined>;
  /** Each wallet's enabled v2 delegations, as v2Wallet lists them, all from one view. */
  v2Wallets(chainId: number, wallets: readonly Address[]): Promise<(ChainView<V2Row[][]> & Spelt) | undefined>;
  /**
   * v2Wallets as at `block`, where the store can tell without the history (an in-memory copy: a
   * wallet none of whose rows changed after `block`); a list undefined where it cannot.
   */
  v2WalletsAt?(
    chainId: number,
    wallets: readonly Address[],
    block: bigint,
  ): Promise<(ChainView<(V2Row[] | undefined)[]> & Spelt) | undefined>;
  /**
   * A page of a wallet's v2 listing in `direction` as at `block`, as the history pages it
   * (HistoryStore's v2Wallet), written as JSON (api/routes/records.ts's v2Record of each row) by a
   * store that can tell it without the history (v2WalletsAt's copy: none of the page's rows changed
   * after `block`); `data` undefined where it cannot.
   */
  v2WalletPageJson?(
    chainId: number,
    wallet: Address,
    block: bigint,
    page: PageRequest,
    direction: Direction,
  ): Promise<ChainView<PageJson | undefined> | undefined>;
  /** v2WalletPageJson's, of the wallet's v1 listing (HistoryStore's v1Wallet; v1Record's). */
  v1WalletPageJson?(
    chainId: number,
    wallet: Address,
    block: bigint,
    page: PageRequest,
    direction: Direction,
  ): Promise<ChainView<PageJson | undefined> | undefined>;
  /**
   * v2Wallets in `direction` (with `block`, v2WalletsAt), written as JSON by a store that writes it
   * from what it holds (an in-memory copy), without rows or records of their own: api/routes/records.ts's
   * v2Record of each row, each wallet's in a list. Past `most` records it stops (`records` over
   * `most`: the JSON is not whole). `data` undefined: a wallet is not told at `block`.
   */
  v2WalletsJson?(
    chainId: number,
    wallets: readonly Address[],
    direction: Direction,
    block: bigint | undefined,
    most: number,
  ): Promise<ChainView<ListingsJson | undefined> | undefined>;
  /**
   * The vaults v2 check `query` lets its hot wallet act for at the newest indexed block, as JSON,
   * by a store that writes it from what it holds (an in-memory copy): api/routes/records.ts's
   * v2VaultRecord of each of core's v2Vaults; `incoming`, how many incoming rows it read.
   */
  v2VaultsJson?(chainId: number, query: Omit<V2CheckQuery, "from">): Promise<ChainView<VaultsJson> | undefined>;
  /** The enabled v2 delegation with this hash, if any. */
  v2Delegation(chainId: number, hash: Hex): Promise<ChainView<V2Row | undefined> | undefined>;
  /** The v1 delegations in force among `keys` (of any vaults and delegates). */
  v1InForce(chainId: number, keys: readonly V1Key[]): Promise<ChainView<V1Row[]> | undefined>;
  /**
   * v2Enabled and v1InForce as at `block`, where the store can tell without the history: an
   * in-memory copy can when none of the rows they read changed after `block`. `data` undefined
   * (or no view): the HistoryStore's to answer.
   */
  v2EnabledAt(
    chainId: number,
    hashes: readonly Hex[],
    block: bigint,
  ): Promise<ChainView<Map<Hex, V2State> | undefined> | undefined>;
  v1InForceAt(
    chainId: number,
    keys: readonly V1Key[],
    block: bigint,
  ): Promise<ChainView<V1Row[] | undefined> | undefined>;
  /**
   * v1InForce (with `block`, v1InForceAt) as the set of the keys given (the objects) in force, in
   * no order, from a store that finds each cheaply (an in-memory copy): a check's keys need no
   * string of their own to be told apart. At `block`, key by key (Told).
   */
  v1Consulted?(
    chainId: number,
    keys: readonly V1Key[],
    block?: bigint,
  ): Promise<ChainView<Told<V1Key, Set<V1Key>> | undefined> | undefined>;
  /**
   * v2Enabled (with `block`, v2EnabledAt) of the delegations the checks consult, by each check's
   * scope objects, from a store that can find them by their fields without hashing them (an
   * in-memory copy); at `block`, check by check (Told). A store without it is asked by hash.
   */
  v2Consulted?(
    chainId: number,
    checks: readonly V2Check[],
    block?: bigint,
  ): Promise<ChainView<Told<V2Check, Map<V2Scope, V2State>> | undefined> | undefined>;
  /** The wallet's v1 delegations in force, as vault or delegate, in creation order; `spell` as v2Wallet's. */
  v1Wallet(chainId: number, wallet: Address, held?: string, spell?: boolean): Promise<WalletView<V1Row> | undefined>;
  /** Each wallet's v1 delegations in force, as v1Wallet lists them, all from one view. */
  v1Wallets(chainId: number, wallets: readonly Address[]): Promise<(ChainView<V1Row[][]> & Spelt) | undefined>;
  /** Every indexed chain's position. */
  chainStates(): Promise<Map<number, ChainPosition>>;
  /**
   * The blocks with registry events nearest a moment, up to `head`, where the store holds them in
   * memory (an in-memory copy); undefined: the HistoryStore's eventSamples tells them.
   */
  eventSamples?(chainId: number, timestamp: bigint, head: bigint): { before?: Sample; after?: Sample } | undefined;
}

/** A store with nothing indexed yet: every chain answers chain_syncing (the waiting room, tests). */
export const NOTHING_INDEXED: Store = {
  v2Enabled: async () => undefined,
  v2Wallet: async () => undefined,
  v2Wallets: async () => undefined,
  v2Delegation: async () => undefined,
  v1InForce: async () => undefined,
  v2EnabledAt: async () => undefined,
  v1InForceAt: async () => undefined,
  v1Wallet: async () => undefined,
  v1Wallets: async () => undefined,
  chainStates: async () => new Map(),
};

/** Runs one SQL statement; Ponder's read-only `db.execute` and drizzle over node-postgres both fit. */
export type Execute = (query: SQL) => Promise<{ rows: Record<string, unknown>[] }>;

const dialect = new PgDialect();

/** A schema-qualified table in drizzle's SQL, quoted as core/sql.ts quotes every name. */
export const tableSql = (schema: string, name: string): SQL => sql.raw(table(schema, name));

/** An Execute over a database that takes SQL text with `$n` parameters (api/database/db.ts). */
export const executeOver =
  (query: Query): Execute =>
  (statement) => {
    const { sql: text, params } = dialect.sqlToQuery(statement);
    return query(text, params);
  };

const readPosition = (row: Record<string, unknown>) => ({
  indexedBlock: BigInt(row.indexed_block as string),
  ready: Number(row.ready) === 1,
});

const bigintOrNull = (value: unknown) => (value === null ? null : BigInt(value as string));

/** A v2_delegation row (token_id and amount as text) as the API lists it. */
export const v2RowOf = (row: Record<string, unknown>): V2Row => ({
  hash: row.hash as Hex,
  delegationType: row.delegation_type as V2DelegationType,
  from: row.from as Address,
  to: row.to as Address,
  contract: (row.contract as Address | null) ?? null,
  tokenId: bigintOrNull(row.token_id),
  rights: row.rights as Hex,
  amount: bigintOrNull(row.amount),
});

/** A v1_delegation row (token_id as text) as the API lists it. */
export const v1RowOf = (row: Record<string, unknown>): V1Row => ({
  type: row.type as V1Type,
  vault: row.vault as Address,
  delegate: row.delegate as Address,
  contract: row.contract as Address,
  tokenId: BigInt(row.token_id as string),
});

/** Each wallet's rows, in the rows' order: those that name it as either party (`parties`), each once. */
export function byWallet<R>(wallets: readonly Address[], rows: readonly R[], parties: (row: R) => [Address, Address]) {
  const lists = new Map<Address, R[]>(wallets.map((w) => [w, []]));
  for (const row of rows) {
    const [a, b] = parties(row);
    lists.get(a)?.push(row);
    if (b !== a) lists.get(b)?.push(row);
  }
  return wallets.map((w) => lists.get(w)!);
}

/** How long a read waits for a block being written to land whole (PGlite only, see below). */
const WRITE_WAIT_MS = 2_000;

/** Values as one SQL array parameter (JSON: Postgres and PGlite take it alike), for `= ANY(...)`. */
const anyOf = (values: readonly string[]) =>
  sql`ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(values)}::jsonb))`;

/** A consistent read could not be had in time; the API answers 503 with Retry-After. */
export class StoreBusy extends Error {}

/** SQLSTATE 55P03 lock_not_available (a lock timeout, or NOWAIT refused), however the driver wrapped it. */
export const lockNotAvailable = (error: unknown) =>
  [...causes(error)].some((e) => (e as { code?: unknown }).code === "55P03");

/**
 * `execute`, each statement taken again while it meets a lock timeout, for up to `waitMs`: then
 * StoreBusy. Reads give up on a lock soon (Ponder's read-only connections after 500 ms, the
 * replicas' after 200 ms: REPLICA_CONNECTION), before Postgres looks for deadlocks (after 1 s): a read
 * waiting for a table must never be what Ponder's reorg revert waits for in turn, or Postgres may
 * cancel the revert, which Ponder then retries for a minute. The revert drops and recreates
 * triggers, holding table locks, for longer than 500 ms under load.
 */
export function waitingOutLocks(execute: Execute, waitMs = WRITE_WAIT_MS): Execute {
  return async (statement) => {
    const deadline = Date.now() + waitMs;
    for (;;) {
      try {
        return await execute(statement);
      } catch (error) {
        if (!lockNotAvailable(error)) throw error;
        if (Date.now() > deadline)
          throw new StoreBusy("the indexer holds the tables (a reorganization is being reverted)");
      }
    }
  };
}

/**
 * SQL: each chain's row `c` of Ponder's checkpoints (ponder/ponder-0.16.10.ts) beside its chain_head
 * row `h` (ponder.schema.ts), for INDEXED_BLOCK_SQL.
 */
export const positionsSql = (schema: string) =>
  `${checkpointsSql(schema)} c LEFT JOIN ${table(schema, "chain_head")} h ON h.chain_id = c.chain_id`;

/**
 * SQL over positionsSql: the block a chain's state is at. Mostly the checkpoint's, but Ponder
 * reverts rows (of a reorganized block, or at a restart those of blocks not yet final) in one
 * transaction and moves the checkpoint only in a later one; meanwhile the checkpoint names a block
 * whose events are gone. The revert rewrites `h` too (every event writes it), so `h` is then newer
 * than `c` (xmin age), and the state is the one at `h`'s block, below `c`'s: the revert took back
 * events above it. REVERTED_SQL: whether it is so now. Not when `h` names `c`'s own block: on
 * Postgres a block's rows, `h` among them, are written in a savepoint, whose xid is newer than that
 * of the transaction, which then moves the checkpoint (ponder/ponder-0.16.10.ts), so a block with
 * events leaves `h` newer than `c` until the next block.
 */
export const REVERTED_SQL = "(age(h.xmin) < age(c.xmin) AND h.last_event_block < c.block)";
export const INDEXED_BLOCK_SQL = `(CASE WHEN ${REVERTED_SQL} THEN h.last_event_block ELSE c.block END)`;

/**
 * The rows `row` finds for each key of relation `keys` (`k`), which `row` names: index probes per
 * key. Left a plain subquery, the planner may make it a join that reads every row of the chain,
 * and does so without statistics (PGlite never analyzes); OFFSET 0 (or `bound`) keeps it a loop.
 */
const perKey = (keys: SQL, row: SQL, bound = sql`OFFSET 0`) =>
  sql`SELECT d.* FROM ${keys} CROSS JOIN LATERAL (${row} ${bound}) d`;
/** The row of each key that `row` finds, if any: one primary-key probe each (see perKey). */
const byKey = (keys: SQL, row: SQL) => perKey(keys, row, sql`LIMIT 1`);

/** The wallets, each once, as relation `k(wallet)`. */
const walletKeys = (wallets: readonly Address[]) =>
  sql`jsonb_array_elements_text(${JSON.stringify([...new Set(wallets)])}::jsonb) AS k(wallet)`;

/**
 * SQL: the chain's v2_delegation rows in `schema` matching `where`, as createSqlStore's candidates
 * (`counts`: enabled; `touched`: the block that last changed the row). Candidates include revoked
 * rows: a revoke in flight must be seen to be waited for.
 */
const v2CandidatesSql = (schema: string, chainId: number, where: SQL) => sql`
    SELECT chain_id, hash, delegation_type, "from", "to", contract, token_id::text AS token_id, rights,
           amount::text AS amount, first_block, first_log_index, enabled AS counts, updated_block::text AS touched
    FROM ${tableSql(schema, "v2_delegation")} WHERE chain_id = ${chainId} AND ${where}`;

/**
 * SQL: the chain's v1_delegation rows `d` in `schema` matching `where`, as createSqlStore's
 * candidates (`counts`: in force at the versions; `touched`: the last block that changed the row or
 * its versions). The versions are looked up per candidate row (LIMIT 1, one row by primary key, keeps
 * the planner from making them joins): a hash join would read the whole version tables.
 */
const v1CandidatesSql = (schema: string, chainId: number, where: SQL) => sql`
    SELECT d.chain_id, d.type, d.vault, d.delegate, d.contract, d.token_id::text AS token_id,
           d.created_block, d.created_log_index,
           ${v1InForceSql(sql`d`, sql`coalesce(vv.version, 0)`, sql`coalesce(pv.version, 0)`)} AS counts,
           greatest(d.updated_block, coalesce(vv.updated_block, 0), coalesce(pv.updated_block, 0))::text AS touched
    FROM ${tableSql(schema, "v1_delegation")} d
    LEFT JOIN LATERAL (SELECT v.version, v.updated_block FROM ${tableSql(schema, "v1_vault_version")} v
      WHERE v.chain_id = d.chain_id AND v.vault = d.vault LIMIT 1) vv ON true
    LEFT JOIN LATERAL (SELECT p.version, p.updated_block FROM ${tableSql(schema, "v1_pair_version")} p
      WHERE p.chain_id = d.chain_id AND p.vault = d.vault AND p.delegate = d.delegate LIMIT 1) pv ON true
    WHERE d.chain_id = ${chainId} AND ${where}`;

/**
 * SQL: the candidates of the wallets' v2 listings, as `from` or `to`. A row naming two of the
 * wallets is found from the first: the second skips it.
 */
const v2WalletsSql = (schema: string, chainId: number, wallets: readonly Address[]) => {
  const v2 = (where: SQL) => v2CandidatesSql(schema, chainId, where);
  return sql`
      ${perKey(walletKeys(wallets), v2(sql`"from" = k.wallet`))}
      UNION ALL
      SELECT * FROM (${perKey(walletKeys(wallets), v2(sql`"to" = k.wallet`))}) d
      WHERE NOT d."from" = ANY(${anyOf(wallets)})`;
};

/**
 * SQL: the candidates of the wallets' v1 listings. As vault, only the rows at the vault's current
 * version (an index range on vault_version, the version read first): one revokeAllDelegates voids
 * any number of rows, never read again. As delegate, the rows of vaults not among the wallets (the
 * others are found as vault, or void). The vaults' version rows are candidates too (never counted):
 * a revokeAllDelegates in flight touches none of the rows the ranges read.
 */
const v1WalletsSql = (schema: string, chainId: number, wallets: readonly Address[]) => {
  const v1 = (where: SQL) => v1CandidatesSql(schema, chainId, where);
  const versions = tableSql(schema, "v1_vault_version");
  const version = sql`coalesce((SELECT v.version FROM ${versions} v
      WHERE v.chain_id = ${chainId} AND v.vault = k.wallet), 0)`;
  return sql`
      ${perKey(
        sql`${walletKeys(wallets)} CROSS JOIN LATERAL (SELECT ${version} AS version) kv`,
        v1(sql`d.vault = k.wallet AND d.vault_version = kv.version`),
      )}
      UNION ALL
      SELECT * FROM (${perKey(walletKeys(wallets), v1(sql`d.delegate = k.wallet`))}) d
      WHERE NOT d.vault = ANY(${anyOf(wallets)})
      UNION ALL
      SELECT v.chain_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false, v.updated_block::text
      FROM ${walletKeys(wallets)} CROSS JOIN LATERAL (SELECT v.chain_id, v.updated_block
        FROM ${versions} v WHERE v.chain_id = ${chainId} AND v.vault = k.wallet LIMIT 1) v`;
};

/**
 * A store over the tables Ponder writes (ponder.schema.ts) in `schema`. Each read takes the chain's
 * checkpoint and the candidate rows in one statement.
 *
 * Names are schema-qualified because a session may hold temp tables of the same names (Ponder
 * creates them for batch updates, and on PGlite the API shares the indexer's one session).
 *
 * On Postgres one statement is one snapshot. On PGlite a block's writes become visible table by
 * table, the checkpoint last, so a read can see rows of the block after the checkpoint's. Every
 * state row records the block that last changed it (`touched`), and every change an answer could
 * depend on touches a candidate row: a read that meets a row touched after the checkpoint is taken
 * again, until the block has landed whole.
 *
 * A chain's position: INDEXED_BLOCK_SQL over positionsSql; readiness is Ponder's one flag for all
 * chains.
 */
export function createSqlStore(execute: Execute, schema: string): Store {
  const position = sql`${sql.raw(INDEXED_BLOCK_SQL)}::text AS indexed_block, ${sql.raw(readySql(schema))} AS ready`;
  const positions = sql.raw(positionsSql(schema));

  const read = waitingOutLocks(execute);

  async function view<T>(chainId: number, rows: SQL, order: SQL, toData: (rows: Record<string, unknown>[]) => T) {
    const query = sql`
      SELECT ${position}, d.*
      FROM ${positions}
      LEFT JOIN (${rows}) d ON d.chain_id = c.chain_id
      WHERE c.chain_id = ${chainId}
      ORDER BY ${order}`;
    const deadline = Date.now() + WRITE_WAIT_MS;
    for (;;) {
      const result = await read(query);
      const first = result.rows[0];
      if (first === undefined) return undefined;
      const { indexedBlock, ready } = readPosition(first);
      const candidates = result.rows.filter((row) => row.chain_id !== null);
      // While backfilling the answer is a 503 anyway: no need for a whole block.
      const inFlight = ready && candidates.some((row) => BigInt(row.touched as string) > indexedBlock);
      if (!inFlight) return { indexedBlock, ready, data: toData(candidates.filter((row) => row.counts === true)) };
      if (Date.now() > deadline)
        throw new StoreBusy(`block ${indexedBlock + 1n} of chain ${chainId} is still being written`);
      await new Promise((ok) => setTimeout(ok, 2));
    }
  }

  const v2 = (chainId: number, where: SQL) => v2CandidatesSql(schema, chainId, where);
  const v1 = (chainId: number, where: SQL) => v1CandidatesSql(schema, chainId, where);
  const v1Rows = (rows: Record<string, unknown>[]) => rows.map(v1RowOf);

  const v2Wallets: Store["v2Wallets"] = (chainId, wallets) =>
    view(chainId, v2WalletsSql(schema, chainId, wallets), sql`d.first_block, d.first_log_index`, (found) =>
      byWallet(wallets, found.map(v2RowOf), (row) => [row.from, row.to]),
    );

  const v1Wallets: Store["v1Wallets"] = (chainId, wallets) =>
    view(chainId, v1WalletsSql(schema, chainId, wallets), sql`d.created_block, d.created_log_index`, (found) =>
      byWallet(wallets, v1Rows(found), (row) => [row.vault, row.delegate]),
    );

  return {
    v2Enabled(chainId, hashes) {
      // One parameter however many hashes (a batch asks up to 60,000), each looked up by its key
      // (see byKey). None (from = 0x0 or 0x1): still read the chain's checkpoint.
      const found = byKey(
        sql`jsonb_array_elements_text(${JSON.stringify(hashes)}::jsonb) AS k(hash)`,
        v2(chainId, sql`hash = k.hash`),
      );
      return view(chainId, found, sql`d.hash`, (rows) => {
        const data = new Map<Hex, V2State>();
        for (const row of rows) data.set(row.hash as Hex, { enabled: true, amount: bigintOrNull(row.amount) ?? 0n });
        return data;
      });
    },

    v2Wallets,
    v1Wallets,

    async v2Wallet(chainId, wallet) {
      const read = await v2Wallets(chainId, [wallet]);
      return read && { ...read, data: read.data[0] };
    },

    v2Delegation(chainId, hash) {
      return view(chainId, v2(chainId, sql`hash = ${hash}`), sql`d.hash`, (rows) => rows[0] && v2RowOf(rows[0]));
    },

    v1InForce(chainId, keys) {
      const where = sql`d.vault = k.vault AND d.delegate = k.delegate AND d.type = k.type AND d.contract = k.contract
        AND d.token_id = k."tokenId"`;
      return view(
        chainId,
        byKey(v1KeysSql(keys), v1(chainId, where)),
        sql`d.created_block, d.created_log_index`,
        v1Rows,
      );
    },

    // Each read is one statement either way: the history's answers at any block.
    v2EnabledAt: async () => undefined,
    v1InForceAt: async () => undefined,

    async chainStates() {
      const result = await read(
        sql`
        SELECT c.chain_id, ${position}, c.block_timestamp::text AS indexed_timestamp
        FROM ${positions}`,
      );
      return new Map(
        result.rows.map((row) => [
          Number(row.chain_id),
          { ...readPosition(row), indexedTimestamp: Number(row.indexed_timestamp) },
        ]),
      );
    },

    async v1Wallet(chainId, wallet) {
      const read = await v1Wallets(chainId, [wallet]);
      return read && { ...read, data: read.data[0] };
    },
  };
}
