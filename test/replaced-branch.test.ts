/**
 * A branch the chain replaced is never served: within 2 s of the chain replacing the block an
 * answer would be given at, every answer comes from the new branch or is refused 503, whatever the
 * reorganization's depth beside Ponder's finality (30 blocks here).
 *
 * The scenario of the issue that found it: delegations written, indexed, empty blocks mined on top
 * (the replaced branch is `depth` blocks long); then the chain goes back to before the writes and
 * builds a longer branch with other delegations. Every process (npm start; on Postgres also a
 * replica) is sampled all through: after the 2 s, an answer of 200 must equal the contract on the
 * new branch at the block it reports. A fork none of whose blocks Ponder holds final is followed:
 * answers resume from the new branch. One that replaces a block Ponder holds final mixes two
 * branches in the indexed history: the chain is then refused 503 chain_reorganized for good.
 *
 * Ponder moves its final block in steps of 30, once the head is 60 past it
 * (ponder/ponder-0.16.10.ts: ponderFinalizedAt): a fork within 30 blocks is always followed, one
 * past 60 always refused, and one of 40 either, by where the steps fall. So the fork is placed on
 * them (mining paused from there to the replacement), and 40 blocks is tried both ways.
 *
 * Reproduce a failure with the seed it prints: SEED=<n> npx vitest run test/replaced-branch.test.ts
 */
import { type Address, encodeFunctionData, toHex, zeroHash } from "viem";
import { afterAll, describe, expect, it } from "vitest";
import { type Anvil, revertChain, snapshotChain, startAnvil } from "../devkit/anvil";
import { ask } from "../devkit/ask";
import { abis, installRegistries } from "../devkit/oracle";
import { waitFor } from "../devkit/processes";
import { chooseSeed, Rng } from "../devkit/random";
import { callView, chainClient, rpc } from "../devkit/rpc";
import {
  plainOutput,
  REPLACED_WITHIN_MS,
  type Replica,
  type Service,
  startReplica,
  startService,
} from "../devkit/service";
import { ponderFinalizedAt, ponderLoggedFinalized } from "../ponder/ponder-0.16.10";

const SEED = chooseSeed();
console.log(`[replaced-branch] SEED=${SEED} (rerun with SEED=${SEED} npx vitest run test/replaced-branch.test.ts)`);
const tag = (text: string) => `[SEED=${SEED}] ${text}`;
const CHAIN_ID = 31337;
/** The chain's name in Ponder's log (core/chains.ts). */
const CHAIN_NAME = "anvil";
/** Blocks either side of the fork and of the old branch's tip over which the fork's outcome must not change. */
const MARGIN = 3;

type Sample = {
  process: string;
  path: string;
  at: number;
  status: number;
  block?: bigint;
  body: string;
  code?: string;
};

/** One chain, its service and replica, and the delegations each branch made (from → to). */
type World = {
  anvil: Anvil;
  service: Service;
  replica?: Replica;
  hot: Address;
  accounts: Address[];
  registry: Address;
};

const worlds: World[] = [];

afterAll(async () => {
  for (const world of worlds) {
    await world.replica?.stop();
    await world.service.stop();
    await world.anvil.stop();
  }
});

async function startWorld(): Promise<World> {
  const anvil = await startAnvil({ chainId: CHAIN_ID });
  const { v2: registry } = await installRegistries(anvil.url);
  const [hot, ...accounts] = (await chainClient(anvil.url).getAddresses()) as Address[];
  const service = await startService({ rpc: { [CHAIN_ID]: anvil.url } });
  const replica = process.env.DATABASE_URL ? await startReplica(service) : undefined;
  const world = { anvil, service, replica, hot: hot!, accounts, registry };
  worlds.push(world);
  return world;
}

/** `from`s' delegateAll to the hot wallet, all in one block, mined at once (mining is paused). */
async function delegateAll(world: World, froms: readonly Address[]): Promise<void> {
  for (const from of froms) {
    const data = encodeFunctionData({ abi: abis.v2, functionName: "delegateAll", args: [world.hot, zeroHash, true] });
    await rpc(world.anvil.url, "eth_sendTransaction", [{ from, to: world.registry, data, gas: toHex(200_000) }]);
  }
  await rpc(world.anvil.url, "evm_mine");
}

/** The newest block every process reports (X-Indexed-Block), once each has reached `block`. */
async function indexedPast(world: World, path: string, block: bigint): Promise<void> {
  for (const base of [world.service.url, ...(world.replica ? [world.replica.url] : [])]) {
    await waitFor(
      `${base} to index block ${block}`,
      async () => {
        const a = await ask(base, path, { headers: world.service.headers, reask: false });
        return a.status === 200 && (a.block ?? 0n) >= block ? true : undefined;
      },
      120_000,
    );
  }
}

/**
 * What the processes answered after the replacement and what npm start logged: a timeout's message
 * ends with it, so that a depth neither followed nor refused says what it was answered instead.
 */
