/**
 * Start-block discovery against a real chain: the service finds where each registry was
 * deployed by eth_getCode bisection, indexes from exactly there (never asks for logs before it,
 * nor blocks, receipts, transactions, state or traces of blocks before it, but for the genesis
 * lookup of the discovery and the one header of Ponder's sync cursor: see expectNothingBeforeStart),
 * remembers it in START_BLOCKS_FILE and, restarted, uses what it remembered without searching
 * again; a registry with no code on a chain is skipped there, and said to be. A chain given a
 * WebSocket URL (PONDER_WS_URL_<id>) hears its new blocks there rather than asking its RPC.
 *
 * Every JSON-RPC call the service makes goes through a recording proxy in front of anvil.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Address, getAddress, type Hex, toHex, zeroHash } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { type Answer, ask, indexedBlock } from "../devkit/ask";
import { abis, addresses, installRegistries } from "../devkit/oracle";
import { waitFor } from "../devkit/processes";
import { callView, chainClient, rpc } from "../devkit/rpc";
import { sendWrite } from "../devkit/send";
import { plainOutput, type Service, startService } from "../devkit/service";
import { ponderFinalityDepth } from "../ponder/ponder-0.16.10";
import { type RecordedCall, type RpcProxy, startRpcProxy } from "./helpers/rpc-proxy";

const A_ID = 31337;
// Animechain: a chain of the table that viem does not define (core/chains.ts).
const B_ID = 69000;
const V1 = getAddress(addresses.v1.address);
const V2 = getAddress(addresses.v2.address);
/** Ponder's finality depth: its unfinalized window at startup. */
const FINALITY: Record<number, bigint> = {
  [A_ID]: BigInt(ponderFinalityDepth(A_ID)),
  [B_ID]: BigInt(ponderFinalityDepth(B_ID)),
};
/** Blocks mined before the registries are installed, and after. */
const BEFORE = 200;
const AFTER = 100;

let a: Anvil | undefined;
let b: Anvil | undefined;
let proxyA: RpcProxy | undefined;
let proxyB: RpcProxy | undefined;
let service: Service | undefined;
let dir: string;
let startBlocksFile: string;
let accountsA: Address[];
let accountsB: Address[];
/** The first block with code at each registry, found here by asking for the code at every block. */
const deployedA = { v1: 0n, v2: 0n };
let deployedBv2 = 0n;
/** Delegations written after the install, and the blocks they are in. */
let writtenA = 0n;
let writtenB = 0n;
const START_A = () => ({ [V1.toLowerCase()]: deployedA.v1, [V2.toLowerCase()]: deployedA.v2 });

/** Whether there is code at `address` in every block 0..latest, in JSON-RPC batches. */
async function codeByBlock(url: string, address: Address, latest: bigint): Promise<boolean[]> {
  const out: boolean[] = [];
  for (let start = 0n; start <= latest; start += 200n) {
    const calls: Promise<unknown>[] = [];
    for (let n = start; n <= latest && n < start + 200n; n++) calls.push(rpc(url, "eth_getCode", [address, toHex(n)]));
    out.push(...(await Promise.all(calls)).map((code) => code !== "0x"));
  }
  return out;
}

/** The first block with code, checking that every later block has it too. */
async function firstBlockWithCode(url: string, address: Address): Promise<bigint> {
  const latest = await chainClient(url).getBlockNumber();
  const code = await codeByBlock(url, address, latest);
  const first = code.indexOf(true);
  expect(first, `no code at ${address}`).toBeGreaterThan(0);
  expect(code.slice(first).every(Boolean), `code at ${address} comes and goes`).toBe(true);
  return BigInt(first);
}

type ChainsBody = {
  chainId: number;
  name: string;
  title: string;
  testnet: boolean;
  registries: {
    v1: { address: string; startBlock: number } | null;
    v2: { address: string; startBlock: number } | null;
  };
  indexedBlock: number | null;
  status: string;
}[];

/** A request to the service, with its access headers. */
const get = (path: string) => ask(service!.url, path, { headers: service!.headers });

async function chainsList(): Promise<ChainsBody> {
  const res = await get("/registry/chains");
  expect(res.status, res.text).toBe(200);
  return JSON.parse(res.text) as ChainsBody;
}

const checkAllV2 = (chainId: number, to: Address, from: Address) =>
  get(`/registry/v2/check/all?chainId=${chainId}&to=${to}&from=${from}`);
const checkAllV1 = (chainId: number, delegate: Address, vault: Address) =>
  get(`/registry/v1/check/all?chainId=${chainId}&delegate=${delegate}&vault=${vault}`);

