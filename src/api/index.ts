import type { Server } from "node:http";
import { db } from "ponder:api";
import ponderSchema, { v2Delegation } from "ponder:schema";
import { getTableConfig } from "drizzle-orm/pg-core";
import { Hono } from "hono";
import { graphql } from "ponder";
import { openAccess } from "../../api/access/open";
import { pgAccessDb } from "../../api/database/pg";
import { pgliteDb } from "../../api/database/pglite";
import { answerClientErrors } from "../../api/http/client-error";
import { readinessOrLogged } from "../../api/http/probes";
import { drainServer, guardServer } from "../../api/http/server";
import { createReplicaStore, REPLICA_CONNECTION, readOnlySnapshot } from "../../api/replica/store";
import { assembleService } from "../../api/service";
import { ChainSchemas } from "../../api/store/chain-schemas";
import { publishServedChains, servedChain } from "../../api/store/served-chains";
import { createSqlStore, type Execute } from "../../api/store/store";
import { logBackfillProgress } from "../../api/watch/backfill-progress";
import { ponderSettings } from "../../core/settings";
import {
  answerBesidePonder,
  beforePonderExits,
  closedBeforePonder,
  leaveSigtermToPonder,
  onPonderServer,
  ponderPglite,
} from "../../ponder/ponder-0.16.10";

/**
 * The glue between Ponder and the API (api/service.ts): mounts the app over Ponder's read-only db,
 * serving the chains of the plan `npm start` handed over, and publishes them for API processes run
 * apart (`npm run serve`). Beside it, /graphql: Ponder's GraphQL over the indexer's tables, with
 * Ponder's query limits, for API key holders only (docs/graphql.md).
 */

const settings = ponderSettings(process.env);

/** The service over Ponder's db, mounted on Ponder's server; its app. */
async function serveBesidePonder(): Promise<Hono> {
  const { plan, database, access: accessSettings, behindAfterSeconds, reorgCheckSeconds, inMemory } = settings;
  // Ponder sets every table's schema to the one this instance was started with (--schema).
  const schema = getTableConfig(v2Delegation).schema ?? "public";
  const schemas = ChainSchemas.one(schema);
  const chains = plan.map(({ chain, v1, v2 }) => servedChain(chain, { v1, v2 }));
  // Keys and keyless windows live in the service's own tables: Ponder's db handle here is read-only.
  const access = await openAccess(accessSettings, database);
  const execute: Execute = (query) => db.execute(query);

  // The current state is answered from an in-memory copy, as replicas answer it: a check is then a
  // few map lookups, not a statement (on PGlite, one queued behind the indexer's on its one
  // instance). On PGlite its syncs are PGlite transactions, which run alone on the instance; on
  // Postgres snapshots over a pool of its own, as a replica's (Ponder's handle cannot set one).
  // INDEXER_IN_MEMORY=false on Postgres: one statement per answer (api/store/store.ts).
  const pglite = ponderPglite(db);
  const copied = pglite
    ? pgliteDb(pglite)
    : database.url !== undefined && inMemory
      ? pgAccessDb(database.url, REPLICA_CONNECTION)
      : undefined;
  const store =
    copied === undefined
      ? createSqlStore(execute, schema)
      : createReplicaStore(pglite ? copied.transaction : readOnlySnapshot(copied), schemas, copied.query);

  const rpcs = plan.map(({ chain, rpc, ws }) => ({ id: chain.id, rpc, ws }));
  const { app, listener, readiness } = await assembleService({
    schemas,
    chains,
    access,
    store,
    execute,
    behindAfterSeconds,
    watch: { chains: rpcs, reorgCheckMs: reorgCheckSeconds * 1000 },
    headers: rpcs,
    graphql: graphql({ db, schema: ponderSchema }),
  });
  // After the alarms' tables (assembleService): a replica waits for the chains to be published, then opens them.
  await publishServedChains(access.db, access.schema, schema, chains);

  // Ponder's server answers what Node's parser refuses as replicas do, and hands the API's paths to
  // the app directly. answerBesidePonder first: it takes over the one request listener Ponder gave
  // the server, before answerClientErrors adds its own. /ready waits for the store to hold every
  // chain too: the copy sees Ponder's readiness up to a sync after Ponder's /ready does.
  onPonderServer((server) => {
    const api = answerBesidePonder(server, listener, async () => {
      const { ready, text } = await readinessOrLogged(readiness);
      return ready ? undefined : text;
    });
    if (api) ponderServer = server;
    answerClientErrors(server);
    guardServer(server, { trustProxy: accessSettings.trustedProxy });
  });
  return app;
}

// Vite's SIGTERM listener would end the process before Ponder unlocks its schema: Ponder's alone.
leaveSigtermToPonder();
/** Ponder's server, once it has made it. */
let ponderServer: Server | undefined;
// Requests under way, and those just sent (on idle connections, or queued for accepting), are
// answered before Ponder's exit ends every connection (drainServer); Ponder's exit gives itself 5 s
// more, within an orchestrator's usual 10.
const DRAIN_MS = 3_000;
beforePonderExits(async () => {
  if (!ponderServer) return;
  await drainServer(ponderServer, DRAIN_MS);
  closedBeforePonder(ponderServer);
});

// Where every chain is indexed apart (scripts/launcher/apart.ts), the API runs beside the indexers.
export default settings.indexOnly ? new Hono() : await serveBesidePonder();

logBackfillProgress(settings.plan.map((p) => p.chain.name));
