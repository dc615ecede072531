/**
 * Strict chain isolation: one service indexes two chains at once — anvil as 31337 and as
 * 11155111 (sepolia) — each with both real registries and its own seeded random delegations (the
 * same funded accounts on both, so the same wallets delegate on both chains, to different
 * delegates). Every answer for a chain must be what THAT chain's contract answers (eth_call at the
 * answer's X-Indexed-Block), for thousands of checks asked alike of both chains and every wallet's
 * listing; a delegation made on one chain only is true there and false/0/[] on the other; and the
 * chain parameter is strict.
 *
 * Reproduce a failure with the seed it prints: SEED=<n> npx vitest run test/multichain.test.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Address, encodeFunctionData, getAddress, type Hex, maxUint256, toHex, zeroHash } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { type Answer, ask, indexedBlock } from "../devkit/ask";
import { type Mismatch, type Oracle, report } from "../devkit/compare";
import { compareChecks } from "../devkit/compare-checks";
import { abis, addresses, installRegistries } from "../devkit/oracle";
import { waitFor } from "../devkit/processes";
import { chooseSeed, Rng } from "../devkit/random";
import { callView, chainClient, ethCalls, rpc } from "../devkit/rpc";
import { type Receipt, roomyBlocks, SPREAD, sendAll, sendTx } from "../devkit/send";
import { type Service, startService } from "../devkit/service";
import type { Key } from "../devkit/v1/calls";
import {
  checkCall as v1CheckCall,
  v1Checks,
  checkUrl as v1CheckUrl,
  randomCheck as v1RandomCheck,
} from "../devkit/v1/checks";
import { makePools as makeV1Pools, WriteGenerator as V1Generator, type Pools as V1Pools } from "../devkit/v1/generate";
import {
  checkCall as v2CheckCall,
  v2Checks,
  checkUrl as v2CheckUrl,
  randomCheck as v2RandomCheck,
} from "../devkit/v2/checks";
import {
  ADDRESS_1,
  makePools as makeV2Pools,
  CONTRACTS as V2_CONTRACTS,
  WriteGenerator as V2Generator,
  type Pools as V2Pools,
  txRequest as v2TxRequest,
} from "../devkit/v2/generate";
import { compareListings } from "./helpers/compare-listings";
import { parseJsonExact } from "./helpers/json";
import type { ListedChain } from "./helpers/listed-chain";
import type { Position } from "./helpers/position";
import { effectsOf } from "./helpers/v1/effects";
import { v1Listings } from "./helpers/v1/listing";
import { Model } from "./helpers/v1/model";
import { type CompiledWallet, compileWallet, txRequest as v1TxRequest } from "./helpers/v1/wallet";
import { decodeEvents, firstEnabled } from "./helpers/v2/events";
import { v2Listings } from "./helpers/v2/listing";

const SEED = chooseSeed();
console.log(`[multichain] SEED=${SEED} (rerun with SEED=${SEED} npx vitest run test/multichain.test.ts)`);
const tag = (text: string) => `[SEED=${SEED}] ${text}`;

const A_ID = 31337;
const B_ID = 11155111;
const V1 = getAddress(addresses.v1.address);
const V2 = getAddress(addresses.v2.address);
const TOKEN = getAddress("0x6B175474E89094C44Da98b954EedeAC495271d0F");
/** Random transactions per chain and registry, and checks per chain (the same specs on both chains). */
const V2_TXS = 400;
const V1_TXS = 300;
const V2_CHECKS = 2000;
const V1_CHECKS = 1200;
/** Chain B runs this many blocks ahead, so that a block number of one chain is no block of the other. */
const B_HEAD_START = 400;

type Run = {
  id: number;
  anvil: Anvil;
  accounts: Address[];
  v2: { oracle: Oracle; pools: V2Pools; generator: V2Generator; positions: Map<Hex, Position>; writes: number };
  v1: {
    oracle: Oracle;
    pools: V1Pools;
    generator: V1Generator;
    wallets: Address[];
    writes: number;
    /** The random writes' delegations in force at the end, so that the checks ask about them often. */
    inForce: Key[];
  };
  lastWrite: bigint;
};

