import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
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

/** Postgres's first object id after initdb's (FirstNormalObjectId): every table made since is at least this. */
const FIRST_NORMAL_OID = 16_384;

/**
 * Whether the PGlite database directory may hold a table made since initdb, told from its files
 * without opening it (PGlite's WASM costs seconds of CPU to compile): Postgres names the files of a
 * database's relations under base/<database>/ by their file node, at least FIRST_NORMAL_OID for any
 * made since initdb. False: no table of anyone's is there (a fresh directory).
 */
export function pgliteMayHoldTables(directory: string): boolean {
  const base = join(directory, "base");
  if (!existsSync(base)) return existsSync(directory);
  return readdirSync(base).some((database) =>
    readdirSync(join(base, database)).some((file) => Number.parseInt(file, 10) >= FIRST_NORMAL_OID),
  );
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
