/**
 * Snapshots and batch checks, v1 and v2, against the real registries on anvil.
 *
 * 1. Past blocks: seeded random writes to both registries (every v2 write, rights, amounts, revokes,
 *    re-enables, multicalls, several writes to one delegation in one block; v1 delegations of every
 *    kind, revokeAllDelegates, revokeDelegate and revokeSelf, directly and from contract wallets) in
 *    rounds: half before the service starts (backfilled), half while it runs (indexed live). Then at
 *    past blocks — before the registries existed, their first block, the busiest blocks, blocks where
 *    one delegation was written several times, blocks without writes, others at random — every check
 *    and every wallet's listing asked with `blockNumber` is the contract's eth_call at that block,
 *    with X-Indexed-Block that block; listings in the head's order (v1: by the test's model replayed
 *    up to that block).
 * 2. Batches of 1, 500 and 10,000 mixed checks: at the head while writes arrive, and at past blocks;
 *    each result is one eth_call at the one block the answer reports.
 * 3. Refusals: each answers its code (400, 413, 415, 429, 405), and the keyless budget is spent per
 *    check, all or none; CORS preflights of the batch paths, answered alike by `npm start` and
 *    `npm run serve`.
 * 4. With DATABASE_URL, an `npm run serve` replica answers batches at the head as the contract does
 *    while writes arrive, and gives every answer above the same body as `npm start` (past blocks from
 *    Postgres).
 *
 * Reproduce a failure with the seed it prints: SEED=<n> npx vitest run test/snapshots.test.ts
 */
import { LosslessNumber, stringify } from "lossless-json";
import {
  type Abi,
  type AbiFunction,
  type Address,
  encodeFunctionData,
  getAddress,
  type Hex,
  toHex,
  zeroAddress,
} from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { type Answer, type AskOptions, ask, untilIndexed } from "../devkit/ask";
import { type CompareAt, type Mismatch, type Oracle, pathAt, report } from "../devkit/compare";
import { type CheckKit, compareChecks } from "../devkit/compare-checks";
import { checkAnswer } from "../devkit/openapi-check";
import { abis, installRegistries } from "../devkit/oracle";
import { pool } from "../devkit/pool";
import { chooseSeed, Rng } from "../devkit/random";
import { chainClient, rpc, untilPast } from "../devkit/rpc";
import { type Receipt, roomyBlocks, type SendOptions, SPREAD, sendAll } from "../devkit/send";
import { type Replica, type Service, startReplica, startService } from "../devkit/service";
import { keyOf, keyString } from "../devkit/v1/calls";
import * as v1c from "../devkit/v1/checks";
import * as v1g from "../devkit/v1/generate";
import * as v2c from "../devkit/v2/checks";
import * as v2g from "../devkit/v2/generate";
import { badChecksum } from "./helpers/address-forms";
import { expectProblem } from "./helpers/answers";
import { type BatchItem, batchBody, batchHeaders, compareBatch, itemOfUrl } from "./helpers/batch";
import { compareListings, type ListingKit } from "./helpers/compare-listings";
import type { Position } from "./helpers/position";
import { type Effect, effectsOf } from "./helpers/v1/effects";
import { modelMismatches, v1Listings } from "./helpers/v1/listing";
import { Model } from "./helpers/v1/model";
import { type CompiledWallet, compileWallet, txRequest as v1TxRequest } from "./helpers/v1/wallet";
import { type ChainEvent, decodeEvents, firstEnabled } from "./helpers/v2/events";
import { v2Listings } from "./helpers/v2/listing";

const SEED = chooseSeed();
console.log(`[snapshots] SEED=${SEED} (rerun with SEED=${SEED} npx vitest run test/snapshots.test.ts)`);
const tag = (text: string) => `[SEED=${SEED}] ${text}`;

const CHAIN_ID = 31337;
/** Rounds of writes (each a v2 round, then a v1 round): half before the service starts, half live. */
const ROUNDS = 8;
const V2_TXS_PER_ROUND = 80;
const V1_TXS_PER_ROUND = 55;
/** v1 transactions per round in which a contract wallet revokes a delegate among other writes. */
const V1_WALLET_REVOKES_PER_ROUND = 5;
/** Past blocks compared (at least 20, spread over the history), and checks per version at each. */
const PAST_BLOCKS = 24;
const CHECKS_PER_BLOCK = 100;
const BATCH_SIZES = [1, 500, 10_000] as const;
const MAX_BATCH_BYTES = 4 * 1024 * 1024;
/** Each round in small batches 300 ms apart: over a few blocks, several writes in each. */
const SEND: SendOptions = { ...SPREAD, batchSize: 12, spreadMs: 300 };

const v2WriteRng = new Rng(SEED);
const v1WriteRng = new Rng(SEED ^ 0x2545f491);
const queryRng = new Rng(SEED ^ 0x5bd1e995);

type Version = "v1" | "v2";
/** A request whose answer every process must give alike (part 4). */
type Probe = { path: string; method: string; body?: string; headers: Record<string, string> };

let anvil: Anvil | undefined;
let service: Service | undefined;
let replica: Replica | undefined;
let o2: Oracle;
let o1: Oracle;
let wallet: CompiledWallet;
let walletAddresses: Address[];
let pools2: v2g.Pools;
let pools1: v1g.Pools;
let gen2: v2g.WriteGenerator;
let gen1: v1g.WriteGenerator;
/** Where each v2 delegation (by hash) was first enabled; every v2 event; every v1 write that took effect. */
const positions = new Map<Hex, Position>();
const events2: ChainEvent[] = [];
const effects1: Effect[] = [];
let lastWriteBlock = 0n;
/** The last block written before the service started: up to it, the service backfilled. */
let backfilled = 0n;
/** The wallets whose listings are compared, per version. */
let listed: Record<Version, Address[]>;
/** Every request part 4 asks a replica too. */
const probes: Probe[] = [];

