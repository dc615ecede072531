/**
 * The environment parsed once: how the RPC variables select chains, every documented default, and
 * an error naming the variable for each value a variable cannot take.
 */
import { mainnet } from "viem/chains";
import { describe, expect, it } from "vitest";
import { CHAINS, chainById } from "./chains";
import { encodePlan, INDEX_ONLY_VARIABLE, PLAN_VARIABLE, WATCH_VARIABLE } from "./plan";
import {
  configuredChains,
  demoSettings,
  INDEX_ONLY_POOL_MAX,
  ignoredRpcVariables,
  keysSettings,
  launcherSettings,
  ponderSettings,
  SettingsError,
  serveSettings,
} from "./settings";

/** The URLs configured for chain `id` (none: not configured). */
const rpcUrls = (id: number, env: Record<string, string>) => configuredChains(env).find((c) => c.chain.id === id)?.rpc;

describe("RPC configuration", () => {
  it("PONDER_RPC_URL_<id>: comma-separated, trimmed, empty items dropped", () => {
    const env = {
      PONDER_RPC_URL_1: " https://a.example/rpc , https://b.example/rpc,,https://c.example/rpc?x=1 ,",
      PONDER_RPC_URL_10: "https://only.example",
      PONDER_RPC_URL_56: "",
      PONDER_RPC_URL_100: "  ,  , ",
    };
    expect(rpcUrls(1, env)).toEqual(["https://a.example/rpc", "https://b.example/rpc", "https://c.example/rpc?x=1"]);
    expect(rpcUrls(10, env)).toEqual(["https://only.example"]);
    expect(rpcUrls(56, env)).toBeUndefined();
    expect(rpcUrls(100, env)).toBeUndefined();
    expect(rpcUrls(137, env)).toBeUndefined();
  });

  it("configuredChains picks exactly the table's chains that have a URL, in table order", () => {
    const env = {
      PONDER_RPC_URL_11155111: "http://sepolia.example",
      PONDER_RPC_URL_31337: "http://127.0.0.1:8545",
      PONDER_RPC_URL_1: "http://a, http://b",
      PONDER_RPC_URL_10: "",
      PONDER_RPC_URL_56: " , ",
      PONDER_RPC_URL_999999: "http://unknown.example",
      SOMETHING_ELSE: "x",
    };
    const picked = configuredChains(env).map((c) => c.chain.id);
    expect(picked).toEqual(CHAINS.map((c) => c.id).filter((id) => [1, 11155111, 31337].includes(id)));
    expect(configuredChains({})).toEqual([]);
    // Every table chain can be configured.
    const all = Object.fromEntries(CHAINS.map((c) => [`PONDER_RPC_URL_${c.id}`, `http://rpc/${c.id}`]));
    expect(configuredChains(all).map((c) => c.chain)).toEqual([...CHAINS]);
  });

  it("a chain's WebSocket URL (PONDER_WS_URL_<id>) goes with its RPC URLs; not ws:// or wss://: refused", () => {
    const env = { PONDER_RPC_URL_1: "http://a", PONDER_WS_URL_1: " wss://a/ws ", PONDER_RPC_URL_10: "http://b" };
    expect(configuredChains(env).map(({ chain, ws }) => [chain.id, ws])).toEqual([
      [1, "wss://a/ws"],
      [10, undefined],
    ]);
    expect(() => configuredChains({ ...env, PONDER_WS_URL_10: "http://b" })).toThrow(
      "PONDER_WS_URL_10: expected a WebSocket URL (ws:// or wss://)",
    );
  });

  it("ignoredRpcVariables flags non-empty URLs that configure no chain", () => {
    const env = {
      PONDER_RPC_URL_1: "http://a",
      PONDER_RPC_URL_999999: "http://unknown.example",
      PONDER_RPC_URL_5: "http://goerli.example",
      PONDER_RPC_URL_42: "   ",
      PONDER_RPC_URL_43: "",
      PONDER_RPC_URL_mainnet: "http://named.example",
      PONDER_RPC_URL_: "http://empty-id.example",
      PONDER_RPC_URL_01: "http://leading-zero.example",
      PONDER_RPC_URL_00031337: "http://leading-zeros.example",
      OTHER_RPC_URL_77: "http://x",
    };
    expect(ignoredRpcVariables(env).sort()).toEqual([
      "PONDER_RPC_URL_",
      "PONDER_RPC_URL_00031337",
      "PONDER_RPC_URL_01",
      "PONDER_RPC_URL_5",
      "PONDER_RPC_URL_999999",
      "PONDER_RPC_URL_mainnet",
    ]);
    expect(ignoredRpcVariables({ PONDER_RPC_URL_31337: "http://127.0.0.1:8545" })).toEqual([]);
    // A WebSocket URL tells an indexed chain's new blocks: without the chain's RPC URLs it does nothing.
    const ws = {
      PONDER_RPC_URL_1: "http://a",
      PONDER_WS_URL_1: "ws://a",
      PONDER_WS_URL_10: "ws://b",
      PONDER_WS_URL_7: "ws://c",
    };
    expect(ignoredRpcVariables(ws).sort()).toEqual(["PONDER_WS_URL_10", "PONDER_WS_URL_7"]);
    expect(ignoredRpcVariables({})).toEqual([]);
    expect(launcherSettings(env).ignoredRpcVariables.sort()).toEqual(ignoredRpcVariables(env).sort());
  });
});

