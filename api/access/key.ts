import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * An API key: `dlk_<id>_<secret>`. The id (public, shown in listings) finds the key's row; the
 * secret, 32 random bytes, proves possession. Only a hash of the whole key is stored.
 */
export const KEY_FORMAT = /^dlk_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$/;

export type NewKey = { id: string; key: string; hash: string };

/** A new random key, its id, and the hash that is stored of it. */
export function generateKey(): NewKey {
  const id = randomBytes(6).toString("hex");
  const key = `dlk_${id}_${randomBytes(32).toString("base64url")}`;
  return { id, key, hash: hashKey(key) };
}

/** The id a well-formed key names; undefined for anything else. */
export function keyId(key: string): string | undefined {
  return KEY_FORMAT.exec(key)?.[1];
}

/** SHA-256 suffices: a 256-bit random secret cannot be guessed from its hash, so no slow hash is needed. */
export function hashKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** Whether `key` hashes to `storedHash`, in time independent of where they differ. */
export function keyMatches(key: string, storedHash: string): boolean {
  const stored = Buffer.from(storedHash, "hex");
  const given = Buffer.from(hashKey(key), "hex");
  return stored.length === given.length && timingSafeEqual(stored, given);
}
