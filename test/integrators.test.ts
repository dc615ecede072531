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
 *    pages of 2 or 3 add up to the whole list at the first page's block.
 * 3. `POST /registry/v{1,2}/wallets`: each entry is its wallet's own GET listing at the answer's block
 *    (same `direction`), and the contract's; wallets repeated, and one no write used.
 * 4. Hashes: `GET /registry/v2/delegation/:hash` is getDelegationsFromHashes([hash]) at the block, a
 *    revoked or unknown hash 404 delegation_not_found with X-Indexed-Block; every v2 history record's
 *    `hash` is that of the delegation its event wrote.
 * 5. All of it while writes arrive (judged once every write up to the answer's block is known), at
 *    the head and at past blocks once they stop, and after a reorganization: at the head and at past
 *    blocks of the new branch.
 * 6. Every process answers: `npm start`, and with DATABASE_URL an `npm run serve` replica too.
 *
 * Reproduce a failure with the seed it prints: SEED=<n> npx vitest run test/integrators.test.ts
 */
import { type Address, getAddress, type Hex, toHex, zeroAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Direction } from "../core/parse";
import { type Anvil, revertChain, snapshotChain, startAnvil } from "../devkit/anvil";
import { type Answer, ask, indexedBlock } from "../devkit/ask";
import { blockToCompare, type CompareAt, type Mismatch, type Oracle, pathAt, report } from "../devkit/compare";
import { abis, installRegistries } from "../devkit/oracle";
import { pool } from "../devkit/pool";
import { waitFor } from "../devkit/processes";
import { chooseSeed, Rng, spellAddress } from "../devkit/random";
import { chainClient, ethCalls, rpc } from "../devkit/rpc";
import { type SendOptions, SPREAD } from "../devkit/send";
import { plainOutput, type Replica, type Service, startReplica, startService } from "../devkit/service";
import * as v1c from "../devkit/v1/checks";
import * as v2c from "../devkit/v2/checks";
import { ADDRESS_1 } from "../devkit/v2/generate";
import { ponderFinalityDepth } from "../ponder/ponder-0.16.10";
import { batchHeaders } from "./helpers/batch";
import { type ApiRecord, type Bad, compareListing, type ListingKit } from "./helpers/compare-listings";
import { canonical, parseJsonExact } from "./helpers/json";
import { followPages, withParam } from "./helpers/pages";
import { SeededWrites } from "./helpers/seeded-writes";
import { v1Listings } from "./helpers/v1/listing";
import { Model } from "./helpers/v1/model";
import { firstEnabled } from "./helpers/v2/events";
import { expectedRecord, normalize as normalizeV2, v2Listings } from "./helpers/v2/listing";
import { contractVaults, type VaultKit, vaultsPath } from "./helpers/vaults";

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
/**
 * Per version, process and comparison: vaults queries (then some of those with several vaults, in
 * pages), listings in pages, hashes.
 */
const VAULT_QUERIES = 14;
const VAULT_PAGED = 4;
const LISTINGS_PAGED = 3;
const HASHES = 10;
/** Wallets of a bulk listing, before the repeats and the unused one; wallets listed per comparison while live. */
const BULK_WALLETS = 10;
const LIVE_WALLETS = 5;
/** Each round in small batches 300 ms apart: over a few blocks. */
const SEND: SendOptions = { ...SPREAD, batchSize: 12, spreadMs: 300 };

const rng = new Rng((SEED ^ 0x5bd1e995) >>> 0);

type Version = "v1" | "v2";
const VERSIONS = ["v2", "v1"] as const;
/** What the contract answers about an answer already asked: judged once every write up to its block is known. */
type Judge = () => Promise<Mismatch[]>;

let anvil: Anvil | undefined;
let service: Service | undefined;
let replica: Replica | undefined;
let writes: SeededWrites;
let oracles: Record<Version, Oracle>;
/** An address no write uses. */
let unused: Address;
/** The wallets whose listings are asked, and the vaults a vaults answer may hold, per version. */
let listed: Record<Version, Address[]>;
let candidates: Record<Version, Address[]>;
/** The last block written before the service started. */
let backfilled = 0n;
/** What the comparisons covered, for the assertions that they covered something. */
const tally: Record<string, number> = {};
const count = (name: string, n = 1) => {
  tally[name] = (tally[name] ?? 0) + n;
};

/** The processes answering: `npm start`, and on Postgres the replica. */
const processes = () => [service!.url, ...(replica ? [replica.url] : [])];
const keyed = () => service!.headers;

const VAULT_KITS: Record<Version, VaultKit<unknown>> = {
  v2: {
    ...v2c.v2Checks,
    hot: (s: v2c.CheckSpec) => s.to,
    withVault: (s: v2c.CheckSpec, from: Address) => ({ ...s, from }),
  } as VaultKit<unknown>,
  v1: {
    ...v1c.v1Checks,
    hot: (s: v1c.CheckSpec) => s.delegate,
    withVault: (s: v1c.CheckSpec, vault: Address) => ({ ...s, vault }),
  } as VaultKit<unknown>,
};

/** The v1 contract as the test's model has it at the end of `block`: the effects up to it, replayed. */
function modelAt(block: bigint): Model {
  const model = new Model(new Set(writes.pools.v1.wallets));
  for (const e of writes.effects) if (e.block <= block) model.apply(e);
  return model;
}

/** The listing kit of a version in `direction` (none: the parameter left out), judged at `block`. */
const listingKit = (version: Version, direction: Direction | undefined, block: bigint): ListingKit =>
  version === "v2" ? v2Listings(firstEnabled(writes.v2Events), direction) : v1Listings(modelAt(block), direction);

/** A judge that finds what went wrong when the answer was asked. */
const failed =
  (m: Mismatch): Judge =>
  async () => [m];

/** A mismatch collector for one answer. */
function collector(where: string, query: string): { mismatches: Mismatch[]; bad: Bad } {
  const mismatches: Mismatch[] = [];
  return {
    mismatches,
    bad: (what, expected, got) => mismatches.push({ what: `${where}: ${what}`, query, expected, got }),
  };
}

/**
 * A list asked of `base` at `at`: whole (one answer, no Link) or, with `limit`, in pages followed by
 * Link; its items and the block they are at, or what went wrong.
 */
async function askList(
  base: string,
  path: string,
  at: CompareAt,
  limit?: number,
): Promise<{ block: bigint; items: ApiRecord[]; pages: number } | Mismatch> {
  const first = pathAt(limit === undefined ? path : withParam(path, "limit", String(limit)), at);
  const answers: Answer[] = [];
  let items: unknown;
  if (limit === undefined) {
    const a = await ask(base, first, { headers: keyed() });
    answers.push(a);
    if (a.headers.get("link") !== null)
      return { what: "a whole list", query: first, expected: "no Link", got: `${a.headers.get("link")}` };
    try {
      items = parseJsonExact(a.text);
    } catch {
      items = undefined;
    }
  } else {
    const paged = await followPages(() => base, first, { headers: keyed() });
    if (paged.problems.length > 0)
      return { what: "pages", query: first, expected: "no problem", got: paged.problems.join("; ") };
    answers.push(...paged.pages);
    items = paged.items;
  }
  const fit = blockToCompare(answers[0]!, at, await chainClient(anvil!.url).getBlockNumber());
  if (!("block" in fit)) return { what: "answer", query: first, ...fit };
  if (!Array.isArray(items)) return { what: "answer", query: first, expected: "a JSON array", got: answers[0]!.text };
  return { block: fit.block, items: items as ApiRecord[], pages: answers.length };
}

/** A wallet's listing in `direction` (whole, or in pages of `limit`), to judge against the contract. */
async function askListing(
  base: string,
  version: Version,
  wallet: Address,
  direction: Direction,
  at: CompareAt,
  limit?: number,
): Promise<Judge> {
  const path = `/registry/${version}/${spellAddress(rng, wallet)}?chainId=${CHAIN_ID}&direction=${direction}`;
  const got = await askList(base, path, at, limit);
  if (!("block" in got)) return failed({ ...got, what: `${version} ${direction} listing of ${wallet}: ${got.what}` });
  count("listing records", got.items.length);
  if (got.pages > 1) count("listings in several pages");
  return async () => {
    const where = `${version} ${direction} listing of ${getAddress(wallet)} at block ${got.block}`;
    const { mismatches, bad } = collector(where, path);
    await compareListing(
      oracles[version],
      listingKit(version, direction, got.block),
      wallet,
      got.items,
      got.block,
      bad,
    );
    return mismatches;
  };
}

/** A vaults query: the check it is made of (but its vault), and its path. */
type VaultQuery = { spec: unknown; path: string };

/** Random vaults queries of a version: checks drawn from what the writes wrote, so that most find vaults. */
function drawVaultQueries(version: Version, n: number): VaultQuery[] {
  const inForce = version === "v1" ? modelAt(writes.lastWriteBlock).inForce() : [];
  return Array.from({ length: n }, () => {
    if (version === "v2") {
      const spec = v2c.randomCheck(rng, writes.pools.v2, writes.generators.v2.history);
      return { spec, path: vaultsPath(rng, v2c.checkUrl(rng, CHAIN_ID, spec), spec.to) };
    }
    const keys = inForce.map((d) => d.key);
    const spec = v1c.randomCheck(rng, writes.pools.v1, writes.generators.v1.delegations, keys);
    return { spec, path: vaultsPath(rng, v1c.checkUrl(rng, CHAIN_ID, spec), spec.delegate) };
  });
}

/**
 * A vaults query's answer (whole, or in pages of `limit`), to judge against every candidate vault's
 * check; `found` is told how many vaults it holds.
 */
async function askVaults(
  base: string,
  version: Version,
  query: VaultQuery,
  at: CompareAt,
  limit?: number,
  found?: (n: number) => void,
): Promise<Judge> {
  const kit = VAULT_KITS[version];
  const got = await askList(base, query.path, at, limit);
  // The check, its vault any of them.
  const what = `vaults: ${kit.describe(kit.withVault(query.spec, "*" as Address))}`;
  if (!("block" in got)) return failed({ ...got, what: `${what}: ${got.what}` });
  found?.(got.items.length);
  count(`${version} vaults queries`);
  if (got.items.length > 0) count(`${version} vaults answers with vaults`);
  if (got.items.some((v) => "amount" in v)) count("vaults answers with amounts");
  if (got.pages > 1) count("vaults answers in several pages");
  return async () => {
    const want = await contractVaults(oracles[version], kit, query.spec, candidates[version], got.block);
    if (canonical(got.items) === canonical(want)) return [];
    return [
      {
        what: `${what} at block ${got.block}${limit === undefined ? "" : ` (pages of ${limit})`}`,
        query: query.path,
        expected: canonical(want),
        got: canonical(got.items),
      },
    ];
  };
}

/**
 * A bulk listing of a few wallets (repeated ones, and one no write used) in a random direction:
 * each entry must be the wallet's own GET listing at the answer's block, and the contract's.
 */
async function askBulk(base: string, version: Version, at: CompareAt): Promise<Judge> {
  const some = rng.shuffle([...listed[version]]).slice(0, BULK_WALLETS);
  const wallets = rng.shuffle([...some, rng.pick(some), rng.pick(some), unused]);
  const direction = rng.pick([undefined, "both", "incoming", "outgoing"] as const);
  const body = JSON.stringify({
    chainId: CHAIN_ID,
    ...("block" in at ? { blockNumber: rng.chance(0.5) ? Number(at.block) : `0x${at.block.toString(16)}` } : {}),
    ...(direction === undefined ? {} : { direction }),
    wallets: wallets.map((w) => spellAddress(rng, w)),
  });
  const path = `/registry/${version}/wallets`;
  const query = `POST ${path} ${body}`;
  const a = await ask(base, path, { method: "POST", headers: batchHeaders(keyed()), body });
  const fit = blockToCompare(a, at, await chainClient(anvil!.url).getBlockNumber());
  if (!("block" in fit)) return failed({ what: `${version} bulk listing`, query, ...fit });
  const block = fit.block;
  const entries = parseJsonExact(a.text) as ApiRecord[][];
  if (!Array.isArray(entries) || entries.length !== wallets.length || !entries.every(Array.isArray)) {
    return failed({
      what: `${version} bulk listing`,
      query,
      expected: `${wallets.length} lists`,
      got: a.text.slice(0, 300),
    });
  }
  // Each wallet's own GET listing at that block, asked now.
  const own = new Map<Address, Answer>();
  await pool([...new Set(wallets)], 8, async (w) => {
    const get = `/registry/${version}/${w}?chainId=${CHAIN_ID}&blockNumber=${block}`;
    own.set(w, await ask(base, direction ? `${get}&direction=${direction}` : get, { headers: keyed() }));
  });
  count("bulk listing entries", entries.length);
  return async () => {
    const { mismatches, bad } = collector(
      `${version} bulk listing (${direction ?? "no direction"}) at block ${block}`,
      query,
    );
    for (const [i, w] of wallets.entries()) {
      const get = own.get(w)!;
      const mine = get.status === 200 ? canonical(parseJsonExact(get.text)) : `${get.status} ${get.text}`;
      if (get.block !== block || canonical(entries[i]) !== mine)
        bad(`wallets[${i}] (${w}) against GET ${get.path}`, `X-Indexed-Block ${block}: ${mine}`, canonical(entries[i]));
    }
    for (const w of new Set(wallets)) {
      const i = wallets.indexOf(w);
      await compareListing(oracles[version], listingKit(version, direction, block), w, entries[i]!, block, bad);
    }
    return mismatches;
  };
}

/** Hashes of delegations the writes touched (enabled, revoked, never enabled), `extra`, and an unknown one. */
function drawHashes(n: number, extra: readonly Hex[]): Hex[] {
  const touched = [...new Set(writes.v2Events.map((e) => e.hash))];
  return [...rng.shuffle(touched).slice(0, n), ...extra, toHex(rng.bigint(256), { size: 32 })];
}

/**
 * `GET /registry/v2/delegation/:hash`: getDelegationsFromHashes([hash]) at the answer's block; a
 * hash with no delegation there is 404 delegation_not_found, with X-Indexed-Block that block.
 */
async function askHash(base: string, hash: Hex, at: CompareAt): Promise<Judge> {
  const spelled = rng.chance(0.3) ? `0x${hash.slice(2).toUpperCase()}` : hash;
  const path = pathAt(`/registry/v2/delegation/${spelled}?chainId=${CHAIN_ID}`, at);
  const a = await ask(base, path, { headers: keyed() });
  const head = await chainClient(anvil!.url).getBlockNumber();
  const block = a.block;
  const fits = block !== undefined && ("block" in at ? block === at.block : block >= at.minBlock && block <= head);
  if (!fits) {
    const want = "block" in at ? `${at.block}` : `${at.minBlock}..${head}`;
    return failed({
      what: `delegation ${hash}: X-Indexed-Block`,
      query: path,
      expected: want,
      got: `${a.status} ${block}`,
    });
  }
  return async () => {
    const [found] = (await ethCalls(oracles.v2, [
      { functionName: "getDelegationsFromHashes", args: [[hash]], block },
    ])) as [Parameters<typeof expectedRecord>[0][]];
    const delegation = found[0]!;
    const type = a.headers.get("content-type") ?? "";
    let got: string;
    let want: string;
    if (delegation.type_ === 0) {
      count("hashes without a delegation (404)");
      const code = type.startsWith("application/problem+json") ? (JSON.parse(a.text) as { code?: string }).code : type;
      got = `${a.status} ${code}`;
      want = "404 delegation_not_found";
    } else {
      count("hashes of delegations (200)");
      got = a.status === 200 ? canonical(normalizeV2(parseJsonExact(a.text) as ApiRecord)) : `${a.status} ${a.text}`;
      want = canonical({ ...expectedRecord(delegation), hash });
    }
    return got === want ? [] : [{ what: `delegation ${hash} at block ${block}`, query: path, expected: want, got }];
  };
}

/**
 * Every question asked of `base` at `at`, each as the judge of its answer: every listed wallet's
 * listings by direction (`wide`; else a few), some in pages; vaults queries, then some of those with
 * several vaults in pages; a bulk listing per version; and hashes (`extraHashes` among them).
 */
async function askAll(base: string, at: CompareAt, wide: boolean, extraHashes: readonly Hex[] = []): Promise<Judge[]> {
  const asks: (() => Promise<Judge>)[] = [];
  const found: { version: Version; query: VaultQuery; n: number }[] = [];
  for (const version of VERSIONS) {
    const wallets = wide ? listed[version] : rng.shuffle([...listed[version]]).slice(0, LIVE_WALLETS);
    for (const w of wallets)
      for (const direction of ["incoming", "outgoing"] as const)
        asks.push(() => askListing(base, version, w, direction, at));
    for (let i = 0; i < LISTINGS_PAGED; i++) {
      const [w, direction, limit] = [
        rng.pick(listed[version]),
        rng.pick(["incoming", "outgoing"] as const),
        rng.pick([2, 3]),
      ];
      asks.push(() => askListing(base, version, w, direction, at, limit));
    }
    for (const query of drawVaultQueries(version, VAULT_QUERIES))
      asks.push(() => askVaults(base, version, query, at, undefined, (n) => found.push({ version, query, n })));
    asks.push(() => askBulk(base, version, at));
  }
  for (const hash of drawHashes(HASHES, extraHashes)) asks.push(() => askHash(base, hash, at));
  const judges = await pool(asks, 8, (f) => f());
  // Vaults in pages: queries whose whole answer held 3 vaults or more, so that pages of 2 or 3 are several.
  const several = rng.shuffle(found.filter((f) => f.n >= 3)).slice(0, VAULT_PAGED);
  const limit = (n: number) => (n > 3 ? rng.pick([2, 3]) : 2);
  judges.push(...(await pool(several, 8, (f) => askVaults(base, f.version, f.query, at, limit(f.n)))));
  const name = base === service!.url ? "npm start" : "npm run serve";
  return judges.map((j) => async () => (await j()).map((m) => ({ ...m, what: `${name}: ${m.what}` })));
}

/** Judges the answers: every mismatch with the contract. */
async function judge(judges: readonly Judge[]): Promise<Mismatch[]> {
  return (await pool(judges, 8, (j) => j())).flat();
}

/** Asks every process everything at `at` and judges it at once (the writes up to `at` are known). */
async function compareAll(at: CompareAt, extraHashes: readonly Hex[] = []): Promise<Mismatch[]> {
  const judges = (await Promise.all(processes().map((base) => askAll(base, at, true, extraHashes)))).flat();
  return judge(judges);
}

/**
 * Every v2 history record's `hash` is that of the delegation its event wrote (as the test computes
 * it from the log, checked against the contract's hash lists by the listings' comparisons); every
 * event once.
 */
async function compareEventHashes(base: string): Promise<Mismatch[]> {
  const first = `/registry/v2/history?chainId=${CHAIN_ID}&limit=1000`;
  const paged = await followPages(() => base, first, { headers: keyed() });
  const mismatches: Mismatch[] = paged.problems.map((p) => ({
    what: "v2 history pages",
    query: first,
    expected: "",
    got: p,
  }));
  const events = writes.v2Events.filter((e) => paged.block !== undefined && e.block <= paged.block);
  const hashes = new Map(events.map((e) => [`${e.block}/${e.logIndex}`, e.hash]));
  for (const r of paged.items as ApiRecord[]) {
    const want = hashes.get(`${r.blockNumber}/${r.logIndex}`);
    if (r.hash !== want)
      mismatches.push({ what: `v2 history record's hash`, query: first, expected: String(want), got: canonical(r) });
  }
  if (paged.items.length !== events.length)
    mismatches.push({
      what: "v2 history records",
      query: first,
      expected: String(events.length),
      got: String(paged.items.length),
    });
  count("v2 history hashes", paged.items.length);
  return mismatches;
}

/** One round of writes to both registries. */
async function writeRound(size: { v2: number; v1: number; walletRevokes: number }): Promise<void> {
  await writes.v2(size.v2);
  await writes.v1(size.v1, size.walletRevokes);
}

/** Waits until every process has indexed `block`. */
async function untilIndexed(block: bigint): Promise<void> {
  await Promise.all(
    processes().map((base) =>
      waitFor(
        `${base} to index block ${block}`,
        async () => {
          const indexed = await indexedBlock({ serviceUrl: base, chainId: CHAIN_ID, headers: keyed() });
          return indexed !== undefined && indexed >= block ? indexed : undefined;
        },
        180_000,
      ),
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
  unused = accounts[16]!.toLowerCase() as Address;
  oracles = {
    v2: { rpcUrl: anvil.url, serviceUrl: "", registry: installed.v2, abi: abis.v2, chainId: CHAIN_ID },
    v1: { rpcUrl: anvil.url, serviceUrl: "", registry: installed.v1, abi: abis.v1, chainId: CHAIN_ID },
  };
  const named = writes.wallets();
  listed = { v2: [...new Set([...named.v2, ADDRESS_1, unused])], v1: [...new Set([...named.v1, unused])] };
  const odd = [zeroAddress, ADDRESS_1, unused];
  candidates = { v2: [...new Set([...named.v2, ...odd])], v1: [...new Set([...named.v1, ...odd])] };
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
        `ready in ${t1 - t0} ms; compared at the head in ${Date.now() - t1} ms: ${JSON.stringify(tally)}`,
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
    const events = (await Promise.all(processes().map(compareEventHashes))).flat();
    console.log(
      `[integrators] compared at the head and at blocks ${blocks.join(", ")} in ${Date.now() - t1} ms: ` +
        JSON.stringify(tally),
    );
    expect(past.length, report(SEED, "at past blocks", past)).toBe(0);
    expect(events.length, report(SEED, "v2 history records' hashes", events)).toBe(0);
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
    const events = (await Promise.all(processes().map(compareEventHashes))).flat();
    console.log(
      `[integrators] branch A to block ${tipA}, B from ${fork.block} to ${tipB} in ${t1 - t0} ms; compared at ` +
        `the head and at blocks ${blocks.join(", ")} in ${Date.now() - t1} ms: ${JSON.stringify(tally)}`,
    );
    expect(past.length, report(SEED, "after the reorganization, at past blocks", past)).toBe(0);
    expect(events.length, report(SEED, "after the reorganization, v2 history records' hashes", events)).toBe(0);

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
      expect(tally[name] ?? 0, tag(`comparisons of "${name}"`)).toBeGreaterThan(0);
  });
});
