/**
 * The figures of one run as a table: every throughput beside the raw node:http hello's of the same
 * run (of the hello run just before it, where it has one), and each of the targets, met or missed.
 * A run in which the server failed (answers other than 2xx, timeouts) is flagged with what failed;
 * its figures are those of its 2xx answers.
 */
import type { BackfillFigures, IndexerFigures, PgliteStartFigures } from "./backfill";
import type { HistoryRead } from "./history-read";
import type { HostileFigures } from "./hostile";
import type { LoadResult } from "./load";
import type { RouteFigure } from "./measure";
import type { BenchOptions } from "./options";
import { MIN_QUERIES } from "./routes";
import type { ScaleFigures, ScaleRun } from "./scale";
import { beyondIdle, type SpanCpu, wholeService } from "./service-cpu";
import type { CheckFigure, PastFigure, ServingFigures } from "./serving";
import { BULK_SIZES, type Size } from "./stack";
import type { Verified } from "./verify";

const int = (n: number) => Math.round(n).toLocaleString("en");
/** The margin a check route's p99 may exceed its hello run's p99 by: throughput must not cost the tail. */
const TAIL_MS = 5;
const ms = (n: number | undefined) => (n === undefined ? "—" : n >= 100 ? int(n) : n.toPrecision(3));
const ratio = (n: number) => (n >= 100 ? int(n) : n.toPrecision(2));
const pct = (n: number) => `${int(100 * n)}%`;
/** A CPU share; "<1" rather than a 0 that would read as none at all. */
const cpu = (n: number) => (n < 0.5 ? "<1" : int(n));
const seconds = (n: number) => `${(n / 1000).toFixed(1)} s`;
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

/** Failed: answers other than 2xx, errors (timeouts among them), or not one answer within the run. */
const failures = (r: LoadResult) => r.non2xx + r.errors + (r.requests === 0 ? 1 : 0);
function failureText(r: LoadResult, o: BenchOptions): string {
  const statuses = Object.entries(r.statuses).filter(([status]) => !status.startsWith("2"));
  const parts = [
    ...statuses.map(([status, n]) => `${int(n)} answered ${status}`),
    ...(r.errors > 0 ? [`${int(r.errors)} errors (${int(r.timeouts)} of them timeouts)`] : []),
  ];
  if (r.requests === 0) return [...parts, `no 2xx answer within the ${o.durationS} s run`].join(", ");
  return `${parts.join(", ")}; its figures are those of its ${int(r.requests)} 2xx answers`;
}

/**
 * The worst of `figures` by `value` of each, and which figure it is (a run without 2xx answers, or
 * that failed, or without a value, is worst of all).
 */
function worstOf<F extends RouteFigure>(
  figures: readonly F[],
  value: (f: F) => number | undefined,
  higherIsWorse = true,
): { label: string; value: number; failed: boolean; figure: F } {
  const scored = figures.map((f) => {
    const v = value(f);
    const failed = failures(f.result) > 0 || v === undefined || Number.isNaN(v);
    return { label: f.label, value: v ?? NaN, failed, figure: f, rank: failed ? Infinity : higherIsWorse ? v! : -v! };
  });
  return scored.reduce((a, b) => (b.rank > a.rank ? b : a));
}

/** The worst of `figures` by `value` of each one's load result. */
const worst = (figures: readonly RouteFigure[], value: (r: LoadResult) => number | undefined, higherIsWorse = true) =>
  worstOf(figures, (f) => value(f.result), higherIsWorse);

/** A run's 2xx answers per second as a share of those of its own hello run (NaN: it has none). */
const share = (f: RouteFigure) => f.result.rps / (f.hello?.rps ?? NaN);

const WIDTHS = [80, 9, 7, 9, 8, 8, 6, 9, 8];
const pad = (cells: string[]) =>
  cells.map((c, i) => (i === 0 ? c.padEnd(WIDTHS[i]!) : c.padStart(WIDTHS[i]!))).join("  ");

/**
 * The table of load runs: what its columns mean, its head, a row per run (its 2xx answers per
 * second also as a share of its own hello run's, or else of `hello`'s, where there is one, beside
 * that hello's), and what failed.
 */
