/**
 * Indexing speed: registry events are put on a local chain first (v2 multicall, 50 writes a
 * transaction, from 20 senders), then a fresh indexer backfills them while its process tree's
 * memory is sampled.
 *
 * The writes are what a registry sees: mostly new delegations of every type, and revokes and
 * re-enables of a sender's earlier ones (each write emits one event, whatever it changes).
 */
import { stripVTControlCharacters } from "node:util";
import type pg from "pg";
import { type Address, toHex, zeroHash } from "viem";
import { abis } from "../devkit/oracle";
import { Child, freePort, GiveUp, ROOT, waitFor } from "../devkit/processes";
import { Rng } from "../devkit/random";
import { chainClient, rpc } from "../devkit/rpc";
import { SPREAD, sendAll } from "../devkit/send";
import { plainOutput } from "../devkit/service";
import { type Tx, txRequest, WRITE_RIGHTS, type Write } from "../devkit/v2/generate";
import { findDeploymentBlock } from "../scripts/launcher/discovery";
import type { Cleanup } from "./cleanup";
import { randomAddress } from "./dataset";
import { sampleTreeMemory, tagEnv } from "./procs";
import { CHAIN_ID, type Chain, startChain, startIndexer } from "./stack";

const WRITES_PER_TX = 50;
/** Blocks that hold hundreds of such transactions (anvil's 30M would take a few). */
const BLOCK_GAS_LIMIT = 4_000_000_000n;
/** Anvil's finalized block trails its head by this many: only finalized blocks are backfilled. */
const FINALITY_BLOCKS = 64;

export type IndexerFigures = {
  /** Ponder's backfill phase, from its log: backfill started → /ready answering 200. */
  backfillMs: number;
  /** The indexer process started → /ready answering 200. */
  readyMs: number;
  /** Highest total resident memory of the indexer's process tree, sampled every 100 ms. */
  peakRssMb: number;
};

/** The service's indexer's figures, and the minimal Ponder indexer's over the same events. */
export type BackfillFigures = IndexerFigures & {
  events: number;
  blocks: number;
  /** Sending the events to anvil (not part of the indexer's figures). */
  sendMs: number;
  baseline: IndexerFigures;
};

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

/** Puts `events` registry events on the chain and makes them final. */
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
  const sent = receipts.reduce(
    (n, r) => n + r.logs.filter((l) => l.address.toLowerCase() === registry.toLowerCase()).length,
    0,
  );
  if (failed > 0 || sent !== events)
    throw new Error(`backfill data: ${failed} transactions failed, ${sent} of ${events} events emitted`);
  const blocks = new Set(receipts.map((r) => r.blockNumber));
  const last = Math.max(...[...blocks].map(Number));
  await rpc(url, "anvil_mine", [toHex(FINALITY_BLOCKS + 2)]);
  const finalized = (await rpc(url, "eth_getBlockByNumber", ["finalized", false])) as { number: string };
  if (Number(finalized.number) < last)
    throw new Error(`anvil's finalized block ${Number(finalized.number)} is before the last event's ${last}`);
  return { blocks: blocks.size };
}

/** Milliseconds of the day of a Ponder log line's leading HH:MM:SS.mmm. */
function logTime(output: string, message: string): number {
  const match = new RegExp(`^(\\d\\d):(\\d\\d):(\\d\\d)\\.(\\d{3}) .*${message}`, "m").exec(output);
  if (!match) throw new Error(`the indexer's log has no line "${message}": has Ponder's log changed?`);
  const [h, m, s, ms] = match.slice(1).map(Number) as [number, number, number, number];
  return ((h * 60 + m) * 60 + s) * 1000 + ms;
}

/** Ponder's backfill phase, from its log: backfill started → /ready answering 200. */
function backfillMs(output: string): number {
  const day = 24 * 3600 * 1000;
  return (
    (logTime(output, "Started returning 200 responses endpoint=/ready") -
      logTime(output, "Started backfill indexing") +
      day) %
    day
  );
}

/** What bench/profile.ts adds to an indexer's run: its environment, and work once it is ready. */
export type IndexerHooks = { env?: NodeJS.ProcessEnv; ready?: (backfillMs: number) => Promise<void> };

type StartedIndexer = { output: () => string; table: string; stop: () => Promise<void> };

/**
 * Starts an indexer with `start` (given the environment that tags its processes), its process
 * tree's memory sampled until it is ready; then checks that `table` holds every event, and stops
 * it, so that the next indexer has the machine to itself.
 */
async function timeIndexer(
  db: pg.ClientBase,
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
  const figures = { backfillMs: backfillMs(indexer.output()), readyMs, peakRssMb };
  await hooks.ready?.(figures.backfillMs);
  const { rows } = await db.query(`SELECT count(*)::int AS n FROM ${indexer.table}`);
  if (rows[0].n !== events) throw new Error(`${indexer.table} holds ${rows[0].n} of the ${events} events`);
  await indexer.stop();
  return figures;
}

/** The minimal Ponder indexer (bench/baseline) over `chain`'s v2 registry, from its first block; ready. */
async function startBaseline(cleanup: Cleanup, chain: Chain, env: NodeJS.ProcessEnv) {
  const url = chain.anvil.url;
  const latest = await chainClient(url).getBlockNumber();
  const hasCode = async (block: bigint) =>
    ((await rpc(url, "eth_getCode", [chain.registry, toHex(block)])) as string) !== "0x";
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
      BASELINE_REGISTRY: chain.registry,
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
  return { output: () => stripVTControlCharacters(child.output), table: `"${schema}".event`, stop: () => child.stop() };
}

/**
 * Sends `events` registry events to a fresh chain, then measures a fresh indexer backfilling them,
 * and the minimal Ponder indexer (bench/baseline) after it over the same blocks.
 */
export async function measureBackfill(
  cleanup: Cleanup,
  db: pg.ClientBase,
  events: number,
  seed: number,
  log: (line: string) => void,
  hooks: { indexer?: IndexerHooks; baseline?: IndexerHooks } = {},
): Promise<BackfillFigures> {
  return cleanup.scope(async () => {
    const chain = await startChain(cleanup, { blockGasLimit: BLOCK_GAS_LIMIT });
    const started = Date.now();
    const { blocks } = await sendEvents(chain.anvil.url, chain.registry, events, seed);
    const sendMs = Date.now() - started;
    log(
      `${events.toLocaleString("en")} events in ${blocks} blocks sent in ${(sendMs / 1000).toFixed(1)} s; starting a ` +
        `fresh indexer`,
    );
    const own = await timeIndexer(
      db,
      events,
      async (env) => {
        const service = await startIndexer(cleanup, chain, env);
        return { output: () => plainOutput(service), table: `"${service.schema}".v2_event`, stop: service.stop };
      },
      hooks.indexer,
    );
    log(`indexed in ${(own.backfillMs / 1000).toFixed(1)} s; now the minimal Ponder indexer over the same blocks`);
    const baseline = await timeIndexer(db, events, (env) => startBaseline(cleanup, chain, env), hooks.baseline);
    return { events, blocks, sendMs, ...own, baseline };
  });
}
