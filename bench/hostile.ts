/**
 * The service under hostile traffic (what one keyless client can cost it, and what keyed traffic
 * keeps beside a keyless flood), over the large seeded database, on a fresh `npm run serve` started
 * with TRUSTED_PROXY=true (as behind the shipped gateway):
 *
 * (a) One keyless client from one address (the socket's: it sends no X-Forwarded-For), at as many
 *     connections as one client may hold, sends for `o.attackS` seconds, while nothing else loads
 *     the service, what costs most: the largest wallets' whole listings at random past blocks,
 *     history pages of 1,000, 4 MiB batch bodies, and well-formed keys no one issued. What the
 *     service spent on it: the CPU time (/proc/<pid>/stat) of the replica's whole process tree and
 *     of the Postgres backends connected to it (told by their client ports, pg_stat_activity), less
 *     the same span idle, measured just before.
 * (b) A keyed check route unloaded, then again while 64 connections of keyless checks from 1,000
 *     forwarded addresses (each request one X-Forwarded-For of them) run beside it, for as long as
 *     it runs; the keyless answers' statuses.
 *
 * Each load run's generator reports its own CPU (bench/load-worker.ts).
 */
import type pg from "pg";
import { generateKey } from "../api/access/key";
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
import { afterHotBlock, checkRoutes, pastBlock } from "./routes";
import { backendsVisible, beyondIdle, cpuOver, quiet, type SpanCpu, sleep } from "./service-cpu";
import { startServe } from "./stack";

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

/** A batch body of exactly MAX_BATCH_BYTES: `{"checks":[0,0,…,0]}`, the largest body a batch may send. */
function largestBody(): string {
  const [head, tail] = ['{"checks":[', "0]}"];
  return `${head}${"0,".repeat((MAX_BATCH_BYTES - head.length - tail.length) / 2)}${tail}`;
}

/** What the attacker of (a) sends: four kinds, each drawn as often as the others (see the module's head). */
export function attackRequests(data: Dataset, seed: number): LoadRequest[] {
  const rng = new Rng(seed);
  const chainId = String(data.chainId);
  const versions = ["v2", "v1"] as const;
  const largest = (version: "v1" | "v2") => [...data.hot[version]].reduce((a, b) => (b[1].size > a[1].size ? b : a))[0];
  const variants = (make: () => LoadRequest) => Array.from({ length: VARIANTS }, make);
  const body = largestBody();
  return [
    ...versions.flatMap((v) =>
      variants(() => ({
        method: "GET",
        path: `/registry/${v}/${largest(v)}?chainId=${chainId}&blockNumber=${afterHotBlock(data, rng)}`,
      })),
    ),
    ...versions.flatMap((v) =>
      variants(() => ({
        method: "GET",
        path: `/registry/${v}/history?chainId=${chainId}&limit=1000&fromBlock=${pastBlock(data, rng)}`,
      })),
    ),
    // One body each, drawn as often as the other kinds' many requests.
    ...versions.map(
      (v): LoadRequest => ({
        method: "POST",
        path: `/registry/${v}/check`,
        body,
        headers: { "Content-Type": "application/json" },
        weight: VARIANTS,
      }),
    ),
    ...variants(() => ({
      method: "GET",
      path: `/registry/v2/check/all?chainId=${chainId}&to=${ADDRESS_1}&from=${ADDRESS_1}`,
      headers: { "X-API-KEY": generateKey().key },
    })),
    ...variants(() => ({
      method: "GET",
      path: `/registry/v1/check/all?chainId=${chainId}&delegate=${ADDRESS_1}&vault=${ADDRESS_1}`,
      headers: { "X-API-KEY": generateKey().key },
    })),
  ];
}

/** The i-th forwarded address of a keyless load (10.0.0.1 on). */
export function forwarded(i: number): string {
  const n = i + 1;
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}

/**
 * `count` of every check route's requests, drawn at random; the i-th sent from the forwarded address
 * `from(i)` when given (keyless loads: each address's budget its own).
 */
export function checkRequests(data: Dataset, seed: number, count: number, from?: (i: number) => string): LoadRequest[] {
  const rng = new Rng(seed);
  const checks = checkRoutes(data, seed).flatMap((route) => route.requests);
  return Array.from({ length: count }, (_, i) => ({
    ...rng.pick(checks),
    ...(from && { headers: { "X-Forwarded-For": from(i) } }),
  }));
}

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
    const tag = `hostile-${process.pid}-${Date.now()}`;
    const { url } = await startServe(cleanup, service, tag, { TRUSTED_PROXY: "true" });
    const visible = await backendsVisible(db);
    await settle(url, service.headers);
    await quiet(tag);
    log(`hostile: npm run serve with TRUSTED_PROXY=true ready; measuring it idle for ${o.attackS} s, then attacked`);

    const idle = await cpuOver(db, tag, visible, () => sleep(o.attackS * 1000 + TAIL_MS));
    const connections = MAX_CONNECTIONS_PER_CLIENT;
    const attacked = await cpuOver(db, tag, visible, async () => {
      const result = await runLoad("hostile: one keyless client", {
        url,
        connections,
        durationS: o.attackS,
        warmupS: 0,
        headers: {},
        requests: attackRequests(data, o.seed + 10),
      });
      await sleep(TAIL_MS);
      return result;
    });
    const attack = { seconds: o.attackS, connections, result: attacked.value, idle: idle.cpu, attacked: attacked.cpu };
    const cost = beyondIdle(attack.attacked, attack.idle) / attack.seconds;
    const seconds = (c: SpanCpu) =>
      `${c.replica.toFixed(2)} / ${c.postgres?.toFixed(2) ?? "-"} over ${c.spanS.toFixed(1)} s`;
    log(
      `hostile: one keyless client at ${connections} connections for ${o.attackS} s cost the service ` +
        `${(100 * cost).toFixed(1)}% of one core beyond idle (answers ${JSON.stringify(attack.result.statuses)}, ` +
        `${attack.result.errors} errors; CPU seconds of its processes / backends: idle ${seconds(idle.cpu)}, ` +
        `attacked ${seconds(attacked.cpu)})`,
    );

    const route = checkRoutes(data, o.seed + 11).find((r) => r.label === "v2 check all")!;
    await settle(url, service.headers);
    const unloaded = await measure(url, route, service.headers, `hostile: ${route.label}, keyed, unloaded`);
    let stop = () => {};
    const flood = runLoad(
      "hostile: keyless flood",
      {
        url,
        connections: FLOOD_CONNECTIONS,
        // Until the keyed run ends (stop), at most this long.
        durationS: 600,
        warmupS: 0,
        headers: {},
        // The keyless flood: every check route's requests, each from one of FLOOD_ADDRESSES.
        requests: checkRequests(data, o.seed + 12, FLOOD_REQUESTS_EACH * FLOOD_ADDRESSES, (i) =>
          forwarded(i % FLOOD_ADDRESSES),
        ),
      },
      new Promise<void>((ok) => {
        stop = ok;
      }),
    );
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
    return {
      attack,
      keyed: {
        route: route.label,
        unloaded,
        loaded,
        keyless,
        connections: FLOOD_CONNECTIONS,
        addresses: FLOOD_ADDRESSES,
      },
    };
  });
}
