/**
 * `npx tsx bench/profile.ts [--smoke] [--duration <s>] [--connections <n>] "<route>"…` (DATABASE_URL;
 * SEED as the bench takes it): where the API's time goes on the routes named, to say what bounds a
 * missed target. It seeds a database as `npm run bench` does; then for each route — a label of the
 * bench's table without ", 1 connection" (e.g. "v2 batch of 10,000 checks"), or "v2 whole history" —
 * it starts a one-worker `npm run serve` under node's CPU profiler (bench/cpu-profile.cjs), verifies
 * a sample of the route's answers, loads it at 1 connection (or n) for the run's duration (the whole
 * history: reads it once by following Link), asks the server's processes for their profiles, and
 * prints the heaviest functions and modules by self time during the load, with the profile's path
 * (for Chrome DevTools or speedscope). "backfill" profiles the bench's backfill instead, without seeding: the
 * service's indexer, then the minimal Ponder indexer (bench/baseline), each in its backfill phase.
 * "start" profiles `npm start` alone on PGlite (the bench's row (d)) while its v2 check all is loaded;
 * "hostile", the hostile section's keyless attacker (bench/hostile.ts) on a replica.
 */

import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { MAX_CONNECTIONS_PER_CLIENT } from "../api/http/server";
import { ROOT, waitFor } from "../devkit/processes";
import type { Service } from "../devkit/service";
import { backfillChain, type IndexerHooks, measureBackfill, measureStartOnPglite } from "./backfill";
import type { Dataset } from "./dataset";
import { readHistory } from "./history-read";
import { attackRequests } from "./hostile";
import { runLoad } from "./load";
import { type RouteMeasurer, routeMeasurer, settle } from "./measure";
import { BENCH_FLAGS, benchOptions, commandLineOrExit } from "./options";
import {
  batchRoute,
  bulkRoute,
  checkRoutes,
  historyRoute,
  listingPagesRoute,
  listingRoute,
  type Route,
  smallListingRoute,
  vaultsRoute,
  walletHistoryRoute,
} from "./routes";
import { type BenchRun, runBenchScript } from "./script";
import { seededStack, startServe } from "./stack";
import { verifyRoute } from "./verify";

type CpuProfile = {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  /** Microseconds of the monotonic clock (CLOCK_MONOTONIC, as process.hrtime's). */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
};

/** The monotonic clock now, in microseconds, as a profile's timestamps count. */
const now = () => Number(process.hrtime.bigint() / 1000n);

/** Where a function lives, short: a package's name, or a path in the project. */
function moduleOf(url: string): string {
  if (url === "") return "(native, V8 or Node internals)";
  if (url.startsWith("node:")) return url;
  const path = url.replace(/^file:\/\//, "");
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  return pkg ? pkg[1]! : relative(ROOT, path);
}

/**
 * The heaviest functions and modules by self time in the profile's samples taken within `window`
 * (the load run: not the server's start, which loads the state), as lines.
 */
function summarize(profile: CpuProfile, window: { from: number; to: number }, top = 15): string[] {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const byFunction = new Map<string, number>();
  const byModule = new Map<string, number>();
  let idle = 0;
  let busy = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const frame = nodes.get(id)!;
    const us = profile.timeDeltas[i] ?? 0;
    at += us;
    if (at < window.from || at > window.to) return;
    if (frame.functionName === "(idle)") {
      idle += us;
      return;
    }
    busy += us;
    const where = frame.url === "" ? "" : ` ${moduleOf(frame.url)}:${frame.lineNumber + 1}`;
    const name = `${frame.functionName || "(anonymous)"}${where}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    const module =
      frame.url === "" ? (frame.functionName.startsWith("(") ? frame.functionName : moduleOf("")) : moduleOf(frame.url);
    byModule.set(module, (byModule.get(module) ?? 0) + us);
  });
  if (busy + idle === 0) throw new Error("the profile has no sample within the load run");
  const share = (us: number) => `${((100 * us) / Math.max(1, busy)).toFixed(1).padStart(5)}%`;
  const heaviest = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => `    ${share(us)}  ${name}`);
  return [
    `  busy ${((100 * busy) / Math.max(1, busy + idle)).toFixed(0)}% of the profiled time ` +
      `(${(busy / 1e6).toFixed(1)} s; idle: waiting on Postgres, the RPC or the next request); self time, % of busy:`,
    "  by module:",
    ...heaviest(byModule),
    "  by function:",
    ...heaviest(byFunction),
  ];
}

/** Asks every process profiled into `dir` (bench/cpu-profile.cjs) for its profile; resolves once all are written. */
async function askProfiles(dir: string): Promise<void> {
  const pids = readdirSync(dir)
    .filter((f) => f.endsWith(".profiling"))
    .map((f) => Number.parseInt(f, 10));
  const asked = pids.filter((pid) => {
    try {
      process.kill(pid, "SIGUSR2");
      return true;
    } catch {
      return false; // Ended meanwhile (a process of npm's or tsx's): it has nothing to write.
    }
  });
  const written = async () => asked.every((pid) => existsSync(join(dir, `${pid}.cpuprofile`))) || undefined;
  await waitFor("the server's profiles", written, 60_000);
}

/** The largest profile in `dir`: the server's (npm's and tsx's own processes write small ones too). */
function workerProfile(dir: string): { path: string; profile: CpuProfile } {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".cpuprofile"))
    .map((f) => join(dir, f))
    .sort((a, b) => statSync(b).size - statSync(a).size);
  if (files.length === 0) throw new Error(`no profile in ${dir}`);
  return { path: files[0]!, profile: JSON.parse(readFileSync(files[0]!, "utf8")) as CpuProfile };
}

/** The environment that has every node process started with it profiled into `dir` (bench/cpu-profile.cjs). */
const profiled = (dir: string) => ({
  NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --require ${join(ROOT, "bench/cpu-profile.cjs")}`.trim(),
  BENCH_CPU_PROFILE_DIR: dir,
});