function table(o: BenchOptions, runs: readonly RouteFigure[], hello: number | undefined): string[] {
  const row = (f: RouteFigure) => {
    const r = f.result;
    const label = failures(r) > 0 ? `${f.label} [failed]` : f.label;
    const own = f.hello?.rps ?? hello;
    const beside = own === undefined ? ["—", "—"] : [ratio(r.rps / own), int(own)];
    const cells = [ms(r.p50), ms(r.p99), cpu(r.generatorCpu), cpu(r.machineCpu), cpu(r.othersCpu)];
    return pad([label, int(r.rps), ...beside, ...cells]);
  };
  return [
    `load runs, at ${o.connections} connections unless noted: 2xx answers per second` +
      (hello === undefined
        ? ""
        : ", their ratio to hello's, and hello's (of the hello run just before the run where it has one, else (a)'s)") +
      "; latency in ms; CPU: gen% is the load generator's (% of one core); machine% all cores' busy time, of " +
      "which others% went to processes the bench did not start (other work on this machine; also the kernel's " +
      "interrupt time)",
    pad(["route", "req/s", "×hello", "hello", "p50", "p99", "gen%", "machine%", "others%"]),
    ...runs.map(row),
    ...runs.filter((f) => failures(f.result) > 0).map((f) => `[failed] ${f.label}: ${failureText(f.result, o)}`),
  ];
}

const database = (size: Size) => `${int(size.v2 + size.v1)}-delegation database`;

/** The first line of a report. */
const title = (o: BenchOptions, env: Environment, what: string) =>
  `== results (${what}${o.smoke ? "smoke mode: tiny sizes and short runs, the timings mean nothing" : "full mode"}, ` +
  `SEED=${o.seed}, ${int(env.runtimeS)} s) ==`;

const targetLines = (targets: readonly Target[]) => [
  "targets:",
  ...targets.map(({ met, what, detail }) => `  ${met ? "met   " : "MISSED"}  ${what}: ${detail}`),
];

export type Environment = { cores: number; apiWorkers: number; autocannon: string; runtimeS: number };

/** A target: whether it was met, what it asks, and the figure beside it (and, when missed, by how much). */
type Target = { met: boolean; what: string; detail: string };

/** How far a figure missed a limit it must stay within, or a floor it must reach. */
const missedAbove = (value: number, limit: number) => `missed: ${ratio(value / limit)}× the limit`;
const missedBelow = (value: number, floor: number) => `missed: ${pct(value / floor)} of the target`;

/** A target on the worst figure `w`: at most `limit` (or, with `floor`, at least). */
function bound(
  what: string,
  w: { label: string; value: number; failed: boolean },
  limit: number,
  show: (value: number) => string,
  floor = false,
): Target {
  const met = !w.failed && (floor ? w.value >= limit : w.value <= limit);
  const by = met ? "" : `; ${floor ? missedBelow(w.value, limit) : missedAbove(w.value, limit)}`;
  return { met, what, detail: w.failed ? `${w.label} failed under load` : `${w.label} at ${show(w.value)}${by}` };
}

/** Answers by status, each of `always` even when none, then the others; and the errors. */
function statusText(r: LoadResult, always: readonly string[] = []): string {
  const counts = { ...Object.fromEntries(always.map((status) => [status, 0])), ...r.statuses };
  const answers = Object.entries(counts)
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([status, n]) => `${status}: ${n === 0 ? "none" : int(n)}`);
  return `${answers.join(", ")}; ${r.errors === 0 ? "no errors" : `${int(r.errors)} errors`}`;
}

/**
 * The hostile section's (bench/hostile.ts) load runs for the table (the keyed route, unloaded and
 * beside the flood), its lines, and its targets.
 */
