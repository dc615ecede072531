/**
 * Every chain apart (INDEX_CHAINS_APART=true, Postgres: scripts/launcher/apart.ts): twelve chains
 * of the table, each an anvil with the real registries and a block every 2 s, in one deployment;
 * five healthy ones in two groups sharing a Ponder process each (INDEX_CHAIN_GROUPS), the others alone.
 * One chain's RPC refuses connections at start (nothing listens on its port); once the others are
 * live, another's RPC drops every connection for three minutes. Throughout, each healthy chain
 * takes a new delegation every round, and each is answered within BOUND_MS of its block; both
 * failing chains catch up by themselves once their RPCs return; then every chain's answer for
 * every delegation written equals its contract's at the block the answer names. Asked across every
 * chain at once (`chainId=all`), the refused chain is a `chain_syncing` entry while each other
 * chain's entry is its contract's answer at the block it names.
 *
 * Reproduce a failure with the seed it prints: SEED=<n> DATABASE_URL=… npx vitest run test/chains-apart.test.ts
 */
import { type Address, getAddress, type Hex, zeroAddress, zeroHash } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PUBLICATION_READ_MS } from "../api/store/served-chains";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { ask } from "../devkit/ask";
import { compareChecks } from "../devkit/compare-checks";
import { abis, addresses, installRegistries } from "../devkit/oracle";
import { pool } from "../devkit/pool";
import { freePort, waitFor } from "../devkit/processes";
import { chooseSeed, Rng } from "../devkit/random";
import { callView, chainClient, ethCalls, rpc } from "../devkit/rpc";
import { sendWrite } from "../devkit/send";
import { plainOutput, type Service, startService } from "../devkit/service";
import { type CheckSpec, v2Checks } from "../devkit/v2/checks";
import { RPC_PROBE_MS } from "../scripts/launcher/indexer-notes";
import { parseJsonExact } from "./helpers/json";
import { type Fault, type RpcProxy, startRpcProxy } from "./helpers/rpc-proxy";

const SEED = chooseSeed();
console.log(`[chains-apart] SEED=${SEED} (rerun with SEED=${SEED} npx vitest run test/chains-apart.test.ts)`);
const tag = (text: string) => `[SEED=${SEED}] ${text}`;

/** Chains of the table (core/chains.ts), anvils posing as them. */
const IDS = [31337, 11155111, 10, 56, 100, 137, 8453, 42161, 59144, 534352, 2021, 69000];
/** Refused at start: nothing listens on its RPC's port until the others are live. */
const REFUSED = 69000;
/** Cut once every other chain is live: its RPC drops every connection for CUT_MS. */
const CUT = 2021;
const CUT_MS = 180_000;
/** A healthy chain's new delegation is answered within this long of its block's timestamp. */
const BOUND_MS = 5_000;
/** Healthy chains that share a Ponder process by two and by three (INDEX_CHAIN_GROUPS); the others are alone. */
const GROUPS = [
  [10, 56, 100],
  [8453, 42161],
];
const V2 = getAddress(addresses.v2.address);
/** Requests in flight at once from one comparison (a chain's, or across chains). */
const ASKED_AT_ONCE = 4;

/** A chain: its anvil (`url`), the RPC URL the service is given, and the delegations written. */
type Chain = {
  id: number;
  anvil: Anvil;
  url: string;
  rpcUrl: string;
  accounts: Address[];
  written: [number, number][];
};
type Status = {
  chainId: number;
  status: string;
  lagSeconds: number | null;
  indexer: { state: string; rpcFailingSince: string | null } | null;
  registries: { v2: { startBlock: number | null } | null };
};

const refusal = process.env.DATABASE_URL ? undefined : "chains are indexed apart on Postgres (set DATABASE_URL)";

