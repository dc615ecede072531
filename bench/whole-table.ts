/**
 * The whole table in one deployment, as operators run it on Postgres: every chain of the chain table
 * (core/chains.ts; `o.wholeTableChains` of them in a smoke run), each an anvil posing as it with the
 * real registries and a block every 2 s, and one `npm start` with INDEX_CHAINS_APART=true (a Ponder
 * process per chain, or per group of `o.wholeTableGroup` chains through INDEX_CHAIN_GROUPS: see
 * docs/deployment.md), each chain's new blocks heard on its anvil's WebSocket (PONDER_WS_URL_<id>),
 * as an operator with many chains would have them. Measured:
 *
 * 1. the time from `npm start` until every chain answers (a check on it 200, not 503), and until
 *    every chain is live (its /registry/chains entry `live`, not `behind`: docs/chains.md, "The
 *    chains endpoint"); the section waits for the second, at most `o.wholeTableReadyS`;
 * 2. the resident memory of the service's whole process tree (tagged: bench/procs.ts), by role;
 * 3. its CPU while nobody asks and blocks flow, with the Postgres backends it holds (told by their
 *    client ports, as bench/hostile.ts does); the anvils and the bench process apart;
 * 4. in rounds, a new v2 delegation on every chain at once, and how long after its block's
 *    timestamp the API first answers it `true`;
 * 5. last, a sample of those delegations asked again, each answer held to the contract's eth_call at
 *    the block it names: any mismatch fails the bench.
 */
import type pg from "pg";
import { type Address, encodeFunctionData, type Hex, toHex, zeroAddress, zeroHash } from "viem";
import { CHAINS, type ChainEntry } from "../core/chains";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { ask } from "../devkit/ask";
import { abis, installRegistries } from "../devkit/oracle";
import { chunks, pool } from "../devkit/pool";
import { Rng } from "../devkit/random";
import { callView, chainClient, rpc } from "../devkit/rpc";
import { plainOutput, type Service, startService } from "../devkit/service";
import type { Cleanup } from "./cleanup";
import { randomAddress } from "./dataset";
import type { BenchOptions } from "./options";
import {
  localPorts,
  memoryByProcess,
  processCommand,
  processTicks,
  RUN_VARIABLE,
  runCpu,
  sampleTreeMemory,
  tagEnv,
  taggedPids,
  ticksBetween,
  ticksPerSecond,
} from "./procs";

/** Seconds between blocks on every chain: as test/chains-apart.test.ts runs them. */
export const BLOCK_TIME_S = 2;
/** How often each chain's check is asked while waiting for its new delegation (see writeOnEvery). */
export const POLL_MS = 100;
/** How long one new delegation may take to be answered before the bench fails. */
const ANSWER_WITHIN_MS = 60_000;
/** After every chain answers, before the idle span: the indexers' last steps of going live. */
const SETTLE_MS = 10_000;
/** Anvils started and registries installed at once. */
const POSING_AT_ONCE = 6;

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));
type Log = (line: string) => void;

/** A GET of the service's, its status and body; undefined when it fails or takes over 10 s (not answering yet). */
async function get(service: Service, path: string): Promise<{ status: number; text: string } | undefined> {
  try {
    const res = await fetch(service.url + path, { headers: service.headers, signal: AbortSignal.timeout(10_000) });
    return { status: res.status, text: await res.text() };
  } catch {
    return undefined;
  }
}

/** A chain of the table posed by an anvil: its entry, the anvil, its funded accounts, its v2 registry. */
type Posed = { entry: ChainEntry; anvil: Anvil; accounts: Address[]; v2: Address };
/** A new delegation written and answered: its wallets, its block, and the answer's delay after that block. */
type Written = { chainId: number; from: Address; to: Address; block: bigint; delayMs: number };

/** CPU seconds over an idle span: the service's processes, its Postgres backends (undefined: not visible here). */
export type IdleCpu = {
  spanS: number;
  service: number;
  postgres?: number;
  backends: number;
  anvils: number;
  bench: number;
};

/** Resident memory by role of the service's processes (Ponder, API, launcher, …), each process's in MB. */
export type RoleMemory = { processes: number; totalMb: number; roles: Record<string, number[]> };

