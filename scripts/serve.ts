/**
 * `npm run serve`: the API alone, on node:http, over the tables the indexer (`npm start`) writes in
 * Postgres. No Ponder in the request path, one worker per core, and any number of such processes
 * (and hosts) can serve one database. PGlite admits one process: there the API runs inside
 * `npm start`.
 */
import cluster from "node:cluster";
import type { Server } from "node:http";
import { availableParallelism } from "node:os";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { openAccess } from "../api/access/open";
import { pgAccessDb } from "../api/access/pg";
import { createApp } from "../api/app";
import { behindAfterSeconds, chainStatus } from "../api/chains";
import { answerClientErrors } from "../api/client-error";
import { countRequests, metricsText, type RequestCounts, sumFigures } from "../api/metrics";
import { probes } from "../api/probes";
import { createReplicaStore } from "../api/replica/store";
import { readServedChains } from "../api/served-chains";
import { gatherWorkerFigures, workerFigures } from "./cluster-figures";

const env = process.env;
if (!env.DATABASE_URL) {
  console.error(
    "npm run serve reads the indexer's tables in Postgres: set DATABASE_URL (and DATABASE_SCHEMA if the indexer runs with another schema than `delegations`). With PGlite the API runs inside `npm start`.",
  );
  process.exit(1);
}
const port = Number(env.PORT ?? 42070);
const workers = Number(env.API_WORKERS || availableParallelism());
/** Clients and load balancers keep connections open for a while: closing first would race them. */
const KEEP_ALIVE_MS = 65_000;
/** In-flight requests get this long to finish on SIGTERM. */
const SHUTDOWN_MS = 8_000;

if (cluster.isPrimary && workers > 1) {
  console.log(`API on port ${port}: ${workers} workers over ${env.DATABASE_SCHEMA || "delegations"}`);
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
  await runWorker();
}

async function runWorker() {
  const indexerSchema = env.DATABASE_SCHEMA || "delegations";
  const access = await openAccess(env);
  // The state is copied into memory and kept in step: a check is a few map lookups.
  const database = pgAccessDb(env.DATABASE_URL!);
  const store = createReplicaStore(
    (work) =>
      database.transaction(async (query) => {
        await query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
        return work(query);
      }),
    indexerSchema,
  );

  let served = await readServedChains(access.db, access.schema, indexerSchema);
  if (served === undefined) {
    console.log(
      `waiting for the indexer to publish the chains it serves (schema ${indexerSchema}): is \`npm start\` running on this database?`,
    );
  }
  while (served === undefined) {
    await new Promise((ok) => setTimeout(ok, 2_000));
    served = await readServedChains(access.db, access.schema, indexerSchema);
  }
  await store.started;
  const behindAfter = behindAfterSeconds(env);
  // Ready once every chain is backfilled. A chain behind (its RPC fails) is named but keeps the
  // replica in service: its answers stay right for the block they report.
  const readiness = async () => {
    const states = await store.chainStates();
    if (!served.every((chain) => states.get(chain.id)?.ready === true))
      return { ready: false, text: "not every chain is backfilled yet" };
    const now = Math.floor(Date.now() / 1000);
    const behind = served.flatMap((chain) => {
      const { status, lagSeconds } = chainStatus(states.get(chain.id), now, behindAfter);
      return status === "behind"
        ? [`chain ${chain.id} is behind: its newest indexed block is ${lagSeconds} s old`]
        : [];
    });
    return { ready: true, text: behind.join("\n") };
  };
  const requests: RequestCounts = {};
  const figures = workerFigures(() => ({ requests, rssBytes: process.memoryUsage.rss() }));
  const app = new Hono()
    .use(countRequests(requests))
    .route("/", probes(readiness))
    .get("/metrics", async (c) => {
      const [all, states] = await Promise.all([figures(), store.chainStates()]);
      const text = metricsText({
        figures: sumFigures(all),
        workers: all.length,
        chains: served,
        states,
        nowSeconds: Math.floor(Date.now() / 1000),
        behindAfterSeconds: behindAfter,
      });
      return c.text(text, 200, { "Content-Type": "text/plain; version=0.0.4; charset=utf-8" });
    })
    .route("/", createApp({ store, chains: served, access, behindAfterSeconds: behindAfter }));
  const server = serve({ fetch: app.fetch, port, hostname: env.HOST }, () =>
    console.log(`API worker ${process.pid} serving ${served.map((c) => c.id).join(", ")} on port ${port}`),
  ) as Server;
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  // What Node's parser refuses (headers over its limit, bad bytes, timeouts) never reaches the
  // app; Node would answer it with a bare status line, the contract wants problem+json.
  answerClientErrors(server);

  const stop = () => {
    server.close(async () => {
      store.stop();
      await Promise.allSettled([database.close(), access.close()]);
      process.exit(0);
    });
    server.closeIdleConnections();
    setTimeout(() => process.exit(0), SHUTDOWN_MS).unref();
  };
  process.once("SIGINT", stop).once("SIGTERM", stop);
}
