import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import type { ServedChain } from "../store/served-chains";
import type { ChainPosition } from "../store/store";
import { chainStatus } from "../watch/chain-status";

/** Requests answered, by route pattern and status: `"<route> <status>"` → count. */
export type RequestCounts = Record<string, number>;

/** What one API process has counted: its requests and its resident memory. */
export type ProcessFigures = { pid: number; requests: RequestCounts; rssBytes: number };

/**
 * Counts every answer into `counts` by the route that answered it (a pattern such as
 * `/registry/v2/:wallet`, so the labels stay few whatever the paths) and its status.
 */
export function countRequests(counts: RequestCounts): MiddlewareHandler {
  return async (c, next) => {
    await next();
    countAnswer(counts, routePath(c), c.res.status);
  };
}

/** Counts one answer of `route` (its pattern) with `status` into `counts`. */
export function countAnswer(counts: RequestCounts, route: string, status: number): void {
  const key = `${route} ${status}`;
  counts[key] = (counts[key] ?? 0) + 1;
}

/** Several processes' figures as one: counts and memory summed. */
export function sumFigures(all: readonly ProcessFigures[]): Omit<ProcessFigures, "pid"> {
  const requests: RequestCounts = {};
  for (const figures of all) {
    for (const [key, count] of Object.entries(figures.requests)) requests[key] = (requests[key] ?? 0) + count;
  }
  return { requests, rssBytes: all.reduce((sum, f) => sum + f.rssBytes, 0) };
}

const label = (value: string | number) => JSON.stringify(String(value));

/** Requests answered, all routes and statuses together. */
const total = (requests: RequestCounts) => Object.values(requests).reduce((sum, n) => sum + n, 0);

/**
 * The Prometheus text exposition of an API replica: its requests and memory, summed over its
 * worker processes and per process (an idle or overloaded worker shows), and each served chain's
 * position, as the chains endpoint reports it.
 */
export function metricsText(options: {
  processes: readonly ProcessFigures[];
  chains: readonly ServedChain[];
  states: ReadonlyMap<number, ChainPosition>;
  nowSeconds: number;
  behindAfterSeconds: number;
  /** The chains alarmed for a reorganization deeper than the finality depth. */
  alarmed: ReadonlySet<number>;
}): string {
  const figures = sumFigures(options.processes);
  const processes = [...options.processes].sort((a, b) => a.pid - b.pid);
  const lines = [
    "# HELP delegation_api_requests_total Requests answered, by route pattern and status.",
    "# TYPE delegation_api_requests_total counter",
    ...Object.entries(figures.requests)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([key, count]) => {
        const split = key.lastIndexOf(" ");
        const labels = `route=${label(key.slice(0, split))},status=${label(key.slice(split + 1))}`;
        return `delegation_api_requests_total{${labels}} ${count}`;
      }),
    "# HELP delegation_api_workers API worker processes whose figures are summed here.",
    "# TYPE delegation_api_workers gauge",
    `delegation_api_workers ${processes.length}`,
    "# HELP delegation_api_resident_memory_bytes Resident memory of the API worker processes, summed.",
    "# TYPE delegation_api_resident_memory_bytes gauge",
    `delegation_api_resident_memory_bytes ${figures.rssBytes}`,
    "# HELP delegation_api_process_requests_total Requests answered by each API worker process.",
    "# TYPE delegation_api_process_requests_total counter",
    ...processes.map((p) => `delegation_api_process_requests_total{pid=${label(p.pid)}} ${total(p.requests)}`),
    "# HELP delegation_api_process_resident_memory_bytes Resident memory of each API worker process.",
    "# TYPE delegation_api_process_resident_memory_bytes gauge",
    ...processes.map((p) => `delegation_api_process_resident_memory_bytes{pid=${label(p.pid)}} ${p.rssBytes}`),
  ];
  const chains = options.chains.map((chain) => {
    const position = options.states.get(chain.id);
    return {
      id: chain.id,
      position,
      ...chainStatus(position, options.nowSeconds, options.behindAfterSeconds, options.alarmed.has(chain.id)),
    };
  });
  const gauge = (name: string, help: string, value: (chain: (typeof chains)[number]) => bigint | number | null) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
    for (const chain of chains) {
      const v = value(chain);
      if (v !== null) lines.push(`${name}{chain_id=${label(chain.id)}} ${v}`);
    }
  };
  gauge(
    "delegation_chain_indexed_block",
    "The newest block indexed (absent until the chain's first position).",
    (c) => c.position?.indexedBlock ?? null,
  );
  gauge("delegation_chain_lag_seconds", "Age of the newest block indexed.", (c) => c.lagSeconds);
  gauge("delegation_chain_ready", "1 once the chain's backfill is done.", (c) => (c.position?.ready ? 1 : 0));
  gauge("delegation_chain_behind", "1 while the newest block indexed is older than BEHIND_AFTER_SECONDS.", (c) =>
    c.status === "behind" ? 1 : 0,
  );
  gauge(
    "delegation_chain_reorganized",
    "1 once a reorganization deeper than the indexer's finality depth was found: re-index the chain.",
    (c) => (c.status === "reorganized" ? 1 : 0),
  );
  return `${lines.join("\n")}\n`;
}
