/** A database of the bench's own on the DATABASE_URL server (see scratchDatabase), dropped at the end. */
import pg from "pg";
import { scratchDatabase } from "../devkit/database";
import type { Cleanup } from "./cleanup";

/** Creates the database, points DATABASE_URL (and so every process started from now on) at it, and connects. */
export async function benchDatabase(cleanup: Cleanup): Promise<pg.Client> {
  const database = await scratchDatabase(process.env.DATABASE_URL!, "bench");
  cleanup.add("database", database.drop);
  process.env.DATABASE_URL = database.url;
  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  cleanup.add("database connection", () => db.end());
  return db;
}
