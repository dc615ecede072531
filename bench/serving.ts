/**
 * The API's figures. A local chain gets empty blocks for the seeded history first; the real indexer
 * runs on it (so Ponder creates its tables, checkpoint and published chains), then its tables are
 * seeded directly — first a small database, then grown to the large one with the hot wallets — and
 * after each step a fresh `npm run serve` over them is loaded route by route, each run preceded by
 * a verified sample of its answers. Each check route runs just after a raw node:http hello run of
 * its own and just before anvil's eth_call of the same checks; at the large size, Ponder's own
 * server beside a hello run. Over the large database also: the listings of the hot wallets and
 * of small wallets (after a hello run), every check at past blocks (alone, and at 64 connections
 * after a hello run), batches of checks, listings at a past block, the vaults hot wallets may act
 * for and bulk listings of small wallets (at the head and at a past block), the whole history read
 * by following Link, history pages at random depths, and the largest wallets read in pages. Last,
 * alone on the machine, the hostile section (bench/hostile.ts) and the scale-out model's figures
 * (bench/scale.ts).
 */
import type pg from "pg";
import type { Service } from "../devkit/service";
import type { Cleanup } from "./cleanup";
import { measureDelays } from "./delay";
import { type HistoryRead, readHistory } from "./history-read";
import { type HostileFigures, measureHostile } from "./hostile";
import { afterHello, type HelloFigure, type RouteFigure, routeMeasurer, settle } from "./measure";
import type { BenchOptions } from "./options";
import { type TreeMemory, treeMemory } from "./procs";
import {
  batchRoute,
  bulkRoute,
  checkRoutes,
  ethCallRoute,
  helloRoute,
  historyRoute,
  listingPagesRoute,
  listingRoute,
  type Route,
  smallListingRoute,
  vaultsRoute,
  walletHistoryRoute,
} from "./routes";
import { measureScale, type ScaleFigures } from "./scale";
import { CHAIN_ID, type Size, seededStack, startHello, startServe } from "./stack";
import type { Verified } from "./verify";

/** What anvil's JSON-RPC requests carry. */
const JSON_BODY = { "Content-Type": "application/json" };

/** A check route's run after a hello run of its own, and anvil's eth_call of the same checks just after it. */
export type CheckFigure = HelloFigure & { route: string; ethCall: HelloFigure };

/** A run at the head, or (`past`) at past blocks. */
export type PastFigure = RouteFigure & { past: boolean };

export type ServingFigures = {
  small: { size: Size; checks: CheckFigure[]; apiMemory: TreeMemory };
  large: {
    size: Size;
    checks: CheckFigure[];
    listings: (RouteFigure & { delegations: number })[];
    /** A small wallet's whole listing, at 64 connections. */
    smallListing: HelloFigure;
  };
  /** Each check route at past blocks, alone and loaded, beside the same route at the head. */
  past: {
    checks: { head: RouteFigure; alone: RouteFigure; loaded: HelloFigure }[];
    batches: PastFigure[];
    listings: (RouteFigure & { delegations: number })[];
  };
  /** What integrators ask for, each at the head and at a past block (1 connection): vaults, bulk listings. */
  integrators: { vaults: PastFigure[]; bulk: PastFigure[] };
  /** The whole history read, history pages at random depths, the largest wallets in pages. */
  history: {
    reads: HistoryRead[];
    pages: RouteFigure[];
    walletPages: (RouteFigure & { delegations: number; pageSize: number })[];
  };
  /** The hello run the runs without one of their own are held to. */
  hello: RouteFigure;
  ponder: HelloFigure;
  verified: Verified;
  /** `npm run serve`'s process tree after the load runs, over the large database (the small one's: `small`). */
  apiMemory: TreeMemory;
  /** Milliseconds from a new delegation's block to the API's first `true`. */
  delays: number[];
  hostile: HostileFigures;
  scale: ScaleFigures;
};