async function waitForIndexed(chainId: number, block: bigint) {
  await waitFor(
    `chain ${chainId} indexed to block ${block}`,
    async () => {
      const indexed = await indexedBlock({ serviceUrl: service!.url, chainId, headers: service!.headers });
      return indexed !== undefined && indexed >= block ? indexed : undefined;
    },
    120_000,
  );
}

/** What a block tag or number asks for, as a number ("latest" and friends: undefined). */
const blockParam = (value: unknown): bigint | undefined =>
  typeof value === "string" && /^0x[0-9a-f]+$/i.test(value) ? BigInt(value) : undefined;

const ZERO_BLOOM = `0x${"0".repeat(512)}`;

/**
 * Every eth_getLogs the service asked: the first block it covers (fromBlock, or the block of a
 * blockHash, with that block's logsBloom) and the addresses it names.
 */
async function getLogsRequests(proxy: RpcProxy, url: string) {
  const out: {
    from: bigint | undefined;
    byHash: boolean;
    emptyBloom: boolean;
    addresses: string[];
    call: RecordedCall;
  }[] = [];
  for (const call of proxy.calls.filter((c) => c.method === "eth_getLogs")) {
    const filter = (call.params[0] ?? {}) as { fromBlock?: string; blockHash?: Hex; address?: string | string[] };
    let from = blockParam(filter.fromBlock);
    let emptyBloom = false;
    if (filter.blockHash) {
      const block = (await rpc(url, "eth_getBlockByHash", [filter.blockHash, false])) as {
        number: Hex;
        logsBloom: Hex;
      } | null;
      from = block ? BigInt(block.number) : undefined;
      emptyBloom = block?.logsBloom === ZERO_BLOOM;
    }
    const list = filter.address === undefined ? [] : Array.isArray(filter.address) ? filter.address : [filter.address];
    out.push({
      from,
      byHash: filter.blockHash !== undefined,
      emptyBloom,
      addresses: list.map((x) => x.toLowerCase()),
      call,
    });
  }
  return out;
}

/**
 * No log request reaches before the start block of a registry it asks about (of the earliest one,
 * when it names none). One exception is Ponder's, not the service's: following the head, Ponder
 * 0.16 asks for the logs of every block in its unfinalized window (the last `finality` blocks at
 * startup) whose logsBloom is all zero, by blockHash and whatever the start block, as a guard
 * against chains that report empty blooms. Those blocks hold no logs at all, and are only there
 * when a registry was deployed within that window of the head; they are counted, not failed.
 */
async function expectNoLogsBeforeStart(
  proxy: RpcProxy,
  url: string,
  start: Record<string, bigint>,
  window: { head: bigint; finality: bigint },
) {
  const requests = await getLogsRequests(proxy, url);
  expect(requests.length, "the service asked for logs").toBeGreaterThan(0);
  const earliest = Object.values(start).reduce((m, v) => (v < m ? v : m));
  let emptyBlocks = 0;
  for (const r of requests) {
    const what = JSON.stringify(r.call.params);
    expect(r.from, `eth_getLogs without a block: ${what}`).toBeDefined();
    const bound =
      r.addresses.length === 0
        ? earliest
        : r.addresses.map((x) => start[x] ?? earliest).reduce((m, v) => (v < m ? v : m));
    if (r.from! >= bound) continue;
    const allowed = r.byHash && r.emptyBloom && r.from! >= window.head - window.finality;
    expect(allowed, `eth_getLogs at block ${r.from} < start block ${bound}: ${what}`).toBe(true);
    emptyBlocks++;
  }
  // The backfill starts at each registry's start block exactly: not before, and not after either.
  const ranged = requests.filter((r) => !r.byHash);
  expect(ranged.length, "ranged eth_getLogs (the backfill)").toBeGreaterThan(0);
  for (const [address, block] of Object.entries(start)) {
    const naming = ranged.filter((r) => r.addresses.length === 0 || r.addresses.includes(address)).map((r) => r.from!);
    expect(naming.length, `ranged eth_getLogs for ${address}`).toBeGreaterThan(0);
    expect(
      naming.reduce((m, v) => (v < m ? v : m)),
      `the first block asked for ${address}`,
    ).toBe(block);
  }
  return { requests, ranged, emptyBlocks };
}

// ---------------------------------------------------------------------------------------------
// Nothing else before the start block either

