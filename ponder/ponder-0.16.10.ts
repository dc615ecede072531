/**
 * Everything this project assumes of Ponder 0.16.10's internals, which Ponder does not document and
 * may change in any release. ponder-0.16.10.test.ts checks each against the installed Ponder and
 * fails on an upgrade that changes one.
 *
 * - `_ponder_checkpoint` has a row per chain (`chain_id`) with its `latest_checkpoint` (how far the
 *   chain is indexed) and `finalized_checkpoint`. A checkpoint is a fixed-width decimal string
 *   (Ponder's utils/checkpoint.ts): 10 digits of block timestamp, 16 of chain id, 16 of block
 *   number, then transaction index, event type and event index.
 * - `_ponder_meta`'s row `app` holds a JSON value whose `is_ready` is 1 once every chain is
 *   backfilled (Ponder's one readiness flag, the one behind its /ready).
 * - Ponder's build sets `globalThis.PONDER_COMMON`, whose `metrics` are prom-client gauges labelled
 *   by chain name (internal/metrics.ts).
 * - Ponder creates its HTTP server by calling node:http's `createServer` (read at the call, through
 *   @hono/node-server's `createServer` option), after it has loaded the API, with one `request`
 *   listener: its Hono app (server/index.ts), whose own routes are PONDER_ROUTES and which passes
 *   every other path, through its HTTP metrics and CORS middleware, to the API's app. Before it,
 *   Ponder probes for a free port with servers made without a listener (utils/port.ts).
 * - Ponder caches what it fetches (blocks, logs, RPC answers) in the `ponder_sync` schema, shared by
 *   every schema of a database, in tables keyed by `chain_id` (sync-store/schema.ts), and adds new
 *   rows with ON CONFLICT DO NOTHING, also for a chain with disableCache.
 * - Ponder backfills up to `ponderFinalityDepth` blocks below the head (utils/finality.ts) and never
 *   reverts below its finalized block. Live, it moves that block in steps of the depth, once the
 *   head is twice the depth past it (sync-realtime/index.ts: `ponderFinalizedAt`), and logs each
 *   step (PONDER_LOG): a block is final once one to two depths of blocks follow it.
 * - Ponder reverts the rows of blocks that left the chain (and at a restart those of blocks not yet
 *   final) in one transaction, dropping and recreating its triggers under table locks, and moves
 *   its checkpoint only in a later transaction: meanwhile the checkpoint names a block whose rows
 *   are gone. Its read-only connections give up on a lock after 500 ms (utils/pg.ts).
 * - Live, a block's rows and the move of the checkpoint past it are one transaction, but on
 *   Postgres the rows are flushed in `SAVEPOINT flush` (indexing-store/cache.ts), a subtransaction
 *   with an xid of its own, newer than the transaction's, under which the checkpoint row is then
 *   written (runtime/multichain.ts): the block's rows have a newer xmin than the checkpoint's.
 * - Its log says PONDER_LOG's lines when the backfill's indexing starts and ends, and its metrics
 *   hold PONDER_BACKFILL_GAUGES, where the backfill's time went (runtime/historical.ts,
 *   runtime/multichain.ts).
 * - `ponder start` exits with code 75 after an error worth retrying (one not its user's: an RPC that
 *   kept failing), and 1 after the user's (bin/utils/exit.ts).
 * - On PGlite, the `db` of `ponder:api` is a drizzle database over Ponder's one PGlite instance
 *   (`$client`), which the indexer writes through too (database/index.ts, build/plugin.ts).
 */
import http, { type RequestListener, type Server } from "node:http";
import { PGlite } from "@electric-sql/pglite";
import { type Query, table } from "../core/sql";

/** A checkpoint's parts, as Ponder's encodeCheckpoint takes them. */
export type PonderCheckpoint = Record<
  "blockTimestamp" | "chainId" | "blockNumber" | "transactionIndex" | "eventType" | "eventIndex",
  number | bigint
