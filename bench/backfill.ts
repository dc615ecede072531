/**
 * Indexing speed: registry events are put on a local chain first (v2 multicall, 50 writes a
 * transaction, from 20 senders), then a fresh indexer backfills them while its process tree's
 * memory is sampled.
 *
 * The writes are what a registry sees: mostly new delegations of every type, and revokes and
 * re-enables of a sender's earlier ones (each write emits one event, whatever it changes).
 *
 * A smaller chain of the same writes serves `npm start` alone on PGlite, the README's first
 * command: a chain written through the registry is what it can index (the bench's seeded database
 * is Postgres's), and its checks are answered from memory, whatever the number of delegations.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { PGlite } from "@electric-sql/pglite";
import type pg from "pg";
import { type Address, type Hex, toHex, zeroHash } from "viem";
import { abis } from "../devkit/oracle";
import { Child, freePort, GiveUp, ROOT, waitFor } from "../devkit/processes";
import { Rng } from "../devkit/random";
import { chainClient, ethCalls, rpc } from "../devkit/rpc";
import { SPREAD, sendAll } from "../devkit/send";
import { plainOutput, type Service } from "../devkit/service";
import { type Tx, txRequest, WRITE_RIGHTS, type Write } from "../devkit/v2/generate";
import { PONDER_BACKFILL_GAUGES, PONDER_LOG } from "../ponder/ponder-0.16.10";
import { findDeploymentBlock } from "../scripts/launcher/discovery";
import type { Cleanup } from "./cleanup";
import { randomAddress } from "./dataset";
import { type RouteFigure, type RouteMeasurer, settle } from "./measure";
import { sampleTreeMemory, tagEnv } from "./procs";
import { chainCheckAllRoute } from "./routes";
import { CHAIN_ID, type Chain, startChain, startIndexer } from "./stack";

const WRITES_PER_TX = 50;
/** Blocks that hold hundreds of such transactions (anvil's 30M would take a few). */
const BLOCK_GAS_LIMIT = 4_000_000_000n;
/** Anvil's finalized block trails its head by this many: only finalized blocks are backfilled. */
const FINALITY_BLOCKS = 64;

export type IndexerFigures = {
  /** Ponder's backfill phase, from its log: backfill started → /ready answering 200. */
  backfillMs: number;
  /** Its end, from the log: the last event indexed → /ready (Ponder creating the tables' indexes and triggers). */
  finishMs: number;
  /** The indexer process started → /ready answering 200. */
  readyMs: number;
  /** Highest total resident memory of the indexer's process tree, sampled every 100 ms. */
  peakRssMb: number;
  /** Where its backfill's time went, by Ponder's own account. */
  split: PonderSplit;
};

/**
 * Ponder's own account of a backfill, from its /metrics once ready (ms): its loop over batches of
 * events either waits for the next batch or indexes one, then flushes the rows it made.
 */
export type PonderSplit = {
  /** Waiting for the next batch: Ponder's sync fetching the blocks and logs and writing its own tables. */
  syncMs: number;
  /** Running the indexing functions, whose store calls write Ponder's in-memory row cache. */
  indexMs: number;
  /** Flushing those rows to the database (COPY, and updates through a temporary table). */
  flushMs: number;
};

async function ponderSplit(url: string): Promise<PonderSplit> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const gauge = (name: string) => {
    const line = text.split("\n").find((l) => l.startsWith(`${name} `));
    if (!line) throw new Error(`Ponder's /metrics has no ${name}: has Ponder's metrics changed?`);
    return Number(line.slice(name.length + 1));
  };
  const [syncMs, indexMs, flushMs] = Object.values(PONDER_BACKFILL_GAUGES).map(gauge) as [number, number, number];
  return { syncMs, indexMs, flushMs };
}

/** The service's indexer's figures, and the minimal Ponder indexer's over the same events. */
export type BackfillFigures = IndexerFigures & { events: number; blocks: number; baseline: IndexerFigures };

