import { PGlite } from "@electric-sql/pglite";
import { readLive } from "../../devkit/database";

/**
 * The rows of `sql` on a service's database: on Postgres (`databaseUrl`) while it runs, reading as
 * the service does (devkit/database.ts, readLive); on PGlite (`pgliteDir`) only while it is
 * stopped, as PGlite admits one process at a time.
 */
export async function serviceRows(
  pgliteDir: string,
  sql: string,
  databaseUrl = process.env.DATABASE_URL,
): Promise<Record<string, unknown>[]> {
  if (databaseUrl) return await readLive(databaseUrl, sql);
  const db = await PGlite.create(pgliteDir);
  try {
    return (await db.query<Record<string, unknown>>(sql)).rows;
  } finally {
    await db.close();
  }
}