/** Calls that name no block (nothing historical): they cannot reach before a start block. */
const BLOCKLESS = new Set([
  "eth_chainId",
  "eth_blockNumber",
  "net_version",
  "web3_clientVersion",
  "eth_syncing",
  "eth_gasPrice",
  "eth_maxPriorityFeePerGas",
]);

/** A 32-byte hash (of a block or a transaction), as opposed to a block number. */
const isHash = (value: unknown): value is Hex => typeof value === "string" && /^0x[0-9a-f]{64}$/i.test(value);

/** Where a call reaches: these blocks, the head ("latest", "pending"), or somewhere the test cannot tell. */
type Place = { blocks: bigint[] } | { head: true } | { unplaced: string };

/** A block parameter: a number, a tag, a block hash, or an EIP-1898 object ({ blockNumber } / { blockHash }). */
async function blockRef(url: string, value: unknown): Promise<Place> {
  if (typeof value === "string") {
    if (value === "latest" || value === "pending") return { head: true };
    if (value === "earliest") return { blocks: [0n] };
    if (isHash(value)) {
      const block = (await rpc(url, "eth_getBlockByHash", [value, false])) as { number: Hex } | null;
      return block
        ? { blocks: [BigInt(block.number)] }
        : { unplaced: `a block hash the chain does not know: ${value}` };
    }
    const n = blockParam(value);
    if (n !== undefined) return { blocks: [n] };
  } else if (value !== null && typeof value === "object") {
    const ref = value as { blockNumber?: unknown; blockHash?: unknown };
    if (ref.blockHash !== undefined) return blockRef(url, ref.blockHash);
    if (ref.blockNumber !== undefined) return blockRef(url, ref.blockNumber);
  }
  // "safe" and "finalized" too: where they are depends on the moment, so they are not guessed.
  return { unplaced: `block ${JSON.stringify(value)}` };
}

/** The block of a transaction, by its hash. */
async function txRef(url: string, value: unknown): Promise<Place> {
  if (!isHash(value)) return { unplaced: `transaction ${JSON.stringify(value)}` };
  const tx = (await rpc(url, "eth_getTransactionByHash", [value])) as { blockNumber: Hex | null } | null;
  return tx?.blockNumber
    ? { blocks: [BigInt(tx.blockNumber)] }
    : { unplaced: `a transaction the chain has not mined: ${value}` };
}

/**
 * The block each historical method reaches, by its params: blocks (headers and bodies), receipts,
 * transactions, state (eth_call and friends), and the debug_trace* / trace_* namespaces. A method
 * the service calls that is in neither this table nor BLOCKLESS fails the test: it must be placed
 * here before it can be said not to reach before the start block.
 */
const PLACES: Record<string, (url: string, params: unknown[]) => Promise<Place>> = {
  eth_getBlockByNumber: (u, p) => blockRef(u, p[0]),
  eth_getBlockByHash: (u, p) => blockRef(u, p[0]),
  eth_getBlockReceipts: (u, p) => blockRef(u, p[0]),
  eth_getBlockTransactionCountByNumber: (u, p) => blockRef(u, p[0]),
  eth_getBlockTransactionCountByHash: (u, p) => blockRef(u, p[0]),
  eth_getTransactionByBlockNumberAndIndex: (u, p) => blockRef(u, p[0]),
  eth_getTransactionByBlockHashAndIndex: (u, p) => blockRef(u, p[0]),
  eth_getTransactionReceipt: (u, p) => txRef(u, p[0]),
  eth_getTransactionByHash: (u, p) => txRef(u, p[0]),
  eth_call: (u, p) => blockRef(u, p[1] ?? "latest"),
  eth_getCode: (u, p) => blockRef(u, p[1] ?? "latest"),
  eth_getBalance: (u, p) => blockRef(u, p[1] ?? "latest"),
  eth_getTransactionCount: (u, p) => blockRef(u, p[1] ?? "latest"),
  eth_getStorageAt: (u, p) => blockRef(u, p[2] ?? "latest"),
  debug_traceBlockByNumber: (u, p) => blockRef(u, p[0]),
  debug_traceBlockByHash: (u, p) => blockRef(u, p[0]),
  debug_traceTransaction: (u, p) => txRef(u, p[0]),
  debug_traceCall: (u, p) => blockRef(u, p[1] ?? "latest"),
  trace_block: (u, p) => blockRef(u, p[0]),
  trace_replayBlockTransactions: (u, p) => blockRef(u, p[0]),
  trace_transaction: (u, p) => txRef(u, p[0]),
  trace_get: (u, p) => txRef(u, p[0]),
  trace_replayTransaction: (u, p) => txRef(u, p[0]),
  trace_call: (u, p) => blockRef(u, p[2] ?? "latest"),
  // A filter without fromBlock starts at "earliest", block 0.
  trace_filter: (u, p) => blockRef(u, (p[0] as { fromBlock?: unknown } | undefined)?.fromBlock ?? "earliest"),
};

