/**
 * The environment, parsed once and typed. Each entry point reads the settings it needs here and
 * hands them on as parameters: scripts/start.ts (launcherSettings), ponder.config.ts and
 * src/api/index.ts (ponderSettings), scripts/serve.ts (serveSettings), scripts/keys.ts
 * (keysSettings), scripts/demo.ts (demoSettings); nothing else reads process.env. The variables
 * and their defaults are the README's Configuration table. A value a variable cannot take is an
 * error that names the variable.
 */
import { parseArgs } from "node:util";
import { CHAINS, type ChainEntry, chainById } from "./chains";
import {
  decodePlan,
  INDEX_ONLY_VARIABLE,
  type IndexedChain,
  isWebSocketUrl,
  PLAN_VARIABLE,
  WATCH_VARIABLE,
} from "./plan";

/** The process environment, or a stand-in for it. */
export type Environment = Readonly<Record<string, string | undefined>>;

/** A variable holds a value it cannot take; the message names the variable and what it takes. */
export class SettingsError extends Error {}

/** Where the indexer keeps its data. */
export type DatabaseSettings = {
  /** DATABASE_URL: PostgreSQL; undefined: embedded PGlite. */
  url: string | undefined;
  /** PGLITE_DIR (default .ponder/pglite): the indexer's PGlite directory. */
  pgliteDir: string;
};

/** Keys and the keyless limit (docs/keys-and-limits.md). */
export type AccessSettings = {
  /** ADMIN_TOKEN, at least 16 characters; undefined: key management is off. */
  adminToken: string | undefined;
  /** ACCESS_SCHEMA (default delegation_access): keys, keyless windows and served chains on Postgres. */
  schema: string;
  /** TRUSTED_PROXY=true: the keyless limit counts the first address of X-Forwarded-For. */
  trustedProxy: boolean;
  /** FEED_STREAMS_PER_KEY (default 50): the change feed's streams a key may hold open at once, per process. */
  feedStreamsPerKey: number;
  /** FEED_RETENTION_DAYS (default 30): how long the change log keeps an entry. */
  feedRetentionDays: number;
  /** WEBHOOK_ALLOW_PRIVATE=true: webhooks may go to loopback and private addresses (a test, a private network). */
  webhookAllowPrivate: boolean;
};

/** What every process that serves the API reads. */
export type ApiSettings = {
  database: DatabaseSettings;
  access: AccessSettings;
  /** BEHIND_AFTER_SECONDS (default 120): a chain whose newest indexed block is older is `behind`. */
  behindAfterSeconds: number;
};

/** A Postgres role to log in as: the user and password of a connection URL. */
export type RoleLogin = { name: string; password: string };

/**
 * The roles `npm start` makes (or updates) for API replicas (scripts/launcher/roles.ts), named by the
 * URLs the replicas will connect with; undefined: not made.
 */
export type ReplicaRoles = {
  /** REPLICA_DATABASE_URL's user: reads the indexer's schema and the views schema, nothing else. */
  reader: RoleLogin | undefined;
  /** REPLICA_ACCESS_DATABASE_URL's user: reads and writes the access schema's tables, nothing else. */
  access: RoleLogin | undefined;
};

/**
 * A chain to index: its RPC URLs, and the WebSocket URL its indexer hears new blocks on
 * (PONDER_WS_URL_<id>; unset: it asks the RPC for the newest block every second).
 */
export type ConfiguredChain = { chain: ChainEntry; rpc: string[]; ws?: string };

