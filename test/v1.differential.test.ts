/**
 * The v1 API against the real DelegationRegistry v1 (devkit/registries/) on anvil.
 *
 * 1. Differential: a seeded random stream of writes — delegateForAll/Contract/Token with true and
 *    false, revokeAllDelegates, revokeDelegate, revokeSelf, re-delegations after each kind of
 *    revocation, value=false on voided delegations — made directly by EOAs and through compiled
 *    contract wallets (one call, several calls in one transaction, calls undone by a reverted frame
 *    or starved of gas, calls through two wallets), many per block. Then tens of thousands of checks
 *    and every wallet's listing are asked of the service and of the contract (eth_call at the block
 *    the answer reports) and compared; listings as sets, their order against a literal model.
 *    Phase 2 writes more while the service indexes live, and compares again.
 * 2. The v1 rules of docs/api.md (inputs, outputs, errors), on the same service.
 * 3. Registry views called with CALL inside a contract wallet's transaction.
 *
 * Reproduce a failure with the seed it prints: SEED=<n> npx vitest run test/v1.differential.test.ts
 */

import { type Address, getAddress, maxUint256, zeroAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { type Answer, ask, indexedBlock, reasked } from "../devkit/ask";
import { type Mismatch, type Oracle, report } from "../devkit/compare";
import { compareChecks } from "../devkit/compare-checks";
import { abis, addresses, installRegistries } from "../devkit/oracle";
import { GiveUp, waitFor } from "../devkit/processes";
import { chooseSeed, Rng } from "../devkit/random";
import { chainClient } from "../devkit/rpc";
import { type Receipt, sendAll } from "../devkit/send";
import { type Service, startService } from "../devkit/service";
import type { RegistryCall } from "../devkit/v1/calls";
import { type CheckSpec, checkUrl, randomCheck, v1Checks } from "../devkit/v1/checks";
import { CONTRACTS, DEAD, makePools, type Pools, type Tx, WriteGenerator } from "../devkit/v1/generate";
import { ACCEPTED_ADDRESS_FORMS, lowerHex, REJECTED_ADDRESS_FORMS, upperHex } from "./helpers/address-forms";
import { expectOk as expectAnswer, expectProblem, type Query, qs, rename, replace, without } from "./helpers/answers";
import { compareListings } from "./helpers/compare-listings";
import { parseJsonExact } from "./helpers/json";
import { before, type Position } from "./helpers/position";
import { type Effect, effectsOf } from "./helpers/v1/effects";
import { modelMismatches, v1Listings } from "./helpers/v1/listing";
import { Model } from "./helpers/v1/model";
import { type CompiledWallet, compileWallet, txRequest } from "./helpers/v1/wallet";

const SEED = chooseSeed();
console.log(`[v1 differential] SEED=${SEED} (rerun with SEED=${SEED} npx vitest run test/v1.differential.test.ts)`);

const CHAIN_ID = 31337;
const PHASE1_TXS = 1500;
const PHASE1_CHECKS = 20_000;
const PHASE2_WAVES = 3;
const PHASE2_TXS_PER_WAVE = 100;
const PHASE2_WALLET_REVOKES_PER_WAVE = 8;
const PHASE2_CHECKS = 5_000;

const writeRng = new Rng(SEED);
const queryRng = new Rng(SEED ^ 0x5bd1e995);
const tag = (text: string) => `[SEED=${SEED}] ${text}`;

let anvil: Anvil | undefined;
let service: Service | undefined;
let oracle: Oracle;
let wallet: CompiledWallet;
let accounts: Address[];
let walletAddresses: Address[];
let pools: Pools;
let generator: WriteGenerator;
let model: Model;
/** Every wallet whose listing is compared. */
let listed: Address[];
let lastWriteBlock = 0n;

/** Known delegations for the HTTP rows, made by accounts the random stream never uses. */
const K = {} as { vault: Address; delegate: Address; allVault: Address; allDelegate: Address; nobody: Address };
const C_TOK = getAddress("0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D");
const C_CON = getAddress("0x60E4d786628Fea6478F785A6d7e704777c86a7c6");
const C_OTHER = getAddress("0x76BE3b62873462d2142405439777e971754E8E77");
const MAX_S = maxUint256.toString();
let knownBlock = 0n;
/** Where each known delegation in force was created. */
const knownAt = new Map<string, Position>();

/** The headers that carry the test service's API key, if startService made one. */
const keyHeaders = (): Record<string, string> => service?.headers ?? {};

async function waitForIndexed(block: bigint, timeoutMs = 180_000) {
  await waitFor(
    `the service to index block ${block}`,
    async () => {
      if (service && !service.child.running) throw new GiveUp(`the service exited before indexing block ${block}`);
      const indexed = await indexedBlock(oracle);
      return indexed !== undefined && indexed >= block ? indexed : undefined;
    },
    timeoutMs,
  );
}

/** Sends transactions, checks receipts and logs, and feeds the effects to the model in chain order. */
async function write(txs: Tx[]): Promise<{ receipts: Receipt[]; effects: Effect[] }> {
  const requests = txs.map((tx) => txRequest(tx, oracle.registry, oracle.abi, wallet));
  const receipts = await sendAll(oracle.rpcUrl, requests, SEED);
  const failed = receipts.filter((r) => r.status !== "0x1").map((r) => r.transactionHash);
  expect(failed, tag(`transactions that reverted: ${failed.slice(0, 5).join(", ")}`)).toEqual([]);
  const { effects, problems } = effectsOf(oracle.abi, oracle.registry, txs, receipts);
  expect(problems, tag("each transaction's registry logs are the events of its calls that take effect")).toEqual([]);
  for (const e of effects) model.apply(e);
  for (const r of receipts) if (BigInt(r.blockNumber) > lastWriteBlock) lastWriteBlock = BigInt(r.blockNumber);
  return { receipts, effects };
}

function drawChecks(n: number): { specs: CheckSpec[]; urls: string[] } {
  const inForce = model.inForce().map((d) => d.key);
  const specs = Array.from({ length: n }, () => randomCheck(queryRng, pools, generator.delegations, inForce));
  return { specs, urls: specs.map((s) => checkUrl(queryRng, CHAIN_ID, s)) };
}

beforeAll(async () => {
  anvil = await startAnvil({ chainId: CHAIN_ID, blockTime: 1 });
  const installed = await installRegistries(anvil.url);
  expect(installed.v1.toLowerCase()).toBe(addresses.v1.address.toLowerCase());
  accounts = await chainClient(anvil.url).getAddresses();
  expect(accounts.length).toBeGreaterThanOrEqual(20);
  oracle = { rpcUrl: anvil.url, serviceUrl: "", registry: getAddress(installed.v1), abi: abis.v1, chainId: CHAIN_ID };

  // Two contract wallets, deployed by the last account.
  wallet = compileWallet();
  const deployer = accounts[19]!;
  let deployerNonce = await chainClient(anvil.url).getTransactionCount({ address: deployer, blockTag: "pending" });
  const deployed = await sendAll(
    anvil.url,
    [0, 1].map(() => ({ from: deployer, data: wallet.bytecode, gas: 1_500_000n, nonce: deployerNonce++ })),
    SEED,
  );
  walletAddresses = deployed.map((r) => {
    expect(r.status, tag("wallet deployment")).toBe("0x1");
    return getAddress(r.contractAddress!);
  });

  // The HTTP rows' delegations, by accounts 16..19; each transaction makes one log.
  model = new Model(new Set(walletAddresses.map((w) => w.toLowerCase() as Address)));
  Object.assign(K, {
    vault: accounts[16]!,
    delegate: accounts[17]!,
    allVault: accounts[18]!,
    allDelegate: accounts[19]!,
    nobody: accounts[15]!,
  });
  const known: [Address, RegistryCall, string | undefined][] = [
    [
      K.vault,
      { fn: "delegateForToken", delegate: K.delegate, contract: C_TOK, tokenId: maxUint256, value: true },
      "TOKEN|vault|delegate",
    ],
    [
      K.vault,
      { fn: "delegateForContract", delegate: K.delegate, contract: C_CON, value: true },
      "CONTRACT|vault|delegate",
    ],
    [K.vault, { fn: "delegateForAll", delegate: K.allDelegate, value: true }, undefined],
    [K.vault, { fn: "revokeDelegate", delegate: K.allDelegate }, undefined],
    [
      K.vault,
      { fn: "delegateForContract", delegate: K.allDelegate, contract: zeroAddress, value: true },
      "CONTRACT0|vault|allDelegate",
    ],
    [K.allVault, { fn: "delegateForAll", delegate: K.allDelegate, value: true }, "ALL|allVault|allDelegate"],
    [K.allDelegate, { fn: "delegateForAll", delegate: K.allDelegate, value: true }, "ALL|allDelegate|allDelegate"],
  ];
  const nonces = new Map<Address, number>();
  for (const [from] of known) {
    if (!nonces.has(from))
      nonces.set(from, await chainClient(anvil.url).getTransactionCount({ address: from, blockTag: "pending" }));
  }
  const knownTxs: Tx[] = known.map(([from, call]) => {
    const nonce = nonces.get(from)!;
    nonces.set(from, nonce + 1);
    return { from, nonce, route: "direct", actor: from, via: [], calls: [{ call, fate: "done" }] };
  });
  const { receipts: knownReceipts } = await write(knownTxs);
  knownReceipts.forEach((r, i) => {
    expect(r.logs.length).toBe(1);
    const label = known[i]![2];
    if (label) knownAt.set(label, { block: BigInt(r.blockNumber), logIndex: Number(r.logs[0]!.logIndex) });
    if (BigInt(r.blockNumber) > knownBlock) knownBlock = BigInt(r.blockNumber);
  });

  pools = makePools(accounts, walletAddresses);
  generator = new WriteGenerator(writeRng, pools);
  for (const eoa of pools.eoas) {
    generator.nonces.set(eoa, await chainClient(anvil.url).getTransactionCount({ address: eoa, blockTag: "pending" }));
  }
  listed = [
    ...new Set(
      [
        ...pools.eoas,
        ...pools.wallets,
        ...pools.delegates,
        K.vault,
        K.delegate,
        K.allVault,
        K.allDelegate,
        K.nobody,
        CONTRACTS[0]!,
      ].map((a) => a.toLowerCase() as Address),
    ),
  ];
});

afterAll(async () => {
  await service?.stop();
  await anvil?.stop();
});

describe("v1 differential: the service answers what the real DelegationRegistry answers", () => {
  it(`phase 1: ${PHASE1_TXS} random transactions, then ${PHASE1_CHECKS} checks and every listing`, async () => {
    const t0 = Date.now();
    const txs = Array.from({ length: PHASE1_TXS }, () => generator.nextTx());
    const { receipts, effects } = await write(txs);
    const perBlock = new Map<bigint, number>();
    for (const e of effects) perBlock.set(e.block, (perBlock.get(e.block) ?? 0) + 1);
    const senders = new Set(txs.map((t) => t.from));
    const vaults = new Set(effects.map((e) => e.actor));
    console.log(
      `[v1 differential] phase 1: ${txs.length} transactions, ${effects.length} registry writes in ` +
        `${new Set(receipts.map((r) => r.blockNumber)).size} blocks (up to ${Math.max(...perBlock.values())} per ` +
        `block, last block ${lastWriteBlock}), ${senders.size} signing EOAs, ${vaults.size} writing vaults, in ` +
        `${Date.now() - t0} ms\n  generated: ${JSON.stringify(generator.stats)}\n  on chain: ` +
        `${JSON.stringify(model.stats)}`,
    );

    // The stream covers what it is meant to cover.
    const s = model.stats;
    for (const name of [
      "first delegations",
      "re-delegations after revokeAllDelegates",
      "re-delegations after revokeDelegate",
      "re-delegations after revokeSelf",
      "re-delegations after value=false",
      "value=true on a delegation in force (keeps its place)",
      "value=false on a delegation in force",
      "value=false on a voided delegation",
      "value=false on nothing",
      "revokeAllDelegates",
      "revokeAllDelegates by a contract wallet",
      "revokeDelegate",
      "revokeDelegate by a contract wallet",
      "revokeDelegate by a contract wallet among other writes of one transaction",
      "revokeDelegate through two wallets",
      "revokeDelegate by a contract wallet beside its own revoke of another pair",
      "revokeDelegate beside reverted registry frames",
      "revokeSelf",
      "revokeSelf by a contract wallet",
      "self-delegations",
      "delegateForAll by a contract wallet",
      "delegateForContract by a contract wallet",
      "delegateForToken by a contract wallet",
    ]) {
      expect(s[name] ?? 0, tag(`the write stream has no "${name}"`)).toBeGreaterThan(0);
    }
    for (const name of ["calls undone (reverted frame)", "calls starved (reverted frame)"]) {
      expect(generator.stats[name] ?? 0, tag(`the write stream has no "${name}"`)).toBeGreaterThan(0);
    }
    expect(effects.length, tag("at least 2,000 writes")).toBeGreaterThanOrEqual(2000);
    expect(vaults.size, tag("at least 10 wallets write")).toBeGreaterThanOrEqual(10);
    expect(Math.max(...perBlock.values()), tag("several writes in one block")).toBeGreaterThan(1);

    const t1 = Date.now();
    service = await startService({ rpc: { [CHAIN_ID]: anvil!.url } });
    oracle.serviceUrl = service.url;
    // Tens of thousands of requests: with the service's key (when it makes one), no keyless limit.
    oracle.headers = keyHeaders();
    await waitForIndexed(lastWriteBlock);
    // Make sure the service answering is the one indexing this chain: a known delegation is true.
    const known = await call(
      path("all"),
      chain([
        ["delegate", K.allDelegate],
        ["vault", K.allVault],
      ]),
    );
    expect(
      known.text,
      tag(`the service at ${service.url} does not index this test's chain: ${known.status} ${known.text}`),
    ).toBe("true");
    console.log(`[v1 differential] service ready and indexed past block ${lastWriteBlock} in ${Date.now() - t1} ms`);

    const t2 = Date.now();
    const { specs, urls } = drawChecks(PHASE1_CHECKS);
    const checks = await compareChecks(oracle, v1Checks, specs, urls, { minBlock: lastWriteBlock });
    const listings = await compareListings(oracle, v1Listings(model), listed, { minBlock: lastWriteBlock }, queryRng);
    const fromModel = modelMismatches(model, listings.expected);
    console.log(
      `[v1 differential] phase 1: ${checks.compared} checks compared (${checks.positive} true), ${listings.compared} ` +
        `listings (${listings.records} records) in ${Date.now() - t2} ms; answers asked again: ` +
        `${JSON.stringify(reasked)}`,
    );
    const mismatches: Mismatch[] = [...checks.mismatches, ...listings.mismatches];
    expect(mismatches.length, report(SEED, "phase 1", mismatches)).toBe(0);
    expect(fromModel.length, report(SEED, "phase 1: the test's own model disagrees with the contract", fromModel)).toBe(
      0,
    );
    expect(checks.compared, tag("checks compared")).toBe(PHASE1_CHECKS);
    expect(listings.compared, tag("listings compared")).toBe(listed.length);
    expect(checks.positive, tag("share of true answers")).toBeGreaterThan(PHASE1_CHECKS * 0.15);
    expect(listings.records, tag("listed records")).toBeGreaterThan(50);
  });

  it(`phase 2: ${PHASE2_WAVES * (PHASE2_TXS_PER_WAVE + PHASE2_WALLET_REVOKES_PER_WAVE)} more transactions indexed \
live, checked during and after`, async () => {
    expect(service, tag("phase 1 started the service")).toBeDefined();
    const t0 = Date.now();
    const start = lastWriteBlock;
    const walletRevokesBefore = model.stats["revokeDelegate by a contract wallet"] ?? 0;
    const mismatches: Mismatch[] = [];
    let liveCompared = 0;
    let livePositive = 0;
    let writes = 0;

    let writing = true;
    const writer = (async () => {
      try {
        for (let wave = 0; wave < PHASE2_WAVES; wave++) {
          const txs = Array.from({ length: PHASE2_TXS_PER_WAVE }, () => generator.nextTx());
          for (let i = 0; i < PHASE2_WALLET_REVOKES_PER_WAVE; i++) txs.push(generator.walletRevokeTx());
          writes += (await write(txs)).effects.length;
        }
      } finally {
        writing = false;
      }
    })();
    const live = (async () => {
      while (writing) {
        const { specs, urls } = drawChecks(200);
        const result = await compareChecks(oracle, v1Checks, specs, urls, { minBlock: start }, 16);
        liveCompared += result.compared;
        livePositive += result.positive;
        mismatches.push(...result.mismatches);
      }
    })();
    await Promise.all([writer, live]);
    console.log(
      `[v1 differential] phase 2: ${writes} registry writes up to block ${lastWriteBlock} in ${Date.now() - t0} ms; ` +
        `${liveCompared} checks compared while indexing live (${livePositive} true)`,
    );
    expect(
      (model.stats["revokeDelegate by a contract wallet"] ?? 0) - walletRevokesBefore,
      tag("contract-wallet revokeDelegate in phase 2"),
    ).toBeGreaterThan(0);

    await waitForIndexed(lastWriteBlock);
    const t1 = Date.now();
    const { specs, urls } = drawChecks(PHASE2_CHECKS);
    const checks = await compareChecks(oracle, v1Checks, specs, urls, { minBlock: lastWriteBlock });
    const listings = await compareListings(oracle, v1Listings(model), listed, { minBlock: lastWriteBlock }, queryRng);
    const fromModel = modelMismatches(model, listings.expected);
    console.log(
      `[v1 differential] phase 2: ${checks.compared} checks compared (${checks.positive} true), ${listings.compared} ` +
        `listings (${listings.records} records) in ${Date.now() - t1} ms; answers asked again: ` +
        `${JSON.stringify(reasked)}\n  on chain: ${JSON.stringify(model.stats)}`,
    );
    mismatches.push(...checks.mismatches, ...listings.mismatches);
    expect(mismatches.length, report(SEED, "phase 2", mismatches)).toBe(0);
    expect(fromModel.length, report(SEED, "phase 2: the test's own model disagrees with the contract", fromModel)).toBe(
      0,
    );
    expect(checks.compared, tag("checks compared")).toBe(PHASE2_CHECKS);
    expect(listings.compared, tag("listings compared")).toBe(listed.length);
    expect(liveCompared, tag("checks compared during live indexing")).toBeGreaterThan(0);
  });
});

// ---------------------------------------------------------------------------------------------
// The v1 rules of docs/api.md

/** One request with the service's key, bounded in time, never asked again: a hang is a failure. */
async function call(
  path: string,
  query: Query = [],
  init: { method?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  if (!service) throw new Error("the service did not start (phase 1)");
  const headers = { ...keyHeaders(), ...init.headers };
  return ask(service.url, `${path}${qs(query)}`, { method: init.method, headers, timeoutMs: 20_000, reask: false });
}

const chain = (query: Query): Query => [...query, ["chainId", String(CHAIN_ID)]];

/** A 200 chain answer whose X-Indexed-Block covers the known delegations; and its body, if given. */
const expectOk = (a: Answer, body?: string) => expectAnswer(a, knownBlock, body);

/** The v1 check routes, each with a known query answered `true`. */
const ROUTES = () =>
  [
    {
      kind: "all",
      query: [
        ["delegate", K.allDelegate],
        ["vault", K.allVault],
      ] as Query,
      required: ["delegate", "vault"],
    },
    {
      kind: "contract",
      query: [
        ["delegate", K.delegate],
        ["vault", K.vault],
        ["contract", C_CON],
      ] as Query,
      required: ["delegate", "vault", "contract"],
    },
    {
      kind: "token",
      query: [
        ["delegate", K.delegate],
        ["vault", K.vault],
        ["contract", C_TOK],
        ["tokenId", MAX_S],
      ] as Query,
      required: ["delegate", "vault", "contract", "tokenId"],
    },
  ] as const;
const path = (kind: string) => `/registry/v1/check/${kind}`;

describe("v1 HTTP contract (docs/api.md)", () => {
  it("checks answer a bare true/false as application/json with X-Indexed-Block, as the contract's fallbacks \
say", async () => {
    const check = async (kind: string, query: Query, body: string) =>
      expectOk(await call(path(kind), chain(query)), body);
    for (const r of ROUTES()) await check(r.kind, r.query, "true");
    // TOKEN at 2^256-1 only; CONTRACT covers every token of its contract; ALL covers everything.
    await check(
      "token",
      [
        ["delegate", K.delegate],
        ["vault", K.vault],
        ["contract", C_TOK],
        ["tokenId", "1"],
      ],
      "false",
    );
    await check(
      "contract",
      [
        ["delegate", K.delegate],
        ["vault", K.vault],
        ["contract", C_TOK],
      ],
      "false",
    );
    await check(
      "all",
      [
        ["delegate", K.delegate],
        ["vault", K.vault],
      ],
      "false",
    );
    await check(
      "token",
      [
        ["delegate", K.delegate],
        ["vault", K.vault],
        ["contract", C_CON],
        ["tokenId", "0"],
      ],
      "true",
    );
    await check(
      "token",
      [
        ["delegate", K.allDelegate],
        ["vault", K.allVault],
        ["contract", C_OTHER],
        ["tokenId", "5"],
      ],
      "true",
    );
    await check(
      "contract",
      [
        ["delegate", K.allDelegate],
        ["vault", K.allVault],
        ["contract", zeroAddress],
      ],
      "true",
    );
    // Reversed parties.
    await check(
      "all",
      [
        ["delegate", K.allVault],
        ["vault", K.allDelegate],
      ],
      "false",
    );
    // revokeDelegate voided vault → allDelegate ALL; the CONTRACT on 0x0 made after it is in force.
    await check(
      "all",
      [
        ["delegate", K.allDelegate],
        ["vault", K.vault],
      ],
      "false",
    );
    await check(
      "contract",
      [
        ["delegate", K.allDelegate],
        ["vault", K.vault],
        ["contract", zeroAddress],
      ],
      "true",
    );
    await check(
      "contract",
      [
        ["delegate", K.allDelegate],
        ["vault", K.vault],
        ["contract", C_CON],
      ],
      "false",
    );
    await check(
      "token",
      [
        ["delegate", K.allDelegate],
        ["vault", K.vault],
        ["contract", zeroAddress],
        ["tokenId", "0"],
      ],
      "true",
    );
    // A self-delegation.
    await check(
      "all",
      [
        ["delegate", K.allDelegate],
        ["vault", K.allDelegate],
      ],
      "true",
    );
  });

  it("v1 checks take delegate and vault only: to/from are missing_parameter", async () => {
    for (const r of ROUTES()) {
      const q = chain(r.query);
      expectProblem(
        await call(path(r.kind), rename(rename(q, "delegate", "to"), "vault", "from")),
        400,
        "missing_parameter",
        "delegate",
      );
      expectProblem(await call(path(r.kind), rename(q, "delegate", "to")), 400, "missing_parameter", "delegate");
      expectProblem(await call(path(r.kind), rename(q, "vault", "from")), 400, "missing_parameter", "vault");
      // Beside delegate/vault, to/from are unknown parameters: ignored, whatever their value.
      expectOk(await call(path(r.kind), [...q, ["to", K.nobody], ["from", "not an address"]]), "true");
    }
  });

  it("each required parameter missing is missing_parameter naming it", async () => {
    for (const r of ROUTES()) {
      for (const name of r.required)
        expectProblem(await call(path(r.kind), without(chain(r.query), name)), 400, "missing_parameter", name);
      expectProblem(await call(path(r.kind), chain([])), 400, "missing_parameter");
    }
  });

  it("addresses: lowercase, uppercase digits and EIP-55 accepted on every address parameter and the path", async () => {
    for (const r of ROUTES()) {
      for (const name of r.required.filter((n) => n !== "tokenId")) {
        const value = r.query.find(([k]) => k === name)![1] as Address;
        for (const [form, spell] of ACCEPTED_ADDRESS_FORMS) {
          const a = await call(path(r.kind), chain(replace(r.query, name, spell(value))));
          expect(a.text, `check/${r.kind} ${name} ${form}`).toBe("true");
          expectOk(a);
        }
      }
    }
    const reference = await call(`/registry/v1/${K.vault}`, chain([]));
    expectOk(reference);
    for (const [form, spell] of ACCEPTED_ADDRESS_FORMS) {
      const a = await call(`/registry/v1/${spell(K.vault)}`, chain([]));
      expect(a.text, form).toBe(reference.text);
      expectOk(a);
    }
  });

  it("addresses: bad checksum, ENS, whitespace, wrong length, no prefix are invalid_parameter naming the \
parameter", async () => {
    for (const r of ROUTES()) {
      for (const name of r.required.filter((n) => n !== "tokenId")) {
        const value = r.query.find(([k]) => k === name)![1] as Address;
        for (const [form, spell] of REJECTED_ADDRESS_FORMS) {
          const a = await call(path(r.kind), chain(replace(r.query, name, spell(value))));
          expect(a.status, `check/${r.kind} ${name} ${form}: ${a.text}`).toBe(400);
          expectProblem(a, 400, "invalid_parameter", name);
        }
      }
    }
    for (const [form, spell] of REJECTED_ADDRESS_FORMS.filter(([f]) => f !== "empty")) {
      const a = await call(`/registry/v1/${encodeURIComponent(spell(K.vault))}`, chain([]));
      expect(a.status, `path ${form}: ${a.text}`).toBe(400);
      expectProblem(a, 400, "invalid_parameter", "wallet");
    }
  });

  it("tokenId: decimal or 0x-hex up to 2^256-1 accepted", async () => {
    const token = ROUTES()[2];
    for (const [tokenId, body] of [
      [MAX_S, "true"],
      [`0x${"f".repeat(64)}`, "true"],
      [`0x${"F".repeat(64)}`, "true"],
      [`0x${"0".repeat(10)}${"f".repeat(64)}`, "true"],
      ["0", "false"],
      ["0x0", "false"],
      [(maxUint256 - 1n).toString(), "false"],
    ] as const) {
      const a = await call(path("token"), chain(replace(token.query, "tokenId", tokenId)));
      expect(a.text, `tokenId ${tokenId}`).toBe(body);
      expectOk(a);
    }
  });

  it("tokenId: negative, fractional, exponent, > 2^256-1, empty, malformed are invalid_parameter", async () => {
    const token = ROUTES()[2];
    for (const tokenId of [
      "-1",
      "-0",
      "1.5",
      "7.0",
      "1e3",
      "1E3",
      (maxUint256 + 1n).toString(),
      `0x1${"0".repeat(64)}`,
      "",
      "0x",
      "abc",
      " 1",
      "1 ",
      "+1",
      "0b1",
      "1_000",
    ]) {
      const a = await call(path("token"), chain(replace(token.query, "tokenId", tokenId)));
      expect(a.status, `tokenId ${JSON.stringify(tokenId)}: ${a.text}`).toBe(400);
      expectProblem(a, 400, "invalid_parameter", "tokenId");
    }
  });

  it("tokenId is not a parameter of check/all and check/contract: ignored there", async () => {
    for (const r of ROUTES().slice(0, 2)) {
      expectOk(await call(path(r.kind), chain([...r.query, ["tokenId", "-1"]])), "true");
    }
  });

  it("a parameter given twice is a 400 naming it, even with the same value", async () => {
    for (const r of ROUTES()) {
      for (const [name, value] of chain(r.query)) {
        const a = await call(path(r.kind), [...chain(r.query), [name, value]]);
        expect(a.status, `check/${r.kind} ${name} twice: ${a.text}`).toBe(400);
        expectProblem(a, 400, undefined, name);
      }
    }
    expectProblem(
      await call(`/registry/v1/${K.vault}`, [
        ["chainId", "31337"],
        ["chainId", "31337"],
      ]),
      400,
      undefined,
      "chainId",
    );
  });

  it("unknown parameters are ignored", async () => {
    for (const r of ROUTES()) {
      expectOk(
        await call(
          path(r.kind),
          chain([["foo", "bar"], ...r.query, ["utm_source", "x"], ["DELEGATE", "nonsense"], ["empty", ""]]),
        ),
        "true",
      );
    }
    const reference = await call(`/registry/v1/${K.vault}`, chain([]));
    expectOk(
      await call(
        `/registry/v1/${K.vault}`,
        chain([
          ["vault", "x"],
          ["foo", ""],
        ]),
      ),
      reference.text,
    );
  });

  it("chainId: absent is 1, not served here; anything but a served chain is unsupported_chain listing \
31337", async () => {
    for (const r of ROUTES()) {
      const body = expectProblem(await call(path(r.kind), r.query), 400, "unsupported_chain");
      expect(String(body.detail)).toContain("31337");
    }
    expectProblem(await call(`/registry/v1/${K.vault}`), 400, "unsupported_chain");
    for (const chainId of ["1", "0", "-1", "31337.0", "0x7a69", "abc", "", "137"]) {
      const a = await call(path("all"), [...ROUTES()[0].query, ["chainId", chainId]]);
      expect(a.status, `chainId ${JSON.stringify(chainId)}: ${a.text}`).toBe(400);
      const body = expectProblem(a, 400, "unsupported_chain", "chainId");
      expect(String(body.detail)).toContain("31337");
    }
  });

  it("listing: records with type, vault, delegate (EIP-55), contract null for ALL, tokenId exact or null, in creation \
order", async () => {
    const rec = (
      type: string,
      vault: Address,
      delegate: Address,
      contract: Address | null,
      tokenId: bigint | null,
    ) => ({
      type,
      vault: getAddress(vault),
      delegate: getAddress(delegate),
      contract: contract && getAddress(contract),
      tokenId,
    });
    const list = async (w: string) => {
      const a = await call(`/registry/v1/${w}`, chain([]));
      expectOk(a);
      return parseJsonExact(a.text) as Record<string, unknown>[];
    };
    const byPosition = (entries: [string, Record<string, unknown>][]) =>
      entries.sort(([a], [b]) => (before(knownAt.get(a)!, knownAt.get(b)!) ? -1 : 1)).map(([, r]) => r);
    const tokenRec = rec("TOKEN", K.vault, K.delegate, C_TOK, maxUint256);
    const contractRec = rec("CONTRACT", K.vault, K.delegate, C_CON, null);
    const contract0Rec = rec("CONTRACT", K.vault, K.allDelegate, zeroAddress, null);
    const allRec = rec("ALL", K.allVault, K.allDelegate, null, null);
    const selfRec = rec("ALL", K.allDelegate, K.allDelegate, null, null);
    expect(await list(K.vault)).toEqual(
      byPosition([
        ["TOKEN|vault|delegate", tokenRec],
        ["CONTRACT|vault|delegate", contractRec],
        ["CONTRACT0|vault|allDelegate", contract0Rec],
      ]),
    );
    expect(await list(lowerHex(K.delegate))).toEqual(
      byPosition([
        ["TOKEN|vault|delegate", tokenRec],
        ["CONTRACT|vault|delegate", contractRec],
      ]),
    );
    expect(await list(K.allVault)).toEqual([allRec]);
    // The self-delegation appears once.
    expect(await list(upperHex(K.allDelegate))).toEqual(
      byPosition([
        ["CONTRACT0|vault|allDelegate", contract0Rec],
        ["ALL|allVault|allDelegate", allRec],
        ["ALL|allDelegate|allDelegate", selfRec],
      ]),
    );
    // tokenId is a bare integer literal with every digit.
    const a = await call(`/registry/v1/${K.vault}`, chain([]));
    expect(a.text).toMatch(new RegExp(`"tokenId"\\s*:\\s*${MAX_S}\\s*[,}]`));
    expect(a.text).not.toMatch(/e\+|E\+/);
    // A CONTRACT delegation on contract 0x0 names it, it is not null.
    expect(a.text).toContain(`"contract":"${zeroAddress}"`);
  });

  it("listing: a wallet with nothing in force is []", async () => {
    for (const w of [K.nobody, DEAD.replace("dead", "beef")]) {
      const a = await call(`/registry/v1/${w}`, chain([]));
      expectOk(a, "[]");
    }
  });

  it("X-Indexed-Block: every 200 carries the same, current block for checks and listings", async () => {
    const answers = await Promise.all([
      call(path("all"), chain(ROUTES()[0].query)),
      call(`/registry/v1/${K.vault}`, chain([])),
    ]);
    const blocks = answers.map((a) => {
      expectOk(a);
      return BigInt(a.headers.get("x-indexed-block")!);
    });
    const head = await chainClient(anvil!.url).getBlockNumber();
    for (const b of blocks) {
      expect(b >= lastWriteBlock, `X-Indexed-Block ${b} < last write ${lastWriteBlock}`).toBe(true);
      expect(b <= head, `X-Indexed-Block ${b} > chain head ${head}`).toBe(true);
    }
    // It follows the chain: anvil mines a block a second.
    await waitFor(
      "X-Indexed-Block to advance",
      async () => {
        const a = await call(path("all"), chain(ROUTES()[0].query));
        const b = BigInt(a.headers.get("x-indexed-block") ?? "0");
        return b > blocks[0]! ? b : undefined;
      },
      30_000,
    );
  });

  it("paths and methods: unknown v1 paths 404, writes 405 with Allow, preflight answered", async () => {
    for (const p of [
      "/registry/v1/check/erc721",
      "/registry/v1/check/all/extra",
      `/registry/v1/${K.vault}/extra`,
      "/registry/v1/check/nothing",
    ]) {
      expectProblem(await call(p, chain(ROUTES()[0].query)), 404, "not_found");
    }
    for (const method of ["POST", "PUT", "DELETE", "PATCH"]) {
      const a = await call(path("all"), chain(ROUTES()[0].query), { method });
      expectProblem(a, 405, "method_not_allowed");
      expect(a.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    }
    const pre = await call(path("all"), [], {
      method: "OPTIONS",
      headers: { Origin: "https://example.org", "Access-Control-Request-Method": "GET" },
    });
    expect(pre.status).toBeLessThan(300);
    expect(pre.headers.get("access-control-allow-origin")).toBe("*");
    // HEAD: the GET's status and headers, no body; on answers, on errors, on a listing.
    const cases: [string, Query][] = [
      [path("all"), chain(ROUTES()[0].query)],
      [path("all"), []],
      [`/registry/v1/${K.vault}`, chain([])],
    ];
    for (const [p, query] of cases) {
      const g = await call(p, query);
      const h = await call(p, query, { method: "HEAD" });
      expect(h.status, p).toBe(g.status);
      expect(h.text, p).toBe("");
      for (const name of ["content-type", "access-control-allow-origin"])
        expect(h.headers.get(name), `${p} ${name}`).toBe(g.headers.get(name));
      const [gb, hb] = [g.headers.get("x-indexed-block"), h.headers.get("x-indexed-block")];
      expect(hb === null, `${p} x-indexed-block on HEAD iff on GET`).toBe(gb === null);
      if (gb !== null) expect(BigInt(hb!) >= BigInt(gb), `${p} x-indexed-block ${hb} after ${gb}`).toBe(true);
    }
  });

  it("malformed percent-encoding is a 400, not a 5xx", async () => {
    if (!service) throw new Error("no service");
    const res = await fetch(`${service.url}${path("all")}?chainId=31337&delegate=%E0%A4%A&vault=${K.allVault}`, {
      headers: keyHeaders(),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  });
});

// ---------------------------------------------------------------------------------------------
// Registry views called with CALL

/**
 * A registry view called with CALL (a low-level `registry.call(...)`, as a generic wallet or
 * multicall contract makes it) is a CALL frame to the registry that emits no log. The indexer pairs
 * the registry's write calls in a trace with its logs (core/v1.ts registryCalls); counting such a
 * frame used to shift the pairing: a wrong pair voided silently (first case), or the indexer stopped
 * (second case). Run last: should that come back, the service stops.
 */
describe("v1 traces: a contract wallet calls a registry view with CALL in a revokeDelegate transaction", () => {
  const viaWallet = async (w: Address, calls: RegistryCall[]) => {
    const from = accounts[14]!;
    const nonce = await chainClient(anvil!.url).getTransactionCount({ address: from, blockTag: "pending" });
    const tx: Tx = {
      from,
      nonce,
      route: "forwardMany",
      actor: w,
      via: [w],
      calls: calls.map((call) => ({ call, fate: "done" })),
    };
    return write([tx]);
  };
  const compareAround = async (label: string, checks: CheckSpec[], wallets: Address[], timeoutMs: number) => {
    try {
      await waitForIndexed(lastWriteBlock, timeoutMs);
    } catch (error) {
      throw new Error(
        tag(
          `${label}: ${(error as Error).message}${service!.child.running ? " (the service is still running)" : ""}; ` +
            `ponder's last output:\n`,
        ) + service!.child.output.slice(-3000),
      );
    }
    const urls = checks.map((s) => checkUrl(queryRng, CHAIN_ID, s));
    const result = await compareChecks(oracle, v1Checks, checks, urls, { minBlock: lastWriteBlock });
    const listings = await compareListings(oracle, v1Listings(), wallets, { minBlock: lastWriteBlock }, queryRng);
    const mismatches = [...result.mismatches, ...listings.mismatches];
    expect(mismatches.length, report(SEED, label, mismatches)).toBe(0);
  };

  it("view, revokeSelf(vault), revokeDelegate(b) in one transaction: each pair voided is the right one", async () => {
    expect(service, tag("phase 1 started the service")).toBeDefined();
    const w = walletAddresses[0]!;
    const vault = accounts[13]!; // never writes in the random stream
    const b = getAddress("0x00000000000000000000000000000000000b0b01");
    // vault → w and w → b, both in force.
    await write([
      {
        from: vault,
        nonce: await chainClient(anvil!.url).getTransactionCount({ address: vault, blockTag: "pending" }),
        route: "direct",
        actor: vault,
        via: [],
        calls: [{ call: { fn: "delegateForAll", delegate: w, value: true }, fate: "done" }],
      },
    ]);
    await viaWallet(w, [{ fn: "delegateForAll", delegate: b, value: true }]);
    await viaWallet(w, [
      { fn: "checkDelegateForAll", delegate: b, vault: w },
      { fn: "revokeSelf", vault },
      { fn: "revokeDelegate", delegate: b },
    ]);
    const all = (delegate: Address, v: Address): CheckSpec => ({
      kind: "all",
      delegate,
      vault: v,
      contract: zeroAddress,
      tokenId: 0n,
    });
    // The contract: both false. A shifted pairing voids (vault, w) twice and leaves (w, b) in force.
    await compareAround("view + revokeSelf + revokeDelegate", [all(b, w), all(w, vault)], [w, b, vault], 60_000);
  });

  it("view, then revokeDelegate(b) in one transaction: indexed, and the pair (wallet, b) is voided", async () => {
    expect(service, tag("phase 1 started the service")).toBeDefined();
    const w = walletAddresses[1]!;
    const b = getAddress("0x00000000000000000000000000000000000b0b02");
    await viaWallet(w, [{ fn: "delegateForAll", delegate: b, value: true }]);
    await viaWallet(w, [
      { fn: "checkDelegateForAll", delegate: b, vault: w },
      { fn: "revokeDelegate", delegate: b },
    ]);
    await compareAround(
      "view + revokeDelegate",
      [{ kind: "all", delegate: b, vault: w, contract: zeroAddress, tokenId: 0n }],
      [w, b],
      60_000,
    );
  });
});
