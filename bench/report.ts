/**
 * The figures of one run as a table: every throughput beside the raw node:http hello's of the same
 * run (of the hello run just before it, where it has one), then TARGETS, each met or missed. A run
 * in which the server failed (answers other than 2xx, timeouts) is flagged with what failed; its
 * figures are those of its 2xx answers.
 */
import type { AcrossFigures } from "./across";
import type { AirdropFigure } from "./airdrop";
import type { BackfillFigures, IndexerFigures, PgliteStartFigures } from "./backfill";
import type { BacklogFigures } from "./backlog";
import type { HistoryRead } from "./history-read";
import {
  beyondIdle,
  type HostileFigures,
  type ScaleFigures,
  type ScaleRun,
  type SpanCpu,
  wholeService,
} from "./hostile";
import type { LoadResult } from "./load";
import type { RouteFigure } from "./measure";
import type { BenchOptions } from "./options";
import { MIN_QUERIES } from "./routes";
import type { RpcFigures } from "./rpc";
import type { CheckFigure, ServingFigures } from "./serving";
import { BULK_SIZES, type Size } from "./stack";
import type { StandbyFigures } from "./standby";
import type { SubscriberFigures } from "./subscribers";
import { BLOCK_TIME_S, POLL_MS, quantile, type WholeTableFigures } from "./whole-table";

const int = (n: number) => Math.round(n).toLocaleString("en");
const ms = (n: number | undefined) => (n === undefined ? "—" : n >= 100 ? int(n) : n.toPrecision(3));
const ratio = (n: number) => (n >= 100 ? int(n) : n.toPrecision(2));
/** A share in percent; under 1%, two digits rather than a 0 that would read as none at all. */
const pct = (n: number) => (n !== 0 && Math.abs(n) < 0.01 ? `${(100 * n).toPrecision(2)}%` : `${int(100 * n)}%`);
/** A CPU share; "<1" rather than a 0 that would read as none at all. */
const cpu = (n: number) => (n < 0.5 ? "<1" : int(n));
const seconds = (n: number) => `${(n / 1000).toFixed(1)} s`;
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
/** The margin a check route's p99 may exceed its hello run's p99 by. */
const TAIL_MS = 5;
/** What npm start's checks may add to its hello run's p99 while blocks arrive, in ms. */
const START_TAIL_MS = 20;

/** What a target's figure and bound are counted in, and how each is written. */
const UNITS = {
  share: pct,
  "×": (v: number) => `${ratio(v)}×`,
  ms: (v: number) => `${ms(v)} ms`,
  MB: (v: number) => `${int(v)} MB`,
  "events/s": (v: number) => `${int(v)} events/s`,
  "entries/s": (v: number) => `${int(v)} entries/s`,
  "checks/s": (v: number) => `${int(v)} checks/s`,
  queries: (v: number) => `${int(v)} different queries`,
  "of one core": (v: number) => `${cpu(100 * v)}% of one core`,
};

/** A figure a target reads: the run (or the worst of several) it comes from, and its value. */
type Figure = { label: string; value: number; failed?: boolean };
type FigureName = keyof ReturnType<typeof targetFigures>;
/** A target: its name, the figure it reads, at least `min` or at most `max` of it, in `unit`. */
type Target = { name: string; reads: FigureName; unit: keyof typeof UNITS } & ({ min: number } | { max: number });

/**
 * Every target of the bench, by what it measures. Latencies are taken alone (1 connection): at 64
 * connections a p50 is mostly the queue before it (p50 ≈ 64 / throughput). A share of hello is of
 * the hello run just before the run (serving.ts, CheckFigure): the machine's speed drifts over minutes.
 */