export type WholeTableFigures = {
  /** Chains in the table, those the run takes (all but in a smoke run), those posed, and those left out with why. */
  table: number;
  chosen: number;
  posed: number[];
  leftOut: { id: number; why: string }[];
  /** INDEX_CHAIN_GROUPS as given (undefined: none, every chain alone), and the chains per group asked for. */
  groups: string | undefined;
  groupSize: number;
  /** From `npm start` until each chain answered (a check 200, from a block however old), and until it was live. */
  answeringMs: Map<number, number>;
  liveMs: Map<number, number>;
  /** After the writes; and the highest total sampled every second from the start. */
  memory: RoleMemory;
  peakMb: number;
  idle: IdleCpu;
  rounds: number;
  delays: number[];
  /** The bench process's CPU over the rounds, in cores (it asks every chain's check every POLL_MS). */
  roundsBenchCpu: number;
  verified: { answers: number; positive: number };
};

/**
 * `count` chains of the table: all of them, or spread over it, a zkSync-type one first (its v2
 * elsewhere, no v1): the chains that differ most from the others are posed in a smoke run too.
 */
export function tableChains(count: number, table: readonly ChainEntry[] = CHAINS): ChainEntry[] {
  if (count >= table.length) return [...table];
  const zksync = table.find((c) => c.v1 === false) ?? table[0]!;
  const others = table.filter((c) => c !== zksync);
  const spread = Array.from({ length: count - 1 }, (_, i) => others[Math.floor((i * others.length) / (count - 1))]!);
  return [zksync, ...spread];
}

/** INDEX_CHAIN_GROUPS of consecutive chunks of `size` of `ids` (a chunk of one left out: alone anyway). */
export function chainGroupsValue(ids: readonly number[], size: number): string | undefined {
  if (size <= 1) return undefined;
  const named = chunks(ids, size).filter((group) => group.length > 1);
  return named.length === 0 ? undefined : named.map((group) => group.join("+")).join(",");
}

/** The value at quantile `q` of `xs` (nearest rank). */
export function quantile(xs: readonly number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}

/** What a process of the service is, by its command line. */
const ROLES: [role: string, command: RegExp][] = [
  ["Ponder", /\bponder\b.*\bstart\b/],
  ["API", /\bserve(-worker)?\.js\b|bundle\.mjs serve/],
  ["launcher", /bundle\.mjs start/],
  ["esbuild", /\besbuild\b/],
  ["npm and shells", /^(npm|sh)\b|\/npm\b/],
];
export const roleOf = (command: string | undefined) =>
  ROLES.find(([, pattern]) => pattern.test(command ?? ""))?.[0] ?? "other";

/** The tagged tree's resident memory now, by role. */
export function memoryByRole(tag: string): RoleMemory {
  const roles: Record<string, number[]> = {};
  let totalMb = 0;
  for (const [pid, mb] of memoryByProcess(tag)) {
    if (mb === 0) continue; // Gone meanwhile.
    const role = roleOf(processCommand(pid));
    roles[role] = [...(roles[role] ?? []), mb];
    totalMb += mb;
  }
  return { processes: Object.values(roles).flat().length, totalMb, roles };
}

/**
 * An anvil posing as `entry` with the registries where the table puts them: installRegistries puts
 * both at their mainnet addresses; on a zkSync-type chain v2's runtime code is copied to its address
 * there (core/chains.ts, V2_ADDRESS_ZKSYNC), which start-block discovery then finds.
 */
async function pose(anvils: Anvil[], entry: ChainEntry): Promise<Posed> {
  const anvil = await startAnvil({ chainId: entry.id, blockTime: BLOCK_TIME_S });
  anvils.push(anvil);
  const installed = await installRegistries(anvil.url);
  const v2 = entry.v2.address;
  if (v2.toLowerCase() !== installed.v2.toLowerCase()) {
    const code = await rpc(anvil.url, "eth_getCode", [installed.v2, "latest"]);
    await rpc(anvil.url, "anvil_setCode", [v2, code]);
  }
  if (((await rpc(anvil.url, "eth_getCode", [v2, "latest"])) as Hex).length <= 2)
    throw new Error(`no code at v2's address ${v2} after installing it`);
  const accounts = await chainClient(anvil.url).getAddresses();
  return { entry, anvil, accounts: [...accounts], v2 };
}

/**
 * Each chain posed, or left out with why (an anvil that cannot pose as it, a registry it cannot
 * hold). The anvils are stopped together, not one after another: 41 take over a minute so.
 */
async function poseChains(cleanup: Cleanup, entries: readonly ChainEntry[]) {
  const anvils: Anvil[] = [];
  cleanup.add("the whole table's anvils", () => Promise.all(anvils.map((anvil) => anvil.stop())));
  const tried = await pool(entries, POSING_AT_ONCE, async (entry) => {
    try {
      return await pose(anvils, entry);
    } catch (error) {
      return { id: entry.id, why: (error as Error).message.split("\n")[0]!.slice(0, 200) };
    }
  });
  const posed = tried.filter((t): t is Posed => "anvil" in t);
  const leftOut = tried.filter((t): t is { id: number; why: string } => !("anvil" in t));
  return { posed, leftOut };
}

