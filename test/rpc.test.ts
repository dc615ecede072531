/**
 * `POST /rpc/{chainId}` against the node: seeded writes of both registries (test/helpers/seeded-writes.ts)
 * on anvil, `npm start` indexing them, then batches of random JSON-RPC calls sent alike to anvil
 * and to the service, at the indexed head and at random past blocks (each named by number, so both
 * answer at the same block): every v2 check, v1 check, v2 listing and listing of hashes, spoilt
 * calldata among them. Every `result` must be byte for byte the node's, every error an error.
 *
 * Reproduce a failure with the seed it prints: SEED=<n> npx vitest run test/rpc.test.ts
 */
import { type Abi, type Address, encodeFunctionData, type Hex, toHex, zeroHash } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { indexedBlock } from "../devkit/ask";
import { abis, installRegistries } from "../devkit/oracle";
import { waitFor } from "../devkit/processes";
import { chooseSeed, Rng } from "../devkit/random";
import { type Service, startService } from "../devkit/service";
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
let registries: { v1: Address; v2: Address };
let writes: SeededWrites;
let head: bigint;

beforeAll(async () => {
  anvil = await startAnvil({ chainId: CHAIN_ID });
  registries = await installRegistries(anvil.url);
  writes = await SeededWrites.on(anvil.url, SEED, registries);
  await writes.v2(60);
  await writes.v1(40, 4);
  service = await startService({ rpc: { [CHAIN_ID]: anvil.url } });
  head = await waitFor(
    "the service to index the last write",
    async () => {
      const block = await indexedBlock({ serviceUrl: service.url, chainId: CHAIN_ID, headers: service.headers });
      return block !== undefined && block >= writes.lastWriteBlock ? block : undefined;
    },
    180_000,
  );
}, 400_000);

afterAll(async () => {
  await service?.stop();
  await anvil?.stop();
});

type Call = { jsonrpc: "2.0"; id: number; method: string; params: unknown[] };
type Answer = { id: number; result?: unknown; error?: { code: number; message: string } };

/** A random eth_call of a served view at `block`, now and then with its calldata spoilt. */
function randomCall(rng: Rng, id: number, block: bigint): Call {
  const wallets = writes.wallets();
  const v2 = rng.chance(0.7);
  const party = () => rng.pick(v2 ? wallets.v2 : wallets.v1);
  const contract = () => rng.pick(v2 ? V2_CONTRACTS : V1_CONTRACTS);
  const tokenId = () => rng.pick(v2 ? V2_TOKEN_IDS : V1_TOKEN_IDS)[1];
  const rights = () => (rng.chance(0.8) ? zeroHash : (`0x${"61".repeat(32)}` as Hex));
  const [functionName, args]: [string, unknown[]] = v2
    ? rng.pick([
        () => ["checkDelegateForAll", [party(), party(), rights()]],
        () => ["checkDelegateForContract", [party(), party(), contract(), rights()]],
        () => ["checkDelegateForERC721", [party(), party(), contract(), tokenId(), rights()]],
        () => ["checkDelegateForERC20", [party(), party(), contract(), rights()]],
        () => ["checkDelegateForERC1155", [party(), party(), contract(), tokenId(), rights()]],
        () => ["getIncomingDelegations", [party()]],
        () => ["getOutgoingDelegations", [party()]],
        () => ["getIncomingDelegationHashes", [party()]],
        () => ["getOutgoingDelegationHashes", [party()]],
      ] as (() => [string, unknown[]])[])()
    : rng.pick([
        () => ["checkDelegateForAll", [party(), party()]],
        () => ["checkDelegateForContract", [party(), party(), contract()]],
        () => ["checkDelegateForToken", [party(), party(), contract(), tokenId()]],
      ] as (() => [string, unknown[]])[])();
  let data = encodeFunctionData({ abi: abis[v2 ? "v2" : "v1"] as Abi, functionName, args });
  if (rng.chance(0.05)) data = data.slice(0, 10 + rng.int(data.length - 10)) as Hex;
  const to = registries[v2 ? "v2" : "v1"];
  return { jsonrpc: "2.0", id, method: "eth_call", params: [{ to, data }, toHex(block)] };
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
    for (let b = 0; b < BATCHES; b++) {
      const block = b % 3 === 0 ? head : 1n + BigInt(rng.int(Number(head)));
      const calls = Array.from({ length: CALLS_PER_BATCH }, (_, i) => randomCall(rng, b * CALLS_PER_BATCH + i, block));
      const [ours, node] = await Promise.all([
        post(`${service.url}/rpc/${CHAIN_ID}`, calls, service.headers),
        post(anvil.url, calls),
      ]);
      const byId = new Map(node.map((answer) => [answer.id, answer]));
      for (const answer of ours) {
        const theirs = byId.get(answer.id)!;
        const call = calls.find((c) => c.id === answer.id)!;
        const where = `block ${block} ${JSON.stringify(call.params[0])}`;
        if (theirs.error !== undefined) {
          errors++;
          if (answer.error === undefined) wrong.push(`${where}: the node errs (${theirs.error.message}), we answer`);
        } else {
          results++;
          if (answer.result !== theirs.result)
            wrong.push(`${where}: ${JSON.stringify(answer.error ?? answer.result)}, the node ${theirs.result}`);
        }
      }
      expect(ours.length, tag("one answer per call")).toBe(calls.length);
    }
    console.log(`[rpc] ${results} results and ${errors} errors compared with anvil's; ${wrong.length} wrong`);
    expect(wrong.slice(0, 10), tag(`${wrong.length} answers differ from the node's`)).toEqual([]);
    expect(results, tag("calls the node answered")).toBeGreaterThan(1000);
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