export const TARGETS = [
  { name: "different queries of each load route", reads: "queries", min: MIN_QUERIES, unit: "queries" },
  { name: "check req/s, share of hello's", reads: "checkShare", min: 0.6, unit: "share" },
  { name: "check req/s over anvil eth_call's (as shares)", reads: "checkOverAnvil", min: 1, unit: "×" },
  {
    name: "check req/s over anvil eth_call's, both driven by wrk (as shares)",
    reads: "checkOverAnvilWrk",
    min: 1,
    unit: "×",
  },
  { name: `check p99 over its hello's p99 + ${TAIL_MS} ms`, reads: "checkTail", max: 1, unit: "×" },
  { name: "check p99", reads: "checkP99", max: 10, unit: "ms" },
  { name: "check share of hello, large over small database", reads: "checkDrift", max: 1.25, unit: "×" },
  { name: "small wallet's v2 listing, share of hello's", reads: "smallListing", min: 0.4, unit: "share" },
  { name: "npm start on PGlite, share of hello's", reads: "pglite", min: 0.4, unit: "share" },
  { name: "npm start on Postgres, share of hello's", reads: "postgres", min: 0.3, unit: "share" },
  {
    name: `npm start's check p99 over its hello's p99 + ${START_TAIL_MS} ms, blocks arriving`,
    reads: "startTail",
    max: 1,
    unit: "×",
  },
  { name: "listing p50, smallest hot wallet", reads: "listingFewest", max: 5, unit: "ms" },
  { name: "listing p50, largest hot wallet", reads: "listingMost", max: 50, unit: "ms" },
  { name: "whole listings answered at 64 connections", reads: "listingsAnswered", min: 1, unit: "share" },
  { name: "past-block listing p50, smallest hot wallet", reads: "pastListing", max: 20, unit: "ms" },
  { name: "past-block check p50", reads: "pastCheckP50", max: 2, unit: "ms" },
  { name: "past-block check req/s, share of the head's", reads: "pastOverHead", min: 0.25, unit: "share" },
  { name: "past-block check req/s, share of hello's", reads: "pastShare", min: 0.3, unit: "share" },
  { name: "past-moment check, time over the same by block", reads: "momentOverBlock", max: 1.2, unit: "×" },
  { name: "check across every chain, share of hello's", reads: "acrossCheck", min: 0.3, unit: "share" },
  {
    name: "small wallet's listing across every chain, share of hello's",
    reads: "acrossListing",
    min: 0.2,
    unit: "share",
  },
  { name: "batch p50 at the head", reads: "batchHead", max: 50, unit: "ms" },
  { name: "batch p50 at a past block", reads: "batchPast", max: 150, unit: "ms" },
  { name: "checks through batches at 8 connections", reads: "batchThroughput", min: 300_000, unit: "checks/s" },
  { name: "a million checks at a past block, one client's checkMany", reads: "airdrop", max: 10_000, unit: "ms" },
  { name: "vaults p50 at the head", reads: "vaultsHead", max: 2, unit: "ms" },
  { name: "vaults p50 at a past block", reads: "vaultsPast", max: 20, unit: "ms" },
  { name: "bulk listing p50 at the head", reads: "bulkHead", max: 50, unit: "ms" },
  { name: "bulk listing p50 at a past block", reads: "bulkPast", max: 200, unit: "ms" },
  { name: "history page p50 at any depth", reads: "historyPage", max: 5, unit: "ms" },
  { name: "whole history read by following Link", reads: "historyRead", min: 50_000, unit: "events/s" },
  { name: "largest hot wallet in pages, each page's p50", reads: "walletPage", max: 10, unit: "ms" },
  { name: "wallet pages answered at 64 connections", reads: "pagesAnswered", min: 1, unit: "share" },
  { name: "backfill events/s over the minimal indexer's", reads: "backfillShare", min: 0.8, unit: "×" },
  { name: "backfill events/s", reads: "backfillRate", min: 10_000, unit: "events/s" },
  { name: "backfill peak RSS", reads: "backfillRss", max: 1024, unit: "MB" },
  { name: "new delegation's delay after its block", reads: "delay", max: 1500, unit: "ms" },
  { name: "block to change-feed event p95, npm start", reads: "streamStart", max: 1000, unit: "ms" },
  {
    name: "block to change-feed event p95, npm run serve reading a standby",
    reads: "streamStandby",
    max: 1500,
    unit: "ms",
  },
  { name: "block to first webhook attempt p95", reads: "webhookAttempt", max: 2000, unit: "ms" },
  { name: "change-log backlog replayed to a webhook", reads: "backlogRate", min: 20_000, unit: "entries/s" },
  { name: "checks beside 10,000 feed subscribers, of unloaded", reads: "subscribersShare", min: 0.8, unit: "×" },
  { name: "npm run serve RSS, large database", reads: "serveRss", max: 1024, unit: "MB" },
  { name: "one keyless client's CPU beyond idle", reads: "keylessCost", max: 0.05, unit: "of one core" },
  { name: "keyed req/s beside a keyless flood, of unloaded", reads: "floodRps", min: 0.5, unit: "share" },
  { name: "keyed p99 beside a keyless flood over unloaded", reads: "floodTail", max: 3, unit: "×" },
  { name: "keyed checks, two hosts over one (modelled)", reads: "scaleKeyed", min: 1.8, unit: "×" },
  { name: "keyless checks, two hosts over one (modelled)", reads: "scaleKeyless", min: 1.8, unit: "×" },
  { name: "/rpc check req/s, share of hello's", reads: "rpcShare", min: 0.5, unit: "share" },
  { name: "/rpc check req/s over anvil eth_call's (as shares)", reads: "rpcOverAnvil", min: 1, unit: "×" },
  { name: "/rpc past-block check req/s, share of hello's", reads: "rpcPastShare", min: 0.3, unit: "share" },
  { name: "/rpc getIncomingDelegations req/s over anvil's", reads: "rpcListing", min: 3, unit: "×" },
  {
    name: "/rpc getIncomingDelegations req/s over anvil's, both driven by wrk",
    reads: "rpcListingWrk",
    min: 3,
    unit: "×",
  },
  { name: "/rpc aggregate3 of 100 checks p50 over a REST batch's", reads: "rpcAggregate", max: 2, unit: "×" },
  { name: "whole table apart: the deployment's peak RSS", reads: "wholeTableRss", max: 8192, unit: "MB" },
  {
    name: "whole table apart: the service's CPU idle as blocks flow",
    reads: "wholeTableIdle",
    max: 0.25,
    unit: "of one core",
  },
  { name: "whole table apart: a new delegation's delay, p95", reads: "wholeTableDelay", max: 2000, unit: "ms" },
] as const satisfies readonly Target[];

/** A stream's delays as a target reads them: their p95. */
const streamDelay = (delays: readonly number[]) => ({
  label: `p95 of ${delays.length}`,
  value: quantile(delays, 0.95),
});
/** The change feed's figures beside the serving ones: a backlog's replay, the subscribers', a standby's replica. */
export type FeedFigures = { backlog: BacklogFigures; subscribers: SubscriberFigures; standby: StandbyFigures };

/** A backlog's replay to a webhook endpoint, as its target reads it. */
const backlogFigures = (b: BacklogFigures) => ({
  backlogRate: {
    label: `${int(b.entries)} entries in ${int(b.deliveries)} deliveries`,
    value: b.entries / (b.ms / 1000),
  },
});
/** The checks' share of their hello runs without streams: the mean of the runs before and after them. */
const unloadedShare = (f: SubscriberFigures) => (share(f.unloaded[0]) + share(f.unloaded[1])) / 2;
/** The checks' throughput with the subscribers' streams open over without, each as its share of its hello run. */
const subscriberFigures = (f: SubscriberFigures) => ({
  subscribersShare: {
    label: `${int(f.subscribers)} streams open`,
    value: share(f.loaded) / unloadedShare(f),
    failed: [f.loaded, ...f.unloaded].some((figure) => failures(figure.result) > 0),
  },
});
/** What the open streams cost in memory: a fall (a collection beside few streams, a smoke run's) is no cost. */
const perSubscriber = (f: SubscriberFigures) => {
  const grew = f.rssMb.open - f.rssMb.before;
  return grew > 0 ? `${int((1024 * grew) / f.subscribers)} KB a subscriber` : "no growth to share among them";
};
/** The subscribers' section in words. */
const subscriberLine = (f: SubscriberFigures) =>
  `feed subscribers: ${int(f.subscribers)} streams of GET /registry/feed (mixed filters) on npm run serve with one ` +
  `worker: its RSS ${int(f.rssMb.before)} → ${int(f.rssMb.open)} MB, ${perSubscriber(f)}; v2 check all ` +
  `${int(f.unloaded[0].result.rps)} and ${int(f.unloaded[1].result.rps)} req/s (${pct(share(f.unloaded[0]))} and ` +
  `${pct(share(f.unloaded[1]))} of hello) before and after them, ` +
  `${int(f.loaded.result.rps)} (${pct(share(f.loaded))}) with them and a delegation a second; ` +
  `the subscribers' process ${cpu(f.generatorCpu)}% of one core`;
