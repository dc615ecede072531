import { randomUUID } from "node:crypto";
import type { RequestListener } from "node:http";
import { hostname } from "node:os";
import { getRequestListener } from "@hono/node-server";
import { Hono, type MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { FEED_RETENTION_DAYS_DEFAULT } from "../core/settings";
import { ponderFinalityDepth } from "../ponder/ponder-0.16.10";
import { requireKey } from "./access/middleware";
import type { Access } from "./access/open";
import { createApp } from "./app";
import { FeedHub } from "./feed/hub";
import { openChangeLog } from "./feed/log";
import { writeChangeLog } from "./feed/writer";
import { type CountAnswer, countRequests, metricsRoute } from "./http/metrics";
import { backfilledReadiness, probes, type Readiness } from "./http/probes";
import { withDirectAnswers } from "./routes/direct-answers";
import { LISTING_CACHE_BYTES, ListingCache } from "./routes/listing-cache";
import { MomentClock, rpcHeaders } from "./routes/moment";
import { type ChainSchemas, perChainSchema } from "./store/chain-schemas";
import { createHistoryStore } from "./store/history-store";
import type { ServedChain } from "./store/served-chains";
import type { Execute, Store } from "./store/store";
import { type ChainAlarms, openChainAlarms, refuseWhileAlarmed } from "./watch/chain-alarms";
import { openChainIndexers } from "./watch/chain-indexers";
import { chainStatus, replicationBehind } from "./watch/chain-status";
import { type WatchedChain, watchDeepReorgs } from "./watch/deep-reorg";
import { watchReplacedHeads } from "./watch/replaced-head";
import { type ReplicationWatch, trailing, withReplication } from "./watch/replication";
import { DELIVER_EVERY_MS, deliverWebhooks, WEBHOOK_TIMEOUT_MS } from "./webhooks/deliverer";
import { openWebhookStore } from "./webhooks/store";

/**
 * How often the indexer's process writes the change log from the tables (api/feed/writer.ts), and
 * how often the feed's streams are handed what the log has new (api/feed/hub.ts): a change waits
 * for both after its answer (docs/performance.md, the change feed: 500 and 250 ms missed the 1 s).
 */
const CHANGE_LOG_EVERY_MS = 200;
const FEED_EVERY_MS = 100;
const DAY_MS = 24 * 3_600_000;

/** What differs between the processes that serve the API: `npm start` (inside Ponder) and `npm run serve`'s workers. */
export type ServiceParts = {
  /** Each chain's indexer schema: the tables read, and whose alarms are kept. */
  schemas: ChainSchemas;
  chains: readonly ServedChain[];
  access: Access;
  /** The current state: the in-memory copy (api/replica/), or one statement per answer (api/store/store.ts). */
  store: Store;
  /** Runs the statements of the history (and of the chains' watchers): Ponder's read-only db, or a pool. */
  execute: Execute;
  /** BEHIND_AFTER_SECONDS. */
  behindAfterSeconds: number;
  /**
   * In the indexer's process: its chains' RPCs, checked every `reorgCheckMs` for a reorganization
   * deeper than the finality depth, and for a head that replaced the block indexed (api/watch/).
   */
  watch?: { chains: readonly WatchedChain[]; reorgCheckMs: number; remedy?: string };
  /**
   * The chains' RPCs this process may read block headers from, to find a `timestamp`'s block where
   * the samples it holds do not tell it (api/routes/moment.ts); a chain left out refuses such a moment.
   */
  headers?: readonly WatchedChain[];
  /** Ponder's GraphQL, served at /graphql to key holders. */
  graphql?: MiddlewareHandler;
  /** How far the database read trails its primary when it is a hot standby (api/watch/replication.ts). */
  replication?: ReplicationWatch;
  /**
   * Where the API answers on its own (`npm run serve`): /health, /ready and /metrics, from this
   * process's answers counted with `countAnswer` and every process's figures (`figures`).
   */
  alone?: { countAnswer: CountAnswer; figures: () => Promise<string> };
};

export type Service = {
  /** The app, every route of it: what Ponder mounts, or what `listener` hands what it does not answer. */
  app: Hono;
  /** The app on node:http, with keyed checks and listings answered past Hono (api/routes/direct-answers.ts). */
  listener: RequestListener;
  /** What /ready says (Ponder's own /ready once this is ready). */
  readiness: () => Promise<Readiness>;
  alarms: ChainAlarms;
};

/**
 * The service, assembled once for both processes that serve it: the store (with the standby's
 * replication where there is one), the history, the chains' alarms and their watchers, the
 * listings kept rendered, the app with what `parts` add to it, the direct answers, and readiness.
 */
export async function assembleService(parts: ServiceParts): Promise<Service> {
  const { schemas, chains, access, execute, behindAfterSeconds, replication } = parts;
  // On a hot standby every chain's status also holds how far the standby trails (chain-status.ts).
  const store = replication ? withReplication(parts.store, replication) : parts.store;
  // The alarms' tables first: a replica opens them once the indexer has published its chains.
  const alarms = await openChainAlarms(access.db, access.schema, schemas);
  // Chains indexed apart: the launcher notes each one's indexer (api/watch/chain-indexers.ts).
  const noted = chains.some((chain) => chain.schema !== undefined)
    ? await openChainIndexers(access.db, access.schema, schemas)
    : undefined;
  const indexers = noted && (() => noted.current());
  if (parts.watch) {
    const { reorgCheckMs, remedy } = parts.watch;
    for (const schema of schemas.all) {
      const watched = parts.watch.chains.filter(({ id }) => schemas.of(id) === schema);
      watchDeepReorgs({ chains: watched, execute, schema, alarms, everyMs: reorgCheckMs, remedy });
      watchReplacedHeads({ chains: watched, execute, schema, alarms });
    }
  }
  // Chains in schemas of their own are indexed apart, each live on its own.
  const apart = schemas.all.length > 1;
  const readiness = readinessOf({ chains, apart, store, alarms, behindAfterSeconds, replication });
  const history = perChainSchema(schemas, (schema) => createHistoryStore(execute, schema));
  // The change log beside the keys, which every process reads; the indexer's process writes it.
  const changes = await openChangeLog(access.db, access.schema);
  if (parts.watch) {
    let reported = "";
    writeChangeLog({
      log: changes,
      schemas,
      chains,
      execute,
      history,
      everyMs: CHANGE_LOG_EVERY_MS,
      retainMs: (access.feedRetentionDays ?? FEED_RETENTION_DAYS_DEFAULT) * DAY_MS,
      onError: (error) => {
        // Once per cause: it is tried again every tick.
        if (error.message !== reported) console.error(`The change log could not be written: ${error.message}`);
        reported = error.message;
      },
    });
  }
  // The webhook endpoints beside the log; the indexer's process delivers to them (one at a time: a lease).
  const hooks = await openWebhookStore(access.db, access.schema);
  const allowPrivate = access.webhookAllowPrivate ?? false;
  if (parts.watch) {
    let reported = "";
    deliverWebhooks({
      store: hooks,
      log: changes,
      served: chains.map((c) => c.id),
      holder: `${hostname()} ${process.pid} ${randomUUID()}`,
      everyMs: DELIVER_EVERY_MS,
      timeoutMs: WEBHOOK_TIMEOUT_MS,
      allowPrivate,
      onError: (error) => {
        if (error.message !== reported) console.error(`Webhooks could not be delivered: ${error.message}`);
        reported = error.message;
      },
    });
  }
  const webhooks = {
    store: hooks,
    log: () => changes,
    served: chains.map((c) => c.id),
    allowPrivate,
    timeoutMs: WEBHOOK_TIMEOUT_MS,
  };
  const options = {
    store,
    webhooks,
    changes: () => changes,
    feed: new FeedHub(() => changes, {
      everyMs: FEED_EVERY_MS,
      onError: (error) => console.error(`The change feed could not be read: ${error.message}`),
    }),
    history,
    chains,
    alarms,
    indexers,
    access,
    behindAfterSeconds,
    listings: new ListingCache(LISTING_CACHE_BYTES),
    moments: new MomentClock(rpcHeaders(parts.headers ?? []), (id) => BigInt(ponderFinalityDepth(id))),
  };
  const app = new Hono();
  if (parts.alone) {
    app.use(countRequests(parts.alone.countAnswer));
    app.route("/", probes(readiness));
    const alarmed = () => new Set(alarms.current().keys());
    app.route(
      "/",
      metricsRoute(parts.alone.figures, {
        chains,
        states: () => store.chainStates(),
        behindAfterSeconds,
        alarmed,
        indexers,
      }),
    );
  }
  // Before the API app, whose catch-all answers 404 for every path it does not serve. GraphQL reads
  // every chain's tables at once: a chain whose history mixes two branches refuses it whole.
  if (parts.graphql)
    app.use(
      "/graphql",
      // What Ponder's server gave it before answerBesidePonder: readable from any origin, refusals too.
      cors({ origin: "*", maxAge: 86400 }),
      requireKey(access.keys, "GraphQL"),
      refuseWhileAlarmed(alarms),
      parts.graphql,
    );
  app.route("/", createApp(options));
  const listener = withDirectAnswers(options, getRequestListener(app.fetch), parts.alone?.countAnswer);
  return { app, listener, readiness, alarms };
}

/**
 * Ready once every chain is backfilled (chains indexed `apart`: once one is). A chain behind (its
 * RPC fails, or the standby read lags) is named but keeps the process in service: its answers stay
 * right for the block they report.
 */
export function readinessOf(options: {
  chains: readonly ServedChain[];
  apart?: boolean;
  store: Pick<Store, "chainStates">;
  alarms: Pick<ChainAlarms, "current">;
  behindAfterSeconds: number;
  replication?: Pick<ReplicationWatch, "current">;
  nowSeconds?: () => number;
}): () => Promise<Readiness> {
  const { chains, store, alarms, behindAfterSeconds: behindAfter, replication } = options;
  return async () => {
    const states = await store.chainStates();
    const backfilled = backfilledReadiness(chains, states, options.apart);
    if (!backfilled.ready) return backfilled;
    const now = options.nowSeconds?.() ?? Math.floor(Date.now() / 1000);
    const behind = chains.flatMap((chain) => {
      const alarm = alarms.current().get(chain.id);
      const { status, lagSeconds } = chainStatus(states.get(chain.id), now, behindAfter, alarm !== undefined);
      if (status === "behind" && lagSeconds! > behindAfter)
        return [`chain ${chain.id} is behind: its newest indexed block is ${lagSeconds} s old`];
      return status === "reorganized" ? [`chain ${chain.id} is refused: ${alarm}`] : [];
    });
    const lagging = replication?.current();
    if (replicationBehind(lagging)) behind.unshift(`every chain is behind: ${trailing(lagging!)}`);
    if (backfilled.text !== "") behind.unshift(backfilled.text);
    return { ready: true, text: behind.join("\n") };
  };
}
