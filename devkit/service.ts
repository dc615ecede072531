/**
 * The service as users run it: `npm start` (the launcher, which runs `ponder start`) on given
 * chains, and `npm run serve` replicas over its Postgres tables; each with a fresh schema and keys.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { ask } from "./ask";
import { freshPgliteDir } from "./pglite-template";
import { Child, freePort, GiveUp, waitFor } from "./processes";

/** A random admin token for a test service. */
export const adminToken = () => randomBytes(24).toString("base64url");

/** A new API key, from a running service's admin endpoint. */
export async function createApiKey(url: string, token: string, label = "tests"): Promise<string> {
  const res = await ask(url, "/admin/keys", {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ label }),
  });
  if (res.status !== 201) throw new Error(`creating an API key: ${res.status} ${res.text}`);
  return (JSON.parse(res.text) as { key: string }).key;
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
  /**
   * The same command again, on the same schema and data; resolves when it is ready (or only
   * listening). Given `rpc`, with those chains instead (a chain added or removed).
   */
  restart(until?: "ready" | "listening", rpc?: Record<number, string>): Promise<void>;
};

/**
 * `npm start` (the launcher, which runs `ponder start`) on the given chains, with a fresh schema
 * (and, on PGlite, a fresh directory) per run; on Postgres when DATABASE_URL is set. Resolves when
 * /ready answers 200 (or, with `until: "listening"`, as soon as it answers HTTP), with an API key
 * made through the admin endpoint (unless `env` sets ADMIN_TOKEN to "").
 *
 * Each run has its own access schema too, so that keyless windows are not shared with other tests
 * on the same Postgres; services given the same ACCESS_SCHEMA share them. And its own views schema:
 * Ponder creates the views when the backfill is done, and two indexers creating the same views at
 * once (two services started together) collide in Postgres's catalog, which stops one of them.
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
    DATABASE_VIEWS_SCHEMA: `views_${schema}`,
    ...options.env,
  };
  /** Only the chains given are indexed, whatever the caller's environment (or an earlier run) says. */
  const indexOnly = (rpc: Record<number, string>) => {
    for (const name of [...Object.keys(process.env), ...Object.keys(env)])
      if (name.startsWith("PONDER_RPC_URL_")) env[name] = "";
    for (const [id, url] of Object.entries(rpc)) env[`PONDER_RPC_URL_${id}`] = url;
  };
  indexOnly(options.rpc);
  const token = env.ADMIN_TOKEN || undefined;

  // Chains indexed apart: the API is `npm run serve`'s worker, beside Ponders on ports of their own.
  const listeningOn =
    env.INDEX_CHAINS_APART === "true" ? /API worker \d+ serving .* on port (\d+)/ : /Created HTTP server port=(\d+)/;

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
          return listeningOn.exec(stripVTControlCharacters(child.output))?.[1];
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
    restart: (until = "ready", rpc) => {
      if (rpc) indexOnly(rpc);
      return run(until);
    },
  };
  try {
    // On PGlite, the indexer's directory and the keys' beside it (api/access/open.ts), made as PGlite
    // makes them, unless the caller brings its own.
    if (!(env.DATABASE_URL ?? process.env.DATABASE_URL) && options.env?.PGLITE_DIR === undefined) {
      await freshPgliteDir(env.PGLITE_DIR!);
      await freshPgliteDir(`${env.PGLITE_DIR}-access`);
    }
    await run(options.until ?? "ready");
    // A refused key is the service's failure: what it logged says why (an answer's 500 does not).
    if (token)
      service.apiKey = await createApiKey(service.url, token).catch((error: Error) => {
        throw new Error(`${error.message}\n--- service output ---\n${plainOutput(service).slice(-5000)}`);
      });
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

/**
 * How soon after the chain replaces a block no answer may come from the replaced branch: the
 * replaced-head watcher looks twice a second (api/watch/replaced-head.ts), with room for a loaded machine.
 */
export const REPLACED_WITHIN_MS = 2_000;

/** The service's output without colour codes. */
export const plainOutput = (service: Pick<Service, "child">) => stripVTControlCharacters(service.child.output);