/** The change feed's delays (bench/standby.ts), as the targets read them. */
const standbyFigures = (f: StandbyFigures) => ({
  streamStart: streamDelay(f.streamed.start),
  streamStandby: streamDelay(f.streamed.standby),
  webhookAttempt: streamDelay(f.delivered),
});
/** The change feed's delays in words. */
const standbyLine = (f: StandbyFigures) =>
  `standby: a new delegation with npm run serve reading a hot standby (pg_basebackup -R; the primary flushes its ` +
  `WAL every 20 ms), ${f.samples} samples, block time 1 s, after its block was seen mined: answered there ` +
  `${streamLine(f.answered)}; its change-feed event (GET /registry/feed) on npm start ` +
  `${streamLine(f.streamed.start)}, on npm run serve ${streamLine(f.streamed.standby)}; its webhook delivery's ` +
  `first attempt (npm start's deliverer) ${streamLine(f.delivered)}`;
/** A backlog's replay in words. */
const backlogLine = (b: BacklogFigures) =>
  `webhook backlog: ${int(b.entries)} entries of the change log from the oldest to one endpoint on loopback, ` +
  `${int(b.deliveries)} deliveries: ${seconds(b.ms)}, ${int(b.entries / (b.ms / 1000))} entries/s; the deliverer's ` +
  `process (and the receiver in it) ${cpu((100 * b.cpuMs) / b.ms)}% of one core, Postgres not counted`;
/**
 * How soon changes reach their readers: block to answer (the slowest), to each stream's event and to
 * the webhook's first attempt (p95); and a backlog's replay rate.
 */
const delayFigures = ({ answered }: ServingFigures["delays"], feed: FeedFigures) => ({
  delay: { label: `the slowest of ${answered.length}`, value: Math.max(...answered) },
  ...backlogFigures(feed.backlog),
  ...subscriberFigures(feed.subscribers),
  ...standbyFigures(feed.standby),
});
/** A stream's delays in words. */
const streamLine = (delays: readonly number[]) =>
  `${Math.round(median(delays))} ms (median), ${Math.round(quantile(delays, 0.95))} ms (p95)`;

/** Failed: answers other than 2xx, errors (timeouts among them), or not one answer within the run. */
const failures = (r: LoadResult) => r.non2xx + r.errors + (r.requests === 0 ? 1 : 0);
function failureText(r: LoadResult): string {
  const parts = [
    ...Object.entries(r.statuses)
      .filter(([status]) => !status.startsWith("2"))
      .map(([status, n]) => `${int(n)} answered ${status}`),
    ...(r.errors > 0 ? [`${int(r.errors)} errors (${int(r.timeouts)} of them timeouts)`] : []),
  ];
  if (r.requests === 0) {
    return [...parts, `no 2xx answer within the ${seconds(r.durationS * 1000)} run (${int(r.sent)} sent)`].join(", ");
  }
  return `${parts.join(", ")}; its figures are those of its ${int(r.requests)} 2xx answers`;
}

/** A run's 2xx answers per second as a share of those of its own hello run (NaN: it has none). */
const share = (f: RouteFigure) => f.result.rps / (f.hello?.rps ?? NaN);

/** The worst of `runs` by `value` (a run that failed, or without one, is worst of all); `low`: lower is worse. */
function worst<F extends RouteFigure>(runs: readonly F[], value: (f: F) => number | undefined, low = false, of = "") {
  const scored = runs.map((f) => {
    const v = value(f);
    const failed = failures(f.result) > 0 || v === undefined || Number.isNaN(v);
    return { label: `${of}${f.label}`, value: v ?? NaN, failed, rank: failed ? Infinity : low ? -v! : v! };
  });
  return scored.reduce((a, b) => (b.rank > a.rank ? b : a));
}
const p50 = (f: RouteFigure) => f.result.p50;
/** The share of `runs` answered without a failure. */
const answered = (label: string, runs: readonly RouteFigure[]): Figure => ({
  label,
  value: runs.filter((f) => failures(f.result) === 0).length / runs.length,
});

/** Two hosts' checks beside one's, and both hosts' rates, as modelled from per-answer CPU (see scaleLines). */
export function twoHostsOverOne(c: { host: number; primary: number; primaryIdle: number; cores: number }) {
  // H hosts of `cores` each serve H·cores/host answers a second, as long as a primary of as many
  // cores keeps up: its idle work for each replica, and `primary` per answer.
  const served = (hosts: number) =>
    Math.min((hosts * c.cores) / c.host, c.primary > 0 ? (c.cores - hosts * c.primaryIdle) / c.primary : Infinity);
  return { one: served(1), two: served(2), ratio: served(2) / served(1) };
}

/** Per 200 answer of `run` beyond idle: a replica host's CPU and the primary's, and two hosts beside one. */
function modelled(sc: ScaleFigures, run: ScaleRun, cores: number) {
  const host = (c: SpanCpu) => c.replica + (c.postgres ?? 0) - (c.access ?? 0);
  const primary = (c: SpanCpu) => c.access ?? 0;
  const per = (part: (c: SpanCpu) => number) =>
    beyondIdle(run.cpu, sc.idle, part) / (run.result.statuses["200"] ?? NaN);
  const costs = { host: per(host), primary: per(primary), primaryIdle: primary(sc.idle) / sc.idle.spanS };
  return { ...costs, ...twoHostsOverOne({ ...costs, cores }) };
}

/** Keyless work is shed under load (429, 503: api/http/load.ts), by design: not a failure here. */
const SCALE_KINDS = [
  { what: "keyed", expected: ["200"] },
  { what: "keyless", expected: ["200", "429", "503"] },
] as const;

/** The hostile section's CPU: a part of the service's over the attack beyond idle, in cores. */
const attackCost = ({ attack }: HostileFigures, part?: (c: SpanCpu) => number) =>
  beyondIdle(attack.attacked, attack.idle, part) / attack.seconds;

/** The airdrop's time for a million checks (scaled from fewer: --smoke). */
const airdropFigure = (a: AirdropFigure): Figure => ({
  label: `${int(a.checks)} checks${a.checks === 1_000_000 ? "" : ", scaled to a million"}`,
  value: (a.ms * 1_000_000) / a.checks,
});

/** A run's p99 over its hello run's p99 plus `marginMs`. */
const tailOver = (marginMs: number) => (f: RouteFigure) => (f.result.p99 ?? NaN) / ((f.hello?.p99 ?? NaN) + marginMs);
/** A check's share of its hello run over anvil's eth_call's of the same checks (undefined: anvil's run failed). */
const overAnvil = (c: RouteFigure & { ethCall: RouteFigure }) =>
  failures(c.ethCall.result) > 0 ? undefined : share(c) / share(c.ethCall);
