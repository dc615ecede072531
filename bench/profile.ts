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
 * "hostile", the hostile section's keyless attacker (bench/hostile.ts) on a replica; "airdrop", the
 * airdrop figure (bench/airdrop.ts: a million checks through checkMany) on a one-worker replica, with
 * the CPU its client took; "keyless checks", the scale section's keyless checks (each from an address
 * of its own) at the bench's connections.
 */

import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { MAX_CONNECTIONS_PER_CLIENT } from "../api/http/server";
import { ROOT, waitFor } from "../devkit/processes";
import { measureAirdrop } from "./airdrop";
import { backfillChain, type IndexerHooks, measureBackfill, measureStartOnPglite } from "./backfill";
import { readHistory } from "./history-read";
import { attackRequests, scaleRequests } from "./hostile";
import { runLoad } from "./load";
import { type RouteMeasurer, routeMeasurer, settle } from "./measure";
import { benchOptions } from "./options";
import { machineCpu, postgresCpu, runDatabase, ticksBetween, ticksPerSecond, treeMemory } from "./procs";
import { checkRoutes } from "./routes";
import { runBenchScript } from "./script";
import { largeRoutes } from "./serving";
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

/**
 * A profiling: the environment that has every node process started with it profiled (bench/cpu-profile.cjs),
 * marks of the load's start and end (the end asks the processes for their profiles), and its summary.
 */
function profiling() {
  const dir = mkdtempSync(join(tmpdir(), "bench-profile-"));
  const window = { from: 0, to: 0 };
  const preload = `${process.env.NODE_OPTIONS ?? ""} --require ${join(ROOT, "bench/cpu-profile.cjs")}`;
  // Beside the server's profile: the machine's CPU and Postgres's over the same window.
  const database = runDatabase();
  let [machine, postgres] = [machineCpu(), postgresCpu(database)];
  let around = "";
  return {
    env: { NODE_OPTIONS: preload.trim(), BENCH_CPU_PROFILE_DIR: dir },
    window,
    start: () => {
      window.from = now();
      [machine, postgres] = [machineCpu(), postgresCpu(database)];
    },
    stop: async () => {
      window.to = now();
      const ticks = ticksPerSecond();
      const [machineAfter, postgresAfter] = [machineCpu(), postgresCpu(database)];
      const share = (machineAfter.busy - machine.busy) / Math.max(1, machineAfter.total - machine.total);
      around = `${Math.round(100 * share)}% of all cores busy; Postgres's processes on its database took ${(
        ticksBetween(postgres, postgresAfter) / ticks
      ).toFixed(1)} CPU-s`;
      await askProfiles(dir);
    },
    print: (what: string) => {
      const { path, profile } = workerProfile(dir);
      console.log([`profile of ${what}: ${path}`, `  meanwhile: ${around}`, ...summarize(profile, window)].join("\n"));
    },
  };
}