>;
/** The event type Ponder gives a log in a checkpoint. */
export const LOG_EVENT_TYPE = 5;
/** A checkpoint's parts in order, each a fixed-width decimal. */
const CHECKPOINT_WIDTHS: [keyof PonderCheckpoint, number][] = [
  ["blockTimestamp", 10],
  ["chainId", 16],
  ["blockNumber", 16],
  ["transactionIndex", 16],
  ["eventType", 1],
  ["eventIndex", 16],
];

/** A checkpoint as Ponder encodes it (also an event's `id`): its parts as fixed-width decimals. */
export const ponderCheckpoint = (parts: PonderCheckpoint): string =>
  CHECKPOINT_WIDTHS.map(([name, width]) => parts[name].toString().padStart(width, "0")).join("");

/** Where part `name` of a checkpoint is, counted from 1 as SQL's substring and overlay count. */
function checkpointField(name: keyof PonderCheckpoint): { from: number; length: number } {
  const at = CHECKPOINT_WIDTHS.findIndex(([part]) => part === name);
  const from = 1 + CHECKPOINT_WIDTHS.slice(0, at).reduce((sum, [, width]) => sum + width, 0);
  return { from, length: CHECKPOINT_WIDTHS[at]![1] };
}

/** Where a checkpoint's block timestamp and block number are, for SQL. */
export const CHECKPOINT_FIELDS = {
  timestamp: checkpointField("blockTimestamp"),
  block: checkpointField("blockNumber"),
} as const;

const field = (checkpoint: string, { from, length }: { from: number; length: number }) =>
  `substring(${checkpoint}, ${from}, ${length})::bigint`;

/** Ponder's own tables that checkpointsSql and readySql read. */
export const PONDER_STATE_TABLES = { checkpoint: "_ponder_checkpoint", meta: "_ponder_meta" } as const;

/**
 * SQL: Ponder's checkpoints as a table of chains, with columns `chain_id`, `checkpoint` (the latest,
 * whole: it changes with every block indexed), `block` and `block_timestamp` (the block the chain is
 * indexed up to, and its time in unix seconds), `finalized_block`, and the row's `xmin`.
 */
export function checkpointsSql(schema: string): string {
  return `(SELECT chain_id, latest_checkpoint AS checkpoint,
      ${field("latest_checkpoint", CHECKPOINT_FIELDS.block)} AS block,
      ${field("latest_checkpoint", CHECKPOINT_FIELDS.timestamp)} AS block_timestamp,
      ${field("finalized_checkpoint", CHECKPOINT_FIELDS.block)} AS finalized_block, xmin
    FROM ${table(schema, PONDER_STATE_TABLES.checkpoint)})`;
}

/** SQL: Ponder's readiness, 1 once every chain is backfilled, else 0. */
export function readySql(schema: string): string {
  return `(SELECT (m.value->>'is_ready')::int FROM ${table(schema, PONDER_STATE_TABLES.meta)} m WHERE m.key = 'app')`;
}

/**
 * SQL: marks the schema's app unlocked, as Ponder's own clean shutdown does. A Ponder killed with
 * kill -9 leaves it locked, and the next `ponder start` on the schema waits until the heartbeat
 * (every 10 s) is 25 s old: 15 to 25 s. For the launcher, once it knows that Ponder is dead.
 */
export function unlockAppSql(schema: string): string {
  return `UPDATE ${table(schema, PONDER_STATE_TABLES.meta)} SET value = jsonb_set(value, '{is_locked}', to_jsonb(0))
    WHERE key = 'app' AND (value->>'is_locked')::int = 1`;
}

/** One of Ponder's gauges: each value with its labels (`chain` among them). */
export type Gauge = { get(): Promise<{ values: { value: number; labels: Record<string, string | number> }[] }> };

/** Ponder's gauges that a chain's backfill progress is read from, by what each counts. */
export const PONDER_PROGRESS_GAUGES = {
  totalBlocks: "ponder_historical_total_blocks",
  cachedBlocks: "ponder_historical_cached_blocks",
  completedBlocks: "ponder_historical_completed_blocks",
  indexedEvents: "ponder_indexing_completed_events",
  realtime: "ponder_sync_is_realtime",
  complete: "ponder_sync_is_complete",
} as const;

type ProgressFigure = keyof typeof PONDER_PROGRESS_GAUGES;