/**
 * No request of any kind but eth_getLogs (held to the start blocks above) reaches a block before
 * the chain's earliest start block: no eth_getBlockByNumber / eth_getBlockByHash, no receipts
 * (eth_getBlockReceipts, eth_getTransactionReceipt), no transactions, no state, no debug_trace* or
 * trace_*. Two requests do, on purpose, and are told apart exactly, not by a margin:
 *
 * - The discovery (core/discovery.ts planChains), run as ponder.config.ts is loaded, before Ponder
 *   makes its first request (eth_chainId): `eth_blockNumber`, `eth_getBlockByNumber ["0x0", false]`
 *   (the genesis hash that keys START_BLOCKS_FILE; once per chain) and its eth_getCode lookups
 *   (held to one bisection, or to the remembered blocks' checks, by the tests below). Every call
 *   before eth_chainId must be one of these three, and block 0 is never asked for after it.
 * - Ponder's sync cursor: on a database with nothing synced, Ponder 0.16 (runtime/index.ts,
 *   getLocalSyncProgress and getCachedBlock: "first missing block - 1 is the last completed block")
 *   fetches the header of block `earliest start - 1` (`eth_getBlockByNumber [start - 1, false]`, no
 *   transactions) as the block its sync has completed up to. That one header, at most once.
 *
 * Ponder also fetches every block of its unfinalized window at startup (the last `finality`
 * blocks), whatever the start block; the test's chains are built so that window lies after the
 * start blocks, and that is checked first, so a block before the start asked for is a finding.
 */
async function expectNothingBeforeStart(
  proxy: RpcProxy,
  url: string,
  earliest: bigint,
  window: { head: bigint; finality: bigint },
) {
  expect(
    window.head - window.finality,
    `Ponder's unfinalized window at startup (from block ${window.head - window.finality}) after the start block ` +
      `${earliest}`,
  ).toBeGreaterThan(earliest);
  const calls = proxy.calls;
  const indexerFrom = calls.findIndex((c) => c.method === "eth_chainId");
  expect(indexerFrom, `Ponder's first request (eth_chainId) after the discovery's: ${summary(calls)}`).toBeGreaterThan(
    0,
  );
  const show = (c: RecordedCall) => `${c.method} ${JSON.stringify(c.params)}`;

  // Before Ponder's first request: the discovery's, and nothing else.
  const beforeIndexer = calls.slice(0, indexerFrom);
  const genesis = beforeIndexer.filter(
    (c) => c.method === "eth_getBlockByNumber" && c.params[0] === "0x0" && c.params[1] === false,
  );
  const notDiscovery = beforeIndexer.filter(
    (c) => c.method !== "eth_blockNumber" && c.method !== "eth_getCode" && !genesis.includes(c),
  );
  expect(notDiscovery.map(show), "requests before Ponder's first one that are not the discovery's").toEqual([]);
  expect(genesis.length, 'the discovery\'s genesis lookup (eth_getBlockByNumber ["0x0", false]), once').toBe(1);

  // From Ponder's first request on: every request placed, and none before the start block but the cursor.
  const counts: Record<string, number> = {};
  const cursor: RecordedCall[] = [];
  const unknown: string[] = [];
  const unplaced: string[] = [];
  const below: string[] = [];
  for (const call of calls.slice(indexerFrom)) {
    if (call.method === "eth_getLogs" || BLOCKLESS.has(call.method)) continue;
    const place = PLACES[call.method];
    if (!place) {
      unknown.push(show(call));
      continue;
    }
    counts[call.method] = (counts[call.method] ?? 0) + 1;
    const where = await place(url, call.params);
    if ("unplaced" in where) unplaced.push(`${show(call)}: ${where.unplaced}`);
    if (!("blocks" in where)) continue;
    for (const n of where.blocks) {
      if (n >= earliest) continue;
      const isCursor = call.method === "eth_getBlockByNumber" && n === earliest - 1n && call.params[1] === false;
      if (isCursor) cursor.push(call);
      else below.push(`block ${n} < start block ${earliest}: ${show(call)}`);
    }
  }
  expect(unknown, "requests of a method this test cannot place (add it to PLACES)").toEqual([]);
  expect(unplaced, "requests whose block this test cannot tell").toEqual([]);
  expect(below, "requests for blocks before the start block").toEqual([]);
  expect(cursor.length, `Ponder's sync cursor, the header of block ${earliest - 1n}: at most once`).toBeLessThanOrEqual(
    1,
  );
  expect(counts.eth_getBlockByNumber ?? 0, "the indexer fetched blocks by number").toBeGreaterThan(0);
  return { counts, cursor: cursor.length };
}

