/**
 * `POST /rpc/{chainId}` against the node: seeded writes of both registries (test/helpers/seeded-writes.ts:
 * revokes, re-enables, v1 wallet revocations through a contract wallet) on anvil, `npm start` indexing
 * them through a reorganization, then batches of random JSON-RPC calls sent alike to anvil
 * and to the service, at the indexed head and at random past blocks (each named by number, so both
 * answer at the same block): every view of both registries the route serves (checks, listings in
 * the contracts' order, hashes, getDelegationsFromHashes, supportsInterface, v2's multicall of these,
 * nested) and Multicall3's aggregates of them (deployed at its address: devkit/multicall3.ts), calldata
 * spoilt now and then as an attacker would (offsets "negative" or past the end, cut short, unknown
 * selectors). Every `result` must be byte for byte the node's, every error an error with the node's
 * revert data, and every function answered by the node at least once; on Postgres an `npm run serve`
 * replica's answers too.
 *
 * Reproduce a failure with the seed it prints: SEED=<n> npx vitest run test/rpc.test.ts
 */
import {
  type Abi,
  type Address,
  createPublicClient,
  decodeFunctionData,
  encodeFunctionData,
  type Hex,
  http,
  toHex,
  zeroHash,
} from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MULTICALL3_ADDRESS, multicall3Abi } from "../core/abi/multicall3";
import { type Anvil, revertChain, snapshotChain, startAnvil } from "../devkit/anvil";
import { indexedBlock } from "../devkit/ask";
import { installMulticall3 } from "../devkit/multicall3";
import { abis, installRegistries } from "../devkit/oracle";
import { waitFor } from "../devkit/processes";
import { chooseSeed, Rng } from "../devkit/random";
import { chainClient, rpc } from "../devkit/rpc";
import { plainOutput, type Replica, type Service, startReplica, startService } from "../devkit/service";
import { CONTRACTS as V1_CONTRACTS, TOKEN_IDS as V1_TOKEN_IDS } from "../devkit/v1/generate";
import { CONTRACTS as V2_CONTRACTS, TOKEN_IDS as V2_TOKEN_IDS } from "../devkit/v2/generate";
import { SeededWrites } from "./helpers/seeded-writes";

const SEED = chooseSeed();
console.log(`[rpc] SEED=${SEED} (rerun with SEED=${SEED} npx vitest run test/rpc.test.ts)`);
const tag = (text: string) => `[SEED=${SEED}] ${text}`;

const CHAIN_ID = 31337;
const BATCHES = 12;
const CALLS_PER_BATCH = 150;

let anvil: Anvil;
let service: Service;
/** On Postgres, an `npm run serve` replica answering from the same database. */
let replica: Replica | undefined;
let registries: { v1: Address; v2: Address };
let writes: SeededWrites;
let head: bigint;
/** The block by which both registries are deployed (Multicall3 is served from the first one's). */
let deployed: bigint;
/** Hashes of delegations the writes made (some since revoked), for getDelegationsFromHashes. */
let knownHashes: Hex[];

beforeAll(async () => {
  anvil = await startAnvil({ chainId: CHAIN_ID });
  await installMulticall3(anvil.url);
  registries = await installRegistries(anvil.url);
  deployed = await chainClient(anvil.url).getBlockNumber();
  writes = await SeededWrites.on(anvil.url, SEED, registries);
  await writes.v2(50);
  await writes.v1(30, 3);
  service = await startService({ rpc: { [CHAIN_ID]: anvil.url } });
  const untilIndexed = (block: bigint) =>
    waitFor(
      `the service to index block ${block}`,
      async () => {
        const at = await indexedBlock({ serviceUrl: service.url, chainId: CHAIN_ID, headers: service.headers });
        return at !== undefined && at >= block ? at : undefined;
      },
      180_000,
    );
  await untilIndexed(writes.lastWriteBlock);
  // A reorganization: writes on a branch the service indexes, then others on the branch that wins.
  const fork = await snapshotChain(anvil.url);
  await writes.v2(10);
  await writes.v1(8, 1);
  const tipA = await chainClient(anvil.url).getBlockNumber();
  await untilIndexed(tipA);
  await revertChain(anvil.url, fork);
  writes.forgetAfter(fork.block);
  await writes.v2(10);
  await writes.v1(8, 1);
  const now = await chainClient(anvil.url).getBlockNumber();
  if (now < tipA + 3n) await rpc(anvil.url, "anvil_mine", [toHex(tipA + 3n - now)]);
  head = await untilIndexed(await chainClient(anvil.url).getBlockNumber());
  expect(plainOutput(service), tag("the indexer saw the reorganization")).toMatch(/Reorged block/);
  if (process.env.DATABASE_URL) replica = await startReplica(service);
  const client = createPublicClient({ transport: http(anvil.url) });
  const hashesOf = (wallet: Address) =>
    client.readContract({
      address: registries.v2,
      abi: abis.v2 as Abi,
      functionName: "getOutgoingDelegationHashes",
      args: [wallet],
      blockNumber: head / 2n,
    }) as Promise<Hex[]>;
  knownHashes = (await Promise.all(writes.wallets().v2.map(hashesOf))).flat();
  expect(knownHashes.length, tag("delegations enabled half way")).toBeGreaterThan(3);
}, 400_000);

