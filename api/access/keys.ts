import { table } from "../../core/sql";
import { type AccessDb, migrate } from "../database/db";
import { batchedLookup } from "./batch";
import { generateKey, keyId, keyMatches } from "./key";
import { UsageCounter, usageTable } from "./usage";
import { ValidKeys } from "./valid-keys";

/** Keys remembered as matching their hash (see `matched`). */
const MATCHED_KEYS = 10_000;

export type KeyRecord = { id: string; label: string; createdAt: string; revokedAt: string | null };

export interface KeyStore {
  /** A new key; the only time its text is seen. */
  create(label: string): Promise<Omit<KeyRecord, "revokedAt"> & { key: string }>;
  /** Every key, oldest first, with the requests made with it in the last 24 hours. */
  list(): Promise<(KeyRecord & { recentRequests: number })[]>;
  /** Revokes a key (a revoked key stays revoked); undefined when there is no such key. */
  revoke(id: string): Promise<KeyRecord | undefined>;
  /** Whether `key` may be used now; counts the request when it may. */
  use(key: string): Promise<boolean>;
  /**
   * As use(), answered now from this process's copy of the valid keys: true when the copy vouches
   * for `key` (the request is counted); false when it does not (use() may still accept it).
   */
  useHeld(key: string): boolean;
  /** Whether this process's copy vouches for `key` now, as useHeld tells it, without counting a use. */
  vouchesFor(key: string): boolean;
  /**
   * Whether the copy held `key` when it was last read, however long ago (it vouches for nothing
   * then, but a key it held is most likely still valid): without counting a use.
   */
  heldOnce(key: string): boolean;
  close(): Promise<void>;
}

const iso = (value: unknown) => (value === null ? null : new Date(value as string | Date).toISOString());
const record = (row: Record<string, unknown>): KeyRecord => ({
  id: row.id as string,
  label: row.label as string,
  createdAt: iso(row.created_at)!,
  revokedAt: iso(row.revoked_at),
});

/**
 * API keys in `schema` of the access database. A key is checked against this process's copy of the
 * valid keys (valid-keys.ts): a revocation holds here from the next request on, in every other
 * process within 1 s. A key the copy cannot vouch for is read from the database, by a read made
 * after the request came (requests arriving together share one read).
 */
export async function openKeyStore(db: AccessDb, schema: string): Promise<KeyStore> {
  const keys = table(schema, "api_key");
  await migrate(db, schema, [
    `CREATE TABLE IF NOT EXISTS ${keys} (
      id text PRIMARY KEY,
      label text NOT NULL,
      key_hash text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz
    )`,
    usageTable(schema),
  ]);
  const usage = new UsageCounter(db, schema);
  const columns = "id, label, created_at, revoked_at";
  /** The valid keys' hashes by id: those of `ids`, or all. */
  const readHashes = async (ids?: string[]) => {
    const { rows } = await db.query(
      `SELECT id, key_hash FROM ${keys} WHERE revoked_at IS NULL${ids ? " AND id = ANY($1::text[])" : ""}`,
      ids ? [ids] : [],
    );
    return new Map(rows.map((row) => [row.id as string, row.key_hash as string]));
  };
  const readHashOf = batchedLookup(readHashes);
  const valid = new ValidKeys(() => readHashes());
  await valid.start();
  /**
   * Keys seen to match, with the hash they matched: a key used again is not hashed again while its
   * id's valid hash is still that one. Cleared when full, so that it stays small.
   */
  const matched = new Map<string, string>();
  /** Whether `key` matches `hash`, its id's valid hash (undefined: none). */
  const matches = (key: string, hash: string | undefined) => {
    if (hash === undefined) return false;
    if (matched.get(key) !== hash) {
      if (!keyMatches(key, hash)) return false;
      if (matched.size >= MATCHED_KEYS) matched.clear();
      matched.set(key, hash);
    }
    return true;
  };
  /** Whether `key` (of id `id`) matches `hash`; counts its use when it does. */
  const counted = (key: string, id: string, hash: string | undefined) => {
    if (!matches(key, hash)) return false;
    usage.count(id);
    return true;
  };

  return {
    async create(label) {
      const { id, key, hash } = generateKey();
      const { rows } = await db.query(
        `INSERT INTO ${keys} (id, label, key_hash) VALUES ($1, $2, $3) RETURNING created_at`,
        [id, label, hash],
      );
      valid.added(id, hash);
      return { id, label, createdAt: iso(rows[0]!.created_at)!, key };
    },

    async list() {
      // This process's counts are written first, so its own requests show at once.
      await usage.flush();
      const { rows } = await db.query(
        `SELECT k.id, k.label, k.created_at, k.revoked_at, coalesce(sum(u.requests), 0)::float8 AS recent
         FROM ${keys} k LEFT JOIN ${table(schema, "api_key_usage")} u ON u.key_id = k.id AND u.minute >= $1
         GROUP BY k.id ORDER BY k.created_at, k.id`,
        [UsageCounter.since()],
      );
      return rows.map((row) => ({ ...record(row), recentRequests: Number(row.recent) }));
    },

    async revoke(id) {
      const { rows } = await db.query(
        `UPDATE ${keys} SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING ${columns}`,
        [id],
      );
      // After the update: a read of the keys begun before it is not taken.
      valid.revoked(id);
      return rows[0] && record(rows[0]);
    },

    async use(key) {
      const id = keyId(key);
      if (id === undefined) return false;
      return counted(key, id, valid.hashOf(id) ?? (await readHashOf(id)));
    },

    useHeld(key) {
      const id = keyId(key);
      return id !== undefined && counted(key, id, valid.hashOf(id));
    },

    vouchesFor(key) {
      const id = keyId(key);
      return id !== undefined && matches(key, valid.hashOf(id));
    },

    heldOnce(key) {
      const id = keyId(key);
      return id !== undefined && matches(key, valid.heldHashOf(id));
    },

    async close() {
      valid.stop();
      await usage.close();
    },
  };
}