/** `npm start`'s settings. */
export type LauncherSettings = ApiSettings & {
  /** `--port`/`-p`, else PORT, else 42069. */
  port: number;
  /** The indexer's schema: `--schema`, else DATABASE_SCHEMA, else delegations. */
  schema: string;
  /**
   * Where Ponder keeps views of the indexer's tables under their own names, pointed at `schema` once
   * its backfill is done (`ponder start --views-schema`): the names analysts' SQL uses, the same
   * across re-indexes on new schemas. `--views-schema`, else DATABASE_VIEWS_SCHEMA, else delegation_views.
   */
  viewsSchema: string;
  /** START_BLOCKS_FILE (default .ponder/start-blocks.json): the start blocks found before. */
  startBlocksFile: string;
  /** The chains with a PONDER_RPC_URL_<id>, in table order; none set: Ethereum mainnet's public RPC. */
  chains: ConfiguredChain[];
  /** The chain indexed through its public RPC because no PONDER_RPC_URL_<id> is set. */
  publicFallback: ChainEntry | undefined;
  /** PONDER_RPC_URL_* variables that configure no chain (see ignoredRpcVariables). */
  ignoredRpcVariables: string[];
  replicaRoles: ReplicaRoles;
  /**
   * INDEX_CHAINS_APART=true (Postgres only): each chain indexed by a Ponder process of its own, in a
   * schema of its own (`<schema>_<chainId>`), and the API served by a process beside them
   * (scripts/launcher/apart.ts); default false: one Ponder process for every chain, serving the API.
   */
  apart: boolean;
  /**
   * Where chains are indexed apart, the chain ids each Ponder process indexes (each group ascending,
   * the groups in order of their first chain): INDEX_CHAIN_GROUPS names groups (`1+10+8453,137+42161`),
   * every other chain is alone. A group shares one process, one schema and one fate (see chainGroups).
   */
  groups: number[][];
};

/** The Ponder process's settings (ponder.config.ts, src/api/index.ts). */
export type PonderSettings = ApiSettings & {
  /** What to index: the plan `npm start` hands over in PLAN_VARIABLE (core/plan.ts). */
  plan: IndexedChain[];
  /**
   * REORG_CHECK_SECONDS (default 10): how often indexed blocks are compared with the chain's
   * (api/watch/deep-reorg.ts).
   */
  reorgCheckSeconds: number;
  /**
   * INDEXER_IN_MEMORY (default true): on Postgres, answer checks and listings at the newest block
   * from an in-memory copy, as replicas do; false: a statement per answer, for an indexer whose
   * traffic replicas take (the copy costs about 1 KB per delegation). PGlite always holds the copy.
   */
  inMemory: boolean;
  /** INDEX_ONLY_VARIABLE: index, and serve no API (a process beside it serves it). */
  indexOnly: boolean;
  /**
   * The most Postgres connections its Ponder opens: Ponder's default (30) for the one indexer that
   * also serves the API; INDEX_ONLY_POOL_MAX for each of the indexers of chains apart, so that the
   * whole table's processes fit a Postgres' connection limit (docs/deployment.md).
   */
  poolMax: number | undefined;
};

/**
 * The Postgres connections of an index-only Ponder (two each for its own bookkeeping, its writes,
 * its reads and its sync cache: Ponder splits them so): it indexes one chain, or a few.
 */
export const INDEX_ONLY_POOL_MAX = 8;

/** `npm run serve`'s settings. */
export type ServeSettings = ApiSettings & {
  /**
   * `url`: what it reads (the indexer's tables), perhaps as a read-only role or on a hot standby.
   * `accessUrl`: ACCESS_DATABASE_URL (default DATABASE_URL), where the keys, the keyless budget and
   * the key usage are read and written.
   */
  database: { url: string; accessUrl: string };
  /** PORT, else 42070. */
  port: number;
  /** HOST: the address to listen on; undefined: all. */
  host: string | undefined;
  /** API_WORKERS: worker processes; undefined: one per core. */
  workers: number | undefined;
  /** DATABASE_SCHEMA (default delegations): the indexer's schema to serve. */
  schema: string;
  /**
   * REPLICA_BEHIND_SECONDS (default 30): on a hot standby, a chain is `behind` while the standby's
   * replay trails its primary by more, whatever its newest block's age (BEHIND_AFTER_SECONDS).
   */
  replicaBehindSeconds: number;
  /**
   * MALLOC_MMAP_THRESHOLD_ (default 131072), handed to each worker: the size from which glibc's
   * malloc serves a block by mmap, so that the arrays the in-memory copy outgrows go back to the
   * system (scripts/serve.ts says why).
   */
  mallocMmapThreshold: number;
  /**
   * The chains with a PONDER_RPC_URL_<id>, as `npm start` reads them: a replica reads block headers
   * there where its samples do not tell a `timestamp`'s block (api/routes/moment.ts). A chain
   * without one refuses such a moment.
   */
  rpc: ConfiguredChain[];
  /**
   * Where `npm start` runs it beside chains indexed apart (WATCH_VARIABLE): how often to compare
   * the indexed blocks with the chains' (REORG_CHECK_SECONDS); undefined: it watches no chain.
   */
  reorgCheckSeconds: number | undefined;
};