function seenSince(world: World, samples: readonly Sample[], replacedAt: number): string {
  const lines: string[] = [];
  for (const base of [world.service.url, ...(world.replica ? [world.replica.url] : [])]) {
    const mine = samples.filter((s) => s.process === base && s.at > replacedAt);
    // Each outcome (status or problem code): how many, and the first and last block its answers reported.
    const outcomes: Record<string, { answers: number; blocks?: string }> = {};
    for (const s of mine) {
      const key = s.code ?? String(s.status);
      const outcome = outcomes[key] ?? { answers: 0 };
      outcomes[key] = outcome;
      outcome.answers++;
      if (s.block !== undefined) outcome.blocks = `${outcome.blocks?.split("..")[0] ?? s.block}..${s.block}`;
    }
    lines.push(`${base}: ${mine.length} answers since the replacement: ${JSON.stringify(outcomes)}`);
    for (const s of mine.slice(-3)) lines.push(`  at ${s.at - replacedAt} ms ${s.path}: ${s.status} ${s.body}`);
  }
  const log = plainOutput(world.service)
    .split("\n")
    .filter((line) => /reorg|final|error|exit|restart/i.test(line));
  lines.push(`npm start's log, ${log.length} lines of note, the last 20:`, ...log.slice(-20));
  return lines.join("\n");
}

/**
 * Where to fork, from the chain's newest block `head` (mining paused, indexed): the first block
 * from which a branch `depth` blocks long leaves Ponder holding its first block final (`final`) or
 * none of its blocks, by Ponder's steps from the block its log last named final; and that block.
 */
function placeFork(world: World, head: bigint, depth: number, final: boolean): { fork: bigint; logged: bigint } {
  const logged = ponderLoggedFinalized(plainOutput(world.service), CHAIN_NAME);
  if (logged === undefined) throw new Error(`Ponder logged no final block for ${CHAIN_NAME}`);
  const holdsFinal = (fork: bigint, tip: bigint) => ponderFinalizedAt(CHAIN_ID, logged, tip) > fork;
  const shifts = Array.from({ length: 2 * MARGIN + 1 }, (_, i) => BigInt(i - MARGIN));
  for (let fork = head; fork < head + 100n; fork++) {
    const tip = fork + BigInt(depth);
    if (shifts.every((f) => shifts.every((t) => holdsFinal(fork + f, tip + t) === final))) return { fork, logged };
  }
  throw new Error(`no fork ${depth} blocks deep from block ${head} leaves ${final ? "a" : "no"} block final`);
}

