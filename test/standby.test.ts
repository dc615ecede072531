/**
 * API replicas on a Postgres hot standby, on other hosts. The topology, built here with
 * network namespaces this test makes and removes (test/helpers/netns.ts), hosts 20 ms apart each way:
 *
 * - primary: its own Postgres (wal_level=replica, a replication role, the LAN by password) and the
 *   indexer (`npm start`) on it, indexing an anvil chain (anvil runs here, reached through a relay);
 * - standby: a hot standby made by `pg_basebackup -R` from the primary over the LAN, streaming
 *   through a replication slot, and two `npm run serve` replicas reading it as the reader role, with
 *   ACCESS_DATABASE_URL (the keys, the keyless budget) on the primary as the access role;
 * - gateway: nginx running deploy/nginx.conf in front of both replicas.
 *
 * It proves: the replicas start on the standby and run nothing there but read-only statements (the
 * standby logs every statement); answers through the gateway equal the contract's eth_call at the
 * head, at a past block and at moments (`timestamp`) among blocks without events; every route of
 * each replica (checks, listings whole and by direction, vaults, bulk listings, hashes, histories:
 * test/helpers/every-route.ts) equals the contracts through live writes and reorganizations 1 to 26
 * blocks deep replayed by replication, with delegations made on both branches and the standby's
 * replay paused for seconds across some of them; a replica reports what the standby holds
 * (X-Indexed-Block), answers block_not_indexed for a block or cursor past it, and is `behind` in
 * /registry/chains while its standby's replay is paused; a standby killed and restarted loses
 * nothing; the keyless budget holds across both replicas (the 26th request is 429); a new
 * delegation is answered by a replica within 1 s of the indexer storing it; cut off from the
 * primary, a replica refuses keyless requests 503 with Retry-After; a promoted standby gives the
 * same answers. Postgres only, and where `ip netns` is permitted (it says why it skips otherwise).
 * The 20 ms are relays' (netns.ts: this machine's kernel has no netem).
 *
 * Reproduce a failure with the seed it prints: SEED=<n> DATABASE_URL=… npx vitest run test/standby.test.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Address, type Hex, toHex, zeroAddress, zeroHash } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INDEXED_BLOCK_SQL, positionsSql } from "../api/store/store";
import { v2DelegationHash } from "../core/v2";
import { type Anvil, revertChain, snapshotChain, startAnvil } from "../devkit/anvil";
import { type Answer, ask, indexedBlock } from "../devkit/ask";
import { type CompareAt, type Mismatch, type Oracle, report } from "../devkit/compare";
import { compareChecks } from "../devkit/compare-checks";
import { abis, installRegistries } from "../devkit/oracle";
import { type Child, freePort, GiveUp, waitFor } from "../devkit/processes";
import { chooseSeed, Rng } from "../devkit/random";
import { chainClient, rpc } from "../devkit/rpc";
import { type Receipt, sendWrite } from "../devkit/send";
import { adminToken, createApiKey } from "../devkit/service";
import { checkUrl, randomCheck, v2Checks } from "../devkit/v2/checks";
import { compareListings } from "./helpers/compare-listings";
import { EveryRoute, type Judge, judge } from "./helpers/every-route";
import { type Gateway, startGateway } from "./helpers/gateway";
import { blockStamps, v2MomentProblems } from "./helpers/moments";
import { Lan, netnsRefusal, type Route } from "./helpers/netns";
import { Server } from "./helpers/replication";
import { SeededWrites } from "./helpers/seeded-writes";
import { decodeEvents, firstEnabled } from "./helpers/v2/events";
import { v2Listings } from "./helpers/v2/listing";

const SEED = chooseSeed();
console.log(`[standby] SEED=${SEED} (rerun with SEED=${SEED} npx vitest run test/standby.test.ts)`);
const tag = (text: string) => `[SEED=${SEED}] ${text}`;
const refusal = process.env.DATABASE_URL
  ? netnsRefusal()
  : "API replicas and standbys are Postgres's (set DATABASE_URL; this test makes its own servers)";
if (refusal) console.log(`[standby] skipped: ${refusal}`);

const CHAIN_ID = 31337;
/** One-way delay between hosts. */
const DELAY_MS = 20;
const TXS = 120;
const CHECKS = 300;
/**
 * The reorganizations: depths up to near Ponder's finality depth (30 here), some while the standby's
 * replay is paused, so that it lags and then replays the revert and the new branch at once.
 */
