/**
 * What integrators write by hand, v1 and v2, against the real registries on anvil. Seeded
 * random writes to both registries, half before the service starts (backfilled), half while it runs
 * (indexed live); every answer is compared with the contracts' eth_call at the block it reports:
 *
 * 1. `direction`: v2 incoming and outgoing listings are getIncomingDelegations /
 *    getOutgoingDelegations, in their order, each record's `hash` the contract's; v1 incoming is the
 *    set of getDelegationsByDelegate, outgoing the vault's delegations in force, in the order of the
 *    test's model. Whole and in pages (`limit`), at the head and at past blocks.
 * 2. `/vaults`: for queries of every `type` drawn from what the writes wrote, the answer is exactly
 *    the vaults among every address any write used (and 0x0, 0x1, an unused one) whose check
 *    (checkDelegateFor*) answers true or a non-zero amount, with the amount for erc20 and erc1155;
 *    pages of 1 to 3 add up to the whole list at the first page's block.
 * 3. `POST /registry/v{1,2}/wallets`: each entry is its wallet's own GET listing at the answer's block
 *    (same `direction`), and the contract's; wallets repeated, and one no write used.
 * 4. Hashes: `GET /registry/v2/delegation/:hash` is getDelegationsFromHashes([hash]) at the block, a
 *    revoked or unknown hash 404 delegation_not_found with X-Indexed-Block; each registry's history
 *    is the chain's logs, record for record, every v2 record's `hash` that of the delegation its
 *    event wrote. Checks of every type too (the engine is test/helpers/every-route.ts).
 * 5. All of it while writes arrive (judged once every write up to the answer's block is known), at
 *    the head and at past blocks once they stop, and after a reorganization: at the head and at past
 *    blocks of the new branch.
 * 6. Every process answers: `npm start`, and with DATABASE_URL an `npm run serve` replica too.
 *
 * Reproduce a failure with the seed it prints: SEED=<n> npx vitest run test/integrators.test.ts
 */
import { type Address, type Hex, toHex, zeroAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Anvil, revertChain, snapshotChain, startAnvil } from "../devkit/anvil";
import { untilIndexed as untilIndexedOn } from "../devkit/ask";
import { type CompareAt, type Mismatch, report } from "../devkit/compare";
import { abis, installRegistries } from "../devkit/oracle";
import { chooseSeed, Rng } from "../devkit/random";
import { chainClient, rpc } from "../devkit/rpc";
import { type SendOptions, SPREAD } from "../devkit/send";
import { plainOutput, type Replica, type Service, startReplica, startService } from "../devkit/service";
import { ADDRESS_1 } from "../devkit/v2/generate";
import { ponderFinalityDepth } from "../ponder/ponder-0.16.10";
import { EveryRoute, type Judge, judge } from "./helpers/every-route";
import { SeededWrites } from "./helpers/seeded-writes";
import { firstEnabled } from "./helpers/v2/events";

const SEED = chooseSeed();
console.log(`[integrators] SEED=${SEED} (rerun with SEED=${SEED} npx vitest run test/integrators.test.ts)`);
const tag = (text: string) => `[SEED=${SEED}] ${text}`;

const CHAIN_ID = 31337;
const FINALITY = BigInt(ponderFinalityDepth(CHAIN_ID));
/** Rounds of writes (v2, then v1): half before the service starts, half while it indexes live. */
const ROUNDS = 4;
const ROUND = { v2: 50, v1: 30, walletRevokes: 4 };
/** Each branch of the reorganization. */
const BRANCH = { v2: 20, v1: 12, walletRevokes: 2 };
/** Past blocks compared once the writes stop, and on the new branch after the reorganization. */
const PAST_BLOCKS = 4;
const BRANCH_PAST_BLOCKS = 4;
/** Each round in small batches 300 ms apart: over a few blocks. */
const SEND: SendOptions = { ...SPREAD, batchSize: 12, spreadMs: 300 };

const rng = new Rng((SEED ^ 0x5bd1e995) >>> 0);

let anvil: Anvil | undefined;
let service: Service | undefined;
let replica: Replica | undefined;
let writes: SeededWrites;
let routes: EveryRoute;
/** The last block written before the service started. */
let backfilled = 0n;

/** The processes answering: `npm start`, and on Postgres the replica. */
const processes = () => [service!.url, ...(replica ? [replica.url] : [])];
const nameOf = (base: string) => (base === service!.url ? "npm start" : "npm run serve");
const named = (base: string, mismatches: Mismatch[]) =>
  mismatches.map((m) => ({ ...m, what: `${nameOf(base)}: ${m.what}` }));

/** Every question asked of `base` at `at`, each judge naming the process. */
async function askAll(base: string, at: CompareAt, wide: boolean, extraHashes: readonly Hex[] = []): Promise<Judge[]> {
  const judges = await routes.askAll(base, at, wide, extraHashes);
  return judges.map((j) => async () => named(base, await j()));
}

