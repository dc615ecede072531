/**
 * What ponder/ponder-0.16.10.ts assumes of Ponder, checked against the Ponder installed: its version,
 * its checkpoint layout (checkpoints made by Ponder's own encodeCheckpoint, in tables made by
 * Ponder's own DDL), its readiness flag, its metrics global, how it creates its HTTP server, the
 * PGlite instance behind the API's db, and how its live sync moves a chain's final block (its own
 * sync, run on a chain made up here).
 * A failure here after an upgrade names the assumption to revisit.
 */
import { EventEmitter } from "node:events";
import { readFileSync } from "node:fs";
import http, { type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { PGlite } from "@electric-sql/pglite";
import { getRequestListener, serve } from "@hono/node-server";
import { sql as drizzleSql } from "drizzle-orm";
import { toSnakeCase } from "drizzle-orm/casing";
import { drizzle as drizzleNodePg } from "drizzle-orm/node-postgres";
import { getTableConfig, type PgTable } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { Hono } from "hono";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { pgliteDb } from "../api/database/pglite";
import { answerClientErrors } from "../api/http/client-error";
import { logBackfillProgress } from "../api/watch/backfill-progress";
import { table } from "../core/sql";
import {
  answerBesidePonder,
  beforePonderExits,
  checkpointsSql,
  closedBeforePonder,
  dropSyncedChain,
  LOG_EVENT_TYPE,
  leaveSigtermToPonder,
  NEWEST_SYNCED_BLOCK_SQL,
  onPonderServer,
  PONDER_BACKFILL_GAUGES,
  PONDER_EXIT_SIGNALS,
  PONDER_LOG,
  PONDER_PROGRESS_GAUGES,
  PONDER_RETRYABLE_EXIT,
  PONDER_ROUTES,
  PONDER_SYNC_SCHEMA,
  PONDER_SYNC_TABLES,
  type PonderCheckpoint,
  type PonderMetrics,
  ponderBackfillOf,
  ponderCheckpoint,
  ponderFinalityDepth,
  ponderFinalizedAt,
  ponderLoggedFinalized,
  ponderMetrics,
  ponderPglite,
  ponderProgressGauges,
  readySql,
  SYNC_CACHE_PRESENT_SQL,
  unlockAppSql,
  VITE_EXIT_LISTENER,
} from "./ponder-0.16.10";

const PONDER = new URL("../node_modules/ponder/", import.meta.url);
/** A file of Ponder's build, as text. */
const dist = (path: string) => readFileSync(new URL(`dist/esm/${path}`, PONDER), "utf8");
/** A module of Ponder's build, which its package does not export. */
const internal = (path: string) => import(new URL(`dist/esm/${path}`, PONDER).href);

let encodeCheckpoint: (checkpoint: PonderCheckpoint) => string;
let ponderEventTypes: { logs: number };

/** `name`'s DDL in Ponder's createDatabase: the column list of its CREATE TABLE. */
function ponderColumns(name: "PONDER_META_TABLE_NAME" | "PONDER_CHECKPOINT_TABLE_NAME"): string {
  const ddl = new RegExp(
    `CREATE TABLE IF NOT EXISTS "\\$\\{namespace\\.schema\\}"\\."\\$\\{${name}\\}" \\(([^\`]*)\\)\``,
  );
  const columns = ddl.exec(dist("database/index.js"))?.[1];
  expect(columns, `Ponder's CREATE TABLE of ${name}`).toBeDefined();
  return columns!;
}

const SCHEMA = "ponder_app";
let db: PGlite;

beforeAll(async () => {
  ({ encodeCheckpoint, EVENT_TYPES: ponderEventTypes } = (await internal("utils/checkpoint.js")) as {
    encodeCheckpoint: typeof encodeCheckpoint;
    EVENT_TYPES: typeof ponderEventTypes;
  });
  db = await PGlite.create();
  await db.exec(`CREATE SCHEMA ${SCHEMA}`);
  await db.exec(`CREATE TABLE ${table(SCHEMA, "_ponder_meta")} (${ponderColumns("PONDER_META_TABLE_NAME")})`);
  await db.exec(
    `CREATE TABLE ${table(SCHEMA, "_ponder_checkpoint")} (${ponderColumns("PONDER_CHECKPOINT_TABLE_NAME")})`,
  );
});

afterAll(async () => {
  await db?.close();
});

describe("Ponder 0.16.10", () => {
  it("is the Ponder installed, and the one package.json pins", () => {
    expect(JSON.parse(readFileSync(new URL("package.json", PONDER), "utf8")).version).toBe("0.16.10");
    const own = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    expect(own.dependencies.ponder).toBe("0.16.10");
  });

  it("names its tables _ponder_meta and _ponder_checkpoint", () => {
    const database = dist("database/index.js");
    expect(database).toContain('PONDER_META_TABLE_NAME = "_ponder_meta"');
    expect(database).toContain('PONDER_CHECKPOINT_TABLE_NAME = "_ponder_checkpoint"');
    for (const column of ['"chain_id" BIGINT', '"latest_checkpoint" VARCHAR(75)', '"finalized_checkpoint" VARCHAR(75)'])
      expect(ponderColumns("PONDER_CHECKPOINT_TABLE_NAME")).toContain(column);
  });
});

describe("checkpointsSql", () => {
  const rows: [name: string, latest: PonderCheckpoint, finalized: PonderCheckpoint][] = [
    [
      "mainnet",
      {
        blockTimestamp: 1_700_000_123,
        chainId: 1,
        blockNumber: 21_000_000,
        transactionIndex: 17,
        eventType: 5,
        eventIndex: 3,
      },
      {
        blockTimestamp: 1_699_999_000,
        chainId: 1,
        blockNumber: 20_999_936,
        transactionIndex: 0,
        eventType: 0,
        eventIndex: 0,
      },
    ],
    [
      "zora",
      {
        blockTimestamp: 9_999_999_999,
        chainId: 7_777_777,
        blockNumber: 9_007_199_254_740_991n,
        transactionIndex: 9_999_999_999_999_999n,
        eventType: 9,
        eventIndex: 9_999_999_999_999_999n,
      },
      { blockTimestamp: 0, chainId: 7_777_777, blockNumber: 1, transactionIndex: 0, eventType: 0, eventIndex: 0 },
    ],
    [
      "anvil",
      { blockTimestamp: 0, chainId: 31_337, blockNumber: 0, transactionIndex: 0, eventType: 0, eventIndex: 0 },
      { blockTimestamp: 0, chainId: 31_337, blockNumber: 0, transactionIndex: 0, eventType: 0, eventIndex: 0 },
    ],
  ];

  it("encodes checkpoints as Ponder does, a log's event type as Ponder's", () => {
    for (const [, latest, finalized] of rows) {
      expect(ponderCheckpoint(latest)).toBe(encodeCheckpoint(latest));
      expect(ponderCheckpoint(finalized)).toBe(encodeCheckpoint(finalized));
    }
    expect(LOG_EVENT_TYPE).toBe(ponderEventTypes.logs);
  });

  it("reads the block, its timestamp and the finalized block from checkpoints Ponder encoded", async () => {
    for (const [name, latest, finalized] of rows) {
      await db.query(
        `INSERT INTO ${table(SCHEMA, "_ponder_checkpoint")}
           (chain_name, chain_id, safe_checkpoint, latest_checkpoint, finalized_checkpoint)
         VALUES ($1, $2, $3, $3, $4)`,
        [name, Number(latest.chainId), encodeCheckpoint(latest), encodeCheckpoint(finalized)],
      );
    }
    const { rows: read } = await db.query<Record<string, string>>(
      `SELECT chain_id::text, checkpoint, block::text, block_timestamp::text, finalized_block::text, age(xmin)::text
       FROM ${checkpointsSql(SCHEMA)} c ORDER BY chain_id`,
    );
    expect(read).toEqual(
      rows
        .map(([, latest, finalized]) => ({
          chain_id: String(latest.chainId),
          checkpoint: encodeCheckpoint(latest),
          block: String(latest.blockNumber),
          block_timestamp: String(latest.blockTimestamp),
          finalized_block: String(finalized.blockNumber),
          age: expect.stringMatching(/^\d+$/),
        }))
        .sort((a, b) => Number(a.chain_id) - Number(b.chain_id)),
    );
  });
});

describe("a live block's transaction", () => {
  it("flushes the block's rows in a savepoint on Postgres, then moves the checkpoint", () => {
    const flush = [
      String.raw`if \(qb\.\$dialect === "postgres"\) \{`,
      String.raw`await qb\.wrap\(\(db\) => db\.execute\("SAVEPOINT flush"\), context\);`,
      String.raw`await promiseAllSettledWithThrow\([^;]*flushTable\)\);`,
      String.raw`await qb\.wrap\(\(db\) => db\.execute\("RELEASE flush"\), context\);`,
    ];
    expect(dist("indexing-store/cache.js")).toMatch(new RegExp(flush.join(String.raw`\s*`)));
    const block = dist("runtime/multichain.js").split('case "block": {')[1]!.split('case "reorg": {')[0]!;
    const order = ["database.userQB.transaction(", "await indexingCache.flush();", 'label: "update_checkpoints"'];
    const at = order.map((text) => block.indexOf(text));
    expect(at.every((i) => i >= 0) && at.every((i, n) => n === 0 || i > at[n - 1]!), String(at)).toBe(true);
    // One transaction: nothing between the flush and the checkpoint's update ends it.
    const between = block.slice(at[1], at[2]);
    expect(between).not.toMatch(/COMMIT|\}, undefined, context\);/);
  });
});

