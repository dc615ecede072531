/**
 * How every run of the bench measures a route: a verified sample of its answers (bench/verify.ts),
 * then the load, logged; and, before a run, waiting for an API that a run overloaded to answer
 * promptly again.
 */
import { waitFor } from "../devkit/processes";
import { ADDRESS_1 } from "../devkit/v2/generate";
import { type LoadResult, runLoad } from "./load";
import type { BenchOptions } from "./options";
import type { Route } from "./routes";
import { CHAIN_ID } from "./stack";
import { type Verified, verifyRoute } from "./verify";

export type RouteFigure = { label: string; result: LoadResult; connections: number };

/** A check answered without reading any delegation (`from` 0x1 never delegates). */
const PROBE = `/registry/v2/check/all?chainId=${CHAIN_ID}&to=${ADDRESS_1}&from=${ADDRESS_1}`;

/** Waits until an API answers promptly again: requests of a run that timed out may still be in its queue. */
export async function settle(base: string, headers: Record<string, string>) {
  let prompt = 0;
  await waitFor("the API to answer promptly again", async () => {
    const started = Date.now();
    const res = await fetch(base + PROBE, { headers });
    await res.text();
    prompt = res.ok && Date.now() - started < 100 ? prompt + 1 : 0;
    return prompt >= 3 ? true : undefined;
  });
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
 * `verified`), then the load, logged.
 */
export function routeMeasurer(o: BenchOptions, log: (line: string) => void, verified: Verified): RouteMeasurer {
  return async (base, route, headers, label = route.label, connections = o.connections, durationS = o.durationS) => {
    const v = await verifyRoute(base, route, o.verifySample, headers);
    verified.answers += v.answers;
    verified.checks += v.checks;
    verified.positive += v.positive;
    const result = await runLoad(label, {
      url: base,
      connections,
      durationS,
      warmupS: o.warmupS,
      headers,
      requests: route.requests,
      // A batch at a past block may take seconds: answered late is a figure, not a failure.
      timeoutS: 60,
    });
    const failed =
      result.non2xx + result.errors > 0 ? `; FAILED: ${JSON.stringify(result.statuses)}, ${result.errors} errors` : "";
    log(
      `${label}: ${Math.round(result.rps)} req/s, p50 ${result.p50?.toFixed(2)} ms, p99 ${result.p99?.toFixed(2)} ` +
        `ms (${v.answers} sampled answer${v.answers === 1 ? "" : "s"} verified first${failed})`,
    );
    return { label, result, connections };
  };
}