async function scenario(depth: number, final: boolean) {
  const world = await startWorld();
  const rng = new Rng(SEED + 2 * depth + Number(final));
  const shuffled = rng.shuffle([...world.accounts]);
  // Each branch's delegations (the scenario wrote 20 transactions): true on one branch only.
  const oldFroms = shuffled.slice(0, 9);
  const newFroms = shuffled.slice(9, 18);
  const check = (from: Address) => `/registry/v2/check/all?chainId=${CHAIN_ID}&to=${world.hot}&from=${from}`;
  const paths = [...oldFroms, ...newFroms].map(check);

  // Mining paused until the replacement: Ponder's final block then moves only on the blocks mined here.
  const client = chainClient(world.anvil.url);
  await client.setIntervalMining({ interval: 0 });
  // A block already under way when mining pauses is stored within milliseconds.
  await new Promise((ok) => setTimeout(ok, 250));
  const paused = await client.getBlockNumber();
  await indexedPast(world, paths[0]!, paused);
  const placed = placeFork(world, paused, depth, final);
  if (placed.fork > paused) await rpc(world.anvil.url, "anvil_mine", [toHex(placed.fork - paused)]);

  // The old branch: the writes in one block, then empty blocks to `depth` past the fork.
  const fork = await snapshotChain(world.anvil.url, { blockTime: 0 });
  expect(fork.block, tag("the fork where it was placed")).toBe(placed.fork);
  await delegateAll(world, oldFroms);
  await rpc(world.anvil.url, "anvil_mine", [toHex(depth - 1)]);
  const oldTip = fork.block + BigInt(depth);
  await indexedPast(world, paths[0]!, oldTip);
  // Ponder holds final what its steps say: else the case would test another outcome than it names.
  const finalAtTip = ponderFinalizedAt(CHAIN_ID, placed.logged, oldTip);
  await waitFor(
    `Ponder to log block ${finalAtTip} final at the old branch's tip ${oldTip} (fork ${fork.block})`,
    async () => (ponderLoggedFinalized(plainOutput(world.service), CHAIN_NAME) === finalAtTip ? true : undefined),
    30_000,
    () => `it logged ${ponderLoggedFinalized(plainOutput(world.service), CHAIN_NAME)} last`,
  );
  console.log(
    `[replaced-branch] depth ${depth}: fork at ${fork.block}, old tip ${oldTip}, Ponder's final block there ` +
      `${finalAtTip}: ${final ? "replaced" : "kept"} by the new branch`,
  );

  // Sampled all through, keyed, by every process.
  const samples: Sample[] = [];
  let sampling = true;
  const processes = [world.service.url, ...(world.replica ? [world.replica.url] : [])];
  const samplers = processes.flatMap((base) =>
    Array.from({ length: 3 }, async () => {
      while (sampling) {
        const path = rng.pick(paths);
        const a = await ask(base, path, { headers: world.service.headers, reask: false, timeoutMs: 10_000 }).catch(
          () => undefined,
        );
        if (a === undefined) continue;
        const code = a.status === 200 ? undefined : (JSON.parse(a.text) as { code?: string }).code;
        samples.push({ process: base, path, at: Date.now(), status: a.status, block: a.block, body: a.text, code });
        await new Promise((ok) => setTimeout(ok, 50));
      }
    }),
  );

  // The replacement: back to the fork, and a longer branch with other delegations.
  await revertChain(world.anvil.url, fork, { blockTime: 0 });
  const replacedAt = Date.now();
  await delegateAll(world, newFroms);
  await rpc(world.anvil.url, "anvil_mine", [toHex(depth + 5)]);
  const newTip = fork.block + BigInt(depth) + 6n;
  await client.setIntervalMining({ interval: 1 });

  // Followed: until every process answers from the new branch past its writes. Else: until refused for good.
  await waitFor(
    final ? "the chain refused as reorganized" : "every process to answer from the new branch",
    async () => {
      // Sampled for some seconds past the replacement at least, however soon the chain is followed.
      if (Date.now() < replacedAt + 3 * REPLACED_WITHIN_MS) return undefined;
      const last = processes.map((base) =>
        samples.filter((s) => s.process === base && s.at > replacedAt + REPLACED_WITHIN_MS).at(-1),
      );
      const done = last.every((s) =>
        final ? s?.code === "chain_reorganized" : s?.status === 200 && s.block !== undefined && s.block >= newTip,
      );
      return done ? true : undefined;
    },
    180_000,
    () => seenSince(world, samples, replacedAt),
  );
  sampling = false;
  await Promise.all(samplers);

  // Every answer after REPLACED_WITHIN_MS: 503, or the contract on the new branch at its block.
  const after = samples.filter((s) => s.at > replacedAt + REPLACED_WITHIN_MS);
  const mismatches: string[] = [];
  const head = await chainClient(world.anvil.url).getBlockNumber();
  for (const s of after) {
    if (s.status === 503) continue;
    const where = `${s.process}${s.path} at ${s.at - replacedAt} ms: ${s.status} X-Indexed-Block ${s.block} ${s.body}`;
    if (s.status !== 200 || s.block === undefined || s.block > head) {
      mismatches.push(`not 503 nor an answer on the new branch: ${where}`);
      continue;
    }
    const from = s.path.slice(s.path.lastIndexOf("=") + 1) as Address;
    // The contract's answer there. Before its deployment (a revert of the chain's first events leaves
    // the state at block 0) the registry is empty: false. Should anvil fail otherwise, it says why.
    const deployed = (await rpc(world.anvil.url, "eth_getCode", [world.registry, toHex(s.block)])) !== "0x";
    const truth = deployed
      ? await callView(
          world.anvil.url,
          abis.v2,
          world.registry,
          "checkDelegateForAll",
          [world.hot, from, zeroHash],
          s.block,
        ).catch((error: Error) => `anvil failed: ${error.message.split("\n")[0]} (fork ${fork.block}, head ${head})`)
      : false;
    if (String(truth) !== s.body) mismatches.push(`the replaced branch's answer (new branch: ${truth}): ${where}`);
  }
  const outcomes: Record<string, number> = {};
  for (const s of after) outcomes[s.code ?? String(s.status)] = (outcomes[s.code ?? String(s.status)] ?? 0) + 1;
  console.log(
    `[replaced-branch] depth ${depth}: ${samples.length} answers, ${after.length} after ${REPLACED_WITHIN_MS} ms: ` +
      JSON.stringify(outcomes),
  );
  expect(mismatches.slice(0, 10), tag(`depth ${depth}: ${mismatches.length} answers from the replaced branch`)).toEqual(
    [],
  );
  expect(after.length, tag("answers sampled after the replacement")).toBeGreaterThan(10);
}

describe("a branch the chain replaced is never served", () => {
  // Each on its own chain: a fork that replaces a final block leaves its chain refused for good.
  it.concurrent.each([
    [5, "none of its blocks"],
    [40, "none of its blocks"],
    [40, "its first block"],
    [80, "its first block"],
  ] as const)(
    `a fork %i blocks deep, %s final: within ${REPLACED_WITHIN_MS} ms, ` +
      "every answer comes from the new branch or is 503",
    (depth, final) => scenario(depth, final === "its first block"),
  );
});