const REORGS = [
  { depth: 1, lagMs: 0 },
  { depth: 6, lagMs: 3_000 },
  { depth: 13, lagMs: 0 },
  { depth: 26, lagMs: 5_000 },
];
/** A contract the test's own delegations name. */
const CONTRACT = "0x00000000000000000000000000000000000c0de5";
const SCHEMA = "delegations";
const ACCESS_SCHEMA = "delegation_access";
/** REPLICA_BEHIND_SECONDS, short here: the test waits for it. */
const REPLICA_BEHIND_SECONDS = 3;
/** The ports each host listens on: each host is a namespace of its own, where every port is free. */
const PORTS = {
  indexer: 42069,
  replicas: [42070, 42071],
  postgres: 5432,
  /** In the primary host: anvil, relayed from this namespace. */
  anvil: 8545,
  /** In the standby host: the primary's Postgres, across the LAN. */
  primary: 5433,
  /** In the gateway host: the replicas and the indexer, across the LAN; nginx's own. */
  replicasFromGateway: [4270, 4271],
  indexerFromGateway: 4269,
  gateway: { public: 8080, operator: 8081 },
};
const ROLES = {
  replicator: { name: "replicator", password: "replicator-secret" },
  reader: { name: "api_reader", password: "reader-secret" },
  access: { name: "api_access", password: "access-secret" },
};
const url = (role: { name: string; password: string }, host: string, port = PORTS.postgres) =>
  `postgres://${role.name}:${role.password}@${host}:${port}/postgres`;

/** What the standby may run for a replica: read-only transactions, reads and their cursors. */
const READ_ONLY = new RegExp(
  "^(BEGIN|COMMIT|ROLLBACK|SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY|SELECT|FETCH|CLOSE" +
    "|LOCK TABLE [^;]* IN ACCESS SHARE MODE NOWAIT|DECLARE \\w+ NO SCROLL CURSOR FOR)\\b",
  "i",
);