function hostileSection(o: BenchOptions, h: HostileFigures) {
  const { attack, keyed } = h;
  const { unloaded, loaded } = keyed;
  /** A part of the service's CPU over the attack beyond idle, in % of one core. */
  const share = (part?: (c: SpanCpu) => number) =>
    (100 * beyondIdle(attack.attacked, attack.idle, part)) / attack.seconds;
  const idle = (100 * wholeService(attack.idle)) / attack.idle.spanS;
  const visible = attack.attacked.postgres !== undefined;
  const postgres = visible
    ? `their ${attack.attacked.backends} Postgres backends ${cpu(share((c) => c.postgres!))}%`
    : "Postgres's backends not counted: this machine's /proc does not show them";
  const flood =
    `${keyed.connections} connections of keyless checks from ${int(keyed.addresses)} forwarded addresses ` +
    "(TRUSTED_PROXY)";
  const throughput = loaded.result.rps / unloaded.result.rps;
  const tail = (loaded.result.p99 ?? NaN) / (unloaded.result.p99 ?? NaN);
  const keyedFailed = failures(loaded.result) + failures(unloaded.result) > 0;
  const keyedLabel = `keyed ${keyed.route}`;
  const lines = [
    `hostile, one keyless client: from one address, ${attack.connections} connections for ${attack.seconds} s ` +
      `(its load generator ${cpu(attack.result.generatorCpu)}% of one core), asking for the ` +
      `${int(Math.max(...o.hot))}-delegation wallets' whole listings at random past blocks, history pages of ` +
      `1,000, 4 MiB batch bodies and well-formed keys no one issued: answered ${statusText(attack.result)}`,
    `hostile, one keyless client: the service's CPU on it beyond the same span idle: ${cpu(share())}% of one ` +
      `core (its processes ${cpu(share((c) => c.replica))}%, ${postgres}); idle, it spent ${cpu(idle)}% of one core`,
    `hostile, keyed under a keyless flood: ${keyed.route} beside ${flood}: ${int(loaded.result.rps)} req/s, ` +
      `${pct(throughput)} of unloaded (${int(unloaded.result.rps)} req/s); p99 ${ms(loaded.result.p99)} ms, ` +
      `${ratio(tail)}× unloaded (${ms(unloaded.result.p99)} ms); load generators: keyed ` +
      `${cpu(loaded.result.generatorCpu)}% (unloaded ${cpu(unloaded.result.generatorCpu)}%), keyless ` +
      `${cpu(keyed.keyless.generatorCpu)}% of one core`,
    `hostile, keyed under a keyless flood: the flood's answers: ${statusText(keyed.keyless, ["200", "429", "503"])}`,
  ];
  const targets: Target[] = [
    bound(
      `one keyless client costs the service ≤ 5% of one core over ${attack.seconds} s, idle subtracted`,
      {
        label: visible ? "its processes and their Postgres backends" : "its processes (Postgres not counted)",
        value: share(),
        failed: false,
      },
      5,
      (v) => `${cpu(v)}% of one core`,
    ),
    bound(
      `${keyedLabel} beside ${flood} ≥ 50% of its unloaded throughput`,
      { label: keyedLabel, value: throughput, failed: keyedFailed },
      0.5,
      pct,
      true,
    ),
    bound(
      `${keyedLabel} beside ${flood}: p99 ≤ 3× unloaded`,
      { label: keyedLabel, value: tail, failed: keyedFailed },
      3,
      (v) => `${ratio(v)}× unloaded`,
    ),
  ];
  return { runs: [unloaded, loaded], lines, targets };
}

/** Two hosts' checks beside one's, and both hosts' rates, as modelled from per-answer CPU (see scaleSection). */
export function twoHostsOverOne(c: { host: number; primary: number; primaryIdle: number; cores: number }) {
  // H hosts of `cores` each serve H·cores/host answers a second, as long as a primary of as many
  // cores keeps up: its idle work for each replica, and `primary` per answer.
  const served = (hosts: number) =>
    Math.min((hosts * c.cores) / c.host, c.primary > 0 ? (c.cores - hosts * c.primaryIdle) / c.primary : Infinity);
  return { one: served(1), two: served(2), ratio: served(2) / served(1) };
}

/**
 * The scale section's (bench/scale.ts) runs, lines and targets: per 200 answer beyond idle, the CPU
 * of a replica host (its processes and reading backends) and of the primary (its access
 * connections), and what two hosts serve beside one, modelled.
 */
