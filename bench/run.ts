/**
 * `npm run bench` (`-- --smoke` for a short run that only proves it works): in one run on this
 * machine, the API's throughput and latency on every check route and the listings over a seeded
 * database of realistic size, beside the raw node:http hello, anvil's eth_call and Ponder's own
 * server; then the indexer's backfill speed and memory, and the delay from a block to the API's
 * answer. Prints a table of the figures and the targets, met or missed; exits non-zero only
 * when something failed (never for a missed target). Needs DATABASE_URL (Postgres).
 */
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { ROOT } from "../devkit/processes";
import { measureBackfill } from "./backfill";
import { Cleanup } from "./cleanup";
import { benchDatabase } from "./database";
import { parseOptions } from "./options";
import { RUN_VARIABLE } from "./procs";
import { report } from "./report";
import { measureServing } from "./serving";

if (!process.env.DATABASE_URL) {
  console.error(
    "npm run bench needs Postgres: set DATABASE_URL (e.g. postgres://postgres:postgres@127.0.0.1:5432/bench).",
  );
  process.exit(1);
}
const options = parseOptions();
const started = Date.now();
const log = (line: string) => console.log(`· [${((Date.now() - started) / 1000).toFixed(0)} s] ${line}`);
log(
  `${options.smoke ? "smoke" : "full"} mode, SEED=${options.seed} (rerun with SEED=${options.seed} npm run ` +
    `bench${options.smoke ? " -- --smoke" : ""})`,
);

// Every process started from here on is this run's: CPU of any other is another's work on this machine.
process.env[RUN_VARIABLE] = `${process.pid}-${Date.now()}`;
const cleanup = new Cleanup();
try {
  const db = await benchDatabase(cleanup);
  const serving = await measureServing(options, cleanup, db, log);
  log(`backfill: sending ${options.backfillEvents.toLocaleString("en")} registry events to a fresh chain`);
  const backfill = await measureBackfill(cleanup, db, options.backfillEvents, options.seed + 4, log);
  const autocannon = (
    JSON.parse(readFileSync(`${ROOT}/node_modules/autocannon/package.json`, "utf8")) as { version: string }
  ).version;
  const environment = {
    cores: availableParallelism(),
    apiWorkers: Number(process.env.API_WORKERS || availableParallelism()),
    autocannon,
    runtimeS: (Date.now() - started) / 1000,
  };
  console.log(`\n${report(options, environment, serving, backfill)}`);
} catch (error) {
  console.error(`\nnpm run bench failed: ${(error as Error).stack ?? error}`);
  process.exitCode = 1;
} finally {
  await cleanup.all();
}
