/**
 * How every run of the bench measures a route: a verified sample of its answers (bench/verify.ts),
 * then the load, logged, with the number of different requests it cycled through; a run may follow
 * a hello run of its own; and, before a run, waiting for an API that a run overloaded to answer
 * promptly again.
 */
import { waitFor } from "../devkit/processes";
import { ADDRESS_1 } from "../devkit/v2/generate";
import { type LoadResult, runLoad } from "./load";
import type { BenchOptions } from "./options";
import { distinctRequests, helloRoute, type Route } from "./routes";
import { CHAIN_ID } from "./stack";
import { type Verified, verifyRoute } from "./verify";

export type RouteFigure = {
  label: string;
  result: LoadResult;
  connections: number;
  /** Different requests the run drew from. */
  queries: number;
  /**
   * The hello run just before it, where it has one: the machine's speed drifts over minutes (hello
   * itself from 8,569 to 13,942 req/s within three minutes, seen here), so a run is held to its own.
   */
  hello?: LoadResult;
};

export type HelloFigure = RouteFigure & { hello: LoadResult };

/** A check answered without reading any delegation (`from` 0x1 never delegates). */
const PROBE = `/registry/v2/check/all?chainId=${CHAIN_ID}&to=${ADDRESS_1}&from=${ADDRESS_1}`;

/**
 * Waits until an API answers promptly again: requests of a run that timed out may still be in its
 * queue (or, given `timeoutMs`, it may still be loading its copy of the state: 503 until then).
 */
export async function settle(base: string, headers: Record<string, string>, timeoutMs?: number) {
  let prompt = 0;
  await waitFor(
    "the API to answer promptly again",
    async () => {
      const started = Date.now();
      const res = await fetch(base + PROBE, { headers });
      await res.text();
      prompt = res.ok && Date.now() - started < 100 ? prompt + 1 : 0;
      return prompt >= 3 ? true : undefined;
    },
    timeoutMs,
  );
}

export type RouteMeasurer = (
  base: string,
  route: Route,
  headers: Record<string, string>,
  label?: string,
  connections?: number,
  durationS?: number,
) => Promise<RouteFigure>;

/**
 * How every run of the bench measures a route: a verified sample of its answers first (counted in
 * `verified`), then the load (autocannon's, or `load`'s: bench/wrk.ts), logged.
 */
export function routeMeasurer(
  o: BenchOptions,
  log: (line: string) => void,
  verified: Verified,
  load: typeof runLoad = runLoad,
): RouteMeasurer {
  return async (base, route, headers, label = route.label, connections = o.connections, durationS = o.durationS) => {
    const v = await verifyRoute(base, route, o.verifySample, headers);
    verified.answers += v.answers;
    verified.checks += v.checks;
    verified.positive += v.positive;
    const result = await load(label, {
      url: base,
      connections,
      durationS,
      warmupS: o.warmupS,
      headers,
      requests: route.requests,
      // A batch at a past block may take seconds: answered late is a figure, not a failure.
      timeoutS: 60,
      // Every row has a latency, every page of a listing its own, however busy the machine.
      untilAnsweredS: 30,
    });
    const failed =
      result.non2xx + result.errors > 0 ? `; FAILED: ${JSON.stringify(result.statuses)}, ${result.errors} errors` : "";
    log(
      `${label}: ${Math.round(result.rps)} req/s, p50 ${result.p50?.toFixed(2)} ms, p99 ${result.p99?.toFixed(2)} ` +
        `ms (${v.answers} sampled answer${v.answers === 1 ? "" : "s"} verified first${failed})`,
    );
    return { label, result, connections, queries: distinctRequests(route.requests) };
  };
}

/**
 * `run`, each of its runs just after a hello run of its own (the raw node:http hello at `helloUrl`,
 * at as many connections, measured by `measure`).
 */
export function afterHello(
  measure: RouteMeasurer,
  helloUrl: string,
  run: RouteMeasurer = measure,
): (...args: Parameters<RouteMeasurer>) => Promise<HelloFigure> {
  return async (base, route, headers, label = route.label, connections, durationS) => {
    const hello = await measure(helloUrl, helloRoute, {}, `(a) hello, just before ${label}`, connections, durationS);
    return { ...(await run(base, route, headers, label, connections, durationS)), hello: hello.result };
  };
}