function scaleSection(env: Environment, sc: ScaleFigures) {
  const visible = sc.idle.postgres !== undefined;
  const host = (c: SpanCpu) => c.replica + (c.postgres ?? 0) - (c.access ?? 0);
  const primary = (c: SpanCpu) => c.access ?? 0;
  const per = (run: ScaleRun, part: (c: SpanCpu) => number) =>
    beyondIdle(run.cpu, sc.idle, part) / (run.result.statuses["200"] ?? NaN);
  const modelled = (run: ScaleRun) => {
    const costs = { host: per(run, host), primary: per(run, primary), primaryIdle: primary(sc.idle) / sc.idle.spanS };
    return { ...costs, ...twoHostsOverOne({ ...costs, cores: env.cores }) };
  };
  const us = (seconds: number) => (seconds > 0 ? `${ms(seconds * 1e6)} µs` : "nothing beyond idle");
  // Keyless work is shed under load (429, 503: api/http/load.ts), by design: not a failure here.
  const kinds = [
    { what: "keyed", run: sc.keyed, expected: ["200"] },
    { what: "keyless", run: sc.keyless, expected: ["200", "429", "503"] },
  ];
  const failed = (run: ScaleRun, expected: string[]) =>
    run.result.errors > 0 ||
    !run.result.statuses["200"] ||
    Object.keys(run.result.statuses).some((status) => !expected.includes(status));
  const lines = kinds.map(({ what, run, expected }) => {
    const m = modelled(run);
    return (
      `scale-out, modelled (not measured on two hosts): ${what} checks from every check route at ` +
      `${run.connections} connections (load generator ${cpu(run.result.generatorCpu)}% of one core), per 200 ` +
      `answer beyond idle: a replica host ${us(m.host)} of CPU (the replica's processes and its reading ` +
      `backends), the primary ${us(m.primary)} (its access connections) and ${cpu(100 * m.primaryIdle)}% of a ` +
      `core idle per replica; hosts and primary of ${env.cores} cores: one host ${int(m.one)} answers/s, two ` +
      `${int(m.two)}: ${ratio(m.ratio)}×; answered ${statusText(run.result, expected)}`
    );
  });
  const targets: Target[] = kinds.map(({ what, run, expected }) =>
    bound(
      `two replica hosts on two standbys serve ≥ 1.8× the ${what} checks of one (modelled from CPU per answer)`,
      {
        label: visible ? `${what} checks` : `${what} checks (Postgres's backends not visible here: not modelled)`,
        value: modelled(run).ratio,
        failed: !visible || failed(run, expected),
      },
      1.8,
      (v) => `${ratio(v)}×`,
      true,
    ),
  );
  // The keyless run's answers are in its line: its shed ones would read as failures in the table.
  return { runs: [sc.keyed], lines, targets };
}

/** The report of `--hostile` alone: its setup, its runs, its lines and its targets. */
export function hostileReport(
  o: BenchOptions,
  env: Environment,
  h: HostileFigures,
  size: Size,
  verified: Verified,
): string {
  const hostile = hostileSection(o, h);
  return [
    title(o, env, "the hostile section alone; "),
    `setup: one machine, ${env.cores} cores shared by everything: the load generators (autocannon ` +
      `${env.autocannon}, each its own process), npm run serve with TRUSTED_PROXY=true (${env.apiWorkers} worker ` +
      `processes), Postgres 15, anvil and the indexer; the ${database(size)} as npm run bench seeds it.`,
    `verified: ${int(verified.answers)} sampled answers before the keyed runs, all as the seeded data implies.`,
    "",
    ...table(o, hostile.runs, undefined),
    "",
    ...hostile.lines,
    "",
    ...targetLines(hostile.targets),
  ].join("\n");
}

