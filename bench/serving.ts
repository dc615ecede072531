/**
 * The API's figures. A local chain gets empty blocks for the seeded history first; the real indexer
 * runs on it (so Ponder creates its tables, checkpoint and published chains), then its tables are
 * seeded directly — first a small database, then grown to the large one with the hot wallets — and
 * after each step a fresh `npm run serve` over them is loaded route by route, each run preceded by
 * a verified sample of its answers. Each check route runs just after a raw node:http hello run of
 * its own and just before anvil's eth_call of the same checks (at the large size, the three runs
 * again driven by wrk: bench/wrk.ts); at the large size, Ponder's own server beside a hello run.
 * Over the large database also (largeRoutes): the listings of the hot wallets and of small wallets
 * (after a hello run), every check at past blocks (alone, and at 64 connections after a hello run),
 * v2 check all at the same blocks' moments (`timestamp`), batches of checks (alone, and v2's at the
 * head at 8 connections), listings at a past block, the vaults hot wallets may act for and bulk
 * listings of small wallets (at the head and at a past block), an airdrop's snapshot of checks
 * through the typed client (bench/airdrop.ts), the whole history read by following
 * Link, history pages at random depths, and the largest wallets read in pages. Last, alone on the
 * machine, the hostile section and the scale-out model's figures (bench/hostile.ts).
 */
import type pg from "pg";
import type { Service } from "../devkit/service";
import { type AirdropFigure, measureAirdrop } from "./airdrop";
import type { Cleanup } from "./cleanup";
import type { Dataset } from "./dataset";
import { type Delays, measureDelays } from "./delay";
import { type HistoryRead, readHistory } from "./history-read";
import { type HostileFigures, measureHostile, measureScale, type ScaleFigures } from "./hostile";
import { afterHello, type HelloFigure, type RouteFigure, type RouteMeasurer, routeMeasurer, settle } from "./measure";
import type { BenchOptions } from "./options";
import { type TreeMemory, treeMemory } from "./procs";
import * as r from "./routes";
import { CHAIN_ID, type Chain, type Size, seededStack, startHello, startServe } from "./stack";
import type { Verified } from "./verify";
import { runWrk } from "./wrk";

/**
 * A check route's run after a hello run of its own, and anvil's eth_call of the same checks just
 * after it; at the large size, the same three runs driven by wrk (bench/wrk.ts) too.
 */
export type CheckFigure = HelloFigure & {
  route: string;
  ethCall: HelloFigure;
  wrk?: { route: HelloFigure; ethCall: HelloFigure };
};

/** A run at the head, or (`past`) at past blocks. */
export type PastFigure = RouteFigure & { past: boolean };

/** A listing's run, of a hot wallet of `delegations`. */
export type ListingFigure = RouteFigure & { delegations: number };

export type ServingFigures = {
  small: { size: Size; checks: CheckFigure[]; apiMemory: TreeMemory };
  large: {
    size: Size;
    checks: CheckFigure[];
    listings: ListingFigure[];
    /** A small wallet's whole listing, at 64 connections. */
    smallListing: HelloFigure;
  };
  /** Each check route at past blocks, alone and loaded, beside the same route at the head. */
  past: {
    checks: { head: RouteFigure; alone: RouteFigure; loaded: HelloFigure }[];
    batches: PastFigure[];
    /** v2 batches at the head at 8 connections: checks per second through batches. */
    batchLoad: RouteFigure;
    listings: ListingFigure[];
  };
  /** v2 check all at past blocks by `timestamp` (after a hello run), and the same queries by `blockNumber`. */
  moment: { atMoment: HelloFigure; atBlock: HelloFigure };
  /** What integrators ask for, each at the head and at a past block (1 connection): vaults, bulk listings. */
  integrators: { vaults: PastFigure[]; bulk: PastFigure[] };
  /** A snapshot's checks through the typed client's checkMany (bench/airdrop.ts). */
  airdrop: AirdropFigure;
  /** The whole history read, history pages at random depths, the largest wallets in pages. */
  history: { reads: HistoryRead[]; pages: RouteFigure[]; walletPages: ListingFigure[] };
  /** The hello run the runs without one of their own are held to. */
  hello: RouteFigure;
  ponder: HelloFigure;
  verified: Verified;
  /** `npm run serve`'s process tree after the load runs, over the large database (the small one's: `small`). */
  apiMemory: TreeMemory;
  /** Milliseconds from a new delegation's block to npm run serve's first `true` (the feed's: bench/standby.ts). */
  delays: Pick<Delays, "answered">;
  hostile: HostileFigures;
  scale: ScaleFigures;
};

const VERSIONS = ["v2", "v1"] as const;
/** The check route asked at moments as well as at blocks. */
const [PAST_ROUTE, MOMENT_ROUTE] = ["v2 check all at a past block", "v2 check all at a past moment"];

/** What anvil's JSON-RPC requests carry. */
const JSON_BODY = { "Content-Type": "application/json" };
const HEAD_AND_PAST = [false, true];
/** Connections of the batches' throughput run: a client sending a snapshot's checks a few batches at once. */
const BATCH_CONNECTIONS = 8;