afterAll(async () => {
  await replica?.stop();
  await service?.stop();
  await anvil?.stop();
});

type Call = { jsonrpc: "2.0"; id: number; method: string; params: unknown[] };
type Answer = { id: number; result?: unknown; error?: { code: number; message: string; data?: unknown } };

type Data = { to: Address; data: Hex };
type Pick = () => [string, unknown[]];

/** Interface ids to ask supportsInterface about: each registry's own, ERC-165's, and others. */
const INTERFACE_IDS = ["0x01ffc9a7", "0x5f68bc5a", "0x0596d3d5", "0xffffffff", "0x00000000", "0x12345678"] as const;

/** Calldata of a random registry view (v2's `multicall` of such calls too, `depth` deep at most). */
function randomRegistryCall(rng: Rng, depth = 1): Data {
  const wallets = writes.wallets();
  const v2 = rng.chance(0.7);
  const party = () => rng.pick(v2 ? wallets.v2 : wallets.v1);
  const contract = () => rng.pick(v2 ? V2_CONTRACTS : V1_CONTRACTS);
  const tokenId = () => rng.pick(v2 ? V2_TOKEN_IDS : V1_TOKEN_IDS)[1];
  const rights = () => (rng.chance(0.8) ? zeroHash : (`0x${"61".repeat(32)}` as Hex));
  const hash = () => (rng.chance(0.8) ? rng.pick(knownHashes) : (toHex(rng.bigint(256), { size: 32 }) as Hex));
  const interfaceId = () => (rng.chance(0.8) ? rng.pick(INTERFACE_IDS) : toHex(rng.bigint(32), { size: 4 }));
  const [functionName, args] = rng.pick<Pick>(
    v2
      ? [
          () => ["checkDelegateForAll", [party(), party(), rights()]],
          () => ["checkDelegateForContract", [party(), party(), contract(), rights()]],
          () => ["checkDelegateForERC721", [party(), party(), contract(), tokenId(), rights()]],
          () => ["checkDelegateForERC20", [party(), party(), contract(), rights()]],
          () => ["checkDelegateForERC1155", [party(), party(), contract(), tokenId(), rights()]],
          () => ["getIncomingDelegations", [party()]],
          () => ["getOutgoingDelegations", [party()]],
          () => ["getIncomingDelegationHashes", [party()]],
          () => ["getOutgoingDelegationHashes", [party()]],
          () => ["getDelegationsFromHashes", [Array.from({ length: rng.int(4) }, hash)]],
          () => ["supportsInterface", [interfaceId()]],
          () => ["multicall", [Array.from({ length: depth > 0 ? rng.int(5) : 0 }, () => innerV2(rng, depth - 1))]],
        ]
      : [
          () => ["checkDelegateForAll", [party(), party()]],
          () => ["checkDelegateForContract", [party(), party(), contract()]],
          () => ["checkDelegateForToken", [party(), party(), contract(), tokenId()]],
          () => ["getDelegatesForAll", [party()]],
          () => ["getDelegatesForContract", [party(), contract()]],
          () => ["getDelegatesForToken", [party(), contract(), tokenId()]],
          () => ["getContractLevelDelegations", [party()]],
          () => ["getTokenLevelDelegations", [party()]],
          () => ["getDelegationsByDelegate", [party()]],
          () => ["supportsInterface", [interfaceId()]],
        ],
  )();
  const data = encodeFunctionData({ abi: abis[v2 ? "v2" : "v1"] as Abi, functionName, args });
  randomNames.push(`${v2 ? "v2" : "v1"} ${functionName}`);
  return { to: registries[v2 ? "v2" : "v1"], data: spoilt(rng, data) };
}

