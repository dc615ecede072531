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

if (cluster.isPrimary && workers > 1) {
  console.log(`API on port ${port}: ${workers} workers over ${indexerSchema}`);
  for (let i = 0; i < workers; i++) cluster.fork();
  gatherWorkerFigures();
  let stopping = false;
  cluster.on("exit", (worker, code) => {
    if (stopping) return;
    console.error(`API worker ${worker.process.pid} exited (${code}); starting another`);
    cluster.fork();
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