/** The routes measured over the large database but its check routes at the head (see the module's head). */
export function largeRoutes(o: BenchOptions, data: Dataset) {
  const [fewest, most] = [Math.min(...o.hot), Math.max(...o.hot)];
  const batch = { size: o.batchSize, count: o.batches };
  const bulk = { size: o.bulkSize, count: o.bulkLists };
  return {
    listings: VERSIONS.flatMap((v) => [...new Set([fewest, most])].map((size) => r.listingRoute(data, v, size))),
    smallListing: r.smallListingRoute(data),
    pastChecks: r.checkRoutes(data, o.seed + 5, "block"),
    // The same queries at the same blocks as pastChecks' v2 check all, each asked by its timestamp.
    momentCheck: r.checkRoutes(data, o.seed + 5, "moment").find((route) => route.label === MOMENT_ROUTE)!,
    batches: HEAD_AND_PAST.flatMap((past) =>
      VERSIONS.map((v) => r.batchRoute(data, v, { ...batch, past }, o.seed + 6)),
    ),
    pastListings: VERSIONS.map((v) => r.listingRoute(data, v, fewest, true)),
    vaults: HEAD_AND_PAST.flatMap((past) =>
      (["all", "erc20"] as const).map((k) => r.vaultsRoute(data, k, past, o.seed + 8)),
    ),
    bulk: HEAD_AND_PAST.map((past) => r.bulkRoute(data, { ...bulk, past }, o.seed + 9)),
    history: VERSIONS.flatMap((v) => [
      r.historyRoute(data, v, o.historyPage),
      r.walletHistoryRoute(data, v, o.historyPage, o.seed + 7),
    ]),
    walletPages: VERSIONS.map((v) => r.listingPagesRoute(data, v, most, o.listingPage)),
  };
}

/** `measure` of an API once it answers promptly again (a run before may have left it a backlog). */
const settledFirst =
  (measure: RouteMeasurer, service: Pick<Service, "headers">): RouteMeasurer =>
  async (base, ...rest) => {
    await settle(base, service.headers);
    return measure(base, ...rest);
  };

/**
 * Runs each check route after a hello run of its own, then anvil's eth_call of the same checks held
 * to that hello run; at the large size the three runs again, driven by wrk: a figure beside the
 * node's that holds whichever load generator drives both.
 */
function checkRunner(
  o: BenchOptions,
  log: (line: string) => void,
  verified: Verified,
  chain: Chain,
  service: Service,
  helloUrl: string,
  measure: RouteMeasurer,
) {
  const measureWrk = routeMeasurer(o, log, verified, runWrk);
  const drivers = {
    autocannon: { afterItsHello: afterHello(measure, helloUrl, settledFirst(measure, service)), measureCall: measure },
    wrk: {
      afterItsHello: afterHello(measureWrk, helloUrl, settledFirst(measureWrk, service)),
      measureCall: measureWrk,
    },
  };
  const withEthCall = async (serveUrl: string, route: r.Route, label: string, driver: keyof typeof drivers) => {
    const { afterItsHello, measureCall } = drivers[driver];
    const figure = await afterItsHello(serveUrl, route, service.headers, `${route.label} (${label})`);
    const call = r.ethCallRoute(chain.registries, route);
    const ethCall = await measureCall(chain.anvil.url, call, JSON_BODY, `${call.label} (${label})`);
    return { figure, ethCall: { ...ethCall, hello: figure.hello } };
  };
  return async (serveUrl: string, routes: r.Route[], size: string): Promise<CheckFigure[]> => {
    const checks: CheckFigure[] = [];
    for (const route of routes) {
      const { figure, ethCall } = await withEthCall(serveUrl, route, size, "autocannon");
      const wrk = size === "large" ? await withEthCall(serveUrl, route, `${size}, wrk`, "wrk") : undefined;
      checks.push({
        ...figure,
        route: route.label,
        ethCall,
        ...(wrk ? { wrk: { route: wrk.figure, ethCall: wrk.ethCall } } : {}),
      });
    }
    return checks;
  };
}