const BACKFILL = "backfill";
const START = "start";
const HOSTILE = "hostile";
const AIRDROP = "airdrop";
const KEYLESS = "keyless checks";
const { options: o, values, positionals: labels } = benchOptions({ connections: { type: "string" } }, true);
// The bench's own runs are at 64 connections; a profile at 1 shows a request's cost without queueing.
const connections = Number(values.connections ?? 1);
if (!Number.isInteger(connections) || connections < 1) {
  console.error("--connections takes a whole number of connections, 1 or more");
  process.exit(1);
}
if (labels.length === 0) {
  console.error('name the routes to profile, by the bench\'s labels: e.g. "v2 batch of 10,000 checks"');
  process.exit(1);
}
await runBenchScript("bench/profile.ts", async ({ db, cleanup, log }) => {
  if (labels.includes(BACKFILL)) {
    // The backfill as npm run bench measures it, each indexer under the profiler in its backfill phase.
    const hooks = (who: string): IndexerHooks => {
      const p = profiling();
      const ready = async (backfillMs: number) => {
        await p.stop();
        p.window.from = p.window.to - backfillMs * 1000;
        p.print(`the ${who}'s backfill phase`);
      };
      return { env: p.env, ready };
    };
    const chain = await backfillChain(cleanup, o.backfillEvents, o.seed + 4, log);
    const indexers = { indexer: hooks("service's indexer"), baseline: hooks("minimal Ponder indexer") };
    const f = await measureBackfill(cleanup, db, chain, log, indexers);
    const rate = (backfillMs: number) => Math.round(f.events / (backfillMs / 1000));
    log(
      `backfill under the profiler: the service's indexer ${rate(f.backfillMs)} events/s, the minimal Ponder ` +
        `indexer ${rate(f.baseline.backfillMs)} events/s`,
    );
  }
  if (labels.includes(START)) {
    // npm start alone on PGlite as npm run bench measures it (row (d)), under the profiler while its checks load it.
    const p = profiling();
    const chain = await backfillChain(cleanup, o.startEvents, o.seed + 5, log);
    const inner = routeMeasurer(o, log, { answers: 0, checks: 0, positive: 0 });
    const measure: RouteMeasurer = async (...args) => {
      p.start();
      const figure = await inner(...args);
      await p.stop();
      return figure;
    };
    await measureStartOnPglite(cleanup, chain, o.seed + 6, measure, o.startDurationS, p.env);
    p.print("npm start alone on PGlite under its checks' load");
  }
  const own = [BACKFILL, START, HOSTILE, AIRDROP, KEYLESS];
  if (labels.every((label) => label === BACKFILL || label === START)) return;
  const { chain, service, data, grow } = await seededStack(o, cleanup, db, log);
  await grow("small");
  await grow("large");
  const versions = ["v2", "v1"] as const;
  const routes = [...checkRoutes(data, o.seed + 2), ...Object.values(largeRoutes(o, data)).flat()];
  const json = { ...service.headers, "Content-Type": "application/json" };
  for (const label of labels.filter((l) => l !== BACKFILL && l !== START)) {
    const route = routes.find((r) => r.label === label);
    const read = versions.find((v) => label === `${v} whole history`);
    if (!own.includes(label) && route === undefined && read === undefined) {
      const known = [...routes.map((r) => r.label), "v2 whole history", ...own];
      console.error(`no route "${label}"; the routes: ${known.join("; ")}`);
      process.exitCode = 1;
      continue;
    }
    const p = profiling();
    await cleanup.scope(async () => {
      // The hostile section's keyless attacker (bench/hostile.ts) behind a trusted proxy, at as many
      // connections as a client may hold: where the refusals' time goes.
      // The scale section's keyless checks likewise, each from an address of its own.
      const hostile = label === HOSTILE || label === KEYLESS ? { TRUSTED_PROXY: "true" } : {};
      // Given the chain's RPC, as the bench's replicas are: where a moment's headers are read.
      const env = { API_WORKERS: "1", [`PONDER_RPC_URL_${chain.id}`]: chain.anvil.url, ...hostile, ...p.env };
      const tag = `profile-${process.pid}`;
      const serve = await startServe(cleanup, service, tag, env);
      await settle(serve.url, service.headers);
      if (route) await verifyRoute(serve.url, route, o.verifySample, json);
      // The airdrop's client starts it once it has read its checks.
      if (label !== AIRDROP) p.start();
      if (read) await readHistory(serve.url, read, data, o.readPage, service.headers, log);
      else if (label === AIRDROP)
        await measureAirdrop(o, data, { url: serve.url, headers: service.headers }, o.seed + 12, log, p.start);
      else {
        const spec = { url: serve.url, durationS: o.durationS, timeoutS: 60 };
        const keylessLoad =
          label === KEYLESS
            ? { connections: o.connections, requests: scaleRequests(data, o.seed + 13, true) }
            : { connections: MAX_CONNECTIONS_PER_CLIENT, requests: attackRequests(data, o.seed + 10) };
        const r = await runLoad(
          label,
          route
            ? { ...spec, connections, warmupS: o.warmupS, headers: json, requests: route.requests }
            : { ...spec, warmupS: 0, headers: {}, ...keylessLoad },
        );
        log(
          `${label}: ${Math.round(r.rps)} req/s, p50 ${r.p50?.toFixed(2)} ms, p99 ${r.p99?.toFixed(2)} ms, answers ` +
            `${JSON.stringify(r.statuses)}, ${r.errors} errors`,
        );
      }
      await p.stop();
      // What the load cost in memory (the bench's bound is on the replicas' resident memory).
      const memory = treeMemory(tag);
      log(`the replica after it: ${Math.round(memory.rssMb)} MB resident, ${Math.round(memory.peakMb)} MB at most`);
    });
    p.print(label === HOSTILE ? "one keyless attacker" : label);
  }
});
