/** `ponder start` as the launcher runs it: with a plan, its output passed on with RPC URLs redacted. */
import { spawn } from "node:child_process";
import { constants } from "node:os";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { encodePlan, type IndexedChain, PLAN_VARIABLE } from "../../core/plan";
import { urlRedactor } from "../../core/url";

/** The repository: where the launcher runs its commands. */
export const ROOT = resolve(import.meta.dirname, "../..");
const PONDER = resolve(ROOT, "node_modules/.bin/ponder");

/** The wait after one of `seconds`: doubling from 1 s up to `most` (a minute), so a short outage costs little. */
export const nextWait = (seconds: number, most = 60) => Math.min(Math.max(seconds * 2, 1), most);

/**
 * Runs `ponder start` with `args` on the plan until it exits (or `stop` aborts: then stopped as by
 * SIGTERM); its exit code. It listens on `port`; `env` adds to this process's environment. Each
 * line it prints goes out with `prefix` before it.
 */
export function runPonder(options: {
  plan: IndexedChain[];
  args: string[];
  port: number;
  env?: NodeJS.ProcessEnv;
  prefix?: string;
  stop?: AbortSignal;
  /** Called once Ponder is spawned, with its pid; what it returns is called once Ponder has exited. */
  spawned?: (pid: number | undefined) => () => void;
}): Promise<number> {
  const { plan, args, port, prefix = "" } = options;
  const env = {
    PONDER_TELEMETRY_DISABLED: "true",
    ...process.env,
    ...options.env,
    PORT: `${port}`,
    [PLAN_VARIABLE]: encodePlan(plan),
  };
  const child = spawn(PONDER, ["start", ...args], { env, stdio: ["inherit", "pipe", "pipe"], cwd: ROOT });
  const exited = options.spawned?.(child.pid);
  // Ponder's errors quote RPC URLs whole, and hosted RPCs carry their key in the URL: its output is
  // passed on with them redacted, line by line.
  const redact = urlRedactor(plan.flatMap(({ rpc }) => rpc));
  for (const [from, to] of [
    [child.stdout, process.stdout],
    [child.stderr, process.stderr],
  ] as const) {
    createInterface({ input: from, crlfDelay: Number.POSITIVE_INFINITY }).on("line", (line) =>
      to.write(`${prefix}${redact(line)}\n`),
    );
  }
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  const stop = () => child.kill("SIGTERM");
  process.on("SIGINT", forward).on("SIGTERM", forward);
  options.stop?.addEventListener("abort", stop);
  if (options.stop?.aborted) stop();
  return new Promise((done) =>
    child.once("exit", (code, signal) => {
      exited?.();
      process.off("SIGINT", forward).off("SIGTERM", forward);
      options.stop?.removeEventListener("abort", stop);
      done(code ?? 128 + (signal ? constants.signals[signal] : 0));
    }),
  );
}