describe.runIf(!refusal)("every chain apart: one chain's RPC trouble is its own", () => {
  const rng = new Rng(SEED);
  const chains = new Map<number, Chain>();
  let service: Service;
  let proxy: RpcProxy;
  /** The refused chain's RPC, once opened. */
  let opened: RpcProxy | undefined;
  let fault: Fault | undefined;
  const refusedPort = { port: 0 };
  const anvils: Anvil[] = [];

  beforeAll(async () => {
    refusedPort.port = await freePort();
    // All at once: each install waits for blocks of its chain (2 s apart), a minute for twelve in turn.
    // Each anvil goes into `anvils` as it starts, so that afterAll stops it whatever else failed.
    const results = await Promise.allSettled(
      IDS.map(async (id): Promise<Chain> => {
        const anvil = await startAnvil({ chainId: id, blockTime: 2 });
        anvils.push(anvil);
        await installRegistries(anvil.url);
        const accounts = await chainClient(anvil.url).getAddresses();
        // The refused chain's RPC is a port nothing listens on yet (opened later, in front of its anvil).
        const url = id === REFUSED ? `http://127.0.0.1:${refusedPort.port}` : anvil.url;
        return { id, anvil, url: anvil.url, rpcUrl: url, accounts, written: [] };
      }),
    );
    // In IDS's order, whichever started first: the seeded writes go to the chains in this order.
    for (const result of results) {
      if (result.status === "rejected") throw result.reason;
      chains.set(result.value.id, result.value);
    }
    proxy = await startRpcProxy(chains.get(CUT)!.url, () => fault);
    const rpcUrls = Object.fromEntries(IDS.map((id) => [id, id === CUT ? proxy.url : chains.get(id)!.rpcUrl]));
    service = await startService({
      rpc: rpcUrls,
      env: { INDEX_CHAINS_APART: "true", INDEX_CHAIN_GROUPS: GROUPS.map((g) => g.join("+")).join(",") },
    });
  }, 600_000);

  afterAll(async () => {
    await service?.stop();
    await proxy?.close();
    await opened?.close();
    await Promise.all(anvils.map((anvil) => anvil.stop()));
  });

  /** What the service said lately, for a failure's message: its chains, and its output but indexed blocks. */
  let lastStatuses: Status[] = [];
  const seen = () =>
    `${JSON.stringify(lastStatuses)}\n${plainOutput(service)
      .split("\n")
      .filter((line) => !line.includes("Indexed block"))
      .slice(-60)
      .join("\n")}`;
  const statuses = async (): Promise<Status[]> =>
    (lastStatuses = JSON.parse(
      (await ask(service.url, "/registry/chains", { headers: service.headers })).text,
    ) as Status[]);

  /** A new delegation on the chain (a pair not written before), and when its block was made. */
  async function write(chain: Chain): Promise<{ pair: [number, number]; block: bigint; madeAt: number }> {
    let pair: [number, number];
    do pair = [rng.int(10), rng.int(10)];
    while (pair[0] === pair[1] || chain.written.some(([a, b]) => a === pair[0] && b === pair[1]));
    chain.written.push(pair);
    const [from, to] = [chain.accounts[pair[0]]!, chain.accounts[pair[1]]!];
    const block = await sendWrite(chain.url, abis.v2, from, V2, "delegateAll", [to, zeroHash, true]);
    const header = (await rpc(chain.url, "eth_getBlockByNumber", [`0x${block.toString(16)}`, false])) as {
      timestamp: Hex;
    };
    return { pair, block, madeAt: Number(BigInt(header.timestamp)) * 1000 };
  }

  /** The service's check of the pair, and the contract's at the block it names. */
  async function compare(chain: Chain, [i, j]: [number, number]) {
    const [from, to] = [chain.accounts[i]!, chain.accounts[j]!];
    const path = `/registry/v2/check/all?chainId=${chain.id}&from=${from}&to=${to}`;
    const a = await ask(service.url, path, { headers: service.headers, reask: false });
    const expected =
      a.block === undefined
        ? undefined
        : String(await callView(chain.url, abis.v2, V2, "checkDelegateForAll", [to, from, zeroHash], a.block));
    return { ...a, expected };
  }

  /**
   * Delegations of every chain at once (`chainId=all`), a pair each: each entry that answers is
   * compared with its chain's contract at the block it names (the accounts are anvil's, the same on
   * every chain); the problems' codes, by chain, for each pair. Each chain's contract is asked once
   * for all the pairs: a view at its newest block waits for the next (devkit/rpc.ts).
   */
  async function compareAcross(pairs: [number, number][]): Promise<Record<number, string>[]> {
    type Entry = { chainId: bigint; block?: bigint; answer?: unknown; problem?: { code: string } };
    const accounts = chains.get(IDS[0]!)!.accounts;
    const asked = await pool(pairs, ASKED_AT_ONCE, async ([i, j]) => {
      const [from, to] = [accounts[i]!, accounts[j]!];
      const path = `/registry/v2/check/all?chainId=all&from=${from}&to=${to}`;
      const a = await ask(service.url, path, { headers: service.headers, reask: false });
      expect(a.status, tag(`${path}: ${a.text.slice(0, 300)}`)).toBe(200);
      const entries = (parseJsonExact(a.text) as { chains: Entry[] }).chains;
      // Every chain has its entry, by chain id: none left out.
      expect(entries.map((e) => Number(e.chainId))).toEqual([...IDS].sort((x, y) => x - y));
      return { path, from, to, entries };
    });
    const problems = asked.map(() => ({}) as Record<number, string>);
    await Promise.all(
      IDS.map(async (id) => {
        const answered = asked.flatMap(({ path, from, to, entries }, at) => {
          const e = entries.find((entry) => Number(entry.chainId) === id)!;
          if (e.problem !== undefined) {
            problems[at]![id] = e.problem.code;
            return [];
          }
          expect(typeof e.block, tag(`${path}: chain ${id}'s block`)).toBe("bigint");
          return [{ path, from, to, block: e.block as bigint, answer: e.answer }];
        });
        const said = await ethCalls(
          { rpcUrl: chains.get(id)!.url, registry: V2, abi: abis.v2 },
          answered.map(({ from, to, block }) => ({
            functionName: "checkDelegateForAll",
            args: [to, from, zeroHash],
            block,
          })),
        );
        answered.forEach(({ path, block, answer }, k) => {
          expect(String(answer), tag(`${path}: chain ${id} at block ${block}`)).toBe(String(said[k]));
        });
      }),
    );
    return problems;
  }

  /**
   * Writes on `healthy` chains at once; how long after its block each was answered (ms), by chain.
   * Each is waited for up to `withinMs`.
   */
  async function round(healthy: Chain[], withinMs = 60_000): Promise<Map<number, number>> {
    const took = await Promise.all(
      healthy.map(async (chain) => {
        const { pair, block, madeAt } = await write(chain);
        const answered = await waitFor(
          tag(`chain ${chain.id}: the delegation of block ${block} to be answered`),
          async () => {
            const a = await compare(chain, pair);
            return a.status === 200 && a.block !== undefined && a.block >= block ? a : undefined;
          },
          withinMs,
          seen,
        );
        expect(answered.text, tag(`chain ${chain.id} at block ${answered.block}`)).toBe(answered.expected);
        return [chain.id, Date.now() - madeAt] as const;
      }),
    );
    return new Map(took);
  }

  it("answers every healthy chain within the bound while one is refused at start and another cut", async () => {
    const live = (id: number) => chains.get(id)!;
    const healthy = () => [...chains.values()].filter((c) => c.id !== REFUSED && c.id !== CUT);
    const latencies: number[] = [];
    /** Delegations answered later than the bound: the phase, the chain, how long after its block. */
    const slow: string[] = [];
    const record = (took: Map<number, number>, phase: string) => {
      for (const [id, ms] of took) {
        latencies.push(ms);
        if (ms > BOUND_MS) slow.push(`${phase}: chain ${id}'s delegation answered ${ms} ms after its block`);
      }
    };
    // Refused at start: every other chain live and answering, the refused one syncing.
    const before = await statuses();
    expect(before.find((s) => s.chainId === REFUSED)?.status, JSON.stringify(before)).toBe("syncing");
    // Operators see why: its indexer waits for its RPC, failing since the start.
    expect(before.find((s) => s.chainId === REFUSED)?.indexer, JSON.stringify(before)).toMatchObject({
      state: "waiting",
      rpcFailingSince: expect.any(String),
    });
    // Its registries' start blocks are not known until its RPC answers.
    expect(before.find((s) => s.chainId === REFUSED)?.registries.v2?.startBlock, JSON.stringify(before)).toBeNull();
    // Live, and caught up with the blocks mined while the indexers started: the timing starts there.
    const caughtUp = (s: Status) => s.status === "live" && s.lagSeconds !== null && s.lagSeconds <= 5;
    await waitFor(
      "every chain but the refused one to be live and caught up",
      async () => ((await statuses()).filter(caughtUp).length === IDS.length - 1 ? true : undefined),
      180_000,
      seen,
    );
    for (let r = 0; r < 3; r++) record(await round([...healthy(), live(CUT)]), "while one chain is refused");
    // Across every chain, the refused one is a problem entry; the others answer, each its contract's answer.
    const whileRefused = await compareAcross(live(CUT).written);
    const refusedOnly = { [REFUSED]: "chain_syncing" };
    expect(whileRefused, tag(`across chains, ${live(CUT).written}`)).toEqual(live(CUT).written.map(() => refusedOnly));

    // Its RPC comes up: it catches up by itself and answers.
    const refused = live(REFUSED);
    opened = await startRpcProxy(refused.url, undefined, refusedPort.port);
    // Its indexer starts within RPC_WAIT_MAX_S of its RPC's return (scripts/launcher/apart.ts).
    await round([refused], 120_000);
    // Planned, it is published again, and the API learns its start blocks (api/store/served-chains.ts).
    await waitFor(
      "the refused chain's start block to be told",
      async () => (await statuses()).find((s) => s.chainId === REFUSED)?.registries.v2?.startBlock ?? undefined,
      PUBLICATION_READ_MS + 10_000,
      seen,
    );

    // Another chain's RPC is cut for three minutes: the others answer within the bound throughout.
    fault = { drop: true };
    const cutUntil = Date.now() + CUT_MS;
    // A delegation on it meanwhile (its anvil takes it; only the indexer's RPC is cut).
    await write(live(CUT));
    /** When operators were first told its RPC fails (/registry/chains and /metrics), after the cut. */
    let toldAt: number | undefined;
    /** The most /metrics said of how long its RPC has failed. */
    let mostFailing = 0;
    const cutAt = Date.now();
    while (Date.now() < cutUntil) {
      record(await round([...healthy(), refused]), "while one chain is cut");
      const cut = (await statuses()).find((s) => s.chainId === CUT);
      const metrics = (await ask(service.url, "/metrics")).text;
      const sample = `delegation_chain_rpc_failing_seconds{chain_id="${CUT}"} `;
      const failing = Number(
        metrics
          .split("\n")
          .find((line) => line.startsWith(sample))
          ?.slice(sample.length),
      );
      if (failing > mostFailing) mostFailing = failing;
      if (toldAt === undefined && cut?.indexer?.rpcFailingSince) toldAt = Date.now();
      if (toldAt !== undefined)
        expect(cut?.indexer, tag(`the cut chain's indexer, ${Date.now() - cutAt} ms into the cut`)).toMatchObject({
          state: "running",
          rpcFailingSince: expect.any(String),
        });
    }
    expect(toldAt, tag("operators told the cut chain's RPC fails")).toBeDefined();
    expect(mostFailing, tag("/metrics: the seconds its RPC failed")).toBeGreaterThan(CUT_MS / 2000);
    // Its launcher asks its RPC every RPC_PROBE_MS (scripts/launcher/indexer-notes.ts).
    expect(toldAt! - cutAt, tag("how soon operators were told")).toBeLessThan(RPC_PROBE_MS + 15_000);
    fault = undefined;
    // No other chain's indexer stopped meanwhile.
    expect(plainOutput(service)).not.toMatch(
      new RegExp(`chains? (?!${CUT} )\\d+ \\([^)]*\\)[^:\n]*: its indexer stopped`),
    );
    await waitFor(
      "the cut chain to catch up",
      async () => ((await statuses()).some((s) => s.chainId === CUT && caughtUp(s)) ? true : undefined),
      180_000,
      seen,
    );
    record(await round([...chains.values()]), "after both returned");
    await waitFor(
      "every chain's indexer running, its RPC answering",
      async () =>
        (await statuses()).every((s) => s.indexer?.state === "running" && s.indexer.rpcFailingSince === null)
          ? true
          : undefined,
      RPC_PROBE_MS + 15_000,
      seen,
    );

    // Each group was indexed by one Ponder process (its log lines told by the group's chains), none alone.
    for (const group of GROUPS) {
      expect(plainOutput(service)).toContain(`[chain ${group.join("+")}] `);
      for (const id of group) expect(plainOutput(service)).not.toContain(`[chain ${id}] `);
    }

    // Every chain's answers equal its contracts', one chain at a time and across every chain at once.
    const after = await compareAcross(live(CUT).written);
    expect(after, tag(`across chains, ${live(CUT).written}`)).toEqual(live(CUT).written.map(() => ({})));
    // The chains side by side, each's delegations compared as the differential tests compare theirs.
    await Promise.all(
      [...chains.values()].map(async (chain) => {
        const specs = chain.written.map(
          ([i, j]): CheckSpec => ({
            kind: "all",
            from: chain.accounts[i]!,
            to: chain.accounts[j]!,
            contract: zeroAddress,
            tokenId: 0n,
            rights: zeroHash,
          }),
        );
        const urls = specs.map(({ from, to }) => `/registry/v2/check/all?chainId=${chain.id}&from=${from}&to=${to}`);
        const oracle = {
          rpcUrl: chain.url,
          registry: V2,
          abi: abis.v2,
          serviceUrl: service.url,
          chainId: chain.id,
          headers: service.headers,
          reask: false,
        };
        const result = await compareChecks(oracle, v2Checks, specs, urls, { minBlock: 0n }, ASKED_AT_ONCE);
        expect(result.mismatches, tag(`chain ${chain.id}`)).toEqual([]);
        // Every delegation written is in force: each answer true.
        expect(result.positive, tag(`chain ${chain.id}: answers true`)).toBe(chain.written.length);
      }),
    );
    latencies.sort((x, y) => x - y);
    console.log(
      `[chains-apart] ${latencies.length} delegations answered after their blocks: median ` +
        `${latencies[latencies.length >> 1]} ms, p95 ${latencies[Math.floor(latencies.length * 0.95)]} ms, ` +
        `max ${latencies.at(-1)} ms`,
    );
    expect(slow, tag(`answered later than ${BOUND_MS} ms after their blocks`)).toEqual([]);
  }, 900_000);
});
