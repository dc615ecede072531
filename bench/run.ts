/**
 * `npm run bench` (`-- --smoke` for a short run that only proves it works): in one run on this
 * machine, the API's throughput and latency on every check route and the listings over a seeded
 * database of realistic size, beside the raw node:http hello, anvil's eth_call of each check and
 * Ponder's own server; then the indexer's backfill speed and memory, and the delay from a block to
 * the API's answer, and the service under hostile traffic (bench/hostile.ts); last, npm start alone
 * on PGlite over a smaller chain (its backfill, then its checks). Prints a table of the figures and
 * its targets, met or missed; exits non-zero only when something failed (never for a missed
 * target). `-- --hostile`: only the hostile section, over the large database. Needs DATABASE_URL
 * (Postgres).
 */

import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { ROOT } from "../devkit/processes";
import { backfillChain, measureBackfill, measureStartOnPglite } from "./backfill";
import { afterHello, routeMeasurer } from "./measure";
import { parseOptions } from "./options";
import { type Environment, hostileReport, report } from "./report";
import { runBenchScript } from "./script";
import { measureHostileAlone, measureServing } from "./serving";
import { startHello } from "./stack";

const options = parseOptions();
await runBenchScript("npm run bench", async ({ db, cleanup, log, startedAt }) => {
  const flags = [...(options.smoke ? [" --smoke"] : []), ...(options.hostileOnly ? [" --hostile"] : [])].join("");
  log(
    `${options.smoke ? "smoke" : "full"} mode${options.hostileOnly ? ", the hostile section alone" : ""}, ` +
      `SEED=${options.seed} (rerun with SEED=${options.seed} npm run bench${flags && ` --${flags}`})`,
  );
  const environment = (): Environment => ({
    cores: availableParallelism(),
    apiWorkers: Number(process.env.API_WORKERS || availableParallelism()),
    autocannon: (
      JSON.parse(readFileSync(`${ROOT}/node_modules/autocannon/package.json`, "utf8")) as { version: string }
    ).version,
    runtimeS: (Date.now() - startedAt) / 1000,
  });
  if (options.hostileOnly) {
    const { size, hostile, verified } = await measureHostileAlone(options, cleanup, db, log);
    console.log(`\n${hostileReport(options, environment(), hostile, size, verified)}`);
    return;
  }
  const serving = await measureServing(options, cleanup, db, log);
  log(`backfill: sending ${options.backfillEvents.toLocaleString("en")} registry events to a fresh chain`);
  const backfill = await cleanup.scope(async () => {
    const chain = await backfillChain(cleanup, options.backfillEvents, options.seed + 4, log);
    return measureBackfill(cleanup, db, chain, log);
  });
  log(
    `npm start alone on PGlite: ${options.startEvents.toLocaleString("en")} events to a fresh chain, its checks after`,
  );
  const start = await cleanup.scope(async () => {
    const chain = await backfillChain(cleanup, options.startEvents, options.seed + 5, log);
    // Its checks are held to a hello run of their own, just before them.
    const measure = afterHello(routeMeasurer(options, log, serving.verified), await startHello(cleanup));
    return measureStartOnPglite(cleanup, chain, options.seed + 6, measure);
  });
  console.log(`\n${report(options, environment(), serving, backfill, start)}`);
});
