/**
 * Answers across chains (docs/api.md, "Every chain at once"): one `npm start` indexes three anvil
 * chains of different cadences (31337 a block a second, 10 one every two, 8453 four a second),
 * each with the real registries and its own seeded random writes. Checks (v2 and v1), wallet
 * listings (whole, by direction, in pages continued per chain with each entry's cursor), vaults and
 * contract listings are asked with `chainId=all` and with lists: every chain asked has one entry,
 * by chain id, and each chain's answer is what that chain's contract answers (eth_call) at the
 * block the entry names. Last, 31337 replaces a block Ponder holds final (the service then refuses
 * it for good, api/watch/chain-alarms.ts): it is a problem entry (chain_reorganized) while the
 * others still answer, each its contract's answer. Bad input is a 400 naming the parameter.
 *
 * A chain whose RPC is down is not a problem entry: its answers are what it has indexed, true at
 * the block they name (test/rpc-outage.test.ts). A chain still backfilling is a chain_syncing
 * entry beside the others' answers where chains are indexed apart (test/chains-apart.test.ts); in
 * one indexer, as here, it makes every chain answer chain_syncing (Ponder's readiness is one flag
 * for all, ponder/ponder-0.16.10.ts).
 *
 * Reproduce a failure with the seed it prints: SEED=<n> npx vitest run test/across-chains.test.ts
 */
import { type Address, encodeFunctionData, getAddress, type Hex, toHex, zeroHash } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Direction } from "../core/parse";
import { type Anvil, revertChain, snapshotChain, startAnvil } from "../devkit/anvil";
import { ask, indexedBlock } from "../devkit/ask";
import { type Mismatch, type Oracle, report } from "../devkit/compare";
import { abis, addresses, installRegistries } from "../devkit/oracle";
import { waitFor } from "../devkit/processes";
import { chooseSeed, Rng, spellAddress } from "../devkit/random";
import { chainClient, ethCalls, rpc } from "../devkit/rpc";
import { sendTx } from "../devkit/send";
import { plainOutput, REPLACED_WITHIN_MS, type Service, startService } from "../devkit/service";
import * as v1c from "../devkit/v1/checks";
import * as v2c from "../devkit/v2/checks";
import { CONTRACTS as V2_CONTRACTS } from "../devkit/v2/generate";
import { ponderFinalityDepth, ponderLoggedFinalized } from "../ponder/ponder-0.16.10";
import { type ApiRecord, compareListing } from "./helpers/compare-listings";
import { contractListing, v2InForce } from "./helpers/contract-listings";
import { canonical, parseJsonExact } from "./helpers/json";
import type { Position } from "./helpers/position";
import { SeededWrites } from "./helpers/seeded-writes";
import { firstEnabled } from "./helpers/v2/events";
import { v2Listings } from "./helpers/v2/listing";
import { contractVaults, type VaultKit, vaultsPath } from "./helpers/vaults";

const SEED = chooseSeed();
console.log(`[across-chains] SEED=${SEED} (rerun with SEED=${SEED} npx vitest run test/across-chains.test.ts)`);
const tag = (text: string) => `[SEED=${SEED}] ${text}`;

/** The chains, by id, and their block time (seconds). */
const CHAINS = [
  { id: 10, blockTime: 2 },
  { id: 8453, blockTime: 0.25 },
  { id: 31337, blockTime: 1 },
] as const;
const IDS: number[] = CHAINS.map((c) => c.id);
/** The chain reorganized past its final block, last; its name in Ponder's log. */
const REORGANIZED = 31337;
const REORGANIZED_NAME = "anvil";
const V1 = getAddress(addresses.v1.address);
const V2 = getAddress(addresses.v2.address);

type Run = {
  id: number;
  anvil: Anvil;
  /** The block after the registries were put on the chain. */
  installed: bigint;
  writes: SeededWrites;
  oracles: { v1: Oracle; v2: Oracle };
  positions: Map<Hex, Position>;
};

let runs: Run[] = [];
/** Once true, the reorganized chain must be a chain_reorganized entry. */
let reorganized = false;
let service: Service | undefined;
const rng = new Rng((SEED ^ 0x3c6ef372) >>> 0);
const run = (id: number) => runs.find((r) => r.id === id)!;
const get = (path: string) => ask(service!.url, path, { headers: service!.headers });

const V2_KIT: VaultKit<v2c.CheckSpec> = {
  ...v2c.v2Checks,
  hot: (s) => s.to,
  withVault: (s, from) => ({ ...s, from }),
};