/** The processes answering: `npm start`, and on Postgres the replica. */
const processes = () => [service!.url, ...(replica ? [replica.url] : [])];
const keyed = () => service!.headers;
const oracleOf = (version: Version, serviceUrl: string): Oracle => ({
  ...(version === "v2" ? o2 : o1),
  serviceUrl,
  headers: keyed(),
});

/** The v1 contract as the test's model has it at the end of `block`: the effects up to it, replayed. */
function modelAt(block: bigint): Model {
  const model = new Model(new Set(walletAddresses.map((w) => w.toLowerCase() as Address)));
  for (const e of effects1) if (e.block <= block) model.apply(e);
  return model;
}

const pendingNonce = (address: Address) =>
  chainClient(anvil!.url).getTransactionCount({ address, blockTag: "pending" });
const noteBlocks = (receipts: Receipt[]) => {
  for (const r of receipts) if (BigInt(r.blockNumber) > lastWriteBlock) lastWriteBlock = BigInt(r.blockNumber);
};

/** One round of random v2 transactions, mined; their events recorded. */
async function writeV2(n: number): Promise<void> {
  for (const sender of pools2.senders) gen2.nonces.set(sender, await pendingNonce(sender));
  const txs = Array.from({ length: n }, () => gen2.nextTx());
  const receipts = await sendAll(
    anvil!.url,
    txs.map((tx) => v2g.txRequest(o2.registry, o2.abi, tx)),
    SEED,
    SEND,
  );
  const failed = receipts.filter((r) => r.status !== "0x1").map((r) => r.transactionHash);
  expect(failed, tag("v2 transactions that reverted")).toEqual([]);
  const events = decodeEvents(o2.abi, o2.registry, receipts);
  expect(events.length, tag("one v2 event per write")).toBe(txs.reduce((k, tx) => k + tx.writes.length, 0));
  events2.push(...events);
  firstEnabled(events, positions);
  noteBlocks(receipts);
}

/** One round of random v1 transactions (some by contract wallets revoking delegates), mined; their effects recorded. */
async function writeV1(n: number, walletRevokes: number): Promise<void> {
  for (const eoa of pools1.eoas) gen1.nonces.set(eoa, await pendingNonce(eoa));
  const txs = [
    ...Array.from({ length: n }, () => gen1.nextTx()),
    ...Array.from({ length: walletRevokes }, () => gen1.walletRevokeTx()),
  ];
  const receipts = await sendAll(
    anvil!.url,
    txs.map((tx) => v1TxRequest(tx, o1.registry, o1.abi, wallet)),
    SEED,
    SEND,
  );
  const failed = receipts.filter((r) => r.status !== "0x1").map((r) => r.transactionHash);
  expect(failed, tag("v1 transactions that reverted")).toEqual([]);
  const { effects, problems } = effectsOf(o1.abi, o1.registry, txs, receipts);
  expect(problems, tag("each v1 transaction's logs are the events of its calls")).toEqual([]);
  // In chain order: effectsOf orders a round's, and a round is mined whole before the next is sent.
  effects1.push(...effects);
  noteBlocks(receipts);
}

const waitForIndexed = (base: string, block: bigint) =>
  untilIndexed({ serviceUrl: base, chainId: CHAIN_ID, headers: keyed() }, block, 240_000);

/** Random checks of a version, as the contract would be asked at `block`, and their GET URLs. */
function drawChecks(version: Version, n: number, block: bigint): { specs: unknown[]; urls: string[] } {
  if (version === "v2") {
    const specs = Array.from({ length: n }, () => v2c.randomCheck(queryRng, pools2, gen2.history));
    return { specs, urls: specs.map((s) => v2c.checkUrl(queryRng, CHAIN_ID, s)) };
  }
  const inForce = modelAt(block)
    .inForce()
    .map((d) => d.key);
  const specs = Array.from({ length: n }, () => v1c.randomCheck(queryRng, pools1, gen1.delegations, inForce));
  return { specs, urls: specs.map((s) => v1c.checkUrl(queryRng, CHAIN_ID, s)) };
}

const kitOf = (version: Version) => (version === "v2" ? v2c.v2Checks : v1c.v1Checks) as CheckKit<unknown>;

/** A path of a wallet's listing, at `block` when given. */
const listingPath = (version: Version, w: Address, block?: bigint) =>
  `/registry/${version}/${w}?chainId=${CHAIN_ID}${block === undefined ? "" : `&blockNumber=${block}`}`;

/** Whether the registry has code at the end of `block`. */
const hasCode = async (registry: Address, block: bigint) =>
  ((await rpc(anvil!.url, "eth_getCode", [registry, toHex(block)])) as Hex) !== "0x";

/** The empty registry's answer to a view, as the API writes it: the zero value of what it returns. */
function emptyAnswer(abi: Abi, functionName: string): string {
  const view = abi.find((f): f is AbiFunction => f.type === "function" && f.name === functionName);
  const type = view?.outputs[0]?.type ?? "none";
  if (type === "bool") return "false";
  if (type.startsWith("uint")) return "0";
  return type.endsWith("[]") ? "[]" : `(no empty answer for ${type})`;
}

/** The views that list a wallet's delegations, asked raw at a block where the registry has no code. */
const LISTING_VIEWS: Record<Version, string[]> = {
  v2: ["getOutgoingDelegations", "getIncomingDelegations"],
  v1: ["getDelegationsByDelegate", "getDelegatesForAll"],
};

/**
 * Answers at `block`, where the registry has no code yet: eth_call there returns no data at all,
 * and every check and listing must be the empty registry's (`false`, `0`, `[]`) at that block.
 */