describe("readySql", () => {
  it("is 0 while Ponder backfills and 1 once it sets is_ready, as its runtime does", async () => {
    // Ponder's metadata when it starts (database/index.js), then its update when every chain is backfilled.
    expect(dist("database/index.js")).toMatch(/is_ready: 0,/);
    const update = /\.set\(\{ value: sql `(jsonb_set\(value, '\{is_ready\}', to_jsonb\(1\)\))` \}\)/.exec(
      dist("runtime/omnichain.js"),
    )?.[1];
    expect(update, "Ponder's update of is_ready").toBeDefined();
    expect(dist("runtime/multichain.js")).toContain(update);
    expect(dist("server/index.js")).toContain("result[0].value.is_ready === 1");

    const meta = table(SCHEMA, "_ponder_meta");
    const ready = async () => (await db.query<{ ready: number }>(`SELECT ${readySql(SCHEMA)} AS ready`)).rows[0]!.ready;
    await db.query(`INSERT INTO ${meta} (key, value) VALUES ('app', $1)`, [{ is_locked: 1, is_ready: 0 }]);
    expect(await ready()).toBe(0);
    await db.query(`UPDATE ${meta} SET value = ${update}`);
    expect(await ready()).toBe(1);
  });
});

describe("unlockAppSql", () => {
  it("leaves the app as Ponder's clean shutdown does, which the next start takes as unlocked", async () => {
    const database = dist("database/index.js");
    // The next start waits for a locked app's heartbeat to age, unless is_locked is 0.
    expect(database).toContain("const isAppUnlocked = previousApp.is_locked === 0 || expiry <= Date.now();");
    expect(database).toContain("previousApp.heartbeat_at + common.options.databaseHeartbeatTimeout");
    const options = dist("internal/options.js");
    expect(options).toContain("databaseHeartbeatInterval: 10 * 1000,");
    expect(options).toContain("databaseHeartbeatTimeout: 25 * 1000,");
    // Its clean shutdown's own unlock.
    expect(database).toMatch(/jsonb_set\(value, '\{is_locked\}', to_jsonb\(0\)\)/);

    const meta = table(SCHEMA, "_ponder_meta");
    await db.query(`DELETE FROM ${meta} WHERE key = 'app'`);
    const app = { is_locked: 1, is_dev: 0, is_ready: 1, heartbeat_at: Date.now(), build_id: "b", version: "0.16" };
    await db.query(`INSERT INTO ${meta} (key, value) VALUES ('app', $1)`, [app]);
    const unlock = async () => (await db.query(unlockAppSql(SCHEMA))).affectedRows;
    expect(await unlock()).toBe(1);
    const { rows } = await db.query<{ value: typeof app }>(`SELECT value FROM ${meta} WHERE key = 'app'`);
    expect(rows[0]!.value).toEqual({ ...app, is_locked: 0 });
    expect(await unlock(), "an unlocked app is left as it is").toBe(0);
  });
});

