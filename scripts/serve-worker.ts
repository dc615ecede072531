/** One API worker of `npm run serve` (scripts/serve.ts): the replica store, the app, node:http. */
import { getRequestListener } from "@hono/node-server";
import { Hono } from "hono";
import { openAccess } from "../api/access/open";
import { pgAccessDb } from "../api/access/pg";
import { createApp } from "../api/app";
import { countRequests, metricsRoute, processFigures } from "../api/http/metrics";
import { backfilledReadiness, probes } from "../api/http/probes";
import { startHttpServer } from "../api/http/server";
import { createReplicaStore, REPLICA_CONNECTION, readOnlySnapshot } from "../api/replica/store";
import { withDirectAnswers } from "../api/routes/direct-answers";
import { LISTING_CACHE_BYTES, ListingCache } from "../api/routes/listing-cache";
import { createHistoryStore } from "../api/store/history-store";
import { readServedChains, type ServedChain } from "../api/store/served-chains";
import { executeOver } from "../api/store/store";
import { openChainAlarms } from "../api/watch/chain-alarms";
import { chainStatus, replicationBehind } from "../api/watch/chain-status";
import { trailing, watchReplication, withReplication } from "../api/watch/replication";
import type { ServeSettings } from "../core/settings";
import { workerFigures } from "./cluster-figures";

/** Serves until SIGINT or SIGTERM, then gives in-flight requests `shutdownMs` to finish. */
export async function runWorker(settings: ServeSettings, shutdownMs: number) {
  // First: from now on the primary's gathering of the workers' figures hears from this one.
  const figures = processFigures();
  const everyWorker = workerFigures(figures.registry);
  const { port, schema: indexerSchema } = settings;
  const { url, accessUrl } = settings.database;
  const served = await publishedChains(accessUrl, settings.access.schema, indexerSchema);
  // What is read may be a read-only role or a standby: the keys and the keyless budget are kept
  // through ACCESS_DATABASE_URL.
  const access = await openAccess(settings.access, { ...settings.database, url: accessUrl });
  // The state is copied into memory and kept in step: a check is a few map lookups.
  const database = pgAccessDb(url, REPLICA_CONNECTION);
  const copy = createReplicaStore(readOnlySnapshot(database), indexerSchema);

  const replication = watchReplication(database, settings.replicaBehindSeconds);
  // On a hot standby every chain's status also holds how far the standby trails (chain-status.ts).
  const store = withReplication(copy, replication);

  await copy.started;
  // The load's garbage (rows read, arrays outgrown) is returned now rather than whenever V8 gets to
  // it, under load maybe never: ~170 MB per worker at 1M delegations (docs/performance.md).
  globalThis.gc?.();
  const alarms = await openChainAlarms(access.db, access.schema, indexerSchema);
  const behindAfter = settings.behindAfterSeconds;
  // Ready once every chain is backfilled. A chain behind (its RPC fails, or the standby read lags)
  // is named but keeps the replica in service: its answers stay right for the block they report.
  const readiness = async () => {
    const states = await store.chainStates();
    const backfilled = backfilledReadiness(served, states);
    if (!backfilled.ready) return backfilled;
    const now = Math.floor(Date.now() / 1000);
    const behind = served.flatMap((chain) => {
      const alarm = alarms.current().get(chain.id);
      const { status, lagSeconds } = chainStatus(states.get(chain.id), now, behindAfter, alarm !== undefined);
      if (status === "behind" && lagSeconds! > behindAfter)
        return [`chain ${chain.id} is behind: its newest indexed block is ${lagSeconds} s old`];
      return status === "reorganized" ? [`chain ${chain.id} is refused: ${alarm}`] : [];
    });
    const lagging = replication.current();
    if (replicationBehind(lagging)) behind.unshift(`every chain is behind: ${trailing(lagging!)}`);
    return { ready: true, text: behind.join("\n") };
  };
  const options = {
    store,
    history: createHistoryStore(executeOver(database.query), indexerSchema),
    chains: served,
    alarms,
    access,
    behindAfterSeconds: behindAfter,
    listings: new ListingCache(LISTING_CACHE_BYTES),
  };
  const app = new Hono()
    .use(countRequests(figures.countAnswer))
    .route("/", probes(readiness))
    .route(
      "/",
      metricsRoute(everyWorker, {
        chains: served,
        states: () => store.chainStates(),
        behindAfterSeconds: behindAfter,
        alarmed: () => new Set(alarms.current().keys()),
      }),
    )
    .route("/", createApp(options));
  const listener = withDirectAnswers(options, getRequestListener(app.fetch), figures.countAnswer);
  const http = await startHttpServer({ listener, port, hostname: settings.host, trustProxy: access.trustProxy });
  console.log(`API worker ${process.pid} serving ${served.map((c) => c.id).join(", ")} on port ${port}`);

  const stop = () => {
    setTimeout(() => process.exit(0), shutdownMs).unref();
    void http.close(shutdownMs).then(async () => {
      copy.stop();
      replication.stop();
      alarms.close();
      await Promise.allSettled([database.close(), access.close()]);
      process.exit(0);
    });
  };
  process.once("SIGINT", stop).once("SIGTERM", stop);
}

/**
 * The chains the indexer writing `indexerSchema` serves, once it has published them in the access
 * schema at `url`. It makes the access tables first, so a replica whose role may only use them (and
 * cannot make them) starts after they exist; until then, it says once why it waits.
 */
async function publishedChains(url: string, schema: string, indexerSchema: string): Promise<ServedChain[]> {
  const db = pgAccessDb(url, { applicationName: "delegation-lookup replica start", max: 1 });
  let said: string | undefined;
  try {
    for (;;) {
      const chains = await readServedChains(db, schema, indexerSchema).catch((error: Error) => error.message);
      if (Array.isArray(chains)) return chains;
      const why = chains ?? "is `npm start` running on this database?";
      if (why !== said)
        console.log(`waiting for the indexer to publish the chains it serves (schema ${indexerSchema}): ${why}`);
      said = why;
      await new Promise((ok) => setTimeout(ok, 2_000));
    }
  } finally {
    await db.close();
  }
}
