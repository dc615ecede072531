/**
 * The frame of every bench script (npm run bench, npm run soak, bench/profile.ts): Postgres
 * required, a log whose lines say the seconds since the start, every process started from here on
 * marked as this run's (the CPU of any other is other work on the machine), a scratch database
 * (dropped at the end), and everything started stopped at the end, also when the script fails
 * (exit code 1). The script's own requests (sampled answers, probes, an indexer's metrics) keep no idle connection:
 * a server holds at most 64 of one client's (api/http/server.ts), and a load run opens as many
 * from the same address.
 */
import pg from "pg";
import { Agent, setGlobalDispatcher } from "undici";
import { scratchDatabase } from "../devkit/database";
import { Cleanup } from "./cleanup";
import { RUN_VARIABLE } from "./procs";

export type BenchRun = { db: pg.Client; cleanup: Cleanup; log: (line: string) => void; startedAt: number };

export async function runBenchScript(name: string, work: (run: BenchRun) => Promise<void>): Promise<void> {
  if (!process.env.DATABASE_URL) {
    console.error(`${name} needs Postgres: set DATABASE_URL (e.g. postgres://postgres:postgres@127.0.0.1:5432/bench).`);
    process.exit(1);
  }
  setGlobalDispatcher(new Agent({ keepAliveTimeout: 10, keepAliveMaxTimeout: 10 }));
  const startedAt = Date.now();
  const log = (line: string) => console.log(`· [${((Date.now() - startedAt) / 1000).toFixed(0)} s] ${line}`);
  process.env[RUN_VARIABLE] = `${process.pid}-${Date.now()}`;
  const cleanup = new Cleanup();
  try {
    // A database of the run's own on the DATABASE_URL server, which every process started from now on uses.
    const database = await scratchDatabase(process.env.DATABASE_URL, "bench");
    cleanup.add("database", database.drop);
    process.env.DATABASE_URL = database.url;
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    cleanup.add("database connection", () => db.end());
    await work({ db, cleanup, log, startedAt });
  } catch (error) {
    console.error(`\n${name} failed: ${(error as Error).stack ?? error}`);
    process.exitCode = 1;
  } finally {
    await cleanup.all();
  }
}