/** `npm run keys`'s settings. */
export type KeysSettings = {
  /** SERVICE_URL (default http://127.0.0.1:42069), without trailing slashes. */
  serviceUrl: string;
  /** ADMIN_TOKEN: the service's admin token; undefined: not set. */
  adminToken: string | undefined;
};

/** `npm run demo`'s settings. */
export type DemoSettings = {
  /** PORT, else 42069: the port the demo's service asks for. */
  port: number;
  /** DATABASE_URL is set: the demo does not use it (its chain is new every run), and says so. */
  ignoresDatabaseUrl: boolean;
};

/** Long enough that guessing it over HTTP is hopeless. */
const MIN_ADMIN_TOKEN = 16;

/** How long the change log keeps an entry unless FEED_RETENTION_DAYS says. */
export const FEED_RETENTION_DAYS_DEFAULT = 30;
/** The change feed's streams a key may hold open, per process, unless FEED_STREAMS_PER_KEY says. */
export const FEED_STREAMS_PER_KEY_DEFAULT = 50;

/** A variable's value; unset and empty alike are undefined. */
const text = (env: Environment, name: string) => (env[name] === "" ? undefined : env[name]);

function integer(value: string | undefined, name: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const number = /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
  if (!(number >= min && number <= max))
    throw new SettingsError(`${name}=${JSON.stringify(value)}: expected an integer from ${min} to ${max}`);
  return number;
}

const port = (value: string | undefined, name: string) => integer(value, name, 1, 65535);

function database(env: Environment): DatabaseSettings {
  // Without a trailing slash: the keys' directory is named after it (`<dir>-access`).
  const pgliteDir = (text(env, "PGLITE_DIR") ?? ".ponder/pglite").replace(/(.)\/+$/, "$1");
  return { url: text(env, "DATABASE_URL"), pgliteDir };
}

function access(env: Environment): AccessSettings {
  const adminToken = text(env, "ADMIN_TOKEN");
  if (adminToken !== undefined && adminToken.length < MIN_ADMIN_TOKEN) {
    throw new SettingsError(
      `ADMIN_TOKEN is too short to resist guessing: use at least ${MIN_ADMIN_TOKEN} random characters ` +
        "(e.g. openssl rand -base64 32)",
    );
  }
  return {
    adminToken,
    schema: text(env, "ACCESS_SCHEMA") ?? "delegation_access",
    trustedProxy: flag(env, "TRUSTED_PROXY", false),
    feedStreamsPerKey:
      integer(text(env, "FEED_STREAMS_PER_KEY"), "FEED_STREAMS_PER_KEY", 1, 100_000) ?? FEED_STREAMS_PER_KEY_DEFAULT,
    feedRetentionDays:
      integer(text(env, "FEED_RETENTION_DAYS"), "FEED_RETENTION_DAYS", 1, 3_650) ?? FEED_RETENTION_DAYS_DEFAULT,
    webhookAllowPrivate: flag(env, "WEBHOOK_ALLOW_PRIVATE", false),
  };
}

/** `true` or `false` in `name`, else `otherwise` when it is unset. */
function flag(env: Environment, name: string, otherwise: boolean): boolean {
  const value = text(env, name);
  if (value !== undefined && value !== "true" && value !== "false")
    throw new SettingsError(`${name}=${JSON.stringify(value)}: expected true or false`);
  return value === undefined ? otherwise : value === "true";
}

/** A number of seconds above 0 in `name`, else `otherwise` when it is unset. */
function seconds(env: Environment, name: string, otherwise: number): number {
  const value = text(env, name);
  const number = value === undefined ? otherwise : /^[0-9]+(\.[0-9]+)?$/.test(value) ? Number(value) : 0;
  if (!(number > 0)) throw new SettingsError(`${name}=${JSON.stringify(value)}: expected a number of seconds above 0`);
  return number;
}