async function prepare(chain: (typeof CHAINS)[number], i: number): Promise<Run> {
  const anvil = await startAnvil({ chainId: chain.id, blockTime: chain.blockTime });
  await installRegistries(anvil.url);
  const installed = (await chainClient(anvil.url).getBlockNumber()) + 1n;
  const writes = await SeededWrites.on(anvil.url, (SEED ^ (i * 0x9e3779b9)) >>> 0, { v1: V1, v2: V2 });
  await writes.v2(60);
  await writes.v1(30, 2);
  const oracle = (registry: Address, version: "v1" | "v2"): Oracle => ({
    rpcUrl: anvil.url,
    serviceUrl: "",
    registry,
    abi: abis[version],
    chainId: chain.id,
  });
  return {
    id: chain.id,
    anvil,
    installed,
    writes,
    oracles: { v1: oracle(V1, "v1"), v2: oracle(V2, "v2") },
    positions: firstEnabled(writes.v2Events),
  };
}

beforeAll(async () => {
  const t0 = Date.now();
  runs = await Promise.all(CHAINS.map(prepare));
  for (const r of runs) {
    console.log(
      `[across-chains] chain ${r.id}: ${r.writes.v2Events.length} v2 events, ${r.writes.effects.length} v1 ` +
        `effects, last write in block ${r.writes.lastWriteBlock}`,
    );
  }
  service = await startService({ rpc: Object.fromEntries(runs.map((r) => [r.id, r.anvil.url])) });
  for (const r of runs) for (const o of Object.values(r.oracles)) o.headers = service.headers;
  await Promise.all(runs.map((r) => indexedPast(r, r.writes.lastWriteBlock)));
  console.log(`[across-chains] chains written and indexed in ${Date.now() - t0} ms`);
}, 240_000);

/** The last lines of a log about reorganizations and final blocks. */
const notedLog = (log: string) =>
  log
    .split("\n")
    .filter((line) => /reorg|error|chain=anvil/i.test(line))
    .slice(-15)
    .join("\n");

/** Waits until the service answers about chain `r` at `block` or later. */
const indexedPast = (r: Run, block: bigint) =>
  waitFor(
    `chain ${r.id} indexed to block ${block}`,
    async () => {
      const indexed = await indexedBlock({ serviceUrl: service!.url, chainId: r.id, headers: service!.headers });
      return indexed !== undefined && indexed >= block ? indexed : undefined;
    },
    120_000,
  );

afterAll(async () => {
  await service?.stop();
  await Promise.all(runs.map((r) => r.anvil.stop()));
});

/** One entry of an answer across chains. */
type Entry = { chainId: number; block?: bigint; answer?: unknown; next?: string; problem?: { code: string } };

/** A random list of at least two chains (by the order given, not by id), or all; and the chains it names. */
function chainsParam(): { param: string; ids: number[] } {
  if (rng.chance(0.4)) return { param: "all", ids: [...IDS] };
  const ids = rng.shuffle([...IDS]).slice(0, 2 + rng.int(IDS.length - 1));
  return { param: ids.join(","), ids: [...ids].sort((a, b) => a - b) };
}

/** `path` with its chainId given as `param`. */
const withChains = (path: string, param: string) =>
  path.includes("chainId=") ? path.replace(/chainId=[0-9]+/, `chainId=${param}`) : `${path}&chainId=${param}`;

/**
 * The entries that answer, of an answer across chains checked for the shape every one must have:
 * 200, no X-Indexed-Block, one entry per chain asked, by chain id; a problem only from the
 * reorganized chain once it is (and then always), an answer at a block no earlier than the chain's
 * last write.
 */
