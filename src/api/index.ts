import { db } from "ponder:api";
import ponderSchema, { v2Delegation } from "ponder:schema";
import { getRequestListener } from "@hono/node-server";
import { getTableConfig } from "drizzle-orm/pg-core";
import { Hono } from "hono";
import { cors } from "hono/cors";
import { graphql } from "ponder";
import { requireKey } from "../../api/access/middleware";
import { openAccess } from "../../api/access/open";
import { pgAccessDb } from "../../api/access/pg";
import { pgliteDb } from "../../api/access/pglite";
import { createApp } from "../../api/app";
import { answerClientErrors } from "../../api/http/client-error";
import { backfilledReadiness, readinessOrLogged } from "../../api/http/probes";
import { guardServer } from "../../api/http/server";
import { createReplicaStore, REPLICA_CONNECTION, readOnlySnapshot } from "../../api/replica/store";
import { withDirectAnswers } from "../../api/routes/direct-answers";
import { LISTING_CACHE_BYTES, ListingCache } from "../../api/routes/listing-cache";
import { createHistoryStore } from "../../api/store/history-store";
import { publishServedChains, servedChain } from "../../api/store/served-chains";
import { createSqlStore } from "../../api/store/store";
import { logBackfillProgress } from "../../api/watch/backfill-progress";
import { openChainAlarms, refuseWhileAlarmed } from "../../api/watch/chain-alarms";
import { watchDeepReorgs } from "../../api/watch/deep-reorg";
import { watchReplacedHeads } from "../../api/watch/replaced-head";
import { ponderSettings } from "../../core/settings";
import { answerBesidePonder, onPonderServer, ponderPglite } from "../../ponder/ponder-0.16.10";

/**
 * The glue between Ponder and the API: mounts the app over Ponder's read-only db, serving the
 * chains of the plan `npm start` handed over, and publishes them for API processes run apart
 * (`npm run serve`). Beside it, /graphql: Ponder's GraphQL over the indexer's tables, with Ponder's
 * query limits, for API key holders only (docs/graphql.md).
 */

const {
  plan,
  database,
  access: accessSettings,
  behindAfterSeconds,
  reorgCheckSeconds,
  inMemory,
} = ponderSettings(process.env);
// Ponder sets every table's schema to the one this instance was started with (--schema).
const schema = getTableConfig(v2Delegation).schema ?? "public";

const chains = plan.map(({ chain, v1, v2 }) => servedChain(chain, { v1, v2 }));
// Keys and keyless windows live in the service's own tables: Ponder's db handle here is read-only.
const access = await openAccess(accessSettings, database);
// The alarms' tables first: a replica waits for the chains to be published, then opens them.
const alarms = await openChainAlarms(access.db, access.schema, schema);
await publishServedChains(access.db, access.schema, schema, chains);
const watched = plan.map(({ chain, rpc }) => ({ id: chain.id, rpc }));
watchDeepReorgs({
  chains: watched,
  execute: (query) => db.execute(query),
  schema,
  alarms,
  everyMs: reorgCheckSeconds * 1000,
});
watchReplacedHeads({ chains: watched, execute: (query) => db.execute(query), schema, alarms });

// The current state is answered from an in-memory copy, as replicas answer it: a check is then a
// few map lookups, not a statement (on PGlite, one queued behind the indexer's on its one
// instance). On PGlite its syncs are PGlite transactions, which run alone on the instance; on
// Postgres snapshots over a pool of its own, as a replica's (Ponder's handle cannot set one).
// INDEXER_IN_MEMORY=false on Postgres: one statement per answer (api/store/store.ts).
const pglite = ponderPglite(db);
const store = pglite
  ? createReplicaStore(pgliteDb(pglite).transaction, schema)
  : database.url !== undefined && inMemory
    ? createReplicaStore(readOnlySnapshot(pgAccessDb(database.url, REPLICA_CONNECTION)), schema)
    : createSqlStore((query) => db.execute(query), schema);

// Ponder's server answers what Node's parser refuses as replicas do, and hands the API's paths to
// the app below directly (`app` and `options` are defined when Ponder makes its server, after
// this module ran).
// answerBesidePonder first: it takes over the one request listener Ponder gave the server, before
// answerClientErrors adds its own. /ready waits for the store to hold every chain too: the copy
// sees Ponder's readiness up to a sync after Ponder's /ready does.
onPonderServer((server) => {
  answerBesidePonder(server, withDirectAnswers(options, getRequestListener(app.fetch)), async () => {
    const { ready, text } = await readinessOrLogged(async () => backfilledReadiness(chains, await store.chainStates()));
    return ready ? undefined : text;
  });
  answerClientErrors(server);
  guardServer(server, { trustProxy: accessSettings.trustedProxy });
});

const options = {
  store,
  history: createHistoryStore((query) => db.execute(query), schema),
  alarms,
  chains,
  access,
  behindAfterSeconds,
  listings: new ListingCache(LISTING_CACHE_BYTES),
};
const app = new Hono();
// Before the API app, whose catch-all answers 404 for every path it does not serve. GraphQL reads
// every chain's tables at once: a chain whose history mixes two branches refuses it whole.
app.use(
  "/graphql",
  // What Ponder's server gave it before answerBesidePonder: readable from any origin, refusals too.
  cors({ origin: "*", maxAge: 86400 }),
  requireKey(access.keys, "GraphQL"),
  refuseWhileAlarmed(alarms),
  graphql({ db, schema: ponderSchema }),
);
app.route("/", createApp(options));
export default app;

logBackfillProgress(plan.map((p) => p.chain.name));