function api(env: Environment): ApiSettings {
  return {
    database: database(env),
    access: access(env),
    behindAfterSeconds: seconds(env, "BEHIND_AFTER_SECONDS", 120),
  };
}

const indexerSchema = (env: Environment) => text(env, "DATABASE_SCHEMA") ?? "delegations";

/** The RPC URLs of PONDER_RPC_URL_<id>: comma-separated, trimmed, empty items dropped. */
const rpcUrls = (env: Environment, chainId: number) =>
  (env[`PONDER_RPC_URL_${chainId}`] ?? "")
    .split(",")
    .map((url) => url.trim())
    .filter((url) => url !== "");

/** PONDER_WS_URL_<id>: a ws:// or wss:// URL, or unset. */
function wsUrl(env: Environment, chainId: number): string | undefined {
  const name = `PONDER_WS_URL_${chainId}`;
  const url = text(env, name)?.trim() || undefined;
  if (url !== undefined && !isWebSocketUrl(url))
    throw new SettingsError(`${name}: expected a WebSocket URL (ws:// or wss://)`);
  return url;
}

/** The table's chains that have an RPC URL (PONDER_RPC_URL_<id>), in table order, with their URLs. */
export function configuredChains(env: Environment): ConfiguredChain[] {
  return CHAINS.map((chain) => {
    const ws = wsUrl(env, chain.id);
    return { chain, rpc: rpcUrls(env, chain.id), ...(ws && { ws }) };
  }).filter(({ rpc }) => rpc.length > 0);
}

/**
 * PONDER_RPC_URL_* and PONDER_WS_URL_* variables with a URL that configure no chain: an id the table
 * does not know, not written the way it is read (`PONDER_RPC_URL_01`), or a WebSocket URL for a
 * chain without RPC URLs (it only tells an indexed chain's new blocks). A typo the operator should hear about.
 */
export function ignoredRpcVariables(env: Environment): string[] {
  return Object.keys(env).filter((name) => {
    const [, kind, suffix] = /^PONDER_(RPC|WS)_URL_(.*)$/.exec(name) ?? [];
    if (suffix === undefined || (env[name] ?? "").trim() === "") return false;
    const chain = CHAINS.find(({ id }) => String(id) === suffix);
    return chain === undefined || (kind === "WS" && rpcUrls(env, chain.id).length === 0);
  });
}