/**
 * The backfill as `npm run bench` measures it (bench/backfill.ts), the service's indexer and then
 * the minimal Ponder indexer each under the profiler: where each one's backfill phase goes.
 */
async function profileBackfill(run: Pick<BenchRun, "db" | "cleanup" | "log">) {
  const hooks = (who: string): IndexerHooks => {
    const dir = mkdtempSync(join(tmpdir(), "bench-profile-"));
    return {
      env: profiled(dir),
      ready: async (backfillMs) => {
        const to = now();
        await askProfiles(dir);
        const { path, profile } = workerProfile(dir);
        const window = { from: to - backfillMs * 1000, to };
        console.log([`profile of the ${who}'s backfill phase: ${path}`, ...summarize(profile, window)].join("\n"));
      },
    };
  };
  const chain = await backfillChain(run.cleanup, o.backfillEvents, o.seed + 4, run.log);
  const f = await measureBackfill(run.cleanup, run.db, chain, run.log, {
    indexer: hooks("service's indexer"),
    baseline: hooks("minimal Ponder indexer"),
  });
  const rate = (backfillMs: number) => Math.round(f.events / (backfillMs / 1000));
  run.log(
    `backfill under the profiler: the service's indexer ${rate(f.backfillMs)} events/s, the minimal Ponder ` +
      `indexer ${rate(f.baseline.backfillMs)} events/s`,
  );
}

/**
 * `npm start` alone on PGlite as `npm run bench` measures it (row (d)), under the profiler while its
 * v2 check all is loaded: where its time goes, beside the indexer it shares the process with.
 */
async function profileStartOnPglite(run: Pick<BenchRun, "cleanup" | "log">) {
  const dir = mkdtempSync(join(tmpdir(), "bench-profile-"));
  const chain = await backfillChain(run.cleanup, o.startEvents, o.seed + 5, run.log);
  const inner = routeMeasurer(o, run.log, { answers: 0, checks: 0, positive: 0 });
  const window = { from: 0, to: 0 };
  const measure: RouteMeasurer = async (...args) => {
    window.from = now();
    const figure = await inner(...args);
    window.to = now();
    await askProfiles(dir);
    return figure;
  };
  await measureStartOnPglite(run.cleanup, chain, o.seed + 6, measure, profiled(dir));
  const { path, profile } = workerProfile(dir);
  console.log(
    [`profile of npm start alone on PGlite under its checks' load: ${path}`, ...summarize(profile, window)].join("\n"),
  );
}

/**
 * One keyless attacker as the bench's hostile section sends it (bench/hostile.ts), at as many
 * connections as a client may hold, on a one-worker replica behind a trusted proxy: where the
 * refusals' time goes.
 */
async function profileHostile(run: Pick<BenchRun, "cleanup" | "log">, service: Service, data: Dataset) {
  const dir = mkdtempSync(join(tmpdir(), "bench-profile-"));
  const window = { from: 0, to: 0 };
  await run.cleanup.scope(async () => {
    const serve = await startServe(run.cleanup, service, `profile-${process.pid}`, {
      API_WORKERS: "1",
      TRUSTED_PROXY: "true",
      ...profiled(dir),
    });
    await settle(serve.url, service.headers);
    window.from = now();
    const r = await runLoad(HOSTILE, {
      url: serve.url,
      connections: MAX_CONNECTIONS_PER_CLIENT,
      durationS: o.durationS,
      warmupS: 0,
      headers: {},
      requests: attackRequests(data, o.seed + 10),
    });
    window.to = now();
    run.log(`${HOSTILE}: answers ${JSON.stringify(r.statuses)}, ${r.errors} errors`);
    await askProfiles(dir);
  });
  const { path, profile } = workerProfile(dir);
  console.log([`profile of one keyless attacker: ${path}`, ...summarize(profile, window)].join("\n"));
}