async function compareEmpty(
  o: Oracle,
  version: Version,
  specs: unknown[],
  urls: string[],
  block: bigint,
): Promise<{ compared: number; mismatches: Mismatch[] }> {
  const kit = kitOf(version);
  const mismatches: Mismatch[] = [];
  const raw = (functionName: string, args: readonly unknown[]) =>
    rpc(o.rpcUrl, "eth_call", [
      { to: o.registry, data: encodeFunctionData({ abi: o.abi, functionName, args } as never) },
      toHex(block),
    ]);
  const expectEmpty = async (path: string, want: string, chainCalls: Promise<unknown>[]) => {
    const a = await ask(o.serviceUrl, path, { headers: o.headers });
    const chain = await Promise.all(chainCalls);
    const got = `${a.status} ${a.block} ${a.text.slice(0, 200)}`;
    if (got !== `200 ${block} ${want}`)
      mismatches.push({ what: `${version} before the registry`, query: path, expected: `200 ${block} ${want}`, got });
    if (chain.some((data) => data !== "0x"))
      mismatches.push({
        what: `${version} eth_call before the registry`,
        query: path,
        expected: "0x",
        got: String(chain),
      });
  };
  await Promise.all(
    specs.map((spec, i) => {
      const call = kit.call(spec);
      return expectEmpty(pathAt(urls[i]!, { block }), emptyAnswer(o.abi, call.functionName), [
        raw(call.functionName, call.args),
      ]);
    }),
  );
  for (const w of listed[version]) {
    await expectEmpty(
      listingPath(version, w, block),
      "[]",
      LISTING_VIEWS[version].map((view) => raw(view, [w])),
    );
  }
  return { compared: specs.length + listed[version].length, mismatches };
}

/** Asks `npm start`, and keeps the request for part 4. */
async function probe(path: string, options: AskOptions = {}): Promise<Answer> {
  const headers = options.headers ?? keyed();
  probes.push({ path, method: options.method ?? "GET", body: options.body, headers });
  return ask(service!.url, path, { ...options, headers });
}

/** A batch request of `body` (with a key, as JSON unless `type` says otherwise), kept for part 4. */
const postBatch = (version: Version, body: string, type: string | null = "application/json") =>
  probe(`/registry/${version}/check`, {
    method: "POST",
    body,
    headers: { ...keyed(), ...(type === null ? {} : { "Content-Type": type }) },
    timeoutMs: 120_000,
  });

/** A batch request whose body is sent in chunks of 64 KiB (a stream: Transfer-Encoding chunked, no Content-Length). */
async function postChunked(base: string, version: Version, body: string): Promise<Answer> {
  const bytes = new TextEncoder().encode(body);
  let at = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(at, at + 65_536));
      at += 65_536;
    },
  });
  const path = `/registry/${version}/check`;
  const res = await fetch(base + path, {
    method: "POST",
    body: stream,
    headers: batchHeaders(keyed()),
    duplex: "half",
  } as RequestInit);
  const answer = { path, status: res.status, headers: res.headers, text: await res.text(), block: undefined };
  // Sent past the shared client (a streamed body), so held to the document here.
  checkAnswer({ method: "POST", ...answer });
  return answer;
}

/** Valid batch items of a version (random checks at the newest state), for the refusals. */
function validItems(version: Version, n: number): BatchItem[] {
  return drawChecks(version, n, lastWriteBlock).urls.map((url) => itemOfUrl(queryRng, url));
}

beforeAll(async () => {
  anvil = await startAnvil({ chainId: CHAIN_ID, blockTime: 1 });
  await roomyBlocks(anvil.url);
  const installed = await installRegistries(anvil.url);
  const accounts = await chainClient(anvil.url).getAddresses();
  expect(accounts.length).toBeGreaterThanOrEqual(20);
  o2 = { rpcUrl: anvil.url, serviceUrl: "", registry: installed.v2, abi: abis.v2, chainId: CHAIN_ID };
  o1 = { rpcUrl: anvil.url, serviceUrl: "", registry: installed.v1, abi: abis.v1, chainId: CHAIN_ID };

  // Two contract wallets, deployed by the last account (which writes nothing else).
  wallet = compileWallet();
  const deployer = accounts[19]!;
  let nonce = await pendingNonce(deployer);
  const deployed = await sendAll(
    anvil.url,
    [0, 1].map(() => ({ from: deployer, data: wallet.bytecode, gas: 1_500_000n, nonce: nonce++ })),
    SEED,
  );
  walletAddresses = deployed.map((r) => r.contractAddress!);

  pools2 = v2g.makePools(accounts);
  pools1 = v1g.makePools(accounts, walletAddresses);
  gen2 = new v2g.WriteGenerator(v2WriteRng, pools2);
  gen1 = new v1g.WriteGenerator(v1WriteRng, pools1);
  listed = {
    v2: [
      ...new Set(
        [...pools2.senders, ...pools2.delegates, accounts[14]!, zeroAddress, v2g.ADDRESS_1, v2g.CONTRACTS[0]!].map(
          (a) => a.toLowerCase() as Address,
        ),
      ),
    ],
    v1: [
      ...new Set(
        [...pools1.eoas, ...pools1.wallets, ...pools1.delegates, accounts[15]!, v1g.CONTRACTS[0]!].map(
          (a) => a.toLowerCase() as Address,
        ),
      ),
    ],
  };
});

afterAll(async () => {
  await replica?.stop();
  await service?.stop();
  await anvil?.stop();
});

let deployedAt: Record<Version, bigint> | undefined;
/** The first block at whose end each registry has code (found by bisection of eth_getCode). */
async function deployments(): Promise<Record<Version, bigint>> {
  if (deployedAt) return deployedAt;
  const first = async (registry: Address) => {
    let [low, high] = [0n, lastWriteBlock];
    while (low < high) {
      const mid = (low + high) / 2n;
      if (await hasCode(registry, mid)) high = mid;
      else low = mid + 1n;
    }
    return low;
  };
  deployedAt = { v2: await first(o2.registry), v1: await first(o1.registry) };
  return deployedAt;
}

let chosenBlocks: Map<bigint, string> | undefined;
/**
 * The past blocks compared, each with why it was chosen (the same on every call): before each
 * registry existed and its first block, the busiest blocks, blocks where one delegation was
 * written several times, the last backfilled and the last written, blocks without writes, and
 * blocks with writes at random up to PAST_BLOCKS.
 */