type ChainStatus = { chainId: number; status: string; indexer: { state: string } | null };

/** The check every chain is asked to tell whether it answers: 200, or 503 while it syncs. */
const probePath = (chainId: number) =>
  `/registry/v2/check/all?chainId=${chainId}&to=${zeroAddress}&from=${zeroAddress}`;

/** How many chains are in each state, for a line of the log: `live 3, syncing 2`. */
const statusCounts = (statuses: readonly ChainStatus[]) => {
  const counts = new Map<string, number>();
  for (const s of statuses) {
    const state = s.indexer && s.status !== "live" ? `${s.status} (${s.indexer.state})` : s.status;
    counts.set(state, (counts.get(state) ?? 0) + 1);
  }
  return [...counts].map(([state, n]) => `${state} ${n}`).join(", ");
};

/** Each chain's ms from npm start until it first answered (a check 200, from a block however old), and until live. */
type Answering = { answeringMs: Map<number, number>; liveMs: Map<number, number> };

/**
 * Waits until every chain answers and is live (its /registry/chains entry `live`: caught up, not
 * `behind`), at most `withinS` from `startedAt`. On time out, throws with what was seen: the chains
 * answering and live, the memory, the service's last lines.
 */
async function everyChainLive(
  service: Service,
  ids: readonly number[],
  startedAt: number,
  withinS: number,
  tag: string,
  log: Log,
): Promise<Answering> {
  const { answeringMs, liveMs } = { answeringMs: new Map<number, number>(), liveMs: new Map<number, number>() };
  let statuses: ChainStatus[] = [];
  let logged = Date.now();
  const seen = () => {
    const m = memoryByRole(tag);
    return (
      `${answeringMs.size} of ${ids.length} chains answering, ${liveMs.size} live after ` +
      `${((Date.now() - startedAt) / 1000).toFixed(0)} s (${statusCounts(statuses)}); the service's RSS ` +
      `${Math.round(m.totalMb)} MB over ${m.processes} processes, ${m.roles.Ponder?.length ?? 0} of them Ponder`
    );
  };
  while (liveMs.size < ids.length) {
    if (Date.now() - startedAt > withinS * 1000) {
      const waiting = ids.filter((id) => !liveMs.has(id));
      const output = plainOutput(service)
        .split("\n")
        .filter((line) => !/Indexed block|Finalized block/.test(line))
        .slice(-40)
        .join("\n");
      throw new Error(`not every chain live within ${withinS} s: ${seen()}; not yet ${waiting.join(", ")}\n${output}`);
    }
    const chains = await get(service, "/registry/chains");
    if (chains?.status === 200) statuses = JSON.parse(chains.text) as ChainStatus[];
    for (const { chainId, status } of statuses.filter((s) => s.status !== "syncing" && !liveMs.has(s.chainId))) {
      if ((await get(service, probePath(chainId)))?.status !== 200) continue;
      const at = Date.now() - startedAt;
      if (!answeringMs.has(chainId)) answeringMs.set(chainId, at);
      if (status === "live") liveMs.set(chainId, at);
    }
    if (Date.now() - logged > 30_000) {
      logged = Date.now();
      log(`whole table: ${seen()}`);
    }
    await sleep(1_000);
  }
  return { answeringMs, liveMs };
}

/** Clock ticks so far of the service's processes, of the Postgres backends they hold, and of the anvils. */
async function spanTicks(db: pg.Client, tag: string, visible: boolean) {
  const pids = taggedPids(tag);
  const run = runCpu(process.env[RUN_VARIABLE] ?? "", "(no database)");
  const anvils = processTicks([...run.keys()].filter((pid) => /\banvil\b/.test(processCommand(pid) ?? "")));
  if (!visible) return { service: processTicks(pids), anvils, backends: [] as number[] };
  const ports = localPorts(pids);
  const { rows } = await db.query<{ pid: number; port: number }>(
    "SELECT pid, client_port AS port FROM pg_stat_activity WHERE client_port IS NOT NULL",
  );
  const backends = rows.filter((r) => ports.has(r.port)).map((r) => r.pid);
  return { service: processTicks(pids), anvils, backends, postgres: processTicks(backends) };
}