let wallet: CompiledWallet;
let runs: Run[] = [];
let service: Service | undefined;
let dir: string;
const run = (id: number) => runs.find((r) => r.id === id)!;
/** A request to the service, with its access headers. */
const get = (path: string) => ask(service!.url, path, { headers: service!.headers });

/** The wallets of the explicit one-chain delegations: accounts no random write uses. */
const who = (accounts: Address[]) => ({ P: accounts[16]!, Q: accounts[17]!, R: accounts[15]!, S: accounts[18]! });

const headOf = (r: Run) => chainClient(r.anvil.url).getBlockNumber();

/** Sets up one chain: registries, contract wallets, random v2 and v1 writes, and the explicit ones. */
async function prepare(id: number): Promise<Run> {
  const anvil = await startAnvil({ chainId: id });
  if (id === B_ID) await rpc(anvil.url, "anvil_mine", [toHex(B_HEAD_START)]);
  await roomyBlocks(anvil.url);
  await installRegistries(anvil.url);
  const accounts = await chainClient(anvil.url).getAddresses();
  expect(accounts.length, tag(`chain ${id}: funded accounts`)).toBeGreaterThanOrEqual(20);
  const pending = (a: Address) => chainClient(anvil.url).getTransactionCount({ address: a, blockTag: "pending" });
  const salt = id === A_ID ? 0 : 0x6a09e667;
  let lastWrite = 0n;
  const seen = (block: bigint | string) => {
    if (BigInt(block) > lastWrite) lastWrite = BigInt(block);
  };

  // Two forwarding wallets (v1's contract-wallet routes), by the last account.
  const deployer = accounts[19]!;
  const nonce = await pending(deployer);
  const deployed = await sendAll(
    anvil.url,
    [0, 1].map((k) => ({ from: deployer, data: wallet.bytecode, gas: 1_500_000n, nonce: nonce + k })),
    SEED,
  );
  const wallets = deployed.map((r) => {
    expect(r.status, tag(`chain ${id}: wallet deployment`)).toBe("0x1");
    return getAddress(r.contractAddress!);
  });

  // v2: seeded random writes.
  const v2Pools = makeV2Pools(accounts);
  const v2Generator = new V2Generator(new Rng((SEED ^ salt) >>> 0), v2Pools);
  for (const s of v2Pools.senders) v2Generator.nonces.set(s, await pending(s));
  const v2Txs = Array.from({ length: V2_TXS }, () => v2Generator.nextTx());
  const v2Receipts = await sendAll(
    anvil.url,
    v2Txs.map((tx) => v2TxRequest(V2, abis.v2, tx)),
    SEED,
    SPREAD,
  );
  const v2Failed = v2Receipts.filter((r) => r.status !== "0x1").map((r) => r.transactionHash);
  expect(v2Failed, tag(`chain ${id}: v2 transactions that reverted`)).toEqual([]);
  const events = decodeEvents(abis.v2, V2, v2Receipts);
  expect(events.length, tag(`chain ${id}: one v2 event per write`)).toBe(
    v2Txs.reduce((n, tx) => n + tx.writes.length, 0),
  );
  const positions = firstEnabled(events);
  for (const r of v2Receipts) seen(r.blockNumber);

  // v1: seeded random writes, direct and through the wallets.
  const v1Pools = makeV1Pools(accounts, wallets);
  const v1Generator = new V1Generator(new Rng((SEED ^ salt ^ 0x5be0cd19) >>> 0), v1Pools);
  for (const e of v1Pools.eoas) v1Generator.nonces.set(e, await pending(e));
  const v1Txs = Array.from({ length: V1_TXS }, () => v1Generator.nextTx());
  const v1Receipts = await sendAll(
    anvil.url,
    v1Txs.map((tx) => v1TxRequest(tx, V1, abis.v1, wallet)),
    SEED,
  );
  const v1Failed = v1Receipts.filter((r) => r.status !== "0x1").map((r) => r.transactionHash);
  expect(v1Failed, tag(`chain ${id}: v1 transactions that reverted`)).toEqual([]);
  const { effects, problems } = effectsOf(abis.v1, V1, v1Txs, v1Receipts);
  expect(problems, tag(`chain ${id}: v1 logs are the events of the calls`)).toEqual([]);
  const v1Model = new Model(new Set(wallets.map((w) => w.toLowerCase() as Address)));
  for (const e of effects) v1Model.apply(e);
  for (const r of v1Receipts) seen(r.blockNumber);

  // Explicit delegations on one chain only: P → Q and P → S (ERC20) on B, P → R on A.
  const { P, Q, R, S } = who(accounts);
  const explicit: [string, readonly unknown[], "v1" | "v2"][] =
    id === B_ID
      ? [
          ["delegateAll", [Q, zeroHash, true], "v2"],
          ["delegateERC20", [S, TOKEN, zeroHash, 1234n], "v2"],
          ["delegateForAll", [Q, true], "v1"],
        ]
      : [
          ["delegateAll", [R, zeroHash, true], "v2"],
          ["delegateForAll", [R, true], "v1"],
        ];
  for (const [fn, args, version] of explicit) {
    const registry = version === "v1" ? V1 : V2;
    const { block, hash } = await sendTx(
      anvil.url,
      P,
      registry,
      encodeFunctionData({ abi: abis[version], functionName: fn, args } as never),
    );
    seen(block);
    const receipt = (await rpc(anvil.url, "eth_getTransactionReceipt", [hash])) as Receipt;
    if (version === "v2") firstEnabled(decodeEvents(abis.v2, V2, [receipt]), positions);
  }

  return {
    id,
    anvil,
    accounts,
    v2: {
      oracle: { rpcUrl: anvil.url, serviceUrl: "", registry: V2, abi: abis.v2, chainId: id },
      pools: v2Pools,
      generator: v2Generator,
      positions,
      writes: events.length,
    },
    v1: {
      oracle: { rpcUrl: anvil.url, serviceUrl: "", registry: V1, abi: abis.v1, chainId: id },
      pools: v1Pools,
      generator: v1Generator,
      wallets,
      writes: effects.length,
      inForce: v1Model.inForce().map((d) => d.key),
    },
    lastWrite,
  };
}