/** The nearest of the large size's checks to anvil's eth_call of them, as shares, both driven by wrk. */
const overAnvilByWrk = (checks: readonly CheckFigure[]) =>
  worst(
    checks.map((c) => ({ ...c.wrk!.route, ethCall: c.wrk!.ethCall })),
    overAnvil,
    true,
    "nearest ",
  );
/** A check's share of its wrk hello run, and anvil's eth_call's of the same checks. */
const wrkShares = (c: CheckFigure) => `${c.route} ${ratio(share(c.wrk!.route))} / ${ratio(share(c.wrk!.ethCall))}`;

/** A check's runs: the route's, anvil's eth_call's, and both driven by wrk where they were. */
const checkRunsOf = (c: CheckFigure): RouteFigure[] => [c, c.ethCall, ...(c.wrk ? [c.wrk.route, c.wrk.ethCall] : [])];

/** Of the runs of many distinct queries (checks and small listings), the one of the fewest. */
function fewestQueried(s: ServingFigures, across: AcrossFigures): RouteFigure {
  const queried = [
    ...[...s.small.checks, ...s.large.checks].flatMap(checkRunsOf),
    s.large.smallListing,
    ...s.past.checks.map((c) => c.loaded),
    s.moment.atMoment,
    across.check,
    across.smallListing,
  ];
  return queried.reduce((a, f) => (f.queries < a.queries ? f : a));
}

/** The whole table's CPU seconds idle: its processes' and its Postgres backends'. */
const wholeTableIdle = (w: WholeTableFigures) => w.idle.service + (w.idle.postgres ?? 0);

/** The figures the whole table's targets read (bench/whole-table.ts). */
function wholeTableFigures(w: WholeTableFigures) {
  const chains = `${w.posed.length} chains`;
  const postgres = w.idle.postgres === undefined ? ", Postgres not counted" : " and its Postgres backends";
  return {
    wholeTableRss: { label: `${chains}' service tree`, value: w.peakMb },
    wholeTableIdle: { label: `${chains}' service (its processes${postgres})`, value: wholeTableIdle(w) / w.idle.spanS },
    wholeTableDelay: { label: `${w.delays.length} delays over ${chains}`, value: quantile(w.delays, 0.95) },
  } satisfies Record<string, Figure>;
}

/** A figure of run `a` beside run `b`, failed if either had failures. */
const over = (a: RouteFigure, b: RouteFigure, value: number) => ({
  label: a.label,
  value,
  failed: failures(a.result) + failures(b.result) > 0,
});

function rpcFigures(rpc: RpcFigures) {
  return {
    rpcShare: worst([rpc.check], share, true),
    rpcOverAnvil: over(rpc.check, rpc.anvilCheck, share(rpc.check) / share(rpc.anvilCheck)),
    rpcPastShare: worst([rpc.past], share, true),
    rpcListing: over(rpc.listing, rpc.anvilListing, rpc.listing.result.rps / rpc.anvilListing.result.rps),
    rpcListingWrk: over(
      rpc.listingWrk,
      rpc.anvilListingWrk,
      rpc.listingWrk.result.rps / rpc.anvilListingWrk.result.rps,
    ),
    rpcAggregate: over(rpc.aggregate, rpc.batch, (rpc.aggregate.result.p50 ?? NaN) / (rpc.batch.result.p50 ?? NaN)),
  } satisfies Record<string, Figure>;
}