function remembered(): Record<string, number> {
  return JSON.parse(readFileSync(startBlocksFile, "utf8")) as Record<string, number>;
}

const summary = (calls: readonly RecordedCall[]) => {
  const counts: Record<string, number> = {};
  for (const c of calls) counts[c.method] = (counts[c.method] ?? 0) + 1;
  return JSON.stringify(counts);
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "discovery-test-"));
  startBlocksFile = join(dir, "remembered", "start-blocks.json");
  [a, b] = await Promise.all([startAnvil({ chainId: A_ID }), startAnvil({ chainId: B_ID })]);

  // Chain A: blocks, then both registries, then more blocks.
  await rpc(a.url, "anvil_mine", [toHex(BEFORE)]);
  await installRegistries(a.url);
  await rpc(a.url, "anvil_mine", [toHex(AFTER)]);
  accountsA = await chainClient(a.url).getAddresses();
  deployedA.v1 = await firstBlockWithCode(a.url, V1);
  deployedA.v2 = await firstBlockWithCode(a.url, V2);
  // A delegation on each registry, written after the install.
  await sendWrite(a.url, abis.v2, accountsA[1]!, V2, "delegateAll", [accountsA[2]!, zeroHash, true]);
  writtenA = await sendWrite(a.url, abis.v1, accountsA[3]!, V1, "delegateForAll", [accountsA[4]!, true]);

  // Chain B: both installed, then v1's code taken away: v1 is not on this chain.
  await rpc(b.url, "anvil_mine", [toHex(50)]);
  await installRegistries(b.url);
  // Longer than Ponder's finality depth there: the start block is in the backfill.
  await rpc(b.url, "anvil_mine", [toHex(150)]);
  await rpc(b.url, "anvil_setCode", [V1, "0x"]);
  await rpc(b.url, "anvil_mine", [toHex(5)]);
  expect(await rpc(b.url, "eth_getCode", [V1, "latest"])).toBe("0x");
  accountsB = await chainClient(b.url).getAddresses();
  deployedBv2 = await firstBlockWithCode(b.url, V2);
  writtenB = await sendWrite(b.url, abis.v2, accountsB[5]!, V2, "delegateAll", [accountsB[6]!, zeroHash, true]);

  console.log(
    `[discovery] chain ${A_ID}: v1 deployed in block ${deployedA.v1}, v2 in ${deployedA.v2}, delegations written by ` +
      `block ${writtenA}; chain ${B_ID}: v2 deployed in block ${deployedBv2}, v1 removed`,
  );
  proxyA = await startRpcProxy(a.url);
  proxyB = await startRpcProxy(b.url);
});