async function pastBlocks(): Promise<Map<bigint, string>> {
  if (chosenBlocks) return chosenBlocks;
  const chosen = new Map<bigint, string>();
  const add = (block: bigint, why: string) => {
    if (block >= 0n) chosen.set(block, chosen.has(block) ? `${chosen.get(block)}; ${why}` : why);
  };
  const deployed = await deployments();
  const writes: Record<Version, Map<bigint, number>> = { v2: new Map(), v1: new Map() };
  for (const e of events2) writes.v2.set(e.block, (writes.v2.get(e.block) ?? 0) + 1);
  for (const e of effects1) writes.v1.set(e.block, (writes.v1.get(e.block) ?? 0) + 1);
  const same = sameDelegationBlocks();
  for (const version of ["v2", "v1"] as const) {
    add(deployed[version] - 1n, `before ${version}`);
    add(deployed[version], `${version}'s first block`);
    const busiest = [...writes[version]].sort(([, a], [, b]) => b - a).slice(0, 2);
    for (const [block, n] of busiest) add(block, `busiest ${version} (${n} writes)`);
    for (const block of queryRng.shuffle([...same[version]]).slice(0, 2))
      add(block, `a ${version} delegation written several times`);
  }
  add(backfilled, "the last backfilled write");
  add(lastWriteBlock, "the last write");
  add(lastWriteBlock + 1n, "after the last write");
  const written = new Set([...writes.v2.keys(), ...writes.v1.keys()]);
  const quiet: bigint[] = [];
  for (let b = deployed.v2 + 1n; b < lastWriteBlock; b++) if (!written.has(b)) quiet.push(b);
  for (const block of queryRng.shuffle(quiet).slice(0, 3)) add(block, "no writes");
  const others = queryRng.shuffle([...written].sort((a, b) => (a < b ? -1 : 1)));
  while (chosen.size < PAST_BLOCKS && others.length > 0) add(others.pop()!, "writes");
  chosenBlocks = chosen;
  return chosen;
}

/**
 * The indexedBlock a block_not_indexed problem names: a JSON number, at least the last write's block
 * and at most the chain's head; a batch at exactly that block is answered, at that block.
 */
async function expectIndexedBlock(indexed: unknown, version: Version, items: BatchItem[]): Promise<void> {
  expect(typeof indexed, tag("indexedBlock is a number")).toBe("number");
  const block = BigInt(indexed as number);
  const head = await chainClient(anvil!.url).getBlockNumber();
  expect(block >= lastWriteBlock && block <= head, tag(`indexedBlock ${block} in ${lastWriteBlock}..${head}`)).toBe(
    true,
  );
  const a = await postBatch(version, batchBody(queryRng, CHAIN_ID, items, block));
  expect(`${a.status} ${a.block}`, tag(`a batch at indexedBlock ${block}: ${a.text.slice(0, 200)}`)).toBe(
    `200 ${block}`,
  );
}