/** Calldata of a v2 call for v2's `multicall`: a v1 call's there names no v2 function. */
function innerV2(rng: Rng, depth: number): Hex {
  for (;;) {
    const call = randomRegistryCall(rng, depth);
    if (call.to === registries.v2 || rng.chance(0.1)) return call.data;
  }
}

/** Calldata spoilt (as hex without 0x): a call holding any is spoilt too. */
const spoiltParts = new Set<string>();
const isSpoilt = (data: Hex) => [...spoiltParts].some((part) => data.includes(part));

/**
 * `data`, now and then spoilt as a client or an attacker might: cut short, a selector no function
 * has, or one word of its arguments replaced (an offset or length pointing elsewhere, past the end,
 * "negative", or a value past its type's range).
 */
function spoilt(rng: Rng, data: Hex): Hex {
  const spoilt = spoil(rng, data);
  if (spoilt !== data) spoiltParts.add(spoilt.slice(2));
  return spoilt;
}

function spoil(rng: Rng, data: Hex): Hex {
  if (!rng.chance(0.12)) return data;
  const words = (data.length - 10) / 64;
  const roll = rng.int(4);
  if (roll === 0) return data.slice(0, 10 + rng.int(data.length - 10)) as Hex;
  if (roll === 1 || words === 0) return `0x${toHex(rng.bigint(32), { size: 4 }).slice(2)}${data.slice(10)}`;
  const at = 10 + 64 * rng.int(words);
  const value = rng.pick([
    0n,
    1n,
    32n,
    BigInt(rng.int(512)),
    1n << 64n,
    1n << 160n,
    (1n << 256n) - BigInt(1 + rng.int(256)),
    (1n << 255n) + BigInt(rng.int(256)),
  ]);
  return `${data.slice(0, at)}${value.toString(16).padStart(64, "0")}${data.slice(at + 64)}` as Hex;
}

/** Every function the calls name, as "<to's name> <function>". */
const randomNames: string[] = [];

/** The function `call` names, as "<to's name> <function>". */
function functionOf(call: Data): string {
  if (call.to === MULTICALL3_ADDRESS)
    try {
      return `multicall3 ${decodeFunctionData({ abi: multicall3Abi, data: call.data }).functionName}`;
    } catch {
      return "multicall3 (spoilt)";
    }
  const version = call.to === registries.v2 ? "v2" : "v1";
  try {
    return `${version} ${decodeFunctionData({ abi: abis[version] as Abi, data: call.data }).functionName}`;
  } catch {
    return `${version} (spoilt)`;
  }
}

/** Calldata of a random Multicall3 call of registry calls (now and then of Multicall3 calls too). */
function randomMulticall3(rng: Rng, depth = 1): Data {
  const inner = () => {
    const call = depth > 0 && rng.chance(0.1) ? randomMulticall3(rng, depth - 1) : randomRegistryCall(rng, 1);
    return { target: call.to, callData: call.data, allowFailure: rng.chance(0.5) };
  };
  const calls = () => Array.from({ length: rng.int(6) }, inner);
  const plain = () => calls().map(({ target, callData }) => ({ target, callData }));
  const [functionName, args] = rng.pick<Pick>([
    () => ["aggregate", [plain()]],
    () => ["aggregate3", [calls()]],
    () => ["tryAggregate", [rng.chance(0.5), plain()]],
    () => ["tryBlockAndAggregate", [rng.chance(0.5), plain()]],
    () => ["blockAndAggregate", [plain()]],
    () => ["getBlockNumber", []],
    () => ["getChainId", []],
  ])();
  randomNames.push(`multicall3 ${functionName}`);
  return {
    to: MULTICALL3_ADDRESS,
    data: spoilt(rng, encodeFunctionData({ abi: multicall3Abi, functionName, args } as never)),
  };
}

/** A random eth_call at `block`: to a registry, or (once both are deployed) to Multicall3. */
function randomCall(rng: Rng, id: number, block: bigint): Call {
  const call = block >= deployed && rng.chance(0.25) ? randomMulticall3(rng) : randomRegistryCall(rng, 2);
  return { jsonrpc: "2.0", id, method: "eth_call", params: [call, toHex(block)] };
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer[]> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  expect(res.status, tag(`${url}: ${res.status}`)).toBe(200);
  return (await res.json()) as Answer[];
}

