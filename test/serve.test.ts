/**
 * API processes apart from the indexer (`npm run serve`): two of them over the
 * indexer's Postgres tables, each worker of each, answer every check and listing exactly as the real
 * DelegateRegistry does at the block they report, before and after a reorganization, exactly as the
 * in-Ponder API does, and take the indexer's keys.
 * Postgres only: PGlite belongs to the indexer's process.
 *
 * Reproduce a failure with the seed it prints: SEED=<n> DATABASE_URL=… npx vitest run test/serve.test.ts
 */
import { get as httpGet, type IncomingMessage } from "node:http";
import pg from "pg";
import { Client } from "undici";
import { type Address, type Hex, toHex, zeroAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPLICA_CONNECTION } from "../api/replica/store";
import { type Anvil, revertChain, snapshotChain, startAnvil } from "../devkit/anvil";
import { ask, indexedBlock, untilIndexed } from "../devkit/ask";
import { type Mismatch, type Oracle, report } from "../devkit/compare";
import { compareChecks } from "../devkit/compare-checks";
import { abis, installRegistries } from "../devkit/oracle";
import { pool } from "../devkit/pool";
import { waitFor } from "../devkit/processes";
import { chooseSeed, Rng } from "../devkit/random";
import { callView, chainClient, rpc } from "../devkit/rpc";
import { type Receipt, roomyBlocks, SPREAD, sendAll, sendWrite } from "../devkit/send";
import { plainOutput, type Replica, type Service, startReplica, startService } from "../devkit/service";
import { type CheckSpec, checkUrl, randomCheck, v2Checks } from "../devkit/v2/checks";
import { makePools, txRequest, WriteGenerator } from "../devkit/v2/generate";
import { PONDER_STATE_TABLES } from "../ponder/ponder-0.16.10";
import { compareListings } from "./helpers/compare-listings";
import { historyMismatches } from "./helpers/history";
import { blockStamps, momentProblem } from "./helpers/moments";
import type { Position } from "./helpers/position";
import { untilFresh } from "./helpers/until-fresh";
import { decodeEvents, firstEnabled } from "./helpers/v2/events";
import { v2Listings } from "./helpers/v2/listing";

const SEED = chooseSeed();
console.log(`[serve] SEED=${SEED} (rerun with SEED=${SEED} npx vitest run test/serve.test.ts)`);
const tag = (text: string) => `[SEED=${SEED}] ${text}`;
const CHAIN_ID = 31337;
const TXS = 400;
const CHECKS = 2_000;
/** The replicas' worker counts: one process with two workers, one with a single worker. */
const WORKERS = [2, 1];