async function entriesOf(path: string, ids: number[], bad: (m: Mismatch) => void): Promise<Entry[]> {
  const a = await get(path);
  const fail = (what: string, expected: string, got: string) => bad({ what, query: path, expected, got });
  if (a.status !== 200) {
    fail("status", "200", `${a.status} ${a.text.slice(0, 300)}`);
    return [];
  }
  if (a.headers.get("X-Indexed-Block") !== null)
    fail("X-Indexed-Block", "absent", String(a.headers.get("X-Indexed-Block")));
  // Integers come exact (bigints): the chain ids are small.
  const chains = (parseJsonExact(a.text) as { chains: Entry[] }).chains.map((e) => ({
    ...e,
    chainId: Number(e.chainId),
  }));
  const got = chains.map((e) => e.chainId);
  if (got.join() !== ids.join()) fail("chains", ids.join(), got.join());
  for (const e of chains) {
    const refused = reorganized && e.chainId === REORGANIZED;
    if (e.problem !== undefined) {
      if (!refused || e.problem.code !== "chain_reorganized")
        fail(`chain ${e.chainId}: problem`, refused ? "chain_reorganized" : "an answer", JSON.stringify(e.problem));
      continue;
    }
    if (refused) fail(`chain ${e.chainId}`, "a chain_reorganized problem", JSON.stringify(e).slice(0, 200));
    if (e.block === undefined || e.block < run(e.chainId).writes.lastWriteBlock)
      fail(`chain ${e.chainId}: block`, `>= ${run(e.chainId).writes.lastWriteBlock}`, String(e.block));
  }
  return chains.filter((e) => e.problem === undefined);
}

/** `n` random checks (v2 and v1) across random chains, each chain's part compared with its contract. */
async function compareChecksAcross(n: number): Promise<{ mismatches: Mismatch[]; compared: number }> {
  const mismatches: Mismatch[] = [];
  let compared = 0;
  for (let i = 0; i < n; i++) {
    const v2 = i % 3 !== 2;
    const source = run(rng.pick(IDS)).writes;
    const spec = v2
      ? v2c.randomCheck(rng, source.pools.v2, source.generators.v2.history)
      : v1c.randomCheck(rng, source.pools.v1, source.generators.v1.delegations, []);
    const url = v2 ? v2c.checkUrl(rng, 1, spec as v2c.CheckSpec) : v1c.checkUrl(rng, 1, spec as v1c.CheckSpec);
    const { param, ids } = chainsParam();
    const path = withChains(url, param);
    for (const e of await entriesOf(path, ids, (m) => mismatches.push(m))) {
      const r = run(e.chainId);
      const call = v2 ? v2c.checkCall(spec as v2c.CheckSpec) : v1c.v1Checks.call(spec as v1c.CheckSpec);
      const [want] = await ethCalls(r.oracles[v2 ? "v2" : "v1"], [{ ...call, block: e.block! }]);
      compared++;
      if (String(e.answer) !== String(want))
        mismatches.push({
          what: `chain ${e.chainId} at ${e.block}`,
          query: path,
          expected: String(want),
          got: String(e.answer),
        });
    }
  }
  return { mismatches, compared };
}

const expectNone = (label: string, mismatches: Mismatch[]) =>
  expect(mismatches.length, report(SEED, label, mismatches)).toBe(0);

