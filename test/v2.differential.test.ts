/**
 * Differential test: the service must answer exactly what the real DelegateRegistry v2 answers.
 *
 * A seeded random stream of writes (every write function, multicall, re-enables, revokes of what
 * does not exist, amount changes, self-delegations, extreme token ids, several writes per block)
 * goes to the real contract on anvil; then tens of thousands of checks and every wallet's listing
 * are asked of the service and of the contract (eth_call at the block the service says it reflects)
 * and compared. Phase 2 repeats this while the service indexes new writes live.
 *
 * Reproduce a failure with the seed it prints: SEED=<n> npx vitest run test/v2.differential.test.ts
 */

import { type Address, type Hex, zeroAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { indexedBlock } from "../devkit/ask";
import { type Mismatch, type Oracle, report } from "../devkit/compare";
import { compareChecks } from "../devkit/compare-checks";
import { abis, addresses, installRegistries } from "../devkit/oracle";
import { waitFor } from "../devkit/processes";
import { chooseSeed, Rng } from "../devkit/random";
import { chainClient } from "../devkit/rpc";
import { type Receipt, roomyBlocks, SPREAD, sendAll } from "../devkit/send";
import { type Service, startService } from "../devkit/service";
import { type CheckSpec, checkUrl, randomCheck, v2Checks } from "../devkit/v2/checks";
import { ADDRESS_1, CONTRACTS, makePools, type Pools, type Tx, txRequest, WriteGenerator } from "../devkit/v2/generate";
import { compareListings } from "./helpers/compare-listings";
import type { Position } from "./helpers/position";
import { type ChainEvent, decodeEvents, firstEnabled } from "./helpers/v2/events";
import { v2Listings } from "./helpers/v2/listing";

const SEED = chooseSeed();
console.log(`[v2 differential] SEED=${SEED} (rerun with SEED=${SEED} npx vitest run test/v2.differential.test.ts)`);

const CHAIN_ID = 31337;
const PHASE1_TXS = 2000;
const PHASE1_CHECKS = 20_000;
const PHASE2_WAVES = 5;
const PHASE2_TXS_PER_WAVE = 80;
const PHASE2_CHECKS = 6_000;

/** Separate streams: the writes do not depend on how many checks were drawn, and vice versa. */
const writeRng = new Rng(SEED);
const queryRng = new Rng(SEED ^ 0x5bd1e995);

const tag = (text: string) => `[SEED=${SEED}] ${text}`;

describe("v2 differential: the service answers what the real DelegateRegistry answers", () => {
  let anvil: Anvil | undefined;
  let service: Service | undefined;
  let oracle: Oracle;
  let pools: Pools;
  let generator: WriteGenerator;
  let wallets: Address[];
  const positions = new Map<Hex, Position>();
  let lastWriteBlock = 0n;

  /** Sends the transactions, checks every receipt, and records where delegations were first enabled. */
  async function write(txs: Tx[]): Promise<{ receipts: Receipt[]; events: ChainEvent[] }> {
    const requests = txs.map((tx) => txRequest(oracle.registry, oracle.abi, tx));
    const receipts = await sendAll(oracle.rpcUrl, requests, SEED, SPREAD);
    const failed = receipts.filter((r) => r.status !== "0x1").map((r) => r.transactionHash);
    expect(failed, tag(`transactions that reverted: ${failed.slice(0, 5).join(", ")}`)).toEqual([]);
    const events = decodeEvents(oracle.abi, oracle.registry, receipts);
    const writes = txs.reduce((n, tx) => n + tx.writes.length, 0);
    expect(events.length, tag("one event per write, multicall's inner writes included")).toBe(writes);
    firstEnabled(events, positions);
    for (const r of receipts) if (BigInt(r.blockNumber) > lastWriteBlock) lastWriteBlock = BigInt(r.blockNumber);
    return { receipts, events };
  }

  async function waitForIndexed(block: bigint) {
    await waitFor(
      `the service to index block ${block}`,
      async () => {
        const indexed = await indexedBlock(oracle);
        return indexed !== undefined && indexed >= block ? indexed : undefined;
      },
      180_000,
    );
  }

  function drawChecks(n: number): { specs: CheckSpec[]; urls: string[] } {
    const specs = Array.from({ length: n }, () => randomCheck(queryRng, pools, generator.history));
    return { specs, urls: specs.map((s) => checkUrl(queryRng, CHAIN_ID, s)) };
  }

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: CHAIN_ID, blockTime: 1 });
    await roomyBlocks(anvil.url);
    const installed = await installRegistries(anvil.url);
    expect(installed.v2.toLowerCase(), tag("registry address")).toBe(addresses.v2.address.toLowerCase());
    const accounts = await chainClient(anvil.url).getAddresses();
    expect(accounts.length, tag("funded accounts")).toBeGreaterThanOrEqual(20);
    pools = makePools(accounts);
    generator = new WriteGenerator(writeRng, pools);
    // The installer sent transactions too: start at each sender's next nonce.
    for (const sender of pools.senders) {
      generator.nonces.set(
        sender,
        await chainClient(anvil.url).getTransactionCount({ address: sender, blockTag: "pending" }),
      );
    }
    oracle = { rpcUrl: anvil.url, serviceUrl: "", registry: installed.v2, abi: abis.v2, chainId: CHAIN_ID };
    // Every wallet any write touched, one that none did, the odd addresses, and a token contract.
    wallets = [
      ...new Set(
        [...pools.senders, ...pools.delegates, accounts[14]!, zeroAddress, ADDRESS_1, CONTRACTS[0]!].map((a) =>
          a.toLowerCase(),
        ),
      ),
    ] as Address[];
  });

  afterAll(async () => {
    await service?.stop();
    await anvil?.stop();
  });

  it(`phase 1: ${PHASE1_TXS} random transactions, then ${PHASE1_CHECKS} checks and every listing`, async () => {
    const t0 = Date.now();
    const txs = Array.from({ length: PHASE1_TXS }, () => generator.nextTx());
    const { receipts, events } = await write(txs);
    const blocks = new Set(receipts.map((r) => r.blockNumber));
    const perBlock = new Map<bigint, number>();
    for (const e of events) perBlock.set(e.block, (perBlock.get(e.block) ?? 0) + 1);
    console.log(
      `[v2 differential] phase 1: ${txs.length} transactions, ${events.length} writes in ${blocks.size} blocks (up ` +
        `to ${Math.max(...perBlock.values())} per block, last block ${lastWriteBlock}) in ${Date.now() - t0} ms; ` +
        `stream: ${JSON.stringify(generator.stats)}`,
    );

    // The stream covers what it is meant to cover.
    const s = generator.stats;
    for (const name of [
      "delegateAll",
      "delegateContract",
      "delegateERC721",
      "delegateERC20",
      "delegateERC1155",
      "first enables",
      "re-enables of revoked",
      "disables of never-enabled",
      "revokes of enabled",
      "revokes by amount 0",
      "amount changes",
      "enables of enabled",
      "self-delegations",
      "non-empty rights",
      "tokenId near 2^256-1",
      "multicall batches",
    ]) {
      expect(s[name] ?? 0, tag(`the write stream has no "${name}"`)).toBeGreaterThan(0);
    }
    expect(events.length, tag("at least 2,000 writes")).toBeGreaterThanOrEqual(2000);
    expect(Math.max(...perBlock.values()), tag("several writes in one block")).toBeGreaterThan(1);

    const t1 = Date.now();
    service = await startService({ rpc: { [CHAIN_ID]: anvil!.url } });
    oracle.serviceUrl = service.url;
    // Tens of thousands of requests: with the service's key, the keyless limit does not apply.
    oracle.headers = service.headers;
    await waitForIndexed(lastWriteBlock);
    console.log(`[v2 differential] service ready and indexed past block ${lastWriteBlock} in ${Date.now() - t1} ms`);

    const t2 = Date.now();
    const { specs, urls } = drawChecks(PHASE1_CHECKS);
    const checks = await compareChecks(oracle, v2Checks, specs, urls, { minBlock: lastWriteBlock });
    const listings = await compareListings(
      oracle,
      v2Listings(positions),
      wallets,
      { minBlock: lastWriteBlock },
      queryRng,
    );
    console.log(
      `[v2 differential] phase 1: ${checks.compared} checks compared (${checks.positive} true/non-zero), ` +
        `${listings.compared} listings (${listings.records} records) in ${Date.now() - t2} ms`,
    );
    const mismatches: Mismatch[] = [...checks.mismatches, ...listings.mismatches];
    expect(mismatches.length, report(SEED, "phase 1", mismatches)).toBe(0);
    expect(checks.compared, tag("checks compared")).toBe(PHASE1_CHECKS);
    expect(listings.compared, tag("listings compared")).toBe(wallets.length);
    // A differential test whose answers are all false proves little.
    expect(checks.positive, tag("share of true/non-zero answers")).toBeGreaterThan(PHASE1_CHECKS * 0.2);
  });

  it(`phase 2: ${PHASE2_WAVES * PHASE2_TXS_PER_WAVE} more \
transactions indexed live, checked during and after`, async () => {
    expect(service, tag("phase 1 started the service")).toBeDefined();
    const t0 = Date.now();
    const before = lastWriteBlock;
    const mismatches: Mismatch[] = [];
    let liveCompared = 0;
    let livePositive = 0;

    // Writes arrive in waves while checks run against whatever block the service has reached:
    // each answer is compared with the contract at the block the answer reports.
    let writing = true;
    const writer = (async () => {
      try {
        for (let wave = 0; wave < PHASE2_WAVES; wave++) {
          await write(Array.from({ length: PHASE2_TXS_PER_WAVE }, () => generator.nextTx()));
        }
      } finally {
        writing = false;
      }
    })();
    const live = (async () => {
      while (writing) {
        const { specs, urls } = drawChecks(200);
        const result = await compareChecks(oracle, v2Checks, specs, urls, { minBlock: before }, 16);
        liveCompared += result.compared;
        livePositive += result.positive;
        mismatches.push(...result.mismatches);
      }
    })();
    await Promise.all([writer, live]);
    console.log(
      `[v2 differential] phase 2: ${PHASE2_WAVES * PHASE2_TXS_PER_WAVE} transactions up to block ${lastWriteBlock} ` +
        `in ${Date.now() - t0} ms; ${liveCompared} checks compared while indexing live (${livePositive} true/non-zero)`,
    );

    await waitForIndexed(lastWriteBlock);
    const t1 = Date.now();
    const { specs, urls } = drawChecks(PHASE2_CHECKS);
    const checks = await compareChecks(oracle, v2Checks, specs, urls, { minBlock: lastWriteBlock });
    const listings = await compareListings(
      oracle,
      v2Listings(positions),
      wallets,
      { minBlock: lastWriteBlock },
      queryRng,
    );
    console.log(
      `[v2 differential] phase 2: ${checks.compared} checks compared (${checks.positive} true/non-zero), ` +
        `${listings.compared} listings (${listings.records} records) in ${Date.now() - t1} ms; stream: ` +
        `${JSON.stringify(generator.stats)}`,
    );
    mismatches.push(...checks.mismatches, ...listings.mismatches);
    expect(mismatches.length, report(SEED, "phase 2", mismatches)).toBe(0);
    expect(checks.compared, tag("checks compared")).toBe(PHASE2_CHECKS);
    expect(listings.compared, tag("listings compared")).toBe(wallets.length);
    expect(liveCompared, tag("checks compared during live indexing")).toBeGreaterThan(0);
  });
});
