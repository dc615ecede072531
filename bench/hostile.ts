/**
 * The service under hostile traffic, and scale-out's CPU figures, each over the large seeded
 * database on a fresh `npm run serve` started with TRUSTED_PROXY=true (as behind the shipped
 * gateway), measured idle first. What the replica spends: the CPU time (/proc/<pid>/stat) of its
 * whole process tree, and of the Postgres backends connected to it (told by their client ports in
 * pg_stat_activity), those of its access connections (the keys and the keyless budget: on a hot
 * standby's replica, the primary's work) apart.
 *
 * (a) One keyless client from one address (the socket's: it sends no X-Forwarded-For), at as many
 *     connections as one client may hold, sends for `o.attackS` seconds what costs most: the
 *     largest wallets' whole listings at random past blocks, history pages of 1,000, 4 MiB batch
 *     bodies, and well-formed keys no one issued.
 * (b) A keyed check route unloaded, then again while 64 connections of keyless checks from 1,000
 *     forwarded addresses (each request one X-Forwarded-For of them) run beside it, for as long as
 *     it runs; the keyless answers' statuses.
 * Scale-out, modelled (one machine cannot give two replica hosts two cores each): every check
 * route's requests, keyed and then keyless (each from a forwarded address of its own, so that no
 * budget runs out); bench/report.ts models from the CPU per 200 answer what two hosts serve.
 */
import type pg from "pg";
import { generateKey } from "../api/access/key";
import { ACCESS_APPLICATION_NAMES } from "../api/access/open";
import { MAX_CONNECTIONS_PER_CLIENT } from "../api/http/server";
import { MAX_BATCH_BYTES } from "../api/limits";
import { Rng } from "../devkit/random";
import type { Service } from "../devkit/service";
import { ADDRESS_1 } from "../devkit/v2/generate";
import type { Cleanup } from "./cleanup";
import type { Dataset } from "./dataset";
import { type LoadRequest, type LoadResult, runLoad } from "./load";
import { type RouteFigure, type RouteMeasurer, settle } from "./measure";
import type { BenchOptions } from "./options";
import { localPorts, processCommand, processTicks, taggedPids, ticksBetween, ticksPerSecond } from "./procs";
import { afterHotBlock, checkRoutes, distinctRequests, pastBlock } from "./routes";
import { startServe } from "./stack";

/**
 * CPU time over a span of `spanS` seconds, in seconds: the replica's processes', and its Postgres
 * backends' (undefined: not visible here), of which `access` on its access connections, and
 * `backends` were there at its end.
 */
export type SpanCpu = { spanS: number; replica: number; postgres?: number; access?: number; backends: number };

export type HostileFigures = {
  /** (a): the attack's answers, and the service's CPU over it and over the same span idle. */
  attack: { seconds: number; connections: number; result: LoadResult; idle: SpanCpu; attacked: SpanCpu };
  /** (b): the keyed route unloaded and beside the keyless flood; the flood's own run. */
  keyed: {
    route: string;
    unloaded: RouteFigure;
    loaded: RouteFigure;
    keyless: LoadResult;
    connections: number;
    addresses: number;
  };
};

/** A load run of the scale section, and what the replica spent over it. */
export type ScaleRun = RouteFigure & { cpu: SpanCpu };
export type ScaleFigures = { idle: SpanCpu; keyed: ScaleRun; keyless: ScaleRun };

/** Connections of the keyless flood beside the keyed route, and the forwarded addresses it comes from. */
const FLOOD_CONNECTIONS = 64;
const FLOOD_ADDRESSES = 1_000;
/** Distinct requests of the flood from each address. */
const FLOOD_REQUESTS_EACH = 8;
/** Distinct requests of each kind the attacker sends. */
const VARIANTS = 100;
/** After the attack: work it left queued is still its own. */
const TAIL_MS = 2_000;
/** The flood runs this long before the keyed run starts (and is verified, warmed up, measured). */
const FLOOD_LEAD_MS = 2_000;
/** Distinct requests of each scale run: every check route's, drawn at random. */
const SCALE_REQUESTS = 20_000;
/** Before an idle span: under this share of one core for a second, at most this long. */
const QUIET_SHARE = 0.1;
const QUIET_WAIT_MS = 30_000;

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/** The CPU seconds of the whole service in a span: its processes' and its backends'. */
export const wholeService = (c: SpanCpu) => c.replica + (c.postgres ?? 0);

/** The CPU seconds of `part` of the service in `span` beyond what it spends idle, at its rate in `idle`. */
export const beyondIdle = (span: SpanCpu, idle: SpanCpu, part: (c: SpanCpu) => number = wholeService) =>
  part(span) - (part(idle) / idle.spanS) * span.spanS;

/**
 * A fresh replica with TRUSTED_PROXY=true, settled (under QUIET_SHARE of one core over a second, at
 * most QUIET_WAIT_MS: one just started may still be settling what it loaded, which is no idle), and
 * `over(work)`: `work`'s value, and what the replica spent while it ran (backends alive at its end).
 */