describe("answers across chains: each chain's part is its contract's answer at the block it names", () => {
  it("v2 and v1 checks of every kind, across all and lists", async () => {
    const { mismatches, compared } = await compareChecksAcross(50);
    expectNone("checks", mismatches);
    expect(compared, tag("checks compared")).toBeGreaterThanOrEqual(100);
  });

  it("v2 wallet listings, whole and by direction", async () => {
    const mismatches: Mismatch[] = [];
    let records = 0;
    for (let i = 0; i < 12; i++) {
      const wallet = rng.pick(run(31337).writes.wallets().v2);
      const direction = rng.pick([undefined, "both", "incoming", "outgoing"] as const);
      const { param, ids } = chainsParam();
      const query = `chainId=${param}${direction ? `&direction=${direction}` : ""}`;
      const path = `/registry/v2/${spellAddress(rng, wallet)}?${query}`;
      for (const e of await entriesOf(path, ids, (m) => mismatches.push(m))) {
        const r = run(e.chainId);
        const bad = (what: string, expected: string, got: string) =>
          mismatches.push({ what: `chain ${e.chainId} at ${e.block}: ${what}`, query: path, expected, got });
        const list = e.answer as ApiRecord[];
        records += list.length;
        await compareListing(r.oracles.v2, v2Listings(r.positions, direction), wallet, list, e.block!, bad);
      }
    }
    expectNone("listings", mismatches);
    expect(records, tag("records compared")).toBeGreaterThan(0);
  });

  it("v2 wallet listings in pages: each chain continued alone with its entry's cursor", async () => {
    const mismatches: Mismatch[] = [];
    let continued = 0;
    for (let i = 0; i < 6; i++) {
      const wallet = rng.pick(run(31337).writes.wallets().v2);
      const direction = rng.pick(["both", "incoming", "outgoing"] as const satisfies Direction[]);
      const spelt = spellAddress(rng, wallet);
      const limit = 1 + rng.int(3);
      const { param, ids } = chainsParam();
      const path = `/registry/v2/${spelt}?direction=${direction}&limit=${limit}&chainId=${param}`;
      for (const e of await entriesOf(path, ids, (m) => mismatches.push(m))) {
        const bad = (what: string, expected: string, got: string) =>
          mismatches.push({ what: `chain ${e.chainId} at ${e.block}: ${what}`, query: path, expected, got });
        const list = [...(e.answer as ApiRecord[])];
        if (list.length > limit) bad("first page's size", `<= ${limit}`, String(list.length));
        let next = e.next;
        while (next !== undefined) {
          continued++;
          const query = `direction=${direction}&limit=${limit}&chainId=${e.chainId}&cursor=${next}`;
          const page = `/registry/v2/${spelt}?${query}`;
          const a = await get(page);
          if (a.status !== 200 || a.block !== e.block) {
            bad(`next page ${page}`, `200 at ${e.block}`, `${a.status} at ${a.block}: ${a.text.slice(0, 200)}`);
            break;
          }
          list.push(...(parseJsonExact(a.text) as ApiRecord[]));
          next = /[?&]cursor=([^&>]+)/.exec(a.headers.get("Link") ?? "")?.[1];
        }
        const r = run(e.chainId);
        await compareListing(r.oracles.v2, v2Listings(r.positions, direction), wallet, list, e.block!, bad);
      }
    }
    expectNone("paged listings", mismatches);
    expect(continued, tag("pages continued per chain")).toBeGreaterThan(0);
  });

  it("v2 vaults and contract listings", async () => {
    const mismatches: Mismatch[] = [];
    let vaults = 0;
    for (let i = 0; i < 8; i++) {
      const source = run(rng.pick(IDS)).writes;
      const spec = v2c.randomCheck(rng, source.pools.v2, source.generators.v2.history);
      const { param, ids } = chainsParam();
      const path = withChains(vaultsPath(rng, v2c.checkUrl(rng, 1, spec), spec.to), param);
      for (const e of await entriesOf(path, ids, (m) => mismatches.push(m))) {
        const r = run(e.chainId);
        const want = await contractVaults(r.oracles.v2, V2_KIT, spec, r.writes.wallets().v2, e.block!);
        const got = (e.answer as ApiRecord[]).map((v) => ({ ...v, vault: getAddress(String(v.vault)) }));
        vaults += got.length;
        if (canonical(got) !== canonical(want))
          mismatches.push({
            what: `chain ${e.chainId} at ${e.block}`,
            query: path,
            expected: canonical(want),
            got: canonical(got),
          });
      }
    }
    for (let i = 0; i < 6; i++) {
      const contract = rng.pick(V2_CONTRACTS);
      const { param, ids } = chainsParam();
      const path = `/registry/v2/contract/${spellAddress(rng, contract)}?chainId=${param}&limit=1000`;
      for (const e of await entriesOf(path, ids, (m) => mismatches.push(m))) {
        const r = run(e.chainId);
        const froms = r.writes.pools.v2.senders;
        const inForce = await v2InForce(r.oracles.v2, r.positions, froms, e.block!);
        const want = contractListing(inForce, contract, undefined);
        const norm = (list: ApiRecord[]) =>
          list.map((x) => canonical({ ...x, rights: String(x.rights).toLowerCase() }));
        if (norm(e.answer as ApiRecord[]).join() !== norm(want.records).join())
          mismatches.push({
            what: `chain ${e.chainId} at ${e.block}: contract listing`,
            query: path,
            expected: `${want.records.length} records`,
            got: `${(e.answer as ApiRecord[]).length} records`,
          });
      }
    }
    expectNone("vaults and contract listings", mismatches);
    expect(vaults, tag("vaults compared")).toBeGreaterThan(0);
  });

  it("at a moment (timestamp): each chain's newest block at or before it, its contract's answer there", async () => {
    const mismatches: Mismatch[] = [];
    const stamp = async (r: Run, block: bigint) =>
      (await chainClient(r.anvil.url).getBlock({ blockNumber: block })).timestamp;
    // From when every chain had its registries, to a little before each chain's newest indexed block.
    const first = (await Promise.all(runs.map((r) => stamp(r, r.installed)))).reduce((a, b) => (a > b ? a : b));
    const heads = await Promise.all(
      runs.map(async (r) =>
        stamp(r, (await indexedBlock({ serviceUrl: service!.url, chainId: r.id, headers: service!.headers }))!),
      ),
    );
    const last = heads.reduce((a, b) => (a < b ? a : b)) - 2n;
    expect(last > first, tag(`moments to ask: ${first} to ${last}`)).toBe(true);
    let compared = 0;
    const sharedRuns = new Set<number>();
    for (let i = 0; i < 30; i++) {
      const timestamp = first + BigInt(rng.int(Number(last - first) + 1));
      const source = run(rng.pick(IDS)).writes;
      const spec = v2c.randomCheck(rng, source.pools.v2, source.generators.v2.history);
      const { param, ids } = chainsParam();
      const path = withChains(`${v2c.checkUrl(rng, 1, spec)}&timestamp=${timestamp}`, param);
      const a = await get(path);
      if (a.status !== 200) {
        mismatches.push({ what: "status", query: path, expected: "200", got: `${a.status} ${a.text.slice(0, 300)}` });
        continue;
      }
      const { chains } = parseJsonExact(a.text) as { chains: Entry[] };
      const listed = chains.map((e) => Number(e.chainId)).join();
      if (listed !== ids.join()) mismatches.push({ what: "chains", query: path, expected: ids.join(), got: listed });
      for (const e of chains) {
        const r = run(Number(e.chainId));
        const bad = (what: string, expected: string, got: string) =>
          mismatches.push({ what: `chain ${e.chainId}: ${what}`, query: path, expected, got });
        if (e.problem !== undefined || e.block === undefined) {
          bad("entry", "an answer", JSON.stringify(e).slice(0, 300));
          continue;
        }
        const block = BigInt(e.block);
        // The newest block at or before the moment: it is at or before, and the next is after.
        const [at, next] = await Promise.all([stamp(r, block), stamp(r, block + 1n)]);
        if (!(at <= timestamp && next > timestamp))
          bad(`block ${block} (stamped ${at}, the next ${next})`, `the newest at or before ${timestamp}`, `${block}`);
        if (block > 0n && (await stamp(r, block - 1n)) === at) sharedRuns.add(r.id);
        const [want] = await ethCalls(r.oracles.v2, [{ ...v2c.checkCall(spec), block }]);
        compared++;
        if (String(e.answer) !== String(want)) bad(`answer at ${block}`, String(want), String(e.answer));
        // The same moment on that chain alone: the same block, in X-Indexed-Block.
        if (i % 5 === 0) {
          const alone = await get(withChains(`${v2c.checkUrl(rng, 1, spec)}&timestamp=${timestamp}`, String(r.id)));
          if (alone.status !== 200 || alone.block !== block || alone.text !== String(e.answer))
            bad(
              "alone",
              `200 at ${block}: ${e.answer}`,
              `${alone.status} at ${alone.block}: ${alone.text.slice(0, 200)}`,
            );
        }
      }
    }
    expectNone("checks at moments", mismatches);
    expect(compared, tag("checks at moments compared")).toBeGreaterThanOrEqual(30);
    // 8453's four blocks a second share their timestamps: the moments found the last of such runs.
    expect(sharedRuns.has(8453), tag("blocks that share a timestamp among those answered")).toBe(true);
    // Both at once is refused; so is a moment at or past a chain's newest indexed block.
    const [to, from] = run(10).writes.pools.v2.senders.map((x) => getAddress(x));
    const both = await get(`/registry/v2/check/all?to=${to}&from=${from}&chainId=10&blockNumber=1&timestamp=${first}`);
    expect([both.status, (JSON.parse(both.text) as { code: string }).code], tag("both")).toEqual([
      400,
      "conflicting_parameter",
    ]);
    const later = await get(`/registry/v2/check/all?to=${to}&from=${from}&chainId=10&timestamp=${last + 3600n}`);
    expect([later.status, (JSON.parse(later.text) as { code: string }).code], tag("later")).toEqual([
      400,
      "block_not_indexed",
    ]);
  });

  it("bad input is a 400 naming the parameter", async () => {
    const [to, from] = run(10).writes.pools.v2.senders.map((a) => getAddress(a));
    const check = `/registry/v2/check/all?to=${to}&from=${from}`;
    const wallet = `/registry/v2/${run(10).writes.pools.v2.senders[0]}?limit=2`;
    const cases: [string, string, string][] = [
      [`${check}&chainId=all,10`, "invalid_parameter", "chainId"],
      [`${check}&chainId=10,10`, "invalid_parameter", "chainId"],
      [`${check}&chainId=10,`, "invalid_parameter", "chainId"],
      [`${check}&chainId=,`, "invalid_parameter", "chainId"],
      [`${check}&chainId=10,1`, "unsupported_chain", "chainId"],
      [`${check}&chainId=`, "unsupported_chain", "chainId"],
      [`${check}&chainId=all&blockNumber=1`, "conflicting_parameter", "blockNumber"],
      [`${check}&chainId=10,8453&blockNumber=1`, "conflicting_parameter", "blockNumber"],
      [`${wallet}&chainId=all&cursor=abc`, "invalid_parameter", "cursor"],
      [
        `/registry/v2/check/all?to=0x12&from=${getAddress(run(10).writes.pools.v2.senders[1]!)}&chainId=all`,
        "invalid_parameter",
        "to",
      ],
    ];
    for (const [path, code, param] of cases) {
      const a = await get(path);
      const body = JSON.parse(a.text) as { code?: string; param?: string };
      expect([a.status, body.code, body.param], tag(path)).toEqual([400, code, param]);
    }
  });

  it("a chain that replaced a final block is a chain_reorganized entry while the others answer", async () => {
    const r = run(REORGANIZED);
    const depth = BigInt(ponderFinalityDepth(REORGANIZED));
    // The old branch: four finality depths of empty blocks past the fork, which Ponder then holds final.
    const fork = await snapshotChain(r.anvil.url);
    await rpc(r.anvil.url, "anvil_mine", [toHex(4n * depth)]);
    await indexedPast(r, fork.block + 4n * depth);
    await waitFor(
      `Ponder to hold a block past the fork ${fork.block} final`,
      async () =>
        (ponderLoggedFinalized(plainOutput(service!), REORGANIZED_NAME) ?? 0n) > fork.block ? true : undefined,
      60_000,
    );
    // The deep-reorganization watcher notes the chain's hash for a final block within half a second
    // of its move (api/watch/deep-reorg.ts): a replacement sooner is refused, but as a replaced head.
    await new Promise((ok) => setTimeout(ok, 3_000));
    // The new branch: back to the fork, a delegation the old branch has not, and a longer branch.
    // Under interval mining: the indexer moved to a new block within a second of the replacement.
    await revertChain(r.anvil.url, fork);
    const revertedAt = Date.now();
    const [from, to] = (await chainClient(r.anvil.url).getAddresses()).slice(16, 18) as [Address, Address];
    const made = await sendTx(
      r.anvil.url,
      from,
      V2,
      encodeFunctionData({ abi: abis.v2, functionName: "delegateAll", args: [to, zeroHash, true] } as never),
    );
    await rpc(r.anvil.url, "anvil_mine", [toHex(5n * depth)]);
    reorganized = true;
    let lastEntry = "";
    const oldBranch: string[] = [];
    await waitFor(
      `chain ${REORGANIZED} refused as reorganized`,
      async () => {
        const a = await get(`/registry/v2/check/all?chainId=all&to=${to}&from=${from}`);
        lastEntry = `${a.status} ${a.text.slice(0, 600)}`;
        const { chains } = parseJsonExact(a.text) as { chains: Entry[] };
        const entry = chains.find((e) => Number(e.chainId) === REORGANIZED);
        // The new branch holds the delegation from its block on: false there is the old branch's.
        const late = Date.now() > revertedAt + REPLACED_WITHIN_MS;
        if (late && entry?.answer === false && BigInt(entry.block!) >= made.block) oldBranch.push(lastEntry);
        return entry?.problem?.code === "chain_reorganized" ? true : undefined;
      },
      60_000,
      () => `its answer last: ${lastEntry}; npm start's log of note:\n${notedLog(plainOutput(service!))}`,
    );
    const after = `answers from the replaced branch ${REPLACED_WITHIN_MS} ms after it; npm start's log of note:`;
    expect(oldBranch, tag(`${after}\n${notedLog(plainOutput(service!))}`)).toEqual([]);
    // Each of the others still answers, its contract's answer; the reorganized chain is a problem entry.
    const { mismatches, compared } = await compareChecksAcross(20);
    expectNone("checks beside a reorganized chain", mismatches);
    expect(compared, tag("checks compared beside a reorganized chain")).toBeGreaterThan(0);
  });
});
