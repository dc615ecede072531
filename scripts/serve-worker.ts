/** One API worker of `npm run serve` (scripts/serve.ts): the replica store, the service (api/service.ts), node:http. */
import { openAccess } from "../api/access/open";
import { pgAccessDb } from "../api/database/pg";
import { processFigures } from "../api/http/metrics";
import { startHttpServer } from "../api/http/server";
import { createReplicaStore, REPLICA_CONNECTION, readOnlySnapshot } from "../api/replica/store";
import { assembleService } from "../api/service";
import { ChainSchemas } from "../api/store/chain-schemas";
import { followPublishedChains, publishedChains } from "../api/store/served-chains";
import { executeOver } from "../api/store/store";
import { REINDEX_REMEDY } from "../api/watch/deep-reorg";
import { watchReplication } from "../api/watch/replication";
import type { ServeSettings } from "../core/settings";
import { workerFigures } from "./cluster-figures";

/** Serves until SIGINT or SIGTERM, then gives in-flight requests `shutdownMs` to finish. */
export async function runWorker(settings: ServeSettings, shutdownMs: number) {
  // First: from now on the primary's gathering of the workers' figures hears from this one.
  const figures = processFigures();
  const everyWorker = await workerFigures(figures.registry);
  const { port, schema, reorgCheckSeconds } = settings;
  const rpcs = settings.rpc.map(({ chain, rpc, ws }) => ({ id: chain.id, rpc, ws }));
  const { url, accessUrl } = settings.database;
  const chains = await publishedChains(accessUrl, settings.access.schema, schema);
  const learning = followPublishedChains(accessUrl, { schema: settings.access.schema, indexerSchema: schema, chains });
  // The chains' own schemas, where the deployment indexes them apart (api/store/chain-schemas.ts).
  const schemas = ChainSchemas.served(chains, schema);
  // What is read may be a read-only role or a standby: the keys and the keyless budget are kept
  // through ACCESS_DATABASE_URL.
  const access = await openAccess(settings.access, { ...settings.database, url: accessUrl });
  // The state is copied into memory and kept in step: a check is a few map lookups.
  const database = pgAccessDb(url, REPLICA_CONNECTION);
  const copy = createReplicaStore(readOnlySnapshot(database), schemas, database.query);
  const replication = watchReplication(database, settings.replicaBehindSeconds);

  await copy.started;
  // The load's garbage (rows read, arrays outgrown) is returned now rather than whenever V8 gets to
  // it, under load maybe never: ~170 MB per worker at 1M delegations (docs/performance.md).
  globalThis.gc?.();
  const { listener, alarms } = await assembleService({
    schemas,
    chains,
    access,
    store: copy,
    execute: executeOver(database.query),
    behindAfterSeconds: settings.behindAfterSeconds,
    replication,
    headers: rpcs,
    // Beside chains indexed apart, this process watches their RPCs (scripts/launcher/apart.ts).
    // The launcher re-indexes a chain whose alarm is raised (scripts/launcher/reindex.ts).
    watch:
      reorgCheckSeconds === undefined
        ? undefined
        : { chains: rpcs, reorgCheckMs: reorgCheckSeconds * 1000, remedy: REINDEX_REMEDY.launcher },
    alone: { countAnswer: figures.countAnswer, figures: everyWorker },
  });
  const http = await startHttpServer({ listener, port, hostname: settings.host, trustProxy: access.trustProxy });
  console.log(`API worker ${process.pid} serving ${chains.map((c) => c.id).join(", ")} on port ${port}`);

  const stop = () => {
    setTimeout(() => process.exit(0), shutdownMs).unref();
    void http.close(shutdownMs).then(async () => {
      copy.stop();
      replication.stop();
      alarms.close();
      await Promise.allSettled([database.close(), access.close(), learning.stop()]);
      process.exit(0);
    });
  };
  process.once("SIGINT", stop).once("SIGTERM", stop);
}
