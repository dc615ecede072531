/**
 * Reorganizations and the answers at the blocks they replace, on anvil's chain 31337,
 * where Ponder's finality depth is 30: it holds a block as final once the tip is 30 past it, and
 * moves its final block (to tip − 30) only when the tip is 60 past the last one.
 *
 * - The control: a reorganization within the finality depth (evm_snapshot, a few blocks of writes,
 *   evm_revert, a longer branch of other writes). Ponder reverts it; no alarm is raised, and every
 *   check and listing asked at a replaced height (`blockNumber`) equals the new branch's eth_call.
 * - A reorganization deeper than the finality depth: ~30 blocks of writes, then enough blocks that
 *   Ponder finalizes them, evm_revert and a longer branch of other writes. Ponder cannot revert
 *   below its final block. Every kind of answer is sampled all through, on `npm start` and (on
 *   Postgres) on an `npm run serve` replica: each 200 is the old branch's answer as indexed before
 *   the revert (never a mix of both branches), and once the alarm is raised every answer for the
 *   chain is `503 chain_reorganized` naming the replaced block and the fix. The log says DEEP
 *   REORGANIZATION, /registry/chains `reorganized`, the replica's /metrics
 *   `delegation_chain_reorganized 1`; detection takes at most a few REORG_CHECK_SECONDS once the
 *   chain holds a replacement of a checked block; and the alarm outlives a restart of `npm start`.
 *
 * Reproduce a failure with the seed it prints: SEED=<n> npx vitest run test/deep-reorg.test.ts
 */
import { type Address, type Hex, toHex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Anvil, revertChain, snapshotChain, startAnvil } from "../devkit/anvil";
import { type Answer, ask } from "../devkit/ask";
import { type Mismatch, type Oracle, report } from "../devkit/compare";
import { compareChecks } from "../devkit/compare-checks";
import { abis, installRegistries } from "../devkit/oracle";
import { waitFor } from "../devkit/processes";
import { chooseSeed, Rng } from "../devkit/random";
import { chainClient, ethCalls, rpc } from "../devkit/rpc";
import { type Receipt, roomyBlocks, type SendOptions, sendAll, type TxRequest } from "../devkit/send";
import { plainOutput, type Replica, type Service, startReplica, startService } from "../devkit/service";
import { encodeCall, type RegistryCall } from "../devkit/v1/calls";
import {
  type CheckSpec as V1CheckSpec,
  v1Checks,
  checkUrl as v1CheckUrl,
  randomCheck as v1RandomCheck,
} from "../devkit/v1/checks";
import {
  type Delegation,
  type Pools,
  CONTRACTS as V1_CONTRACTS,
  TOKEN_IDS as V1_TOKEN_IDS,
} from "../devkit/v1/generate";
import { type CheckSpec, checkUrl, randomCheck, v2Checks } from "../devkit/v2/checks";
import { makePools, txRequest, CONTRACTS as V2_CONTRACTS, WriteGenerator } from "../devkit/v2/generate";
import { expectProblem } from "./helpers/answers";
import { compareListings } from "./helpers/compare-listings";
import type { ListedChain } from "./helpers/listed-chain";
import type { Position } from "./helpers/position";
import { v1Listings } from "./helpers/v1/listing";
import { decodeEvents, firstEnabled } from "./helpers/v2/events";
import { v2Listings } from "./helpers/v2/listing";

const SEED = chooseSeed();
console.log(`[deep-reorg] SEED=${SEED} (rerun with SEED=${SEED} npx vitest run test/deep-reorg.test.ts)`);
const tag = (text: string) => `[SEED=${SEED}] ${text}`;
const CHAIN_ID = 31337;
/** Ponder 0.16's finality depth for chain 31337 (ponder/src/utils/finality.ts). */
const FINALITY = 30n;
/** How often the service compares the hashes of the blocks it indexed with the chain's. */
const REORG_CHECK_SECONDS = 1;
/**
 * The longest detection may take once the chain holds a replacement of a checked block: the wait
 * for the next round, and the round itself (a query and a few eth_getBlockByNumber) on a busy machine.
 */
const DETECTION_MS = REORG_CHECK_SECONDS * 1000 + 3_000;
/** A replica reads the alarms every second: the longest after the indexer raised one until it refuses too. */
const REPLICA_FOLLOWS_MS = 2_500;