/**
 * npm start's API answers from a copy of the state, synced from its checkpoint on: the rows seeded
 * behind it are loaded by starting it again, as each replica here starts after seeding. A large
 * database's copy takes a while to load, as a replica's does (startServe).
 */
async function reloadIndexer(service: Service) {
  await service.child.stop();
  await service.restart();
  await settle(service.url, service.headers, 600_000);
}

/** `--hostile`: the hostile section alone (bench/hostile.ts), over the large database as the bench seeds it. */
export async function measureHostileAlone(
  o: BenchOptions,
  cleanup: Cleanup,
  db: pg.Client,
  log: (line: string) => void,
): Promise<{ size: Size; hostile: HostileFigures; verified: Verified }> {
  return cleanup.scope(async () => {
    const { service, data, grow } = await seededStack(o, cleanup, db, log);
    await grow("small");
    const size = await grow("large");
    await reloadIndexer(service);
    const verified: Verified = { answers: 0, checks: 0, positive: 0 };
    const hostile = await measureHostile(o, cleanup, db, service, data, routeMeasurer(o, log, verified), log);
    return { size, hostile, verified };
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
    const { chain, service, data, grow } = await seededStack(o, cleanup, db, log);
    const verified: Verified = { answers: 0, checks: 0, positive: 0 };
    const measure = routeMeasurer(o, log, verified);
    const measureApi: typeof measure = async (base, ...rest) => {
      await settle(base, service.headers);
      return measure(base, ...rest);
    };

    const helloUrl = await startHello(cleanup);
    const measureAfterHello = afterHello(measure, helloUrl, measureApi);
    const checkRuns = async (serveUrl: string, routes: Route[], size: string): Promise<CheckFigure[]> => {
      const checks: CheckFigure[] = [];
      for (const route of routes) {
        const figure = await measureAfterHello(serveUrl, route, service.headers, `${route.label} (${size})`);
        // The same checks asked of the chain, held to the same hello run.
        const call = ethCallRoute(chain.registries, route);
        const ethCall = await measure(chain.anvil.url, call, JSON_BODY, `${call.label} (${size})`);
        checks.push({ ...figure, route: route.label, ethCall: { ...ethCall, hello: figure.hello } });
      }
      return checks;
    };

    // A fresh API process after each step: whatever it keeps in memory starts from the seeded state.
    const serveTag = `serve-${process.pid}-${Date.now()}`;
    const small = await cleanup.scope(async () => {
      const size = await grow("small");
      const serve = await startServe(cleanup, service, `${serveTag}-small`);
      const checks = await checkRuns(serve.url, checkRoutes(data, o.seed + 1), "small");
      return { size, checks, apiMemory: treeMemory(`${serveTag}-small`) };
    });

    const size = await grow("large");
    await reloadIndexer(service);
    const serve = await startServe(cleanup, service, serveTag);
    const routes = checkRoutes(data, o.seed + 2);
    const v2All = routes.find((r) => r.label === "v2 check all")!;

    const hello = await measure(helloUrl, helloRoute, {});
    // Just after that hello run: it is this one's own.
    const ponder = {
      ...(await measureApi(
        service.url,
        v2All,
        service.headers,
        "(c) npm start's API on Postgres (no replicas), v2 check all",
      )),
      hello: hello.result,
    };
    const checks = await checkRuns(serve.url, routes, "large");
    // Listings at 64 connections mostly queue (p50 ≈ 64 / throughput): their latency is also taken
    // alone, first, before a 64-connection run can leave the server a backlog.
    const [fewest, most] = [Math.min(...o.hot), Math.max(...o.hot)];
    const alone = (route: Route, headers = service.headers, durationS = o.durationS) =>
      measureApi(serve.url, route, headers, `${route.label}, 1 connection`, 1, durationS);
    const listings: ServingFigures["large"]["listings"] = [];
    for (const connections of [1, o.connections]) {
      for (const version of ["v2", "v1"] as const) {
        for (const delegations of [...new Set([fewest, most])]) {
          const route = listingRoute(data, version, delegations);
          const figure = connections === 1 ? await alone(route) : await measureApi(serve.url, route, service.headers);
          listings.push({ delegations, ...figure });
        }
      }
    }
    const smallListing = await measureAfterHello(serve.url, smallListingRoute(data), service.headers);

    // The same checks, each at a random past block; batches; listings at a past block.
    const past: ServingFigures["past"] = { checks: [], batches: [], listings: [] };
    for (const [i, route] of checkRoutes(data, o.seed + 5, true).entries()) {
      past.checks.push({
        head: checks[i]!,
        alone: await alone(route),
        loaded: await measureAfterHello(serve.url, route, service.headers),
      });
    }
    const json = { ...service.headers, "Content-Type": "application/json" };
    for (const pastBlock of [false, true]) {
      for (const version of ["v2", "v1"] as const) {
        const route = batchRoute(data, version, { size: o.batchSize, count: o.batches, past: pastBlock }, o.seed + 6);
        // Batches take up to seconds each: their runs are longer, for enough answers.
        past.batches.push({ past: pastBlock, ...(await alone(route, json, o.batchDurationS)) });
      }
    }
    for (const version of ["v2", "v1"] as const)
      past.listings.push({ delegations: fewest, ...(await alone(listingRoute(data, version, fewest, true))) });

    const integrators: ServingFigures["integrators"] = { vaults: [], bulk: [] };
    for (const atPast of [false, true]) {
      for (const kind of ["all", "erc20"] as const)
        integrators.vaults.push({ past: atPast, ...(await alone(vaultsRoute(data, kind, atPast, o.seed + 8))) });
      const route = bulkRoute(data, { size: o.bulkSize, count: o.bulkLists, past: atPast }, o.seed + 9);
      // Like batches, a bulk listing may take up to a second: a longer run, for enough answers.
      integrators.bulk.push({ past: atPast, ...(await alone(route, json, o.batchDurationS)) });
    }

    // The whole history by following Link; pages of it at random depths; the largest wallets in pages.
    const history: ServingFigures["history"] = { reads: [], pages: [], walletPages: [] };
    for (const version of ["v2", "v1"] as const) {
      await settle(serve.url, service.headers);
      const read = await readHistory(serve.url, version, data, o.readPage, service.headers);
      log(
        `${read.label}: ${read.events.toLocaleString("en")} events in ${read.pages} pages, ` +
          `${Math.round(read.events / (read.ms / 1000)).toLocaleString("en")} events/s, page p50 ` +
          `${read.pageP50.toFixed(1)} ms (every page verified)`,
      );
      history.reads.push(read);
    }
    for (const version of ["v2", "v1"] as const) {
      history.pages.push(await alone(historyRoute(data, version, o.historyPage)));
      history.pages.push(await alone(walletHistoryRoute(data, version, o.historyPage, o.seed + 7)));
    }
    for (const version of ["v2", "v1"] as const) {
      const route = listingPagesRoute(data, version, most, o.listingPage);
      for (const figure of [await alone(route), await measureApi(serve.url, route, service.headers)])
        history.walletPages.push({ delegations: most, pageSize: o.listingPage, ...figure });
    }
    const apiMemory = treeMemory(serveTag);

    await settle(serve.url, service.headers);
    const delays = await measureDelays({
      rpcUrl: chain.anvil.url,
      registry: chain.registries.v2,
      apiUrl: serve.url,
      headers: service.headers,
      chainId: CHAIN_ID,
      samples: o.delaySamples,
      seed: o.seed + 3,
    });
    log(`new delegations answered ${delays.map((d) => `${d} ms`).join(", ")} after their blocks were mined`);
    // The hostile section has the machine alone: this replica goes first.
    await serve.stop();
    const hostile = await measureHostile(o, cleanup, db, service, data, measure, log);
    const scale = await measureScale(o, cleanup, db, service, data, log);
    return {
      small,
      large: { size, checks, listings, smallListing },
      past,
      integrators,
      history,
      hello,
      ponder,
      verified,
      apiMemory,
      delays,
      hostile,
      scale,
    };
  });
}
