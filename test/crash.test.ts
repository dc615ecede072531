/**
 * Crashes: `kill -9` of the indexer during its backfill and again while it indexes live
 * writes, each time started again with the same command (same schema, same data). Afterwards every
 * answer equals the real registries' at the block the service reports (at moments too: the block
 * named is the newest at or before the moment's timestamp), and the history tables hold
 * exactly one row per registry event on chain: none lost, none twice.
 *
 * Reproduce a failure with the seed it prints: SEED=<n> npx vitest run test/crash.test.ts
 */

import { type Address, getAddress, type Hex, toHex, zeroAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { indexedBlock } from "../devkit/ask";
import { type Oracle, report } from "../devkit/compare";
import { compareChecks } from "../devkit/compare-checks";
import { abis, installRegistries } from "../devkit/oracle";
import { waitFor } from "../devkit/processes";
import { chooseSeed, Rng } from "../devkit/random";
import { chainClient, rpc } from "../devkit/rpc";
import { roomyBlocks, SPREAD, sendAll } from "../devkit/send";
import { plainOutput, type Service, startService } from "../devkit/service";
import { v1Checks, checkUrl as v1CheckUrl, randomCheck as v1RandomCheck } from "../devkit/v1/checks";
import * as v1 from "../devkit/v1/generate";
import { checkUrl, randomCheck, v2Checks } from "../devkit/v2/checks";
import { makePools, txRequest, WriteGenerator } from "../devkit/v2/generate";
import { compareListings } from "./helpers/compare-listings";
import { historyMismatches } from "./helpers/history";
import { blockStamps, v2MomentProblems } from "./helpers/moments";
import type { Position } from "./helpers/position";
import { type RpcProxy, startRpcProxy } from "./helpers/rpc-proxy";
import { v1Listings } from "./helpers/v1/listing";
import { type CompiledWallet, compileWallet, txRequest as v1TxRequest } from "./helpers/v1/wallet";
import { decodeEvents, firstEnabled } from "./helpers/v2/events";
import { v2Listings } from "./helpers/v2/listing";

const SEED = chooseSeed();
console.log(`[crash] SEED=${SEED} (rerun with SEED=${SEED} npx vitest run test/crash.test.ts)`);
const tag = (text: string) => `[SEED=${SEED}] ${text}`;
const CHAIN_ID = 31337;
/** Enough for a backfill that lasts a while: v1's revokeDelegate events each need a call trace. */
const BACKFILL = { v2: 1500, v1: 600 };
const LIVE = { v2: 300, v1: 150 };
const CHECKS = { v2: 1500, v1: 1000 };
const TRACE_DELAY_MS = 30;

describe("kill -9 of the indexer, then the same command again", () => {
  let anvil: Anvil;
  let service: Service;
  let rpcProxy: RpcProxy;
  let oracle: Oracle;
  let generator: WriteGenerator;
  let pools: ReturnType<typeof makePools>;
  let v1Generator: v1.WriteGenerator;
  let v1Pools: v1.Pools;
  let wallet: CompiledWallet;
  let accounts: Address[];
  let registries: { v1: Address; v2: Address };
  const positions = new Map<Hex, Position>();
  const rng = new Rng(SEED ^ 0x27d4eb2d);
  let lastWriteBlock = 0n;
  /** The block that holds both registries: moments are asked from its timestamp on. */
  let installedBlock: bigint;

  /** v2 writes, then v1 writes (from the same accounts: the nonces go on); each one must succeed. */
  async function write(counts: { v2: number; v1: number }): Promise<void> {
    const v2Txs = Array.from({ length: counts.v2 }, () => txRequest(registries.v2, abis.v2, generator.nextTx()));
    const v2Receipts = await sendAll(anvil.url, v2Txs, SEED, SPREAD);
    // The v1 helpers spell addresses in lowercase, the v2 ones checksummed.
    for (const [account, nonce] of generator.nonces) v1Generator.nonces.set(account.toLowerCase() as Address, nonce);
    const v1Txs = Array.from({ length: counts.v1 }, () => v1Generator.nextTx());
    const v1Receipts = await sendAll(
      anvil.url,
      v1Txs.map((tx) => v1TxRequest(tx, registries.v1, abis.v1, wallet)),
      SEED,
    );
    for (const [account, nonce] of v1Generator.nonces) generator.nonces.set(getAddress(account), nonce);
    const receipts = [...v2Receipts, ...v1Receipts];
    expect(
      receipts.filter((r) => r.status !== "0x1").map((r) => r.transactionHash),
      tag("reverted writes"),
    ).toEqual([]);
    firstEnabled(decodeEvents(abis.v2, registries.v2, v2Receipts), positions);
    for (const r of receipts) if (BigInt(r.blockNumber) > lastWriteBlock) lastWriteBlock = BigInt(r.blockNumber);
  }

  const indexed = () => indexedBlock({ ...oracle, serviceUrl: service.url, headers: service.headers });

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: CHAIN_ID });
    await roomyBlocks(anvil.url);
    registries = await installRegistries(anvil.url);
    installedBlock = await chainClient(anvil.url).getBlockNumber();
    accounts = await chainClient(anvil.url).getAddresses();
    // Two contract wallets for v1's calls through wallets, deployed by the last account.
    wallet = compileWallet();
    const deployer = accounts[19]!;
    const deployerNonce = await chainClient(anvil.url).getTransactionCount({ address: deployer, blockTag: "pending" });
    const deployed = await sendAll(
      anvil.url,
      [0, 1].map((i) => ({ from: deployer, data: wallet.bytecode, gas: 1_500_000n, nonce: deployerNonce + i })),
      SEED,
    );
    pools = makePools(accounts);
    generator = new WriteGenerator(new Rng(SEED), pools);
    v1Pools = v1.makePools(
      accounts,
      deployed.map((r) => getAddress(r.contractAddress!)),
    );
    v1Generator = new v1.WriteGenerator(new Rng(SEED ^ 0x165667b1), v1Pools);
    for (const a of accounts)
      generator.nonces.set(a, await chainClient(anvil.url).getTransactionCount({ address: a, blockTag: "pending" }));
    oracle = {
      rpcUrl: anvil.url,
      serviceUrl: "",
      registry: registries.v2,
      abi: abis.v2,
      chainId: CHAIN_ID,
    };
    await write(BACKFILL);
    // Ponder backfills up to its finality depth below the head (30 blocks for this chain) and
    // indexes the rest live: these writes must lie below it to make a backfill.
    await rpc(anvil.url, "anvil_mine", [toHex(40)]);
  });

  afterAll(async () => {
    await service?.stop();
    await rpcProxy?.close();
    await anvil?.stop();
  });

  // One scenario, not two tests: the live crash is of the service that recovered from the first.
  it("killed during its backfill, then while it indexes live writes: each time started again, it catches up \
and answers as the chain does", async () => {
    // Killed during its backfill. Call traces (one per v1 revokeDelegate transaction) come slowly,
    // as from a busy archive node: the backfill lasts long enough to be killed in its middle.
    rpcProxy = await startRpcProxy(anvil.url, async (calls) => {
      if (calls.some((c) => c.method.startsWith("debug_trace")))
        await new Promise((ok) => setTimeout(ok, TRACE_DELAY_MS));
      return undefined;
    });
    service = await startService({ rpc: { [CHAIN_ID]: rpcProxy.url }, until: "listening" });
    const progress = await waitFor(
      "the backfill to make progress",
      async () => {
        const status = (await (await fetch(`${service.url}/status`)).json()) as Record<
          string,
          { block?: { number: number } }
        >;
        const block = Object.values(status)[0]?.block?.number ?? 0;
        return block > 0 ? block : undefined;
      },
      120_000,
    );
    // Killed at a seeded moment of the backfill, before it is done.
    await new Promise((ok) => setTimeout(ok, rng.int(2_000)));
    const readyBeforeKill = (await fetch(`${service.url}/ready`)).status;
    await service.kill();
    console.log(
      `[crash] killed during the backfill at block ${progress} of ${lastWriteBlock} (ready: ${readyBeforeKill})`,
    );
    expect(readyBeforeKill, tag("the backfill was still running when killed")).toBe(503);

    await service.restart();
    expectStartedAtOnce("killed");
    await verify("after the backfill crash");

    // Killed while it indexes live writes (verify stopped it: started again first).
    await service.restart();
    expectStartedAtOnce("stopped");
    const head = await chainClient(anvil.url).getBlockNumber();
    const writing = write(LIVE);
    // Killed once it has indexed some of the new blocks.
    await waitFor(
      "the indexer to index some of the live writes",
      async () => {
        const block = await indexed();
        return block !== undefined && block > head + 1n ? block : undefined;
      },
      120_000,
    );
    await service.kill();
    await writing;
    console.log(`[crash] killed during live indexing; writes went on to block ${lastWriteBlock}`);
    await service.restart();
    expectStartedAtOnce("killed");
    await verify("after the live crash");
  });

  /**
   * The restart did not wait for the schema's lock to expire (15 to 25 s). Stopped: Ponder's own
   * exit unlocked it (ponder/ponder-0.16.10.ts, leaveSigtermToPonder), on either database. Killed:
   * on PGlite, the launcher released the killed Ponder's lock (scripts/launcher/dead-ponder.ts); on
   * Postgres, Ponder's wait stays.
   */
  function expectStartedAtOnce(before: "stopped" | "killed"): void {
    const said = plainOutput(service);
    if (before === "killed") {
      if (process.env.DATABASE_URL) return;
      expect(said, tag("the killed indexer's lock released")).toContain("The indexer before this one was killed");
    }
    expect(said, tag(`after it was ${before}, the lock not waited for`)).not.toContain("Schema is locked");
  }

  /** Checks, listings and both registries' history against the chain, once indexed past the last write. */
  async function verify(label: string): Promise<void> {
    await waitFor(
      "the indexer to reach the last write",
      async () => {
        const block = await indexed();
        return block !== undefined && block >= lastWriteBlock ? block : undefined;
      },
      120_000,
    );
    const o = { ...oracle, serviceUrl: service.url, headers: service.headers };
    const specs = Array.from({ length: CHECKS.v2 }, () => randomCheck(rng, pools, generator.history));
    const urls = specs.map((s) => checkUrl(rng, CHAIN_ID, s));
    const checks = await compareChecks(o, v2Checks, specs, urls, { minBlock: lastWriteBlock });
    const wallets = [
      ...new Set([...pools.senders, ...pools.delegates, zeroAddress].map((a) => a.toLowerCase())),
    ] as Address[];
    const listings = await compareListings(o, v2Listings(positions), wallets, { minBlock: lastWriteBlock }, rng);
    const o1 = { ...o, registry: registries.v1, abi: abis.v1 };
    const v1Specs = Array.from({ length: CHECKS.v1 }, () => v1RandomCheck(rng, v1Pools, v1Generator.delegations));
    const v1Urls = v1Specs.map((s) => v1CheckUrl(rng, CHAIN_ID, s));
    const v1CheckResult = await compareChecks(o1, v1Checks, v1Specs, v1Urls, { minBlock: lastWriteBlock });
    const v1Wallets = [...new Set([...v1Pools.eoas, ...v1Pools.wallets, ...v1Pools.delegates])];
    const v1ListingResult = await compareListings(o1, v1Listings(), v1Wallets, { minBlock: lastWriteBlock }, rng);
    expect(checks.compared, tag(`${label}: v2 checks compared`)).toBe(CHECKS.v2);
    expect(checks.positive, tag(`${label}: true/non-zero v2 answers`)).toBeGreaterThan(CHECKS.v2 * 0.1);
    expect(listings.compared, tag(`${label}: v2 listings compared`)).toBe(wallets.length);
    expect(v1CheckResult.compared, tag(`${label}: v1 checks compared`)).toBe(CHECKS.v1);
    expect(v1CheckResult.positive, tag(`${label}: true v1 answers`)).toBeGreaterThan(CHECKS.v1 * 0.05);
    expect(v1ListingResult.compared, tag(`${label}: v1 listings compared`)).toBe(v1Wallets.length);
    const mismatches = [
      ...checks.mismatches,
      ...listings.mismatches,
      ...v1CheckResult.mismatches,
      ...v1ListingResult.mismatches,
    ];
    expect(mismatches.length, report(SEED, label, mismatches)).toBe(0);
    // Moments, among them the blocks mined without events: each one's block told again after the crash.
    const stamp = blockStamps(anvil.url);
    const [from, to] = await Promise.all([stamp(installedBlock), stamp(lastWriteBlock)]);
    const moments = await v2MomentProblems({
      base: service.url,
      headers: service.headers,
      rpcUrl: anvil.url,
      registry: registries.v2,
      chainId: CHAIN_ID,
      rng,
      pools,
      history: generator.history,
      from,
      to,
      count: 12,
    });
    expect(moments, tag(`${label}: answers at moments`)).toEqual([]);

    // PGlite admits one process: the history is read with the service stopped.
    await service.child.stop();
    const history = await historyMismatches(service, anvil.url, registries);
    expect(history.events.v2, tag(`${label}: v2 events on chain`)).toBeGreaterThan(BACKFILL.v2);
    expect(history.events.v1, tag(`${label}: v1 events on chain`)).toBeGreaterThan(BACKFILL.v1 / 2);
    expect(history.mismatches, tag(`${label}: history rows against the chain's logs`)).toEqual([]);
  }
});