/** One request of every kind the API answers for a chain. */
type Probe = { name: string; path: string; body?: string };
/** One sampled answer: when it was asked, and what it was. */
type Sample = { probe: number; sentAt: number; status: number; code: string | undefined; body: string };

/** The problem code of an answer, if it is a problem. */
const codeOf = (a: Answer) => {
  if (!(a.headers.get("content-type") ?? "").startsWith("application/problem+json")) return undefined;
  return (JSON.parse(a.text) as { code?: string }).code;
};

describe("reorganizations: answers at replaced heights, and none from a mix of branches", () => {
  let anvil: Anvil;
  let service: Service;
  let replica: Replica | undefined;
  let registries: { v1: Address; v2: Address };
  let accounts: Address[];
  let client: ReturnType<typeof chainClient>;
  const writeRng = new Rng(SEED);
  const queryRng = new Rng(SEED ^ 0x68e31da4);
  let pools: ReturnType<typeof makePools>;
  let generator: WriteGenerator;
  /** v1 writes come from accounts that send no v2 write, so that each stream keeps its own nonces. */
  let v1Pools: Pools;
  const v1Nonces = new Map<Address, number>();
  const v1Delegations: Delegation[] = [];
  /** Receipts of the writes on the chain as it is now (a replaced branch's are dropped). */
  let receipts: Receipt[] = [];

  /** A seeded v1 call of `vault`: delegations of each type (some set false), and revocations of each kind. */
  function nextV1Call(vault: Address): RegistryCall {
    const rng = writeRng;
    const delegate = rng.pick(v1Pools.delegates);
    const contract = rng.pick(v1Pools.contracts);
    const value = rng.chance(0.85);
    const others = v1Pools.eoas.filter((a) => a !== vault);
    return rng.weighted<RegistryCall>([
      [28, { fn: "delegateForAll", delegate, value }],
      [28, { fn: "delegateForContract", delegate, contract, value }],
      [28, { fn: "delegateForToken", delegate, contract, tokenId: rng.weighted(v1Pools.tokenIds), value }],
      [8, { fn: "revokeDelegate", delegate }],
      [4, { fn: "revokeSelf", vault: rng.pick(others) }],
      [2, { fn: "revokeAllDelegates" }],
    ]);
  }

  /** `n` transactions, v2 and v1 mixed: each a direct write of the seeded streams. */
  function nextTxs(n: number): TxRequest[] {
    return Array.from({ length: n }, () => {
      if (writeRng.chance(0.6)) return txRequest(registries.v2, abis.v2, generator.nextTx());
      const from = writeRng.pick(v1Pools.eoas);
      const call = nextV1Call(from);
      if ("value" in call) v1Delegations.push({ ...call, vault: from });
      const nonce = v1Nonces.get(from)!;
      v1Nonces.set(from, nonce + 1);
      return { from, to: registries.v1, data: encodeCall(abis.v1, call), gas: 400_000n, nonce };
    });
  }

  /** Sends the transactions in `blocks` batches `spreadMs` apart (a block's time); all must succeed. */
  async function write(txs: TxRequest[], blocks: number, spreadMs = 1_000): Promise<Receipt[]> {
    const options: SendOptions = { batchSize: Math.ceil(txs.length / blocks), spreadMs, timeoutMs: 120_000 };
    const sent = await sendAll(anvil.url, txs, SEED, options);
    const failed = sent.filter((r) => r.status !== "0x1").map((r) => r.transactionHash);
    expect(failed, tag("transactions that reverted")).toEqual([]);
    receipts.push(...sent);
    return sent;
  }

  /** Each sender's next nonce, from the chain (a revert takes its replaced transactions' back). */
  async function syncNonces() {
    for (const sender of [...pools.senders, ...v1Pools.eoas]) {
      const nonce = await client.getTransactionCount({ address: sender, blockTag: "pending" });
      if (v1Pools.eoas.includes(sender)) v1Nonces.set(sender, nonce);
      else generator.nonces.set(sender, nonce);
    }
  }

  /** Every process serving the chain: the indexer's own API, and the replica on Postgres. */
  const processes = () => [service.url, ...(replica ? [replica.url] : [])];

  /** Waits until every process answers at `block` or later. */
  async function untilIndexed(block: bigint, what: string) {
    for (const base of processes()) {
      await waitFor(
        `${base} to index block ${block} (${what})`,
        async () => {
          const a = await ask(base, probes()[0]!.path, { headers: service.headers, reask: false });
          return a.status === 200 && a.block !== undefined && a.block >= block ? true : undefined;
        },
        120_000,
      );
    }
  }

  const lastBlock = (rs: Receipt[]) =>
    rs.reduce((max, r) => (BigInt(r.blockNumber) > max ? BigInt(r.blockNumber) : max), 0n);

  let probeList: Probe[] | undefined;
  /** One request of each kind for chain 31337 (made once, from the writes so far). */
  function probes(): Probe[] {
    if (probeList) return probeList;
    const c = `chainId=${CHAIN_ID}`;
    const v2 = randomCheck(queryRng, pools, generator.history);
    const v1 = v1RandomCheck(queryRng, v1Pools, v1Delegations);
    const wallet = pools.senders[0]!;
    const vault = v1Pools.eoas[0]!;
    const past = lastBlock(receipts.slice(0, 5));
    const batch = (checks: unknown[]) => JSON.stringify({ chainId: CHAIN_ID, checks });
    probeList = [
      { name: "v2 check", path: checkUrl(queryRng, CHAIN_ID, v2) },
      { name: "v1 check", path: v1CheckUrl(queryRng, CHAIN_ID, v1) },
      { name: "v2 check/all", path: `/registry/v2/check/all?${c}&to=${pools.delegates[1]}&from=${wallet}` },
      {
        name: "v1 check/token",
        path: `/registry/v1/check/token?${c}&delegate=${vault}&vault=${vault}&contract=${V1_CONTRACTS[0]}&tokenId=1`,
      },
      { name: "v2 listing", path: `/registry/v2/${wallet}?${c}` },
      { name: "v1 listing", path: `/registry/v1/${vault}?${c}` },
      { name: "v2 listing page", path: `/registry/v2/${wallet}?${c}&limit=2` },
      { name: "v1 listing page", path: `/registry/v1/${vault}?${c}&limit=2` },
      { name: "v2 contract listing", path: `/registry/v2/contract/${V2_CONTRACTS[0]}?${c}` },
      { name: "v2 contract listing, a token", path: `/registry/v2/contract/${V1_CONTRACTS[0]}?${c}&tokenId=1` },
      { name: "v1 contract listing", path: `/registry/v1/contract/${V1_CONTRACTS[0]}?${c}&limit=5` },
      { name: "v2 history", path: `/registry/v2/history?${c}&limit=20` },
      { name: "v1 history", path: `/registry/v1/history?${c}` },
      { name: "v2 wallet history", path: `/registry/v2/${wallet}/history?${c}` },
      { name: "v1 wallet history", path: `/registry/v1/${vault}/history?${c}&limit=3` },
      { name: "v2 check at a past block", path: `${checkUrl(queryRng, CHAIN_ID, v2)}&blockNumber=${past}` },
      { name: "v1 listing at a past block", path: `/registry/v1/${vault}?${c}&blockNumber=${past}` },
      { name: "v2 history to a past block", path: `/registry/v2/history?${c}&toBlock=${past}` },
      {
        name: "v2 batch",
        path: "/registry/v2/check",
        body: batch([
          { type: "all", to: pools.delegates[1], from: wallet },
          { type: "erc721", to: v2.to, from: v2.from, contract: v2.contract, tokenId: v2.tokenId.toString() },
        ]),
      },
      {
        name: "v1 batch at a past block",
        path: "/registry/v1/check",
        body: JSON.stringify({
          chainId: CHAIN_ID,
          blockNumber: past.toString(),
          checks: [{ type: "all", delegate: v1.delegate, vault: v1.vault }],
        }),
      },
    ];
    return probeList;
  }

  /** Asks a probe of a process once, as it comes. */
  const askProbe = (base: string, p: Probe) =>
    ask(base, p.path, {
      headers: p.body ? { ...service.headers, "Content-Type": "application/json" } : service.headers,
      method: p.body ? "POST" : "GET",
      body: p.body,
      reask: false,
      timeoutMs: 0,
    });

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: CHAIN_ID });
    await roomyBlocks(anvil.url);
    registries = await installRegistries(anvil.url);
    client = chainClient(anvil.url);
    accounts = await client.getAddresses();
    pools = makePools(accounts);
    generator = new WriteGenerator(writeRng, pools);
    const v1Vaults = accounts.slice(14, 20).map((a) => a.toLowerCase() as Address);
    v1Pools = {
      eoas: v1Vaults,
      wallets: [],
      delegates: [...v1Vaults, ...accounts.slice(0, 4).map((a) => a.toLowerCase() as Address)],
      contracts: [...V1_CONTRACTS],
      tokenIds: V1_TOKEN_IDS,
    };
    await syncNonces();
    // The seeded history before any reorganization.
    await write(nextTxs(160), 4);

    service = await startService({
      rpc: { [CHAIN_ID]: anvil.url },
      env: { REORG_CHECK_SECONDS: String(REORG_CHECK_SECONDS) },
    });
    if (process.env.DATABASE_URL) replica = await startReplica(service);
    await untilIndexed(lastBlock(receipts), "the seeded writes");
  });

  afterAll(async () => {
    await replica?.stop();
    await service?.stop();
    await anvil?.stop();
  });

  it("a reorganization within the finality depth raises no alarm; answers at the replaced heights (blockNumber) \
equal the new branch's eth_call", async () => {
    const snapshot = await snapshotChain(anvil.url);
    const fork = snapshot.block;
    const before = receipts.length;
    const onA = await write(nextTxs(40), 5);
    const tipA = lastBlock(onA);
    expect(tipA - fork, tag("the replaced branch stays well within the finality depth")).toBeLessThan(FINALITY / 2n);
    await untilIndexed(tipA, "branch A");

    const v2Specs: CheckSpec[] = Array.from({ length: 150 }, () => randomCheck(queryRng, pools, generator.history));
    const v1Specs: V1CheckSpec[] = Array.from({ length: 100 }, () => v1RandomCheck(queryRng, v1Pools, v1Delegations));
    const heights = Array.from({ length: Number(tipA - fork) }, (_, i) => fork + 1n + BigInt(i));
    const v2Oracle: Oracle = {
      rpcUrl: anvil.url,
      registry: registries.v2,
      abi: abis.v2,
      serviceUrl: "",
      chainId: CHAIN_ID,
    };
    const v1Oracle: Oracle = { ...v2Oracle, registry: registries.v1, abi: abis.v1 };
    /** The contract's answers to every check at every replaced height, on the chain as it is now. */
    const contractAnswers = async () => [
      ...(await ethCalls(
        v2Oracle,
        heights.flatMap((block) => v2Specs.map((s) => ({ ...v2Checks.call(s), block }))),
      )),
      ...(await ethCalls(
        v1Oracle,
        heights.flatMap((block) => v1Specs.map((s) => ({ ...v1Checks.call(s), block }))),
      )),
    ];
    const answersOnA = await contractAnswers();

    await revertChain(anvil.url, snapshot);
    receipts = receipts.slice(0, before);
    await syncNonces();
    await write(nextTxs(40), 5);
    const now = await client.getBlockNumber();
    await rpc(anvil.url, "anvil_mine", [toHex(tipA > now ? tipA - now + 3n : 3n)]);
    const headB = await client.getBlockNumber();
    expect(headB > tipA, tag("the new branch is longer")).toBe(true);
    await untilIndexed(headB, "branch B");
    expect(plainOutput(service), tag("Ponder reverted the replaced blocks")).toMatch(/Reorged block/);

    const answersOnB = await contractAnswers();
    const changed = answersOnA.filter((a, i) => String(a) !== String(answersOnB[i])).length;
    expect(changed, tag("checks whose answer at a replaced height differs between the branches")).toBeGreaterThan(0);

    const positions = firstEnabled(decodeEvents(abis.v2, registries.v2, receipts), new Map<Hex, Position>());
    const v2Wallets = [...new Set([...pools.senders, ...pools.delegates].map((a) => a.toLowerCase() as Address))];
    const v1Wallets = [...new Set(v1Pools.delegates)];
    const mismatches: Mismatch[] = [];
    let compared = 0;
    for (const block of heights) {
      for (const base of processes()) {
        const o2 = { ...v2Oracle, serviceUrl: base, headers: service.headers };
        const o1 = { ...v1Oracle, serviceUrl: base, headers: service.headers };
        const at = { block };
        const results = [
          await compareChecks(
            o2,
            v2Checks,
            v2Specs,
            v2Specs.map((s) => checkUrl(queryRng, CHAIN_ID, s)),
            at,
          ),
          await compareChecks(
            o1,
            v1Checks,
            v1Specs,
            v1Specs.map((s) => v1CheckUrl(queryRng, CHAIN_ID, s)),
            at,
          ),
          await compareListings(o2, v2Listings(positions), v2Wallets, at, queryRng),
          await compareListings(o1, v1Listings(), v1Wallets, at, queryRng),
        ];
        for (const r of results) {
          compared += r.compared;
          mismatches.push(...r.mismatches);
        }
      }
    }
    console.log(
      `[deep-reorg] shallow: fork ${fork}, branch A to ${tipA}, B to ${headB}; ${compared} answers at the ` +
        `${heights.length} replaced heights compared; ${changed} checks differ between the branches`,
    );
    expect(mismatches.length, report(SEED, "answers at the replaced heights", mismatches)).toBe(0);
    expect(compared).toBe(heights.length * processes().length * (250 + v2Wallets.length + v1Wallets.length));

    // No alarm: a few rounds of the watcher later, the chain is still live.
    await new Promise((ok) => setTimeout(ok, 3 * REORG_CHECK_SECONDS * 1000));
    expect(plainOutput(service), tag("no alarm")).not.toMatch(/DEEP REORGANIZATION/);
    for (const base of processes()) {
      const chains = JSON.parse(
        (await ask(base, "/registry/chains", { headers: service.headers })).text,
      ) as ListedChain[];
      expect(chains.find((ch) => ch.chainId === CHAIN_ID)?.status, tag(`${base}: /registry/chains`)).toBe("live");
    }
  });

  it("after a reorganization deeper than the finality depth no answer is a 200 from a mixed state: once the alarm \
is raised every answer for the chain is 503 chain_reorganized, on npm start, on a replica, and after a \
restart", async () => {
    // Blocks are mined by the test from here (interval mining stays paused after the snapshot): the old
    // branch's answers stay as they are while recorded.
    const snapshot = await snapshotChain(anvil.url, { blockTime: 0 });
    const fork = snapshot.block;
    const before = receipts.length;
    const miner = mineEvery(anvil.url, 200);
    const old = await write(nextTxs(96), 32, 250).finally(miner.stop);
    const lastOldWrite = lastBlock(old);
    // Enough blocks that Ponder finalizes the old branch's: its final block is over tip − 60 once it indexed the tip.
    await rpc(anvil.url, "anvil_mine", [toHex(2n * FINALITY + 10n)]);
    const oldTip = await client.getBlockNumber();
    await untilIndexed(oldTip, "the old branch");
    const finals = [...plainOutput(service).matchAll(/Finalized block.*?number=(\d+)/g)].map((m) => BigInt(m[1]!));
    const final = finals.reduce((max, b) => (b > max ? b : max), 0n);
    expect(final >= lastOldWrite, tag(`Ponder's final block ${final} holds the old branch (to ${lastOldWrite})`)).toBe(
      true,
    );
    const oldHashes = new Map<bigint, Hex>();
    for (let b = fork + 1n; b <= oldTip; b++) oldHashes.set(b, (await client.getBlock({ blockNumber: b })).hash);

    // The old branch's answers, as indexed: any 200 after the revert must be one of these.
    const all = probes();
    const oldAnswers = new Map<string, string[]>();
    for (const base of processes()) {
      const answers: string[] = [];
      for (const p of all) {
        const a = await askProbe(base, p);
        expect(a.status, tag(`${base}: ${p.name} before the revert: ${a.text.slice(0, 300)}`)).toBe(200);
        answers.push(a.text);
      }
      oldAnswers.set(base, answers);
    }

    // Sample every process from before the revert until well after the alarm.
    const samples = new Map<string, Sample[]>(processes().map((base) => [base, []]));
    let sampling = true;
    const samplers = processes().flatMap((base) =>
      Array.from({ length: 3 }, async (_, worker) => {
        for (let i = worker; sampling; i += 3) {
          const probe = i % all.length;
          const sentAt = Date.now();
          const a = await askProbe(base, all[probe]!);
          samples.get(base)!.push({ probe, sentAt, status: a.status, code: codeOf(a), body: a.text });
        }
      }),
    );
    const reached = new Map<bigint, number>();
    let alarmAt = 0;
    let revertedAt = 0;
    try {
      await new Promise((ok) => setTimeout(ok, 500));
      await revertChain(anvil.url, snapshot, { blockTime: 0 });
      revertedAt = Date.now();
      // The line is looked for from now on, while the new branch is written: the alarm may come
      // before the writes end, and is stamped when it appears, not when they end.
      const alarmSeen = waitFor(
        "the DEEP REORGANIZATION line",
        async () => (/DEEP REORGANIZATION/.test(plainOutput(service)) ? Date.now() : undefined),
        120_000,
      );
      alarmSeen.catch(() => {});
      // The revert takes anvil's clock back too; a real chain's new branch is as late as the old one
      // (and Ponder would not resume on a chain whose final block's time went back).
      await rpc(anvil.url, "evm_setNextBlockTimestamp", [toHex(Math.floor(Date.now() / 1000))]);
      receipts = receipts.slice(0, before);
      const heights = watchHeights(anvil.url, fork, reached);
      await syncNonces();
      const newMiner = mineEvery(anvil.url, 200);
      const onNew = await write(nextTxs(24), 8, 250).finally(newMiner.stop);
      const now = await client.getBlockNumber();
      await rpc(anvil.url, "anvil_mine", [toHex(oldTip - now + 5n)]);
      // The jump past the old tip is stamped here, not left to the watcher's next poll: the alarm
      // may come before that poll under load.
      await heights.poll();
      await client.setIntervalMining({ interval: 1 });
      alarmAt = await alarmSeen;
      heights.stop();
      expect(lastBlock(onNew) < oldTip, tag("the new branch's writes replace the old branch's")).toBe(true);
      // The replica follows, and every process is sampled a while after.
      await new Promise((ok) => setTimeout(ok, REPLICA_FOLLOWS_MS + 2_000));
    } finally {
      sampling = false;
      await Promise.all(samplers);
    }

    const line = plainOutput(service).match(/DEEP REORGANIZATION: (.*)/)![1]!;
    const [, number, indexedHash, chainHash, heldFinal] =
      line.match(
        new RegExp(
          "block (\\d+) was indexed as (0x[0-9a-f]{64}), but the chain now has (0x[0-9a-f]{64}) there.*" +
            "block (\\d+) as final",
        ),
      ) ?? [];
    expect(number, tag(`the log line names the replaced block: ${line}`)).toBeDefined();
    const replaced = BigInt(number!);
    expect(replaced > fork && replaced <= BigInt(heldFinal!), tag(`${line}: a replaced block, final`)).toBe(true);
    expect(indexedHash, tag("the hash indexed: the old branch's")).toBe(oldHashes.get(replaced));
    expect(chainHash, tag("the chain's hash: the new branch's")).toBe(
      (await client.getBlock({ blockNumber: replaced })).hash,
    );
    expect(line, tag("the log says how to recover")).toMatch(/re-indexed.*DATABASE_SCHEMA/);
    const replacedAt = reached.get(replaced);
    expect(replacedAt, tag(`the new branch reached block ${replaced} while watched`)).toBeDefined();
    const detectionMs = alarmAt - replacedAt!;
    console.log(
      `[deep-reorg] deep: fork ${fork}, old branch's writes to ${lastOldWrite}, its tip ${oldTip}, Ponder's final ` +
        `${final}; alarm for block ${replaced} ${detectionMs} ms after the new branch reached it ` +
        `(${alarmAt - revertedAt} ms after the revert)`,
    );
    expect(detectionMs, tag("detection time")).toBeLessThanOrEqual(DETECTION_MS);

    for (const [base, taken] of samples) {
      const problems: string[] = [];
      const refusedFrom = base === service.url ? alarmAt : alarmAt + REPLICA_FOLLOWS_MS;
      let refused = 0;
      for (const s of taken) {
        const p = all[s.probe]!;
        if (s.status === 200) {
          if (s.body !== oldAnswers.get(base)![s.probe])
            problems.push(`${p.name}: a 200 that is not the old branch's answer: ${s.body.slice(0, 200)}`);
          if (s.sentAt >= refusedFrom) problems.push(`${p.name}: a 200 ${s.sentAt - alarmAt} ms after the alarm`);
        } else if (s.status === 503 && s.code === "chain_reorganized") refused++;
        else if (!(s.status === 503 && s.code === "chain_syncing" && s.body.includes("replaced block")))
          // Before the alarm, the chain replacing the indexed block is refused too (api/watch/replaced-head.ts).
          problems.push(`${p.name}: ${s.status} ${s.body.slice(0, 200)}`);
      }
      console.log(`[deep-reorg] ${base}: ${taken.length} answers sampled, ${refused} refused`);
      expect(
        problems.slice(0, 10),
        tag(`${base}: ${problems.length} of ${taken.length} sampled answers wrong`),
      ).toEqual([]);
      expect(refused, tag(`${base}: answers refused after the alarm`)).toBeGreaterThan(all.length);
    }

    const refusesAll = async (base: string) => {
      for (const p of all) expectReorganized(await askProbe(base, p), replaced, `${base} ${p.name}`);
      const chains = JSON.parse(
        (await ask(base, "/registry/chains", { headers: service.headers })).text,
      ) as (ListedChain & {
        alarm: string | null;
      })[];
      const listed = chains.find((ch) => ch.chainId === CHAIN_ID);
      expect(listed?.status, tag(`${base}: /registry/chains`)).toBe("reorganized");
      expect(listed?.alarm, tag(`${base}: /registry/chains names the alarm`)).toContain(`block ${replaced} `);
    };
    for (const base of processes()) await refusesAll(base);
    if (replica) {
      const metrics = await (await fetch(`${replica.url}/metrics`)).text();
      expect(metrics, tag("the replica's /metrics")).toMatch(
        new RegExp(`^delegation_chain_reorganized\\{chain_id="${CHAIN_ID}"\\} 1$`, "m"),
      );
    }

    // The alarm outlives a restart: from the first answer of the restarted service on, none is a 200.
    await service.child.stop();
    const restartedAt = Date.now();
    await service.restart("listening");
    const meanwhile: string[] = [];
    await waitFor(
      "the restarted service to refuse the chain",
      async () => {
        const a = await askProbe(service.url, all[0]!);
        meanwhile.push(`${a.status} ${codeOf(a)}`);
        return codeOf(a) === "chain_reorganized" ? true : undefined;
      },
      180_000,
    );
    expect(
      meanwhile.filter((s) => s.startsWith("200")),
      tag(`answers after the restart: ${meanwhile}`),
    ).toEqual([]);
    console.log(`[deep-reorg] restarted: the chain refused ${Date.now() - restartedAt} ms after the restart began`);
    for (const base of processes()) await refusesAll(base);
  });
});

