import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { stripVTControlCharacters } from "node:util";

export const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "node_modules/.bin");

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
    const group = -this.process.pid!;
    const signalGroup = (s: NodeJS.Signals | 0) => {
      try {
        process.kill(group, s);
        return true;
      } catch {
        return false;
      }
    };
    if (this.running) {
      if (!signalGroup(signal)) return;
      const killed = setTimeout(() => signalGroup("SIGKILL"), 10_000);
      await this.exited;
      clearTimeout(killed);
    }
    // The leader may exit before what it started (npm before Ponder): wait until the whole group
    // is gone, so that nothing still writes the files a test removes next.
    for (let waited = 0; signalGroup(0) && waited < 20_000; waited += 50) {
      if (waited === 10_000) signalGroup("SIGKILL");
      await new Promise((ok) => setTimeout(ok, 50));
    }
  }
}

export type Anvil = { url: string; chainId: number; stop(): Promise<void> };

/** A fresh anvil chain with interval mining, as the Ponder notes require. */
export async function startAnvil(
  options: { chainId?: number; blockTime?: number; port?: number } = {},
): Promise<Anvil> {
  const port = options.port ?? (await freePort());
  const chainId = options.chainId ?? 31337;
  // Anvil keeps the states of older blocks on disk, by default under ~/.foundry/anvil/tmp beside
  // every other anvil's: each test chain keeps its own, deleted with it.
  const cache = mkdtempSync(join(tmpdir(), "anvil-cache-"));
  const child = new Child(join(BIN, "anvil"), [
    "--cache-path",
    cache,
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    "--chain-id",
    String(chainId),
    "--block-time",
    String(options.blockTime ?? 1),
    "--accounts",
    "20",
    "--silent",
  ]);
  const url = `http://127.0.0.1:${port}`;
  await waitFor("anvil", async () => {
    if (!child.running) throw new GiveUp(`anvil exited: ${child.output.slice(-1000)}`);
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
    });
    return res.ok ? true : undefined;
  });
  return {
    url,
    chainId,
    stop: async () => {
      await child.stop();
      rmSync(cache, { recursive: true, force: true });
    },
  };
}

/** A random admin token for a test service. */
export const adminToken = () => randomBytes(24).toString("base64url");