function makeTxs(events: number, senders: readonly Address[], nonces: Map<Address, number>, rng: Rng): Tx[] {
  const own = new Map<Address, Write[]>(senders.map((s) => [s, []]));
  const contracts = Array.from({ length: 200 }, () => randomAddress(rng));
  const fresh = (from: Address): Write => {
    const to = randomAddress(rng);
    const contract = rng.pick(contracts);
    const tokenId = BigInt(rng.int(1_000_000));
    const rights = rng.chance(0.8) ? zeroHash : rng.pick(WRITE_RIGHTS);
    const amount = 1n + rng.bigint(64);
    const w = rng.weighted<Write>([
      [20, { fn: "delegateAll", to, rights, enable: true }],
      [20, { fn: "delegateContract", to, contract, rights, enable: true }],
      [30, { fn: "delegateERC721", to, contract, tokenId, rights, enable: true }],
      [15, { fn: "delegateERC20", to, contract, rights, amount }],
      [15, { fn: "delegateERC1155", to, contract, tokenId, rights, amount }],
    ]);
    own.get(from)!.push(w);
    return w;
  };
  const next = (from: Address): Write => {
    const mine = own.get(from)!;
    const roll = rng.next();
    if (mine.length === 0 || roll >= 0.3) return fresh(from);
    const w = rng.pick(mine);
    // Two in three: revoke it; else enable it again (or change its amount).
    const on = roll >= 0.2;
    return "enable" in w ? { ...w, enable: on } : { ...w, amount: on ? 1n + rng.bigint(64) : 0n };
  };
  const txs: Tx[] = [];
  for (let made = 0; made < events; ) {
    const from = senders[txs.length % senders.length]!;
    const writes: Write[] = [];
    for (; writes.length < WRITES_PER_TX && made < events; made++) writes.push(next(from));
    const nonce = nonces.get(from)!;
    nonces.set(from, nonce + 1);
    txs.push({ from, nonce, writes, multicall: true });
  }
  return txs;
}

/** A delegateAll the chain was sent: what v2 check all is asked about (its answer comes from eth_call). */
type SentDelegateAll = { from: Address; to: Address; rights: Hex };

/** Puts `events` registry events on the chain and makes them final; returns the delegateAlls among them. */
async function sendEvents(url: string, registry: Address, events: number, seed: number) {
  const chain = chainClient(url);
  const senders = await chain.getAddresses();
  const nonces = new Map<Address, number>();
  for (const s of senders) nonces.set(s, await chain.getTransactionCount({ address: s, blockTag: "pending" }));
  const txs = makeTxs(events, senders, nonces, new Rng(seed));
  const receipts = await sendAll(
    url,
    txs.map((tx) => txRequest(registry, abis.v2, tx)),
    seed,
    { ...SPREAD, batchSize: 10, spreadMs: 0, timeoutMs: 30 * 60_000 },
  );
  const failed = receipts.filter((r) => r.status !== "0x1").length;
  const ours = (r: (typeof receipts)[number]) =>
    r.logs.filter((l) => l.address.toLowerCase() === registry.toLowerCase());
  const sent = receipts.reduce((n, r) => n + ours(r).length, 0);
  if (failed > 0 || sent !== events)
    throw new Error(`backfill data: ${failed} transactions failed, ${sent} of ${events} events emitted`);
  const blocks = new Set(receipts.map((r) => r.blockNumber));
  const last = Math.max(...[...blocks].map(Number));
  await rpc(url, "anvil_mine", [toHex(FINALITY_BLOCKS + 2)]);
  const finalized = (await rpc(url, "eth_getBlockByNumber", ["finalized", false])) as { number: string };
  if (Number(finalized.number) < last)
    throw new Error(`anvil's finalized block ${Number(finalized.number)} is before the last event's ${last}`);
  const delegateAlls = txs.flatMap((tx) =>
    tx.writes.flatMap((w) => (w.fn === "delegateAll" ? [{ from: tx.from, to: w.to, rights: w.rights }] : [])),
  );
  return { blocks: blocks.size, delegateAlls };
}

/** Milliseconds from a Ponder log line to /ready answering 200 (by their HH:MM:SS.mmm: a run may pass midnight). */
function msToReady(output: string, message: string): number {
  const time = (line: string) => {
    const match = new RegExp(`^(\\d\\d):(\\d\\d):(\\d\\d)\\.(\\d{3}) .*${line}`, "m").exec(output);
    if (!match) throw new Error(`the indexer's log has no line "${line}": has Ponder's log changed?`);
    const [h, m, s, ms] = match.slice(1).map(Number) as [number, number, number, number];
    return ((h * 60 + m) * 60 + s) * 1000 + ms;
  };
  const day = 24 * 3600 * 1000;
  return (time("Started returning 200 responses endpoint=/ready") - time(message) + day) % day;
}

/** What bench/profile.ts adds to an indexer's run: its environment, and work once it is ready. */
export type IndexerHooks = { env?: NodeJS.ProcessEnv; ready?: (backfillMs: number) => Promise<void> };

