/**
 * One load run, in a process of its own (bench/load.ts starts it): autocannon against one server,
 * each request drawn at random from the spec's list (by weight), a warm-up run first. Prints one
 * JSON line of LoadResult. Latencies are kept exactly (autocannon's own histogram has 1 ms steps).
 * SIGINT ends the run early, with what it measured so far.
 */
import { readFileSync } from "node:fs";
import autocannon from "autocannon";
import type { LoadResult, LoadSpec } from "./load";
import { cpuShares } from "./procs";

const spec = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as LoadSpec;

/** Each request's weight added to those of the requests before it. */
const cumulative: number[] = [];
for (const request of spec.requests) cumulative.push((cumulative.at(-1) ?? 0) + (request.weight ?? 1));

/** A request's index, drawn by weight. */
function pick(): number {
  const drawn = Math.random() * cumulative.at(-1)!;
  let [low, high] = [0, cumulative.length - 1];
  while (low < high) {
    const middle = (low + high) >> 1;
    if (cumulative[middle]! > drawn) high = middle;
    else low = middle + 1;
  }
  return low;
}

let running: autocannon.Instance | undefined;
let stopped = false;
process.once("SIGINT", () => {
  stopped = true;
  running?.stop();
});

type Run = { result: autocannon.Result; latencies: Float64Array; ok: number; groups: Map<string, number[]> };

function run(durationS: number): Promise<Run> {
  const latencies = new Float64Array(4_000_000);
  const groups = new Map<string, number[]>();
  let ok = 0;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        duration: durationS,
        headers: spec.headers,
        ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
        ...(spec.timeoutS ? { timeout: spec.timeoutS } : {}),
        // The connection's context remembers the request it sent: one at a time per connection
        // (no pipelining), and its response is reported before the next is set up.
        requests: [
          {
            setupRequest: (request, context: { picked?: number }) => {
              context.picked = pick();
              const { group: _, weight: __, headers, ...picked } = spec.requests[context.picked]!;
              return { ...request, ...picked, headers: { ...request.headers, ...headers } };
            },
          },
        ],
      },
      (error, result) =>
        error
          ? reject(error)
          : resolve({ result, latencies: latencies.subarray(0, Math.min(ok, latencies.length)), ok, groups }),
    );
    running = instance;
    if (stopped) instance.stop();
    instance.on("response", (client, status, _bytes, ms) => {
      if (status < 200 || status >= 300) return;
      if (ok < latencies.length) latencies[ok] = ms;
      ok++;
      const picked = (client as unknown as { requestIterator: { context: { picked?: number } } }).requestIterator
        .context.picked;
      const group = picked === undefined ? undefined : spec.requests[picked]?.group;
      if (group !== undefined) {
        const list = groups.get(group);
        if (list) list.push(ms);
        else groups.set(group, [ms]);
      }
    });
  });
}

/** Undefined when nothing was answered with a 2xx. */
const percentile = (sorted: ArrayLike<number>, p: number): number | undefined =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

if (spec.warmupS > 0 && !stopped) {
  await run(spec.warmupS);
  // The server sees the warm-up's connections close before the run opens as many: it holds at most
  // 64 of one client's (api/http/server.ts), a busy one closing them late.
  await new Promise((ok) => setTimeout(ok, 500));
}
const [shares, own] = [cpuShares(), process.cpuUsage()];
const { result, latencies, ok, groups } = await run(spec.durationS);
const [cpu, ownUs] = [shares.stop(), process.cpuUsage(own)];
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
  groups: Object.fromEntries(
    [...groups].map(([group, list]) => {
      const sorted = Float64Array.from(list).sort();
      return [group, { requests: list.length, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) }];
    }),
  ),
  errors: result.errors,
  timeouts: result.timeouts,
  generatorCpu: (100 * (ownUs.user + ownUs.system)) / 1e6 / result.duration,
  ...cpu,
};
console.log(JSON.stringify(output));
// Sockets the server closed mid-request (a refused body) can linger until its keep-alive ends:
// the run is over, they are not waited for (a pipe's write is synchronous on Linux: the line is out).
process.exit(0);
