/**
 * Processes for the tests, the demo and the bench: free ports, waiting for a condition, child
 * processes in process groups of their own, and npm runs in the project.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { join, resolve } from "node:path";

/** The project's directory. */
export const ROOT = resolve(import.meta.dirname, "..");
/** The project's installed commands (node_modules/.bin). */
export const BIN = join(ROOT, "node_modules/.bin");

/** Whether a TCP server can listen on `port` on loopback now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((ok) => {
    const server = createServer();
    server.unref();
    server.once("error", () => ok(false));
    server.listen(port, "127.0.0.1", () => server.close(() => ok(true)));
  });
}

const PORTS_PER_WORKER = 1_500;
const handedOut = new Set<number>();

/**
 * A free TCP port on loopback. Test files run side by side in vitest workers, and a port the kernel
 * hands one of them can reach another before the first binds it: a second anvil then fails to
 * bind, and its test talks to the first one's chain. So each worker draws from a range of its own
 * (VITEST_POOL_ID; processes a test starts inherit it), below the kernel's ephemeral ports, and a
 * process never hands out a port twice.
 */
export async function freePort(): Promise<number> {
  const base = 20_000 + (Number(process.env.VITEST_POOL_ID ?? 0) % 8) * PORTS_PER_WORKER;
  for (let tries = 0; tries < 500; tries++) {
    const port = base + Math.floor(Math.random() * PORTS_PER_WORKER);
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port in ${base}..${base + PORTS_PER_WORKER - 1}`);
}

/** Thrown by a probe to stop waiting at once (a failed probe otherwise just means "not yet"). */
export class GiveUp extends Error {}

/**
 * `probe`'s first value other than undefined, asked every 250 ms; throws after `timeoutMs` or on GiveUp.
 * `seen`, when given, says what was observed up to then: a timeout's message ends with it, since a
 * test that times out never reaches the assertions that would have printed it.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 120_000,
  seen?: () => string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    const value = await probe().catch((error) => {
      if (error instanceof GiveUp) throw error;
      lastError = error;
      return undefined;
    });
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      const failed = lastError === undefined ? "" : `; the probe last threw: ${String(lastError)}`;
      throw new Error(`timed out waiting for ${what}${failed}${seen ? `; seen meanwhile:\n${seen()}` : ""}`);
    }
    await new Promise((ok) => setTimeout(ok, 250));
  }
}

/** Sends `signal` (0: none, only asks) to process group `group`; whether the group was there to take it. */
export function signalGroup(group: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-group, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * The groups of the Children not yet stopped, killed when this process exits however it exits: a
 * Ctrl-C (bench/cleanup.ts) exits before the start it interrupted has registered its stop, and a
 * detached group outlives its parent.
 */
const unstopped = new Map<number, string>();
let killOnExit = false;

/**
 * Kills the groups of every Child not yet stopped and says which they were: a test whose setup
 * failed part way skips the stops it had not yet registered, and its chains and services would
 * outlive it (test/setup/leftovers.ts calls this after each file).
 */
export function killUnstopped(): string[] {
  // A group whose leader exited before the rest of it (npm before Ponder) stays in `unstopped`
  // when those end by themselves too: not left, so not named.
  const left = [...unstopped].filter(([group]) => signalGroup(group, "SIGKILL")).map(([, command]) => command);
  unstopped.clear();
  return left;
}

/** A child process in its own process group, so that stopping it stops everything it started. */
export class Child {
  readonly process: ChildProcess;
  output = "";
  private exited: Promise<void>;

  /** Runs `command` in `cwd` (the project, unless given) with `env` over this process's environment. */
  constructor(command: string, args: string[], env: NodeJS.ProcessEnv = {}, cwd = ROOT) {
    this.process = spawn(command, args, {
      cwd,
      env: { ...process.env, ...env },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const keep = (chunk: Buffer) => {
      // Keep the tail only: a long run must not grow memory without bound.
      this.output = (this.output + chunk.toString()).slice(-200_000);
    };
    this.process.stdout!.on("data", keep);
    this.process.stderr!.on("data", keep);
    this.exited = new Promise((ok) => this.process.once("exit", () => ok()));
    if (this.process.pid === undefined) return;
    // A group gone by itself is forgotten: its number may be another process's later (pids wrap
    // at 32,768 here), which killUnstopped must not kill.
    const group = this.process.pid;
    this.process.once("exit", () => {
      if (!signalGroup(group, 0)) unstopped.delete(group);
    });
    unstopped.set(this.process.pid, [command, ...args].join(" ").slice(0, 200));
    if (!killOnExit) {
      killOnExit = true;
      process.on("exit", () => {
        killUnstopped();
      });
    }
  }

  /** Whether the process has neither exited nor been killed. */
  get running(): boolean {
    return this.process.exitCode === null && this.process.signalCode === null;
  }

  /** Whether any process of its group is left: the leader may exit before what it started (npm before Ponder). */
  get groupAlive(): boolean {
    return signalGroup(this.process.pid!, 0);
  }

  /**
   * Signals the whole process group (SIGKILL after `graceMs`) and waits until every process of it
   * is gone.
   */
  async stop(signal: NodeJS.Signals = "SIGTERM", graceMs = 10_000): Promise<void> {
    const group = this.process.pid!;
    // A group that cannot be signalled is gone already.
    if (this.running && signalGroup(group, signal)) {
      const killed = setTimeout(() => signalGroup(group, "SIGKILL"), graceMs);
      await this.exited;
      clearTimeout(killed);
    }
    // The leader may exit before what it started (npm before Ponder): wait until the whole group
    // is gone, so that nothing still writes the files a test removes next.
    for (let waited = 0; this.groupAlive && waited < graceMs + 10_000; waited += 50) {
      if (waited === graceMs) signalGroup(group, "SIGKILL");
      await new Promise((ok) => setTimeout(ok, 50));
    }
    unstopped.delete(group);
  }
}

/**
 * `npm <args>` in the project, to its end or to `boundMs`: its exit code and everything it printed.
 * Past the bound it is interrupted as Ctrl-C in a terminal would (SIGINT to its process group: the
 * bench's scripts then stop what they started, bench/cleanup.ts) and killed a minute later. With a
 * bound under the caller's own timeout nothing it started outlives the test: a timeout of vitest's
 * alone ends the wait, not npm.
 */
export async function runNpm(args: string[], boundMs: number): Promise<{ code: number; output: string }> {
  const npm = new Child("npm", args);
  // Child keeps a tail; the caller reads all of it (the bench's steps, then its results).
  let output = "";
  const keep = (chunk: Buffer) => {
    output += chunk.toString();
  };
  npm.process.stdout!.on("data", keep);
  npm.process.stderr!.on("data", keep);
  let interrupted = false;
  const bound = setTimeout(() => {
    interrupted = true;
    void npm.stop("SIGINT", 60_000);
  }, boundMs);
  // "close": the output's pipes too, which whatever npm started holds until it ends.
  const code = await new Promise<number>((ok) => npm.process.once("close", (exit) => ok(exit ?? 1)));
  clearTimeout(bound);
  await npm.stop();
  if (interrupted) output += `\nrunNpm: npm ${args.join(" ")} had not ended after ${boundMs / 1000} s: interrupted\n`;
  return { code: interrupted && code === 0 ? 1 : code, output };
}
