import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import type { AccessDb } from "./db";

/**
 * The access tables in their own PGlite database directory: Ponder's PGlite belongs to the indexer,
 * and its handle in the API is read-only.
 */
export async function pgliteAccessDb(directory: string): Promise<AccessDb> {
  // PGlite makes its directory but not the parents (.ponder/ does not exist in a fresh clone).
  mkdirSync(dirname(directory), { recursive: true });
  return pgliteDb(await PGlite.create(directory));
}

/**
 * An AccessDb over a PGlite instance. A PGlite transaction runs alone: every other statement on the
 * instance waits for it (PGlite's transaction lock), so it is also one snapshot.
 */
export function pgliteDb(db: PGlite): AccessDb {
  return {
    query: (text, params) => db.query<Record<string, unknown>>(text, params),
    // PGlite's transaction resolves to undefined only when `work` rolls back itself, which it never does.
    transaction: async (work) => (await db.transaction((tx) => work((text, params) => tx.query(text, params))))!,
    close: () => db.close(),
  };
}