describe("leaveSigtermToPonder", () => {
  it("Ponder's build starts Vite's dev server, whose SIGTERM listener exits at once", async () => {
    expect(dist("build/index.js")).toContain("const viteDevServer = await createServer({");
    // Vite as Ponder resolves it (no copy of its own under ponder/node_modules).
    const vite = new URL(import.meta.resolve("vite", PONDER.href));
    const chunks = new URL("chunks/", vite);
    const { readdirSync } = await import("node:fs");
    const source = readdirSync(chunks)
      .map((file) => readFileSync(new URL(file, chunks), "utf8"))
      .find((text) => text.includes(`const ${VITE_EXIT_LISTENER} = async () => {`));
    expect(source, "Vite's closeServerAndExit").toBeDefined();
    expect(source).toContain(`setupSIGTERMListener(${VITE_EXIT_LISTENER});`);
    expect(source).toMatch(/const setupSIGTERMListener = \(callback\) => \{\s*process\.once\("SIGTERM", callback\);/);
    // Ponder's own handler, which unlocks the schema before it exits.
    const ponders = [
      String.raw`process\.on\("SIGTERM", \(\) => \{\s*if \(isShuttingDown\)\s*return;`,
      String.raw`\s*common\.logger\.warn\(\{ msg: "Received SIGTERM" \}\);\s*exit\(\{ code: 0 \}\);`,
    ];
    expect(dist("bin/utils/exit.js")).toMatch(new RegExp(ponders.join("")));
  });

  it("removes Vite's listener, as Vite adds it, and no other", () => {
    const ponders = () => {};
    const closeServerAndExit = () => {};
    process.on("SIGTERM", ponders);
    process.once("SIGTERM", closeServerAndExit);
    process.stdin.on("end", closeServerAndExit);
    try {
      expect(leaveSigtermToPonder()).toBe(1);
      expect(process.listeners("SIGTERM")).toContain(ponders);
      expect(process.listeners("SIGTERM")).not.toContain(closeServerAndExit);
      expect(process.stdin.listeners("end")).not.toContain(closeServerAndExit);
      expect(leaveSigtermToPonder()).toBe(0);
    } finally {
      process.off("SIGTERM", ponders).off("SIGTERM", closeServerAndExit);
      process.stdin.off("end", closeServerAndExit);
    }
  });
});

describe("beforePonderExits", () => {
  it("Ponder's exit listens for its signals before the API loads, and resets idle connections at once", () => {
    const start = dist("bin/commands/start.js");
    expect(start.indexOf("const exit = createExit({ common, options });")).toBeGreaterThan(0);
    expect(start.indexOf("const exit = createExit(")).toBeLessThan(start.indexOf("await build.executeApi("));
    const exit = dist("bin/utils/exit.js");
    for (const signal of PONDER_EXIT_SIGNALS) expect(exit).toContain(`process.on("${signal}", () => {`);
    expect(exit).toContain("common.apiShutdown.kill()");
    // http-terminator, as Ponder's server ends: an idle socket (no response under way) destroyed at once.
    expect(dist("server/index.js")).toContain("common.apiShutdown.add(() => terminator.terminate());");
  });

  it("a server closed before Ponder's exit closes it again without an error, as http-terminator needs", async () => {
    const terminator = readFileSync(
      new URL(import.meta.resolve("http-terminator/dist/src/factories/createInternalHttpTerminator.js", PONDER.href)),
      "utf8",
    );
    expect(terminator).toMatch(/server\.close\(\(error\) => \{\s*if \(error\) \{\s*rejectTerminating\(error\);/);
    const server = http.createServer();
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    await new Promise((ok) => server.close(ok));
    expect(await new Promise((ok) => server.close(ok))).toBeInstanceOf(Error);
    closedBeforePonder(server);
    expect(await new Promise((ok) => server.close(ok))).toBeUndefined();
  });

  it("runs `first` once, on any of the signals, and then the listeners held, each with its signal", async () => {
    const target = new EventEmitter();
    const heard: string[] = [];
    for (const signal of PONDER_EXIT_SIGNALS) target.on(signal, (s: string) => heard.push(`held ${s}`));
    let finish = () => {};
    let firsts = 0;
    beforePonderExits(() => {
      firsts++;
      heard.push("first");
      return new Promise<void>((ok) => (finish = ok));
    }, target);
    target.emit("SIGTERM", "SIGTERM");
    target.emit("SIGINT", "SIGINT");
    await new Promise((ok) => setTimeout(ok, 10));
    expect(heard).toEqual(["first"]);
    finish();
    await new Promise((ok) => setTimeout(ok, 10));
    expect(heard).toEqual(["first", "held SIGTERM", "held SIGINT"]);
    expect(firsts).toBe(1);
  });

  it("calls the held listeners though `first` fails", async () => {
    const target = new EventEmitter();
    let held = 0;
    target.on("SIGQUIT", () => held++);
    beforePonderExits(() => Promise.reject(new Error("no server")), target);
    target.emit("SIGQUIT", "SIGQUIT");
    await new Promise((ok) => setTimeout(ok, 10));
    expect(held).toBe(1);
  });
});

describe("ponderMetrics", () => {
  afterEach(() => {
    delete (globalThis as { PONDER_COMMON?: unknown }).PONDER_COMMON;
    vi.restoreAllMocks();
  });

  it("Ponder's build sets PONDER_COMMON to its common, whose metrics are its MetricsService", () => {
    expect(dist("build/index.js")).toContain("globalThis.PONDER_COMMON = common;");
    expect(dist("bin/commands/start.js")).toMatch(
      /const metrics = new MetricsService\(\);[\s\S]*?const common = \{[^}]*\bmetrics,/,
    );
  });

  it("reads Ponder's own gauges, by chain, as the backfill progress uses them", async () => {
    expect(ponderMetrics()).toBeUndefined();
    const { MetricsService } = (await internal("internal/metrics.js")) as { MetricsService: new () => PonderMetrics };
    const metrics = new MetricsService();
    (globalThis as { PONDER_COMMON?: unknown }).PONDER_COMMON = { metrics };
    expect(ponderMetrics()).toBe(metrics);
    const gauges = ponderProgressGauges()!;
    for (const [figure, name] of Object.entries(PONDER_PROGRESS_GAUGES)) {
      expect(typeof metrics[name]?.get, `${name}: a gauge of Ponder's MetricsService`).toBe("function");
      expect(gauges[figure as keyof typeof gauges], figure).toBe(metrics[name]);
    }
    const set = (name: keyof PonderMetrics, value: number, labels: Record<string, string> = {}) =>
      (metrics[name] as unknown as { set(labels: object, value: number): void }).set(
        { chain: "mainnet", ...labels },
        value,
      );
    set("ponder_historical_total_blocks", 1000);
    set("ponder_historical_cached_blocks", 100);
    set("ponder_historical_completed_blocks", 150, { source: "RegistryV2", type: "log" });
    set("ponder_historical_completed_blocks", 50, { source: "RegistryV1", type: "log" });
    set("ponder_indexing_completed_events", 7, { event: "RegistryV2:DelegateAll" });
    set("ponder_sync_is_realtime", 0);
    set("ponder_sync_is_complete", 0);

    const logged: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => logged.push(line));
    logBackfillProgress(["mainnet"], 5);
    await vi.waitFor(() => expect(logged.length).toBeGreaterThan(0));
    expect(logged[0]).toBe("backfill mainnet: 300 of 1,000 blocks (30.0%), 7 events indexed");

    // The same, from the text Ponder serves on /metrics, as a launcher reads it; another chain apart.
    set("ponder_historical_total_blocks", 80, { chain: "base" });
    const text = () => (metrics as unknown as { registry: { metrics(): Promise<string> } }).registry.metrics();
    expect(ponderBackfillOf(await text(), "mainnet")).toEqual({ blocks: 300, ofBlocks: 1_000 });
    expect(ponderBackfillOf(await text(), "base")).toEqual({ blocks: 0, ofBlocks: 80 });
    expect(ponderBackfillOf(await text(), "optimism"), "a chain not counted").toBeUndefined();

    set("ponder_sync_is_complete", 1);
    expect(ponderBackfillOf(await text(), "mainnet")).toBe("live");
    set("ponder_sync_is_complete", 0);
    set("ponder_sync_is_realtime", 1);
    expect(ponderBackfillOf(await text(), "mainnet")).toBe("live");
    await new Promise((ok) => setTimeout(ok, 50));
    const count = logged.length;
    await new Promise((ok) => setTimeout(ok, 50));
    expect(logged.length, "no line once the chain is backfilled").toBe(count);
  });
});

describe("onPonderServer", () => {
  const original = http.createServer;
  afterEach(() => {
    http.createServer = original;
  });

  it("Ponder creates its server with node:http's createServer, read when it serves, after the API is built", () => {
    const server = dist("server/index.js");
    expect(server).toMatch(/^import http from "node:http";$/m);
    expect(server).toContain("createServer: http.createServer,");
    const start = dist("bin/commands/start.js");
    expect(start.indexOf("build.executeApi(")).toBeGreaterThan(0);
    expect(start.indexOf("createServer(app);")).toBeGreaterThan(start.indexOf("build.executeApi("));
  });

  it("runs its hook on servers made afterwards as Ponder makes them, once however often it is called", async () => {
    const hooked: Server[] = [];
    onPonderServer((server) => hooked.push(server));
    onPonderServer((server) => hooked.push(server));
    const server = await new Promise<Server>((listening) => {
      const s = serve({ fetch: () => new Response("ok"), port: 0, createServer: http.createServer }, () =>
        listening(s as Server),
      ) as Server;
    });
    try {
      expect(hooked).toEqual([server]);
    } finally {
      await new Promise<void>((ok) => server.close(() => ok()));
    }
  });

  it("with answerClientErrors: servers made afterwards answer what Node's parser refuses with problems", async () => {
    onPonderServer(answerClientErrors);
    const server = http.createServer((_req, res) => res.end("ok"));
    expect(server.listenerCount("clientError"), "one answer per refused request").toBe(1);
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    try {
      const answer = await new Promise<string>((ok, fail) => {
        const socket = connect((server.address() as AddressInfo).port, "127.0.0.1");
        let data = "";
        socket.on("data", (chunk) => (data += chunk.toString("latin1")));
        socket.on("error", fail);
        socket.on("close", () => ok(data));
        socket.end("GARBAGE\r\n\r\n");
      });
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(answer.split("\r\n\r\n")[1]!)).toMatchObject({ status: 400, code: "malformed_request" });
    } finally {
      await new Promise<void>((ok) => server.close(() => ok()));
    }
  });
});

/** A node:http server of Hono's serving `app`, as Ponder makes its own, listening on a free port. */
const listening = (app: Hono) =>
  new Promise<Server>((ok) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => ok(s as Server)) as Server;
  });