/** A chain's backfill: blocks done (fetched or read from Ponder's cache) of all it has to do. */
export type PonderBackfill = { blocks: number; ofBlocks: number };

/** One sample of the text format: its metric name, the `chain` label, the value. */
const SAMPLE = /^([a-z_:][a-z0-9_:]*)\{([^}]*)\}\s+(\S+)/i;
const CHAIN_LABEL = /(?:^|,)\s*chain="([^"]*)"/;

/**
 * The chain's backfill from the text of a Ponder process's /metrics (Prometheus' format), as the
 * launcher reads it where each chain has a Ponder of its own: "live" once Ponder syncs it in real
 * time (or its backfill is complete), its progress while it backfills, undefined before Ponder
 * counts its blocks.
 */
export function ponderBackfillOf(metrics: string, chain: string): PonderBackfill | "live" | undefined {
  const sums = new Map<string, number>();
  for (const line of metrics.split("\n")) {
    const sample = SAMPLE.exec(line);
    if (!sample || CHAIN_LABEL.exec(sample[2]!)?.[1] !== chain) continue;
    const value = Number(sample[3]);
    if (Number.isFinite(value)) sums.set(sample[1]!, (sums.get(sample[1]!) ?? 0) + value);
  }
  const g = PONDER_PROGRESS_GAUGES;
  if ((sums.get(g.realtime) ?? 0) > 0 || (sums.get(g.complete) ?? 0) > 0) return "live";
  const ofBlocks = sums.get(g.totalBlocks);
  if (ofBlocks === undefined) return undefined;
  const blocks = (sums.get(g.cachedBlocks) ?? 0) + (sums.get(g.completedBlocks) ?? 0);
  return { blocks: Math.min(blocks, ofBlocks), ofBlocks };
}

/** Ponder's metrics, as far as the backfill progress reads them: its gauges by their names. */
export type PonderMetrics = Record<(typeof PONDER_PROGRESS_GAUGES)[ProgressFigure], Gauge>;

/** The metrics Ponder keeps in this process; undefined outside a Ponder process. */
export function ponderMetrics(): PonderMetrics | undefined {
  return (globalThis as { PONDER_COMMON?: { metrics?: PonderMetrics } }).PONDER_COMMON?.metrics;
}

/** The gauges of the backfill progress, by what each counts; undefined outside a Ponder process. */
export function ponderProgressGauges(): Record<ProgressFigure, Gauge> | undefined {
  const metrics = ponderMetrics();
  if (metrics === undefined) return undefined;
  const figures = Object.keys(PONDER_PROGRESS_GAUGES) as ProgressFigure[];
  return Object.fromEntries(figures.map((f) => [f, metrics[PONDER_PROGRESS_GAUGES[f]]])) as Record<
    ProgressFigure,
    Gauge
  >;
}

/** Every table of Ponder's sync cache (schema ponder_sync) with a chain_id column. */
export const PONDER_SYNC_TABLES = [
  "blocks",
  "transactions",
  "transaction_receipts",
  "logs",
  "traces",
  "rpc_request_results",
  "intervals",
  "factory_addresses",
] as const;

/** The schema of Ponder's sync cache. */
export const PONDER_SYNC_SCHEMA = "ponder_sync";

/** SQL: whether the database holds Ponder's sync cache (column `present`). */
export const SYNC_CACHE_PRESENT_SQL = `SELECT to_regclass('${PONDER_SYNC_SCHEMA}.logs') IS NOT NULL AS present`;

/** Drops every row of chain `chainId` from Ponder's sync cache, with `query` (one transaction's). */
export async function dropSyncedChain(query: Query, chainId: number): Promise<void> {
  for (const name of PONDER_SYNC_TABLES)
    await query(`DELETE FROM ${PONDER_SYNC_SCHEMA}.${name} WHERE chain_id = $1`, [chainId]);
}