async function quietReplica(cleanup: Cleanup, db: pg.Client, service: Service, tag: string) {
  const { url } = await startServe(cleanup, service, tag, { TRUSTED_PROXY: "true" });
  const { rows } = await db.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
  // Whether this machine's /proc shows Postgres's backends (else Postgres runs elsewhere, or in a container).
  const visible = processCommand(rows[0]!.pid)?.startsWith("postgres") ?? false;
  const hz = ticksPerSecond();
  await settle(url, service.headers);
  for (let waited = 0; waited < QUIET_WAIT_MS; waited += 1_000) {
    const before = processTicks(taggedPids(tag));
    await sleep(1_000);
    if (ticksBetween(before, processTicks(taggedPids(tag))) / hz < QUIET_SHARE) break;
  }
  const ticks = async () => {
    const pids = taggedPids(tag);
    if (!visible) return { replica: processTicks(pids) };
    const ports = localPorts(pids);
    const { rows } = await db.query<{ pid: number; port: number; name: string }>(
      "SELECT pid, client_port AS port, application_name AS name FROM pg_stat_activity WHERE client_port IS NOT NULL",
    );
    const backends = rows.filter((r) => ports.has(r.port));
    const access = backends.filter((r) => Object.values(ACCESS_APPLICATION_NAMES).includes(r.name));
    const [postgres, keys] = [backends, access].map((list) => processTicks(list.map((r) => r.pid)));
    return { replica: processTicks(pids), postgres, access: keys };
  };
  const over = async <T>(work: () => Promise<T>): Promise<{ value: T; cpu: SpanCpu }> => {
    const [started, before] = [performance.now(), await ticks()];
    const value = await work();
    const after = await ticks();
    const spent = (key: "postgres" | "access") => after[key] && ticksBetween(before[key]!, after[key]) / hz;
    const replica = ticksBetween(before.replica, after.replica) / hz;
    const spanS = (performance.now() - started) / 1000;
    const cpu = { spanS, replica, postgres: spent("postgres"), access: spent("access") };
    return { value, cpu: { ...cpu, backends: after.postgres?.size ?? 0 } };
  };
  return { url, over };
}

/** What the attacker of (a) sends: four kinds, each drawn as often as the others (see the module's head). */
export function attackRequests(data: Dataset, seed: number): LoadRequest[] {
  const rng = new Rng(seed);
  const chainId = String(data.chainId);
  const versions = ["v2", "v1"] as const;
  const largest = (version: "v1" | "v2") => [...data.hot[version]].reduce((a, b) => (b[1].size > a[1].size ? b : a))[0];
  const variants = (make: () => LoadRequest) => Array.from({ length: VARIANTS }, make);
  // A batch body of exactly MAX_BATCH_BYTES: `{"checks":[0,0,…,0]}`.
  const body = `{"checks":[${"0,".repeat((MAX_BATCH_BYTES - '{"checks":[0]}'.length) / 2)}0]}`;
  const path = (version: "v1" | "v2", query: string) => `/registry/${version}/${query}`;
  const keyed = (query: string) =>
    variants(() => ({ method: "GET", path: query, headers: { "X-API-KEY": generateKey().key } }));
  return [
    ...versions.flatMap((v) =>
      variants(() => ({
        method: "GET",
        path: path(v, `${largest(v)}?chainId=${chainId}&blockNumber=${afterHotBlock(data, rng)}`),
      })),
    ),
    ...versions.flatMap((v) =>
      variants(() => ({
        method: "GET",
        path: path(v, `history?chainId=${chainId}&limit=1000&fromBlock=${pastBlock(data, rng)}`),
      })),
    ),
    // One body each, drawn as often as the other kinds' many requests.
    ...versions.map(
      (v): LoadRequest => ({
        method: "POST",
        path: path(v, "check"),
        body,
        headers: { "Content-Type": "application/json" },
        weight: VARIANTS,
      }),
    ),
    ...keyed(path("v2", `check/all?chainId=${chainId}&to=${ADDRESS_1}&from=${ADDRESS_1}`)),
    ...keyed(path("v1", `check/all?chainId=${chainId}&delegate=${ADDRESS_1}&vault=${ADDRESS_1}`)),
  ];
}

/** The i-th forwarded address of a keyless load (10.0.0.1 on). */
const forwarded = (i: number) => {
  const n = i + 1;
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
};

/**
 * `count` of every check route's requests, drawn at random; the i-th sent from the forwarded address
 * `from(i)` when given (keyless loads: each address's budget its own).
 */
function checkRequests(data: Dataset, seed: number, count: number, from?: (i: number) => string): LoadRequest[] {
  const rng = new Rng(seed);
  const checks = checkRoutes(data, seed).flatMap((route) => route.requests);
  return Array.from({ length: count }, (_, i) => ({
    ...rng.pick(checks),
    ...(from && { headers: { "X-Forwarded-For": from(i) } }),
  }));
}

/**
 * The scale section's requests: every check route's, drawn at random; `keyless`: each from a
 * forwarded address of its own, apart from the hostile flood's (it spent theirs).
 */
