/**
 * `npm run bench` (`-- --smoke` for a short run that only proves it works): in one run on this
 * machine, the API's throughput and latency on every check route and the listings over a seeded
 * database of realistic size, beside the raw node:http hello, anvil's eth_call of each check and
 * Ponder's own server; then the indexer's backfill speed and memory, and the delay from a block to
 * the API's answer, and the service under hostile traffic (bench/hostile.ts); answers across chains
 * (bench/across.ts); npm start alone on PGlite over a smaller chain (its backfill, then its checks);
 * a change log's backlog replayed to a webhook (bench/backlog.ts), the change feed's subscribers on
 * one replica (bench/subscribers.ts) and its delay on a replica reading a standby (bench/standby.ts);
 * last, every chain of the table in one deployment, each indexed apart (bench/whole-table.ts).
 * Prints a table of the figures and the targets (bench/report.ts, TARGETS), met or missed; exits
 * non-zero only when something failed (never for a missed target). Needs DATABASE_URL (Postgres).
 * `-- --only whole-table` (or `backlog`, `subscribers`, `standby`, `rpc`) runs that section alone (with
 * `--whole-table-chains <n>` and `--whole-table-group <n>`: bench/options.ts, runOptions).
 */
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { ROOT } from "../devkit/processes";
import { measureAcross } from "./across";
import { backfillChain, measureBackfill, measureStartOnPglite } from "./backfill";
import { measureBacklog } from "./backlog";
import { afterHello, routeMeasurer } from "./measure";
import { runOptions } from "./options";
import { backlogReport, report, rpcReport, standbyReport, subscribersReport, wholeTableReport } from "./report";
import { measureRpc } from "./rpc";
import { runBenchScript } from "./script";
import { measureServing } from "./serving";
import { startHello } from "./stack";
import { measureStandby } from "./standby";
import { measureSubscribers } from "./subscribers";
import type { Verified } from "./verify";
import { measureWholeTable } from "./whole-table";
import { runWrk } from "./wrk";

const { options: o, only } = runOptions();
await runBenchScript("npm run bench", async ({ db, cleanup, log, startedAt }) => {
  const flags = [...(o.smoke ? ["--smoke"] : []), ...(only ? [`--only ${only}`] : [])];
  log(
    `${o.smoke ? "smoke" : "full"} mode, SEED=${o.seed} (rerun with SEED=${o.seed} npm run bench` +
      `${flags.length > 0 ? ` -- ${flags.join(" ")}` : ""})`,
  );
  const wholeTable = () => {
    const grouped = o.wholeTableGroup > 1 ? `, ${o.wholeTableGroup} chains a Ponder process` : "";
    log(`whole table apart: ${o.wholeTableChains} chains of the table in one npm start${grouped}`);
    return cleanup.scope(() => measureWholeTable(o, cleanup, db, log));
  };
  const backlog = () => {
    log(`webhook backlog: ${o.backlogEntries.toLocaleString("en")} entries of the change log to one endpoint`);
    return cleanup.scope(() => measureBacklog(o, cleanup, log));
  };
  if (only === "whole-table") {
    const figures = await wholeTable();
    console.log(`\n${wholeTableReport(o, (Date.now() - startedAt) / 1000, figures)}`);
    return;
  }
  const subscribers = (verified: Verified) => {
    log(`change-feed subscribers: ${o.subscribers.toLocaleString("en")} streams on one replica process`);
    return cleanup.scope(async () => {
      const chain = await backfillChain(cleanup, o.startEvents, o.seed + 15, log);
      return measureSubscribers(o, cleanup, chain, routeMeasurer(o, log, verified), await startHello(cleanup), log);
    });
  };
  if (only === "subscribers") {
    const figures = await subscribers({ answers: 0, checks: 0, positive: 0 });
    console.log(`\n${subscribersReport(o, (Date.now() - startedAt) / 1000, figures)}`);
    return;
  }
  const standby = () => {
    log(`standby: npm run serve on a hot standby of the indexer's Postgres, ${o.standbySamples} new delegations`);
    return cleanup.scope(() => measureStandby(o, cleanup, log));
  };
  if (only === "standby") {
    const figures = await standby();
    console.log(`\n${standbyReport(o, (Date.now() - startedAt) / 1000, figures)}`);
    return;
  }
  if (only === "backlog") {
    const figures = await backlog();
    console.log(`\n${backlogReport(o, (Date.now() - startedAt) / 1000, figures)}`);
    return;
  }
  const rpc = (verified: Verified) => {
    log(
      `/rpc beside anvil's eth_call: ${o.rpcListing.toLocaleString("en")} delegations to one wallet on a fresh chain`,
    );
    return cleanup.scope(async () => {
      const measure = routeMeasurer(o, log, verified);
      const measureWrk = routeMeasurer(o, log, verified, runWrk);
      return measureRpc(o, cleanup, measure, afterHello(measure, await startHello(cleanup)), measureWrk, log);
    });
  };
  if (only === "rpc") {
    const figures = await rpc({ answers: 0, checks: 0, positive: 0 });
    console.log(`\n${rpcReport(o, (Date.now() - startedAt) / 1000, figures)}`);
    return;
  }
  const serving = await measureServing(o, cleanup, db, log);
  log(`across chains: ${o.acrossChains} chains, ${o.acrossDelegations.toLocaleString("en")} delegations each`);
  const across = await cleanup.scope(() => measureAcross(o, cleanup, db, serving.verified, log));
  log(`backfill: sending ${o.backfillEvents.toLocaleString("en")} registry events to a fresh chain`);
  const backfill = await cleanup.scope(async () => {
    const chain = await backfillChain(cleanup, o.backfillEvents, o.seed + 4, log);
    return measureBackfill(cleanup, db, chain, log);
  });
  log(`npm start alone on PGlite: ${o.startEvents.toLocaleString("en")} events to a fresh chain, its checks after`);
  const start = await cleanup.scope(async () => {
    const chain = await backfillChain(cleanup, o.startEvents, o.seed + 5, log);
    // Its checks are held to a hello run of their own, just before them.
    const measure = afterHello(routeMeasurer(o, log, serving.verified), await startHello(cleanup));
    return measureStartOnPglite(cleanup, chain, o.seed + 6, measure, o.startDurationS);
  });
  const rpcFigures = await rpc(serving.verified);
  const feed = { backlog: await backlog(), subscribers: await subscribers(serving.verified), standby: await standby() };
  const whole = await wholeTable();
  const autocannon = readFileSync(`${ROOT}/node_modules/autocannon/package.json`, "utf8");
  const env = {
    cores: availableParallelism(),
    apiWorkers: Number(process.env.API_WORKERS || availableParallelism()),
    autocannon: (JSON.parse(autocannon) as { version: string }).version,
    runtimeS: (Date.now() - startedAt) / 1000,
  };
  console.log(`\n${report(o, env, serving, backfill, start, rpcFigures, across, whole, feed)}`);
});
