/**
 * Ponder keeps the blocks, logs and RPC answers it fetches in its sync cache, keyed by chain id and
 * block number, and keeps the rows it already has (ponder/ponder-0.16.10.ts), also for a chain with
 * disableCache. A local chain started afresh has the same id and block numbers as
 * the one before it, so an indexer would read the old chain's logs as the new one's. Before Ponder
 * starts, the sync rows of a local chain are dropped when they are not the chain's: the newest
 * block they name is missing on the chain, or has another hash there (a hash seals every block
 * before it).
 */
import type { AccessDb } from "../../api/database/db";
import { pgAccessDb } from "../../api/database/pg";
import { pgliteAccessDb, pgliteMayHoldTables } from "../../api/database/pglite";
import type { DatabaseSettings } from "../../core/settings";
import { redactedUrl } from "../../core/url";
import { dropSyncedChain, NEWEST_SYNCED_BLOCK_SQL, SYNC_CACHE_PRESENT_SQL } from "../../ponder/ponder-0.16.10";
import { rpc } from "./rpc";

/** The database Ponder will use, or undefined when it does not exist yet (nothing to forget). */
async function ponderDatabase(database: DatabaseSettings): Promise<AccessDb | undefined> {
  if (database.url) return pgAccessDb(database.url);
  // None yet, or made but never written (the tests make them ahead): no sync cache to look into.
  return pgliteMayHoldTables(database.pgliteDir) ? pgliteAccessDb(database.pgliteDir) : undefined;
}

/** The newest block the chain's sync rows name, with its hash. */
async function newestSyncedBlock(db: AccessDb, chainId: number): Promise<{ number: bigint; hash: string } | undefined> {
  const { rows } = await db.query(NEWEST_SYNCED_BLOCK_SQL, [chainId]);
  return rows[0] && { number: BigInt(rows[0].number as string), hash: rows[0].hash as string };
}

/** The hash of block `number` on the chain (null: it has no such block), from the first RPC that answers. */
async function blockHash(rpcUrls: string[], number: bigint): Promise<string | null> {
  const reasons: string[] = [];
  for (const url of rpcUrls) {
    try {
      const block = (await rpc(url, "eth_getBlockByNumber", [`0x${number.toString(16)}`, false])) as {
        hash: string;
      } | null;
      return block?.hash ?? null;
    } catch (error) {
      reasons.push(`${redactedUrl(url)}: ${(error as Error).message}`);
    }
  }
  throw new Error(`no RPC answered eth_getBlockByNumber (${reasons.join("; ")})`);
}

/**
 * Drops the sync cache's rows of each given local chain that another chain (an earlier run of it)
 * left; the ids of the chains whose rows were dropped.
 */
export async function forgetReplacedChains(
  chains: { id: number; rpcUrls: string[] }[],
  database: DatabaseSettings,
): Promise<number[]> {
  if (chains.length === 0) return [];
  const db = await ponderDatabase(database);
  if (!db) return [];
  try {
    const { rows } = await db.query(SYNC_CACHE_PRESENT_SQL);
    if (!rows[0]?.present) return [];
    const forgotten: number[] = [];
    for (const { id, rpcUrls } of chains) {
      const newest = await newestSyncedBlock(db, id);
      if (!newest || (await blockHash(rpcUrls, newest.number)) === newest.hash) continue;
      await db.transaction((query) => dropSyncedChain(query, id));
      forgotten.push(id);
    }
    return forgotten;
  } finally {
    await db.close();
  }
}