/** The role the connection URL in `name` logs in as (unset: undefined). It holds a password: never echoed. */
function roleOf(env: Environment, name: string): RoleLogin | undefined {
  const value = text(env, name);
  if (value === undefined) return undefined;
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (url === undefined || !/^postgres(ql)?:$/.test(url.protocol) || url.username === "" || url.password === "")
    throw new SettingsError(`${name}: expected a URL with a user and password (postgres://user:password@host/db)`);
  return { name: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
}

/**
 * The replicas' roles `npm start` makes: never the indexer's own (DATABASE_URL's user, which owns the
 * tables: it would lose nothing but gain a new password), and never one role for both (the reader
 * must not write).
 */
function replicaRoles(env: Environment, databaseUrl: string | undefined): ReplicaRoles {
  const roles = { reader: roleOf(env, "REPLICA_DATABASE_URL"), access: roleOf(env, "REPLICA_ACCESS_DATABASE_URL") };
  if (roles.reader === undefined && roles.access === undefined) return roles;
  if (databaseUrl === undefined) {
    throw new SettingsError(
      "REPLICA_DATABASE_URL and REPLICA_ACCESS_DATABASE_URL name Postgres roles for API replicas: set DATABASE_URL " +
        "too (PGlite has neither roles nor replicas)",
    );
  }
  const owner = URL.canParse(databaseUrl) ? decodeURIComponent(new URL(databaseUrl).username) : "";
  for (const [name, role] of [
    ["REPLICA_DATABASE_URL", roles.reader],
    ["REPLICA_ACCESS_DATABASE_URL", roles.access],
  ] as const) {
    if (role?.name === owner)
      throw new SettingsError(`${name}: its user is DATABASE_URL's (${owner}), the indexer's own: name another role`);
  }
  if (roles.reader?.name === roles.access?.name)
    throw new SettingsError(
      "REPLICA_DATABASE_URL and REPLICA_ACCESS_DATABASE_URL name one user: the reader must not write",
    );
  return roles;
}

/**
 * INDEX_CHAIN_GROUPS (`1+10+8453,137+42161`): which configured chains share a Ponder process where
 * chains are indexed apart; a chain named by no group is a group of its own. Each group ascending, the
 * groups in order of their lowest chain id.
 */
export function chainGroups(value: string | undefined, configured: readonly number[]): number[][] {
  const named = new Map<number, number>();
  const groups = (value?.split(",") ?? []).map((group, index) =>
    group.split("+").map((part) => {
      const id = /^\s*\d{1,10}\s*$/.test(part) ? Number(part) : Number.NaN;
      if (!configured.includes(id))
        throw new SettingsError(
          `INDEX_CHAIN_GROUPS: ${JSON.stringify(part.trim())} is not the id of a chain with a PONDER_RPC_URL_<id> ` +
            "(groups are chain ids joined by +, separated by commas: 1+10+8453,137+42161)",
        );
      if (named.has(id)) throw new SettingsError(`INDEX_CHAIN_GROUPS names chain ${id} twice`);
      named.set(id, index);
      return id;
    }),
  );
  const alone = configured.filter((id) => !named.has(id)).map((id) => [id]);
  return [...groups, ...alone].map((g) => g.sort((a, b) => a - b)).sort((a, b) => a[0]! - b[0]!);
}

const LAUNCHER_USAGE = "usage: npm start -- [--port <port>] [--schema <schema>] [--views-schema <schema>]";

/** `npm start`'s command line: `--port`/`-p`, `--schema`, `--views-schema`, each with a value; nothing else. */
function launcherArgs(args: readonly string[]) {
  let values: { port?: string; schema?: string; "views-schema"?: string };
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: { port: { type: "string", short: "p" }, schema: { type: "string" }, "views-schema": { type: "string" } },
    }));
  } catch (error) {
    throw new SettingsError(`${(error as Error).message}\n${LAUNCHER_USAGE}`);
  }
  const empty = Object.entries(values).find(([, value]) => value === "");
  if (empty) throw new SettingsError(`--${empty[0]} needs a value\n${LAUNCHER_USAGE}`);
  return values;
}

/** `npm start`'s settings from its environment and command line (`--port`, `--schema`, `--views-schema`). */
export function launcherSettings(env: Environment, args: readonly string[] = []): LauncherSettings {
  const cli = launcherArgs(args);
  const configured = configuredChains(env);
  const mainnet = chainById(1)!;
  const publicFallback = configured.length === 0 ? mainnet : undefined;
  const schema = cli.schema ?? indexerSchema(env);
  const viewsSchema = cli["views-schema"] ?? text(env, "DATABASE_VIEWS_SCHEMA") ?? "delegation_views";
  if (viewsSchema === schema) {
    throw new SettingsError(
      `DATABASE_VIEWS_SCHEMA (--views-schema) is ${JSON.stringify(schema)}, the indexer's own schema ` +
        "(DATABASE_SCHEMA, --schema): the views need a schema of their own",
    );
  }
  const settings = api(env);
  const apart = flag(env, "INDEX_CHAINS_APART", false);
  if (apart && settings.database.url === undefined)
    throw new SettingsError("INDEX_CHAINS_APART=true runs a process per chain over Postgres: set DATABASE_URL too");
  const chains = publicFallback ? [{ chain: mainnet, rpc: [mainnet.publicRpc!] }] : configured;
  const grouped = text(env, "INDEX_CHAIN_GROUPS");
  if (grouped !== undefined && !apart)
    throw new SettingsError("INDEX_CHAIN_GROUPS groups chains indexed apart: set INDEX_CHAINS_APART=true too");
  return {
    ...settings,
    apart,
    port: (cli.port === undefined ? port(text(env, "PORT"), "PORT") : port(cli.port, "--port")) ?? 42069,
    schema,
    viewsSchema,
    startBlocksFile: text(env, "START_BLOCKS_FILE") ?? ".ponder/start-blocks.json",
    chains,
    groups: chainGroups(
      grouped,
      chains.map(({ chain }) => chain.id),
    ),
    publicFallback,
    ignoredRpcVariables: ignoredRpcVariables(env),
    replicaRoles: replicaRoles(env, settings.database.url),
  };
}

