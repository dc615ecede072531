import type { Address } from "viem";
import { checksumAddress } from "../../core/keccak";
import type { Query } from "../../core/sql";
import type { AccessDb } from "../database/db";
import { JsonBytes } from "../http/json-bytes";
import type { ChainSchemas } from "../store/chain-schemas";
import {
  type ChainPosition,
  type ChainView,
  lockNotAvailable,
  type Spelt,
  type Store,
  StoreBusy,
  type WalletView,
} from "../store/store";
import { ChainState, type Spellings } from "./chain-state";
import { ReplicaFeed, type Snapshot } from "./feed";

/** How often the copy asks the database for what changed. */
const SYNC_EVERY_MS = 100;
/**
 * A copy whose syncs have failed, or one sync has hung, for this long is not answered from: the
 * database is unreachable. A busy process that syncs late is not a reason (its syncs succeed).
 */
const MAX_SILENCE_MS = 5_000;
/** A sync still under way after this long has hung (a process busy with big answers is slower). */
const MAX_SYNC_MS = 15_000;

const NOTHING = new ChainState();
/**
 * The one writer of the JSON the copy writes (listings, pages, vaults), each copied out when written:
 * a 64 KB buffer of its own for each small wallet's listing (a few KB) cost the worker an allocation
 * V8 counts.
 */
const listingsJson = new JsonBytes();

/** What `write` writes to the one writer, as JSON beside what it tells of it (undefined: it could not). */
function written<T extends object>(
  write: (out: JsonBytes) => T | undefined,
): (T & { json: Uint8Array<ArrayBuffer> }) | undefined {
  const out = listingsJson.reset();
  const told = write(out);
  return told && { ...told, json: out.take() };
}
/** Spells the addresses `spelt` holds (a listing's, as its copy spelt them) from there, others by hashing. */
const spellingFrom = (spelt: Spellings) => (address: Address) => spelt.get(address) ?? checksumAddress(address);

/**
 * The replica's database connections: named, for pg_stat_activity, and giving up on a lock after
 * 200 ms, before Postgres looks for deadlocks (after 1 s; see waitingOutLocks).
 */
export const REPLICA_CONNECTION = { applicationName: "delegation-lookup replica", lockTimeoutMs: 200 } as const;

/** Snapshots of a Postgres database: read-only REPEATABLE READ transactions. */
export const readOnlySnapshot =
  (database: Pick<AccessDb, "transaction">): Snapshot =>
  (work) =>
    database.transaction(async (query) => {
      await query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
      return work(query);
    });

export type ReplicaStore = Store & {
  /** Resolves after the first sync (successful or not). */
  started: Promise<void>;
  stop(): void;
};

/**
 * When the database fell silent, if it has been silent too long to answer from: syncs failing since
 * `failingSince` for over MAX_SILENCE_MS, or the sync begun at `syncStarted` (0: none under way)
 * hung for over MAX_SYNC_MS.
 */
function silentSince(now: number, failingSince: number | undefined, syncStarted: number): number | undefined {
  const failedTooLong = failingSince !== undefined && now - failingSince > MAX_SILENCE_MS;
  const hung = syncStarted > 0 && now - syncStarted > MAX_SYNC_MS;
  return failedTooLong || hung ? Math.min(failingSince ?? now, syncStarted || now) : undefined;
}

/**
 * Syncs `feed` now, then SYNC_EVERY_MS after each sync ends, until stopped; logs when the database
 * stops and starts answering. `answering` throws StoreBusy once it has been silent too long
 * (silentSince): a copy that cannot be refreshed answers 503 rather than ever staler.
 */
function keepSyncing(feed: ReplicaFeed, log: (message: string) => void) {
  /** Since when syncs have failed (undefined: the last one succeeded). */
  let failingSince: number | undefined = Date.now();
  /** When the sync under way began. */
  let syncStarted = 0;
  let failing: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const sync = async () => {
    syncStarted = Date.now();
    try {
      await feed.sync();
      failingSince = undefined;
      if (failing) log(`replica: the database answers again`);
      failing = undefined;
    } catch (error) {
      failingSince ??= syncStarted;
      // The indexer holds a table (a reorganization being reverted): the next sync tries again.
      if (lockNotAvailable(error)) return;
      const message = (error as Error).message;
      if (failing !== message) log(`replica: cannot sync from the database: ${message}`);
      failing = message;
    } finally {
      syncStarted = 0;
    }
  };
  const loop = async () => {
    await sync();
    if (!stopped) timer = setTimeout(loop, SYNC_EVERY_MS);
  };
  const started = sync().then(() => {
    if (!stopped) timer = setTimeout(loop, SYNC_EVERY_MS);
  });

  return {
    /** Resolves after the first sync (successful or not). */
    started,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
    answering() {
      const now = Date.now();
      const since = silentSince(now, failingSince, syncStarted);
      if (since !== undefined)
        throw new StoreBusy(`the database has not answered for ${Math.round((now - since) / 1000)} s`);
    },
  };
}

/**
 * A Store answering from an in-memory copy of the indexer's state (api/replica/feed.ts), kept in
 * step with the database: a check is a few map lookups, with no round trip to the database. Each
 * answer reports the block the copy holds, and it is swapped only between requests, whole.
 * When the copy cannot be refreshed (the database is down), answers are 503 after a few seconds
 * rather than ever staler. `query` runs a statement outside any snapshot (ReplicaFeed's).
 */
