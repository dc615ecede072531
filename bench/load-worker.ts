/**
 * Load runs, one at a time, in a process of their own that serves every run of the bench
 * (bench/load.ts starts it): each line on stdin is a LoadSpec; autocannon runs it against one
 * server, each request drawn from the spec's list (bench/pick.ts), a warm-up run first, and
 * one JSON line of LoadResult (or of `{ error }`) is printed. Latencies are kept exactly
 * (autocannon's own histogram has 1 ms steps). A line `stop` ends the current run early, with what
 * it measured so far; the end of stdin (the bench has exited) ends the process.
 */
import { createInterface } from "node:readline";
import autocannon from "autocannon";
import type { LoadResult, LoadSpec } from "./load";
import { picker } from "./pick";
import { cpuShares } from "./procs";

/** The run under way: whether it was told to stop, and its autocannon instance (warm-up or run). */
type Current = { stopped: boolean; instance?: autocannon.Instance };

type Run = { result: autocannon.Result; latencies: Float64Array; ok: number; groups: Map<string, number[]> };

/**
 * One autocannon run of `durationS`; with `untilAnsweredS`, it may go on that much longer, and ends
 * as soon as each of the spec's groups (or, without groups, the run) has a 2xx answer.
 */
function run(spec: LoadSpec, current: Current, durationS: number, untilAnsweredS = 0): Promise<Run> {
  const pick = picker(spec.requests);
  const latencies = new Float64Array(4_000_000);
  const groups = new Map<string, number[]>();
  const needed = new Set(spec.requests.map((r) => r.group).filter((g) => g !== undefined)).size;
  let [ok, due] = [0, false];
  const answered = () => ok > 0 && groups.size >= needed;
  let timer: NodeJS.Timeout | undefined;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        duration: durationS + untilAnsweredS,
        // A run ends at the first sample after its duration: samples every second would make a
        // run of a quarter second (--smoke) last a whole one.
        sampleInt: 100,
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
      (error, result) => {
        clearTimeout(timer);
        if (error) reject(error);
        else resolve({ result, latencies: latencies.subarray(0, Math.min(ok, latencies.length)), ok, groups });
      },
    );
    current.instance = instance;
    if (current.stopped) instance.stop();
    if (untilAnsweredS > 0)
      timer = setTimeout(() => {
        due = true;
        if (answered()) instance.stop();
      }, durationS * 1000);
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
      if (due && answered()) instance.stop();
    });
  });
}

/** Undefined when nothing was answered with a 2xx. */
const percentile = (sorted: ArrayLike<number>, p: number): number | undefined =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

async function measure(spec: LoadSpec, current: Current): Promise<LoadResult> {
  if (spec.warmupS > 0 && !current.stopped) {
    await run(spec, current, spec.warmupS);
    // The server sees the warm-up's connections close before the run opens as many: it holds at most
    // 64 of one client's (api/http/server.ts), a busy one closing them late.
    await new Promise((ok) => setTimeout(ok, 500));
  }
  const [shares, own] = [cpuShares(), process.cpuUsage()];
  const { result, latencies, ok, groups } = await run(spec, current, spec.durationS, spec.untilAnsweredS);
  const [cpu, ownUs] = [shares.stop(), process.cpuUsage(own)];
  latencies.sort();
  return {
    rps: ok / result.duration,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    requests: ok,
    sent: result.requests.sent,
    durationS: result.duration,
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
}

let current: Current | undefined;
let queue = Promise.resolve();
const input = createInterface({ input: process.stdin });
input.on("line", (line) => {
  if (line === "stop") {
    if (current) current.stopped = true;
    current?.instance?.stop();
    return;
  }
  // Set now, not when the run starts: a `stop` read in the same chunk is this run's.
  const mine: Current = { stopped: false };
  current = mine;
  const spec = JSON.parse(line) as LoadSpec;
  queue = queue
    .then(() => measure(spec, mine))
    .then(
      (result) => console.log(JSON.stringify(result)),
      (error: Error) => console.log(JSON.stringify({ error: error.stack ?? String(error) })),
    );
});
// Sockets the server closed mid-request (a refused body) can linger until their keep-alive ends:
// they are not waited for once the bench has gone.
input.on("close", () => void queue.then(() => process.exit(0)));