describe("answerBesidePonder", () => {
  it("Ponder's server answers PONDER_ROUTES itself and passes every other path to the API's app", () => {
    const server = dist("server/index.js");
    const own = [...server.matchAll(/^\s*\.get\("([^"]+)"/gm)].map((m) => m[1]);
    expect(new Set(own)).toEqual(PONDER_ROUTES);
    expect(server).toContain('.route("/", apiBuild.app)');
    expect(server).toMatch(/serve\(\{\s*fetch: hono\.fetch,/);
    expect(dist("utils/port.js")).toContain("http.createServer()");
  });

  it("leaves a server without a listener (Ponder's port probe) as it is", () => {
    const probe = http.createServer();
    const taken = answerBesidePonder(
      probe,
      () => undefined,
      async () => undefined,
    );
    expect([taken, probe.listenerCount("request")]).toEqual([false, 0]);
  });

  it("sends PONDER_ROUTES to Ponder's listener, with or without a query, and every other path to the API", async () => {
    const ponderApp = new Hono().all("*", (c) => c.text(`ponder ${c.req.path}`));
    const apiApp = new Hono().all("*", (c) => c.text(`api ${c.req.path}`));
    const server = await listening(ponderApp);
    expect(answerBesidePonder(server, getRequestListener(apiApp.fetch), async () => undefined)).toBe(true);
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const answers: Record<string, string> = {};
      for (const path of [
        "/metrics",
        "/health",
        "/ready?x=1",
        "/status",
        "/registry/v2/check/all?chainId=1",
        "/ready/",
        "/graphql",
        "/",
      ])
        answers[path] = await (await fetch(base + path)).text();
      expect(answers).toEqual({
        "/metrics": "ponder /metrics",
        "/health": "ponder /health",
        "/ready?x=1": "ponder /ready",
        "/status": "ponder /status",
        "/registry/v2/check/all?chainId=1": "api /registry/v2/check/all",
        "/ready/": "api /ready/",
        "/graphql": "api /graphql",
        "/": "api /",
      });
    } finally {
      await new Promise<void>((ok) => server.close(() => ok()));
    }
  });

  it("answers /ready 503 with the reason while notReady names one, and hands it to Ponder once none", async () => {
    const ponderApp = new Hono().all("*", (c) => c.text(`ponder ${c.req.path}`));
    const server = await listening(ponderApp);
    let reason: string | undefined = "the copy has not seen it yet";
    answerBesidePonder(
      server,
      () => undefined,
      async () => reason,
    );
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const waiting = await fetch(`${base}/ready`);
      expect([waiting.status, await waiting.text()]).toEqual([503, "the copy has not seen it yet"]);
      expect(await (await fetch(`${base}/health`)).text()).toBe("ponder /health");
      reason = undefined;
      const ready = await fetch(`${base}/ready?x=1`);
      expect([ready.status, await ready.text()]).toEqual([200, "ponder /ready"]);
    } finally {
      await new Promise<void>((ok) => server.close(() => ok()));
    }
  });
});

describe("the sync cache", () => {
  /** Ponder's sync tables (sync-store/schema.ts) by name, with their columns' names (snake case, as Ponder's
   * drizzle writes them) and SQL types. */
  let tables: Map<string, { schema: string | undefined; columns: Map<string, string> }>;

  beforeAll(async () => {
    const exports = (await internal("sync-store/schema.js")) as Record<string, unknown>;
    tables = new Map();
    for (const value of Object.values(exports)) {
      if (typeof value !== "object" || value === null || !(Symbol.for("drizzle:IsDrizzleTable") in value)) continue;
      const config = getTableConfig(value as PgTable);
      tables.set(config.name, {
        schema: config.schema,
        columns: new Map(config.columns.map((c) => [toSnakeCase(c.name), c.getSQLType()])),
      });
    }
  });

  it("is schema ponder_sync, and PONDER_SYNC_TABLES are exactly its tables with a chain_id", () => {
    expect(new Set([...tables.values()].map((t) => t.schema))).toEqual(new Set(["ponder_sync"]));
    const withChain = [...tables].filter(([, t]) => t.columns.has("chain_id")).map(([name]) => name);
    expect(withChain.sort()).toEqual([...PONDER_SYNC_TABLES].sort());
  });

  it("NEWEST_SYNCED_BLOCK_SQL finds a chain's newest block in its blocks and logs, in Ponder's columns", async () => {
    const present = async () => (await db.query<{ present: boolean }>(SYNC_CACHE_PRESENT_SQL)).rows[0]?.present;
    expect(await present(), "no sync cache yet").toBe(false);
    await db.exec(`CREATE SCHEMA ${PONDER_SYNC_SCHEMA}`);
    for (const [name, wanted] of [
      ["blocks", ["chain_id", "number", "hash"]],
      ["logs", ["chain_id", "block_number", "block_hash"]],
    ] as const) {
      const columns = tables.get(name)!.columns;
      const ddl = wanted.map((column) => `${column} ${columns.get(column)}`);
      await db.exec(`CREATE TABLE ponder_sync.${name} (${ddl.join(", ")})`);
    }
    await db.exec(`INSERT INTO ponder_sync.blocks VALUES (1, 10, '0xb10'), (1, 12, '0xb12'), (2, 99, '0xb99')`);
    await db.exec(`INSERT INTO ponder_sync.logs VALUES (1, 11, '0xb11'), (3, 5, '0xb5')`);
    const newest = async (chainId: number) => (await db.query(NEWEST_SYNCED_BLOCK_SQL, [chainId])).rows;
    expect(await newest(1)).toEqual([{ number: "12", hash: "0xb12" }]);
    expect(await newest(3)).toEqual([{ number: "5", hash: "0xb5" }]);
    expect(await newest(4)).toEqual([]);
    expect(await present(), "the sync cache, once its logs table exists").toBe(true);
  });

  it("dropSyncedChain drops one chain's rows from every table of the cache, and only that chain's", async () => {
    const others = PONDER_SYNC_TABLES.filter((name) => name !== "blocks" && name !== "logs");
    for (const name of others) {
      await db.exec(`CREATE TABLE ponder_sync.${name} (chain_id ${tables.get(name)!.columns.get("chain_id")})`);
      await db.exec(`INSERT INTO ponder_sync.${name} VALUES (1), (2)`);
    }
    await db.transaction((tx) => dropSyncedChain((text, params) => tx.query(text, params), 1));
    for (const name of PONDER_SYNC_TABLES) {
      const { rows } = await db.query<{ chain_id: number }>(`SELECT DISTINCT chain_id::int FROM ponder_sync.${name}`);
      expect(
        rows.filter((r) => r.chain_id === 1),
        name,
      ).toEqual([]);
    }
    expect((await db.query("SELECT chain_id::int FROM ponder_sync.blocks")).rows).toEqual([{ chain_id: 2 }]);
    expect((await db.query("SELECT count(*)::int AS n FROM ponder_sync.intervals")).rows).toEqual([{ n: 1 }]);
  });
});

describe("finality, logs and the backfill's metrics", () => {
  it("ponderFinalityDepth is Ponder's own count for every chain it names, and its default", async () => {
    const { getFinalityBlockCount } = (await internal("utils/finality.js")) as {
      getFinalityBlockCount: (args: { chain: { id: number } }) => number;
    };
    const named = [...dist("utils/finality.js").matchAll(/case (\d+):/g)].map((m) => Number(m[1]));
    expect(named.length, "the chains Ponder's finality names").toBeGreaterThan(10);
    for (const id of [...named, 31337, 8453, 10, 7777777])
      expect(ponderFinalityDepth(id), `chain ${id}`).toBe(getFinalityBlockCount({ chain: { id } }));
  });

  it("PONDER_LOG's lines are Ponder's messages as its backfill starts and ends", () => {
    expect(dist("runtime/historical.js")).toContain(`msg: "${PONDER_LOG.backfillStarted}"`);
    expect(dist("runtime/multichain.js")).toContain(`msg: "${PONDER_LOG.backfillCompleted}"`);
  });

  it("PONDER_LOG's live lines: as indexing goes live and a final block moves (ponderLoggedFinalized)", () => {
    expect(dist("runtime/realtime.js")).toMatch(
      new RegExp(`msg: "${PONDER_LOG.liveStarted}",\\s*chain: params\\.chain\\.name,[^}]*finalized_block:`),
    );
    expect(dist("runtime/multichain.js")).toMatch(
      new RegExp(`msg: "${PONDER_LOG.finalized}",\\s*chain: event\\.chain\\.name,[^}]*number:`),
    );
    // As `ponder start` prints them (its pretty logger), colours stripped.
    const log = [
      "14:20:41.291 INFO  Started live indexing chain=anvil finalized_block=0 factory_address_count=0",
      "14:20:42.000 INFO  Started live indexing chain=base finalized_block=700 factory_address_count=0",
      "14:20:49.152 INFO  Finalized block chain=anvil number=30 (41ms)",
      "14:20:50.152 INFO  Finalized block chain=base number=730 (41ms)",
    ];
    expect(ponderLoggedFinalized(log.slice(0, 2).join("\n"), "anvil")).toBe(0n);
    expect(ponderLoggedFinalized(log.join("\n"), "anvil")).toBe(30n);
    expect(ponderLoggedFinalized(log.join("\n"), "base")).toBe(730n);
    expect(ponderLoggedFinalized(log.join("\n"), "optimism")).toBeUndefined();
  });

  it("PONDER_BACKFILL_GAUGES are the gauges and labels Ponder's historical loop adds its times to", () => {
    const loop = dist("runtime/multichain.js");
    for (const gauge of Object.values(PONDER_BACKFILL_GAUGES)) {
      const [, name, label, value] = /^(\w+)\{(\w+)="(\w+)"\}$/.exec(gauge)!;
      expect(loop, gauge).toContain(`common.metrics.${name}.inc({ ${label}: "${value}" }`);
      expect(dist("internal/metrics.js"), gauge).toMatch(
        new RegExp(`name: "${name}",[^}]*labelNames: \\["${label}"\\]`),
      );
    }
  });

  it("its read-only connections give up on a lock after 500 ms", () => {
    expect(dist("utils/pg.js")).toContain("SET lock_timeout = '500ms';");
  });
});

describe("ponder start's exit codes", () => {
  it("75 after an error worth retrying, 1 after the user's", () => {
    const exit = dist("bin/utils/exit.js");
    const handler = new RegExp(
      String.raw`if \(error instanceof NonRetryableUserError\) \{\s*exit\(\{ code: 1 \}\);\s*\}` +
        String.raw`\s*else \{\s*exit\(\{ code: (\d+) \}\);`,
      "g",
    );
    const handlers = [...exit.matchAll(handler)];
    expect(
      handlers.map((m) => Number(m[1])),
      "uncaughtException and unhandledRejection",
    ).toEqual([PONDER_RETRYABLE_EXIT, PONDER_RETRYABLE_EXIT]);
  });
});

describe("ponderPglite: Ponder's PGlite instance behind the API's db", () => {
  it("the API's db is Ponder's read-only query builder's drizzle db, over the instance the indexer writes", () => {
    expect(dist("build/plugin.js")).toContain("export const db = globalThis.PONDER_DATABASE.readonlyQB.raw;");
    expect(dist("database/queryBuilder.js")).toContain("qb.raw = db;");
    const index = dist("database/index.js");
    for (const qb of ["userQB", "readonlyQB"])
      expect(index).toContain(`${qb} = createQB(drizzlePglite(driver.instance, {`);
  });

  it("finds the instance under a drizzle database on PGlite, and none on Postgres", async () => {
    const pglite = await PGlite.create();
    try {
      expect(ponderPglite(drizzlePglite(pglite))).toBe(pglite);
      expect(ponderPglite(drizzleNodePg(new pg.Pool()))).toBeUndefined();
    } finally {
      await pglite.close();
    }
  });

  it("a transaction on it and the indexer's (drizzle's) never interleave: each sees the other whole or not \
at all", async () => {
    const pglite = await PGlite.create();
    try {
      await pglite.exec("CREATE TABLE t (x int)");
      const pause = () => new Promise((ok) => setTimeout(ok, 20));
      const ours = pgliteDb(pglite);
      const indexer = drizzlePglite(pglite);
      const seen: number[] = [];
      const count = async (query: (text: string) => Promise<{ rows: Record<string, unknown>[] }>) =>
        seen.push(Number((await query("SELECT count(*) AS n FROM t")).rows[0]!.n));
      await Promise.all([
        indexer.transaction(async (tx) => {
          await tx.execute(drizzleSql`INSERT INTO t VALUES (1)`);
          await pause();
          await tx.execute(drizzleSql`INSERT INTO t VALUES (2)`);
        }),
        ours.transaction(async (query) => {
          await count(query);
          await pause();
          await count(query);
        }),
        indexer.transaction(async (tx) => {
          await tx.execute(drizzleSql`INSERT INTO t VALUES (3)`);
          await pause();
          await tx.execute(drizzleSql`INSERT INTO t VALUES (4)`);
        }),
      ]);
      // Ours ran between the two, whole: both its reads saw the first transaction, none the second.
      expect(seen).toEqual([2, 2]);
    } finally {
      await pglite.close();
    }
  });
});

/**
 * Ponder's own live sync (sync-realtime), fed a chain block by block with no filters (so it asks
 * the RPC only for the blocks a reorganization walks back through): the blocks it holds final,
 * and whether it follows a fork or gives it up as beyond its final block.
 */
describe("Ponder's live finality", () => {
  type Block = { number: bigint; hash: `0x${string}`; parentHash: `0x${string}` };
  const hex = (n: bigint) => `0x${n.toString(16)}` as const;
  const hash = (branch: number, n: bigint) =>
    `0x${branch.toString(16).padStart(8, "0")}${n.toString(16).padStart(56, "0")}` as const;
  /** Blocks `from`..`to` of `branch`, the first a child of `parent`. */
  const branchOf = (branch: number, parent: Block, to: bigint): Block[] => {
    const blocks: Block[] = [];
    for (let n = parent.number + 1n, up = parent; n <= to; n++) {
      up = { number: n, hash: hash(branch, n), parentHash: up.hash };
      blocks.push(up);
    }
    return blocks;
  };
  const wire = (b: Block) => ({
    number: hex(b.number),
    hash: b.hash,
    parentHash: b.parentHash,
    timestamp: hex(1_700_000_000n + b.number),
    // Not the empty bloom, for which Ponder asks for the logs whatever its filters.
    logsBloom: `0x${"00".repeat(255)}01`,
    transactions: [],
  });

  /**
   * Ponder's live sync from block `start` (final), fed the blocks after it up to `fork` + `depth`,
   * then the first block of another branch from `fork`: the final block at the old tip, and what it
   * made of the fork ("followed": a reorg event; "refused": the unrecoverable reorg it logs).
   */
  async function forkThrough(fork: bigint, depth: bigint, start = 0n) {
    const { createRealtimeSync } = (await internal("sync-realtime/index.js")) as {
      createRealtimeSync: (args: unknown) => {
        sync(block: unknown): AsyncGenerator<{ type: string; block?: { number: string } }>;
      };
    };
    const genesis: Block = { number: start, hash: hash(1, start), parentHash: hash(0, start) };
    const old = branchOf(1, genesis, fork + depth);
    const known = new Map([genesis, ...old].map((b) => [b.hash, b]));
    const warnings: string[] = [];
    const logger = {
      trace() {},
      debug() {},
      info() {},
      error() {},
      warn: (entry: { msg: string }) => warnings.push(entry.msg),
      child: () => logger,
    };
    const sync = createRealtimeSync({
      common: { logger, shutdown: { isKilled: false } },
      chain: { id: 31337, name: "anvil", finalityBlockCount: ponderFinalityDepth(31337), pollingInterval: 1_000 },
      rpc: {
        request: async ({ method, params }: { method: string; params: [`0x${string}`] }) => {
          if (method !== "eth_getBlockByHash") throw new Error(`unexpected ${method}`);
          const block = known.get(params[0]);
          return block && wire(block);
        },
      },
      eventCallbacks: [],
      syncProgress: { finalized: { ...wire(genesis) } },
      childAddresses: new Map(),
    });
    let final = start;
    const take = async (block: Block) => {
      const events: { type: string; block?: { number: string } }[] = [];
      for await (const event of sync.sync(wire(block))) events.push(event);
      for (const event of events) if (event.type === "finalize") final = BigInt(event.block!.number);
      return events;
    };
    for (const block of old) await take(block);
    const finalAtTip = final;
    const [replacing] = branchOf(2, old.find((b) => b.number === fork) ?? genesis, fork + 1n);
    known.set(replacing!.hash, replacing!);
    const events = await take(replacing!);
    const outcome = events.some((e) => e.type === "reorg")
      ? "followed"
      : warnings.includes("Encountered unrecoverable reorg")
        ? "refused"
        : "neither";
    return { finalAtTip, outcome };
  }

  it("moves a chain's final block in steps of the depth, at twice the depth past it: ponderFinalizedAt", async () => {
    const steps: [start: bigint, tip: bigint, final: bigint][] = [
      [0n, 59n, 0n],
      [0n, 60n, 30n],
      [0n, 89n, 30n],
      [0n, 90n, 60n],
      [0n, 150n, 120n],
      [40n, 99n, 40n],
      [40n, 100n, 70n],
    ];
    for (const [start, tip, final] of steps) {
      const { finalAtTip } = await forkThrough(tip - 5n, 5n, start);
      expect(finalAtTip, `Ponder's final block at block ${tip}, from ${start}`).toBe(final);
      expect(ponderFinalizedAt(31337, start, tip), `at block ${tip}, from ${start}`).toBe(final);
    }
  });

  it("follows or refuses a fork 40 blocks deep by where the final block's steps fall, not by its depth", async () => {
    const outcomes = new Map<string, bigint[]>();
    for (let fork = 30n; fork < 60n; fork++) {
      const { outcome } = await forkThrough(fork, 40n);
      // A fork whose first replaced block Ponder holds final is refused; any other, followed.
      const expected = ponderFinalizedAt(31337, 0n, fork + 40n) > fork ? "refused" : "followed";
      expect(outcome, `a fork at block ${fork}, 40 blocks deep`).toBe(expected);
      outcomes.set(outcome, [...(outcomes.get(outcome) ?? []), fork]);
    }
    // Within one step of the final block, both: the depth alone does not say which.
    expect(outcomes.get("followed")).toEqual(Array.from({ length: 20 }, (_, i) => 30n + BigInt(i)));
    expect(outcomes.get("refused")).toEqual(Array.from({ length: 10 }, (_, i) => 50n + BigInt(i)));
    // Within the depth, always followed; past twice the depth, always refused.
    for (let fork = 30n; fork < 60n; fork += 7n) {
      expect((await forkThrough(fork, 5n)).outcome, `a fork at ${fork}, 5 blocks deep`).toBe("followed");
      expect((await forkThrough(fork, 80n)).outcome, `a fork at ${fork}, 80 blocks deep`).toBe("refused");
    }
  });
});