/** The bench's report: the figures, their setup, and the targets met or missed. */
export function report(
  o: BenchOptions,
  env: Environment,
  s: ServingFigures,
  b: BackfillFigures,
  start: PgliteStartFigures,
): string {
  const hello = s.hello.result.rps;
  const hostile = hostileSection(o, s.hostile);
  const scale = scaleSection(env, s.scale);
  const all = [
    s.hello,
    s.ponder,
    start.check,
    ...[...s.small.checks, ...s.large.checks].flatMap((c) => [c, c.ethCall]),
    ...s.large.listings,
    s.large.smallListing,
    ...s.past.checks.flatMap((c) => [c.alone, c.loaded]),
    ...s.past.batches,
    ...s.past.listings,
    ...s.integrators.vaults,
    ...s.integrators.bulk,
    ...s.history.pages,
    ...s.history.walletPages,
    ...hostile.runs,
    ...scale.runs,
  ];
  const [small, large] = [database(s.small.size), database(s.large.size)];

  // Targets. Latency targets are taken alone (1 connection); at 64 connections a p50 is mostly the
  // queue before it (p50 ≈ 64 / throughput).
  const checks = s.large.checks;
  // Each route at both sizes as a share of the hello run just before it (serving.ts, CheckFigure).
  const bothSizes = [...s.small.checks, ...checks];
  const lowest = worstOf(bothSizes, share, false);
  // Each route beside anvil's eth_call of the same checks, both held to the hello run before them.
  const nearestAnvil = worstOf(
    bothSizes,
    (c) => (failures(c.ethCall.result) > 0 ? undefined : share(c) / share(c.ethCall)),
    false,
  );
  const tail = worstOf(bothSizes, (c) => (c.result.p99 ?? NaN) / ((c.hello.p99 ?? NaN) + TAIL_MS));
  const fewestQueries = [
    ...bothSizes.flatMap((c) => [c, c.ethCall]),
    s.large.smallListing,
    ...s.past.checks.map((c) => c.loaded),
  ].reduce((a, f) => (f.queries < a.queries ? f : a));
  const slowest = worst(bothSizes, (r) => r.p99);
  const helloP99s = bothSizes.map((c) => c.hello.p99 ?? NaN);
  const drift = worst(
    checks.map((c, i) => ({
      ...c,
      label: c.route,
      result: { ...c.result, rps: share(c) / share(s.small.checks[i]!) },
    })),
    (r) => Math.max(r.rps, 1 / r.rps),
  );
  const [fewest, most] = [Math.min(...o.hot), Math.max(...o.hot)];
  const listing = (size: number) =>
    worst(
      s.large.listings.filter((l) => l.delegations === size && l.connections === 1),
      (r) => r.p50,
    );
  const backfillRate = b.events / (b.backfillMs / 1000);
  const baselineRate = b.events / (b.baseline.backfillMs / 1000);
  const afterEvents = "after its last event: Ponder creating the tables' indexes and triggers";
  const eventsOnly = (f: IndexerFigures) => b.events / ((f.backfillMs - f.finishMs) / 1000);
  const splitText = ({ split }: IndexerFigures) =>
    `waiting for its sync ${ms(split.syncMs)} ms, indexing functions ${ms(split.indexMs)} ms, flushing rows ` +
    `${ms(split.flushMs)} ms`;
  const ownWork = ({ split }: IndexerFigures) => split.indexMs + split.flushMs;
  const maxDelay = Math.max(...s.delays);
  const msText = (n: number) => `${ms(n)} ms`;
  const past = s.past;
  const pastLowest = worstOf(
    past.checks.map((c) => c.loaded),
    share,
    false,
  );
  const pastShare = worst(
    past.checks.map((c) => ({
      ...c.loaded,
      result: { ...c.loaded.result, rps: c.loaded.result.rps / c.head.result.rps },
    })),
    (r) => r.rps,
    false,
  );
  /** The highest p50 of the runs at the head, or (`atPast`) of those at past blocks. */
  const slowest50 = (figures: readonly PastFigure[], atPast: boolean) =>
    worst(
      figures.filter((f) => f.past === atPast),
      (r) => r.p50,
    );
  const where = (atPast: boolean) => (atPast ? "at a past block" : "at the head");
  const rate = (read: HistoryRead) => read.events / (read.ms / 1000);
  const slowestRead = s.history.reads.reduce((a, r) => (rate(r) < rate(a) ? r : a));
  const alonePages = s.history.walletPages.filter((f) => f.connections === 1);
  const pages = worst(
    alonePages.flatMap((f) =>
      Object.entries(f.result.groups).map(([group, g]) => ({
        ...f,
        label: `${f.label}, ${group}`,
        result: { ...f.result, p50: g.p50 },
      })),
    ),
    (r) => r.p50,
  );
  /** The replica's whole resident memory, per delegation it holds. */
  const perDelegation = (rssMb: number, size: Size) => (rssMb * 2 ** 20) / (size.v2 + size.v1);
  const loadedListings = s.large.listings.filter((f) => f.connections === o.connections);
  const loadedPages = s.history.walletPages.filter((f) => f.connections === o.connections);
  const unanswered = loadedPages.filter((f) => failures(f.result) > 0);
  const pageSize = int(o.listingPage);
  const targets: Target[] = [
    bound(
      `each load route cycles through ≥ ${int(MIN_QUERIES)} different queries (every check route and anvil's ` +
        "eth_call of it at both sizes, the small wallets' listing, the checks at past blocks)",
      { label: `fewest ${fewestQueries.label}`, value: fewestQueries.queries, failed: false },
      MIN_QUERIES,
      (v) => `${int(v)} different requests`,
      true,
    ),
    bound(
      "every check route ≥ 60% of hello's throughput, at both sizes, each run beside a hello run just before it",
      { ...lowest, label: `lowest ${lowest.label}` },
      0.6,
      pct,
      true,
    ),
    bound(
      "every check route ≥ anvil's eth_call of the same checks, at both sizes, each as a share of the hello run " +
        "just before the two",
      { ...nearestAnvil, label: `nearest ${nearestAnvil.label}` },
      1,
      (v) =>
        `${ratio(v)}× anvil's (${ratio(share(nearestAnvil.figure))} of its hello, anvil's eth_call ` +
        `${ratio(share(nearestAnvil.figure.ethCall))})`,
      true,
    ),
    bound(
      `each check route's p99 ≤ its hello run's p99 + ${TAIL_MS} ms at ${o.connections} connections, at both sizes`,
      { ...tail, label: `worst ${tail.label}` },
      1,
      (v) =>
        `p99 ${msText(tail.figure.result.p99 ?? NaN)} against its hello's ${msText(tail.figure.hello.p99 ?? NaN)} + ` +
        `${TAIL_MS} ms: ${ratio(v)}× its limit`,
    ),
    bound(
      `a small wallet's v2 listing ≥ 40% of hello's throughput at ${o.connections} connections, beside a hello run ` +
        "just before it",
      worstOf([s.large.smallListing], share, false),
      0.4,
      pct,
      true,
    ),
    bound(
      "npm start alone, as the README's first command runs it (PGlite, no replicas), v2 check all ≥ 40% of hello's " +
        "throughput, beside a hello run just before it",
      worstOf([start.check], share, false),
      0.4,
      pct,
      true,
    ),
    bound(
      "npm start's API on Postgres (no replicas), v2 check all ≥ 30% of hello's throughput, beside a hello run " +
        "just before it",
      worstOf([s.ponder], share, false),
      0.3,
      pct,
      true,
    ),
    bound(
      `p99 ≤ 10 ms at ${o.connections} connections, every check route at both sizes`,
      { ...slowest, label: `highest ${slowest.label}` },
      10,
      (v) =>
        `${msText(v)} (hello's own p99 in the runs just before the checks: ` +
        `${ms(Math.min(...helloP99s))}–${ms(Math.max(...helloP99s))} ms)`,
    ),
    ...[[fewest, 5] as const, [most, 50] as const].map(([size, limit]) =>
      bound(
        `listing of a ${int(size)}-delegation wallet p50 ≤ ${limit} ms (1 connection)`,
        listing(size),
        limit,
        msText,
      ),
    ),
    {
      met: loadedListings.length > 0 && loadedListings.every((f) => failures(f.result) === 0),
      what: `every whole listing answered at ${o.connections} connections`,
      detail: loadedListings
        .map(
          (f) =>
            `${f.label}: ${failures(f.result) === 0 ? `${int(f.result.requests)} answered` : failureText(f.result, o)}`,
        )
        .join("; "),
    },
    bound(
      `throughput within 20% between the ${small} and the ${large} (each run as a share of a hello run just before it)`,
      { ...drift, label: `furthest ${drift.label}` },
      1.25,
      (v) => `${ratio(v)}× between the two`,
    ),
    {
      met: backfillRate >= 0.8 * baselineRate && b.peakRssMb <= 1536,
      what:
        "backfill ≥ 80% of the events/s of a minimal Ponder indexer (bench/baseline) over the same blocks, with " +
        "≤ 1.5 GB peak RSS",
      detail:
        `${int(backfillRate)} events/s, ${ratio(backfillRate / baselineRate)}× the minimal indexer's ` +
        `${int(baselineRate)}; ${int(b.peakRssMb)} MB` +
        (backfillRate < 0.8 * baselineRate ? `; events/s ${missedBelow(backfillRate, 0.8 * baselineRate)}` : "") +
        (b.peakRssMb > 1536 ? `; RSS ${missedAbove(b.peakRssMb, 1536)}` : ""),
    },
    {
      met: backfillRate >= 10_000 && b.peakRssMb <= 1024,
      what: "backfill ≥ 10,000 events/s with ≤ 1 GB RSS",
      detail:
        `${int(backfillRate)} events/s, ${int(b.peakRssMb)} MB` +
        (backfillRate < 10_000 ? `; events/s ${missedBelow(backfillRate, 10_000)}` : "") +
        (b.peakRssMb > 1024 ? `; RSS ${missedAbove(b.peakRssMb, 1024)}` : ""),
    },
    bound(
      "a new delegation answered ≤ 1 block + 0.5 s after inclusion",
      { label: `the slowest of ${s.delays.length}`, value: maxDelay, failed: false },
      1500,
      (v) => `${int(v)} ms (block time 1 s)`,
    ),
    bound(
      `API process RSS with the ${large} ≤ 1 GB`,
      { label: "npm run serve", value: s.apiMemory.rssMb, failed: false },
      1024,
      (v) => `${int(v)} MB`,
    ),
    bound(
      "a check at a past block p50 ≤ 2 ms (1 connection), every check route",
      worst(
        past.checks.map((c) => c.alone),
        (r) => r.p50,
      ),
      2,
      msText,
    ),
    bound(
      `a check at a past block ≥ 25% of the same check's throughput at the head (${o.connections} connections)`,
      pastShare,
      0.25,
      pct,
      true,
    ),
    bound(
      `a check at a past block ≥ 30% of hello's throughput at ${o.connections} connections, every check route, ` +
        "each beside a hello run just before it",
      { ...pastLowest, label: `lowest ${pastLowest.label}` },
      0.3,
      pct,
      true,
    ),
    bound(
      `a batch of ${int(o.batchSize)} checks at the head p50 ≤ 100 ms (1 connection)`,
      slowest50(past.batches, false),
      100,
      msText,
    ),
    bound(
      `a batch of ${int(o.batchSize)} checks at a past block p50 ≤ 1 s (1 connection)`,
      slowest50(past.batches, true),
      1000,
      msText,
    ),
    bound(
      `listing of a ${int(fewest)}-delegation wallet at a past block p50 ≤ 20 ms (1 connection)`,
      worst(past.listings, (r) => r.p50),
      20,
      msText,
    ),
    ...[[false, 2] as const, [true, 20] as const].map(([atPast, limit]) =>
      bound(
        `v2 vaults of a hot wallet with ${int(o.vaultIncoming)} incoming delegations ${where(atPast)} ` +
          `p50 ≤ ${limit} ms (1 connection), type all and erc20`,
        slowest50(s.integrators.vaults, atPast),
        limit,
        msText,
      ),
    ),
    ...[[false, 100] as const, [true, 500] as const].map(([atPast, limit]) =>
      bound(
        `a v2 bulk listing of ${int(o.bulkSize)} wallets of ~10 delegations ${where(atPast)} ` +
          `p50 ≤ ${limit} ms (1 connection)`,
        slowest50(s.integrators.bulk, atPast),
        limit,
        msText,
      ),
    ),
    bound(
      `a page of ${o.historyPage} history events p50 ≤ 5 ms at any depth (1 connection)`,
      worst(s.history.pages, (r) => r.p50),
      5,
      msText,
    ),
    bound(
      `the whole chain-wide history read by following Link at limit=${o.readPage} ≥ 50,000 events/s`,
      { label: slowestRead.label, value: rate(slowestRead), failed: false },
      50_000,
      (v) => `${int(v)} events/s`,
      true,
    ),
    bound(
      `a ${int(most)}-delegation wallet in pages of ${pageSize}: each page p50 ≤ 10 ms (1 connection)`,
      pages,
      10,
      msText,
    ),
    {
      met: loadedPages.length > 0 && unanswered.length === 0,
      what:
        `a ${int(most)}-delegation wallet in pages of ${pageSize} at ${o.connections} connections: ` +
        "every request answered",
      detail:
        unanswered.length === 0
          ? `${loadedPages.map((f) => `${f.label}: ${int(f.result.requests)} answered`).join(", ")}, ` +
            "none failed or timed out"
          : unanswered.map((f) => `${f.label}: ${failureText(f.result, o)}`).join("; "),
    },
    ...hostile.targets,
    ...scale.targets,
  ];

  const lines = [
    title(o, env, ""),
    `setup: one machine, ${env.cores} cores shared by everything: the load generator (autocannon ${env.autocannon}, ` +
      `its own process, ${o.connections} connections, ${o.durationS} s runs after ${o.warmupS} s warm-up, requests ` +
      `drawn at random from each route's list), the server under test (npm run serve and the hello server with ` +
      `${env.apiWorkers} worker processes each), Postgres 15, anvil and the indexer.`,
    `data: small ${small} (${int(s.small.size.v2)} v2, ${int(s.small.size.v1)} v1, seeded in ` +
      `${seconds(s.small.size.seedMs)}); large ${large} (${int(s.large.size.v2)} v2, ${int(s.large.size.v1)} v1 over ` +
      `${int(s.large.size.wallets)} wallets, hot wallets of ${o.hot.map(int).join(", ")} delegations per registry, ` +
      `${int(o.vaultWallets)} v2 hot wallets of ${int(o.vaultIncoming)} incoming delegations each from a vault of ` +
      `its own, ${int(o.bulkWallets)} v2 wallets of ${Math.min(...BULK_SIZES)}–${Math.max(...BULK_SIZES)} ` +
      "delegations; " +
      `a history of ${int(s.large.size.v2Events)} v2 and ${int(s.large.size.v1Events)} v1 events over ` +
      `${int(s.large.size.blocks)} blocks; seeded in ${seconds(s.large.size.seedMs)}).`,
    `verified: ${int(s.verified.answers)} sampled answers before the runs, all as the seeded data implies ` +
      `(${pct(s.verified.positive / s.verified.checks)} of ${int(s.verified.checks)} checks true or non-zero); ` +
      "every page of the whole-history reads.",
    "",
    ...table(o, all, hello),
    "",
    "checks, each run's req/s as a share of a hello run just before it, small / large: " +
      checks.map((c, i) => `${c.route} ${ratio(share(s.small.checks[i]!))} / ${ratio(share(c))}`).join(", "),
    "anvil's eth_call of the same checks, each run's req/s as a share of the hello run before the check's, " +
      "small / large: " +
      checks
        .map((c, i) => `${c.route} ${ratio(share(s.small.checks[i]!.ethCall))} / ${ratio(share(c.ethCall))}`)
        .join(", "),
    "checks' p99 beside their hello run's, in ms, small / large: " +
      checks
        .map((c, i) => {
          const both = (f: CheckFigure) => `${ms(f.result.p99)} (hello ${ms(f.hello.p99)})`;
          return `${c.route} ${both(s.small.checks[i]!)} / ${both(c)}`;
        })
        .join(", "),
    ...s.history.reads.map(
      (r) =>
        `history: ${r.label}: ${int(r.events)} events in ${int(r.pages)} pages, ${int(rate(r))} events/s of the ` +
        `pages' own time (${seconds(r.ms)}; page p50 ${ms(r.pageP50)} ms); machine ${cpu(r.machineCpu)}%, others ` +
        `${cpu(r.othersCpu)}%`,
    ),
    ...alonePages.map(
      (f) =>
        `pages: ${f.label}: p50 by page ` +
        Object.entries(f.result.groups)
          .sort(([a], [b]) => Number(a.split(" ")[1]) - Number(b.split(" ")[1]))
          .map(([group, g]) => `${group.split(" ")[1]}: ${ms(g.p50)}`)
          .join(", ") +
        " ms",
    ),
    `indexing: backfill of ${int(b.events)} v2 events in ${int(b.blocks)} blocks: ${int(backfillRate)} events/s in ` +
      `Ponder's backfill phase (${seconds(b.backfillMs)}, of which ${ms(b.finishMs)} ms ${afterEvents}), ` +
      `${int(b.events / (b.readyMs / 1000))} events/s from process start to ready (${seconds(b.readyMs)}), peak RSS ` +
      `${int(b.peakRssMb)} MB (indexer process tree)`,
    `indexing, the minimal Ponder indexer (bench/baseline: one insert per event, no index) over the same blocks: ` +
      `${int(baselineRate)} events/s in its backfill phase (${seconds(b.baseline.backfillMs)}, of which ` +
      `${ms(b.baseline.finishMs)} ms ${afterEvents}), peak RSS ${int(b.baseline.peakRssMb)} MB`,
    `indexing, the events alone (the backfill phase up to its last event): ` +
      `${ratio(eventsOnly(b) / eventsOnly(b.baseline))}× the minimal indexer's events/s`,
    `indexing, each backfill by Ponder's own account (its /metrics): the indexer ${splitText(b)}; the minimal ` +
      `indexer ${splitText(b.baseline)}; functions and flushes ${ratio(ownWork(b) / ownWork(b.baseline))}× the ` +
      "minimal indexer's",
    `indexing, npm start alone on PGlite (the README's first command) over ${int(start.events)} events of the ` +
      `same kind: ${int(start.events / (start.backfillMs / 1000))} events/s in its backfill phase ` +
      `(${seconds(start.backfillMs)}), peak RSS ${int(start.peakRssMb)} MB`,
    `delay: a new delegation answered by npm run serve ${int(median(s.delays))} ms (median), ${int(maxDelay)} ms ` +
      `(max) after its block was seen mined, ${s.delays.length} samples, block time 1 s`,
    `memory: npm run serve RSS after the load runs (${s.apiMemory.processes} processes): ` +
      `${int(s.small.apiMemory.rssMb)} MB with the ${small}, ${int(s.apiMemory.rssMb)} MB (peak ` +
      `${int(s.apiMemory.peakMb)} MB) with the ${large}; per delegation ` +
      `${int(perDelegation(s.small.apiMemory.rssMb, s.small.size))} and ` +
      `${int(perDelegation(s.apiMemory.rssMb, s.large.size))} bytes`,
    ...hostile.lines,
    ...scale.lines,
    "",
    ...targetLines(targets),
  ];
  return lines.join("\n");
}