/** The figure each target reads. */
function targetFigures(
  o: BenchOptions,
  env: Environment,
  s: ServingFigures,
  b: BackfillFigures,
  start: PgliteStartFigures,
  rpc: RpcFigures,
  across: AcrossFigures,
  wholeTable: WholeTableFigures,
  feed: FeedFigures,
) {
  const { past, history, integrators, hostile, scale } = s;
  const checks = [...s.small.checks, ...s.large.checks];
  const [fewest, most] = [Math.min(...o.hot), Math.max(...o.hot)];
  const alone = s.large.listings.filter((l) => l.connections === 1);
  const loaded = (runs: readonly RouteFigure[]) => runs.filter((f) => f.connections === o.connections);
  const listing = (size: number) =>
    worst(
      alone.filter((l) => l.delegations === size),
      p50,
    );
  const at = (runs: readonly (RouteFigure & { past: boolean })[], atPast: boolean) =>
    worst(
      runs.filter((f) => f.past === atPast),
      p50,
    );
  const rate = (read: HistoryRead) => read.events / (read.ms / 1000);
  const slowestRead = history.reads.reduce((a, r) => (rate(r) < rate(a) ? r : a));
  const backfillRate = b.events / (b.backfillMs / 1000);
  const { keyed } = hostile;
  const flood = (value: number) => {
    const failed = failures(keyed.loaded.result) + failures(keyed.unloaded.result) > 0;
    return { label: `keyed ${keyed.route}`, value, failed };
  };
  const visible = scale.idle.postgres !== undefined;
  const twoHosts = ({ what, expected }: (typeof SCALE_KINDS)[number]): Figure => {
    const { errors, statuses } = scale[what].result;
    const unexpected = Object.keys(statuses).some((status) => !(expected as readonly string[]).includes(status));
    return {
      label: visible ? `${what} checks` : `${what} checks (Postgres's backends not visible here: not modelled)`,
      value: modelled(scale, scale[what], env.cores).ratio,
      failed: !visible || errors > 0 || !statuses["200"] || unexpected,
    };
  };
  const pages = history.walletPages.filter((f) => f.connections === 1);
  const eachPage = pages.flatMap((f) =>
    Object.entries(f.result.groups).map(([group, g]) => ({ ...f, label: `${f.label}, ${group}`, p50: g.p50 })),
  );
  const fewestQueries = fewestQueried(s, across);
  const drift = s.large.checks.map((c, i) => ({ ...c, label: c.route, drift: share(c) / share(s.small.checks[i]!) }));
  const pastHead = past.checks.map((c) => ({ ...c.loaded, head: c.head.result.rps }));
  return {
    queries: { label: `fewest ${fewestQueries.label}`, value: fewestQueries.queries },
    checkShare: worst(checks, share, true, "lowest "),
    checkOverAnvil: worst(checks, overAnvil, true, "nearest "),
    checkOverAnvilWrk: overAnvilByWrk(s.large.checks),
    checkTail: worst(checks, tailOver(TAIL_MS), false, "worst "),
    checkP99: worst(checks, (c) => c.result.p99, false, "highest "),
    checkDrift: worst(drift, (c) => Math.max(c.drift, 1 / c.drift), false, "furthest "),
    smallListing: worst([s.large.smallListing], share, true),
    pglite: worst([start.check], share, true),
    postgres: worst([s.ponder], share, true),
    startTail: worst([s.ponder, start.check], tailOver(START_TAIL_MS), false, "worst "),
    listingFewest: listing(fewest),
    listingMost: listing(most),
    listingsAnswered: answered("whole listings", loaded(s.large.listings)),
    pastListing: worst(past.listings, p50),
    pastCheckP50: worst(
      past.checks.map((c) => c.alone),
      p50,
    ),
    pastOverHead: worst(pastHead, (c) => c.result.rps / c.head, true),
    pastShare: worst(
      past.checks.map((c) => c.loaded),
      share,
      true,
      "lowest ",
    ),
    // Time per answer at 64 connections, each as its share of its hello run: 1 / share.
    momentOverBlock: worst([s.moment.atMoment], (m) => share(s.moment.atBlock) / share(m)),
    acrossCheck: worst([across.check], share, true),
    acrossListing: worst([across.smallListing], share, true),
    batchHead: at(past.batches, false),
    batchPast: at(past.batches, true),
    batchThroughput: worst([past.batchLoad], (f) => f.result.rps * o.batchSize, true),
    vaultsHead: at(integrators.vaults, false),
    vaultsPast: at(integrators.vaults, true),
    bulkHead: at(integrators.bulk, false),
    bulkPast: at(integrators.bulk, true),
    airdrop: airdropFigure(s.airdrop),
    historyPage: worst(history.pages, p50),
    historyRead: { label: slowestRead.label, value: rate(slowestRead) },
    walletPage: worst(eachPage, (f) => f.p50),
    pagesAnswered: answered("wallet pages", loaded(history.walletPages)),
    backfillShare: { label: "the indexer", value: backfillRate / (b.events / (b.baseline.backfillMs / 1000)) },
    backfillRate: { label: "the indexer", value: backfillRate },
    backfillRss: { label: "the indexer's process tree", value: b.peakRssMb },
    ...delayFigures(s.delays, feed),
    serveRss: { label: "npm run serve", value: s.apiMemory.rssMb },
    keylessCost: {
      label: hostile.attack.attacked.postgres === undefined ? "its processes (Postgres not counted)" : "the service",
      value: attackCost(hostile),
    },
    floodRps: flood(keyed.loaded.result.rps / keyed.unloaded.result.rps),
    floodTail: flood((keyed.loaded.result.p99 ?? NaN) / (keyed.unloaded.result.p99 ?? NaN)),
    scaleKeyed: twoHosts(SCALE_KINDS[0]),
    scaleKeyless: twoHosts(SCALE_KINDS[1]),
    ...rpcFigures(rpc),
    ...wholeTableFigures(wholeTable),
  } satisfies Record<string, Figure>;
}

/** Each target of `figures` (all, or one section's) met or missed, beside its figure (and, if missed, by how much). */
function targetLines(figures: Partial<Record<FigureName, Figure>>): string[] {
  return [
    "targets:",
    ...TARGETS.filter((target: Target) => figures[target.reads] !== undefined).map((target: Target) => {
      const { name, reads, unit } = target;
      const [op, limit] = "min" in target ? (["≥", target.min] as const) : (["≤", target.max] as const);
      const { label, value, failed } = figures[reads]!;
      const show = UNITS[unit];
      const met = !failed && (op === "≥" ? value >= limit : value <= limit);
      const missed = op === "≥" ? `${pct(value / limit)} of the target` : `${ratio(value / limit)}× the limit`;
      const figure = failed
        ? `${label} failed under load`
        : `${label} at ${show(value)}${met ? "" : `; missed: ${missed}`}`;
      return `  ${met ? "met   " : "MISSED"}  ${name} ${op} ${show(limit)}: ${figure}`;
    }),
  ];
}

const WIDTHS = [80, 9, 7, 9, 8, 8, 6, 9, 8];
const pad = (cells: string[]) =>
  cells.map((c, i) => (i === 0 ? c.padEnd(WIDTHS[i]!) : c.padStart(WIDTHS[i]!))).join("  ");

/**
 * The table of load runs: what its columns mean, its head, a row per run (its 2xx answers per
 * second also as a share of its own hello run's, or else of `hello`'s, beside that hello's), and
 * what failed.
 */
function table(o: BenchOptions, runs: readonly RouteFigure[], hello: number): string[] {
  const row = (f: RouteFigure) => {
    const r = f.result;
    const own = f.hello?.rps ?? hello;
    const cells = [ms(r.p50), ms(r.p99), cpu(r.generatorCpu), cpu(r.machineCpu), cpu(r.othersCpu)];
    return pad([failures(r) > 0 ? `${f.label} [failed]` : f.label, int(r.rps), ratio(r.rps / own), int(own), ...cells]);
  };
  return [
    `load runs, at ${o.connections} connections unless noted: 2xx answers per second, their ratio to hello's, and ` +
      "hello's (of the hello run just before the run where it has one, else (a)'s); latency in ms; CPU: gen% is " +
      "the load generator's (% of one core); machine% all cores' busy time, of which others% went to processes " +
      "the bench did not start (other work on this machine; also the kernel's interrupt time)",
    pad(["route", "req/s", "×hello", "hello", "p50", "p99", "gen%", "machine%", "others%"]),
    ...runs.map(row),
    ...runs.filter((f) => failures(f.result) > 0).map((f) => `[failed] ${f.label}: ${failureText(f.result)}`),
  ];
}

/** Answers by status, each of `always` even when none, then the others; and the errors. */
function statusText(r: LoadResult, always: readonly string[] = []): string {
  const counts = { ...Object.fromEntries(always.map((status) => [status, 0])), ...r.statuses };
  const answers = Object.entries(counts)
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([status, n]) => `${status}: ${n === 0 ? "none" : int(n)}`);
  return `${answers.join(", ")}; ${r.errors === 0 ? "no errors" : `${int(r.errors)} errors`}`;
}