/** SQL: the newest block the sync cache holds of chain $1 (its blocks and logs), with its hash; no row: none. */
export const NEWEST_SYNCED_BLOCK_SQL = `SELECT number::text, hash FROM (
    (SELECT number, hash FROM ponder_sync.blocks WHERE chain_id = $1 ORDER BY number DESC LIMIT 1)
    UNION ALL
    (SELECT block_number, block_hash FROM ponder_sync.logs WHERE chain_id = $1 ORDER BY block_number DESC LIMIT 1)
  ) newest ORDER BY number DESC LIMIT 1`;

/** Blocks that must follow a block on chain `chainId` before Ponder holds it final (utils/finality.ts). */
export function ponderFinalityDepth(chainId: number): number {
  if ([1, 3, 4, 5, 42, 11155111].includes(chainId)) return 65;
  if ([137, 80001].includes(chainId)) return 200;
  if ([42161, 42170, 421611, 421613].includes(chainId)) return 240;
  return 30;
}

/**
 * The block Ponder holds final on chain `chainId` once its live sync has taken every block up to
 * `head`, from a block it held final before (`finalized`: ponderLoggedFinalized). It takes blocks
 * one by one and moves its final block only at a block twice the finality depth past it, to that
 * block less the depth (sync-realtime/index.ts): so a fork deeper than the depth but shallower
 * than twice it replaces a final block or none, by where the steps fall, not by its depth.
 */
export function ponderFinalizedAt(chainId: number, finalized: bigint, head: bigint): bigint {
  const depth = BigInt(ponderFinalityDepth(chainId));
  if (head < finalized + 2n * depth) return finalized;
  return finalized + ((head - finalized - depth) / depth) * depth;
}

/**
 * What Ponder logs as its backfill's indexing starts, and once every chain's has ended; as a
 * chain's live indexing starts (its final block as `finalized_block=`), and as it moves a chain's
 * final block (to `number=`).
 */
export const PONDER_LOG = {
  backfillStarted: "Started backfill indexing",
  backfillCompleted: "Completed backfill indexing across all chains",
  liveStarted: "Started live indexing",
  finalized: "Finalized block",
} as const;

/** The block Ponder last logged as final for chain `name` in `log` (its output, colours stripped), if any. */
export function ponderLoggedFinalized(log: string, name: string): bigint | undefined {
  const started = `${PONDER_LOG.liveStarted} chain=${name} .*?finalized_block=`;
  const line = new RegExp(`(?:${started}|${PONDER_LOG.finalized} chain=${name} .*?number=)(\\d+)`, "g");
  const last = [...log.matchAll(line)].at(-1);
  return last && BigInt(last[1]!);
}

/**
 * The gauges of Ponder's historical loop, as its /metrics writes them (ms in all): waiting for the
 * next batch of events (its sync fetching them), running the indexing functions, flushing rows.
 */
export const PONDER_BACKFILL_GAUGES = {
  syncMs: 'ponder_historical_concurrency_group_duration{group="extract"}',
  indexMs: 'ponder_historical_transform_duration{step="index"}',
  flushMs: 'ponder_historical_transform_duration{step="load"}',
} as const;

/** The name of the SIGTERM listener Vite's dev server adds, which Ponder's build starts. */
export const VITE_EXIT_LISTENER = "closeServerAndExit";

/**
 * Leaves SIGTERM to Ponder's own graceful exit. Ponder builds with Vite's dev server, which listens
 * for SIGTERM too: it closes the server and calls process.exit() at once, before Ponder's handler
 * has unlocked the schema (the next start then waits 15 to 25 s, see unlockAppSql) or closed
 * PGlite. SIGINT never had Vite's listener. The number of listeners removed.
 */
export function leaveSigtermToPonder(): number {
  const vite = process.listeners("SIGTERM").filter((listener) => listener.name === VITE_EXIT_LISTENER);
  for (const listener of vite) {
    process.off("SIGTERM", listener);
    // Vite also exits when stdin ends (outside CI): a launcher's stdin is no reason to stop.
    process.stdin.off("end", listener);
  }
  return vite.length;
}

/** The signals Ponder's exit listens for (bin/utils/exit.ts). */
export const PONDER_EXIT_SIGNALS = ["SIGINT", "SIGTERM", "SIGQUIT"] as const;