/** A new API key, from a running service's admin endpoint. */
export async function createApiKey(url: string, token: string, label = "tests"): Promise<string> {
  const res = await fetch(`${url}/admin/keys`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ label }),
  });
  if (res.status !== 201) throw new Error(`creating an API key: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { key: string }).key;
}

export type Service = {
  /** Where it answers; a restart may move it to another port. */
  url: string;
  child: Child;
  /** The Postgres schema ponder writes (--schema). */
  schema: string;
  /** Its PGlite directory (unused on Postgres). */
  pgliteDir: string;
  /** The service's ADMIN_TOKEN (undefined when the caller turned the admin endpoints off). */
  adminToken: string | undefined;
  /** A key made for the test, and the headers that send it: requests with them are not limited. */
  apiKey: string | undefined;
  headers: Record<string, string>;
  /** The Postgres schema of the service's keys and keyless windows (ACCESS_SCHEMA). */
  accessSchema: string;
  /** Stops it and deletes its PGlite directory. */
  stop(): Promise<void>;
  /** kill -9 of ponder and everything it started; its data stays. */
  kill(): Promise<void>;
  /** The same command again, on the same schema and data; resolves when it is ready (or only listening). */
  restart(until?: "ready" | "listening"): Promise<void>;
};

/**
 * `npm start` (the launcher, which runs `ponder start`) on the given chains, with a fresh schema (and, on PGlite, a fresh directory) per
 * run; on Postgres when DATABASE_URL is set. Resolves when /ready answers 200 (or, with
 * `until: "listening"`, as soon as it answers HTTP), with an API key made through the admin
 * endpoint (unless `env` sets ADMIN_TOKEN to "").
 *
 * Each run has its own access schema too, so that keyless windows are not shared with other tests
 * on the same Postgres; services given the same ACCESS_SCHEMA share them.
 */
export async function startService(options: {
  rpc: Record<number, string>;
  env?: NodeJS.ProcessEnv;
  until?: "ready" | "listening";
}): Promise<Service> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "delegation-lookup-"));
  const schema = `test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const env: NodeJS.ProcessEnv = {
    PONDER_TELEMETRY_DISABLED: "true",
    PGLITE_DIR: join(dir, "pglite"),
    ADMIN_TOKEN: adminToken(),
    ACCESS_SCHEMA: `access_${schema}`,
    ...Object.fromEntries(Object.entries(options.rpc).map(([id, url]) => [`PONDER_RPC_URL_${id}`, url])),
    ...options.env,
  };
  // Only the chains given here are indexed, whatever the caller's environment says.
  for (const name of Object.keys(process.env)) {
    if (name.startsWith("PONDER_RPC_URL_") && !(name in env)) env[name] = "";
  }
  const token = env.ADMIN_TOKEN || undefined;

  /** Starts ponder and waits for it; the service's url is the port ponder reports. */
  async function run(until: "ready" | "listening"): Promise<void> {
    const child = new Child("npm", ["start", "--silent", "--", "--schema", schema, "--port", String(port)], env);
    service.child = child;
    try {
      // Ponder takes the next port when the one given is taken (another test's service can take it
      // between freePort and listen).
      const listening = await waitFor(
        "ponder's HTTP server",
        async () => {
          if (!child.running) throw new GiveUp("ponder exited");
          return /Created HTTP server port=(\d+)/.exec(stripVTControlCharacters(child.output))?.[1];
        },
        300_000,
      );
      service.url = `http://127.0.0.1:${listening}`;
      if (until === "ready") {
        await waitFor(
          "the service to be ready",
          async () => {
            if (!child.running) throw new GiveUp("ponder exited");
            const res = await fetch(`${service.url}/ready`);
            return res.status === 200 ? true : undefined;
          },
          300_000,
        );
      }
    } catch (error) {
      await child.stop();
      throw new Error(`${(error as Error).message}\n--- ponder output ---\n${child.output.slice(-5000)}`);
    }
  }

  const service: Service = {
    url: "",
    child: undefined as unknown as Child,
    schema,
    pgliteDir: env.PGLITE_DIR!,
    adminToken: token,
    apiKey: undefined,
    headers: {},
    accessSchema: env.ACCESS_SCHEMA!,
    stop: async () => {
      await service.child.stop();
      rmSync(dir, { recursive: true, force: true });
    },
    kill: () => service.child.stop("SIGKILL"),
    restart: (until = "ready") => run(until),
  };
  try {
    await run(options.until ?? "ready");
    if (token) service.apiKey = await createApiKey(service.url, token);
  } catch (error) {
    await service.child?.stop();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  service.headers = service.apiKey ? { "X-API-KEY": service.apiKey } : {};
  return service;
}

export type Replica = { url: string; child: Child; stop(): Promise<void> };

/**
 * `npm run serve` over a running service's Postgres schema (its keys too): an API process apart
 * from the indexer. Resolves when its /ready answers 200.
 */
export async function startReplica(
  service: Pick<Service, "schema" | "accessSchema">,
  env: NodeJS.ProcessEnv = {},
  readyWithinMs = 60_000,
): Promise<Replica> {
  if (!process.env.DATABASE_URL) throw new Error("API replicas read Postgres: set DATABASE_URL");
  const port = await freePort();
  const child = new Child("npm", ["run", "--silent", "serve"], {
    DATABASE_SCHEMA: service.schema,
    ACCESS_SCHEMA: service.accessSchema,
    PORT: String(port),
    HOST: "127.0.0.1",
    ...env,
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      "the API replica to be ready",
      async () => {
        if (!child.running) throw new GiveUp("npm run serve exited");
        return (await fetch(`${url}/ready`)).status === 200 ? true : undefined;
      },
      readyWithinMs,
    );
  } catch (error) {
    await child.stop();
    throw new Error(`${(error as Error).message}\n--- serve output ---\n${child.output.slice(-5000)}`);
  }
  return { url, child, stop: () => child.stop() };
}

/** `npm <args>` in the project, to its end: its exit code and everything it printed. */
export function runNpm(args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((ok) => {
    execFile("npm", args, { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      ok({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, output: stdout + stderr }),
    );
  });
}