type StartedIndexer = {
  url: string;
  output: () => string;
  stop: () => Promise<void>;
  /** The events its table holds, asked once it is stopped. */
  stored: () => Promise<number>;
};

/**
 * Starts an indexer with `start` (given the environment that tags its processes), its process
 * tree's memory sampled until it is ready; then stops it, so that the next indexer has the machine
 * to itself, and checks that it stored every event.
 */
async function timeIndexer(
  events: number,
  start: (env: NodeJS.ProcessEnv) => Promise<StartedIndexer>,
  hooks: IndexerHooks = {},
): Promise<IndexerFigures> {
  const tag = `backfill-${process.pid}-${Date.now()}`;
  const memory = sampleTreeMemory(tag);
  const started = Date.now();
  let peakRssMb = 0;
  const indexer = await start({ ...tagEnv(tag), ...hooks.env }).finally(() => {
    peakRssMb = memory.stop();
  });
  const readyMs = Date.now() - started;
  const output = indexer.output();
  const figures = {
    backfillMs: msToReady(output, PONDER_LOG.backfillStarted),
    finishMs: msToReady(output, PONDER_LOG.backfillCompleted),
    readyMs,
    peakRssMb,
    split: await ponderSplit(indexer.url),
  };
  await hooks.ready?.(figures.backfillMs);
  await indexer.stop();
  const stored = await indexer.stored();
  if (stored !== events) throw new Error(`the indexer stored ${stored} of the ${events} events`);
  return figures;
}