const reorgCheckSeconds = (env: Environment) =>
  integer(text(env, "REORG_CHECK_SECONDS"), "REORG_CHECK_SECONDS", 1, 3600) ?? 10;

/** The Ponder process's settings: the plan `npm start` handed over, the database, the API's. */
export function ponderSettings(env: Environment): PonderSettings {
  const plan = text(env, PLAN_VARIABLE);
  if (plan === undefined) {
    throw new SettingsError(
      `${PLAN_VARIABLE} is not set: Ponder indexes the plan \`npm start\` works out (the chains, their RPC URLs, ` +
        "the registries' start blocks) and hands over in it. Run `npm start` (with PONDER_RPC_URL_<chainId>=…, " +
        "`npm start -- --port N`), not `ponder dev` or `ponder start` on their own.",
    );
  }
  try {
    const indexOnly = flag(env, INDEX_ONLY_VARIABLE, false);
    return {
      ...api(env),
      plan: decodePlan(plan),
      reorgCheckSeconds: reorgCheckSeconds(env),
      inMemory: flag(env, "INDEXER_IN_MEMORY", true),
      indexOnly,
      poolMax: indexOnly ? INDEX_ONLY_POOL_MAX : undefined,
    };
  } catch (error) {
    if (error instanceof SettingsError) throw error;
    throw new SettingsError(`${PLAN_VARIABLE} is not a plan \`npm start\` wrote: ${(error as Error).message}`);
  }
}

/** `npm run serve`'s settings; DATABASE_URL is required (it serves the indexer's Postgres tables). */
export function serveSettings(env: Environment): ServeSettings {
  const settings = api(env);
  const url = settings.database.url;
  if (url === undefined) {
    throw new SettingsError(
      "npm run serve reads the indexer's tables in Postgres: set DATABASE_URL (and DATABASE_SCHEMA if the " +
        "indexer runs with another schema than `delegations`). With PGlite the API runs inside `npm start`.",
    );
  }
  return {
    ...settings,
    database: { ...settings.database, url, accessUrl: text(env, "ACCESS_DATABASE_URL") ?? url },
    port: port(text(env, "PORT"), "PORT") ?? 42070,
    host: text(env, "HOST"),
    workers: integer(text(env, "API_WORKERS"), "API_WORKERS", 1, 1024),
    schema: indexerSchema(env),
    replicaBehindSeconds: seconds(env, "REPLICA_BEHIND_SECONDS", 30),
    // glibc ignores a threshold above 32 MiB (its ceiling on 64-bit machines): refused here instead.
    mallocMmapThreshold:
      integer(text(env, "MALLOC_MMAP_THRESHOLD_"), "MALLOC_MMAP_THRESHOLD_", 0, 32 * 1024 * 1024) ?? 131_072,
    rpc: configuredChains(env),
    reorgCheckSeconds: flag(env, WATCH_VARIABLE, false) ? reorgCheckSeconds(env) : undefined,
  };
}

/** `npm run keys`'s settings. */
export function keysSettings(env: Environment): KeysSettings {
  const serviceUrl = (text(env, "SERVICE_URL") ?? "http://127.0.0.1:42069").replace(/\/+$/, "");
  if (!URL.canParse(serviceUrl))
    throw new SettingsError(`SERVICE_URL=${JSON.stringify(serviceUrl)}: expected the service's URL`);
  return { serviceUrl, adminToken: text(env, "ADMIN_TOKEN") };
}

/** `npm run demo`'s settings. */
export function demoSettings(env: Environment): DemoSettings {
  return {
    port: port(text(env, "PORT"), "PORT") ?? 42069,
    ignoresDatabaseUrl: text(env, "DATABASE_URL") !== undefined,
  };
}

/** `read()`'s settings; when a variable is invalid, says which and exits with 1 (for the commands). */
export function settingsOrExit<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    console.error(error.message);
    return process.exit(1);
  }
}