/**
 * Runs `first` on a signal before the listeners `target` already has for it (in a Ponder process,
 * Ponder's exit): Ponder's exit ends its server's idle connections at once, and a request a client
 * has just sent on one is reset unread (api/http/server.ts drainServer). `first` runs once, whatever
 * the signals; each held listener is called once it has settled.
 */
export function beforePonderExits(first: () => Promise<void>, target: NodeJS.EventEmitter = process): void {
  let ran: Promise<void> | undefined;
  for (const signal of PONDER_EXIT_SIGNALS) {
    const held = target.listeners(signal) as ((signal: string) => void)[];
    for (const listener of held) target.off(signal, listener);
    target.on(signal, () => {
      ran ??= first().catch(() => {});
      void ran.then(() => {
        for (const listener of held) listener(signal);
      });
    });
  }
}

/**
 * Lets Ponder's exit close `server` once more after it has been closed (beforePonderExits): Node
 * would call back with ERR_SERVER_NOT_RUNNING, http-terminator would reject, and Ponder's exit would
 * wait out its 5 s before it exits.
 */
export function closedBeforePonder(server: Server): void {
  server.close = ((done?: (error?: Error) => void) => {
    process.nextTick(() => done?.());
    return server;
  }) as Server["close"];
}

/** `ponder start`'s exit code after a failure worth retrying (an RPC that kept failing). */
export const PONDER_RETRYABLE_EXIT = 75;

const HOOKED = Symbol.for("delegation-lookup.ponder-server-hook");
type CreateServer = typeof http.createServer & { [HOOKED]?: true };

/**
 * Runs `hook` on every server node:http's createServer makes in this process from now on, among
 * them Ponder's, created after the API has loaded. Once per process: Ponder's dev mode reloads the
 * API, and later calls change nothing.
 */
export function onPonderServer(hook: (server: Server) => void): void {
  const create: CreateServer = http.createServer;
  if (create[HOOKED]) return;
  const hooked = ((...args: Parameters<typeof http.createServer>) => {
    const server = create(...args);
    hook(server);
    return server;
  }) as CreateServer;
  hooked[HOOKED] = true;
  (http as { createServer: CreateServer }).createServer = hooked;
}

/** Ponder's PGlite instance behind the API's `db`, or undefined when Ponder runs on Postgres. */
export function ponderPglite(db: object): PGlite | undefined {
  const client = (db as { $client?: unknown }).$client;
  return client instanceof PGlite ? client : undefined;
}

/** The paths Ponder's server answers itself (server/index.ts); every other is the API app's. */
export const PONDER_ROUTES: ReadonlySet<string> = new Set(["/metrics", "/health", "/ready", "/status"]);

/**
 * Sends every request for a path but PONDER_ROUTES straight to `api`, past Ponder's Hono app: its
 * per-request HTTP metrics and CORS middleware were an eighth of `npm start`'s time answering
 * checks (`npx tsx bench/profile.ts start`), and the API app does its own CORS and errors.
 * `/ready` is Ponder's only once `notReady` (which never rejects) names no reason: Ponder's flag
 * turns while the API may still answer from a state that has not seen it (a copy synced every 100 ms).
 * Whether `server` is Ponder's API server (and not one of its probes for a free port).
 */
export function answerBesidePonder(
  server: Server,
  api: RequestListener,
  notReady: () => Promise<string | undefined>,
): boolean {
  const ponder = server.listeners("request") as RequestListener[];
  // Ponder's probes for a free port (utils/port.ts) are servers without a listener: left alone.
  if (ponder.length === 0) return false;
  if (ponder.length > 1) throw new Error(`Ponder's server has ${ponder.length} request listeners, not 1`);
  server.removeAllListeners("request");
  server.on("request", (req, res) => {
    const url = req.url ?? "/";
    const query = url.indexOf("?");
    const path = query < 0 ? url : url.slice(0, query);
    if (path !== "/ready") return (PONDER_ROUTES.has(path) ? ponder[0]! : api)(req, res);
    void notReady().then((reason) => {
      if (reason === undefined) return ponder[0]!(req, res);
      res.writeHead(503, { "Content-Type": "text/plain; charset=UTF-8" }).end(reason);
    });
  });
  return true;
}