export function createReplicaStore(
  snapshot: Snapshot,
  schemas: ChainSchemas,
  query?: Query,
  log: (message: string) => void = console.error,
): ReplicaStore {
  const feed = new ReplicaFeed(snapshot, schemas, query);
  const syncing = keepSyncing(feed, log);

  function view<T>(chainId: number, read: (state: ChainState) => T): ChainView<T> | undefined {
    syncing.answering();
    const position = feed.positions.get(chainId);
    if (position === undefined) return undefined;
    const chain = feed.chains.get(chainId);
    // Its indexer not ready: no copy is held yet, and the answer is a 503 whatever the data.
    if (chain === undefined) return { indexedBlock: BigInt(position.block), ready: false, data: read(NOTHING) };
    return { indexedBlock: BigInt(chain.state.block), ready: true, data: read(chain.state) };
  }

  /**
   * A wallet's listing and its revision, read together; no rows when `held` is still the revision.
   * With `spell`, its addresses are spelt by the copy, which keeps each one's case.
   */
  function walletView<T>(
    chainId: number,
    wallet: Address,
    held: string | undefined,
    spell: boolean | undefined,
    rows: (state: ChainState, spelt: Spellings | undefined) => T[],
  ): WalletView<T> | undefined {
    // Only what renders every row spells as it reads: the vaults name a few of a wallet's addresses.
    const spelt: Spellings | undefined = spell ? new Map() : undefined;
    const read = view(chainId, (s) => {
      const revision = s.walletRevision(wallet);
      return { revision, rows: revision === held ? undefined : rows(s, spelt) };
    });
    if (read === undefined) return undefined;
    const { revision, rows: data } = read.data;
    const checksum = spelt && spellingFrom(spelt);
    return { indexedBlock: read.indexedBlock, ready: read.ready, revision, data, checksum };
  }

  /** Each wallet's listing, all from one view, spelt by the copy as walletView's. */
  function walletsView<L>(
    chainId: number,
    wallets: readonly Address[],
    rows: (state: ChainState, wallet: Address, spelt: Spellings) => L,
  ): (ChainView<L[]> & Spelt) | undefined {
    return spelledView(chainId, (s, spelt) => wallets.map((w) => rows(s, w, spelt)));
  }

  /** A view whose addresses the copy spells as it reads them. */
  function spelledView<T>(
    chainId: number,
    read: (state: ChainState, spelt: Spellings) => T,
  ): (ChainView<T> & Spelt) | undefined {
    const spelt: Spellings = new Map();
    const viewed = view(chainId, (s) => read(s, spelt));
    return viewed && { ...viewed, checksum: spellingFrom(spelt) };
  }

  return {
    started: syncing.started,
    stop: syncing.stop,
    addressJson: (chainId) => feed.chains.get(chainId)?.state.addressJson,
    v2Enabled: async (chainId, hashes) => view(chainId, (s) => s.v2Enabled(hashes)),
    v2Wallet: async (chainId, wallet, held, spell) =>
      walletView(chainId, wallet, held, spell, (s, spelt) => s.v2Wallet(wallet, spelt)),
    v2Wallets: async (chainId, wallets) => walletsView(chainId, wallets, (s, w, spelt) => s.v2Wallet(w, spelt)),
    v2WalletsAt: async (chainId, wallets, block) =>
      walletsView(chainId, wallets, (s, w, spelt) => s.v2WalletAt(w, Number(block), spelt)),
    v2WalletPageJson: async (chainId, wallet, block, page, direction) =>
      view(chainId, (s) => written((out) => s.v2WalletPageJson(wallet, Number(block), direction, page, out))),
    v1WalletPageJson: async (chainId, wallet, block, page, direction) =>
      view(chainId, (s) => written((out) => s.v1WalletPageJson(wallet, Number(block), direction, page, out))),
    v2WalletsJson: async (chainId, wallets, direction, block, most) =>
      view(chainId, (s) =>
        written((out) => {
          const records = s.v2WalletsJson(
            wallets,
            direction,
            block === undefined ? undefined : Number(block),
            most,
            out,
          );
          return records === undefined ? undefined : { records };
        }),
      ),
    v2VaultsJson: async (chainId, query) =>
      view(chainId, (s) => written((out) => ({ incoming: s.v2VaultsJson(query, out) }))!),
    v2Delegation: async (chainId, hash) => view(chainId, (s) => s.v2Delegation(hash)),
    v1InForce: async (chainId, keys) => view(chainId, (s) => s.v1InForce(keys)),
    v2EnabledAt: async (chainId, hashes, block) => view(chainId, (s) => s.v2EnabledAt(hashes, Number(block))),
    v1Consulted: async (chainId, keys, block) =>
      view(chainId, (s) => (block === undefined ? s.v1Consulted(keys) : s.v1ConsultedAt(keys, Number(block)))),
    v2Consulted: async (chainId, checks, block) =>
      view(chainId, (s) => (block === undefined ? s.v2Consulted(checks) : s.v2ConsultedAt(checks, Number(block)))),
    v1InForceAt: async (chainId, keys, block) => view(chainId, (s) => s.v1InForceAt(keys, Number(block))),
    eventSamples(chainId, timestamp, head) {
      const chain = feed.chains.get(chainId);
      if (chain === undefined) return undefined;
      return chain.times.around(timestamp, BigInt(Math.min(chain.state.block, Number(head))));
    },
    v1Wallets: async (chainId, wallets) => walletsView(chainId, wallets, (s, w, spelt) => s.v1Wallet(w, spelt)),
    v1Wallet: async (chainId, wallet, held, spell) =>
      walletView(chainId, wallet, held, spell, (s, spelt) => s.v1Wallet(wallet, spelt)),
    async chainStates() {
      const states = new Map<number, ChainPosition>();
      for (const [chainId, position] of feed.positions) {
        const chain = feed.chains.get(chainId);
        states.set(chainId, {
          indexedBlock: BigInt(chain?.state.block ?? position.block),
          ready: chain !== undefined,
          indexedTimestamp: position.timestamp,
        });
      }
      return states;
    },
  };
}