describe("POST /rpc/{chainId}", () => {
  it("answers random eth_calls of every served view exactly as the node, at the head and at past blocks", async () => {
    const rng = new Rng(SEED);
    const wrong: string[] = [];
    let results = 0;
    let errors = 0;
    const answered = new Map<string, number>();
    let notServed = 0;
    for (let b = 0; b < BATCHES; b++) {
      const block = b % 3 === 0 ? head : 1n + BigInt(rng.int(Number(head)));
      const calls = Array.from({ length: CALLS_PER_BATCH }, (_, i) => randomCall(rng, b * CALLS_PER_BATCH + i, block));
      const processes = [service, ...(replica ? [replica] : [])];
      const [node, ...answers] = await Promise.all([
        post(anvil.url, calls),
        ...processes.map((p) => post(`${p.url}/rpc/${CHAIN_ID}`, calls, service.headers)),
      ]);
      const byId = new Map(node!.map((answer) => [answer.id, answer]));
      for (const ours of answers) expect(ours.length, tag("one answer per call")).toBe(calls.length);
      for (const answer of answers.flat()) {
        const theirs = byId.get(answer.id)!;
        const call = calls.find((c) => c.id === answer.id)!;
        const where = `block ${block} ${JSON.stringify(call.params[0])}`;
        if (answer.error?.message.startsWith("not served") && isSpoilt((call.params[0] as Data).data)) {
          // Spoilt calldata may call an address nothing here answers for (the node runs it).
          notServed++;
        } else if (theirs.error !== undefined) {
          errors++;
          if (answer.error === undefined) wrong.push(`${where}: the node errs (${theirs.error.message}), we answer`);
          // A revert's data is the node's too (MulticallFailed, Multicall3's reasons).
          else if (theirs.error.data !== undefined && answer.error.data !== theirs.error.data)
            wrong.push(
              `${where}: ${answer.error.message} (${answer.error.data}), the node reverts with ${theirs.error.data}`,
            );
        } else {
          results++;
          const name = functionOf(call.params[0] as Data);
          answered.set(name, (answered.get(name) ?? 0) + 1);
          if (answer.result !== theirs.result)
            wrong.push(`${where}: ${JSON.stringify(answer.error ?? answer.result)}, the node ${theirs.result}`);
        }
      }
    }
    console.log(
      `[rpc] ${results} results and ${errors} errors compared with anvil's, ` +
        `${notServed} spoilt calls not served; ${wrong.length} wrong`,
    );
    expect(wrong.slice(0, 10), tag(`${wrong.length} answers differ from the node's`)).toEqual([]);
    expect(results, tag("calls the node answered")).toBeGreaterThan(1000);
    console.log(`[rpc] answered by function: ${JSON.stringify(Object.fromEntries(answered))}`);
    const served = [...new Set(randomNames)];
    expect(
      served.filter((name) => !answered.has(name)),
      tag("functions the node never answered"),
    ).toEqual([]);
  }, 300_000);

  it("answers eth_chainId, net_version and eth_blockNumber; refuses what it does not serve, HTTP 200", async () => {
    const calls = [
      { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] },
      { jsonrpc: "2.0", id: 2, method: "net_version", params: [] },
      { jsonrpc: "2.0", id: 3, method: "eth_blockNumber", params: [] },
      { jsonrpc: "2.0", id: 4, method: "eth_getBalance", params: [registries.v2, "latest"] },
      { jsonrpc: "2.0", id: 5, method: "eth_call", params: [{ to: registries.v1, data: "0x" }] },
      { jsonrpc: "2.0", id: 6, method: "eth_call", params: [{ to: registries.v2, data: "0x" }, toHex(head + 1000n)] },
    ];
    const answers = await post(`${service.url}/rpc/${CHAIN_ID}`, calls, service.headers);
    expect(answers[0]).toMatchObject({ id: 1, result: toHex(CHAIN_ID) });
    expect(answers[1]).toMatchObject({ id: 2, result: String(CHAIN_ID) });
    expect(BigInt(answers[2]!.result as string)).toBeGreaterThanOrEqual(head);
    expect(answers[3]).toMatchObject({ id: 4, error: { code: -32601 } });
    expect(answers[4]).toMatchObject({ id: 5, error: { code: 3 } });
    expect(answers[5]).toMatchObject({ id: 6, error: { code: -32000, message: "header not found" } });
  });
});