/** The rows of `table` (schema-qualified), in the bench's Postgres database. */
const rowsOf = (db: pg.ClientBase, table: string) => async () =>
  (await db.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n as number;

/** The minimal Ponder indexer (bench/baseline) over `chain`'s v2 registry, from its first block; ready. */
async function startBaseline(
  cleanup: Cleanup,
  db: pg.ClientBase,
  chain: Chain,
  env: NodeJS.ProcessEnv,
): Promise<StartedIndexer> {
  const url = chain.anvil.url;
  const latest = await chainClient(url).getBlockNumber();
  const hasCode = async (block: bigint) =>
    ((await rpc(url, "eth_getCode", [chain.registries.v2, toHex(block)])) as string) !== "0x";
  const startBlock = await findDeploymentBlock(hasCode, latest);
  const port = await freePort();
  const schema = `baseline_${Date.now().toString(36)}`;
  const child = new Child(
    `${ROOT}/node_modules/.bin/ponder`,
    ["start", "--root", "bench/baseline", "--schema", schema, "--port", String(port)],
    {
      ...env,
      PONDER_TELEMETRY_DISABLED: "true",
      BASELINE_RPC_URL: url,
      BASELINE_CHAIN_ID: String(CHAIN_ID),
      BASELINE_REGISTRY: chain.registries.v2,
      BASELINE_START_BLOCK: String(startBlock),
    },
  );
  cleanup.add("baseline indexer", () => child.stop());
  await waitFor(
    "the baseline indexer to be ready",
    async () => {
      if (!child.running) throw new GiveUp(`the baseline indexer exited:\n${child.output.slice(-3000)}`);
      return (await fetch(`http://127.0.0.1:${port}/ready`)).status === 200 ? true : undefined;
    },
    60 * 60_000,
  );
  return {
    url: `http://127.0.0.1:${port}`,
    output: () => stripVTControlCharacters(child.output),
    stop: () => child.stop(),
    stored: rowsOf(db, `"${schema}".event`),
  };
}

/** Checks that miss: pairs of fresh wallets. */
const MISS_SHARE = 0.25;

/**
 * v2 check all queries over the chain: delegateAlls it was sent (some revoked since), and a
 * MISS_SHARE of misses, each with the contract's answer.
 */
export async function checkAllQueries(chain: BackfillChain, count: number, seed: number) {
  const rng = new Rng(seed);
  // A small chain (the smoke run's) has fewer delegateAlls than hits wanted: some are asked twice.
  const shuffled = rng.shuffle([...chain.delegateAlls]);
  const sent = Array.from({ length: Math.round(count * (1 - MISS_SHARE)) }, (_, i) => shuffled[i % shuffled.length]!);
  const misses = Array.from({ length: count - sent.length }, () => ({
    from: randomAddress(rng),
    to: randomAddress(rng),
    rights: zeroHash as Hex,
  }));
  const queries = rng.shuffle([...sent, ...misses]);
  const block = await chainClient(chain.anvil.url).getBlockNumber();
  const answers = await ethCalls(
    { rpcUrl: chain.anvil.url, registry: chain.registries.v2, abi: abis.v2 },
    queries.map((q) => ({ functionName: "checkDelegateForAll", args: [q.to, q.from, q.rights], block })),
  );
  return { queries, answers: answers as boolean[] };
}

/** What `npm start` alone on PGlite did over its chain (see measureStartOnPglite). */
export type PgliteStartFigures = IndexerFigures & { events: number; check: RouteFigure };

/** How many v2 check all queries npm start on PGlite is loaded with. */
const START_CHECKS = 2_000;

/** A fresh chain holding registry events, all final: what the backfills are measured over. */
export type BackfillChain = Chain & { events: number; blocks: number; delegateAlls: SentDelegateAll[] };

/** Sends `events` registry events to a fresh chain and makes them final. */
export async function backfillChain(
  cleanup: Cleanup,
  events: number,
  seed: number,
  log: (line: string) => void,
): Promise<BackfillChain> {
  const chain = await startChain(cleanup, { blockGasLimit: BLOCK_GAS_LIMIT });
  const started = Date.now();
  const { blocks, delegateAlls } = await sendEvents(chain.anvil.url, chain.registries.v2, events, seed);
  const sendMs = Date.now() - started;
  log(`${events.toLocaleString("en")} events in ${blocks} blocks sent in ${(sendMs / 1000).toFixed(1)} s`);
  return { ...chain, events, blocks, delegateAlls };
}

/**
 * A fresh indexer backfilling the chain's events, then the minimal Ponder indexer (bench/baseline)
 * over the same blocks.
 */
export async function measureBackfill(
  cleanup: Cleanup,
  db: pg.ClientBase,
  chain: BackfillChain,
  log: (line: string) => void,
  hooks: { indexer?: IndexerHooks; baseline?: IndexerHooks } = {},
): Promise<BackfillFigures> {
  const own = await timeIndexer(
    chain.events,
    async (env) => {
      const service = await startIndexer(cleanup, chain, env);
      const stored = rowsOf(db, `"${service.schema}".v2_event`);
      return { url: service.url, output: () => plainOutput(service), stop: service.stop, stored };
    },
    hooks.indexer,
  );
  log(`indexed in ${(own.backfillMs / 1000).toFixed(1)} s; now the minimal Ponder indexer over the same blocks`);
  const baseline = await timeIndexer(chain.events, (env) => startBaseline(cleanup, db, chain, env), hooks.baseline);
  return { events: chain.events, blocks: chain.blocks, ...own, baseline };
}

/**
 * `npm start` alone, as the README's first command runs it (embedded PGlite, no replicas), over a
 * chain of its own: its backfill, then its v2 check all loaded as the replicas' are,
 * each sampled answer first compared with the contract's.
 */
export async function measureStartOnPglite(
  cleanup: Cleanup,
  chain: BackfillChain,
  seed: number,
  measure: RouteMeasurer,
  durationS: number,
  env: NodeJS.ProcessEnv = {},
): Promise<PgliteStartFigures> {
  const { queries, answers } = await checkAllQueries(chain, START_CHECKS, seed);
  const route = chainCheckAllRoute(
    "(d) npm start alone on PGlite (no replicas), v2 check all",
    CHAIN_ID,
    queries,
    answers,
  );
  let check: RouteFigure | undefined;
  let service: Service | undefined;
  // In a directory of its own, which holds the keys' directory beside it too (api/access/open.ts).
  const dir = mkdtempSync(join(tmpdir(), "bench-pglite-"));
  const pgliteDir = join(dir, "pglite");
  cleanup.add("npm start's PGlite directories", async () => rmSync(dir, { recursive: true, force: true }));
  const storedInPglite = async () => {
    const stopped = await PGlite.create(pgliteDir);
    try {
      return (await stopped.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${service!.schema}".v2_event`))
        .rows[0]!.n;
    } finally {
      await stopped.close();
    }
  };
  const figures = await timeIndexer(
    chain.events,
    async (tagged) => {
      service = await startIndexer(cleanup, chain, { ...tagged, ...env, DATABASE_URL: "", PGLITE_DIR: pgliteDir });
      return { url: service.url, output: () => plainOutput(service!), stop: service.stop, stored: storedInPglite };
    },
    {
      ready: async () => {
        await settle(service!.url, service!.headers);
        check = await measure(service!.url, route, service!.headers, undefined, undefined, durationS);
      },
    },
  );
  return { ...figures, events: chain.events, check: check! };
}
