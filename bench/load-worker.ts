/**
 * One load run, in a process of its own (bench/load.ts starts it): autocannon against one server,
 * each request drawn at random from the spec's list, a warm-up run first. Prints one JSON line of
 * LoadResult. Latencies are kept exactly (autocannon's own histogram has 1 ms steps).
 */
import { readFileSync } from "node:fs";
import autocannon from "autocannon";
import type { LoadRequest, LoadResult, LoadSpec } from "./load";
import { machineCpu, RUN_VARIABLE, runCpu, ticksBetween } from "./procs";

const spec = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as LoadSpec;
const ours = () =>
  runCpu(process.env[RUN_VARIABLE] ?? "", new URL(process.env.DATABASE_URL ?? "postgres://-/-").pathname.slice(1));

const pick = (): LoadRequest => spec.requests[Math.floor(Math.random() * spec.requests.length)]!;

function run(durationS: number): Promise<{ result: autocannon.Result; latencies: Float64Array; ok: number }> {
  const latencies = new Float64Array(4_000_000);
  let ok = 0;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        duration: durationS,
        headers: spec.headers,
        ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
        requests: [{ setupRequest: (request) => ({ ...request, ...pick() }) }],
      },
      (error, result) =>
        error
          ? reject(error)
          : resolve({ result, latencies: latencies.subarray(0, Math.min(ok, latencies.length)), ok }),
    );
    instance.on("response", (_client, status, _bytes, ms) => {
      if (status < 200 || status >= 300) return;
      if (ok < latencies.length) latencies[ok] = ms;
      ok++;
    });
  });
}

/** Undefined when nothing was answered with a 2xx. */
const percentile = (sorted: Float64Array, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

if (spec.warmupS > 0) await run(spec.warmupS);
const [cpu, owned, own] = [machineCpu(), ours(), process.cpuUsage()];
const { result, latencies, ok } = await run(spec.durationS);
const [cpuAfter, ownedAfter, ownUs] = [machineCpu(), ours(), process.cpuUsage(own)];
const machineTicks = Math.max(1, cpuAfter.total - cpu.total);
latencies.sort();
const output: LoadResult = {
  rps: ok / result.duration,
  p50: percentile(latencies, 0.5),
  p99: percentile(latencies, 0.99),
  requests: ok,
  non2xx: result.non2xx,
  statuses: Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([status, { count }]) => [status, count ?? 0]),
  ),
  errors: result.errors,
  timeouts: result.timeouts,
  generatorCpu: (100 * (ownUs.user + ownUs.system)) / 1e6 / result.duration,
  machineCpu: (100 * (cpuAfter.busy - cpu.busy)) / machineTicks,
  // The machine's busy time that none of the run's processes account for.
  othersCpu: (100 * Math.max(0, cpuAfter.busy - cpu.busy - ticksBetween(owned, ownedAfter))) / machineTicks,
};
console.log(JSON.stringify(output));