/** Asks every process everything at `at` and judges it at once (the writes up to `at` are known). */
async function compareAll(at: CompareAt, extraHashes: readonly Hex[] = []): Promise<Mismatch[]> {
  const judges = (await Promise.all(processes().map((base) => askAll(base, at, true, extraHashes)))).flat();
  return judge(judges);
}

/** Every process's histories against the chain's logs. */
async function compareHistories(): Promise<Mismatch[]> {
  return (await Promise.all(processes().map(async (base) => named(base, await routes.compareHistory(base))))).flat();
}

/** One round of writes to both registries. */
async function writeRound(size: { v2: number; v1: number; walletRevokes: number }): Promise<void> {
  await writes.v2(size.v2);
  await writes.v1(size.v1, size.walletRevokes);
}

/** Waits until every process, and each worker of the replica, has indexed `block`. */
async function untilIndexed(block: bigint): Promise<void> {
  await Promise.all(
    processes().map((base) =>
      untilIndexedOn({ serviceUrl: base, chainId: CHAIN_ID, headers: service!.headers }, block),
    ),
  );
}

/** The blocks with writes in (`after`, `to`], busiest first, then at random. */
function writtenBlocks(after: bigint, to: bigint): bigint[] {
  const writesIn = new Map<bigint, number>();
  for (const e of [...writes.v2Events, ...writes.effects])
    if (e.block > after && e.block <= to) writesIn.set(e.block, (writesIn.get(e.block) ?? 0) + 1);
  const busiest = [...writesIn].sort(([, a], [, b]) => b - a)[0]?.[0];
  return [
    ...(busiest === undefined ? [] : [busiest]),
    ...rng.shuffle([...writesIn.keys()].filter((b) => b !== busiest)),
  ];
}

beforeAll(async () => {
  anvil = await startAnvil({ chainId: CHAIN_ID, blockTime: 1 });
  const installed = await installRegistries(anvil.url);
  writes = await SeededWrites.on(anvil.url, SEED, installed, SEND);
  const accounts = await chainClient(anvil.url).getAddresses();
  // Accounts 15 to 18 write nothing and are named by no write.
  const unused = accounts[16]!.toLowerCase() as Address;
  const named = writes.wallets();
  const odd = [zeroAddress, ADDRESS_1, unused];
  routes = new EveryRoute({
    chainId: CHAIN_ID,
    rpcUrl: anvil.url,
    writes,
    oracles: {
      v2: { rpcUrl: anvil.url, serviceUrl: "", registry: installed.v2, abi: abis.v2, chainId: CHAIN_ID },
      v1: { rpcUrl: anvil.url, serviceUrl: "", registry: installed.v1, abi: abis.v1, chainId: CHAIN_ID },
    },
    rng,
    headers: () => service!.headers,
    listed: { v2: [...new Set([...named.v2, ADDRESS_1, unused])], v1: [...new Set([...named.v1, unused])] },
    candidates: { v2: [...new Set([...named.v2, ...odd])], v1: [...new Set([...named.v1, ...odd])] },
    unused,
  });
});

afterAll(async () => {
  await replica?.stop();
  await service?.stop();
  await anvil?.stop();
});