/** The hostile section's lines (bench/hostile.ts): one keyless client's cost, keyed checks beside a flood. */
function hostileLines(o: BenchOptions, h: HostileFigures): string[] {
  const { attack, keyed } = h;
  const { unloaded, loaded } = keyed;
  const idle = (100 * wholeService(attack.idle)) / attack.idle.spanS;
  const postgres =
    attack.attacked.postgres === undefined
      ? "Postgres's backends not counted: this machine's /proc does not show them"
      : `their ${attack.attacked.backends} Postgres backends ${cpu(100 * attackCost(h, (c) => c.postgres!))}%`;
  return [
    `hostile, one keyless client: from one address, ${attack.connections} connections for ${attack.seconds} s ` +
      `(its load generator ${cpu(attack.result.generatorCpu)}% of one core), asking for the ` +
      `${int(Math.max(...o.hot))}-delegation wallets' whole listings at random past blocks, history pages of ` +
      `1,000, 4 MiB batch bodies and well-formed keys no one issued: answered ${statusText(attack.result)}`,
    `hostile, one keyless client: the service's CPU on it beyond the same span idle: ${cpu(100 * attackCost(h))}% ` +
      `of one core (its processes ${cpu(100 * attackCost(h, (c) => c.replica))}%, ${postgres}); idle, it spent ` +
      `${cpu(idle)}% of one core`,
    `hostile, keyed under a keyless flood: ${keyed.route} beside ${keyed.connections} connections of keyless checks ` +
      `from ${int(keyed.addresses)} forwarded addresses (TRUSTED_PROXY): ${int(loaded.result.rps)} req/s, ` +
      `${pct(loaded.result.rps / unloaded.result.rps)} of unloaded (${int(unloaded.result.rps)} req/s); p99 ` +
      `${ms(loaded.result.p99)} ms, ${ratio((loaded.result.p99 ?? NaN) / (unloaded.result.p99 ?? NaN))}× unloaded ` +
      `(${ms(unloaded.result.p99)} ms); load generators: keyed ${cpu(loaded.result.generatorCpu)}% (unloaded ` +
      `${cpu(unloaded.result.generatorCpu)}%), keyless ${cpu(keyed.keyless.generatorCpu)}% of one core`,
    `hostile, keyed under a keyless flood: the flood's answers: ${statusText(keyed.keyless, ["200", "429", "503"])}`,
  ];
}

/**
 * The scale section's lines (bench/hostile.ts): per 200 answer beyond idle, the CPU of a replica
 * host (its processes and reading backends) and of the primary (its access connections), and what
 * two hosts serve beside one, modelled.
 */
function scaleLines(env: Environment, sc: ScaleFigures): string[] {
  const us = (seconds: number) => (seconds > 0 ? `${ms(seconds * 1e6)} µs` : "nothing beyond idle");
  return SCALE_KINDS.map(({ what, expected }) => {
    const run = sc[what];
    const head =
      `scale-out, modelled (not measured on two hosts): ${what} checks from every check route at ` +
      `${run.connections} connections (load generator ${cpu(run.result.generatorCpu)}% of one core), `;
    const answered = `answered ${statusText(run.result, expected)}`;
    if (!run.result.statuses["200"]) return `${head}no 200 answer to model from; ${answered}`;
    const m = modelled(sc, run, env.cores);
    return (
      `${head}per 200 answer beyond idle: a replica host ${us(m.host)} of CPU (the replica's processes and its ` +
      `reading backends), the primary ${us(m.primary)} (its access connections) and ${cpu(100 * m.primaryIdle)}% ` +
      `of a core idle per replica; hosts and primary of ${env.cores} cores: one host ${int(m.one)} answers/s, two ` +
      `${int(m.two)}: ${ratio(m.ratio)}×; ${answered}`
    );
  });
}

const database = (size: Size) => `${int(size.v2 + size.v1)}-delegation database`;

