/**
 * A load run: autocannon (bench/load-worker.ts) in a child process, so that the load generator's
 * CPU is its own process's and the bench's own work does not slow it.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Child, ROOT } from "../devkit/processes";

/**
 * A request; those with a `group` also get latencies of their own (LoadResult's `groups`). Its
 * `headers` are sent over the spec's; it is drawn `weight` times as often as a request without one
 * (so that a large body need not be listed many times).
 */
export type LoadRequest = {
  method: "GET" | "POST";
  path: string;
  body?: string;
  group?: string;
  headers?: Record<string, string>;
  weight?: number;
};

/** Latency in ms of the 2xx answers to one group's requests. */
export type GroupLatency = { requests: number; p50?: number; p99?: number };

export type LoadSpec = {
  url: string;
  connections: number;
  durationS: number;
  warmupS: number;
  /** Sent with every request (an API key, a content type). */
  headers: Record<string, string>;
  /** Each request is one of these, drawn at random (by weight). */
  requests: LoadRequest[];
  /** Seconds before a request counts as timed out (autocannon's default: 10). */
  timeoutS?: number;
  /** Requests per second over all connections; unset: as fast as the server answers. */
  overallRate?: number;
};

export type LoadResult = {
  /** 2xx answers per second. */
  rps: number;
  /** Milliseconds, of 2xx answers (undefined: there were none). */
  p50?: number;
  p99?: number;
  /** 2xx answers. */
  requests: number;
  non2xx: number;
  /** Answers by HTTP status. */
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
  /** By request group, when the requests have groups. */
  groups: Record<string, GroupLatency>;
  /** CPU of the load generator, % of one core. */
  generatorCpu: number;
  /** CPU of the whole machine during the run, % of all cores. */
  machineCpu: number;
  /** CPU of processes the bench did not start (other work on this machine), % of all cores. */
  othersCpu: number;
};

/**
 * Answers other than 2xx, errors and timeouts under load are counted, not fatal: a server that
 * fails under load is a finding (the answers themselves are verified before each run). With
 * `until`, the run ends when it resolves (or after its duration, if sooner): for load that runs
 * beside another run, as long as that one.
 */
export async function runLoad(label: string, spec: LoadSpec, until?: Promise<unknown>): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), "bench-load-"));
  const file = join(dir, "spec.json");
  writeFileSync(file, JSON.stringify(spec));
  const child = new Child(join(ROOT, "node_modules/.bin/tsx"), ["bench/load-worker.ts", file]);
  // tsx passes SIGINT on to the worker, which ends its run and reports it.
  void until?.then(() => child.running && child.process.kill("SIGINT"));
  try {
    const code = child.running
      ? await new Promise<number | null>((ok) => child.process.once("exit", ok))
      : child.process.exitCode;
    const line = child.output
      .trim()
      .split("\n")
      .reverse()
      .find((l) => l.startsWith('{"rps"'));
    if (code !== 0 || line === undefined)
      throw new Error(`${label}: the load run failed (exit ${code}):\n${child.output.slice(-3000)}`);
    return JSON.parse(line) as LoadResult;
  } finally {
    await child.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