describe("npm start's public RPC fallback", () => {
  it("with no chain configured: Ethereum mainnet through viem's public RPC, said to the caller", () => {
    const { chains, publicFallback } = launcherSettings({ PONDER_RPC_URL_10: " , ", OTHER: "x" });
    expect(publicFallback?.id).toBe(1);
    expect(chains.map((c) => c.chain.id)).toEqual([1]);
    expect(chains[0]!.rpc).toEqual([mainnet.rpcUrls.default.http[0]]);
    expect(chains[0]!.rpc[0]).toMatch(/^https:\/\//);
  });

  it("with any chain configured: those chains, no fallback", () => {
    const { chains, publicFallback } = launcherSettings({ PONDER_RPC_URL_31337: "http://127.0.0.1:8545" });
    expect(publicFallback).toBeUndefined();
    expect(chains).toEqual([{ chain: chainById(31337), rpc: ["http://127.0.0.1:8545"] }]);
  });
});

describe("defaults (README, Configuration)", () => {
  it("npm start", () => {
    const settings = launcherSettings({ PONDER_RPC_URL_31337: "http://127.0.0.1:8545" });
    expect(settings).toMatchObject({
      port: 42069,
      schema: "delegations",
      viewsSchema: "delegation_views",
      startBlocksFile: ".ponder/start-blocks.json",
      database: { url: undefined, pgliteDir: ".ponder/pglite" },
      access: {
        adminToken: undefined,
        schema: "delegation_access",
        trustedProxy: false,
        feedStreamsPerKey: 50,
        feedRetentionDays: 30,
        webhookAllowPrivate: false,
      },
      behindAfterSeconds: 120,
      replicaRoles: { reader: undefined, access: undefined },
      apart: false,
      groups: [[31337]],
    });
  });

  it("npm start: INDEX_CHAINS_APART=true, on Postgres only", () => {
    const env = { PONDER_RPC_URL_31337: "http://127.0.0.1:8545", INDEX_CHAINS_APART: "true" };
    expect(launcherSettings({ ...env, DATABASE_URL: "postgres://db" }).apart).toBe(true);
    expect(() => launcherSettings(env)).toThrow(/^INDEX_CHAINS_APART=true runs a process per chain over Postgres/);
    expect(() => launcherSettings({ ...env, INDEX_CHAINS_APART: "yes" })).toThrow(/^INDEX_CHAINS_APART="yes"/);
  });

  it("npm start: INDEX_CHAIN_GROUPS puts chains indexed apart in groups, every other chain alone", () => {
    const env = {
      DATABASE_URL: "postgres://db",
      INDEX_CHAINS_APART: "true",
      ...Object.fromEntries([1, 10, 137, 8453, 42161].map((id) => [`PONDER_RPC_URL_${id}`, "http://127.0.0.1:8545"])),
    };
    expect(launcherSettings(env).groups).toEqual([[1], [10], [137], [8453], [42161]]);
    expect(launcherSettings({ ...env, INDEX_CHAIN_GROUPS: "8453+10, 42161+137" }).groups).toEqual([
      [1],
      [10, 8453],
      [137, 42161],
    ]);
    const groups = (value: string) => launcherSettings({ ...env, INDEX_CHAIN_GROUPS: value });
    expect(() => groups("10+56")).toThrow(/^INDEX_CHAIN_GROUPS: "56" is not the id of a chain with a PONDER_RPC_URL/);
    expect(() => groups("10+8453,8453")).toThrow(/^INDEX_CHAIN_GROUPS names chain 8453 twice/);
    expect(() => groups("10+")).toThrow(/^INDEX_CHAIN_GROUPS: "" is not/);
    expect(() => groups("10;8453")).toThrow(/^INDEX_CHAIN_GROUPS: "10;8453" is not/);
    expect(() => launcherSettings({ ...env, INDEX_CHAINS_APART: "false", INDEX_CHAIN_GROUPS: "10+8453" })).toThrow(
      /^INDEX_CHAIN_GROUPS groups chains indexed apart: set INDEX_CHAINS_APART=true too/,
    );
  });

  it("npm start: --port and --schema on the command line win over PORT and DATABASE_SCHEMA", () => {
    const env = { PORT: "8080", DATABASE_SCHEMA: "from_env" };
    expect(launcherSettings(env)).toMatchObject({ port: 8080, schema: "from_env" });
    expect(launcherSettings(env, ["--schema", "s", "--port", "9000"])).toMatchObject({ port: 9000, schema: "s" });
    expect(launcherSettings(env, ["-p", "9001"])).toMatchObject({ port: 9001 });
    expect(launcherSettings(env, ["--port=9002", "--schema=t"])).toMatchObject({ port: 9002, schema: "t" });
    // The last of an option given twice wins.
    expect(launcherSettings(env, ["-p", "9003", "--port", "9004"])).toMatchObject({ port: 9004 });
  });

  it("npm start: --views-schema on the command line wins over DATABASE_VIEWS_SCHEMA", () => {
    const env = { DATABASE_VIEWS_SCHEMA: "analytics" };
    expect(launcherSettings(env)).toMatchObject({ viewsSchema: "analytics" });
    expect(launcherSettings(env, ["--views-schema", "v"])).toMatchObject({ viewsSchema: "v" });
  });

  it("npm run serve", () => {
    expect(serveSettings({ DATABASE_URL: "postgres://db" })).toMatchObject({
      port: 42070,
      host: undefined,
      workers: undefined,
      schema: "delegations",
      database: { url: "postgres://db", accessUrl: "postgres://db" },
      behindAfterSeconds: 120,
      replicaBehindSeconds: 30,
      mallocMmapThreshold: 131_072,
      rpc: [],
    });
    // The chains' RPCs as `npm start` reads them: where a replica reads a moment's headers.
    const rpc = { DATABASE_URL: "postgres://db", PONDER_RPC_URL_10: "https://a.example, https://b.example" };
    expect(serveSettings(rpc).rpc).toEqual([{ chain: chainById(10), rpc: ["https://a.example", "https://b.example"] }]);
    expect(
      serveSettings({
        DATABASE_URL: "postgres://db",
        HOST: "127.0.0.1",
        API_WORKERS: "3",
        PORT: "1",
        TRUSTED_PROXY: "true",
        FEED_STREAMS_PER_KEY: "7",
        FEED_RETENTION_DAYS: "3",
        REPLICA_BEHIND_SECONDS: "2.5",
        MALLOC_MMAP_THRESHOLD_: "65536",
      }),
    ).toMatchObject({
      host: "127.0.0.1",
      workers: 3,
      port: 1,
      access: { trustedProxy: true, feedStreamsPerKey: 7, feedRetentionDays: 3 },
      replicaBehindSeconds: 2.5,
      mallocMmapThreshold: 65_536,
    });
  });

  it("npm run keys", () => {
    expect(keysSettings({})).toEqual({ serviceUrl: "http://127.0.0.1:42069", adminToken: undefined });
    expect(keysSettings({ SERVICE_URL: "https://lookup.example/", ADMIN_TOKEN: "t" })).toEqual({
      serviceUrl: "https://lookup.example",
      adminToken: "t",
    });
  });

  it("npm run demo", () => {
    expect(demoSettings({})).toEqual({ port: 42069, ignoresDatabaseUrl: false });
    expect(demoSettings({ PORT: "8080", DATABASE_URL: "postgres://db" })).toEqual({
      port: 8080,
      ignoresDatabaseUrl: true,
    });
    expect(demoSettings({ PORT: "", DATABASE_URL: "" })).toEqual({ port: 42069, ignoresDatabaseUrl: false });
  });

  it("an empty variable is an unset one", () => {
    const settings = launcherSettings({ PONDER_RPC_URL_1: "http://a", ADMIN_TOKEN: "", PGLITE_DIR: "", PORT: "" });
    expect(settings).toMatchObject({
      port: 42069,
      access: { adminToken: undefined },
      database: { pgliteDir: ".ponder/pglite" },
    });
  });
});

describe("the API replicas' Postgres roles", () => {
  const owner = "postgres://owner:secret@db:5432/delegations";

  it("npm run serve reads through DATABASE_URL and keeps the keys and budgets through ACCESS_DATABASE_URL", () => {
    const env = {
      DATABASE_URL: "postgres://reader:r@standby/db",
      ACCESS_DATABASE_URL: "postgres://access:a@primary/db",
    };
    expect(serveSettings(env).database).toMatchObject({
      url: "postgres://reader:r@standby/db",
      accessUrl: "postgres://access:a@primary/db",
    });
    expect(serveSettings({ ...env, ACCESS_DATABASE_URL: "" }).database.accessUrl).toBe(
      "postgres://reader:r@standby/db",
    );
  });

  it("npm start makes the roles the replicas' URLs log in as, user and password decoded", () => {
    const settings = launcherSettings({
      DATABASE_URL: owner,
      REPLICA_DATABASE_URL: "postgres://delegation_reader:p%40ss%3Aword@standby:5432/delegations",
      REPLICA_ACCESS_DATABASE_URL: "postgresql://delegation_access:x@db/delegations",
    });
    expect(settings.replicaRoles).toEqual({
      reader: { name: "delegation_reader", password: "p@ss:word" },
      access: { name: "delegation_access", password: "x" },
    });
    expect(launcherSettings({ DATABASE_URL: owner, REPLICA_DATABASE_URL: "postgres://r:p@db/d" }).replicaRoles).toEqual(
      {
        reader: { name: "r", password: "p" },
        access: undefined,
      },
    );
  });

  it("refuses a URL without user or password, the indexer's own role, one role for both, or no Postgres", () => {
    const cases: [Record<string, string>, RegExp][] = [
      [
        { DATABASE_URL: owner, REPLICA_DATABASE_URL: "postgres://reader@db/d" },
        /^REPLICA_DATABASE_URL: expected a URL/,
      ],
      [{ DATABASE_URL: owner, REPLICA_ACCESS_DATABASE_URL: "db" }, /^REPLICA_ACCESS_DATABASE_URL: expected a URL/],
      [{ DATABASE_URL: owner, REPLICA_DATABASE_URL: "mysql://r:p@db/d" }, /^REPLICA_DATABASE_URL: expected a URL/],
      [{ DATABASE_URL: owner, REPLICA_DATABASE_URL: "postgres://owner:other@db/d" }, /DATABASE_URL's \(owner\)/],
      [
        {
          DATABASE_URL: owner,
          REPLICA_DATABASE_URL: "postgres://r:p@db/d",
          REPLICA_ACCESS_DATABASE_URL: "postgres://r:q@db/d",
        },
        /name one user: the reader must not write/,
      ],
      [{ REPLICA_ACCESS_DATABASE_URL: "postgres://a:p@db/d" }, /set DATABASE_URL too/],
    ];
    for (const [env, message] of cases) {
      expect(() => launcherSettings(env)).toThrow(SettingsError);
      expect(() => launcherSettings(env)).toThrow(message);
    }
  });

  it("never echoes the password it was given", () => {
    expect(() => launcherSettings({ DATABASE_URL: owner, REPLICA_DATABASE_URL: "postgres://:hunter2@db/d" })).toThrow(
      /^(?!.*hunter2)/s,
    );
    expect(() => launcherSettings({ DATABASE_URL: owner, REPLICA_DATABASE_URL: "x:hunter2hunter2" })).toThrow(
      /^(?!.*hunter2)/s,
    );
  });
});

describe("invalid values: an error that names the variable", () => {
  const cases: [string, Record<string, string>, RegExp][] = [
    ["PORT", { PORT: "eighty" }, /^PORT="eighty": expected an integer from 1 to 65535/],
    ["PORT", { PORT: "70000" }, /^PORT="70000"/],
    ["PORT", { PORT: "0" }, /^PORT="0"/],
    ["BEHIND_AFTER_SECONDS", { BEHIND_AFTER_SECONDS: "soon" }, /^BEHIND_AFTER_SECONDS="soon": expected a number/],
    ["BEHIND_AFTER_SECONDS", { BEHIND_AFTER_SECONDS: "0" }, /^BEHIND_AFTER_SECONDS="0"/],
    ["TRUSTED_PROXY", { TRUSTED_PROXY: "yes" }, /^TRUSTED_PROXY="yes": expected true or false/],
    ["FEED_STREAMS_PER_KEY", { FEED_STREAMS_PER_KEY: "0" }, /^FEED_STREAMS_PER_KEY="0": expected an integer/],
    ["FEED_RETENTION_DAYS", { FEED_RETENTION_DAYS: "1.5" }, /^FEED_RETENTION_DAYS="1.5": expected an integer/],
    ["ADMIN_TOKEN", { ADMIN_TOKEN: "short" }, /^ADMIN_TOKEN is too short .*at least 16/],
  ];
  it.each(cases)("%s, in npm start", (_, env, message) => {
    expect(() => launcherSettings({ PONDER_RPC_URL_1: "http://a", ...env })).toThrow(SettingsError);
    expect(() => launcherSettings({ PONDER_RPC_URL_1: "http://a", ...env })).toThrow(message);
  });

  it("a views schema that is the indexer's own schema", () => {
    const message = /^DATABASE_VIEWS_SCHEMA \(--views-schema\) is "s", the indexer's own schema/;
    expect(() => launcherSettings({ DATABASE_SCHEMA: "s", DATABASE_VIEWS_SCHEMA: "s" })).toThrow(message);
    expect(() => launcherSettings({ DATABASE_VIEWS_SCHEMA: "s" }, ["--schema", "s"])).toThrow(message);
    expect(() => launcherSettings({ DATABASE_VIEWS_SCHEMA: "delegations" })).toThrow(SettingsError);
  });

  it("--port", () => {
    expect(() => launcherSettings({}, ["--port", "x"])).toThrow(/^--port="x"/);
    expect(() => launcherSettings({}, ["-p", "0"])).toThrow(/^--port="0"/);
    expect(() => launcherSettings({}, ["--port"])).toThrow(/^Option '-p, --port <value>' argument missing/);
    expect(() => launcherSettings({}, ["--port", "--schema", "s"])).toThrow(/^Option '--port' argument is ambiguous/);
  });

  it("an option without a value, one npm start does not take, or an argument: an error with the usage", () => {
    const usage = /\nusage: npm start -- \[--port <port>\] \[--schema <schema>\] \[--views-schema <schema>\]$/;
    const bad = [["--schema"], ["--schema="], ["--views-schema", ""], ["--prot", "9000"], ["-v"], ["9000"]];
    for (const args of bad) {
      expect(() => launcherSettings({}, args)).toThrow(SettingsError);
      expect(() => launcherSettings({}, args)).toThrow(usage);
    }
    expect(() => launcherSettings({}, ["--schema="])).toThrow(/^--schema needs a value/);
    expect(() => launcherSettings({}, ["--views-schema", ""])).toThrow(/^--views-schema needs a value/);
    expect(() => launcherSettings({}, ["--prot", "9000"])).toThrow(/^Unknown option '--prot'/);
    expect(() => launcherSettings({}, ["9000"])).toThrow(/^Unexpected argument '9000'/);
  });

  it("API_WORKERS, REPLICA_BEHIND_SECONDS and DATABASE_URL, in npm run serve", () => {
    const db = { DATABASE_URL: "postgres://db" };
    expect(() => serveSettings({ ...db, API_WORKERS: "many" })).toThrow(/^API_WORKERS="many"/);
    for (const value of ["soon", "0", "-5", "1e3"]) {
      expect(() => serveSettings({ ...db, REPLICA_BEHIND_SECONDS: value })).toThrow(SettingsError);
      expect(() => serveSettings({ ...db, REPLICA_BEHIND_SECONDS: value })).toThrow(
        `REPLICA_BEHIND_SECONDS=${JSON.stringify(value)}: expected a number of seconds above 0`,
      );
    }
    expect(() => serveSettings({})).toThrow(/set DATABASE_URL/);
  });

  it("MALLOC_MMAP_THRESHOLD_, in npm run serve: bytes, up to glibc's 32 MiB", () => {
    const db = { DATABASE_URL: "postgres://db" };
    expect(serveSettings({ ...db, MALLOC_MMAP_THRESHOLD_: "" }).mallocMmapThreshold).toBe(131_072);
    expect(serveSettings({ ...db, MALLOC_MMAP_THRESHOLD_: "33554432" }).mallocMmapThreshold).toBe(33_554_432);
    for (const value of ["128k", "-1", "33554433", "1e5"]) {
      expect(() => serveSettings({ ...db, MALLOC_MMAP_THRESHOLD_: value })).toThrow(
        `MALLOC_MMAP_THRESHOLD_=${JSON.stringify(value)}: expected an integer from 0 to 33554432`,
      );
    }
  });

  it("PORT, in npm run demo", () => {
    expect(() => demoSettings({ PORT: "eighty" })).toThrow(/^PORT="eighty": expected an integer from 1 to 65535/);
  });

  it("SERVICE_URL, in npm run keys", () => {
    expect(() => keysSettings({ SERVICE_URL: "not a url" })).toThrow(/^SERVICE_URL="not a url"/);
  });
});

describe("the Ponder process's settings", () => {
  const plan = [
    { chain: chainById(31337)!, rpc: ["http://127.0.0.1:8545"], v2: { address: CHAINS[0]!.v2.address, startBlock: 7 } },
  ];

  it("take the plan npm start hands over", () => {
    const settings = ponderSettings({ [PLAN_VARIABLE]: encodePlan(plan), DATABASE_URL: "postgres://db" });
    expect(settings.plan).toEqual(plan);
    expect(settings.database.url).toBe("postgres://db");
    expect(settings.reorgCheckSeconds).toBe(10);
    expect(settings.inMemory).toBe(true);
  });

  it("answer from memory unless INDEXER_IN_MEMORY=false", () => {
    const withPlan = (value: string) => ({ [PLAN_VARIABLE]: encodePlan(plan), INDEXER_IN_MEMORY: value });
    expect(ponderSettings(withPlan("false")).inMemory).toBe(false);
    expect(ponderSettings(withPlan("true")).inMemory).toBe(true);
    expect(() => ponderSettings(withPlan("no"))).toThrow(/^INDEXER_IN_MEMORY="no": expected true or false/);
  });

  it("check the indexed blocks against the chain every REORG_CHECK_SECONDS, a whole number of seconds", () => {
    const withPlan = (value: string) => ({ [PLAN_VARIABLE]: encodePlan(plan), REORG_CHECK_SECONDS: value });
    expect(ponderSettings(withPlan("2")).reorgCheckSeconds).toBe(2);
    for (const bad of ["0", "1.5", "x", "-1"])
      expect(() => ponderSettings(withPlan(bad))).toThrow(/^REORG_CHECK_SECONDS="[^"]*": expected an integer/);
  });

  it("index only where npm start runs the API beside them; a replica watches the chains only there", () => {
    const withPlan = { [PLAN_VARIABLE]: encodePlan(plan) };
    expect(ponderSettings(withPlan).indexOnly).toBe(false);
    expect(ponderSettings({ ...withPlan, [INDEX_ONLY_VARIABLE]: "true" }).indexOnly).toBe(true);
    // An indexer of chains apart holds few connections: the whole table's fit Postgres' limit.
    expect(ponderSettings(withPlan).poolMax).toBeUndefined();
    expect(ponderSettings({ ...withPlan, [INDEX_ONLY_VARIABLE]: "true" }).poolMax).toBe(INDEX_ONLY_POOL_MAX);
    const serve = { DATABASE_URL: "postgres://db", REORG_CHECK_SECONDS: "3" };
    expect(serveSettings(serve).reorgCheckSeconds).toBeUndefined();
    expect(serveSettings({ ...serve, [WATCH_VARIABLE]: "true" }).reorgCheckSeconds).toBe(3);
  });

  it("without it, say to run npm start", () => {
    expect(() => ponderSettings({})).toThrow(SettingsError);
    expect(() => ponderSettings({})).toThrow(/DELEGATION_LOOKUP_PLAN is not set.*Run `npm start`/s);
    expect(() => ponderSettings({ [PLAN_VARIABLE]: "{" })).toThrow(/^DELEGATION_LOOKUP_PLAN is not a plan/);
  });
});
