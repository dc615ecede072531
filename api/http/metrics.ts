import { Hono, type MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import { Counter, Gauge, Registry } from "prom-client";
import type { ServedChain } from "../store/served-chains";
import type { ChainIndexer } from "../watch/chain-indexers";
import { chainStatus, type StatusPosition } from "../watch/chain-status";

/** Counts one answer of `route` (its pattern, such as `/registry/v2/:wallet`) with `status`. */
export type CountAnswer = (route: string, status: number) => void;

/**
 * Counts every answer by the route that answered it (a pattern such as `/registry/v2/:wallet`, so
 * the labels stay few whatever the paths) and its status.
 */
export function countRequests(count: CountAnswer): MiddlewareHandler {
  return async (c, next) => {
    await next();
    count(routePath(c), c.res.status);
  };
}

/** What a process reads of itself: its pid and its resident memory. */
export type ProcessSelf = { pid: number; rss: () => number };

const SELF: ProcessSelf = { pid: process.pid, rss: () => process.memoryUsage.rss() };

/**
 * One API process's figures, in a registry of their own: its answers by route and status, and its
 * resident memory, in all and under its pid (an idle or overloaded worker shows). Each is a sum over
 * processes, prom-client's way of aggregating a cluster's registries: `npm run serve`'s primary sums
 * its workers' (scripts/cluster-figures.ts); the pid label keeps each process's own apart.
 */
export function processFigures(self: ProcessSelf = SELF): { registry: Registry; countAnswer: CountAnswer } {
  const registry = new Registry();
  const registers = [registry];
  const pid = String(self.pid);
  const requests = new Counter({
    name: "delegation_api_requests_total",
    help: "Requests answered, by route pattern and status.",
    labelNames: ["route", "status"] as const,
    registers,
  });
  // Each process counts itself once: summed, the processes whose figures were gathered.
  new Gauge({
    name: "delegation_api_workers",
    help: "API worker processes whose figures are summed here.",
    registers,
  }).set(1);
  new Gauge({
    name: "delegation_api_resident_memory_bytes",
    help: "Resident memory of the API worker processes, summed.",
    registers,
    collect() {
      this.set(self.rss());
    },
  });
  const processRequests = new Counter({
    name: "delegation_api_process_requests_total",
    help: "Requests answered by each API worker process.",
    labelNames: ["pid"] as const,
    registers,
  });
  // At 0 from the start: a process that has answered nothing yet is listed too.
  processRequests.inc({ pid }, 0);
  new Gauge({
    name: "delegation_api_process_resident_memory_bytes",
    help: "Resident memory of each API worker process.",
    labelNames: ["pid"] as const,
    registers,
    collect() {
      this.set({ pid }, self.rss());
    },
  });
  return {
    registry,
    countAnswer(route, status) {
      requests.inc({ route, status });
      processRequests.inc({ pid });
    },
  };
}

/** The chains a process serves, and how it tells their positions (the chains endpoint's). */
export type WatchedChains = {
  chains: readonly ServedChain[];
  states: () => Promise<ReadonlyMap<number, StatusPosition>>;
  behindAfterSeconds: number;
  /** The chains alarmed for a reorganization deeper than the finality depth. */
  alarmed: () => ReadonlySet<number>;
  /** Each chain's indexer, where chains are indexed apart (api/watch/chain-indexers.ts). */
  indexers?: () => ReadonlyMap<number, ChainIndexer>;
  nowSeconds?: () => number;
};

/** Each served chain's position at this moment, as gauges labelled by `chain_id`. */
async function chainGauges(watched: WatchedChains): Promise<Registry> {
  const states = await watched.states();
  const alarmed = watched.alarmed();
  const now = watched.nowSeconds?.() ?? Math.floor(Date.now() / 1000);
  // A registry per scrape: its gauges hold this scrape's positions only, whatever another one reads.
  const registry = new Registry();
  const gauge = (name: string, help: string) =>
    new Gauge({ name, help, labelNames: ["chain_id"] as const, registers: [registry] });
  const indexed = gauge(
    "delegation_chain_indexed_block",
    "The newest block indexed (absent until the chain's first position).",
  );
  const lag = gauge("delegation_chain_lag_seconds", "Age of the newest block indexed.");
  const ready = gauge("delegation_chain_ready", "1 once the chain's backfill is done.");
  const behind = gauge(
    "delegation_chain_behind",
    "1 while the newest block indexed is older than BEHIND_AFTER_SECONDS.",
  );
  const reorganized = gauge(
    "delegation_chain_reorganized",
    "1 once a reorganization deeper than the indexer's finality depth was found: re-index the chain.",
  );
  const indexers = watched.indexers?.() ?? new Map<number, ChainIndexer>();
  const running = gauge(
    "delegation_chain_indexer_running",
    "1 while the chain's own indexer runs (chains indexed apart; absent where one indexes every chain).",
  );
  const reindexing = gauge("delegation_chain_reindexing", "1 while the chain is indexed afresh, after its alarm.");
  const rpcFailing = gauge(
    "delegation_chain_rpc_failing_seconds",
    "How long none of the chain's RPC URLs has answered its indexer's launcher (0 while one does).",
  );
  const backfillBlocks = gauge(
    "delegation_chain_backfill_blocks",
    "Blocks of the chain's backfill done, while its own indexer backfills it (chains indexed apart).",
  );
  const backfillOf = gauge("delegation_chain_backfill_of_blocks", "Blocks the chain's backfill has to do, meanwhile.");
  for (const chain of watched.chains) {
    const indexer = indexers.get(chain.id);
    if (indexer === undefined) continue;
    const labels = { chain_id: String(chain.id) };
    running.set(labels, indexer.state === "running" || indexer.state === "reindexing" ? 1 : 0);
    reindexing.set(labels, indexer.state === "reindexing" ? 1 : 0);
    const failing = indexer.rpcFailingSince === null ? now : Date.parse(indexer.rpcFailingSince) / 1000;
    rpcFailing.set(labels, Math.max(0, Math.round(now - failing)));
    if (indexer.backfill === null) continue;
    backfillBlocks.set(labels, indexer.backfill.blocks);
    backfillOf.set(labels, indexer.backfill.ofBlocks);
  }
  for (const chain of watched.chains) {
    const position = states.get(chain.id);
    const labels = { chain_id: String(chain.id) };
    const { status, lagSeconds } = chainStatus(position, now, watched.behindAfterSeconds, alarmed.has(chain.id));
    if (position) indexed.set(labels, Number(position.indexedBlock));
    if (lagSeconds !== null) lag.set(labels, lagSeconds);
    ready.set(labels, position?.ready ? 1 : 0);
    behind.set(labels, status === "behind" ? 1 : 0);
    reorganized.set(labels, status === "reorganized" ? 1 : 0);
  }
  return registry;
}

/**
 * `GET /metrics`, in Prometheus text: `processes`, the figures of the processes serving here as
 * one text (processFigures' registry, or the cluster's sum of them), then each served chain's
 * position as this process's store holds it. 503 when the processes' figures cannot be had (a
 * worker did not report), rather than a sum that leaves one out and so looks like a counter reset.
 */
export function metricsRoute(processes: () => Promise<string>, watched: WatchedChains): Hono {
  return new Hono().get("/metrics", async (c) => {
    const figures = await processes().catch((error: Error) => error);
    if (figures instanceof Error) {
      console.error(`/metrics: ${figures.message}`);
      return c.text("cannot gather every process's figures now (the reason is logged)", 503);
    }
    const chains = await (await chainGauges(watched)).metrics();
    return c.text(`${figures}\n${chains}`, 200, { "Content-Type": Registry.PROMETHEUS_CONTENT_TYPE });
  });
}