export const scaleRequests = (data: Dataset, seed: number, keyless = false) =>
  checkRequests(data, seed, SCALE_REQUESTS, keyless ? (i) => forwarded(2 ** 23 + i) : undefined);

/** The hostile section's figures (see the module's head); `measure` verifies a sample of a route, then loads it. */
export async function measureHostile(
  o: BenchOptions,
  cleanup: Cleanup,
  db: pg.Client,
  service: Service,
  data: Dataset,
  measure: RouteMeasurer,
  log: (line: string) => void,
): Promise<HostileFigures> {
  return cleanup.scope(async () => {
    const { url, over } = await quietReplica(cleanup, db, service, `hostile-${process.pid}-${Date.now()}`);
    log(`hostile: npm run serve with TRUSTED_PROXY=true ready; measuring it idle for ${o.attackS} s, then attacked`);
    const idle = await over(() => sleep(o.attackS * 1000 + TAIL_MS));
    const connections = MAX_CONNECTIONS_PER_CLIENT;
    const attacked = await over(async () => {
      const requests = attackRequests(data, o.seed + 10);
      const spec = { url, connections, durationS: o.attackS, warmupS: 0, headers: {}, requests };
      const result = await runLoad("hostile: one keyless client", spec);
      await sleep(TAIL_MS);
      return result;
    });
    const attack = { seconds: o.attackS, connections, result: attacked.value, idle: idle.cpu, attacked: attacked.cpu };
    const seconds = (c: SpanCpu) =>
      `${c.replica.toFixed(2)} / ${c.postgres?.toFixed(2) ?? "-"} over ${c.spanS.toFixed(1)} s`;
    log(
      `hostile: one keyless client at ${connections} connections for ${o.attackS} s cost the service ` +
        `${((100 * beyondIdle(attack.attacked, attack.idle)) / attack.seconds).toFixed(1)}% of one core beyond ` +
        `idle (answers ${JSON.stringify(attack.result.statuses)}, ${attack.result.errors} errors; CPU seconds of ` +
        `its processes / backends: idle ${seconds(idle.cpu)}, attacked ${seconds(attacked.cpu)})`,
    );

    const route = checkRoutes(data, o.seed + 11).find((r) => r.label === "v2 check all")!;
    await settle(url, service.headers);
    const unloaded = await measure(url, route, service.headers, `hostile: ${route.label}, keyed, unloaded`);
    let stop = () => {};
    // Every check route's requests, each from one of FLOOD_ADDRESSES; until the keyed run ends, at most 600 s.
    const requests = checkRequests(data, o.seed + 12, FLOOD_REQUESTS_EACH * FLOOD_ADDRESSES, (i) =>
      forwarded(i % FLOOD_ADDRESSES),
    );
    const spec = { url, connections: FLOOD_CONNECTIONS, durationS: 600, warmupS: 0, headers: {}, requests };
    const flood = runLoad("hostile: keyless flood", spec, new Promise<void>((ok) => (stop = ok)));
    let loaded: RouteFigure;
    let keyless: LoadResult;
    try {
      await sleep(FLOOD_LEAD_MS);
      // No settle first: under the flood, the API is not meant to be idle.
      loaded = await measure(url, route, service.headers, `hostile: ${route.label}, keyed, beside the keyless flood`);
    } finally {
      stop();
      keyless = await flood;
    }
    log(`hostile: the keyless flood's answers ${JSON.stringify(keyless.statuses)}, ${keyless.errors} errors`);
    const keyed = { route: route.label, unloaded, loaded, keyless };
    return { attack, keyed: { ...keyed, connections: FLOOD_CONNECTIONS, addresses: FLOOD_ADDRESSES } };
  });
}

/** The scale section's figures (see the module's head). */
export async function measureScale(
  o: BenchOptions,
  cleanup: Cleanup,
  db: pg.Client,
  service: Service,
  data: Dataset,
  log: (line: string) => void,
): Promise<ScaleFigures> {
  return cleanup.scope(async () => {
    const { url, over } = await quietReplica(cleanup, db, service, `scale-${process.pid}-${Date.now()}`);
    log(`scale: npm run serve ready; measuring it idle for ${o.durationS} s, then under keyed and keyless checks`);
    const { cpu: idle } = await over(() => sleep(o.durationS * 1000));
    const run = async (label: string, headers: Record<string, string>, requests: LoadRequest[]): Promise<ScaleRun> => {
      await settle(url, service.headers);
      const spec = { url, connections: o.connections, durationS: o.scaleDurationS, warmupS: 0, headers, requests };
      const { value: result, cpu } = await over(() => runLoad(label, spec));
      return { label, result, connections: o.connections, queries: distinctRequests(requests), cpu };
    };
    const keyed = await run("scale: every check route, keyed", service.headers, scaleRequests(data, o.seed + 13));
    const keyless = await run("scale: every check route, keyless", {}, scaleRequests(data, o.seed + 13, true));
    return { idle, keyed, keyless };
  });
}
