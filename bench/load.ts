/**
 * A load run: autocannon (bench/load-worker.ts) in a child process, so that the load generator's
 * CPU is its own process's and the bench's own work does not slow it. The process serves one run
 * after another (starting one per run cost a second or more each), and one more is started for a
 * run beside another.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "../devkit/processes";

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
  /** Each request is one of these, drawn at random (by weight; groups in turn: bench/pick.ts). */
  requests: LoadRequest[];
  /** Seconds before a request counts as timed out (autocannon's default: 10). */
  timeoutS?: number;
  /**
   * Seconds the run may go on past its duration until each group (or, without groups, the run) has
   * a 2xx answer: a run of a quarter second (--smoke) on a busy machine may end before its slowest
   * route's first answer, leaving its row without a latency. Unset: none.
   */
  untilAnsweredS?: number;
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
  /** Requests sent, answered or not (those in flight when the run ended are neither). */
  sent: number;
  /** Seconds the run lasted, after its warm-up. */
  durationS: number;
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
  // One that exited while idle is dropped.
  let worker = idle.pop();
  while (worker !== undefined && !worker.alive) worker = idle.pop();
  worker ??= new LoadWorker();
  try {
    return await worker.run(label, spec, until);
  } finally {
    if (worker.alive) idle.push(worker);
  }
}

/** Load processes between runs. */
const idle: LoadWorker[] = [];

/**
 * A bench/load-worker.ts process. Between runs nothing of it keeps the bench from exiting; the
 * bench's exit closes its stdin, which ends it.
 */
class LoadWorker {
  private readonly child: ChildProcess = spawn(join(ROOT, "node_modules/.bin/tsx"), ["bench/load-worker.ts"], {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "pipe"],
  });
  /** The tail of what it printed, for a failure's message. */
  private output = "";
  private pending = "";
  private waiting?: { ok: (line: string) => void; fail: (error: Error) => void };

  constructor() {
    const keep = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString()).slice(-20_000);
    };
    this.child.stderr!.on("data", keep);
    // A write to a process that has exited fails on its stdin: its exit says why, below.
    this.child.stdin!.on("error", () => {});
    this.child.stdout!.on("data", (chunk: Buffer) => {
      keep(chunk);
      const lines = (this.pending + chunk.toString()).split("\n");
      this.pending = lines.pop()!;
      for (const line of lines) if (line.startsWith('{"rps"') || line.startsWith('{"error"')) this.waiting?.ok(line);
    });
    this.child.once("exit", (code, signal) =>
      this.waiting?.fail(new Error(`the load process exited (${signal ?? code}):\n${this.output.slice(-3000)}`)),
    );
    this.hold(false);
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  async run(label: string, spec: LoadSpec, until?: Promise<unknown>): Promise<LoadResult> {
    this.hold(true);
    try {
      const line = await new Promise<string>((ok, fail) => {
        if (!this.alive) return fail(new Error(`the load process has exited:\n${this.output.slice(-3000)}`));
        this.waiting = { ok, fail };
        this.child.stdin!.write(`${JSON.stringify(spec)}\n`);
        void until?.then(() => this.alive && this.waiting?.ok === ok && this.child.stdin!.write("stop\n"));
      });
      const answer = JSON.parse(line) as LoadResult | { error: string };
      if ("error" in answer) throw new Error(answer.error);
      return answer;
    } catch (error) {
      throw new Error(`${label}: the load run failed: ${(error as Error).message}`);
    } finally {
      this.waiting = undefined;
      this.hold(false);
    }
  }

  /** Whether the process and its pipes keep the bench's event loop alive (only during a run). */
  private hold(held: boolean) {
    for (const handle of [this.child, this.child.stdin, this.child.stdout, this.child.stderr] as unknown as {
      ref(): void;
      unref(): void;
    }[])
      held ? handle.ref() : handle.unref();
  }
}
