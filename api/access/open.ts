import type { AccessSettings, DatabaseSettings } from "../../core/settings";
import type { AccessDb } from "./db";
import { openKeyStore } from "./keys";
import { memoryLimiter } from "./memory-limiter";
import type { AccessOptions } from "./middleware";
import { pgAccessDb } from "./pg";
import { pgliteAccessDb } from "./pglite";
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

/**
 * Keys and limits as configured (docs/keys-and-limits.md). On Postgres (DATABASE_URL) the keys
 * and the keyless windows live in their own schema, shared by every process on that database; on
 * PGlite the keys live in a PGlite directory of their own beside Ponder's (`<PGLITE_DIR>-access`),
 * and the windows in memory (PGlite serves one process).
 */
export async function openAccess(settings: AccessSettings, database: DatabaseSettings): Promise<Access> {
  const { schema } = settings;
  const db = database.url ? pgAccessDb(database.url) : await pgliteAccessDb(`${database.pgliteDir}-access`);
  return {
    keys: await openKeyStore(db, schema),
    limiter: database.url ? await sqlLimiter(db, schema) : memoryLimiter(),
    trustProxy: settings.trustedProxy,
    adminToken: settings.adminToken,
    db,
    schema,
    close: () => db.close(),
  };
}