describe("snapshots and batch checks: answers at any block, and many checks at one block", () => {
  it(`${ROUNDS} rounds of v2 and v1 writes, half backfilled and half indexed live; batches at the head meanwhile \
equal eth_call at the block they report`, async () => {
    const t0 = Date.now();
    for (let round = 0; round < ROUNDS / 2; round++) {
      await writeV2(V2_TXS_PER_ROUND);
      await writeV1(V1_TXS_PER_ROUND, V1_WALLET_REVOKES_PER_ROUND);
    }
    backfilled = lastWriteBlock;
    service = await startService({ rpc: { [CHAIN_ID]: anvil!.url } });
    o2.serviceUrl = o1.serviceUrl = service.url;
    await waitForIndexed(service.url, backfilled);
    if (process.env.DATABASE_URL) replica = await startReplica(service, { API_WORKERS: "2" });
    console.log(
      `[snapshots] ${ROUNDS / 2} rounds written up to block ${backfilled}; service${replica ? " and replica" : ""} ` +
        `ready in ${Date.now() - t0} ms`,
    );

    // The other half while every process indexes live, and batches at the head asked meanwhile.
    let writing = true;
    const writer = (async () => {
      try {
        for (let round = ROUNDS / 2; round < ROUNDS; round++) {
          await writeV2(V2_TXS_PER_ROUND);
          await writeV1(V1_TXS_PER_ROUND, V1_WALLET_REVOKES_PER_ROUND);
        }
      } finally {
        writing = false;
      }
    })();
    const mismatches: Mismatch[] = [];
    const asked: string[] = [];
    const batchRng = new Rng(SEED ^ 0x68e31da4);
    const askHeads = async (base: string) => {
      for (let i = 0; writing || i < 2 * BATCH_SIZES.length; i++) {
        const version: Version = i % 2 === 0 ? "v2" : "v1";
        const size = BATCH_SIZES[Math.floor(i / 2) % BATCH_SIZES.length]!;
        const { specs, urls } = drawChecks(version, size, lastWriteBlock);
        const items = urls.map((url) => itemOfUrl(batchRng, url));
        const result = await compareBatch(
          oracleOf(version, base),
          kitOf(version),
          version,
          specs,
          items,
          { minBlock: backfilled },
          batchRng,
        );
        mismatches.push(...result.mismatches);
        asked.push(`${version}:${size}@${result.block}`);
      }
    };
    await Promise.all([writer, ...processes().map(askHeads)]);
    console.log(
      `[snapshots] ${ROUNDS} rounds up to block ${lastWriteBlock} in ${Date.now() - t0} ms; batches at the head ` +
        `while indexing live: ${asked.join(" ")}\n  v2 stream: ${JSON.stringify(gen2.stats)}\n  v1 stream: ` +
        `${JSON.stringify(gen1.stats)}`,
    );
    expect(mismatches.length, report(SEED, "batches at the head while indexing live", mismatches)).toBe(0);
    expect(asked.length, tag("batches asked while indexing live")).toBeGreaterThanOrEqual(6 * processes().length);

    // The streams hold every kind of write a snapshot must answer for, or the comparisons prove little.
    const s2 = gen2.stats;
    for (const name of [
      "delegateAll",
      "delegateContract",
      "delegateERC721",
      "delegateERC20",
      "delegateERC1155",
      "non-empty rights",
      "amount changes",
      "revokes by amount 0",
      "revokes of enabled",
      "re-enables of revoked",
      "multicall batches",
      "tokenId near 2^256-1",
    ]) {
      expect(s2[name] ?? 0, tag(`the v2 stream has no "${name}"`)).toBeGreaterThan(0);
    }
    const s1 = modelAt(lastWriteBlock).stats;
    for (const name of [
      "first delegations",
      "revokeAllDelegates",
      "revokeAllDelegates by a contract wallet",
      "revokeDelegate",
      "revokeDelegate by a contract wallet",
      "revokeSelf",
      "re-delegations after revokeDelegate",
      "value=false on a delegation in force",
      "delegateForAll by a contract wallet",
      "delegateForContract by a contract wallet",
      "delegateForToken by a contract wallet",
    ]) {
      expect(s1[name] ?? 0, tag(`the v1 stream has no "${name}"`)).toBeGreaterThan(0);
    }
    expect(sameDelegationBlocks().v2.length, tag("a v2 delegation written several times in one block")).toBeGreaterThan(
      0,
    );
    expect(sameDelegationBlocks().v1.length, tag("a v1 delegation written several times in one block")).toBeGreaterThan(
      0,
    );
  });

  it(`at ${PAST_BLOCKS} past blocks, every check and listing equals the contract's eth_call at that block, in the \
head's order, with X-Indexed-Block that block`, async () => {
    expect(service, tag("the first test started the service")).toBeDefined();
    for (const base of processes()) await waitForIndexed(base, lastWriteBlock + 2n);
    await untilPast(anvil!.url, lastWriteBlock + 2n);
    const t0 = Date.now();
    const chosen = await pastBlocks();
    expect(chosen.size, tag("past blocks compared")).toBeGreaterThanOrEqual(Math.max(PAST_BLOCKS, 20));
    const mismatches: Mismatch[] = [];
    const harness: Mismatch[] = [];
    let compared = 0;
    let positive = 0;
    let records = 0;
    let empty = 0;
    for (const [block, why] of [...chosen].sort(([a], [b]) => (a < b ? -1 : 1))) {
      for (const version of ["v2", "v1"] as const) {
        const o = oracleOf(version, service!.url);
        const { specs, urls } = drawChecks(version, CHECKS_PER_BLOCK, block);
        for (const url of urls) probes.push({ path: pathAt(url, { block }), method: "GET", headers: keyed() });
        for (const w of listed[version])
          probes.push({ path: listingPath(version, w, block), method: "GET", headers: keyed() });
        if (!(await hasCode(o.registry, block))) {
          const result = await compareEmpty(o, version, specs, urls, block);
          mismatches.push(...result.mismatches);
          compared += result.compared;
          empty += result.compared;
          continue;
        }
        const model = version === "v1" ? modelAt(block) : undefined;
        const kit: ListingKit = version === "v2" ? v2Listings(positions) : v1Listings(model);
        const checks = await compareChecks(o, kitOf(version), specs, urls, { block });
        const listings = await compareListings(o, kit, listed[version], { block }, queryRng);
        if (model) harness.push(...modelMismatches(model, listings.expected));
        mismatches.push(...checks.mismatches, ...listings.mismatches);
        expect(checks.compared + listings.compared, tag(`${version} answers at block ${block} (${why})`)).toBe(
          specs.length + listed[version].length,
        );
        compared += checks.compared + listings.compared;
        positive += checks.positive;
        records += listings.records;
      }
    }
    console.log(
      `[snapshots] ${compared} answers at ${chosen.size} past blocks compared in ${Date.now() - t0} ms ` +
        `(${positive} checks true/non-zero, ${records} listed records, ${empty} before a registry existed): ` +
        [...chosen]
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([b, why]) => `${b} (${why})`)
          .join(", "),
    );
    expect(mismatches.length, report(SEED, "answers at past blocks", mismatches)).toBe(0);
    expect(harness.length, report(SEED, "the test's v1 model disagrees with the contract", harness)).toBe(0);
    expect(compared, tag("answers compared")).toBeGreaterThan(5_000);
    expect(empty, tag("answers before the registries existed")).toBeGreaterThan(0);
    expect(positive, tag("true/non-zero checks among them")).toBeGreaterThan(500);
    expect(records, tag("listed records among them")).toBeGreaterThan(500);
  });

  it("batches of 1, 500 and 10,000 mixed checks at the head and at past blocks: each result one eth_call at the \
block the answer reports", async () => {
    expect(service, tag("the first test started the service")).toBeDefined();
    const t0 = Date.now();
    const deployed = await deployments();
    const both = deployed.v1 > deployed.v2 ? deployed.v1 : deployed.v2;
    const chosen = [...(await pastBlocks())].filter(([block]) => block >= both);
    const busiest = chosen.find(([, why]) => why.includes("busiest"))![0];
    const other = queryRng.pick(chosen.filter(([b]) => b !== busiest))[0];
    const mismatches: Mismatch[] = [];
    const asked: string[] = [];
    let positive = 0;
    for (const version of ["v2", "v1"] as const) {
      for (const size of BATCH_SIZES) {
        const ats: CompareAt[] = [
          { minBlock: lastWriteBlock },
          { block: busiest },
          ...(size < 10_000 ? [{ block: other }] : []),
        ];
        for (const at of ats) {
          const block = "block" in at ? at.block : lastWriteBlock;
          const { specs, urls } = drawChecks(version, size, block);
          const items = urls.map((url) => itemOfUrl(queryRng, url));
          const result = await compareBatch(
            oracleOf(version, service!.url),
            kitOf(version),
            version,
            specs,
            items,
            at,
            queryRng,
          );
          probes.push({
            path: `/registry/${version}/check`,
            method: "POST",
            body: result.body,
            headers: batchHeaders(keyed()),
          });
          expect(result.compared, tag(`${version} batch of ${size} compared`)).toBe(
            result.mismatches.length > 0 ? result.compared : size,
          );
          mismatches.push(...result.mismatches);
          positive += result.positive;
          asked.push(`${version}:${size}@${result.block}${"block" in at ? "" : " (head)"}`);
        }
      }
      // Before the registry existed: every result is the empty registry's, at that block.
      const before = deployed[version] - 1n;
      const { specs, urls } = drawChecks(version, 500, before);
      const body = batchBody(
        queryRng,
        CHAIN_ID,
        urls.map((url) => itemOfUrl(queryRng, url)),
        before,
      );
      const a = await postBatch(version, body);
      expect(`${a.status} ${a.block}`, tag(`${version} batch before the registry: ${a.text.slice(0, 300)}`)).toBe(
        `200 ${before}`,
      );
      expect(await hasCode(oracleOf(version, "").registry, before), tag(`${version} code at ${before}`)).toBe(false);
      const want = specs.map((spec) => emptyAnswer(oracleOf(version, "").abi, kitOf(version).call(spec).functionName));
      expect(a.text, tag(`${version} batch before the registry`)).toBe(`[${want.join(",")}]`);
      asked.push(`${version}:500@${before} (before the registry)`);
    }
    console.log(`[snapshots] batches compared in ${Date.now() - t0} ms: ${asked.join(" ")}`);
    expect(mismatches.length, report(SEED, "batches", mismatches)).toBe(0);
    expect(positive, tag("true/non-zero results")).toBeGreaterThan(2_000);
  });

  it("refusals: malformed JSON, a wrong content type, too many checks, too large a body, a bad item, a block not \
indexed yet — each its code", async () => {
    expect(service, tag("the first test started the service")).toBeDefined();
    const head = await chainClient(anvil!.url).getBlockNumber();
    for (const version of ["v2", "v1"] as const) {
      const good = validItems(version, 20);
      const body = (checks: unknown[], extra = "") => `{"chainId":${CHAIN_ID}${extra},"checks":${stringify(checks)}}`;

      for (const text of ["{", `{"checks":[}`, "", "nul", `{"checks":[{"type":"all"}]`, "{'checks':[]}"]) {
        expectProblem(await postBatch(version, text), 400, "invalid_body", null);
      }
      for (const text of ["[]", "{}", "null", '"checks"', `{"checks":{}}`, `{"checks":[]}`, `{"checks":"all"}`]) {
        expectProblem(await postBatch(version, text), 400, "invalid_body", null);
      }
      for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/jsonx", "text/json", null]) {
        expectProblem(await postBatch(version, body(good), type), 415, "unsupported_media_type", null);
      }

      // 10,000 checks are answered (see the batches' test); one more is too many.
      const many = validItems(version, 10_001);
      expectProblem(await postBatch(version, body(many)), 413, "content_too_large", null);
      // A body of exactly 4 MiB is answered; one byte more is too large.
      const exact = body(good).padEnd(MAX_BATCH_BYTES, " ");
      const fits = await postBatch(version, exact);
      expect(`${fits.status} ${JSON.parse(fits.text).length}`, tag(`${version} 4 MiB body`)).toBe("200 20");
      expectProblem(await postBatch(version, `${exact} `), 413, "content_too_large", null);
      // Sent in chunks, without a Content-Length: refused once past 4 MiB, on every process.
      for (const base of processes()) {
        const a = await postChunked(base, version, `${exact} `);
        expectProblem(a, 413, "content_too_large", null);
      }

      // A bad item makes the whole batch a 400 naming it.
      const parties = version === "v2" ? { to: "to", from: "from" } : { to: "delegate", from: "vault" };
      const token: Record<string, unknown> =
        version === "v2"
          ? { type: "erc721", to: listed.v2[0], from: listed.v2[1], contract: v2g.CONTRACTS[0], tokenId: "1" }
          : { type: "token", delegate: listed.v1[0], vault: listed.v1[1], contract: v1g.CONTRACTS[0], tokenId: "1" };
      const at17 = (item: unknown) => body([...good.slice(0, 17), item, ...good.slice(17, 19)]);
      const without = (name: string) => Object.fromEntries(Object.entries(token).filter(([k]) => k !== name));
      const cases: [string, unknown, string, string][] = [
        ["an address too short", { ...token, [parties.to]: "0x12" }, "invalid_parameter", `checks[17].${parties.to}`],
        [
          "a bad checksum",
          { ...token, [parties.from]: badChecksum(getAddress(token[parties.from] as Address)) },
          "invalid_parameter",
          `checks[17].${parties.from}`,
        ],
        ["no cold wallet", without(parties.from), "missing_parameter", `checks[17].${parties.from}`],
        ["no tokenId", without("tokenId"), "missing_parameter", "checks[17].tokenId"],
        ["no type", without("type"), "missing_parameter", "checks[17].type"],
        [
          "another version's type",
          { ...token, type: version === "v2" ? "token" : "erc721" },
          "invalid_parameter",
          "checks[17].type",
        ],
        ["a type that is a number", { ...token, type: 1 }, "invalid_parameter", "checks[17].type"],
        ["a string, not an object", "all", "invalid_parameter", "checks[17]"],
        ["an array, not an object", [], "invalid_parameter", "checks[17]"],
        ["null", null, "invalid_parameter", "checks[17]"],
        [
          "a fractional tokenId",
          { ...token, tokenId: new LosslessNumber("1.5") },
          "invalid_parameter",
          "checks[17].tokenId",
        ],
        [
          "a tokenId in exponent form",
          { ...token, tokenId: new LosslessNumber("1e3") },
          "invalid_parameter",
          "checks[17].tokenId",
        ],
        [
          "a tokenId of 2^256",
          { ...token, tokenId: new LosslessNumber((1n << 256n).toString()) },
          "invalid_parameter",
          "checks[17].tokenId",
        ],
        ["a negative tokenId", { ...token, tokenId: "-1" }, "invalid_parameter", "checks[17].tokenId"],
        ["a tokenId that is true", { ...token, tokenId: true }, "invalid_parameter", "checks[17].tokenId"],
        ["a contract that is an object", { ...token, contract: {} }, "invalid_parameter", "checks[17].contract"],
      ];
      if (version === "v2") {
        cases.push(
          ["two hot wallets", { ...token, delegate: listed.v2[2] }, "conflicting_parameter", "checks[17].delegate"],
          ["rights of 33 characters", { ...token, rights: "x".repeat(33) }, "invalid_parameter", "checks[17].rights"],
        );
      }
      for (const [what, item, code, param] of cases) {
        const a = await postBatch(version, at17(item));
        expect(a.status, tag(`${version} ${what}: ${a.text}`)).toBe(400);
        expectProblem(a, 400, code, param);
      }
      // Deep in a batch of 10,000.
      const deep = validItems(version, 10_000);
      deep[9_999] = { ...deep[9_999]!, [parties.to]: "0x12" };
      expectProblem(await postBatch(version, body(deep)), 400, "invalid_parameter", `checks[9999].${parties.to}`);

      // The chain and the block, as the GET checks take them.
      for (const chainId of ["1", '"1"', '"abc"', "31337.5"]) {
        expectProblem(
          await postBatch(version, `{"chainId":${chainId},"checks":${stringify(good)}}`),
          400,
          "unsupported_chain",
          "chainId",
        );
      }
      for (const block of ['"-1"', "-1", "1.5", '"0x"', '""', `"${1n << 63n}"`, "true", '"1e3"']) {
        expectProblem(
          await postBatch(version, body(good, `,"blockNumber":${block}`)),
          400,
          "invalid_parameter",
          "blockNumber",
        );
      }
      const notYet = [head + 1_000n, (1n << 63n) - 1n];
      for (const block of notYet) {
        const a = await postBatch(version, body(good, `,"blockNumber":"${block}"`));
        const problem = expectProblem(a, 400, "block_not_indexed", "blockNumber");
        await expectIndexedBlock(problem.indexedBlock, version, good);
      }
      const check = drawChecks(version, 1, lastWriteBlock).urls[0]!;
      for (const path of [check, listingPath(version, listed[version][0]!)]) {
        for (const block of notYet) {
          const a = await probe(`${path}&blockNumber=${block}`);
          expectProblem(a, 400, "block_not_indexed", "blockNumber");
        }
        // The same block in decimal and in 0x-hex is the same answer.
        const [dec, hex] = await Promise.all([
          probe(`${path}&blockNumber=${lastWriteBlock}`),
          probe(`${path}&blockNumber=0x${lastWriteBlock.toString(16)}`),
        ]);
        expect(`${hex.status} ${hex.block} ${hex.text}`, tag(`${path} at a block in hex`)).toBe(
          `200 ${lastWriteBlock} ${dec.text}`,
        );
      }
    }
  });

  it("keyless: a batch of 26 is 429 and spends nothing, a batch of 3 spends 3 (RateLimit-Remaining before and \
after), on every process", async () => {
    expect(service, tag("the first test started the service")).toBeDefined();
    for (const base of processes()) {
      // An empty window: no keyless request for 10 s (here they come only from this test).
      await new Promise((ok) => setTimeout(ok, 10_500));
      const remaining = (a: Answer) => `${a.status} ${a.headers.get("ratelimit-remaining")}`;
      const keyless = (path: string, options: AskOptions = {}) => ask(base, path, { ...options, reask: false });
      const get = () => keyless(`/registry/v2/check/all?chainId=${CHAIN_ID}&to=${zeroAddress}&from=${zeroAddress}`);
      const batch = (version: Version, n: number) =>
        keyless(`/registry/${version}/check`, {
          method: "POST",
          headers: batchHeaders(),
          body: batchBody(queryRng, CHAIN_ID, validItems(version, n)),
        });
      expect(remaining(await get()), tag(`${base}: the first keyless request`)).toBe("200 24");
      for (const version of ["v2", "v1"] as const) {
        const refused = await batch(version, 26);
        expectProblem(refused, 429, "rate_limited");
        expect(remaining(refused), tag(`${base}: a ${version} batch of 26`)).toBe("429 24");
        expect(refused.headers.get("retry-after"), tag("Retry-After")).toMatch(/^\d+$/);
        expect(JSON.parse(refused.text).detail, tag("the 429 says why")).toContain("26");
      }
      expect(remaining(await get()), tag(`${base}: the batches of 26 spent nothing`)).toBe("200 23");
      const v2Three = await batch("v2", 3);
      expect(remaining(v2Three), tag(`${base}: a v2 batch of 3 spends 3`)).toBe("200 20");
      expect(JSON.parse(v2Three.text), tag("three results")).toHaveLength(3);
      expect(remaining(await batch("v1", 3)), tag(`${base}: a v1 batch of 3 spends 3`)).toBe("200 17");
      expect(remaining(await get()), tag(`${base}: after the batches of 3`)).toBe("200 16");
    }
  });

  it("POST is 405 on every other /registry path; the batch paths take POST only; CORS preflights of the batch \
paths allow POST and Content-Type", async () => {
    expect(service, tag("the first test started the service")).toBeDefined();
    const w = listed.v2[0]!;
    const c = v2g.CONTRACTS[0]!;
    const paths = [
      ...["all", "contract", "erc721", "erc1155", "erc20"].map((k) => `/registry/v2/check/${k}`),
      ...["all", "contract", "token"].map((k) => `/registry/v1/check/${k}`),
      ...(["v2", "v1"] as const).flatMap((v) => [
        `/registry/${v}/${w}`,
        `/registry/${v}/${w}/history`,
        `/registry/${v}/history`,
        `/registry/${v}/contract/${c}`,
        `/registry/${v}/check/`,
        `/registry/${v}/check/all/extra`,
        `/registry/${v}`,
        `/registry/${v}/`,
      ]),
      "/registry/chains",
      "/registry/v3/check",
      "/registry/check",
    ];
    const bodies = {
      v2: batchBody(queryRng, CHAIN_ID, validItems("v2", 2)),
      v1: batchBody(queryRng, CHAIN_ID, validItems("v1", 2)),
    };
    const body = bodies.v2;
    for (const path of paths) {
      const a = await probe(`${path}?chainId=${CHAIN_ID}`, { method: "POST", headers: batchHeaders(keyed()), body });
      expectProblem(a, 405, "method_not_allowed");
      expect(a.headers.get("allow"), tag(`POST ${path}`)).toBe("GET, HEAD, OPTIONS");
    }
    for (const version of ["v2", "v1"] as const) {
      for (const method of ["GET", "PUT", "DELETE", "PATCH"]) {
        const a = await probe(`/registry/${version}/check?chainId=${CHAIN_ID}`, { method });
        expectProblem(a, 405, "method_not_allowed");
        expect(a.headers.get("allow"), tag(`${method} /registry/${version}/check`)).toBe("POST, OPTIONS");
      }
    }

    // Preflights: every process answers them with the app's (api/app.ts), which names what the path
    // allows; npm start too, where the API's paths go straight to the app (answerBesidePonder).
    for (const base of processes()) {
      const ponder = base === service!.url;
      for (const version of ["v2", "v1"] as const) {
        const path = `/registry/${version}/check`;
        const pre = await ask(base, path, {
          method: "OPTIONS",
          headers: {
            Origin: "https://airdrop.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type,x-api-key",
          },
          reask: false,
        });
        const h = (name: string) => pre.headers.get(name);
        const where = tag(`${ponder ? "npm start" : "npm run serve"}: preflight of ${path}`);
        expect(pre.status, where).toBe(204);
        expect(h("access-control-allow-origin"), where).toBe("*");
        expect(h("access-control-max-age"), where).toBe("86400");
        expect(h("access-control-allow-methods"), where).toBe("POST,OPTIONS");
        expect(h("access-control-allow-headers"), where).toBe("X-API-KEY,Content-Type");
        expect(h("allow"), where).toBe("POST, OPTIONS");
        // The POST that follows: readable across origins, X-Indexed-Block too.
        const post = await ask(base, path, {
          method: "POST",
          headers: { ...batchHeaders(keyed()), Origin: "https://airdrop.example" },
          body: bodies[version],
        });
        expect(post.status, where).toBe(200);
        expect(post.headers.get("access-control-allow-origin"), where).toBe("*");
        expect(post.headers.get("access-control-expose-headers")?.split(","), where).toContain("X-Indexed-Block");
      }
    }
  });

  it.runIf(process.env.DATABASE_URL)(
    "npm run serve gives every answer above the same body as npm start: past \
blocks from Postgres, batches, refusals",
    async () => {
      expect(replica, tag("the first test started a replica")).toBeDefined();
      const t0 = Date.now();
      const answer = async (base: string, p: Probe) => {
        const a = await ask(base, p.path, { method: p.method, headers: p.headers, body: p.body, timeoutMs: 120_000 });
        // A request naming its block is answered at it; at the head, the block indexed moves on (past the
        // last write nothing changes), and so does the newest indexed block a block_not_indexed names.
        const pinned = /[?&]blockNumber=/.test(p.path) || (p.body ?? "").includes('"blockNumber"');
        const block = pinned || a.block === undefined || a.block < lastWriteBlock ? String(a.block) : "head";
        const text = a.text
          .replace(/"indexedBlock":\d+/g, '"indexedBlock":…')
          .replace(/newest indexed block is \d+/g, "newest indexed block is …");
        return `${a.status} ${a.headers.get("content-type")} ${a.headers.get("allow")} ${block} ${text}`;
      };
      const differing: string[] = [];
      let same200 = 0;
      await pool(probes, 16, async (p) => {
        const [own, other] = await Promise.all([answer(service!.url, p), answer(replica!.url, p)]);
        if (own !== other)
          differing.push(
            `${p.method} ${p.path}\n  npm start: ${own.slice(0, 300)}\n  replica:   ${other.slice(0, 300)}`,
          );
        else if (own.startsWith("200 ")) same200++;
      });
      console.log(
        `[snapshots] ${probes.length} requests asked of npm start and the replica in ${Date.now() - t0} ms: ` +
          `${probes.length - differing.length} alike (${same200} of them 200s)`,
      );
      expect(differing.slice(0, 10), tag(`${differing.length} answers differ`)).toEqual([]);
      expect(same200, tag("200s compared")).toBeGreaterThan(5_000);
    },
  );
});

/** Blocks in which one delegation was written more than once, per version. */
function sameDelegationBlocks(): Record<Version, bigint[]> {
  const repeated = (keys: [string, bigint][]) => {
    const seen = new Map<string, number>();
    for (const [key, block] of keys) seen.set(`${block}|${key}`, (seen.get(`${block}|${key}`) ?? 0) + 1);
    return [...new Set([...seen].filter(([, n]) => n > 1).map(([k]) => BigInt(k.slice(0, k.indexOf("|")))))].sort(
      (a, b) => (a < b ? -1 : 1),
    );
  };
  return {
    v2: repeated(events2.map((e) => [e.hash, e.block])),
    v1: repeated(
      effects1.flatMap((e): [string, bigint][] =>
        "value" in e.call ? [[keyString(keyOf(e.actor, e.call)), e.block]] : [],
      ),
    ),
  };
}
