import type { AccessSettings, DatabaseSettings } from "../../core/settings";
import type { AccessDb } from "../database/db";
import { pgAccessDb } from "../database/pg";
import { pgliteAccessDb } from "../database/pglite";
import { openKeyStore } from "./keys";
import { memoryLimiter } from "./memory-limiter";
import type { AccessOptions } from "./middleware";
import { sqlLimiter } from "./sql-limiter";

/** How the access database's connections name themselves to Postgres: keys and alarms, and the keyless budget. */
export const ACCESS_APPLICATION_NAMES = { keys: "delegation-lookup access", keyless: "delegation-lookup keyless" };

export type Access = AccessOptions & {
  /** The admin endpoints' bearer token; undefined: they are off. */
  adminToken: string | undefined;
  /** How long the change log keeps an entry (default: core/settings.ts's). */
  feedRetentionDays?: number;
  /** Whether webhooks may go to loopback and private addresses. */
  webhookAllowPrivate?: boolean;
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
  const db = database.url
    ? pgAccessDb(database.url, { applicationName: ACCESS_APPLICATION_NAMES.keys, max: 2 })
    : await pgliteAccessDb(`${database.pgliteDir}-access`);
  // The keyless budget on a pool of its own: a flood of keyless requests must not age the copy of
  // the valid keys, nor hold up the chains' alarms, which read through `db`.
  const budgets = database.url ? pgAccessDb(database.url, { applicationName: ACCESS_APPLICATION_NAMES.keyless }) : db;
  return {
    keys: await openKeyStore(db, schema),
    limiter: database.url ? await sqlLimiter(budgets, schema) : memoryLimiter(),
    trustProxy: settings.trustedProxy,
    streamsPerKey: settings.feedStreamsPerKey,
    feedRetentionDays: settings.feedRetentionDays,
    webhookAllowPrivate: settings.webhookAllowPrivate,
    adminToken: settings.adminToken,
    db,
    schema,
    close: async () => {
      if (budgets !== db) await budgets.close();
      await db.close();
    },
  };
}