describe.runIf(!refusal)("API replicas on a hot standby, on hosts apart", () => {
  let lan: Lan;
  let sockets: string;
  let anvil: Anvil;
  let primary: Server;
  let standby: Server;
  let indexer: Child;
  const replicas: Child[] = [];
  const relays: Partial<Record<"here" | "primary" | "standby" | "gateway", Child>> = {};
  let gateway: Gateway;
  /** Where this process reaches each: relayed into its host. */
  const urls = { indexer: "", replicas: [] as string[], gateway: "" };
  let writes: SeededWrites;
  let oracle: Oracle;
  let registries: { v1: Address; v2: Address };
  let headers: Record<string, string>;
  const token = adminToken();
  const rng = new Rng(SEED ^ 0x1b873593);
  const timings: string[] = [];
  const timed = async <T>(what: string, work: () => Promise<T>) => {
    const started = Date.now();
    const result = await work();
    timings.push(`${what}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return result;
  };

  /**
   * The standby's relay to the primary: replication and the replicas' access database cross the LAN
   * here. And to the chain's RPC, where a replica reads the headers a moment's block needs.
   */
  const standbyRoutes = (): Route[] => [
    {
      listen: `tcp:127.0.0.1:${PORTS.primary}`,
      target: `tcp:${lan.address("primary")}:${PORTS.postgres}`,
      delayMs: DELAY_MS,
    },
    { listen: `tcp:127.0.0.1:${PORTS.anvil}`, target: `unix:${join(sockets, "anvil.sock")}` },
  ];

  beforeAll(async () => {
    lan = Lan.create("standby-test", ["primary", "standby", "gateway"]);
    sockets = mkdtempSync(join(tmpdir(), "standby-test-"));
    const socket = (name: string) => `unix:${join(sockets, `${name}.sock`)}`;
    anvil = await startAnvil({ chainId: CHAIN_ID });

    // This namespace's ports into the hosts, and the primary host's way to anvil.
    const here = { indexer: 0, replicas: [0, 0], gateway: 0, operator: 0 };
    for (const key of ["indexer", "gateway", "operator"] as const) here[key] = await freePort();
    here.replicas = [await freePort(), await freePort()];
    relays.here = await lan.relay(undefined, [
      { listen: socket("anvil"), target: `tcp:127.0.0.1:${new URL(anvil.url).port}` },
      { listen: `tcp:127.0.0.1:${here.indexer}`, target: socket("indexer") },
      { listen: `tcp:127.0.0.1:${here.gateway}`, target: socket("gateway") },
      { listen: `tcp:127.0.0.1:${here.operator}`, target: socket("operator") },
      ...here.replicas.map((port, i) => ({ listen: `tcp:127.0.0.1:${port}`, target: socket(`replica-${i}`) })),
    ]);
    urls.indexer = `http://127.0.0.1:${here.indexer}`;
    urls.replicas = here.replicas.map((port) => `http://127.0.0.1:${port}`);
    relays.primary = await lan.relay("primary", [
      { listen: `tcp:127.0.0.1:${PORTS.anvil}`, target: socket("anvil") },
      { listen: socket("indexer"), target: `tcp:127.0.0.1:${PORTS.indexer}` },
    ]);
    relays.standby = await lan.relay("standby", standbyRoutes());
    const across = (port: number, host: string, to: number) => ({
      listen: `tcp:127.0.0.1:${port}`,
      target: `tcp:${lan.address(host)}:${to}`,
      delayMs: DELAY_MS,
    });
    relays.gateway = await lan.relay("gateway", [
      across(PORTS.indexerFromGateway, "primary", PORTS.indexer),
      ...PORTS.replicas.map((port, i) => across(PORTS.replicasFromGateway[i]!, "standby", port)),
      ...PORTS.replicasFromGateway.map((port, i) => ({
        listen: socket(`replica-${i}`),
        target: `tcp:127.0.0.1:${port}`,
      })),
      { listen: socket("gateway"), target: `tcp:127.0.0.1:${PORTS.gateway.public}` },
      { listen: socket("operator"), target: `tcp:127.0.0.1:${PORTS.gateway.operator}` },
    ]);

    await timed("primary and standby", async () => {
      // As docker-compose.scale.yml runs it: the indexer commits asynchronously, and its WAL reaches
      // the standby when the WAL writer flushes it (every 200 ms by default; docs/scale-out.md).
      primary = await Server.primary(lan, "primary", ROLES.replicator, { wal_writer_delay: "20ms" });
      // Made before the indexer writes anything: its schema, roles and rows all come by streaming.
      const { name, password } = ROLES.replicator;
      const conninfo = `host=127.0.0.1 port=${PORTS.primary} user=${name} password=${password}`;
      standby = await Server.standby(lan, "standby", conninfo, "standby_1", {
        log_statement: "all",
        log_line_prefix: "'%u|%a|%e|'",
      });
    });

    const installed = await installRegistries(anvil.url);
    registries = installed;
    writes = await SeededWrites.on(anvil.url, SEED, installed);
    await timed(`${TXS} seeded writes`, () => writes.v2(TXS));
    oracle = { rpcUrl: anvil.url, serviceUrl: "", registry: installed.v2, abi: abis.v2, chainId: CHAIN_ID };

    await timed("the indexer ready", async () => {
      const env: NodeJS.ProcessEnv = {
        DATABASE_URL: `postgres://postgres@127.0.0.1:${PORTS.postgres}/postgres`,
        DATABASE_SCHEMA: SCHEMA,
        ACCESS_SCHEMA,
        [`PONDER_RPC_URL_${CHAIN_ID}`]: `http://127.0.0.1:${PORTS.anvil}`,
        ADMIN_TOKEN: token,
        // npm start makes the replicas' roles, with these passwords.
        REPLICA_DATABASE_URL: url(ROLES.reader, "standby"),
        REPLICA_ACCESS_DATABASE_URL: url(ROLES.access, "primary"),
        PONDER_TELEMETRY_DISABLED: "true",
        START_BLOCKS_FILE: join(sockets, "start-blocks.json"),
      };
      // Only this chain, whatever this process's environment says.
      for (const name of Object.keys(process.env))
        if (name.startsWith("PONDER_RPC_URL_") && !(name in env)) env[name] = "";
      indexer = lan.run("primary", "npm", ["start", "--silent", "--", "--port", String(PORTS.indexer)], env);
      await untilReady(indexer, urls.indexer, "the indexer", 240_000);
      headers = { "X-API-KEY": await createApiKey(urls.indexer, token) };
      await untilAt(urls.indexer, writes.lastWriteBlock);
    });

    await timed("two replicas on the standby ready", () =>
      Promise.all(
        PORTS.replicas.map(async (port, i) => {
          replicas[i] = lan.run("standby", "npm", ["run", "--silent", "serve"], {
            DATABASE_URL: url(ROLES.reader, "127.0.0.1"),
            ACCESS_DATABASE_URL: url(ROLES.access, "127.0.0.1", PORTS.primary),
            DATABASE_SCHEMA: SCHEMA,
            ACCESS_SCHEMA,
            PORT: String(port),
            HOST: lan.address("standby"),
            ADMIN_TOKEN: token,
            TRUSTED_PROXY: "true",
            API_WORKERS: "1",
            REPLICA_BEHIND_SECONDS: String(REPLICA_BEHIND_SECONDS),
            [`PONDER_RPC_URL_${CHAIN_ID}`]: `http://127.0.0.1:${PORTS.anvil}`,
          });
          await untilReady(replicas[i]!, urls.replicas[i]!, `replica ${i}`, 120_000);
        }),
      ),
    );

    gateway = await startGateway({
      api: PORTS.replicasFromGateway.map((port) => `http://127.0.0.1:${port}`),
      indexer: `http://127.0.0.1:${PORTS.indexerFromGateway}`,
      run: (command, args, cwd) => lan.run("gateway", command, args, {}, cwd),
      ports: PORTS.gateway,
      reach: (port) => `http://127.0.0.1:${port === PORTS.gateway.public ? here.gateway : here.operator}`,
    });
    urls.gateway = gateway.url;
    await untilAt(urls.gateway, writes.lastWriteBlock);
  });

  afterAll(async () => {
    console.log(`[standby] ${timings.join("; ")}`);
    const steps = [
      () => gateway?.stop(),
      ...replicas.map((r) => () => r.stop()),
      () => indexer?.stop(),
      ...Object.values(relays).map((r) => () => r.stop()),
      () => standby?.destroy(),
      () => primary?.destroy(),
      () => anvil?.stop(),
    ];
    for (const step of steps)
      await Promise.resolve()
        .then(step)
        .catch((error) => console.error(error));
    // Whatever is left in the hosts (a step above failed) goes with them.
    lan?.remove();
    if (sockets) rmSync(sockets, { recursive: true, force: true });
  });

  /** Waits for `child`'s /ready at `base`, giving up when it exits. */
  async function untilReady(child: Child, base: string, what: string, timeoutMs: number) {
    try {
      await waitFor(
        `${what} to be ready`,
        async () => {
          if (!child.running) throw new GiveUp(`${what} exited`);
          return (await fetch(`${base}/ready`)).status === 200 ? true : undefined;
        },
        timeoutMs,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}\n--- ${what} ---\n${child.output.slice(-5_000)}`);
    }
  }

  /** Waits until `base` answers at `block` or later; the block it answers at. */
  const untilAt = (base: string, block: bigint, timeoutMs = 60_000) =>
    waitFor(
      `${base} to answer at block ${block}`,
      async () => {
        const at = await indexedBlock({ serviceUrl: base, chainId: CHAIN_ID, headers });
        return at !== undefined && at >= block ? at : undefined;
      },
      timeoutMs,
    );

  /** The block the standby's tables are at, read as the replica's store reads it. */
  const standbyBlock = async () => {
    const [row] = await standby.query(
      `SELECT ${INDEXED_BLOCK_SQL}::text AS block FROM ${positionsSql(SCHEMA)} WHERE c.chain_id = $1`,
      [CHAIN_ID],
    );
    return BigInt(row!.block as string);
  };

  /**
   * Where each v2 delegation was first enabled, as the chain's logs now say (up to `block`, or all):
   * a reorganization's are gone, and a write of the test's own (not the seeded writes') is there.
   */
  async function positionsOnChain(block?: bigint) {
    const toBlock = block === undefined ? "latest" : `0x${block.toString(16)}`;
    const logs = (await rpc(anvil.url, "eth_getLogs", [
      { address: oracle.registry, fromBlock: "0x0", toBlock },
    ])) as Receipt["logs"];
    return firstEnabled(decodeEvents(abis.v2, oracle.registry, [{ logs } as Receipt]));
  }

  /** A check of the i-th sender and delegate of the writes. */
  const someCheck = (i: number) =>
    `/registry/v2/check/all?chainId=${CHAIN_ID}&to=${writes.pools.v2.delegates[i]}&from=${writes.pools.v2.senders[i]}`;

  /** Checks and listings through `base`, each compared with the contract at the block it reports (or `at`). */
  async function differential(base: string, at: CompareAt) {
    const o = { ...oracle, serviceUrl: base, headers };
    const positions = await positionsOnChain("block" in at ? at.block : undefined);
    const specs = Array.from({ length: CHECKS }, () => randomCheck(rng, writes.pools.v2, writes.generators.v2.history));
    const checks = await compareChecks(
      o,
      v2Checks,
      specs,
      specs.map((s) => checkUrl(rng, CHAIN_ID, s)),
      at,
    );
    const wallets = writes.wallets().v2;
    // Writes may go on while the listings are asked: each is ordered by the positions at its block.
    const known = new Map<bigint, Promise<void>>();
    const kit = v2Listings(positions);
    const atBlock: typeof kit.expected = async (c, wallet, block, bad) => {
      if (!known.has(block))
        known.set(
          block,
          positionsOnChain(block).then((more) => {
            for (const [hash, position] of more) positions.set(hash, position);
          }),
        );
      await known.get(block);
      return kit.expected(c, wallet, block, bad);
    };
    const listings = await compareListings(o, { ...kit, expected: atBlock }, wallets, at, rng);
    expect(checks.compared, tag("checks compared")).toBe(CHECKS);
    expect(checks.positive, tag("true/non-zero answers among them")).toBeGreaterThan(CHECKS * 0.05);
    expect(listings.compared, tag("listings compared")).toBe(wallets.length);
    return [...checks.mismatches, ...listings.mismatches];
  }

  it("the replicas read the standby as the reader, and keep the budget on the primary as the access role", async () => {
    const [recovery] = await standby.query("SELECT pg_is_in_recovery() AS standby");
    expect(recovery?.standby, tag("the standby is in recovery")).toBe(true);
    const readers = await standby.query(
      "SELECT DISTINCT usename, application_name FROM pg_stat_activity WHERE usename = $1",
      [ROLES.reader.name],
    );
    expect(readers, tag("the replicas read the standby as the reader")).toEqual([
      { usename: ROLES.reader.name, application_name: "delegation-lookup replica" },
    ]);
    const writers = await primary.query(
      "SELECT DISTINCT application_name FROM pg_stat_activity WHERE usename = $1 AND client_addr = $2",
      [ROLES.access.name, lan.address("standby")],
    );
    expect(
      writers.map((r) => r.application_name),
      tag("the replicas' access, on the primary"),
    ).toEqual(expect.arrayContaining(["delegation-lookup access", "delegation-lookup keyless"]));
  });

  it("answers through the gateway equal the contract's, at the head and at a past block", async () => {
    const head = await differential(urls.gateway, { minBlock: writes.lastWriteBlock });
    expect(head.length, report(SEED, "through the gateway at the head", head)).toBe(0);
    const past = writes.v2Events[Math.floor(writes.v2Events.length / 2)]!.block;
    const then = await differential(urls.gateway, { block: past });
    expect(then.length, report(SEED, `through the gateway at block ${past}`, then)).toBe(0);
  });

  it("answers through the gateway at a moment: the newest block at or before it, the contract's there", async () => {
    // Blocks with no registry event, 5 s apart: a moment among them is told by their headers only.
    await rpc(anvil.url, "anvil_mine", [toHex(20), toHex(5)]);
    const head = await chainClient(anvil.url).getBlockNumber();
    await untilAt(urls.gateway, head);
    const stamp = blockStamps(anvil.url);
    const [from, to] = await Promise.all([stamp(writes.v2Events[0]!.block), stamp(head)]);
    const problems = await v2MomentProblems({
      base: urls.gateway,
      headers,
      rpcUrl: anvil.url,
      registry: registries.v2,
      chainId: CHAIN_ID,
      rng,
      pools: writes.pools.v2,
      history: writes.generators.v2.history,
      from,
      to,
      count: 16,
    });
    expect(problems, tag("answers at moments through the gateway")).toEqual([]);
  });

  const depths = REORGS.map((r) => r.depth).join(", ");
  it(`every route of each replica is the contracts' through live writes, reorganizations ${depths} blocks deep \
with delegations made on both branches, and a standby lagging behind`, async () => {
    const accounts = (await chainClient(anvil.url).getAddresses()) as Address[];
    // Accounts 15 to 18 are named by no seeded write (devkit/v1/generate.ts, devkit/v2/generate.ts).
    const [unused, writer, friend] = [15, 17, 18].map((i) => accounts[i]!.toLowerCase() as Address) as [
      Address,
      Address,
      Address,
    ];
    const named = writes.wallets();
    const own = [writer, friend];
    /** Where each v2 delegation was first enabled, per block compared (the chain's logs; reset at each fork). */
    const onChain = new Map<bigint, ReturnType<typeof positionsOnChain>>();
    const routes = new EveryRoute({
      chainId: CHAIN_ID,
      rpcUrl: anvil.url,
      writes,
      oracles: { v2: oracle, v1: { ...oracle, registry: registries.v1, abi: abis.v1 } },
      rng,
      headers: () => headers,
      listed: { v2: [...named.v2, ...own, unused], v1: [...named.v1, unused] },
      candidates: { v2: [...named.v2, ...own, unused, zeroAddress], v1: [...named.v1, unused, zeroAddress] },
      unused,
      // Four events, two replicas each: fewer of the costlier questions than a test of its own.
      sizes: { checks: 40, vaultQueries: 8, hashes: 6 },
      // The test's own writes are not the seeded writes': where each was made, by the chain's logs.
      positions: (block) => {
        if (!onChain.has(block)) onChain.set(block, positionsOnChain(block));
        return onChain.get(block)!;
      },
    });
    /** Every route of every replica at `at`, judged once `ready` (the writes up to `at` are known). */
    const everyRoute = async (at: CompareAt, extraHashes: readonly Hex[]) => {
      const mismatches: Mismatch[] = [];
      for (const [i, base] of urls.replicas.entries()) {
        const found = [...(await routes.compareAll(base, at, extraHashes)), ...(await routes.compareHistory(base))];
        mismatches.push(...found.map((m) => ({ ...m, what: `replica ${i}: ${m.what}` })));
      }
      return mismatches;
    };
    const write = (fn: string, args: readonly unknown[]) =>
      sendWrite(anvil.url, abis.v2, writer, registries.v2, fn, args);
    // A delegation made before every fork, revoked on each old branch and revoked and made again on the new.
    const kept = [friend, CONTRACT, zeroHash] as const;
    await write("delegateContract", [...kept, true]);
    const keptHash = v2DelegationHash({
      type: "CONTRACT",
      from: writer,
      to: friend,
      contract: CONTRACT,
      rights: zeroHash,
    });

    // Live: asked while both registries are written, each answer judged at the block it reports.
    let writing = true;
    const writer_ = (async () => {
      try {
        await writes.v2(40);
        await writes.v1(20, 2);
      } finally {
        writing = false;
      }
    })();
    const live: Judge[] = [];
    // Each round asked no lower than the block the replica reported before it: answers never go back.
    const askLive = async (base: string) => {
      while (writing) {
        const reported = await indexedBlock({ serviceUrl: base, chainId: CHAIN_ID, headers });
        live.push(...(await routes.askAll(base, { minBlock: reported ?? 0n }, false)));
      }
    };
    await Promise.all([writer_, ...urls.replicas.map(askLive)]);
    const liveMismatches = await judge(live);
    expect(live.length, tag("answers asked during writes")).toBeGreaterThan(0);
    expect(liveMismatches.length, report(SEED, "the replicas during writes", liveMismatches)).toBe(0);

    const reached: number[] = [];
    for (const [k, { depth, lagMs }] of REORGS.entries()) {
      const what = `a reorganization ${depth} blocks deep${lagMs ? `, the standby ${lagMs} ms behind` : ""}`;
      // Made on both branches: first enabled at another place on each.
      const twice = [friend, toHex(k + 1, { size: 32 })] as const;
      const twiceHash = v2DelegationHash({ type: "ALL", from: writer, to: friend, rights: twice[1] });
      const fork = await snapshotChain(anvil.url);
      await write("delegateAll", [...twice, true]);
      if (depth > 1) await write("delegateContract", [...kept, false]);
      if (depth > 4) {
        await writes.v2(12);
        await writes.v1(6, 1);
      }
      // The old branch ends where the test says: no interval block until the revert (which resumes them).
      await rpc(anvil.url, "evm_setIntervalMining", [0]);
      const tipNow = await chainClient(anvil.url).getBlockNumber();
      const tipA = tipNow > fork.block + BigInt(depth) ? tipNow : fork.block + BigInt(depth);
      if (tipNow < tipA) await rpc(anvil.url, "anvil_mine", [toHex(tipA - tipNow)]);
      reached.push(Number(tipA - fork.block));
      expect(tipA - fork.block, tag(`${what}: within Ponder's finality depth`)).toBeLessThan(30n);
      await Promise.all(urls.replicas.map((base) => untilAt(base, tipA)));
      const onlyA = [...firstEnabled(writes.v2Events).keys()].filter(
        (h) => !writes.v2Events.some((e) => e.hash === h && e.block <= fork.block),
      );

      if (lagMs) await standby.query("SELECT pg_wal_replay_pause()");
      await revertChain(anvil.url, fork);
      writes.forgetAfter(fork.block);
      onChain.clear();
      if (depth > 4) await writes.v2(12);
      await write("delegateAll", [...twice, true]);
      await write("delegateContract", [...kept, false]);
      await write("delegateContract", [...kept, true]);
      if (depth > 4) await writes.v1(6, 1);
      // The new branch's tip past the old one's, so that no wait for it is met by the old branch.
      const now = await chainClient(anvil.url).getBlockNumber();
      if (now <= tipA) await rpc(anvil.url, "anvil_mine", [toHex(tipA - now + 2n)]);
      const tipB = await chainClient(anvil.url).getBlockNumber();
      if (lagMs) {
        await untilAt(urls.indexer, tipB);
        await new Promise((resume) => setTimeout(resume, lagMs));
        await standby.query("SELECT pg_wal_replay_resume()");
      }
      await Promise.all(urls.replicas.map((base) => untilAt(base, tipB)));
      const after = await everyRoute({ minBlock: tipB }, [twiceHash, keptHash, ...onlyA]);
      expect(after.length, report(SEED, `the replicas after ${what}`, after)).toBe(0);
    }
    expect(indexer.output, tag("the indexer saw the reorganizations")).toMatch(/Reorged block/);
    const cancelled = standby.log(Number.POSITIVE_INFINITY).match(/conflict with recovery/g)?.length ?? 0;
    timings.push(
      `reorganizations ${reached.join(", ")} blocks deep; every route compared: ${JSON.stringify(routes.tally)}; ` +
        `queries the standby cancelled: ${cancelled}`,
    );
    for (const name of ["v2 checks true or non-zero", "v1 checks true or non-zero", "v2 vaults answers with vaults"])
      expect(routes.tally[name] ?? 0, tag(`comparisons of "${name}"`)).toBeGreaterThan(0);
  });

  it("answers at what the standby holds: past it is block_not_indexed; a paused replay is behind", async () => {
    await standby.query("SELECT pg_wal_replay_pause()");
    const pausedAt = Date.now();
    try {
      await waitFor("the replay to pause", async () => {
        const [row] = await standby.query("SELECT pg_get_wal_replay_pause_state() AS state");
        return row?.state === "paused" ? true : undefined;
      });
      const held = await standbyBlock();
      const primaryAt = await untilAt(urls.indexer, held + 2n);
      const replica = urls.replicas[0]!;
      const check = someCheck(0);
      const atHead = await ask(replica, check, { headers });
      expect(atHead.block, tag("X-Indexed-Block: the standby's block")).toBe(held);

      const past = await ask(replica, `${check}&blockNumber=${primaryAt}`, { headers, reask: false });
      expect(past.status, tag(`blockNumber ${primaryAt}, past the standby's ${held}: ${past.text}`)).toBe(400);
      expect(JSON.parse(past.text), tag("blockNumber past the standby")).toMatchObject({
        code: "block_not_indexed",
        param: "blockNumber",
        indexedBlock: Number(held),
      });
      // A cursor the indexer gave (its first page pinned at its own, newer, block).
      const first = await ask(urls.indexer, `/registry/v2/history?chainId=${CHAIN_ID}&limit=1`, { headers });
      const next = /^<(\/[^>]*)>; rel="next"$/.exec(first.headers.get("link") ?? "")?.[1];
      expect(first.block! > held && next !== undefined, tag(`a next page pinned past ${held}`)).toBe(true);
      const paged = await ask(replica, next!, { headers, reask: false });
      expect(paged.status, tag(`the indexer's cursor on the replica: ${paged.text}`)).toBe(400);
      expect(JSON.parse(paged.text), tag("a cursor past the standby")).toMatchObject({
        code: "block_not_indexed",
        param: "cursor",
      });

      const statuses = async (base: string) =>
        (JSON.parse((await ask(base, "/registry/chains", { headers })).text) as { status: string }[]).map(
          (c) => c.status,
        );
      for (const base of urls.replicas)
        await waitFor(`${base} to report its chain behind`, async () =>
          (await statuses(base))[0] === "behind" ? true : undefined,
        );
      timings.push(`the replay paused, both replicas behind after ${((Date.now() - pausedAt) / 1000).toFixed(1)} s`);
      expect(await statuses(urls.indexer), tag("the indexer itself is live")).toEqual(["live"]);
      const ready = await fetch(`${replica}/ready`);
      expect(ready.status, tag("a replica behind stays in service")).toBe(200);
      expect(await ready.text(), tag("/ready says why")).toMatch(/the standby it reads trails its primary by \d+ s/);
    } finally {
      await standby.query("SELECT pg_wal_replay_resume()");
    }
    for (const base of urls.replicas)
      await waitFor(`${base} to report its chain live again`, async () => {
        const chains = JSON.parse((await ask(base, "/registry/chains", { headers })).text) as { status: string }[];
        return chains[0]?.status === "live" ? true : undefined;
      });
  });

  it("a standby killed and restarted loses nothing", async () => {
    standby.stop("immediate");
    const stoppedAt = Date.now();
    // Written while the standby is down: the primary keeps the WAL for its slot.
    await writes.v2(30);
    // The replicas answer from their copies a few seconds, then 503, never ever staler answers.
    const down = await waitFor("the gateway to answer 503 with the standby down", async () => {
      const a = await ask(urls.gateway, someCheck(0), { headers, reask: false });
      return a.status === 503 ? a : undefined;
    });
    expect(down.headers.get("retry-after"), tag("503 with Retry-After")).not.toBeNull();
    timings.push(`the standby killed, the gateway's first 503 after ${((Date.now() - stoppedAt) / 1000).toFixed(1)} s`);
    standby.start();
    const startedAt = Date.now();
    await Promise.all([...urls.replicas, urls.gateway].map((base) => untilAt(base, writes.lastWriteBlock, 90_000)));
    timings.push(`restarted, the replicas at the last write after ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
    const after = await differential(urls.gateway, { minBlock: writes.lastWriteBlock });
    expect(after.length, report(SEED, "through the gateway after the standby's restart", after)).toBe(0);
  });

  it("the keyless budget holds across hosts: of 26 requests spread over both replicas, the 26th is 429", async () => {
    const path = someCheck(1);
    const started = Date.now();
    const answers: Answer[] = [];
    for (let i = 0; i < 26; i++) answers.push(await ask(urls.replicas[i % 2]!, path, { reask: false }));
    const elapsed = Date.now() - started;
    expect(elapsed, tag("the 26 requests fit in the budget's 10 s window")).toBeLessThan(10_000);
    expect(
      answers.map((a) => `${a.status} ${a.headers.get("ratelimit-remaining")}`),
      tag("statuses and units left, replicas alternating"),
    ).toEqual([...Array.from({ length: 25 }, (_, i) => `200 ${24 - i}`), "429 0"]);
    timings.push(`26 keyless requests over both replicas: ${(elapsed / 1000).toFixed(1)} s`);
  });

  it("a new delegation is answered by a replica on the standby within 1 s of the indexer storing it", async () => {
    const [from] = await chainClient(anvil.url).getAddresses();
    // An address no write has named: its check is false until this delegation.
    const to = `0x${rng.bigint(160).toString(16).padStart(40, "0")}` as Address;
    const stored = async () =>
      (
        await primary.query(`SELECT 1 FROM "${SCHEMA}".v2_delegation WHERE "from" = $1 AND "to" = $2 AND enabled`, [
          from!.toLowerCase(),
          to.toLowerCase(),
        ])
      ).length === 1;
    expect(await stored(), tag("no such delegation yet")).toBe(false);
    await sendWrite(anvil.url, abis.v2, from!, oracle.registry, "delegateAll", [to, zeroHash, true]);
    // Asked again at once (a few ms over the Unix socket), not every 250 ms: the delay is measured from here.
    const sent = Date.now();
    while (!(await stored())) if (Date.now() - sent > 30_000) throw new Error(tag("the indexer stored nothing"));
    const storedAt = Date.now();
    const check = `/registry/v2/check/all?chainId=${CHAIN_ID}&to=${to}&from=${from}`;
    // The indexer's own API beside the replicas: what the delay holds before any replication.
    const [own, ...delays] = await Promise.all(
      [urls.indexer, ...urls.replicas].map(async (base) => {
        for (;;) {
          const a = await ask(base, check, { headers, reask: false });
          if (a.text === "true") return Date.now() - storedAt;
          if (Date.now() - storedAt > 10_000) return Number.POSITIVE_INFINITY;
        }
      }),
    );
    timings.push(
      `a new delegation, ms after the indexer stored it: its own API ${own}; the replicas ${delays.join(", ")}`,
    );
    for (const [i, delay] of delays.entries())
      expect(delay, tag(`replica ${i}: ms from the indexer's row to the replica's answer`)).toBeLessThanOrEqual(1_000);
  });

  it("cut off from the primary (its write target), a replica refuses keyless requests 503, Retry-After, and \
answers keyed ones as before", async () => {
    // A client of its own (the replicas trust X-Forwarded-For): the budget test's is spent.
    const CUT_OFF_CLIENT = { "X-Forwarded-For": "192.0.2.31" };
    await relays.standby!.stop();
    try {
      for (const base of urls.replicas) {
        const keyless = await ask(base, someCheck(2), { headers: CUT_OFF_CLIENT, reask: false });
        expect(keyless.status, tag(`${base} keyless: ${keyless.text}`)).toBe(503);
        expect(keyless.headers.get("retry-after"), tag(`${base} keyless`)).toBe("5");
        expect(JSON.parse(keyless.text), tag(`${base} keyless`)).toMatchObject({
          code: "chain_syncing",
          detail: expect.stringMatching(/keyless budget cannot be checked/),
        });
      }
      // Keyed requests, for well past the key copy's freshness (1 s), then checked against the contract.
      const until = Date.now() + 4_000;
      while (Date.now() < until)
        for (const base of urls.replicas) {
          const keyed = await ask(base, someCheck(2), { headers, reask: false });
          expect(keyed.status, tag(`${base} keyed while cut off: ${keyed.text}`)).toBe(200);
        }
      for (const base of urls.replicas) {
        const cut = await differential(base, { minBlock: writes.lastWriteBlock });
        expect(cut.length, report(SEED, `${base} keyed while cut off`, cut)).toBe(0);
      }
    } finally {
      relays.standby = await lan.relay("standby", standbyRoutes());
    }
    for (const base of urls.replicas)
      await waitFor(`${base} to serve keyless requests again`, async () =>
        (await ask(base, someCheck(3), { headers: CUT_OFF_CLIENT, reask: false })).status === 200 ? true : undefined,
      );
  });

  it("over the whole run, the standby ran nothing for the replicas but read-only statements", async () => {
    // Every statement the reader ran there, and every error, as the standby logged them (log_statement=all).
    const statements = new Set<string>();
    const errors = new Set<string>();
    // An entry's further lines (a statement's) begin with a tab.
    for (const entry of standby.log(Number.POSITIVE_INFINITY).split(/\n(?!\t)/)) {
      const [user, , state, ...rest] = entry.split("|");
      if (user !== ROLES.reader.name) continue;
      const text = rest.join("|");
      const statement = /^LOG: {2}(?:statement|execute [^:]*): (.*)$/s.exec(text)?.[1];
      if (statement !== undefined) statements.add(statement.replace(/\s+/g, " ").trim());
      if (/^(ERROR|FATAL):/.test(text)) errors.add(`${state} ${text.slice(0, 160)}`);
    }
    const said = [...errors].join("; ") || "none";
    timings.push(`the reader's statements on the standby: ${statements.size} distinct; errors: ${said}`);
    expect(statements.size, tag("statements logged")).toBeGreaterThan(3);
    const others = [...statements].filter((s) => !READ_ONLY.test(s)).map((s) => s.slice(0, 200));
    expect(others, tag("statements other than reads")).toEqual([]);
    // Expected: a sync skipped while the replay holds a table (a revert replayed), or cancelled for
    // the replay (a recovery conflict), and the standby's own shutdown and start.
    const unexpected = [...errors].filter((e) => !/^(55P03|40001|57P01|57P03) /.test(e));
    expect(unexpected, tag(`errors of the reader's statements (all: ${said})`)).toEqual([]);
  });

  it("a promoted standby gives the same answers", async () => {
    standby.promote();
    const [row] = await standby.query("SELECT pg_is_in_recovery() AS standby");
    expect(row?.standby, tag("promoted")).toBe(false);
    // Its own history from here: the replicas answer at the block it was promoted at, as the chain had it.
    const at = await standbyBlock();
    await Promise.all(urls.replicas.map((base) => untilAt(base, at)));
    const promoted = await differential(urls.gateway, { minBlock: at });
    expect(promoted.length, report(SEED, "through the gateway on the promoted standby", promoted)).toBe(0);
  });
});