/** Asserts the alarm's problem: 503 problem+json chain_reorganized naming the replaced block and the fix. */
function expectReorganized(a: Answer, replaced: bigint, where: string) {
  const body = expectProblem(a, 503, "chain_reorganized", null);
  const what = `${where}: ${a.status} ${a.text.slice(0, 400)}`;
  expect(body.detail, what).toContain(`block ${replaced} was indexed as`);
  expect(body.detail, what).toMatch(/re-indexed: start the indexer on a new DATABASE_SCHEMA/);
  expect(a.block, `${what}: no X-Indexed-Block on a refusal`).toBeUndefined();
}

/** Mines a block every `ms` (interval mining is off meanwhile); `stop` resolves once the last is mined. */
function mineEvery(url: string, ms: number): { stop(): Promise<void> } {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await rpc(url, "evm_mine");
      await new Promise((ok) => setTimeout(ok, ms));
    }
  })();
  return {
    stop: () => {
      stopped = true;
      return loop;
    },
  };
}

/** Notes, every 50 ms, when the chain first reached each height past `from`. */
function watchHeights(
  url: string,
  from: bigint,
  reached: Map<bigint, number>,
): { poll(): Promise<void>; stop(): void } {
  let stopped = false;
  let seen = from;
  // Each block is stamped when a poll first saw it: at most one poll's latency after it was mined.
  const poll = async () => {
    // A plain call: viem's getBlockNumber shares one in-flight request among its callers.
    const head = BigInt((await rpc(url, "eth_blockNumber")) as string);
    const now = Date.now();
    for (let b = seen + 1n; b <= head; b++) if (!reached.has(b)) reached.set(b, now);
    if (head > seen) seen = head;
  };
  void (async () => {
    while (!stopped) {
      await poll();
      await new Promise((ok) => setTimeout(ok, 50));
    }
  })();
  return {
    poll,
    stop: () => {
      stopped = true;
    },
  };
}
