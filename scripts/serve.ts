/**
 * `npm run serve`: the API alone, on node:http, over the tables the indexer (`npm start`) writes in
 * Postgres. No Ponder in the request path, one worker per core, and any number of such processes
 * (and hosts) can serve one database. PGlite admits one process: there the API runs inside
 * `npm start`.
 */
import cluster from "node:cluster";
import { availableParallelism } from "node:os";
import { serveSettings, settingsOrExit } from "../core/settings";
import { gatherWorkerFigures } from "./cluster-figures";

const settings = settingsOrExit(() => serveSettings(process.env));
const { port, schema: indexerSchema } = settings;
const workers = settings.workers ?? availableParallelism();
/** In-flight requests get this long to finish on SIGTERM. */
const SHUTDOWN_MS = 8_000;
/**
 * Each worker's environment beyond ours: glibc's malloc serves blocks from 128 KiB on by mmap, so
 * that the copy's typed arrays, freed as they grow by doubling, go back to the system. Left to
 * itself, glibc raises that threshold once such blocks are freed and keeps them in its heap: ~45 MB
 * per worker at 1M delegations (docs/performance.md). An operator's own setting wins
 * (core/settings.ts reads it).
 */
const WORKER_ENV = { MALLOC_MMAP_THRESHOLD_: String(settings.mallocMmapThreshold) };

/**
 * Each worker's node flags beyond ours. gc exposed: a worker returns its copy's load garbage at once
 * (scripts/serve-worker.ts). A young generation of 32 MB semi-spaces rather than V8's 16: a batch of
 * 10,000 checks keeps what it parses alive until it answers, and with small semi-spaces each
 * scavenge copies it again (batches at 8 connections a fifth slower at 16 MB). 64 MB cost about 70
 * MB more resident a worker, for batches no faster once they allocated half as much
 * (docs/performance.md, "Batches allocating half as much").
 */
const WORKER_FLAGS = ["--expose-gc", "--max-semi-space-size=32"];

// One worker too is a process of its own, so that it runs with WORKER_ENV and WORKER_FLAGS.
if (cluster.isPrimary) {
  console.log(`API on port ${port}: ${workers} worker${workers === 1 ? "" : "s"} over ${indexerSchema}`);
  cluster.setupPrimary({ execArgv: [...process.execArgv, ...WORKER_FLAGS] });
  for (let i = 0; i < workers; i++) cluster.fork(WORKER_ENV);
  gatherWorkerFigures();
  let stopping = false;
  cluster.on("exit", (worker, code) => {
    if (stopping) return;
    console.error(`API worker ${worker.process.pid} exited (${code}); starting another`);
    cluster.fork(WORKER_ENV);
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      stopping = true;
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
      setTimeout(() => process.exit(0), SHUTDOWN_MS + 1_000).unref();
      cluster.on("exit", () => Object.keys(cluster.workers ?? {}).length === 0 && process.exit(0));
    });
  }
} else {
  // Imported here, not above: the primary only forks, and the API's modules would cost it ~100 MB.
  const { runWorker } = await import("./serve-worker");
  await runWorker(settings, SHUTDOWN_MS);
}
