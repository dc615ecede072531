/**
 * On Postgres (DATABASE_URL), every test file runs on a database of its own, dropped after it:
 * two files' local chains must not meet in Ponder's shared sync cache (see scratchDatabase).
 */
import { afterAll, beforeAll } from "vitest";
import { type ScratchDatabase, scratchDatabase } from "../../devkit/database";

const server = process.env.DATABASE_URL;
if (server) {
  let database: ScratchDatabase;
  beforeAll(async () => {
    database = await scratchDatabase(server, "test");
    process.env.DATABASE_URL = database.url;
  });
  afterAll(async () => {
    process.env.DATABASE_URL = server;
    await database?.drop();
  });
}
