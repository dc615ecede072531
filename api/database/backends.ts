import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { quoteIdentifier } from "../../core/sql";
import type { AccessDb } from "./db";
import { pgAccessDb } from "./pg";
import { pgliteAccessDb } from "./pglite";

/** An AccessDb opened for a test, and how to drop what it made. */
export type OpenedBackend = { db: AccessDb; dispose(): Promise<void> };

/**
 * For the tests of what is built on AccessDb: PGlite in a directory of its own, and Postgres too
 * when DATABASE_URL is set, where `schema` (which the code under test makes) is dropped after.
 */
export function accessBackends(prefix: string, schema: string): [string, () => Promise<OpenedBackend>][] {
  const backends: [string, () => Promise<OpenedBackend>][] = [
    [
      "PGlite",
      async () => {
        const dir = mkdtempSync(join(tmpdir(), prefix));
        const db = await pgliteAccessDb(join(dir, "db"));
        return {
          db,
          dispose: async () => {
            await db.close();
            rmSync(dir, { recursive: true, force: true });
          },
        };
      },
    ],
  ];
  const url = process.env.DATABASE_URL;
  if (url)
    backends.push([
      "Postgres",
      async () => {
        const db = pgAccessDb(url);
        return {
          db,
          dispose: async () => {
            await db.query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(schema)} CASCADE`);
            await db.close();
          },
        };
      },
    ]);
  return backends;
}