async function waitForIndexed(r: Run) {
  await waitFor(
    `chain ${r.id} indexed to block ${r.lastWrite}`,
    async () => {
      const block = await indexedBlock({ serviceUrl: service!.url, chainId: r.id, headers: service!.headers });
      return block !== undefined && block >= r.lastWrite ? block : undefined;
    },
    180_000,
  );
}

beforeAll(async () => {
  wallet = compileWallet();
  dir = mkdtempSync(join(tmpdir(), "multichain-test-"));
  const t0 = Date.now();
  const settled = await Promise.allSettled([prepare(A_ID), prepare(B_ID)]);
  runs = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const failed = settled.find((s) => s.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
  for (const r of runs) {
    console.log(
      `[multichain] chain ${r.id}: ${r.v2.writes} v2 writes, ${r.v1.writes} v1 writes, last in block ${r.lastWrite}`,
    );
  }
  console.log(`[multichain] both chains written in ${Date.now() - t0} ms`);
  // The same accounts and contract wallets on both chains: the same checks mean the same parties.
  expect(run(A_ID).accounts, tag("accounts")).toEqual(run(B_ID).accounts);
  expect(run(A_ID).v1.wallets, tag("contract wallets")).toEqual(run(B_ID).v1.wallets);

  const t1 = Date.now();
  service = await startService({
    rpc: { [A_ID]: run(A_ID).anvil.url, [B_ID]: run(B_ID).anvil.url },
    env: { START_BLOCKS_FILE: join(dir, "start-blocks.json") },
  });
  for (const r of runs) {
    for (const o of [r.v2.oracle, r.v1.oracle]) {
      o.serviceUrl = service.url;
      o.headers = service.headers;
    }
  }
  await Promise.all(runs.map(waitForIndexed));
  console.log(`[multichain] service ready, both chains indexed, in ${Date.now() - t1} ms`);
});

afterAll(async () => {
  await service?.stop();
  await Promise.all(runs.map((r) => r.anvil.stop()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------

describe("two chains in one service: every answer is the asked chain's contract's", () => {
  it("the write streams overlap across chains: same wallets, different delegates; delegations on one chain \
only", async () => {
    const [a, b] = [run(A_ID), run(B_ID)];
    const senders = a.v2.pools.senders;
    const outgoing = async (r: Run) =>
      (await ethCalls(
        r.v2.oracle,
        senders.map((s) => ({ functionName: "getOutgoingDelegationHashes", args: [s], block: r.lastWrite })),
      )) as Hex[][];
    const [outA, outB] = await Promise.all([outgoing(a), outgoing(b)]);
    const onA = new Set(outA.flat());
    const onB = new Set(outB.flat());
    const both = senders.filter((_, i) => outA[i]!.length > 0 && outB[i]!.length > 0);
    const differ = both.filter((s) => {
      const i = senders.indexOf(s);
      return outA[i]!.join() !== outB[i]!.join();
    });
    const onlyA = [...onA].filter((h) => !onB.has(h)).length;
    const onlyB = [...onB].filter((h) => !onA.has(h)).length;
    const shared = [...onA].filter((h) => onB.has(h)).length;
    console.log(
      `[multichain] v2 delegations in force: ${onA.size} on ${A_ID}, ${onB.size} on ${B_ID}, ${shared} on both, ` +
        `${onlyA} only on ${A_ID}, ${onlyB} only on ${B_ID}; ${both.length} wallets delegate on both chains, ` +
        `${differ.length} of them differently`,
    );
    expect(differ.length, tag("wallets delegating on both chains, to different delegates")).toBeGreaterThan(0);
    expect(onlyA, tag(`delegations only on ${A_ID}`)).toBeGreaterThan(0);
    expect(onlyB, tag(`delegations only on ${B_ID}`)).toBeGreaterThan(0);
  });

  it(`${V2_CHECKS} v2 checks (all five kinds) and every v2 \
listing per chain, the same checks asked of both chains`, async () => {
    const t0 = Date.now();
    const queryRng = new Rng((SEED ^ 0x5bd1e995) >>> 0);
    const history = [...run(A_ID).v2.generator.history, ...run(B_ID).v2.generator.history];
    const specs = Array.from({ length: V2_CHECKS }, () => v2RandomCheck(queryRng, run(A_ID).v2.pools, history));
    const mismatches: Mismatch[] = [];
    const counts: [string, number, number][] = [];
    const positives: [string, number, number][] = [];
    const answersByChain = new Map<number, unknown[]>();
    for (const r of runs) {
      const urls = specs.map((s) => v2CheckUrl(queryRng, r.id, s));
      const checks = await compareChecks(r.v2.oracle, v2Checks, specs, urls, { minBlock: r.lastWrite });
      counts.push([`chain ${r.id}: v2 checks compared`, checks.compared, V2_CHECKS]);
      counts.push([`chain ${r.id}: v2 listings compared`, 0, 0]);
      positives.push([`chain ${r.id}: share of true/non-zero v2 answers`, checks.positive, V2_CHECKS * 0.1]);
      mismatches.push(...checks.mismatches.map((m) => ({ ...m, what: `chain ${r.id}: ${m.what}` })));
      answersByChain.set(
        r.id,
        await ethCalls(
          r.v2.oracle,
          specs.map((s) => ({ ...v2CheckCall(s), block: r.lastWrite })),
        ),
      );

      const wallets = listedV2(r);
      const listings = await compareListings(
        r.v2.oracle,
        v2Listings(r.v2.positions),
        wallets,
        { minBlock: r.lastWrite },
        queryRng,
      );
      counts[counts.length - 1] = [`chain ${r.id}: v2 listings compared`, listings.compared, wallets.length];
      mismatches.push(...listings.mismatches.map((m) => ({ ...m, what: `chain ${r.id}: ${m.what}` })));
      console.log(
        `[multichain] chain ${r.id}: ${checks.compared} v2 checks (${checks.positive} true/non-zero), ` +
          `${listings.compared} v2 listings (${listings.records} records)`,
      );
    }
    // The checks tell the chains apart: a service answering from the other chain would fail these.
    const [ansA, ansB] = [answersByChain.get(A_ID)!, answersByChain.get(B_ID)!];
    const telling = specs.filter((_, i) => ansA[i] !== ansB[i]).length;
    console.log(
      `[multichain] v2: ${telling} of ${V2_CHECKS} checks answer differently on the two chains; ${Date.now() - t0} ms`,
    );
    expect(mismatches.length, report(SEED, "v2 on two chains", mismatches)).toBe(0);
    for (const [what, got, want] of counts) expect(got, tag(what)).toBe(want);
    for (const [what, got, least] of positives) expect(got, tag(what)).toBeGreaterThan(least);
    expect(telling, tag("v2 checks whose answer differs between the chains")).toBeGreaterThan(V2_CHECKS * 0.05);
  });

  it(`${V1_CHECKS} v1 checks (all three kinds) and every v1 listing per chain, the same checks asked of both \
chains`, async () => {
    const t0 = Date.now();
    const queryRng = new Rng((SEED ^ 0x1f83d9ab) >>> 0);
    const delegations = [...run(A_ID).v1.generator.delegations, ...run(B_ID).v1.generator.delegations];
    const inForce = [...run(A_ID).v1.inForce, ...run(B_ID).v1.inForce];
    const specs = Array.from({ length: V1_CHECKS }, () =>
      v1RandomCheck(queryRng, run(A_ID).v1.pools, delegations, inForce),
    );
    const mismatches: Mismatch[] = [];
    const answersByChain = new Map<number, unknown[]>();
    const setsByChain = new Map<number, Map<string, Set<string>>>();
    const counts: [string, number, number][] = [];
    const positives: [string, number, number][] = [];
    for (const r of runs) {
      const urls = specs.map((s) => v1CheckUrl(queryRng, r.id, s));
      const checks = await compareChecks(r.v1.oracle, v1Checks, specs, urls, { minBlock: r.lastWrite });
      counts.push([`chain ${r.id}: v1 checks compared`, checks.compared, V1_CHECKS]);
      positives.push([`chain ${r.id}: share of true v1 answers`, checks.positive, V1_CHECKS * 0.07]);
      mismatches.push(...checks.mismatches.map((m) => ({ ...m, what: `chain ${r.id}: ${m.what}` })));
      answersByChain.set(
        r.id,
        await ethCalls(
          r.v1.oracle,
          specs.map((s) => ({ ...v1CheckCall(s), block: r.lastWrite })),
        ),
      );
      const wallets = listedV1(r);
      const listings = await compareListings(r.v1.oracle, v1Listings(), wallets, { minBlock: r.lastWrite });
      mismatches.push(...listings.mismatches.map((m) => ({ ...m, what: `chain ${r.id}: ${m.what}` })));
      setsByChain.set(r.id, listings.expected);
      counts.push([`chain ${r.id}: v1 listings compared`, listings.compared, wallets.length]);
      console.log(
        `[multichain] chain ${r.id}: ${checks.compared} v1 checks (${checks.positive} true), ${listings.compared} v1 ` +
          `listings (${listings.records} records)`,
      );
    }
    const [ansA, ansB] = [answersByChain.get(A_ID)!, answersByChain.get(B_ID)!];
    const telling = specs.filter((_, i) => ansA[i] !== ansB[i]).length;
    const [setsA, setsB] = [setsByChain.get(A_ID)!, setsByChain.get(B_ID)!];
    const differing = [...setsA.keys()].filter(
      (w) =>
        setsA.get(w)!.size > 0 &&
        setsB.get(w)?.size &&
        [...setsA.get(w)!].sort().join() !== [...setsB.get(w)!].sort().join(),
    );
    console.log(
      `[multichain] v1: ${telling} of ${V1_CHECKS} checks answer differently on the two chains; ${differing.length} ` +
        `wallets listed on both chains with different delegations; ${Date.now() - t0} ms`,
    );
    expect(mismatches.length, report(SEED, "v1 on two chains", mismatches)).toBe(0);
    for (const [what, got, want] of counts) expect(got, tag(what)).toBe(want);
    for (const [what, got, least] of positives) expect(got, tag(what)).toBeGreaterThan(least);
    expect(telling, tag("v1 checks whose answer differs between the chains")).toBeGreaterThan(V1_CHECKS * 0.05);
    expect(differing.length, tag("v1 wallets with different delegations on the two chains")).toBeGreaterThan(0);
  });

  it("a delegation made on one chain only: true/amount/listed there; false/0/[] on the other", async () => {
    const { P, Q, R, S } = who(run(A_ID).accounts);
    const askChain = async (chainId: number, path: string): Promise<Answer> => {
      const a = await get(`${path}${path.includes("?") ? "&" : "?"}chainId=${chainId}`);
      expect(a.status, tag(`${a.path}: ${a.text}`)).toBe(200);
      const block = a.block;
      const r = run(chainId);
      expect(
        block !== undefined && block >= r.lastWrite && block <= (await headOf(r)),
        tag(`${a.path}: X-Indexed-Block ${block} of chain ${chainId}`),
      ).toBe(true);
      return a;
    };
    const expectBody = async (chainId: number, path: string, body: string) => {
      const a = await askChain(chainId, path);
      expect(a.text, tag(`chain ${chainId}: ${a.path}`)).toBe(body);
    };
    // P → Q: only on B.
    await expectBody(A_ID, `/registry/v2/check/all?to=${Q}&from=${P}`, "false");
    await expectBody(B_ID, `/registry/v2/check/all?to=${Q}&from=${P}`, "true");
    await expectBody(A_ID, `/registry/v2/check/erc20?to=${Q}&from=${P}&contract=${TOKEN}`, "0");
    // ALL covers every amount.
    await expectBody(
      B_ID,
      `/registry/v2/check/erc20?to=${Q}&from=${P}&contract=${TOKEN}&rights=${zeroHash}`,
      maxUint256.toString(),
    );
    // P → S, ERC20 1234: only on B.
    await expectBody(A_ID, `/registry/v2/check/erc20?to=${S}&from=${P}&contract=${TOKEN}`, "0");
    await expectBody(B_ID, `/registry/v2/check/erc20?to=${S}&from=${P}&contract=${TOKEN}`, "1234");
    await expectBody(A_ID, `/registry/v2/${S}`, "[]");
    await expectBody(A_ID, `/registry/v2/check/erc721?to=${Q}&from=${P}&contract=${TOKEN}&tokenId=1`, "false");
    await expectBody(B_ID, `/registry/v2/check/erc721?to=${Q}&from=${P}&contract=${TOKEN}&tokenId=1`, "true");
    await expectBody(A_ID, `/registry/v1/check/all?delegate=${Q}&vault=${P}`, "false");
    await expectBody(B_ID, `/registry/v1/check/all?delegate=${Q}&vault=${P}`, "true");
    await expectBody(A_ID, `/registry/v1/check/token?delegate=${Q}&vault=${P}&contract=${TOKEN}&tokenId=7`, "false");
    await expectBody(B_ID, `/registry/v1/check/token?delegate=${Q}&vault=${P}&contract=${TOKEN}&tokenId=7`, "true");
    await expectBody(A_ID, `/registry/v2/${Q}`, "[]");
    await expectBody(A_ID, `/registry/v1/${Q}`, "[]");
    // P → R: only on A.
    await expectBody(A_ID, `/registry/v2/check/all?to=${R}&from=${P}`, "true");
    await expectBody(B_ID, `/registry/v2/check/all?to=${R}&from=${P}`, "false");
    await expectBody(A_ID, `/registry/v1/check/contract?delegate=${R}&vault=${P}&contract=${TOKEN}`, "true");
    await expectBody(B_ID, `/registry/v1/check/contract?delegate=${R}&vault=${P}&contract=${TOKEN}`, "false");
    await expectBody(B_ID, `/registry/v2/${R}`, "[]");
    await expectBody(B_ID, `/registry/v1/${R}`, "[]");

    // Listings name only the asked chain's delegations.
    const v2List = async (chainId: number, w: Address) =>
      parseJsonExact((await askChain(chainId, `/registry/v2/${w}`)).text) as Record<string, unknown>[];
    const v1List = async (chainId: number, w: Address) =>
      parseJsonExact((await askChain(chainId, `/registry/v1/${w}`)).text) as Record<string, unknown>[];
    const pick = (list: Record<string, unknown>[], keys: string[]) =>
      list.map((x) => Object.fromEntries(keys.map((k) => [k, x[k]])));
    expect(
      pick(await v2List(A_ID, P), ["delegationType", "from", "to", "amount"]),
      tag(`v2 listing of P on ${A_ID}`),
    ).toEqual([{ delegationType: "ALL", from: P, to: R, amount: null }]);
    expect(
      pick(await v2List(B_ID, P), ["delegationType", "from", "to", "contract", "amount"]),
      tag(`v2 listing of P on ${B_ID}`),
    ).toEqual([
      { delegationType: "ALL", from: P, to: Q, contract: null, amount: null },
      { delegationType: "ERC20", from: P, to: S, contract: TOKEN, amount: 1234n },
    ]);
    const listB = await v2List(B_ID, P);
    expect(await v2List(B_ID, Q), tag(`v2 listing of Q on ${B_ID}`)).toEqual([listB[0]]);
    expect(await v2List(B_ID, S), tag(`v2 listing of S on ${B_ID}`)).toEqual([listB[1]]);
    expect(await v2List(A_ID, R), tag(`v2 listing of R on ${A_ID}`)).toEqual(await v2List(A_ID, P));
    expect(await v1List(A_ID, P), tag(`v1 listing of P on ${A_ID}`)).toEqual([
      { type: "ALL", vault: P, delegate: R, contract: null, tokenId: null },
    ]);
    expect(await v1List(B_ID, P), tag(`v1 listing of P on ${B_ID}`)).toEqual([
      { type: "ALL", vault: P, delegate: Q, contract: null, tokenId: null },
    ]);
    expect(await v1List(B_ID, Q), tag(`v1 listing of Q on ${B_ID}`)).toEqual(await v1List(B_ID, P));

    // And each chain's contract agrees.
    for (const r of runs) {
      const block = await headOf(r);
      const onB = r.id === B_ID;
      expect(
        await callView(r.anvil.url, abis.v2, V2, "checkDelegateForAll", [Q, P, zeroHash], block),
        tag(`chain ${r.id}: contract P → Q`),
      ).toBe(onB);
      expect(
        await callView(r.anvil.url, abis.v2, V2, "checkDelegateForAll", [R, P, zeroHash], block),
        tag(`chain ${r.id}: contract P → R`),
      ).toBe(!onB);
      expect(
        await callView(r.anvil.url, abis.v1, V1, "checkDelegateForAll", [Q, P], block),
        tag(`chain ${r.id}: v1 contract P → Q`),
      ).toBe(onB);
    }
  });

  it("GET /registry/chains lists both chains, each live, with its own registries, start blocks and indexed \
block", async () => {
    const a = await get("/registry/chains");
    expect(a.status, tag(a.text)).toBe(200);
    expect(a.headers.get("content-type"), tag("Content-Type")).toMatch(/^application\/json/);
    const list = JSON.parse(a.text) as ListedChain[];
    expect(
      list.map((c) => c.chainId).sort((x, y) => x - y),
      tag(a.text),
    ).toEqual([A_ID, B_ID]);
    for (const c of list) {
      const r = run(c.chainId);
      const head = await headOf(r);
      expect(c.status, tag(`chain ${c.chainId}`)).toBe("live");
      expect(typeof c.indexedBlock, tag(`chain ${c.chainId}: indexedBlock`)).toBe("number");
      expect(
        BigInt(c.indexedBlock!) >= r.lastWrite && BigInt(c.indexedBlock!) <= head,
        tag(`chain ${c.chainId}: indexedBlock ${c.indexedBlock} in ${r.lastWrite}..${head}`),
      ).toBe(true);
      expect(c.testnet, tag(`chain ${c.chainId}: testnet`)).toBe(true);
      for (const version of ["v1", "v2"] as const) {
        const registry = c.registries[version];
        expect(registry, tag(`chain ${c.chainId} ${version}`)).not.toBeNull();
        expect(registry!.address, tag(`chain ${c.chainId} ${version}: address`)).toBe(version === "v1" ? V1 : V2);
        // The start block is where the code appears on THIS chain.
        const sb = BigInt(registry!.startBlock);
        expect(
          await rpc(r.anvil.url, "eth_getCode", [registry!.address, toHex(sb - 1n)]),
          tag(`chain ${c.chainId} ${version} at ${sb - 1n}`),
        ).toBe("0x");
        expect(
          await rpc(r.anvil.url, "eth_getCode", [registry!.address, toHex(sb)]),
          tag(`chain ${c.chainId} ${version} at ${sb}`),
        ).not.toBe("0x");
      }
    }
    expect(list.find((c) => c.chainId === A_ID)!.name, tag("name of 31337")).toBe("anvil");
    expect(
      list.find((c) => c.chainId === B_ID),
      tag("11155111"),
    ).toMatchObject({ name: "sepolia", title: "Sepolia" });
    // The chains are told apart by their block numbers too: B runs ahead.
    expect(
      list.find((c) => c.chainId === B_ID)!.registries.v2!.startBlock,
      tag("start block on 11155111"),
    ).toBeGreaterThan(B_HEAD_START);
    expect(list.find((c) => c.chainId === A_ID)!.registries.v2!.startBlock, tag("start block on 31337")).toBeLessThan(
      B_HEAD_START,
    );
  });

  it("chainId absent (= 1), unknown or malformed: 400 unsupported_chain listing the served chains", async () => {
    const served = (JSON.parse((await get("/registry/chains")).text) as { chainId: number }[]).map((c) => c.chainId);
    expect(
      [...served].sort((x, y) => x - y),
      tag("served chains"),
    ).toEqual([A_ID, B_ID]);
    const { P, Q } = who(run(A_ID).accounts);
    const routes = [
      `/registry/v2/check/all?to=${Q}&from=${P}`,
      `/registry/v2/check/contract?to=${Q}&from=${P}&contract=${TOKEN}`,
      `/registry/v2/check/erc721?to=${Q}&from=${P}&contract=${TOKEN}&tokenId=1`,
      `/registry/v2/check/erc1155?to=${Q}&from=${P}&contract=${TOKEN}&tokenId=1`,
      `/registry/v2/check/erc20?to=${Q}&from=${P}&contract=${TOKEN}`,
      `/registry/v2/${P}?x=1`,
      `/registry/v1/check/all?delegate=${Q}&vault=${P}`,
      `/registry/v1/check/contract?delegate=${Q}&vault=${P}&contract=${TOKEN}`,
      `/registry/v1/check/token?delegate=${Q}&vault=${P}&contract=${TOKEN}&tokenId=1`,
      `/registry/v1/${P}?x=1`,
    ];
    const bad = [
      "1",
      "137",
      "10",
      "5",
      "0",
      "-1",
      "1.5",
      "1e3",
      "0x7a69",
      "abc",
      "",
      " 31337",
      "31337 ",
      // A list (answers across chains) naming a chain not served.
      "31337,1",
      "99999999999999999999999",
    ];
    for (const route of routes) {
      for (const chainId of [undefined, ...bad]) {
        const path = chainId === undefined ? route : `${route}&chainId=${encodeURIComponent(chainId)}`;
        const a = await get(path);
        const where = tag(`${path}: ${a.status} ${a.text}`);
        expect(a.status, where).toBe(400);
        expect(a.headers.get("content-type"), where).toMatch(/^application\/problem\+json/);
        const body = JSON.parse(a.text) as { code: string; param?: string; chains?: number[]; detail: string };
        expect(body.code, where).toBe("unsupported_chain");
        expect(body.param, where).toBe("chainId");
        expect(body.chains, where).toEqual(served);
        expect(body.detail, where).toContain(String(A_ID));
        expect(body.detail, where).toContain(String(B_ID));
      }
      // Given twice, even the same served chain: a 400.
      const twice = await get(`${route}&chainId=${A_ID}&chainId=${B_ID}`);
      expect(twice.status, tag(`${twice.path}: ${twice.text}`)).toBe(400);
      // Both served chains answer on every route.
      for (const id of [A_ID, B_ID]) {
        const ok = await get(`${route}&chainId=${id}`);
        expect(ok.status, tag(`${ok.path}: ${ok.text}`)).toBe(200);
      }
    }
  });
});

/** Every wallet the v2 stream touched, the explicit ones, one never touched, and the odd addresses. */
function listedV2(r: Run): Address[] {
  const { P, Q, R, S } = who(r.accounts);
  return [
    ...new Set(
      [...r.v2.pools.senders, ...r.v2.pools.delegates, P, Q, R, S, ADDRESS_1, V2_CONTRACTS[0]!].map((a) =>
        a.toLowerCase(),
      ),
    ),
  ] as Address[];
}

function listedV1(r: Run): Address[] {
  const { P, Q, R, S } = who(r.accounts);
  return [
    ...new Set(
      [...r.v1.pools.eoas, ...r.v1.pools.wallets, ...r.v1.pools.delegates, P, Q, R, S].map((a) => a.toLowerCase()),
    ),
  ] as Address[];
}