/** The lines of the checks, the history, the indexing, the delay and the memory. */
function figureLines(s: ServingFigures, b: BackfillFigures, start: PgliteStartFigures): string[] {
  const perSize = (each: (f: CheckFigure) => string) =>
    s.large.checks.map((c, i) => `${c.route} ${each(s.small.checks[i]!)} / ${each(c)}`).join(", ");
  const rate = (events: number, spanMs: number) => int(events / (spanMs / 1000));
  const afterEvents = "after its last event: Ponder creating the tables' indexes and triggers";
  const eventsOnly = (f: IndexerFigures) => b.events / (f.backfillMs - f.finishMs);
  const splitText = ({ split }: IndexerFigures) =>
    `waiting for its sync ${ms(split.syncMs)} ms, indexing functions ${ms(split.indexMs)} ms, flushing rows ` +
    `${ms(split.flushMs)} ms`;
  const ownWork = ({ split }: IndexerFigures) => split.indexMs + split.flushMs;
  /** The replica's whole resident memory, per delegation it holds. */
  const perDelegation = (rssMb: number, size: Size) => int((rssMb * 2 ** 20) / (size.v2 + size.v1));
  return [
    "checks, each run's req/s as a share of a hello run just before it, small / large: " +
      perSize((f) => ratio(share(f))),
    "anvil's eth_call of the same checks, each run's req/s as a share of the hello run before the check's, " +
      `small / large: ${perSize((f) => ratio(share(f.ethCall)))}`,
    "checks' p99 beside their hello run's, in ms, small / large: " +
      perSize((f) => `${ms(f.result.p99)} (hello ${ms(f.hello.p99)})`),
    "driven by wrk (large), each check's req/s as a share of its wrk hello run's, and anvil's eth_call's of the " +
      `same checks: ${s.large.checks.map(wrkShares).join(", ")}`,
    ...s.history.reads.map(
      (r) =>
        `history: ${r.label}: ${int(r.events)} events in ${int(r.pages)} pages, ${rate(r.events, r.ms)} events/s of ` +
        `the pages' own time (${seconds(r.ms)}; page p50 ${ms(r.pageP50)} ms); machine ${cpu(r.machineCpu)}%, ` +
        `others ${cpu(r.othersCpu)}%`,
    ),
    ...s.history.walletPages
      .filter((f) => f.connections === 1)
      .map((f) => {
        const page = (group: string) => Number(group.split(" ")[1]);
        const groups = Object.entries(f.result.groups).sort(([a], [b]) => page(a) - page(b));
        return (
          `pages: ${f.label}: p50 by page ${groups.map(([group, g]) => `${page(group)}: ${ms(g.p50)}`).join(", ")}` +
          " ms"
        );
      }),
    `indexing: backfill of ${int(b.events)} v2 events in ${int(b.blocks)} blocks: ${rate(b.events, b.backfillMs)} ` +
      `events/s in Ponder's backfill phase (${seconds(b.backfillMs)}, of which ${ms(b.finishMs)} ms ${afterEvents}), ` +
      `${rate(b.events, b.readyMs)} events/s from process start to ready (${seconds(b.readyMs)}), peak RSS ` +
      `${int(b.peakRssMb)} MB (indexer process tree)`,
    "indexing, the minimal Ponder indexer (bench/baseline: one insert per event, no index) over the same blocks: " +
      `${rate(b.events, b.baseline.backfillMs)} events/s in its backfill phase (${seconds(b.baseline.backfillMs)}, ` +
      `of which ${ms(b.baseline.finishMs)} ms ${afterEvents}), peak RSS ${int(b.baseline.peakRssMb)} MB`,
    "indexing, the events alone (the backfill phase up to its last event): " +
      `${ratio(eventsOnly(b) / eventsOnly(b.baseline))}× the minimal indexer's events/s`,
    `indexing, each backfill by Ponder's own account (its /metrics): the indexer ${splitText(b)}; the minimal ` +
      `indexer ${splitText(b.baseline)}; functions and flushes ${ratio(ownWork(b) / ownWork(b.baseline))}× the ` +
      "minimal indexer's",
    `indexing, npm start alone on PGlite (the README's first command) over ${int(start.events)} events of the ` +
      `same kind: ${rate(start.events, start.backfillMs)} events/s in its backfill phase ` +
      `(${seconds(start.backfillMs)}), peak RSS ${int(start.peakRssMb)} MB`,
    `airdrop: ${int(s.airdrop.checks)} v2 checks at block ${s.airdrop.block} through the typed client's ` +
      `checkMany, one client: ${seconds(s.airdrop.ms)}, ${int(s.airdrop.checks / (s.airdrop.ms / 1000))} checks/s, ` +
      `the client's CPU ${seconds(s.airdrop.clientCpuMs)} (${int(s.airdrop.verified)} answers verified)`,
    `delay: a new delegation answered by npm run serve ${int(median(s.delays.answered))} ms (median), ` +
      `${int(Math.max(...s.delays.answered))} ms (max) after its block was seen mined, ${s.delays.answered.length} ` +
      "samples, block time 1 s",
    `memory: npm run serve RSS after the load runs (${s.apiMemory.processes} processes): ` +
      `${int(s.small.apiMemory.rssMb)} MB with the ${database(s.small.size)}, ${int(s.apiMemory.rssMb)} MB (peak ` +
      `${int(s.apiMemory.peakMb)} MB) with the ${database(s.large.size)}; per delegation ` +
      `${perDelegation(s.small.apiMemory.rssMb, s.small.size)} and ` +
      `${perDelegation(s.apiMemory.rssMb, s.large.size)} bytes`,
  ];
}

/** The whole table's lines (bench/whole-table.ts): its chains, until each answers, memory, idle CPU, delays. */
function wholeTableLines(w: WholeTableFigures): string[] {
  const times = [...w.answeringMs.values()];
  const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
  const ponders = w.memory.roles.Ponder ?? [];
  const others = Object.entries(w.memory.roles)
    .filter(([role]) => role !== "Ponder")
    .map(([role, mbs]) => `${role} ${int(sum(mbs))} MB (${mbs.length} ${mbs.length === 1 ? "process" : "processes"})`);
  const left = w.leftOut.map(({ id, why }) => `${id} (${why})`).join("; ");
  const sample = w.chosen < w.table ? ` (a sample of ${w.chosen})` : "";
  const grouping = w.groups === undefined ? "each chain alone" : `INDEX_CHAIN_GROUPS of ${w.groupSize} chains each`;
  const share = (cpuSeconds: number) => `${cpu((100 * cpuSeconds) / w.idle.spanS)}%`;
  const { idle } = w;
  const postgres =
    idle.postgres === undefined
      ? "Postgres's backends not counted: this machine's /proc does not show them"
      : idle.backends > 0
        ? `its ${idle.backends} Postgres backends ${share(idle.postgres)}`
        : "no Postgres backend of its seen";
  const blocks = `a block every ${BLOCK_TIME_S} s`;
  return [
    `whole table apart: ${w.posed.length} of the table's ${w.table} chains${sample} posed by anvil, ` +
      `${left ? `left out: ${left}` : "none left out"}; each with the real registries and ${blocks} heard on its ` +
      `WebSocket, in one npm start with INDEX_CHAINS_APART=true on Postgres, ${grouping}: ${ponders.length} Ponder ` +
      "processes",
    `whole table apart: every chain answering ${seconds(Math.max(...times))} after npm start (a check on it 200, ` +
      `from a block however old; the first ${seconds(Math.min(...times))}, the median ${seconds(median(times))}), ` +
      `every chain live (its /registry/chains entry: caught up) ${seconds(Math.max(...w.liveMs.values()))} after`,
    `whole table apart: RSS after the writes ${int(w.memory.totalMb)} MB over ${w.memory.processes} processes ` +
      `(peak ${int(w.peakMb)} MB, sampled every second from npm start): Ponder ${int(Math.min(...ponders))} / ` +
      `${int(median(ponders))} / ${int(Math.max(...ponders))} MB a process (min / median / max; ${int(sum(ponders))} ` +
      `MB in all); ${others.join(", ")}`,
    `whole table apart: idle for ${int(idle.spanS)} s, ${blocks} on every chain: the service ` +
      `${share(wholeTableIdle(w))} of one core (its processes ${share(idle.service)}, ${postgres}); not counted: ` +
      `the anvils ${share(idle.anvils)}, the bench process ${share(idle.bench)}`,
    `whole table apart: a new v2 delegation on every chain at once, ${w.rounds} rounds: ${w.delays.length} delays ` +
      `from the block's timestamp (whole seconds: up to 1 s before the block) to the API's first true: ` +
      `${ms(median(w.delays))} ms (median), ${ms(quantile(w.delays, 0.95))} ms (p95), ${ms(Math.max(...w.delays))} ` +
      `ms (max); each chain's check asked every ${POLL_MS} ms meanwhile, the bench process at ` +
      `${cpu(100 * w.roundsBenchCpu)}% of one core`,
    `whole table apart: verified ${int(w.verified.answers)} answers (${int(w.verified.positive)} true) against the ` +
      "contracts' checkDelegateForAll at the blocks they name: all equal",
  ];
}

