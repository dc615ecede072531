import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "node_modules/.bin");

/** A free TCP port on loopback, chosen by the kernel. */
export function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.unref();
    server.on("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => ok(port));
    });
  });
}

/** Thrown by a probe to stop waiting at once (a failed probe otherwise just means "not yet"). */
export class GiveUp extends Error {}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch((error) => {
      if (error instanceof GiveUp) throw error;
      return undefined;
    });
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((ok) => setTimeout(ok, 250));
  }
}

/** A child process in its own process group, so that stopping it stops everything it started. */
export class Child {
  readonly process: ChildProcess;
  output = "";
  private exited: Promise<void>;

  constructor(command: string, args: string[], env: NodeJS.ProcessEnv = {}) {
    this.process = spawn(command, args, {
      cwd: ROOT,
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
  }

  get running(): boolean {
    return this.process.exitCode === null && this.process.signalCode === null;
  }

  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    if (!this.running) return;
    try {
      process.kill(-this.process.pid!, signal);
    } catch {
      return;
    }
    const killed = setTimeout(() => {
      try {
        process.kill(-this.process.pid!, "SIGKILL");
      } catch {}
    }, 10_000);
    await this.exited;
    clearTimeout(killed);
  }
}

export type Anvil = { url: string; chainId: number; stop(): Promise<void> };

/** A fresh anvil chain with interval mining, as the Ponder notes require. */
export async function startAnvil(options: { chainId?: number; blockTime?: number } = {}): Promise<Anvil> {
  const port = await freePort();
  const chainId = options.chainId ?? 31337;
  const child = new Child(join(BIN, "anvil"), [
    "--host", "127.0.0.1",
    "--port", String(port),
    "--chain-id", String(chainId),
    "--block-time", String(options.blockTime ?? 1),
    "--accounts", "20",
    "--silent",
  ]);
  const url = `http://127.0.0.1:${port}`;
  await waitFor("anvil", async () => {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
    });
    return res.ok ? true : undefined;
  });
  return { url, chainId, stop: () => child.stop() };
}

export type Service = { url: string; child: Child; stop(): Promise<void> };

/**
 * `ponder start` on the given chains, with a fresh schema (and, on PGlite, a fresh directory) per
 * run; on Postgres when DATABASE_URL is set. Resolves when /ready answers 200.
 */
export async function startService(options: { rpc: Record<number, string>; env?: NodeJS.ProcessEnv }): Promise<Service> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "delegation-lookup-"));
  const schema = `test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const env: NodeJS.ProcessEnv = {
    PONDER_TELEMETRY_DISABLED: "true",
    PGLITE_DIR: join(dir, "pglite"),
    ...Object.fromEntries(Object.entries(options.rpc).map(([id, url]) => [`PONDER_RPC_URL_${id}`, url])),
    ...options.env,
  };
  // Only the chains given here are indexed, whatever the caller's environment says.
  for (const name of Object.keys(process.env)) {
    if (name.startsWith("PONDER_RPC_URL_") && !(name in env)) env[name] = "";
  }
  const child = new Child(join(BIN, "ponder"), ["start", "--schema", schema, "--port", String(port)], env);
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await child.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor("the service to be ready", async () => {
      if (!child.running) throw new GiveUp("ponder exited");
      const res = await fetch(`${url}/ready`);
      return res.status === 200 ? true : undefined;
    }, 300_000);
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n--- ponder output ---\n${child.output.slice(-5000)}`);
  }
  return { url, child, stop };
}
