import { sql, type SQL } from "drizzle-orm";
import type { Address, Hex } from "viem";
import type { V2DelegationType, V2State } from "../core/v2";

/** What the store knows of a chain at the moment of one answer. */
export type ChainView<T> = {
  /** The last block whose events the answer reflects. */
  indexedBlock: bigint;
  /** False while the chain's history is still being backfilled. */
  ready: boolean;
  data: T;
};

export type V2Row = {
  delegationType: V2DelegationType;
  from: Address;
  to: Address;
  contract: Address | null;
  tokenId: bigint | null;
  rights: Hex;
  amount: bigint | null;
};

/**
 * The indexed state the API reads. Each call answers from one consistent snapshot, so that the
 * data is never newer or older than the block it reports. `undefined`: the chain has no indexed
 * state yet.
 */
export interface Store {
  v2Enabled(chainId: number, hashes: readonly Hex[]): Promise<ChainView<Map<Hex, V2State>> | undefined>;
  v2Wallet(chainId: number, wallet: Address): Promise<ChainView<V2Row[]> | undefined>;
}

/** Runs one SQL statement; Ponder's read-only `db.execute` and drizzle over node-postgres both fit. */
export type Execute = (query: SQL) => Promise<{ rows: Record<string, unknown>[] }>;

/**
 * A store over the tables Ponder writes (ponder.schema.ts), read with the connection's search_path.
 * The chain's checkpoint and its rows come from one statement, hence one snapshot.
 */
export function createSqlStore(execute: Execute): Store {
  async function withCheckpoint(chainId: number, join: SQL, order: SQL) {
    const { rows } = await execute(sql`
      SELECT c.latest_checkpoint AS checkpoint,
             (SELECT (m.value->>'is_ready')::int FROM _ponder_meta m WHERE m.key = 'app') AS ready,
             d.hash, d.delegation_type, d."from", d."to", d.contract, d.token_id::text AS token_id,
             d.rights, d.amount::text AS amount
      FROM _ponder_checkpoint c
      LEFT JOIN v2_delegation d ON d.chain_id = c.chain_id AND d.enabled AND ${join}
      WHERE c.chain_id = ${chainId}
      ORDER BY ${order}`);
    const first = rows[0];
    if (first === undefined) return undefined;
    return {
      // The checkpoint is Ponder's fixed-width encoding; digits 27-42 are the block number.
      indexedBlock: BigInt(String(first.checkpoint).slice(26, 42)),
      ready: Number(first.ready) === 1,
      rows: rows.filter((row) => row.hash !== null),
    };
  }

  const bigintOrNull = (value: unknown) => (value === null ? null : BigInt(value as string));

  return {
    async v2Enabled(chainId, hashes) {
      const list = sql.join(hashes.map((h) => sql`${h}`), sql`, `);
      const view = await withCheckpoint(chainId, sql`d.hash IN (${list})`, sql`d.hash`);
      if (view === undefined) return undefined;
      const data = new Map<Hex, V2State>();
      for (const row of view.rows) data.set(row.hash as Hex, { enabled: true, amount: bigintOrNull(row.amount) ?? 0n });
      return { indexedBlock: view.indexedBlock, ready: view.ready, data };
    },

    async v2Wallet(chainId, wallet) {
      const view = await withCheckpoint(
        chainId,
        sql`(d."from" = ${wallet} OR d."to" = ${wallet})`,
        sql`d.first_block, d.first_log_index`,
      );
      if (view === undefined) return undefined;
      const data = view.rows.map(
        (row): V2Row => ({
          delegationType: row.delegation_type as V2DelegationType,
          from: row.from as Address,
          to: row.to as Address,
          contract: (row.contract as Address | null) ?? null,
          tokenId: bigintOrNull(row.token_id),
          rights: row.rights as Hex,
          amount: bigintOrNull(row.amount),
        }),
      );
      return { indexedBlock: view.indexedBlock, ready: view.ready, data };
    },
  };
}
