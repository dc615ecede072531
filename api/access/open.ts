import type { AccessDb } from "./db";
import { openKeyStore } from "./keys";
import { memoryLimiter } from "./memory-limiter";
import type { AccessOptions } from "./middleware";
import { pgAccessDb } from "./pg";
import { pgliteAccessDb, ponderPgliteDir } from "./pglite";
import { sqlLimiter } from "./sql-limiter";

export type Access = AccessOptions & {
  /** The admin endpoints' bearer token; undefined: they are off. */
  adminToken: string | undefined;
  /** The service's own database (keys, windows, served chains) and its schema there. */
  db: AccessDb;
  schema: string;
  /** Closes the access database (a PGlite directory admits one process at a time). */
  close(): Promise<void>;
};

/** Long enough that guessing it over HTTP is hopeless. */
const MIN_ADMIN_TOKEN = 16;

/**
 * Keys and limits as the environment configures them (README, "Keys and limits"). On Postgres
 * (DATABASE_URL) the keys and the keyless windows live in their own schema, shared by every
 * process on that database; on PGlite the keys live in a PGlite directory of their own beside
 * Ponder's, and the windows in memory (PGlite serves one process).
 */
export async function openAccess(env: NodeJS.ProcessEnv = process.env): Promise<Access> {
  const adminToken = env.ADMIN_TOKEN || undefined;
  if (adminToken !== undefined && adminToken.length < MIN_ADMIN_TOKEN) {
    throw new Error(
      `ADMIN_TOKEN is too short to resist guessing: use at least ${MIN_ADMIN_TOKEN} random characters (e.g. openssl rand -base64 32)`,
    );
  }
  const schema = env.ACCESS_SCHEMA || "delegation_access";
  const db = env.DATABASE_URL ? pgAccessDb(env.DATABASE_URL) : await pgliteAccessDb(`${ponderPgliteDir(env)}-access`);
  return {
    keys: await openKeyStore(db, schema),
    limiter: env.DATABASE_URL ? await sqlLimiter(db, schema) : memoryLimiter(),
    trustProxy: env.TRUSTED_PROXY === "true",
    adminToken,
    db,
    schema,
    close: () => db.close(),
  };
}