/** The whole history read by each version (each after the API answers promptly again); pages to come. */
async function historyRuns(
  url: string,
  headers: Record<string, string>,
  read: (version: (typeof VERSIONS)[number]) => Promise<HistoryRead>,
): Promise<ServingFigures["history"]> {
  const history: ServingFigures["history"] = { reads: [], pages: [], walletPages: [] };
  for (const version of VERSIONS) {
    await settle(url, headers);
    history.reads.push(await read(version));
  }
  return history;
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
    const measureApi = settledFirst(measure, service);
    const helloUrl = await startHello(cleanup);
    const measureAfterHello = afterHello(measure, helloUrl, measureApi);
    const checkRuns = checkRunner(o, log, verified, chain, service, helloUrl, measure);

    // A fresh API process after each step: whatever it keeps in memory starts from the seeded state.
    const serveTag = `serve-${process.pid}-${Date.now()}`;
    const small = await cleanup.scope(async () => {
      const size = await grow("small");
      const serve = await startServe(cleanup, service, `${serveTag}-small`);
      const checks = await checkRuns(serve.url, r.checkRoutes(data, o.seed + 1), "small");
      return { size, checks, apiMemory: treeMemory(`${serveTag}-small`) };
    });

    const size = await grow("large");
    // npm start's API answers from a copy of the state, synced from its checkpoint on: the rows seeded
    // behind it are loaded by starting it again, as each replica here starts after seeding.
    await service.child.stop();
    await service.restart();
    await settle(service.url, service.headers, 600_000);
    // Given the chain's RPC, as a deployment's replicas are: where it reads a moment's headers.
    const serve = await startServe(cleanup, service, serveTag, { [`PONDER_RPC_URL_${CHAIN_ID}`]: chain.anvil.url });
    const routes = r.checkRoutes(data, o.seed + 2);
    const hello = await measure(helloUrl, r.helloRoute, {});
    // Just after that hello run: it is this one's own.
    const label = "(c) npm start's API on Postgres (no replicas), v2 check all";
    const v2All = routes.find((route) => route.label === "v2 check all")!;
    const ponder = { ...(await measureApi(service.url, v2All, service.headers, label)), hello: hello.result };
    const checks = await checkRuns(serve.url, routes, "large");
    const large = largeRoutes(o, data);
    const json = { ...service.headers, "Content-Type": "application/json" };
    const loaded = (route: r.Route) => measureApi(serve.url, route, service.headers);
    // Batches and bulk listings take up to seconds each: their runs are longer, for enough answers.
    const alone = (route: r.Route, headers = service.headers, durationS = o.durationS) =>
      measureApi(serve.url, route, headers, `${route.label}, 1 connection`, 1, durationS);
    const atPast = async (route: r.Route, headers?: Record<string, string>, durationS?: number) => ({
      past: route.label.includes(" at a past block"),
      ...(await alone(route, headers, durationS)),
    });

    // Listings at 64 connections mostly queue (p50 ≈ 64 / throughput): their latency is also taken
    // alone, first, before a 64-connection run can leave the server a backlog.
    const listings: ListingFigure[] = [];
    for (const measureListing of [alone, loaded])
      for (const route of large.listings) listings.push({ delegations: route.size!, ...(await measureListing(route)) });
    const smallListing = await measureAfterHello(serve.url, large.smallListing, service.headers);

    const past: Omit<ServingFigures["past"], "batchLoad"> = { checks: [], batches: [], listings: [] };
    for (const [i, route] of large.pastChecks.entries()) {
      const [alonePast, loadedPast] = [await alone(route), await measureAfterHello(serve.url, route, service.headers)];
      past.checks.push({ head: checks[i]!, alone: alonePast, loaded: loadedPast });
    }
    const atBlock = past.checks[large.pastChecks.findIndex((route) => route.label === PAST_ROUTE)]!.loaded;
    const moment = { atMoment: await measureAfterHello(serve.url, large.momentCheck, service.headers), atBlock };
    for (const route of large.batches) past.batches.push(await atPast(route, json, o.batchDurationS));
    // The first of largeRoutes' batches: v2's at the head.
    const [headBatch, many] = [large.batches[0]!, BATCH_CONNECTIONS];
    const batchLoad = await measureApi(
      serve.url,
      headBatch,
      json,
      `${headBatch.label}, ${many} connections`,
      many,
      o.batchDurationS,
    );
    for (const route of large.pastListings) past.listings.push({ delegations: route.size!, ...(await alone(route)) });
    const integrators: ServingFigures["integrators"] = { vaults: [], bulk: [] };
    for (const route of large.vaults) integrators.vaults.push(await atPast(route));
    for (const route of large.bulk) integrators.bulk.push(await atPast(route, json, o.batchDurationS));
    await settle(serve.url, service.headers);
    const airdrop = await measureAirdrop(o, data, { url: serve.url, headers: service.headers }, o.seed + 12, log);

    const history = await historyRuns(serve.url, service.headers, (version) =>
      readHistory(serve.url, version, data, o.readPage, service.headers, log),
    );
    for (const route of large.history) history.pages.push(await alone(route));
    for (const route of large.walletPages)
      for (const figure of [await alone(route), await loaded(route)])
        history.walletPages.push({ delegations: route.size!, ...figure });
    const apiMemory = treeMemory(serveTag);

    await settle(serve.url, service.headers);
    const delays = await measureDelays(chain, serve.url, service.headers, o.delaySamples, o.seed + 3);
    log(`new delegations answered ${delays.answered.map((d) => `${d} ms`).join(", ")} after their blocks were mined`);
    // The hostile section has the machine alone: this replica goes first.
    await serve.stop();
    const hostile = await measureHostile(o, cleanup, db, service, data, measure, log);
    const scale = await measureScale(o, cleanup, db, service, data, log);
    const largeFigures = { size, checks, listings, smallListing };
    return {
      small,
      large: largeFigures,
      past: { ...past, batchLoad },
      moment,
      integrators,
      airdrop,
      history,
      hello,
      ponder,
      verified,
      apiMemory,
      delays: { answered: delays.answered },
      hostile,
      scale,
    };
  });
}