const BACKFILL = "backfill";
const START = "start";
const HOSTILE = "hostile";
const { values, positionals: labels } = commandLineOrExit(
  { options: { ...BENCH_FLAGS, connections: { type: "string" } }, allowPositionals: true },
  'use [--smoke] [--duration <s>] [--connections <n>] "<route>"…',
);
// The bench's own runs are at 64 connections; a profile at 1 shows a request's cost without queueing.
const connections = Number(values.connections ?? 1);
if (!Number.isInteger(connections) || connections < 1) {
  console.error("--connections takes a whole number of connections, 1 or more");
  process.exit(1);
}
const o = benchOptions(values);
if (labels.length === 0) {
  console.error('name the routes to profile, by the bench\'s labels: e.g. "v2 batch of 10,000 checks"');
  process.exit(1);
}
await runBenchScript("bench/profile.ts", async ({ db, cleanup, log }) => {
  if (labels.includes(BACKFILL)) await profileBackfill({ db, cleanup, log });
  if (labels.includes(START)) await profileStartOnPglite({ cleanup, log });
  const own = [BACKFILL, START, HOSTILE];
  if (labels.every((label) => label === BACKFILL || label === START)) return;
  const { service, data, grow } = await seededStack(o, cleanup, db, log);
  await grow("small");
  await grow("large");
  if (labels.includes(HOSTILE)) await profileHostile({ cleanup, log }, service, data);
  const [fewest, most] = [Math.min(...o.hot), Math.max(...o.hot)];
  const versions = ["v2", "v1"] as const;
  const routes: Route[] = [
    ...checkRoutes(data, o.seed),
    ...checkRoutes(data, o.seed, true),
    ...versions.flatMap((v) =>
      [false, true].map((past) => batchRoute(data, v, { size: o.batchSize, count: o.batches, past }, o.seed)),
    ),
    smallListingRoute(data),
    ...versions.flatMap((v) => [
      listingRoute(data, v, fewest),
      listingRoute(data, v, most),
      listingRoute(data, v, fewest, true),
      historyRoute(data, v, o.historyPage),
      walletHistoryRoute(data, v, o.historyPage, o.seed),
      listingPagesRoute(data, v, most, o.listingPage),
    ]),
    ...[false, true].flatMap((past) => [
      vaultsRoute(data, "all", past, o.seed),
      vaultsRoute(data, "erc20", past, o.seed),
      bulkRoute(data, { size: o.bulkSize, count: o.bulkLists, past }, o.seed),
    ]),
  ];
  for (const label of labels.filter((l) => !own.includes(l))) {
    const route = routes.find((r) => r.label === label);
    const read = versions.find((v) => label === `${v} whole history`);
    if (route === undefined && read === undefined) {
      console.error(
        `no route "${label}"; the routes: ${[...routes.map((r) => r.label), "v2 whole history", ...own].join("; ")}`,
      );
      process.exitCode = 1;
      continue;
    }
    const dir = mkdtempSync(join(tmpdir(), "bench-profile-"));
    const window = { from: 0, to: 0 };
    await cleanup.scope(async () => {
      const serve = await startServe(cleanup, service, `profile-${process.pid}`, {
        API_WORKERS: "1",
        ...profiled(dir),
      });
      const json = { ...service.headers, "Content-Type": "application/json" };
      await settle(serve.url, service.headers);
      if (route) {
        await verifyRoute(serve.url, route, o.verifySample, json);
        window.from = now();
        const r = await runLoad(label, {
          url: serve.url,
          connections,
          durationS: o.durationS,
          warmupS: o.warmupS,
          headers: json,
          requests: route.requests,
          timeoutS: 60,
        });
        window.to = now();
        log(
          `${label}: ${Math.round(r.rps)} req/s, p50 ${r.p50?.toFixed(2)} ms, ` +
            `p99 ${r.p99?.toFixed(2)} ms (${connections} connection${connections === 1 ? "" : "s"})`,
        );
      } else {
        window.from = now();
        const r = await readHistory(serve.url, read!, data, o.readPage, service.headers);
        window.to = now();
        log(`${r.label}: ${Math.round(r.events / (r.ms / 1000))} events/s, page p50 ${r.pageP50.toFixed(1)} ms`);
      }
      await askProfiles(dir);
    });
    const { path, profile } = workerProfile(dir);
    console.log([`profile of ${label}: ${path}`, ...summarize(profile, window)].join("\n"));
  }
});
