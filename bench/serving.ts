/**
 * The API's figures. The real indexer runs on a fresh chain (so Ponder creates its tables,
 * checkpoint and published chains), then its tables are seeded directly — first a small database,
 * then grown to the large one with the hot wallets — and after each step a fresh `npm run serve`
 * over them is loaded route by route, each run preceded by a verified sample of its answers.
 * Beside them: the raw node:http hello, anvil's eth_call and Ponder's own server, at the large size.
 */
import type pg from "pg";
import { waitFor } from "../devkit/processes";
import { ADDRESS_1 } from "../devkit/v2/generate";
import type { Cleanup } from "./cleanup";
import { Dataset } from "./dataset";
import { measureDelays } from "./delay";
import { type LoadResult, runLoad } from "./load";
import type { BenchOptions } from "./options";
import { type TreeMemory, treeMemory } from "./procs";
import { checkRoutes, ethCallRoute, helloRoute, listingRoute, type Route } from "./routes";
import { CHAIN_ID, growDataset, startChain, startHello, startIndexer, startServe } from "./stack";
import { type Verified, verifyRoute } from "./verify";

export type RouteFigure = { label: string; result: LoadResult };
export type Size = { v2: number; v1: number; wallets: number; seedMs: number };

export type ServingFigures = {
  small: { size: Size; checks: RouteFigure[] };
  large: {
    size: Size;
    checks: RouteFigure[];
    listings: (RouteFigure & { delegations: number; connections: number })[];
  };
  hello: RouteFigure;
  ethCall: RouteFigure;
  ponder: RouteFigure;
  verified: Verified;
  /** `npm run serve`'s process tree after the load runs, over the large database. */
  apiMemory: TreeMemory;
  /** Milliseconds from a new delegation's block to the API's first `true`. */
  delays: number[];
};

/** A check answered without reading any delegation (`from` 0x1 never delegates). */
const PROBE = `/registry/v2/check/all?chainId=${CHAIN_ID}&to=${ADDRESS_1}&from=${ADDRESS_1}`;

/** Waits until an API answers promptly again: requests of a run that timed out may still be in its queue. */
async function settle(base: string, headers: Record<string, string>) {
  let prompt = 0;
  await waitFor("the API to answer promptly again", async () => {
    const started = Date.now();
    const res = await fetch(base + PROBE, { headers });
    await res.text();
    prompt = res.ok && Date.now() - started < 100 ? prompt + 1 : 0;
    return prompt >= 3 ? true : undefined;
  });
}

/** The API's figures (see the module's head). */
export async function measureServing(
  o: BenchOptions,
  cleanup: Cleanup,
  db: pg.Client,
  log: (line: string) => void,
): Promise<ServingFigures> {
  return cleanup.scope(async () => {
    const chain = await startChain(cleanup);
    const service = await startIndexer(cleanup, chain);
    log(`indexer ready on a fresh chain (schema ${service.schema})`);
    const data = new Dataset(o.seed, {
      chainId: CHAIN_ID,
      wallets: o.wallets,
      samplesPerRoute: Math.round(o.urlsPerRoute * 0.75),
    });
    const verified: Verified = { answers: 0, checks: 0, positive: 0 };

    const measure = async (
      base: string,
      route: Route,
      headers: Record<string, string>,
      label = route.label,
      connections = o.connections,
    ): Promise<RouteFigure> => {
      const v = await verifyRoute(base, route, o.verifySample, headers);
      verified.answers += v.answers;
      verified.checks += v.checks;
      verified.positive += v.positive;
      const result = await runLoad(label, {
        url: base,
        connections,
        durationS: o.durationS,
        warmupS: o.warmupS,
        headers,
        requests: route.requests,
      });
      const failed =
        result.non2xx + result.errors > 0
          ? `; FAILED: ${JSON.stringify(result.statuses)}, ${result.errors} errors`
          : "";
      log(
        `${label}: ${Math.round(result.rps)} req/s, p50 ${result.p50?.toFixed(2)} ms, p99 ${result.p99?.toFixed(2)} ` +
          `ms (${v.answers} sampled answer${v.answers === 1 ? "" : "s"} verified first${failed})`,
      );
      return { label, result };
    };
    const measureApi: typeof measure = async (base, ...rest) => {
      await settle(base, service.headers);
      return measure(base, ...rest);
    };

    const grow = async (total: number, hot: readonly number[]): Promise<Size> => {
      const { rows, ms } = await growDataset(
        db,
        service,
        data,
        { v2: total - Math.round(total * o.v1Share), v1: Math.round(total * o.v1Share) },
        hot,
      );
      const counts = data.counts;
      log(
        `seeded ${rows.toLocaleString("en")} delegations in ${(ms / 1000).toFixed(1)} s: now ` +
          `${counts.v2.toLocaleString("en")} v2 and ${counts.v1.toLocaleString("en")} v1 over ` +
          `${counts.wallets.toLocaleString("en")} wallets`,
      );
      return { ...counts, seedMs: ms };
    };

    // A fresh API process after each step: whatever it keeps in memory starts from the seeded state.
    const serveTag = `serve-${process.pid}-${Date.now()}`;
    const small = await cleanup.scope(async () => {
      const size = await grow(o.small, []);
      const serve = await startServe(cleanup, service, `${serveTag}-small`);
      const checks: RouteFigure[] = [];
      for (const route of checkRoutes(data, o.seed + 1))
        checks.push(await measureApi(serve.url, route, service.headers, `${route.label} (small)`));
      return { size, checks };
    });

    const size = await grow(o.large - o.small, o.hot);
    const serve = await startServe(cleanup, service, serveTag);
    const routes = checkRoutes(data, o.seed + 2);
    const v2All = routes.find((r) => r.label === "v2 check all")!;

    const helloUrl = await startHello(cleanup);
    const hello = await measure(helloUrl, helloRoute, {});
    const ethCall = await measure(chain.anvil.url, ethCallRoute(chain.registry, v2All), {
      "Content-Type": "application/json",
    });
    const ponder = await measureApi(service.url, v2All, service.headers, "(c) Ponder's built-in server, v2 check all");
    const checks: RouteFigure[] = [];
    for (const route of routes) checks.push(await measureApi(serve.url, route, service.headers));
    // Listings at 64 connections mostly queue (p50 ≈ 64 / throughput): their latency is also taken
    // alone, first, before a 64-connection run can leave the server a backlog.
    const listings: ServingFigures["large"]["listings"] = [];
    for (const connections of [1, o.connections]) {
      for (const version of ["v2", "v1"] as const) {
        for (const delegations of [...new Set([Math.min(...o.hot), Math.max(...o.hot)])]) {
          const route = listingRoute(data, version, delegations);
          const label = connections === o.connections ? route.label : `${route.label}, 1 connection`;
          listings.push({
            delegations,
            connections,
            ...(await measureApi(serve.url, route, service.headers, label, connections)),
          });
        }
      }
    }
    const apiMemory = treeMemory(serveTag);

    await settle(serve.url, service.headers);
    const delays = await measureDelays({
      rpcUrl: chain.anvil.url,
      registry: chain.registry,
      apiUrl: serve.url,
      headers: service.headers,
      chainId: CHAIN_ID,
      samples: o.delaySamples,
      seed: o.seed + 3,
    });
    log(`new delegations answered ${delays.map((d) => `${d} ms`).join(", ")} after their blocks were mined`);
    return { small, large: { size, checks, listings }, hello, ethCall, ponder, verified, apiMemory, delays };
  });
}