/** A section run alone (npm run bench -- --only <section>): its lines, then its targets. */
function sectionReport(
  o: BenchOptions,
  title: string,
  runtimeS: number,
  lines: string[],
  figures: Partial<Record<FigureName, Figure>>,
): string {
  const mode = o.smoke ? "smoke mode: the timings mean nothing" : "full mode";
  const head = `== ${title} (${mode}, SEED=${o.seed}, ${int(runtimeS)} s) ==`;
  return [head, ...lines, "", ...targetLines(figures)].join("\n");
}

/** The whole table's section alone. */
export const wholeTableReport = (o: BenchOptions, runtimeS: number, w: WholeTableFigures) =>
  sectionReport(o, "whole table apart", runtimeS, wholeTableLines(w), wholeTableFigures(w));

/** The backlog's section alone. */
export const backlogReport = (o: BenchOptions, runtimeS: number, b: BacklogFigures) =>
  sectionReport(o, "webhook backlog", runtimeS, [backlogLine(b)], backlogFigures(b));

/** The subscribers' section alone. */
export const subscribersReport = (o: BenchOptions, runtimeS: number, f: SubscriberFigures) =>
  sectionReport(
    o,
    "change-feed subscribers",
    runtimeS,
    [...table(o, [f.unloaded[0], f.loaded, f.unloaded[1]], f.unloaded[0].hello.rps), subscriberLine(f)],
    subscriberFigures(f),
  );

/** The JSON-RPC section alone. */
export const rpcReport = (o: BenchOptions, runtimeS: number, rpc: RpcFigures) =>
  sectionReport(
    o,
    `/rpc beside anvil's eth_call, ${int(rpc.size)} delegations`,
    runtimeS,
    table(o, rpcRuns(rpc), rpc.check.hello.rps),
    rpcFigures(rpc),
  );

/** The standby's section alone. */
export const standbyReport = (o: BenchOptions, runtimeS: number, f: StandbyFigures) =>
  sectionReport(o, "replica reading a standby", runtimeS, [standbyLine(f)], standbyFigures(f));

const rpcRuns = (rpc: RpcFigures) => [
  rpc.check,
  rpc.anvilCheck,
  rpc.past,
  rpc.listing,
  rpc.anvilListing,
  rpc.listingWrk,
  rpc.anvilListingWrk,
  rpc.aggregate,
  rpc.batch,
];

export type Environment = { cores: number; apiWorkers: number; autocannon: string; runtimeS: number };

/** The bench's report: the figures, their setup, and the targets met or missed. */
export function report(
  o: BenchOptions,
  env: Environment,
  s: ServingFigures,
  b: BackfillFigures,
  start: PgliteStartFigures,
  rpc: RpcFigures,
  across: AcrossFigures,
  wholeTable: WholeTableFigures,
  feed: FeedFigures,
): string {
  const runs = [
    s.hello,
    s.ponder,
    start.check,
    ...[...s.small.checks, ...s.large.checks].flatMap(checkRunsOf),
    ...s.large.listings,
    s.large.smallListing,
    ...s.past.checks.flatMap((c) => [c.alone, c.loaded]),
    s.moment.atMoment,
    across.check,
    across.smallListing,
    ...s.past.batches,
    s.past.batchLoad,
    ...s.past.listings,
    ...s.integrators.vaults,
    ...s.integrators.bulk,
    ...s.history.pages,
    ...s.history.walletPages,
    s.hostile.keyed.unloaded,
    s.hostile.keyed.loaded,
    // The keyless run's answers are in its line: its shed ones would read as failures in the table.
    s.scale.keyed,
    ...rpcRuns(rpc),
  ];
  const [small, large] = [s.small.size, s.large.size];
  const longer = [
    ...(o.startDurationS > o.durationS ? [`(d)'s ${o.startDurationS} s`] : []),
    ...(o.scaleDurationS > o.durationS ? [`the scale runs' ${o.scaleDurationS} s`] : []),
  ];
  return [
    `== results (${o.smoke ? "smoke mode: tiny sizes and short runs, the timings mean nothing" : "full mode"}, ` +
      `SEED=${o.seed}, ${int(env.runtimeS)} s) ==`,
    `setup: one machine, ${env.cores} cores shared by everything: the load generator (autocannon ${env.autocannon}, ` +
      `its own process, ${o.connections} connections, ${o.durationS} s runs ` +
      `${o.warmupS > 0 ? `after ${o.warmupS} s warm-up` : "with no warm-up"}` +
      `${longer.length > 0 ? ` (${longer.join(", ")})` : ""}, requests ` +
      `drawn at random from each route's list), the server under test (npm run serve and the hello server with ` +
      `${env.apiWorkers} worker processes each), Postgres 15, anvil and the indexer.`,
    `data: small ${database(small)} (${int(small.v2)} v2, ${int(small.v1)} v1, seeded in ${seconds(small.seedMs)}); ` +
      `large ${database(large)} (${int(large.v2)} v2, ${int(large.v1)} v1 over ${int(large.wallets)} wallets, hot ` +
      `wallets of ${o.hot.map(int).join(", ")} delegations per registry, ${int(o.vaultWallets)} v2 hot wallets of ` +
      `${int(o.vaultIncoming)} incoming delegations each from a vault of its own, ${int(o.bulkWallets)} v2 wallets ` +
      `of ${Math.min(...BULK_SIZES)}–${Math.max(...BULK_SIZES)} delegations; a history of ` +
      `${int(large.v2Events)} v2 ` +
      `and ${int(large.v1Events)} v1 events over ${int(large.blocks)} blocks; seeded in ${seconds(large.seedMs)}).`,
    `verified: ${int(s.verified.answers)} sampled answers before the runs, all as the seeded data implies ` +
      `(${pct(s.verified.positive / s.verified.checks)} of ${int(s.verified.checks)} checks true or non-zero); ` +
      "every page of the whole-history reads.",
    "",
    ...table(o, runs, s.hello.result.rps),
    "",
    ...figureLines(s, b, start),
    ...hostileLines(o, s.hostile),
    ...scaleLines(env, s.scale),
    ...wholeTableLines(wholeTable),
    backlogLine(feed.backlog),
    subscriberLine(feed.subscribers),
    standbyLine(feed.standby),
    "",
    ...targetLines(targetFigures(o, env, s, b, start, rpc, across, wholeTable, feed)),
  ].join("\n");
}