/** The CPU of the service, its backends, the anvils and this process over `seconds` of nobody asking. */
async function idleCpu(db: pg.Client, tag: string, seconds: number): Promise<IdleCpu> {
  const hz = ticksPerSecond();
  const { rows } = await db.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
  // Whether this machine's /proc shows Postgres's backends (else Postgres runs elsewhere, or in a container).
  const visible = processCommand(rows[0]!.pid)?.startsWith("postgres") ?? false;
  const [started, own, before] = [performance.now(), process.cpuUsage(), await spanTicks(db, tag, visible)];
  await sleep(seconds * 1000);
  const after = await spanTicks(db, tag, visible);
  const spent = (key: "service" | "anvils") => ticksBetween(before[key], after[key]) / hz;
  const postgres = before.postgres && after.postgres && ticksBetween(before.postgres, after.postgres) / hz;
  const bench = process.cpuUsage(own);
  return {
    spanS: (performance.now() - started) / 1000,
    service: spent("service"),
    postgres,
    backends: after.backends.length,
    anvils: spent("anvils"),
    bench: (bench.user + bench.system) / 1e6,
  };
}

/**
 * A new v2 delegation on `chain` (delegateAll from one of its funded accounts to a random address),
 * answered `true` by the API: its check asked every POLL_MS from the moment it is sent; the delay
 * from its block's timestamp (whole seconds, so up to a second early: the delay is never
 * understated) to the first `true`.
 */
async function writeOne(service: Service, chain: Posed, from: Address, to: Address): Promise<Written> {
  const { entry, anvil, v2 } = chain;
  const data = encodeFunctionData({ abi: abis.v2, functionName: "delegateAll", args: [to, zeroHash, true] });
  const hash = (await rpc(anvil.url, "eth_sendTransaction", [{ from, to: v2, data, gas: toHex(300_000) }])) as Hex;
  const path = `/registry/v2/check/all?chainId=${entry.id}&to=${to}&from=${from}`;
  const deadline = Date.now() + ANSWER_WITHIN_MS;
  let answeredAt: number | undefined;
  while (answeredAt === undefined) {
    if (Date.now() > deadline)
      throw new Error(`chain ${entry.id}: the delegation of ${hash} not answered within ${ANSWER_WITHIN_MS} ms`);
    const answer = await get(service, path);
    if (answer?.status === 200 && answer.text === "true") answeredAt = Date.now();
    else await sleep(POLL_MS);
  }
  const receipt = (await rpc(anvil.url, "eth_getTransactionReceipt", [hash])) as { status: Hex; blockNumber: Hex };
  if (receipt?.status !== "0x1") throw new Error(`chain ${entry.id}: the delegation ${hash} reverted or is missing`);
  const block = BigInt(receipt.blockNumber);
  const header = (await rpc(anvil.url, "eth_getBlockByNumber", [receipt.blockNumber, false])) as { timestamp: Hex };
  return { chainId: entry.id, from, to, block, delayMs: answeredAt - Number(BigInt(header.timestamp)) * 1000 };
}

/** `rounds` of a new delegation on every chain at once, each round at a random point of a block interval. */
async function writeOnEvery(service: Service, chains: readonly Posed[], rounds: number, rng: Rng, log: Log) {
  const written: Written[] = [];
  const own = process.cpuUsage();
  const started = performance.now();
  for (let r = 0; r < rounds; r++) {
    await sleep(rng.int(BLOCK_TIME_S * 1000));
    const pairs = chains.map((chain) => ({ chain, from: rng.pick(chain.accounts), to: randomAddress(rng) }));
    const round = await Promise.all(pairs.map(({ chain, from, to }) => writeOne(service, chain, from, to)));
    written.push(...round);
    const slowest = round.reduce((a, b) => (b.delayMs > a.delayMs ? b : a));
    log(`whole table: round ${r + 1} of ${rounds}: slowest chain ${slowest.chainId}, ${slowest.delayMs} ms`);
  }
  const cpu = process.cpuUsage(own);
  return { written, benchCpu: (cpu.user + cpu.system) / 1e3 / (performance.now() - started) };
}

/**
 * A sample of `perChain` delegations written on each chain, and the same wallets the other way
 * round (no delegation that way: false), each asked of the API and held to the contract's
 * checkDelegateForAll at the block the answer names; throws on any mismatch.
 */