describe.runIf(process.env.DATABASE_URL)("npm run serve: API processes apart from the indexer", () => {
  let anvil: Anvil;
  let service: Service;
  const replicas: Replica[] = [];
  let oracle: Oracle;
  let wallets: Address[];
  const positions = new Map<Hex, Position>();
  let lastWriteBlock = 0n;
  const queryRng = new Rng(SEED ^ 0x2545f491);
  let specs: CheckSpec[];
  let accounts: Address[];
  let generator: WriteGenerator;
  let pools: ReturnType<typeof makePools>;
  let v1Registry: Address;
  let urls: string[];
  /** The first block with both registries: moments are asked from it on. */
  let installedBlock: bigint;
  /** Blocks with no registry event mined before the indexer started: followed by no one live. */
  let unfollowed: [bigint, bigint];
  /** The chain's newest block once the indexer caught up: every later block is followed live. */
  let liveFrom: bigint;

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: CHAIN_ID });
    await roomyBlocks(anvil.url);
    const installed = await installRegistries(anvil.url);
    installedBlock = (await chainClient(anvil.url).getBlockNumber()) + 1n;
    accounts = await chainClient(anvil.url).getAddresses();
    pools = makePools(accounts);
    generator = new WriteGenerator(new Rng(SEED), pools);
    v1Registry = installed.v1;
    oracle = { rpcUrl: anvil.url, serviceUrl: "", registry: installed.v2, abi: abis.v2, chainId: CHAIN_ID };
    const receipts = await sendWrites(TXS);
    firstEnabled(decodeEvents(abis.v2, installed.v2, receipts), positions);
    lastWriteBlock = newestBlock(receipts);
    wallets = [
      ...new Set([...pools.senders, ...pools.delegates, accounts[14]!, zeroAddress].map((a) => a.toLowerCase())),
    ] as Address[];
    specs = Array.from({ length: CHECKS }, () => randomCheck(queryRng, pools, generator.history));
    urls = specs.map((s) => checkUrl(queryRng, CHAIN_ID, s));
    // Twelve blocks without registry events, 7 s apart, before the indexer starts (backfilled).
    const beforeThem = await chainClient(anvil.url).getBlockNumber();
    await rpc(anvil.url, "anvil_mine", [toHex(12), toHex(7)]);
    unfollowed = [beforeThem + 1n, beforeThem + 12n];

    service = await startService({ rpc: { [CHAIN_ID]: anvil.url } });
    await waitFor("the indexer to reach the last write", async () => {
      const block = await indexedBlock({ ...oracle, serviceUrl: service.url, headers: service.headers });
      return block !== undefined && block >= lastWriteBlock ? block : undefined;
    });
    liveFrom = await chainClient(anvil.url).getBlockNumber();
    // The first replica is given the chain's RPC, where it reads the headers a moment's block needs.
    for (const [i, workers] of WORKERS.entries())
      replicas.push(
        await startReplica(service, {
          API_WORKERS: String(workers),
          ...(i === 0 ? { [`PONDER_RPC_URL_${CHAIN_ID}`]: anvil.url } : {}),
        }),
      );
  });

  /**
   * `compare` run on every worker of `replica` (`workers` of them) at once, each run over a single
   * kept-alive connection of its own: the connections are opened one after another, and the
   * cluster hands new connections to its workers in turn. That each run stayed on its connection,
   * and that each worker answered at least a whole run (checks and listings: one request each at
   * least), is checked from the replica's per-process counts. Fails on any run's mismatches.
   */
  async function onEveryWorker(
    replica: Replica,
    workers: number,
    compare: (o: Oracle, rng: Rng) => Promise<Mismatch[]>,
  ): Promise<void> {
    const served = async () =>
      new Map(
        [...(await scrape(replica)).matchAll(/^delegation_api_process_requests_total\{pid="(\d+)"\} (\d+)$/gm)].map(
          (m) => [m[1]!, Number(m[2])],
        ),
      );
    const before = await served();
    expect(before.size, tag(`${replica.url}: worker processes in /metrics`)).toBe(workers);
    const clients: { client: Client; connections: number }[] = [];
    for (let i = 0; i < workers; i++) {
      const pinned = { client: new Client(replica.url), connections: 0 };
      pinned.client.on("connect", () => pinned.connections++);
      expect((await ask(replica.url, "/health", { dispatcher: pinned.client, reask: false })).status).toBe(200);
      clients.push(pinned);
    }
    try {
      const runs = await Promise.all(
        clients.map(({ client }, i) =>
          compare(
            { ...oracle, serviceUrl: replica.url, headers: service.headers, dispatcher: client },
            new Rng(SEED + i),
          ),
        ),
      );
      for (const [i, mismatches] of runs.entries())
        expect(mismatches.length, report(SEED, `run ${i} of ${workers} on ${replica.url}`, mismatches)).toBe(0);
    } finally {
      await Promise.all(clients.map(({ client }) => client.close()));
    }
    const after = await served();
    expect(
      clients.map((c) => c.connections),
      tag(`${replica.url}: each run kept its one connection`),
    ).toEqual(clients.map(() => 1));
    expect(after.size, tag(`${replica.url}: worker processes in /metrics`)).toBe(workers);
    for (const [pid, count] of after) {
      expect(
        count - (before.get(pid) ?? 0),
        tag(`${replica.url}: requests answered by worker ${pid}`),
      ).toBeGreaterThanOrEqual(CHECKS + wallets.length);
    }
  }

  /** A replica's /metrics text. */
  const scrape = async (replica: Replica) => {
    const res = await fetch(`${replica.url}/metrics`);
    expect(res.status, tag("/metrics")).toBe(200);
    expect(res.headers.get("content-type"), tag("/metrics")).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.text();
  };

  /** `n` random v2 writes, all succeeded; resolves to the newest block among them. */
  /** `n` random v2 writes from the senders' current nonces, each checked to have succeeded. */
  async function sendWrites(n: number): Promise<Receipt[]> {
    for (const sender of pools.senders)
      generator.nonces.set(
        sender,
        await chainClient(anvil.url).getTransactionCount({ address: sender, blockTag: "pending" }),
      );
    const txs = Array.from({ length: n }, () => txRequest(oracle.registry, abis.v2, generator.nextTx()));
    const receipts = await sendAll(anvil.url, txs, SEED, SPREAD);
    expect(
      receipts.every((r) => r.status === "0x1"),
      tag("every write succeeded"),
    ).toBe(true);
    return receipts;
  }

  const newestBlock = (receipts: Receipt[]) =>
    receipts.reduce((max, r) => (BigInt(r.blockNumber) > max ? BigInt(r.blockNumber) : max), 0n);
  /** `n` random v2 writes; the newest block among them. */
  const writeBatch = async (n: number) => newestBlock(await sendWrites(n));

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await service?.stop();
    await anvil?.stop();
  });

  it("each worker of each replica answers every check and listing as the contract does at its block", async () => {
    for (const [r, replica] of replicas.entries()) {
      await onEveryWorker(replica, WORKERS[r]!, async (o, rng) => {
        const checks = await compareChecks(o, v2Checks, specs, urls, { minBlock: lastWriteBlock });
        const listings = await compareListings(o, v2Listings(positions), wallets, { minBlock: lastWriteBlock }, rng);
        expect(checks.compared, tag("checks compared")).toBe(CHECKS);
        expect(checks.positive, tag("true/non-zero answers among them")).toBeGreaterThan(CHECKS * 0.1);
        expect(listings.compared, tag("listings compared")).toBe(wallets.length);
        return [...checks.mismatches, ...listings.mismatches];
      });
    }
  });

  it("the replicas and the in-Ponder API give the same bodies, and the same problems for bad input", async () => {
    const paths = [
      ...urls.slice(0, 300),
      ...wallets.map((w) => `/registry/v2/${w}?chainId=${CHAIN_ID}`),
      ...wallets.map((w) => `/registry/v1/${w}?chainId=${CHAIN_ID}`),
      `/registry/v2/check/all?chainId=${CHAIN_ID}&to=0x12&from=${zeroAddress}`,
      `/registry/v2/check/erc20?chainId=10&to=${zeroAddress}&from=${zeroAddress}&contract=${zeroAddress}`,
      "/registry/v3/nothing",
      "/registry/chains",
    ];
    // A few requests in flight per process: a client holds at most 64 connections (api/http/server.ts).
    const bodies = async (base: string) =>
      pool(paths, 16, async (p) => {
        const res = await ask(base, p, { headers: service.headers, reask: false });
        // The chains listing reports the block indexed now and its age, which move as anvil mines.
        const body = res.text
          .replace(/"indexedBlock":\d+/g, '"indexedBlock":…')
          .replace(/"lagSeconds":\d+/g, '"lagSeconds":…');
        return `${res.status} ${res.headers.get("content-type")} ${body}`;
      });
    const [own, ...others] = await Promise.all([service.url, ...replicas.map((r) => r.url)].map(bodies));
    for (const other of others) {
      const differing = paths.filter((_, i) => other[i] !== own![i]);
      expect(differing, tag("paths answered differently from the in-Ponder API")).toEqual([]);
    }
    expect(own!.filter((b) => b.startsWith("200 ")).length).toBeGreaterThan(300);
  });

  it("follows live writes and a reorganization: every process and worker answers what the chain now says", async () => {
    const processes = [service.url, ...replicas.map((r) => r.url)];
    const [z, w, x, y] = accounts.slice(15, 19) as [Address, Address, Address, Address];
    const v1Check = (delegate: Address, vault: Address) =>
      `/registry/v1/check/all?chainId=${CHAIN_ID}&delegate=${delegate}&vault=${vault}`;
    /** Every process's v1 answer for (delegate, vault), each with the contract's at the block it reports. */
    const v1Answers = (delegate: Address, vault: Address) =>
      Promise.all(
        processes.map(async (base) => {
          const a = await ask(base, v1Check(delegate, vault), { headers: service.headers, timeoutMs: 0, reask: false });
          const block = a.block ?? 0n;
          const chain = await callView(anvil.url, abis.v1, v1Registry, "checkDelegateForAll", [delegate, vault], block);
          return { base, status: a.status, got: a.text, want: String(chain), block };
        }),
      );
    const untilEvery = (block: bigint) =>
      Promise.all(
        processes.map((base) =>
          untilIndexed({ ...oracle, serviceUrl: base, headers: service.headers }, block, 120_000),
        ),
      );
    await sendWrite(anvil.url, abis.v1, z, v1Registry, "delegateForAll", [w, true]);
    const fork = await snapshotChain(anvil.url);

    // Branch A, indexed live by every process.
    const headA0 = await writeBatch(60);
    const v1A = await sendWrite(anvil.url, abis.v1, x, v1Registry, "delegateForAll", [y, true]);
    const headA = v1A > headA0 ? v1A : headA0;
    await untilEvery(headA);
    for (const a of await v1Answers(y, x))
      expect(a, tag(`${a.base}: X's delegation on branch A`)).toMatchObject({ status: 200, got: "true", want: "true" });

    // Branch B replaces A from the fork: other writes, Z revokes everything, and more blocks than A.
    await revertChain(anvil.url, fork);
    const headB0 = await writeBatch(80);
    await sendWrite(anvil.url, abis.v1, z, v1Registry, "revokeAllDelegates", []);
    const head = await chainClient(anvil.url).getBlockNumber();
    await rpc(anvil.url, "anvil_mine", [toHex(headA > head ? headA - head + 3n : 3n)]);
    const headB = await chainClient(anvil.url).getBlockNumber();
    expect(headB > headA && headB >= headB0, tag("branch B is longer than A")).toBe(true);
    await untilEvery(headB);
    expect(plainOutput(service), tag("the indexer saw the reorganization")).toMatch(/Reorged block/);

    for (const [delegate, vault, want] of [
      [y, x, "false"],
      [w, z, "false"],
    ] as const) {
      for (const a of await v1Answers(delegate, vault)) {
        expect(a, tag(`${a.base}: v1 (${delegate}, ${vault}) after the reorganization`)).toMatchObject({
          status: 200,
          got: want,
          want,
        });
      }
    }
    const all = [...generator.history];
    const after = Array.from({ length: CHECKS }, () => randomCheck(queryRng, pools, all));
    const afterUrls = after.map((spec) => checkUrl(queryRng, CHAIN_ID, spec));
    // List positions as the chain now has them: from its logs, the reorganized ones gone.
    const logs = (await rpc(anvil.url, "eth_getLogs", [
      { address: oracle.registry, fromBlock: "0x0", toBlock: "latest" },
    ])) as Receipt["logs"];
    const onChain = firstEnabled(decodeEvents(abis.v2, oracle.registry, [{ logs } as Receipt]));
    const compareAfter = async (o: Oracle, rng: Rng) => {
      const checks = await compareChecks(o, v2Checks, after, afterUrls, { minBlock: headB });
      const listings = await compareListings(o, v2Listings(onChain), wallets, { minBlock: headB }, rng);
      expect(checks.compared, tag("checks compared")).toBe(CHECKS);
      return [...checks.mismatches, ...listings.mismatches];
    };
    const own = await compareAfter({ ...oracle, serviceUrl: service.url, headers: service.headers }, queryRng);
    expect(own.length, report(SEED, `${service.url} after the reorganization`, own)).toBe(0);
    for (const [r, replica] of replicas.entries()) await onEveryWorker(replica, WORKERS[r]!, compareAfter);
    // The history holds branch B's events, each once, and none of branch A's.
    const history = await historyMismatches(service, anvil.url, { v1: v1Registry, v2: oracle.registry });
    expect(history.events.v1, tag("v1 events on chain")).toBeGreaterThanOrEqual(2);
    expect(history.mismatches, tag("history rows against the chain's logs after the reorganization")).toEqual([]);
  });

  it("never waits for a table the indexer holds while holding others, so it cannot deadlock the indexer's revert; \
answers from its copy meanwhile and follows the chain after", async () => {
    // What Ponder's reorg revert does, in its order: an ACCESS EXCLUSIVE lock on one of its tables
    // (dropping its trigger), held a while (the revert), then on its checkpoint table. A replica whose
    // sync held the checkpoint table while waiting for the first table would deadlock it.
    const indexer = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await indexer.connect();
    const table = (name: string) => `"${service.schema}"."${name}"`;
    const waiting = new Set<string>();
    const statuses: number[] = [];
    try {
      await indexer.query("BEGIN");
      await indexer.query(`LOCK TABLE ${table("v2_event")} IN ACCESS EXCLUSIVE MODE`);
      const until = Date.now() + 1_500;
      while (Date.now() < until) {
        const { rows } = await indexer.query(
          `SELECT l.relation::regclass::text AS relation, a.query FROM pg_locks l JOIN pg_stat_activity a USING (pid)
           WHERE NOT l.granted AND a.application_name = $1`,
          [REPLICA_CONNECTION.applicationName],
        );
        for (const row of rows) waiting.add(`${row.relation}: ${row.query}`);
        for (const replica of replicas)
          statuses.push(
            (await ask(replica.url, urls[statuses.length % urls.length]!, { headers: service.headers })).status,
          );
      }
      await indexer.query(`LOCK TABLE ${table(PONDER_STATE_TABLES.checkpoint)} IN ACCESS EXCLUSIVE MODE`);
      await indexer.query("COMMIT");
    } finally {
      await indexer.end();
    }
    expect([...waiting], tag("replica statements that waited for a lock")).toEqual([]);
    expect(statuses.length, tag("answers asked during the lock")).toBeGreaterThan(replicas.length);
    expect(new Set(statuses), tag("statuses answered during the lock")).toEqual(new Set([200]));
    const head = await writeBatch(5);
    for (const replica of replicas) {
      await waitFor(`${replica.url} to index block ${head} after the lock`, async () => {
        const indexed = await indexedBlock({ ...oracle, serviceUrl: replica.url, headers: service.headers });
        return indexed !== undefined && indexed >= head ? indexed : undefined;
      });
    }
  });

  it("a replica's /metrics sums the requests of all its workers and shows each chain's position", async () => {
    const replica = replicas[0]!; // the one with two workers
    /** A sample's value: `labels` as written between the braces ("" for none). */
    const sample = (text: string, name: string, labels = "") => {
      const line = `${name}${labels ? `{${labels}}` : ""} `;
      return Number(
        text
          .split("\n")
          .find((l) => l.startsWith(line))
          ?.slice(line.length) ?? 0,
      );
    };
    const chainsAnswered = (text: string) =>
      sample(text, "delegation_api_requests_total", 'route="/registry/chains",status="200"');
    const blockListed = async () => {
      const listed = JSON.parse((await ask(replica.url, "/registry/chains", { headers: service.headers })).text) as {
        chainId: number;
        indexedBlock: number;
      }[];
      return listed.find((c) => c.chainId === CHAIN_ID)!.indexedBlock;
    };

    const before = await scrape(replica);
    const lowest = await blockListed();
    // A new connection each: the cluster hands connections to its workers in turn, so both serve some.
    const COUNT = 40;
    for (let i = 0; i < COUNT; i++) {
      const res = await new Promise<IncomingMessage>((ok, fail) =>
        httpGet(`${replica.url}/registry/chains`, { agent: false, headers: service.headers }, ok).on("error", fail),
      );
      res.resume();
      expect(res.statusCode).toBe(200);
    }
    const after = await scrape(replica);
    const highest = await blockListed();

    expect(sample(after, "delegation_api_workers"), tag("workers summed")).toBe(2);
    expect(chainsAnswered(after) - chainsAnswered(before), tag("chains listings counted across both workers")).toBe(
      COUNT + 1,
    );
    const block = sample(after, "delegation_chain_indexed_block", `chain_id="${CHAIN_ID}"`);
    expect(
      block,
      tag("indexed block in /metrics, between the chains endpoint's before and after"),
    ).toBeGreaterThanOrEqual(lowest);
    expect(block, tag("indexed block in /metrics")).toBeLessThanOrEqual(highest);
    expect(sample(after, "delegation_chain_ready", `chain_id="${CHAIN_ID}"`), tag("chain ready")).toBe(1);
    expect(sample(after, "delegation_chain_behind", `chain_id="${CHAIN_ID}"`), tag("chain not behind")).toBe(0);
    expect(sample(after, "delegation_api_resident_memory_bytes"), tag("memory of both workers")).toBeGreaterThan(
      2 * 20 * 1024 * 1024,
    );
  });

  it("at a moment (timestamp): the newest block at or before it, the contract's answer there; without the \
chain's RPC a replica tells it among the blocks followed live, and elsewhere refuses, saying so, what its \
samples do not tell", async () => {
    const client = chainClient(anvil.url);
    const stamp = blockStamps(anvil.url);
    // Blocks with no registry event, 7 s apart, then writes: followed live, so told with no header.
    const head = await client.getBlockNumber();
    await rpc(anvil.url, "anvil_mine", [toHex(40), toHex(7)]);
    const written = await writeBatch(5);
    await waitFor("the replicas to reach the writes after the empty blocks", async () => {
      const blocks = await Promise.all(
        replicas.map((r) => indexedBlock({ ...oracle, serviceUrl: r.url, headers: service.headers })),
      );
      return blocks.every((b) => b !== undefined && b >= written) ? true : undefined;
    });
    const from = head - 30n > installedBlock ? head - 30n : installedBlock;
    const [first, last] = await Promise.all([stamp(from), stamp(head + 41n)]);
    // And among the empty blocks before the indexer started, which only headers tell.
    const [early, late] = await Promise.all([stamp(unfollowed[0]), stamp(unfollowed[1])]);
    const mismatches: Mismatch[] = [];
    const refused: string[] = [];
    let toldLive = 0;
    for (let i = 0; i < 32; i++) {
      const [low, high] = i < 8 ? [early, late] : [first, last];
      const timestamp = low + BigInt(queryRng.int(Number(high - low) + 1));
      const spec = randomCheck(queryRng, pools, generator.history);
      const path = `${checkUrl(queryRng, CHAIN_ID, spec)}&timestamp=${timestamp}`;
      const [given, without] = await Promise.all(replicas.map((r) => ask(r.url, path, { headers: service.headers })));
      const block = given!.block;
      const call = v2Checks.call(spec);
      const problem = await momentProblem(stamp, given!, timestamp, async (at) =>
        String(await callView(anvil.url, abis.v2, oracle.registry, call.functionName, call.args, at)),
      );
      if (problem !== undefined) {
        mismatches.push({ what: "answer at a moment", query: path, expected: "", got: problem });
        continue;
      }
      // The replica without the RPC: the same answer where its samples tell the block (always among
      // the blocks followed live), else a refusal.
      if (without!.status === 400 && block! <= liveFrom) {
        const refusal = JSON.parse(without!.text) as { code: string; detail: string };
        if (refusal.code !== "block_not_indexed" || !refusal.detail.includes(`PONDER_RPC_URL_${CHAIN_ID}`))
          mismatches.push({ what: "refusal", query: path, expected: "block_not_indexed", got: without!.text });
        refused.push(path);
      } else if (without!.status !== 200 || without!.block !== block || without!.text !== given!.text)
        mismatches.push({
          what: "without the RPC",
          query: path,
          expected: `200 at ${block}: ${given!.text}`,
          got: `${without!.status} at ${without!.block}: ${without!.text.slice(0, 200)}`,
        });
      else if (block! > liveFrom) toldLive++;
    }
    expect(mismatches.length, report(SEED, "checks at moments on the replicas", mismatches)).toBe(0);
    expect(refused.length, tag("moments among the unfollowed empty blocks refused without the RPC")).toBeGreaterThan(0);
    expect(toldLive, tag("moments among the blocks followed live told without the RPC")).toBeGreaterThan(0);
  });

  it("keys are shared: a revoked key is refused by every process within 1 s; a bad key too", async () => {
    const once = { reask: false };
    const res = await ask(replicas[0]!.url, "/registry/chains", { headers: { "X-API-KEY": "not-a-key" }, ...once });
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    const admin = { Authorization: `Bearer ${service.adminToken}` };
    const keys = JSON.parse((await ask(service.url, "/admin/keys", { headers: admin })).text) as { id: string }[];
    expect(keys.length).toBeGreaterThan(0);
    for (const { id } of keys) {
      expect((await ask(service.url, `/admin/keys/${id}`, { method: "DELETE", headers: admin })).status).toBe(200);
    }
    await untilFresh(Date.now());
    for (const base of [service.url, ...replicas.map((r) => r.url)]) {
      expect((await ask(base, "/registry/chains", { headers: service.headers, ...once })).status, base).toBe(401);
    }
  });
});