afterAll(async () => {
  await service?.stop();
  await proxyA?.close();
  await proxyB?.close();
  await Promise.all([a?.stop(), b?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("start-block discovery", () => {
  it("first start: finds each registry's deployment block by eth_getCode, indexes from there, remembers \
it", async () => {
    const t0 = Date.now();
    const head = await chainClient(a!.url).getBlockNumber();
    service = await startService({ rpc: { [A_ID]: proxyA!.url }, env: { START_BLOCKS_FILE: startBlocksFile } });
    console.log(`[discovery] first start ready in ${Date.now() - t0} ms; RPC calls: ${summary(proxyA!.calls)}`);

    // The deployment block is where the code first appears: none at d - 1, code at d.
    for (const [version, address, d] of [
      ["v1", V1, deployedA.v1],
      ["v2", V2, deployedA.v2],
    ] as const) {
      expect(await rpc(a!.url, "eth_getCode", [address, toHex(d - 1n)]), `${version} at block ${d - 1n}`).toBe("0x");
      expect(await rpc(a!.url, "eth_getCode", [address, toHex(d)]), `${version} at block ${d}`).not.toBe("0x");
    }

    // What the service says it found: /registry/chains and its log.
    const [entry, ...others] = await chainsList();
    expect(others).toEqual([]);
    expect(entry!.chainId).toBe(A_ID);
    expect(entry!.registries.v1).toEqual({ address: V1, startBlock: Number(deployedA.v1) });
    expect(entry!.registries.v2).toEqual({ address: V2, startBlock: Number(deployedA.v2) });
    const output = plainOutput(service);
    for (const [version, d] of [
      ["v1", deployedA.v1],
      ["v2", deployedA.v2],
    ] as const) {
      const logged = [
        ...output.matchAll(
          new RegExp(
            `chain ${A_ID} \\([^)]*\\): registry ${version} was deployed in block (\\d+); indexing from there`,
            "g",
          ),
        ),
      ];
      expect(logged.length, `the log line for ${version}:\n${output.slice(-3000)}`).toBeGreaterThan(0);
      for (const m of logged) expect(BigInt(m[1]!), `logged ${version} start`).toBe(d);
    }

    // Found by bisection: O(log n) lookups, not a scan.
    const getCode = proxyA!.calls.filter((c) => c.method === "eth_getCode");
    const latest = await chainClient(a!.url).getBlockNumber();
    const perSearch = 1 + Math.ceil(Math.log2(Number(latest) + 1));
    expect(
      getCode.length,
      `eth_getCode calls: ${getCode.map((c) => JSON.stringify(c.params)).join(" ")}`,
    ).toBeGreaterThan(0);
    expect(getCode.length, "eth_getCode calls: at most one bisection per registry").toBeLessThanOrEqual(2 * perSearch);
    for (const c of getCode) expect([V1.toLowerCase(), V2.toLowerCase()]).toContain(String(c.params[0]).toLowerCase());

    // Remembered, by chain id, genesis hash and address.
    const genesis = ((await rpc(a!.url, "eth_getBlockByNumber", ["0x0", false])) as { hash: Hex }).hash;
    expect(remembered()).toEqual({
      [`${A_ID}:${genesis}:${V1.toLowerCase()}`]: Number(deployedA.v1),
      [`${A_ID}:${genesis}:${V2.toLowerCase()}`]: Number(deployedA.v2),
    });

    // Nothing before the start blocks is asked for.
    await waitForIndexed(A_ID, writtenA);
    const logs = await expectNoLogsBeforeStart(proxyA!, a!.url, START_A(), { head, finality: FINALITY[A_ID]! });
    console.log(
      `[discovery] first start: ${logs.requests.length} eth_getLogs, ${logs.ranged.length} ranged, the earliest from ` +
        `block ${logs.ranged.map((r) => r.from!).reduce((m, v) => (v < m ? v : m))}; ${logs.emptyBlocks} of empty ` +
        `blocks below a start block`,
    );
    const rest = await expectNothingBeforeStart(
      proxyA!,
      a!.url,
      deployedA.v1 < deployedA.v2 ? deployedA.v1 : deployedA.v2,
      { head, finality: FINALITY[A_ID]! },
    );
    console.log(
      `[discovery] first start: other requests placed, none before the start block: ${JSON.stringify(rest.counts)}; ` +
        `sync cursor headers: ${rest.cursor}`,
    );
  });

  it("first start: the delegations written after the install are answered, as the contracts answer", async () => {
    await expectAnswers(A_ID, a!.url, accountsA, true);
    // And one written now, indexed live.
    const block = await sendWrite(a!.url, abis.v2, accountsA[7]!, V2, "delegateAll", [accountsA[8]!, zeroHash, true]);
    await waitForIndexed(A_ID, block);
    const live = await checkAllV2(A_ID, accountsA[8]!, accountsA[7]!);
    expect(live.text, live.text).toBe("true");
  });

  it("restart with the same START_BLOCKS_FILE: the remembered start blocks are used, no new search; a chain without \
v1 skips v1", async () => {
    await service!.stop();
    service = undefined;
    proxyA!.clear();
    const file = readFileSync(startBlocksFile, "utf8");
    const headA = await chainClient(a!.url).getBlockNumber();
    const headB = await chainClient(b!.url).getBlockNumber();

    const t0 = Date.now();
    service = await startService({
      rpc: { [A_ID]: proxyA!.url, [B_ID]: proxyB!.url },
      env: { START_BLOCKS_FILE: startBlocksFile },
    });
    console.log(
      `[discovery] restart ready in ${Date.now() - t0} ms; RPC calls on ${A_ID}: ${summary(proxyA!.calls)}; on ` +
        `${B_ID}: ${summary(proxyB!.calls)}`,
    );

    // Chain A: no new search. The only historical eth_getCode calls check each remembered block:
    // code at it, none just before (two dev chains started in one second share a genesis hash).
    const historical = proxyA!.calls.filter((c) => {
      if (c.method !== "eth_getCode") return false;
      const n = blockParam(c.params[1]);
      return n !== undefined && n < headA;
    });
    const rememberedA = Object.entries(JSON.parse(file) as Record<string, number>).filter(([key]) =>
      key.startsWith(`${A_ID}:`),
    );
    const checks = rememberedA.flatMap(([key, d]) => {
      const address = key.split(":")[2]!;
      return [`${address}@${d}`, `${address}@${d - 1}`];
    });
    expect(
      historical.map((c) => `${String(c.params[0]).toLowerCase()}@${blockParam(c.params[1])}`).sort(),
      "eth_getCode at historical blocks on restart: only the checks of the remembered blocks",
    ).toEqual(checks.sort());
    const output = plainOutput(service);
    expect(output).not.toMatch(new RegExp(`chain ${A_ID} \\([^)]*\\): registry v[12] was deployed in block`));

    const list = await chainsList();
    // Both chains, in the table's order (Animechain before the dev chain).
    expect(list.map((c) => c.chainId)).toEqual([B_ID, A_ID]);
    const entryA = list.find((c) => c.chainId === A_ID);
    const entryB = list.find((c) => c.chainId === B_ID);
    expect(entryA!.registries).toEqual({
      v1: { address: V1, startBlock: Number(deployedA.v1) },
      v2: { address: V2, startBlock: Number(deployedA.v2) },
    });
    await waitForIndexed(A_ID, headA);
    const logsA = await expectNoLogsBeforeStart(proxyA!, a!.url, START_A(), {
      head: headA,
      finality: FINALITY[A_ID]!,
    });
    await expectAnswers(A_ID, a!.url, accountsA, true);

    // Chain B: v2 found by bisection; v1 has no code at the head, so it is skipped, and said so.
    expect(entryB!.registries.v1, "v1 on chain B").toBeNull();
    expect(entryB!.registries.v2).toEqual({ address: V2, startBlock: Number(deployedBv2) });
    expect(output).toMatch(
      new RegExp(`chain ${B_ID} \\([^)]*\\): registry v1 has no code at ${V1}; not indexing v1 there`),
    );
    expect(output).toMatch(
      new RegExp(`chain ${B_ID} \\([^)]*\\): registry v2 was deployed in block ${deployedBv2}; indexing from there`),
    );
    const v1Lookups = proxyB!.calls.filter(
      (c) => c.method === "eth_getCode" && String(c.params[0]).toLowerCase() === V1.toLowerCase(),
    );
    expect(v1Lookups.length, "v1 on chain B: one lookup at the head, no search").toBe(1);

    // The file: chain A's entries untouched, chain B's v2 added, nothing for B's v1.
    const genesisB = ((await rpc(b!.url, "eth_getBlockByNumber", ["0x0", false])) as { hash: Hex }).hash;
    expect(remembered()).toEqual({
      ...(JSON.parse(file) as Record<string, number>),
      [`${B_ID}:${genesisB}:${V2.toLowerCase()}`]: Number(deployedBv2),
    });

    await waitForIndexed(B_ID, writtenB);
    const logsB = await expectNoLogsBeforeStart(
      proxyB!,
      b!.url,
      { [V2.toLowerCase()]: deployedBv2 },
      { head: headB, finality: FINALITY[B_ID]! },
    );
    console.log(
      `[discovery] restart: chain ${A_ID}: ${logsA.ranged.length} ranged eth_getLogs, ${logsA.emptyBlocks} of empty ` +
        `blocks below a start block; chain ${B_ID}: ${logsB.ranged.length} ranged, ${logsB.emptyBlocks} of empty ` +
        `blocks below the start block`,
    );
    const restA = await expectNothingBeforeStart(
      proxyA!,
      a!.url,
      deployedA.v1 < deployedA.v2 ? deployedA.v1 : deployedA.v2,
      { head: headA, finality: FINALITY[A_ID]! },
    );
    const restB = await expectNothingBeforeStart(proxyB!, b!.url, deployedBv2, {
      head: headB,
      finality: FINALITY[B_ID]!,
    });
    console.log(
      `[discovery] restart: other requests placed, none before the start block: chain ${A_ID}: ` +
        `${JSON.stringify(restA.counts)}, sync cursor headers: ${restA.cursor}; chain ${B_ID}: ` +
        `${JSON.stringify(restB.counts)}, sync cursor headers: ${restB.cursor}`,
    );
    const yes = await checkAllV2(B_ID, accountsB[6]!, accountsB[5]!);
    expect(`${yes.status} ${yes.text}`).toBe("200 true");
    for (const path of [
      `/registry/v1/check/all?chainId=${B_ID}&delegate=${accountsB[6]}&vault=${accountsB[5]}`,
      `/registry/v1/check/contract?chainId=${B_ID}&delegate=${accountsB[6]}&vault=${accountsB[5]}&contract=${V2}`,
      `/registry/v1/check/token?chainId=${B_ID}&delegate=${accountsB[6]}&vault=${accountsB[5]}&contract=` +
        `${V2}&tokenId=1`,
      `/registry/v1/${accountsB[5]}?chainId=${B_ID}`,
    ]) {
      const answer = await get(path);
      expectUnsupportedChain(answer, [A_ID]);
    }
    // v1 on chain A still answers.
    const v1A = await checkAllV1(A_ID, accountsA[4]!, accountsA[3]!);
    expect(`${v1A.status} ${v1A.text}`).toBe("200 true");
  });

  it("a chain with PONDER_WS_URL_<id> hears its new blocks there: its RPC is never asked for the newest", async () => {
    await service!.stop();
    service = undefined;
    // Straight to anvil, past the proxy, which sees only the HTTP calls.
    const ws = a!.url.replace(/^http/, "ws");
    service = await startService({
      rpc: { [A_ID]: proxyA!.url, [B_ID]: proxyB!.url },
      env: { START_BLOCKS_FILE: startBlocksFile, [`PONDER_WS_URL_${A_ID}`]: ws },
    });
    await waitForIndexed(A_ID, await chainClient(a!.url).getBlockNumber());
    await waitForIndexed(B_ID, await chainClient(b!.url).getBlockNumber());
    proxyA!.clear();
    proxyB!.clear();
    const [from, to] = [accountsA[9]!, accountsA[5]!];
    expect((await checkAllV2(A_ID, to, from)).text, "before the write").toBe("false");
    const block = await sendWrite(a!.url, abis.v2, from, V2, "delegateAll", [to, zeroHash, true]);
    await waitForIndexed(A_ID, block);
    const answer = await checkAllV2(A_ID, to, from);
    expect(`${answer.status} ${answer.text}`, "the write's block, heard on the WebSocket").toBe("200 true");
    await new Promise((ok) => setTimeout(ok, 4_000));
    // Ponder's polling asks for the newest block with its transactions; the API's watchers without.
    const polls = (proxy: RpcProxy) =>
      proxy.calls.filter((c) => c.method === "eth_getBlockByNumber" && c.params[0] === "latest" && c.params[1] === true)
        .length;
    console.log(`[discovery] polls of the newest block: chain ${A_ID} ${polls(proxyA!)}, ${B_ID} ${polls(proxyB!)}`);
    expect(polls(proxyA!), `chain ${A_ID}, with a WebSocket URL`).toBe(0);
    expect(polls(proxyB!), `chain ${B_ID}, without: once a second`).toBeGreaterThanOrEqual(2);
  });
});

function expectUnsupportedChain(answer: Answer, served: number[]) {
  const where = `${answer.path}: ${answer.status} ${answer.text}`;
  expect(answer.status, where).toBe(400);
  expect(answer.headers.get("content-type"), where).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(answer.text) as { code: string; chains?: number[] };
  expect(body.code, where).toBe("unsupported_chain");
  if ("chains" in body) expect(body.chains, where).toEqual(served);
}

/** The two delegations written after the install, as the service and the contracts answer them. */
async function expectAnswers(chainId: number, url: string, accounts: Address[], want: boolean) {
  const v2 = await checkAllV2(chainId, accounts[2]!, accounts[1]!);
  const v1 = await checkAllV1(chainId, accounts[4]!, accounts[3]!);
  for (const [version, answer, abi, registry, args] of [
    ["v2", v2, abis.v2, V2, [accounts[2]!, accounts[1]!, zeroHash]],
    ["v1", v1, abis.v1, V1, [accounts[4]!, accounts[3]!]],
  ] as const) {
    expect(answer.status, `${version}: ${answer.text}`).toBe(200);
    const block = answer.block;
    expect(block, `${version}: X-Indexed-Block`).toBeDefined();
    const contract = await callView(url, abi, registry, "checkDelegateForAll", args, block!);
    expect(contract, `${version}: the contract at block ${block}`).toBe(want);
    expect(answer.text, `${version} at block ${block}`).toBe(String(contract));
  }
  // Reversed: false on both.
  expect((await checkAllV2(chainId, accounts[1]!, accounts[2]!)).text).toBe("false");
  expect((await checkAllV1(chainId, accounts[3]!, accounts[4]!)).text).toBe("false");
}