async function verifyAnswers(
  service: Service,
  chains: readonly Posed[],
  written: Written[],
  perChain: number,
  rng: Rng,
) {
  const mismatches: string[] = [];
  let [answers, positive] = [0, 0];
  for (const chain of chains) {
    const sample = rng.shuffle(written.filter((w) => w.chainId === chain.entry.id)).slice(0, perChain);
    for (const { from, to } of sample.flatMap((w) => [w, { from: w.to, to: w.from }])) {
      const path = `/registry/v2/check/all?chainId=${chain.entry.id}&to=${to}&from=${from}`;
      const a = await ask(service.url, path, { headers: service.headers, reask: false });
      if (a.status !== 200 || a.block === undefined) {
        mismatches.push(`${path}: ${a.status} ${a.text.slice(0, 200)} (block ${a.block})`);
        continue;
      }
      const args = [to, from, zeroHash];
      const expected = String(await callView(chain.anvil.url, abis.v2, chain.v2, "checkDelegateForAll", args, a.block));
      answers++;
      if (a.text === "true") positive++;
      if (a.text !== expected) mismatches.push(`${path} at block ${a.block}: ${a.text}, the contract ${expected}`);
    }
  }
  if (mismatches.length > 0)
    throw new Error(`whole table: ${mismatches.length} answers unlike the contracts':\n${mismatches.join("\n")}`);
  return { answers, positive };
}

/** The whole table's figures (see the module's head); everything it starts is stopped when its scope ends. */
export async function measureWholeTable(
  o: BenchOptions,
  cleanup: Cleanup,
  db: pg.Client,
  log: Log,
): Promise<WholeTableFigures> {
  const entries = tableChains(o.wholeTableChains);
  const { posed, leftOut } = await poseChains(cleanup, entries);
  const left = leftOut.map(({ id, why }) => `${id} (${why})`).join("; ");
  log(`whole table: ${posed.length} of ${entries.length} chains posed by anvil${left ? `; left out: ${left}` : ""}`);
  if (posed.length === 0) throw new Error("whole table: anvil could pose none of the chains");
  const ids = posed.map((c) => c.entry.id);
  const groups = chainGroupsValue(ids, o.wholeTableGroup);
  const tag = `whole-table-${process.pid}-${Date.now()}`;
  const memory = sampleTreeMemory(tag, 1_000);
  cleanup.add("memory sampling", async () => memory.stop());
  const rpcUrls = Object.fromEntries(posed.map((c) => [c.entry.id, c.anvil.url]));
  const ws = Object.fromEntries(posed.map((c) => [`PONDER_WS_URL_${c.entry.id}`, c.anvil.url.replace(/^http/, "ws")]));
  const env = { INDEX_CHAINS_APART: "true", ...(groups && { INDEX_CHAIN_GROUPS: groups }), ...ws, ...tagEnv(tag) };
  const startedAt = Date.now();
  // Until listening only: its /ready is 200 once any chain is, and every chain is waited for below.
  const service = await startService({ rpc: rpcUrls, env, until: "listening" });
  cleanup.add("whole table's service", () => service.stop());
  log(`whole table: npm start listening on ${posed.length} chains${groups ? ` (INDEX_CHAIN_GROUPS=${groups})` : ""}`);
  const answering = await everyChainLive(service, ids, startedAt, o.wholeTableReadyS, tag, log);
  const ready = memoryByRole(tag);
  const after = (ms: Map<number, number>) => `${(Math.max(...ms.values()) / 1000).toFixed(1)} s`;
  log(
    `whole table: every chain answering after ${after(answering.answeringMs)}, live after ` +
      `${after(answering.liveMs)}; the ` +
      `service's RSS ${Math.round(ready.totalMb)} MB over ${ready.processes} processes ` +
      `(${ready.roles.Ponder?.length ?? 0} Ponder); idle for ${o.wholeTableIdleS} s next`,
  );
  await sleep(SETTLE_MS);
  const idle = await idleCpu(db, tag, o.wholeTableIdleS);
  log(`whole table: idle, the service spent ${(idle.service + (idle.postgres ?? 0)).toFixed(1)} CPU seconds`);
  const rng = new Rng(o.seed + 40);
  const { written, benchCpu } = await writeOnEvery(service, posed, o.wholeTableRounds, rng, log);
  const verified = await verifyAnswers(service, posed, written, o.wholeTableVerify, rng);
  log(`whole table: ${verified.answers} answers verified against the contracts' eth_call`);
  return {
    table: CHAINS.length,
    chosen: entries.length,
    posed: ids,
    leftOut,
    groups,
    groupSize: o.wholeTableGroup,
    ...answering,
    memory: memoryByRole(tag),
    peakMb: memory.stop(),
    idle,
    rounds: o.wholeTableRounds,
    delays: written.map((w) => w.delayMs),
    roundsBenchCpu: benchCpu,
    verified,
  };
}
