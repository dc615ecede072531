/**
 * A load run driven by Debian's `wrk` rather than autocannon (bench/load.ts), for figures that must
 * not depend on the load generator: the check routes and anvil's eth_call of the same checks are
 * driven by both. Its Lua script cycles through the run's requests, each thread from a point of its
 * own; latencies are wrk's (its histogram has microsecond steps). wrk takes whole seconds: a
 * warm-up run first, of the warm-up's whole seconds (--smoke's quarter: none), and a run of under a
 * second (--smoke) lasts one.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import type { LoadResult, LoadSpec } from "./load";
import { cpuShares } from "./procs";

/** `text` as a Lua string literal. */
export const luaString = (text: string) =>
  `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n").replace(/\r/g, "\\r")}"`;

/** What the script's done() prints: wrk's summary, its latencies in µs. */
type Summary = {
  requests: number;
  durationUs: number;
  non2xx: number;
  connect: number;
  read: number;
  write: number;
  timeout: number;
  p50: number;
  p99: number;
};

/** The Lua script of a run: its requests (repeated by weight), formatted once per thread. */
export function wrkScript(spec: Pick<LoadSpec, "headers" | "requests">): string {
  const table = (headers: Record<string, string>) =>
    `{${Object.entries(headers)
      .map(([name, value]) => `[${luaString(name)}] = ${luaString(value)}`)
      .join(", ")}}`;
  const entries = spec.requests.flatMap((request) => {
    const headers = table({ ...spec.headers, ...request.headers });
    const body = request.body === undefined ? "nil" : luaString(request.body);
    const entry = `{${luaString(request.method)}, ${luaString(request.path)}, ${headers}, ${body}}`;
    return Array<string>(request.weight ?? 1).fill(entry);
  });
  return `local specs = {\n${entries.join(",\n")}\n}
local formatted = {}
local at = 0
local threads = {}
function setup(thread)
  thread:set("offset", #threads)
  table.insert(threads, thread)
end
function init(args)
  for k, s in ipairs(specs) do formatted[k] = wrk.format(s[1], s[2], s[3], s[4]) end
  at = (offset * 7919) % #formatted
end
function request()
  at = at % #formatted + 1
  return formatted[at]
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"durationUs":%d,"non2xx":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d,"p50":%f,"p99":%f}\\n',
    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;
}

/** Runs wrk once; its summary and the CPU seconds it took. */
function wrkOnce(spec: LoadSpec, script: string, seconds: number): Promise<{ summary: Summary; cpuS: number }> {
  const url = new URL(spec.url);
  const args = [
    `-t${Math.min(2, spec.connections)}`,
    `-c${spec.connections}`,
    `-d${seconds}s`,
    `--timeout`,
    `${spec.timeoutS ?? 10}s`,
    "-s",
    script,
    url.origin,
  ];
  // bash's `times`, after wrk: the CPU its children took (wrk's threads), user then system.
  const child = spawn("bash", ["-c", 'wrk "$@" && times', "wrk", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => {
      const line = output.split("\n").find((l) => l.startsWith('{"requests"'));
      const times = [...(output.trim().split("\n").at(-1) ?? "").matchAll(/(\d+)m([\d.]+)s/g)];
      if (code !== 0 || line === undefined || times.length < 2)
        return reject(new Error(`wrk exited ${code}: ${output.slice(-2000)}`));
      const cpuS = times.reduce((sum, [, m, s]) => sum + Number(m) * 60 + Number(s), 0);
      resolve({ summary: JSON.parse(line) as Summary, cpuS });
    });
  });
}

/** A load run as bench/load.ts's runLoad, driven by wrk (its `overallRate`, `until` and groups are not taken). */
export async function runWrk(_label: string, spec: LoadSpec): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), "bench-wrk-"));
  try {
    const script = join(dir, "requests.lua");
    writeFileSync(script, wrkScript(spec));
    const warmupS = Math.round(spec.warmupS);
    if (warmupS > 0) await wrkOnce(spec, script, warmupS);
    const shares = cpuShares();
    const { summary, cpuS } = await wrkOnce(spec, script, Math.max(1, Math.round(spec.durationS)));
    const durationS = summary.durationUs / 1e6;
    // wrk has exited when its share is taken: what it took counts as the run's, not as other work's.
    const { machineCpu, othersCpu } = shares.stop();
    const ok = summary.requests - summary.non2xx;
    const errors = summary.connect + summary.read + summary.write + summary.timeout;
    return {
      rps: ok / durationS,
      ...(ok > 0 ? { p50: summary.p50 / 1000, p99: summary.p99 / 1000 } : {}),
      requests: ok,
      // Requests answered, and those wrk counted as errors (it does not tell the ones in flight).
      sent: summary.requests + errors,
      durationS,
      non2xx: summary.non2xx,
      statuses: { "2xx": ok, ...(summary.non2xx > 0 ? { "non-2xx": summary.non2xx } : {}) },
      errors,
      timeouts: summary.timeout,
      groups: {},
      generatorCpu: (100 * cpuS) / durationS,
      machineCpu,
      othersCpu: Math.max(0, othersCpu - (100 * cpuS) / durationS / availableParallelism()),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