describe("integrators: directions, vaults, bulk listings and hashes are the contracts' answers", () => {
  it(`${ROUNDS / 2} rounds backfilled: at the head, every answer of every process is the contract's`, async () => {
    const t0 = Date.now();
    for (let round = 0; round < ROUNDS / 2; round++) await writeRound(ROUND);
    backfilled = writes.lastWriteBlock;
    // Past Ponder's finality depth: those writes are its backfill, not its live sync.
    await rpc(anvil!.url, "anvil_mine", [toHex(FINALITY + 5n)]);
    service = await startService({ rpc: { [CHAIN_ID]: anvil!.url } });
    await untilIndexed(backfilled);
    if (process.env.DATABASE_URL) replica = await startReplica(service, { API_WORKERS: "2" });
    const t1 = Date.now();
    const mismatches = await compareAll({ minBlock: backfilled });
    console.log(
      `[integrators] ${ROUNDS / 2} rounds up to block ${backfilled}, service${replica ? " and replica" : ""} ` +
        `ready in ${t1 - t0} ms; compared at the head in ${Date.now() - t1} ms: ${JSON.stringify(routes.tally)}`,
    );
    expect(mismatches.length, report(SEED, "backfilled, at the head", mismatches)).toBe(0);
  });

  it(`${ROUNDS / 2} rounds indexed live: answers asked meanwhile, at the head once the writes stop, and at \
${PAST_BLOCKS} past blocks`, async () => {
    expect(service, tag("the first test started the service")).toBeDefined();
    const t0 = Date.now();
    let writing = true;
    const writer = (async () => {
      try {
        for (let round = ROUNDS / 2; round < ROUNDS; round++) await writeRound(ROUND);
      } finally {
        writing = false;
      }
    })();
    const live: Judge[] = [];
    const asker = async (base: string) => {
      while (writing) live.push(...(await askAll(base, { minBlock: backfilled }, false)));
    };
    await Promise.all([writer, ...processes().map(asker)]);
    const liveMismatches = await judge(live);
    console.log(
      `[integrators] ${ROUNDS / 2} live rounds up to block ${writes.lastWriteBlock}: ${live.length} answers ` +
        `asked meanwhile, judged in ${Date.now() - t0} ms`,
    );
    expect(liveMismatches.length, report(SEED, "while writes arrive", liveMismatches)).toBe(0);
    expect(live.length, tag("answers asked while writes arrive")).toBeGreaterThan(0);

    await untilIndexed(writes.lastWriteBlock);
    const t1 = Date.now();
    const head = await compareAll({ minBlock: writes.lastWriteBlock });
    expect(head.length, report(SEED, "at the head once the writes stop", head)).toBe(0);
    const blocks = [backfilled, ...writtenBlocks(0n, writes.lastWriteBlock).filter((b) => b !== backfilled)].slice(
      0,
      PAST_BLOCKS,
    );
    const past: Mismatch[] = [];
    for (const block of blocks) past.push(...(await compareAll({ block })));
    const events = await compareHistories();
    console.log(
      `[integrators] compared at the head and at blocks ${blocks.join(", ")} in ${Date.now() - t1} ms: ` +
        JSON.stringify(routes.tally),
    );
    expect(past.length, report(SEED, "at past blocks", past)).toBe(0);
    expect(events.length, report(SEED, "histories", events)).toBe(0);
  });

  it("after a reorganization: at the head and at past blocks of the new branch", async () => {
    expect(service, tag("the first test started the service")).toBeDefined();
    const t0 = Date.now();
    const fork = await snapshotChain(anvil!.url);
    await writeRound(BRANCH);
    const tipA = await chainClient(anvil!.url).getBlockNumber();
    await untilIndexed(writes.lastWriteBlock);
    // Delegations first enabled on branch A: on branch B, most are not there.
    const beforeFork = firstEnabled(writes.v2Events.filter((e) => e.block <= fork.block));
    const onlyA = [...firstEnabled(writes.v2Events).keys()].filter((hash) => !beforeFork.has(hash));
    expect(onlyA.length, tag("delegations first enabled on branch A")).toBeGreaterThan(0);
    const depth = (await chainClient(anvil!.url).getBlockNumber()) - fork.block;
    expect(depth, tag("the reorganization stays above Ponder's finality depth")).toBeLessThan(FINALITY);

    await revertChain(anvil!.url, fork);
    writes.forgetAfter(fork.block);
    await writeRound(BRANCH);
    const now = await chainClient(anvil!.url).getBlockNumber();
    if (now < tipA + 3n) await rpc(anvil!.url, "anvil_mine", [toHex(tipA + 3n - now)]);
    const tipB = await chainClient(anvil!.url).getBlockNumber();
    await untilIndexed(tipB);
    expect(plainOutput(service!), tag("the indexer saw the reorganization")).toMatch(/Reorged block/);

    const t1 = Date.now();
    const head = await compareAll({ minBlock: tipB }, onlyA);
    expect(head.length, report(SEED, "after the reorganization, at the head", head)).toBe(0);
    const blocks = [tipA, fork.block, ...writtenBlocks(fork.block, tipB).filter((b) => b !== tipA)].slice(
      0,
      BRANCH_PAST_BLOCKS,
    );
    const past: Mismatch[] = [];
    for (const block of blocks) past.push(...(await compareAll({ block }, onlyA)));
    const events = await compareHistories();
    console.log(
      `[integrators] branch A to block ${tipA}, B from ${fork.block} to ${tipB} in ${t1 - t0} ms; compared at ` +
        `the head and at blocks ${blocks.join(", ")} in ${Date.now() - t1} ms: ${JSON.stringify(routes.tally)}`,
    );
    expect(past.length, report(SEED, "after the reorganization, at past blocks", past)).toBe(0);
    expect(events.length, report(SEED, "after the reorganization, histories", events)).toBe(0);

    // The comparisons compared something of every kind.
    for (const name of [
      "v2 vaults answers with vaults",
      "v1 vaults answers with vaults",
      "vaults answers with amounts",
      "vaults answers in several pages",
      "listings in several pages",
      "hashes without a delegation (404)",
      "hashes of delegations (200)",
    ])
      expect(routes.tally[name] ?? 0, tag(`comparisons of "${name}"`)).toBeGreaterThan(0);
  });
});
