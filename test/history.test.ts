/**
 * History, pages and contract listings against the real registries on anvil, v1 and v2:
 *
 * 1. Every wallet's history and the chain-wide history equal the registry's own logs (eth_getLogs)
 *    filtered to the wallet: the same events in the same order, every field, v1's revokedDelegate
 *    the delegate the call named; in block ranges too. The writes are seeded and random: every event
 *    kind, multicall batches, several events in one block, revokeDelegate through contract wallets.
 * 2. Pages: following Link, at random limits (changed from page to page too), gives exactly the
 *    whole answer at the first page's block, while writes keep arriving; every page reports that
 *    block. Wallet listings, contract listings and history.
 * 3. Contract listings (with and without tokenId) equal what the contracts' views give at the block
 *    asked, in the documented order.
 * 4. A bad limit, a malformed cursor, fromBlock after toBlock, a cursor of another endpoint, wallet,
 *    range or chain: 400, naming the parameter.
 * 5. A reorganization inside a pinned range, shallower than Ponder's finality: the later pages answer
 *    from the new branch at the pinned block (docs/api.md, "Pages").
 * 6. With DATABASE_URL: `npm run serve` gives the same bodies as `npm start`, page by page.
 *
 * Reproduce a failure with the seed it prints: SEED=<n> npx vitest run test/history.test.ts
 */
import { type Address, encodeFunctionData, getAddress, type Hex, toHex, zeroHash } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Anvil, revertChain, snapshotChain, startAnvil } from "../devkit/anvil";
import { type Answer, ask, indexedBlock } from "../devkit/ask";
import { type Mismatch, type Oracle, report } from "../devkit/compare";
import { abis, installRegistries } from "../devkit/oracle";
import { pool } from "../devkit/pool";
import { waitFor } from "../devkit/processes";
import { chooseSeed, Rng, spellAddress } from "../devkit/random";
import { chainClient, rpc } from "../devkit/rpc";
import { type Receipt, roomyBlocks, SPREAD, sendAll, type TxRequest } from "../devkit/send";
import { plainOutput, type Replica, type Service, startReplica, startService } from "../devkit/service";
import type { RegistryCall } from "../devkit/v1/calls";
import {
  makePools as makeV1Pools,
  CONTRACTS as V1_CONTRACTS,
  TOKEN_IDS as V1_TOKEN_IDS,
  WriteGenerator as V1Generator,
  type Pools as V1Pools,
  type Tx as V1Tx,
} from "../devkit/v1/generate";
import {
  makePools as makeV2Pools,
  CONTRACTS as V2_CONTRACTS,
  TOKEN_IDS as V2_TOKEN_IDS,
  WriteGenerator as V2Generator,
  type Pools as V2Pools,
  txRequest as v2TxRequest,
} from "../devkit/v2/generate";
import { ponderFinalityDepth } from "../ponder/ponder-0.16.10";
import { expectProblem } from "./helpers/answers";
import { type ApiRecord, compareListings, type ListingKit } from "./helpers/compare-listings";
import { contractListing, type InForce, v1InForce, v2InForce } from "./helpers/contract-listings";
import {
  eventRecords,
  inBlocks,
  normalizeEvent,
  recordsOf,
  registryLogs,
  revokedDelegates,
} from "./helpers/event-records";
import {
  type FeedEntry,
  liveEntries,
  pullFeed,
  type Receiver,
  streamFeed,
  subscribeReceiver,
  webhookReceiver,
} from "./helpers/feed";
import { canonical, parseJsonExact } from "./helpers/json";
import { type FollowOptions, followPages, type Paged, withParam } from "./helpers/pages";
import { before as isBefore, type Position } from "./helpers/position";
import { type Effect, effectsOf } from "./helpers/v1/effects";
import { v1Listings } from "./helpers/v1/listing";
import { Model } from "./helpers/v1/model";
import { type CompiledWallet, compileWallet, txRequest as v1TxRequest } from "./helpers/v1/wallet";
import { decodeEvents, firstEnabled } from "./helpers/v2/events";
import { v2Listings } from "./helpers/v2/listing";

const SEED = chooseSeed();
console.log(`[history] SEED=${SEED} (rerun with SEED=${SEED} npx vitest run test/history.test.ts)`);
const tag = (text: string) => `[SEED=${SEED}] ${text}`;

const CHAIN_ID = 31337;
/** A second chain, far ahead of the first, so that a cursor's block is one of its blocks too. */
const OTHER_CHAIN_ID = 11155111;
const OTHER_HEAD_START = 3000;
/** Ponder's finality depth for the local chain: the reorganization stays above it. */
const FINALITY = BigInt(ponderFinalityDepth(31337));
/** Random transactions before the service starts (its backfill). */
const V2_TXS = 300;
const V1_TXS = 220;
const V1_WALLET_REVOKES = 20;
/** Each round of the writes that keep arriving while pages are followed. */
const LIVE = { v2: 16, v1: 10, walletRevokes: 2 };

type Version = "v1" | "v2";

const rng = {
  v2: new Rng(SEED),
  v1: new Rng((SEED ^ 0x6a09e667) >>> 0),
  query: new Rng((SEED ^ 0x5bd1e995) >>> 0),
};

let anvil: Anvil;
let other: Anvil;
let service: Service;
let receiver: Receiver & { secret?: string };
let replica: Replica | undefined;
let accounts: Address[];
const oracle = {} as Record<Version, Oracle>;
let v2Pools: V2Pools;
let v2Generator: V2Generator;
let v1Pools: V1Pools;
let v1Generator: V1Generator;
let wallet: CompiledWallet;
let contractWallets: Address[];
/** Every v1 write that took effect, in chain order (the reorganization drops the replaced ones). */
let effects: Effect[] = [];
let lastWriteBlock = 0n;
/** The blocks holding writes, in the order they were written (the reorganization drops the replaced ones). */
let writeBlocks: bigint[] = [];
/** The last block written before the service started: where its backfill ends. */
let backfillEnd = 0n;
/** The wallets whose history and listings are read, per version. */
const wallets = {} as Record<Version, Address[]>;

const lower = (a: string) => a.toLowerCase() as Address;
const get = (path: string, base = service.url) => ask(base, path, { headers: service.headers });
const pending = (a: Address) => chainClient(anvil.url).getTransactionCount({ address: a, blockTag: "pending" });

/** Checks every transaction succeeded, and notes the blocks written. */
function seen(receipts: Receipt[], what: string) {
  const failed = receipts.filter((r) => r.status !== "0x1").map((r) => r.transactionHash);
  expect(failed, tag(`${what}: transactions that reverted`)).toEqual([]);
  for (const r of receipts) {
    writeBlocks.push(BigInt(r.blockNumber));
    if (BigInt(r.blockNumber) > lastWriteBlock) lastWriteBlock = BigInt(r.blockNumber);
  }
}

/** Random v2 transactions from the pool's senders, at their pending nonces. */
async function writeV2(n: number): Promise<void> {
  for (const s of v2Pools.senders) v2Generator.nonces.set(s, await pending(s));
  const txs = Array.from({ length: n }, () => v2TxRequest(oracle.v2.registry, abis.v2, v2Generator.nextTx()));
  seen(await sendAll(anvil.url, txs, SEED, SPREAD), "v2 writes");
}

/** Sends v1 transactions, checks their logs are their calls' events, and keeps what took effect. */
async function sendV1(txs: V1Tx[]): Promise<void> {
  const requests = txs.map((tx) => v1TxRequest(tx, oracle.v1.registry, abis.v1, wallet));
  const receipts = await sendAll(anvil.url, requests, SEED);
  seen(receipts, "v1 writes");
  const made = effectsOf(abis.v1, oracle.v1.registry, txs, receipts);
  expect(made.problems, tag("each v1 transaction's logs are the events of its calls that take effect")).toEqual([]);
  effects.push(...made.effects);
}

/** Random v1 transactions (and contract wallets revoking delegates among other writes), at pending nonces. */
async function writeV1(n: number, walletRevokes: number): Promise<void> {
  for (const e of v1Pools.eoas) v1Generator.nonces.set(e, await pending(e));
  const txs = Array.from({ length: n }, () => v1Generator.nextTx());
  for (let i = 0; i < walletRevokes; i++) txs.push(v1Generator.walletRevokeTx());
  await sendV1(txs);
}

/** The block the service has indexed chain `chainId` up to. */
const indexed = (chainId = CHAIN_ID, base = service.url) =>
  indexedBlock({ serviceUrl: base, chainId, headers: service.headers });

async function waitForIndexed(block: bigint, base = service.url): Promise<bigint> {
  return waitFor(
    `${base} to index block ${block}`,
    async () => {
      const at = await indexed(CHAIN_ID, base);
      return at !== undefined && at >= block ? at : undefined;
    },
    180_000,
  );
}

/** Resolves once the service has indexed a block holding writes made after block `block`. */
function newWritesIndexed(block: bigint): Promise<unknown> {
  return waitFor(
    `writes after block ${block} to be indexed`,
    async () => {
      const written = writeBlocks.find((b) => b > block);
      const at = written === undefined ? undefined : await indexed();
      return at !== undefined && at >= written! ? true : undefined;
    },
    120_000,
  );
}

/** The v1 model (orders v1 listings) after the writes up to `block`. */
function modelAt(block: bigint): Model {
  const model = new Model(new Set(contractWallets.map(lower)));
  for (const e of effects) if (e.block <= block) model.apply(e);
  return model;
}

/** The registry's history up to `block` by the chain's logs, as API event records in chain order. */
async function chainHistory(version: Version, block: bigint): Promise<ApiRecord[]> {
  const logs = await registryLogs(anvil.url, oracle[version].registry, 0n, block);
  return eventRecords(
    anvil.url,
    version,
    abis[version],
    logs,
    version === "v1" ? revokedDelegates(effects) : undefined,
  );
}

/** Where each v2 delegation was first enabled, by the chain's logs up to `block`. */
async function v2Positions(block: bigint): Promise<Map<Hex, Position>> {
  const logs = await registryLogs(anvil.url, oracle.v2.registry, 0n, block);
  return firstEnabled(decodeEvents(abis.v2, oracle.v2.registry, [{ logs } as unknown as Receipt]));
}

/** A listing kit ordering records as the chain's history up to `block` says. */
async function listingKit(version: Version, block: bigint): Promise<ListingKit> {
  return version === "v2" ? v2Listings(await v2Positions(block)) : v1Listings(modelAt(block));
}

/** What the contracts' views say is in force at `block` (cached per version and block). */
const inForceCache = new Map<string, Promise<InForce>>();
function inForceAt(version: Version, block: bigint): Promise<InForce> {
  const key = `${version}@${block}`;
  let found = inForceCache.get(key);
  if (!found) {
    found = (async () => {
      if (version === "v2") {
        const logs = await registryLogs(anvil.url, oracle.v2.registry, 0n, block);
        const records = await eventRecords(anvil.url, "v2", abis.v2, logs);
        const froms = [...new Set(records.map((r) => lower(String(r.from))))];
        return v2InForce(oracle.v2, await v2Positions(block), froms, block);
      }
      const records = await chainHistory("v1", block);
      const vaults = [...new Set(records.filter((r) => r.value !== null).map((r) => lower(String(r.vault))))];
      const model = modelAt(block);
      return v1InForce(oracle.v1, vaults, block, (key) => model.position(key));
    })();
    inForceCache.set(key, found);
  }
  return found;
}

/** A path with its query: the parameters given (undefined ones left out), chainId first. */
function path(route: string, params: Record<string, string | bigint | number | undefined> = {}): string {
  const query = Object.entries({ chainId: CHAIN_ID, ...params })
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join("&");
  return `${route}?${query}`;
}

/** What a read lists: a wallet's delegations; a wallet's events or a contract's delegations; a chain's events. */
type Scale = "listing" | "wallet" | "chain";

/**
 * A random page size: mostly small, larger for the chain-wide history; sometimes none, the default
 * (100), except for a wallet listing (whole without one).
 */
function randomLimit(scale: Scale): number | undefined {
  const r = rng.query;
  if (scale === "chain") {
    return r.weighted<number | undefined>([
      [1, undefined],
      [3, 40 + r.int(160)],
      [2, 200 + r.int(800)],
      [1, 1000],
    ]);
  }
  return r.weighted<number | undefined>([
    [scale === "listing" ? 0 : 1, undefined],
    [4, 1 + r.int(3)],
    [5, 4 + r.int(20)],
    [2, 24 + r.int(200)],
    [1, 1000],
  ]);
}

/** A read to follow page by page: its first page's path, and the limits to give later pages (undefined: keep). */
type PagedRead = { what: string; first: string; limits: (number | undefined)[] };

/**
 * A paged read of `route` with `params` and a random limit, changed now and then from page to page (a
 * cursor continues its request whatever the limit); drawn here, so that the seed replays it.
 */
function pagedRead(what: string, route: string, params: Parameters<typeof path>[1], scale: Scale): PagedRead {
  const first = path(route, { ...params, limit: randomLimit(scale) });
  const limits = Array.from({ length: 64 }, () => (rng.query.chance(0.25) ? randomLimit(scale) : undefined));
  return { what, first, limits };
}

/** Follows a read's pages, asked of `bases` in turn; `beforePage` is awaited before each page but the first. */
function pages(read: PagedRead, beforePage?: FollowOptions["beforePage"], bases = [service.url]): Promise<Paged> {
  return followPages((i) => bases[i % bases.length]!, read.first, {
    headers: service.headers,
    limit: (i) => read.limits[i % read.limits.length],
    beforePage,
  });
}

/** A random spelling of a wallet in a path: lowercase, EIP-55 or uppercase hex. */
const spell = (a: Address) => spellAddress(rng.query, a);

/** The whole change log, page by page (at random limits) from the oldest entry. */
const wholeFeed = () => pullFeed((path) => get(path), rng.query);

/** What a wait for the change log saw: its last entries, the chains' state and the service's last words. */
function feedSeen(): string {
  return `${plainOutput(service).slice(-4000)}`;
}

/** The items a paged read gave against those expected, item by item; a mismatch names the first difference. */
function sameList(
  mismatches: Mismatch[],
  what: string,
  query: string,
  got: readonly unknown[],
  want: readonly ApiRecord[],
  normalize: (r: ApiRecord) => ApiRecord = (r) => r,
): void {
  const g = got.map((r) => canonical(normalize(r as ApiRecord)));
  const w = want.map((r) => canonical(normalize(r)));
  if (g.join("\n") === w.join("\n")) return;
  const k = Math.max(
    0,
    g.findIndex((x, i) => x !== w[i]),
  );
  const at = g.length > w.length && g.slice(0, w.length).join("\n") === w.join("\n") ? w.length : k;
  mismatches.push({
    what: `${what} (${w.length} expected, ${g.length} got; first difference at #${at})`,
    query,
    expected: w[at] ?? "(end of list)",
    got: g[at] ?? "(end of list)",
  });
}

/** The problems of a paged read, as mismatches; and that its pages report `block` when it is known. */
function pagedMismatches(mismatches: Mismatch[], what: string, first: string, paged: Paged, block?: bigint): void {
  for (const p of paged.problems) mismatches.push({ what: `${what}: a page`, query: first, expected: "", got: p });
  if (block !== undefined && paged.block !== block)
    mismatches.push({
      what: `${what}: X-Indexed-Block`,
      query: first,
      expected: String(block),
      got: String(paged.block),
    });
}

/** A whole wallet listing at `block` (no limit): the service's list, checked to be one page at that block. */
async function wholeListing(mismatches: Mismatch[], version: Version, w: Address, block: bigint): Promise<unknown[]> {
  const query = path(`/registry/${version}/${w}`, { blockNumber: block });
  const a = await get(query);
  if (a.status !== 200 || a.block !== block || a.headers.get("link") !== null) {
    mismatches.push({
      what: `${version} whole listing`,
      query,
      expected: `200 at block ${block}, without Link`,
      got: `${a.status} at ${a.block}, Link ${a.headers.get("link")}: ${a.text.slice(0, 200)}`,
    });
    return [];
  }
  return parseJsonExact(a.text) as unknown[];
}

/** Where a v2 or v1 listing record sits in its list's order, by `kit` (the chain's history at the block asked). */
const positionIn = (kit: ListingKit, r: ApiRecord) => kit.order!.position(r);

/** The v2 record as compared: rights' case is free. */
const normalizeV2 = (r: ApiRecord) => ({
  ...r,
  rights: typeof r.rights === "string" ? r.rights.toLowerCase() : r.rights,
});
const normalizeListing = (version: Version) => (version === "v2" ? normalizeV2 : (r: ApiRecord) => r);

/** Contract listings asked for: every contract delegated, and one never delegated; each token id the writes use. */
const NEVER_DELEGATED = lower("0x00000000000000000000000000000000c0ffee00");
const contractsOf = (version: Version) => [...(version === "v2" ? V2_CONTRACTS : V1_CONTRACTS), NEVER_DELEGATED];
const tokenIdsOf = (version: Version) => [...(version === "v2" ? V2_TOKEN_IDS : V1_TOKEN_IDS).map(([, id]) => id), 7n];

beforeAll(async () => {
  [anvil, other] = await Promise.all([startAnvil({ chainId: CHAIN_ID }), startAnvil({ chainId: OTHER_CHAIN_ID })]);
  await rpc(other.url, "anvil_mine", [toHex(OTHER_HEAD_START)]);
  await installRegistries(other.url);
  await roomyBlocks(anvil.url);
  const installed = await installRegistries(anvil.url);
  accounts = await chainClient(anvil.url).getAddresses();
  oracle.v2 = { rpcUrl: anvil.url, serviceUrl: "", registry: installed.v2, abi: abis.v2, chainId: CHAIN_ID };
  oracle.v1 = { rpcUrl: anvil.url, serviceUrl: "", registry: installed.v1, abi: abis.v1, chainId: CHAIN_ID };

  // Two forwarding wallets (v1's contract-wallet routes), by the last account.
  wallet = compileWallet();
  const deployer = accounts[19]!;
  const nonce = await pending(deployer);
  const deployed = await sendAll(
    anvil.url,
    [0, 1].map((k) => ({ from: deployer, data: wallet.bytecode, gas: 1_500_000n, nonce: nonce + k })),
    SEED,
  );
  contractWallets = deployed.map((r) => getAddress(r.contractAddress!));

  v2Pools = makeV2Pools(accounts);
  v2Generator = new V2Generator(rng.v2, v2Pools);
  v1Pools = makeV1Pools(accounts, contractWallets);
  v1Generator = new V1Generator(rng.v1, v1Pools);
  const t0 = Date.now();
  await writeV2(V2_TXS);
  await writeV1(V1_TXS, V1_WALLET_REVOKES);
  backfillEnd = lastWriteBlock;
  console.log(
    `[history] ${V2_TXS} v2 and ${V1_TXS + V1_WALLET_REVOKES} v1 transactions up to block ${lastWriteBlock} in ` +
      `${Date.now() - t0} ms`,
  );

  // Every wallet the writes name (accounts 15..18 never write at random: the reorganization's), and one
  // that none does.
  wallets.v2 = [...new Set([...v2Pools.senders, ...v2Pools.delegates, accounts[14]!].map(lower))];
  wallets.v1 = [...new Set([...v1Pools.eoas, ...v1Pools.wallets, ...v1Pools.delegates, accounts[15]!].map(lower))];

  const t1 = Date.now();
  // The webhook receiver is on loopback: the operator allows it.
  service = await startService({
    rpc: { [CHAIN_ID]: anvil.url, [OTHER_CHAIN_ID]: other.url },
    env: { WEBHOOK_ALLOW_PRIVATE: "true" },
  });
  oracle.v2.serviceUrl = oracle.v1.serviceUrl = service.url;
  oracle.v2.headers = oracle.v1.headers = service.headers;
  await waitForIndexed(lastWriteBlock);
  // An endpoint taking every entry from the oldest, refusing a third of first attempts.
  receiver = await webhookReceiver(rng.query, 0.3);
  await subscribeReceiver(service, receiver);
  console.log(`[history] service ready and indexed past block ${lastWriteBlock} in ${Date.now() - t1} ms`);
});

afterAll(async () => {
  await receiver?.close();
  await replica?.stop();
  await service?.stop();
  await Promise.all([anvil?.stop(), other?.stop()]);
});

describe("history, pages and contract listings", () => {
  it("every wallet's history and the chain-wide history equal the registry's logs, in any block range", async () => {
    const t0 = Date.now();
    const P = (await indexed())!;
    const mismatches: Mismatch[] = [];
    let reads = 0;
    let events = 0;
    for (const version of ["v2", "v1"] as const) {
      const all = await chainHistory(version, P);
      events += all.length;

      // The writes cover what the history must show.
      const kinds = new Set(all.map((r) => r.event));
      const expectedKinds =
        version === "v2"
          ? ["DelegateAll", "DelegateContract", "DelegateERC721", "DelegateERC20", "DelegateERC1155"]
          : ["DelegateForAll", "DelegateForContract", "DelegateForToken", "RevokeAllDelegates", "RevokeDelegate"];
      expect([...kinds].sort(), tag(`${version}: every event kind`)).toEqual(expectedKinds.sort());
      const perBlock = new Map<bigint, number>();
      const perTx = new Map<string, number>();
      for (const r of all) {
        perBlock.set(r.blockNumber as bigint, (perBlock.get(r.blockNumber as bigint) ?? 0) + 1);
        perTx.set(String(r.transactionHash), (perTx.get(String(r.transactionHash)) ?? 0) + 1);
      }
      expect(Math.max(...perBlock.values()), tag(`${version}: several events in one block`)).toBeGreaterThan(1);
      expect(Math.max(...perTx.values()), tag(`${version}: several events in one transaction`)).toBeGreaterThan(1);
      if (version === "v1") {
        // revokeDelegate(x) by a contract wallet: the log names the wallet twice, only the trace names x.
        const hidden = effects.filter(
          (e) => e.call.fn === "revokeDelegate" && e.tx.route !== "direct" && lower(e.call.delegate) !== e.actor,
        );
        expect(hidden.length, tag("v1: revokeDelegate by contract wallets")).toBeGreaterThan(5);
      }

      const reads_: (PagedRead & { block: bigint | undefined; want: ApiRecord[] })[] = [
        {
          ...pagedRead(`${version} chain-wide history`, `/registry/${version}/history`, { toBlock: P }, "chain"),
          block: P,
          want: all,
        },
        ...wallets[version].map((w) => ({
          ...pagedRead(
            `${version} history of ${w}`,
            `/registry/${version}/${spell(w)}/history`,
            { toBlock: P },
            "wallet",
          ),
          block: P,
          want: recordsOf(version, all, w),
        })),
      ];
      // Block ranges: from and to around blocks with events (one block alone, a few, many), decimal or hex;
      // fromBlock alone ends at the newest indexed block, toBlock alone starts at 0.
      const blocks = [...perBlock.keys()];
      const hexOrNot = (b: bigint) => (rng.query.chance(0.3) ? toHex(b) : String(b));
      for (let i = 0; i < 24; i++) {
        // A block beside one with events, inside 0..P: from after P would be refused as after toBlock.
        const near = rng.query.pick(blocks) + BigInt(rng.query.int(3) - 1);
        const from = near < 0n ? 0n : near > P ? P : near;
        const span = rng.query.weighted<bigint>([
          [3, 0n],
          [3, BigInt(rng.query.int(5))],
          [2, BigInt(rng.query.int(80))],
        ]);
        const to = from + span > P ? P : from + span;
        const w = i % 2 === 0 ? undefined : rng.query.pick(wallets[version]);
        const only = rng.query.weighted<"both" | "from" | "to">([
          [6, "both"],
          [1, "from"],
          [1, "to"],
        ]);
        const route = w === undefined ? `/registry/${version}/history` : `/registry/${version}/${spell(w)}/history`;
        const params = {
          fromBlock: only === "to" ? undefined : hexOrNot(from),
          toBlock: only === "from" ? undefined : hexOrNot(to),
        };
        const records = w === undefined ? all : recordsOf(version, all, w);
        const range = `${only === "to" ? 0 : from}..${only === "from" ? "" : to}`;
        const what = `${version} history${w ? ` of ${w}` : ""} in blocks ${range}`;
        // No write arrives during this test: up to the newest indexed block is up to P.
        reads_.push({
          ...pagedRead(what, route, params, w === undefined ? "chain" : "wallet"),
          block: only === "from" ? undefined : to,
          want: inBlocks(records, only === "to" ? 0n : from, only === "from" ? P : to),
        });
      }
      await pool(reads_, 4, async (r) => {
        const paged = await pages(r);
        pagedMismatches(mismatches, r.what, r.first, paged, r.block);
        sameList(mismatches, r.what, r.first, paged.items, r.want, normalizeEvent);
        reads++;
      });
    }
    expect(lastWriteBlock, tag("no write arrived while the history was read")).toBeLessThanOrEqual(P);
    console.log(`[history] ${reads} histories read and compared (${events} events on chain) in ${Date.now() - t0} ms`);
    expect(mismatches.length, report(SEED, "history against the chain's logs", mismatches)).toBe(0);
  });

  it("pages: following Link gives exactly the whole answer at the first page's block, while writes keep \
arriving", async () => {
    const t0 = Date.now();
    type Read = PagedRead & { version: Version; kind: "listing" | "history" | "contract" };
    const reads: Read[] = [];
    for (const version of ["v2", "v1"] as const) {
      for (const w of wallets[version]) {
        const what = `${version} listing of ${w}`;
        reads.push({ ...pagedRead(what, `/registry/${version}/${spell(w)}`, {}, "listing"), version, kind: "listing" });
        const route = `/registry/${version}/${spell(w)}/history`;
        reads.push({ ...pagedRead(`${version} history of ${w}`, route, {}, "wallet"), version, kind: "history" });
      }
      // Up to 19 blocks before the backfill's end, but not before block 0 (a short chain).
      const back = BigInt(rng.query.int(20));
      for (const fromBlock of [undefined, backfillEnd > back ? backfillEnd - back : 0n]) {
        const what = `${version} chain-wide history${fromBlock === undefined ? "" : ` from block ${fromBlock}`}`;
        const read = pagedRead(what, `/registry/${version}/history`, { fromBlock }, "chain");
        reads.push({ ...read, version, kind: "history" });
      }
      for (const contract of contractsOf(version)) {
        for (const tokenId of [undefined, rng.query.pick(tokenIdsOf(version))]) {
          const what = `${version} contract listing of ${contract}${tokenId === undefined ? "" : ` token ${tokenId}`}`;
          const read = pagedRead(what, `/registry/${version}/contract/${spell(contract)}`, { tokenId }, "wallet");
          reads.push({ ...read, version, kind: "contract" });
        }
      }
    }
    rng.query.shuffle(reads);

    // Writes keep arriving in rounds until every read is done.
    let writing = true;
    let rounds = 0;
    const writer = (async () => {
      while (writing) {
        await writeV2(LIVE.v2);
        await writeV1(LIVE.v1, LIVE.walletRevokes);
        rounds++;
      }
    })();
    // Every read's later pages are asked once writes made after its first page's block are indexed.
    const done: { read: Read; paged: Paged }[] = [];
    try {
      await pool(reads, 16, async (read) => {
        const paged = await pages(read, async (i, block) => {
          if (i === 1 && block !== undefined) await newWritesIndexed(block);
        });
        done.push({ read, paged });
      });
    } finally {
      writing = false;
      await writer;
    }
    const tRead = Date.now() - t0;
    await waitForIndexed(lastWriteBlock);

    // Each read against the whole answer at its pinned block, and that against the chain.
    const mismatches: Mismatch[] = [];
    const final = { v2: await chainHistory("v2", lastWriteBlock), v1: await chainHistory("v1", lastWriteBlock) };
    let changedAfter = 0;
    await pool(done, 4, async ({ read, paged }) => {
      const { what, version, first } = read;
      pagedMismatches(mismatches, what, first, paged);
      const P = paged.block;
      if (P === undefined || paged.problems.length) return;
      const wallet = first.match(/\/registry\/v[12]\/(0x[0-9a-fA-F]{40})/)?.[1];
      if (read.kind === "listing") {
        const w = lower(wallet!);
        sameList(
          mismatches,
          `${what} at block ${P}`,
          first,
          paged.items,
          (await wholeListing(mismatches, version, w, P)) as ApiRecord[],
        );
        const o = oracle[version];
        const listed = await compareListings(o, await listingKit(version, P), [w], { block: P });
        mismatches.push(...listed.mismatches);
      } else if (read.kind === "history") {
        const fromBlock = BigInt(new URL(first, "http://x").searchParams.get("fromBlock") ?? 0);
        const records = wallet ? recordsOf(version, final[version], lower(wallet)) : final[version];
        sameList(
          mismatches,
          `${what} at block ${P}`,
          first,
          paged.items,
          inBlocks(records, fromBlock, P),
          normalizeEvent,
        );
        if (records.some((r) => (r.blockNumber as bigint) > P)) changedAfter++;
      } else {
        const url = new URL(first, "http://x");
        const tokenId = url.searchParams.get("tokenId");
        const contract = lower(url.pathname.split("/").at(-1)!);
        const inForce = await inForceAt(version, P);
        const want = contractListing(inForce, contract, tokenId === null ? undefined : BigInt(tokenId));
        for (const p of [...inForce.problems, ...want.problems])
          mismatches.push({ what: `${what}: the test's views`, query: first, expected: "", got: p });
        sameList(mismatches, `${what} at block ${P}`, first, paged.items, want.records, normalizeListing(version));
      }
    });
    const items = done.reduce((n, d) => n + d.paged.items.length, 0);
    const pageCount = done.reduce((n, d) => n + d.paged.pages.length, 0);
    // Reads of several pages: their later pages came after newer writes were indexed.
    const movedOn = done.filter((d) => d.paged.pages.length > 1).length;
    console.log(
      `[history] ${done.length} paged reads (${pageCount} pages, ${items} items) in ${tRead} ms while ${rounds} ` +
        `rounds of writes arrived (up to block ${lastWriteBlock}); ${movedOn} of several pages, each read on after ` +
        "newer writes were indexed, " +
        `${changedAfter} histories with events after their pinned block; compared in ${Date.now() - t0 - tRead} ms`,
    );
    expect(mismatches.length, report(SEED, "pages against the whole answer at their block", mismatches)).toBe(0);
    expect(done.length, tag("paged reads")).toBe(reads.length);
    expect(rounds, tag("rounds of writes while pages were read")).toBeGreaterThan(1);
    expect(movedOn, tag("reads of several pages, read on after newer writes were indexed")).toBeGreaterThan(
      reads.length / 3,
    );
    expect(changedAfter, tag("histories with new events after their pinned block")).toBeGreaterThan(0);
  });

  it("contract listings equal the contracts' views at the block asked, in the documented order", async () => {
    const t0 = Date.now();
    // A block of the backfill's writes, one of the live writes', and the last.
    const blocks = [
      rng.query.pick(writeBlocks.filter((b) => b <= backfillEnd)),
      rng.query.pick(writeBlocks.filter((b) => b > backfillEnd)),
      lastWriteBlock,
    ];
    const mismatches: Mismatch[] = [];
    let records = 0;
    let mixed = 0;
    for (const version of ["v2", "v1"] as const) {
      const reads = blocks.flatMap((block) =>
        contractsOf(version).flatMap((contract) =>
          [undefined, ...tokenIdsOf(version)].map((tokenId) => {
            const token = tokenId === undefined ? "" : ` token ${tokenId}`;
            const what = `${version} contract listing of ${contract}${token}`;
            const params = {
              blockNumber: rng.query.chance(0.3) ? toHex(block) : block,
              tokenId: tokenId === undefined || rng.query.chance(0.7) ? tokenId : toHex(tokenId),
            };
            const read = pagedRead(what, `/registry/${version}/contract/${spell(contract)}`, params, "wallet");
            return { ...read, block, contract, tokenId };
          }),
        ),
      );
      await pool(reads, 4, async (read) => {
        const { what, first, block, contract, tokenId } = read;
        const paged = await pages(read);
        pagedMismatches(mismatches, what, first, paged, block);
        const inForce = await inForceAt(version, block);
        const want = contractListing(inForce, contract, tokenId);
        for (const p of [...inForce.problems, ...want.problems])
          mismatches.push({ what: `${what}: the test's views`, query: first, expected: "", got: p });
        sameList(mismatches, `${what} at block ${block}`, first, paged.items, want.records, normalizeListing(version));
        records += want.records.length;
        const types = new Set(want.records.map((r) => r.type));
        if (tokenId !== undefined && types.has("CONTRACT") && types.has("TOKEN")) mixed++;
      });
    }
    console.log(
      `[history] contract listings at blocks ${blocks.join(", ")}: ${records} records compared in ` +
        `${Date.now() - t0} ms`,
    );
    expect(mismatches.length, report(SEED, "contract listings against the contracts' views", mismatches)).toBe(0);
    expect(records, tag("contract listing records")).toBeGreaterThan(500);
    expect(mixed, tag("token listings with both contract-wide and token delegations")).toBeGreaterThan(5);

    // Before the registries existed, a listing is empty (docs/api.md, "Beyond the interface spec").
    for (const version of ["v2", "v1"] as const) {
      for (const contract of contractsOf(version)) {
        const a = await get(path(`/registry/${version}/contract/${contract}`, { blockNumber: 0, tokenId: 1 }));
        expect(`${a.status} ${a.block} ${a.headers.get("link")} ${a.text}`, tag(`${a.path}`)).toBe("200 0 null []");
      }
    }
  });

  it("a bad limit, cursor or range, and a cursor of another endpoint, wallet, range or chain: 400 naming \
it", async () => {
    const P = (await indexed())!;
    for (const version of ["v2", "v1"] as const) {
      // Wallets and contract listings with two items at least, so that a first page of one has a cursor.
      const paging = async (candidates: string[], n: number) => {
        const found: string[] = [];
        for (const candidate of candidates) {
          if (found.length === n) break;
          const a = await get(withParam(candidate, "limit", "2"));
          if (a.status === 200 && (parseJsonExact(a.text) as unknown[]).length === 2) found.push(candidate);
        }
        expect(found.length, tag(`${version}: listings of two items at least among ${candidates.length}`)).toBe(n);
        return found;
      };
      const [w1, w2] = (
        await paging(
          wallets[version].map((w) => path(`/registry/${version}/${w}`)),
          2,
        )
      ).map((p) => p.split("/")[3]!.split("?")[0]!) as [string, string];
      const contracts = contractsOf(version).map((c) => path(`/registry/${version}/contract/${c}`));
      const tokens = contractsOf(version).flatMap((c) =>
        tokenIdsOf(version).map((tokenId) => path(`/registry/${version}/contract/${c}`, { tokenId })),
      );
      const endpoints = [
        path(`/registry/${version}/history`),
        path(`/registry/${version}/history`, { fromBlock: 1 }),
        path(`/registry/${version}/history`, { toBlock: P }),
        path(`/registry/${version}/${w1}/history`),
        path(`/registry/${version}/${w2}/history`),
        path(`/registry/${version}/${w1}`),
        path(`/registry/${version}/${w2}`),
        path(`/registry/${version}/${w1}`, { blockNumber: P }),
        ...(await paging(contracts, 1)),
        ...(await paging(tokens, 2)),
      ];
      const other = version === "v2" ? "v1" : "v2";
      // Each endpoint's first page of one item, and its cursor: the next page is 200.
      const cursors: string[] = [];
      for (const endpoint of endpoints) {
        const a = await get(withParam(endpoint, "limit", "1"));
        const next = /^<([^>]+)>; rel="next"$/.exec(a.headers.get("link") ?? "")?.[1];
        expect(next, tag(`${endpoint}: a first page of one item with a next page`)).toBeDefined();
        cursors.push(new URL(next!, "http://x").searchParams.get("cursor")!);
        expect((await get(next!)).status, tag(`${next}: the next page`)).toBe(200);
      }
      for (const [i, endpoint] of endpoints.entries()) {
        // The cursors of every other endpoint (another path, wallet, range, version), and this one's on
        // another chain, which has the cursor's block too.
        const foreign = [
          ...cursors.filter((_, k) => k !== i).map((cursor) => withParam(endpoint, "cursor", cursor)),
          withParam(endpoint.replace(`/${version}/`, `/${other}/`), "cursor", cursors[i]!),
          withParam(withParam(endpoint, "chainId", String(OTHER_CHAIN_ID)), "cursor", cursors[i]!),
        ];
        for (const query of foreign) expectProblem(await get(query), 400, "invalid_parameter", "cursor");
        const truncated = cursors[i]!.slice(0, -4);
        for (const cursor of ["x", "", "!!!", "W10", Buffer.from('{"a":1}').toString("base64url"), truncated])
          expectProblem(await get(withParam(endpoint, "cursor", cursor)), 400, "invalid_parameter", "cursor");
        for (const limit of ["0", "1001", "-1", "1.5", "x", "", "1e2"])
          expectProblem(await get(withParam(endpoint, "limit", limit)), 400, "invalid_parameter", "limit");
      }
      const otherIndexed = (await indexed(OTHER_CHAIN_ID))!;
      expect(otherIndexed, tag("the other chain has the cursors' blocks")).toBeGreaterThan(P);
      for (const route of [`/registry/${version}/history`, `/registry/${version}/${w1}/history`]) {
        for (const [fromBlock, toBlock] of [
          ["10", "9"],
          ["0x10", "0xf"],
          [String(P), String(P - 1n)],
        ]) {
          expectProblem(await get(path(route, { fromBlock, toBlock })), 400, "invalid_parameter", "fromBlock");
        }
      }
    }
  });

  it("a reorganization inside the pinned range: later pages answer from the new branch at the pinned \
block", async () => {
    const [W, D1, D2] = [accounts[16]!, accounts[17]!, accounts[18]!].map(lower) as [Address, Address, Address];
    const [C1, C2] = [V2_CONTRACTS[0]!, V2_CONTRACTS[1]!];
    /** W's writes, v2 then v1, sent together at its pending nonces. */
    const writeW = async (v2Writes: [string, readonly unknown[]][], v1Calls: RegistryCall[]) => {
      let nonce = await pending(W);
      const requests: TxRequest[] = v2Writes.map(([functionName, args]) => ({
        from: W,
        to: oracle.v2.registry,
        data: encodeFunctionData({ abi: abis.v2, functionName, args } as never),
        gas: 300_000n,
        nonce: nonce++,
      }));
      const v1Txs: V1Tx[] = v1Calls.map((call) => ({
        from: W,
        nonce: nonce++,
        route: "direct",
        actor: W,
        via: [],
        calls: [{ call, fate: "done" }],
      }));
      seen(await sendAll(anvil.url, requests, SEED, SPREAD), "W's v2 writes");
      await sendV1(v1Txs);
    };
    // Before the fork: W's delegations on both registries.
    await writeW(
      [
        ["delegateAll", [D1, zeroHash, true]],
        ["delegateContract", [D1, C1, zeroHash, true]],
        ["delegateERC721", [D2, C1, 5n, zeroHash, true]],
        ["delegateERC20", [D2, C2, zeroHash, 100n]],
        ["delegateERC1155", [D1, C2, 9n, zeroHash, 3n]],
      ],
      [
        { fn: "delegateForAll", delegate: D1, value: true },
        { fn: "delegateForContract", delegate: D2, contract: C1, value: true },
        { fn: "delegateForToken", delegate: D1, contract: C1, tokenId: 5n, value: true },
        { fn: "delegateForAll", delegate: D2, value: true },
      ],
    );
    const firstW = (await chainHistory("v2", lastWriteBlock)).filter((r) => lower(String(r.from)) === W)[0]!;
    const fork = await snapshotChain(anvil.url);
    const forkBlock = fork.block;

    // Branch A: more of W's, and revocations of some before the fork.
    await writeW(
      [
        ["delegateContract", [D2, C2, zeroHash, true]],
        ["delegateERC20", [D2, C2, zeroHash, 0n]],
        ["delegateERC721", [D1, C1, 6n, zeroHash, true]],
      ],
      [
        { fn: "revokeDelegate", delegate: D2 },
        { fn: "delegateForToken", delegate: D2, contract: C2, tokenId: 7n, value: true },
      ],
    );
    await waitForIndexed(lastWriteBlock);
    // The change log has taken branch A in (its test, below, looks for their retractions).
    const branchA = lastWriteBlock;
    await waitFor(
      "the change log to hold branch A",
      async () =>
        (await wholeFeed()).some((e) => e.chainId === CHAIN_ID && e.blockNumber === branchA) ? true : undefined,
      120_000,
      feedSeen,
    );
    const reads = [
      { what: "v2 listing of W", version: "v2", first: path(`/registry/v2/${W}`, { limit: 3 }) },
      { what: "v1 listing of W", version: "v1", first: path(`/registry/v1/${W}`, { limit: 2 }) },
      { what: "v2 history of W", version: "v2", first: path(`/registry/v2/${W}/history`, { limit: 3 }) },
      { what: "v1 history of W", version: "v1", first: path(`/registry/v1/${W}/history`, { limit: 2 }) },
      {
        what: "v2 chain-wide history",
        version: "v2",
        first: path("/registry/v2/history", { fromBlock: firstW.blockNumber as bigint, limit: 2 }),
      },
    ] as const;
    const firstPages = await Promise.all(reads.map((r) => get(r.first)));
    // The old branch's later pages, followed before the reorganization.
    const oldRest = await Promise.all(
      firstPages.map((a) => followPages(() => service.url, nextOf(a), { headers: service.headers })),
    );
    const depth = (await chainClient(anvil.url).getBlockNumber()) - forkBlock;
    expect(depth, tag("the reorganization stays above Ponder's finality depth")).toBeLessThan(FINALITY);

    // Branch B from the fork: other writes of W's, and more blocks than A had. The head stays the
    // fork block for 3 s first, as a node gone back to it serves it: Ponder takes that block, which
    // it has indexed, for a reorganization and indexes it again; the change log must keep its
    // entries (core/feed.ts, reconcile; asserted in the change log's test below).
    await revertChain(anvil.url, fork, { blockTime: 0 });
    await new Promise((ok) => setTimeout(ok, 3_000));
    await chainClient(anvil.url).setIntervalMining({ interval: 1 });
    effects = effects.filter((e) => e.block <= forkBlock);
    writeBlocks = writeBlocks.filter((b) => b <= forkBlock);
    inForceCache.clear();
    await writeW(
      [
        ["delegateERC721", [D2, C2, 11n, zeroHash, true]],
        ["delegateERC1155", [D1, C2, 9n, zeroHash, 0n]],
        ["delegateContract", [D1, C2, zeroHash, true]],
      ],
      [
        { fn: "delegateForContract", delegate: D1, contract: C2, value: true },
        { fn: "delegateForToken", delegate: D2, contract: C1, tokenId: 8n, value: true },
      ],
    );
    const pins = firstPages.map((a) => a.block!);
    const highest = pins.reduce((m, b) => (b > m ? b : m), 0n);
    const head = await chainClient(anvil.url).getBlockNumber();
    if (head < highest + 3n) await rpc(anvil.url, "anvil_mine", [toHex(highest + 3n - head)]);
    lastWriteBlock = await chainClient(anvil.url).getBlockNumber();
    await waitForIndexed(lastWriteBlock);
    expect(plainOutput(service), tag("the indexer saw the reorganization")).toMatch(/Reorged block/);

    const mismatches: Mismatch[] = [];
    for (const [i, read] of reads.entries()) {
      const P = pins[i]!;
      const page1 = parseJsonExact(firstPages[i]!.text) as ApiRecord[];
      expect(firstPages[i]!.status, tag(`${read.what}: first page`)).toBe(200);
      expect(P, tag(`${read.what}: pinned after the fork`)).toBeGreaterThan(forkBlock);
      const rest = await followPages(() => service.url, nextOf(firstPages[i]!), { headers: service.headers });
      pagedMismatches(mismatches, `${read.what}, later pages`, read.first, rest, P);
      const version = read.version;
      let want: ApiRecord[];
      if (read.what.includes("history")) {
        const history = await chainHistory(version, P);
        const range = read.what.includes("chain-wide")
          ? inBlocks(history, firstW.blockNumber as bigint, P)
          : recordsOf(version, history, W);
        const last = page1.at(-1)!;
        const lastAt = { block: last.blockNumber as bigint, logIndex: Number(last.logIndex) };
        want = range.filter((r) => isBefore(lastAt, { block: r.blockNumber as bigint, logIndex: Number(r.logIndex) }));
        sameList(mismatches, `${read.what}: later pages at block ${P}`, read.first, rest.items, want, normalizeEvent);
      } else {
        const kit = await listingKit(version, P);
        const listed = await compareListings(oracle[version], kit, [W], { block: P });
        mismatches.push(...listed.mismatches);
        const whole = (await wholeListing(mismatches, version, W, P)) as ApiRecord[];
        const lastAt = positionIn(kit, page1.at(-1)!);
        want = whole.filter((r) => {
          const at = positionIn(kit, r);
          return lastAt !== undefined && at !== undefined && isBefore(lastAt, at);
        });
        sameList(
          mismatches,
          `${read.what}: later pages at block ${P}`,
          read.first,
          rest.items,
          want,
          normalizeListing(version),
        );
      }
      // The new branch's pages are not the old one's: the reorganization changed what they hold.
      expect(
        canonical(rest.items) === canonical(oldRest[i]!.items),
        tag(`${read.what}: the later pages on branch B differ from branch A's`),
      ).toBe(false);
      for (const p of oldRest[i]!.problems)
        mismatches.push({ what: `${read.what}, branch A`, query: read.first, expected: "", got: p });
    }
    expect(mismatches.length, report(SEED, "pages across a reorganization", mismatches)).toBe(0);
  });

  it("the change log: its live entries are the chain's events from where it began, in order, and the \
replaced branch's entries were retracted once each, after them", async () => {
    const head = await chainClient(anvil.url).getBlockNumber();
    await waitForIndexed(head);
    // Caught up once the chain's last event of each registry is in the log.
    const histories = { v2: await chainHistory("v2", head), v1: await chainHistory("v1", head) };
    let entries: FeedEntry[] = [];
    await waitFor(
      "the change log to catch up",
      async () => {
        entries = await wholeFeed();
        const live = liveEntries(entries);
        return (["v2", "v1"] as const).every((version) => {
          const last = histories[version].at(-1)!;
          return live.some(
            (e) => e.version === version && e.blockNumber === last.blockNumber && e.logIndex === Number(last.logIndex),
          );
        })
          ? true
          : undefined;
      },
      120_000,
      feedSeen,
    );
    const mismatches: Mismatch[] = [];
    const seqs = entries.map((e) => e.seq);
    expect(seqs, tag("seq grows along the log")).toEqual([...seqs].sort((a, b) => (a < b ? -1 : 1)));
    const ours = entries.filter((e) => e.chainId === CHAIN_ID);
    for (const version of ["v2", "v1"] as const) {
      const live = liveEntries(ours.filter((e) => e.version === version));
      // The log begins above the block its writer first took as final: the history from its first entry on.
      const first = ours.find((e) => e.version === version)!;
      const want = histories[version].filter((r) => (r.blockNumber as bigint) >= first.blockNumber);
      sameList(
        mismatches,
        `${version} change log`,
        "/registry/feed/events",
        live.map((e) => e.event),
        want,
        normalizeEvent,
      );
    }
    // Each retraction names an earlier entry of the replaced branch (above the fork), once, with its event.
    const bySeq = new Map(entries.map((e) => [e.seq, e]));
    const retractions = ours.filter((e) => e.retracts !== null);
    expect(retractions.length, tag("the reorganization retracted entries")).toBeGreaterThan(0);
    expect(new Set(retractions.map((e) => e.retracts)).size, tag("each entry retracted once")).toBe(retractions.length);
    for (const r of retractions) {
      const original = bySeq.get(r.retracts!)!;
      expect(original.seq < r.seq && canonical(original.event) === canonical(r.event), tag(`retraction ${r.seq}`)).toBe(
        true,
      );
      const block = await chainClient(anvil.url).getBlock({ blockNumber: original.blockNumber });
      expect(block.hash, tag(`entry ${original.seq} was on a replaced block`)).not.toBe(original.blockHash);
    }
    // Every live entry is on the chain: its block's hash is the chain's.
    for (const e of liveEntries(ours).slice(-40)) {
      const block = await chainClient(anvil.url).getBlock({ blockNumber: e.blockNumber });
      expect(e.blockHash, tag(`entry ${e.seq}'s block`)).toBe(block.hash);
    }
    expect(mismatches.length, report(SEED, "the change log", mismatches)).toBe(0);
  });

  it("the change log's stream gives the pull pages' entries, in order, across reconnections with \
Last-Event-ID; delivery=finalized gives the live entries once final, and no retraction", async () => {
    const entries = await wholeFeed();
    const last = entries.at(-1)!.seq;
    const instant = await streamFeed(service.url, "?cursor=0", {
      headers: service.headers,
      rng: rng.query,
      enough: (got) => (got.entries.at(-1)?.seq ?? -1n) >= last,
    });
    const upTo = instant.entries.filter((e) => e.seq <= last);
    expect(instant.ids.slice(0, upTo.length), tag("ids are seqs")).toEqual(upTo.map((e) => String(e.seq)));
    expect(upTo.map(canonical), tag("the stream's entries are the pages'")).toEqual(entries.map(canonical));
    expect(instant.connections, tag("the stream was resumed")).toBeGreaterThan(1);
    // The webhook endpoint, every delivery signed, a third of them refused once and sent again.
    await waitFor("the webhook deliveries", async () =>
      (receiver.entries.at(-1)?.seq ?? -1n) >= last ? true : undefined,
    );
    const delivered = receiver.entries.filter((e) => e.seq <= last);
    expect(delivered.map(canonical), tag("the webhook's entries are the pages'")).toEqual(entries.map(canonical));
    expect(receiver.faults, tag("every delivery signed, every retry the same")).toEqual([]);
    expect(receiver.refused.size, tag("deliveries were retried")).toBeGreaterThan(0);
    // Twice the finality depth mined: Ponder's final block, which moves in steps, passes every entry.
    const depth = BigInt(ponderFinalityDepth(CHAIN_ID));
    await rpc(anvil.url, "anvil_mine", [toHex(2n * depth + 2n)]);
    await waitForIndexed(await chainClient(anvil.url).getBlockNumber());
    const ours = liveEntries(entries.filter((e) => e.chainId === CHAIN_ID));
    const finalized = await streamFeed(service.url, `?cursor=0&chainId=${CHAIN_ID}&delivery=finalized`, {
      headers: service.headers,
      rng: rng.query,
      enough: (got) => got.entries.length >= ours.length,
    });
    expect(
      finalized.entries.map((e) => e.seq),
      tag("the finalized stream: the live entries"),
    ).toEqual(ours.map((e) => e.seq));
    expect(finalized.entries.some((e) => e.retracts !== null)).toBe(false);
  });

  it.runIf(process.env.DATABASE_URL)(
    "npm run serve gives the same bodies as npm start for history, pages and contract listings",
    async () => {
      replica = await startReplica(service, { API_WORKERS: "1" });
      const P = (await indexed())!;
      await waitForIndexed(P, replica.url);
      // Pinned to one block both have indexed; and bad requests, whose problems must be the same too.
      const reads: PagedRead[] = [];
      const bad: PagedRead[] = [];
      for (const version of ["v2", "v1"] as const) {
        const route = (tail: string) => `/registry/${version}/${tail}`;
        reads.push(pagedRead(`${version} history`, route("history"), { toBlock: P }, "chain"));
        for (const w of rng.query.shuffle([...wallets[version]]).slice(0, 6)) {
          reads.push(pagedRead(`${version} history of ${w}`, route(`${w}/history`), { toBlock: P }, "wallet"));
          reads.push(pagedRead(`${version} listing of ${w}`, route(w), { blockNumber: P }, "listing"));
        }
        for (const contract of contractsOf(version)) {
          for (const tokenId of [undefined, rng.query.pick(tokenIdsOf(version))]) {
            const what = `${version} listing of ${contract} ${tokenId ?? ""}`;
            reads.push(pagedRead(what, route(`contract/${contract}`), { blockNumber: P, tokenId }, "wallet"));
          }
        }
        for (const params of [{ limit: 0 }, { cursor: "x" }, { fromBlock: P, toBlock: P - 1n }])
          bad.push({ what: "a bad request", first: path(route("history"), params), limits: [] });
      }
      /** Each page as the processes must agree on it: status, type, block, Link and body. */
      const signature = (a: Answer) =>
        [a.status, ...["content-type", "x-indexed-block", "link"].map((h) => a.headers.get(h)), a.text].join(" ");
      const differing: string[] = [];
      let pageCount = 0;
      for (const read of [...reads, ...bad]) {
        const first = read.first;
        const [own, served, mixed] = await Promise.all([
          pages(read),
          pages(read, undefined, [replica.url]),
          pages(read, undefined, [replica.url, service.url]),
        ]);
        if (!bad.includes(read)) expect(own.problems, tag(`${read.what}: npm start's pages`)).toEqual([]);
        pageCount += own.pages.length;
        const want = own.pages.map(signature).join("\n");
        if (served.pages.map(signature).join("\n") !== want) differing.push(`${first} (replica)`);
        if (mixed.pages.map(signature).join("\n") !== want) differing.push(`${first} (pages from both, in turn)`);
      }
      console.log(`[history] ${reads.length} paged reads (${pageCount} pages) compared between npm start and serve`);
      expect(differing, tag("reads answered differently by npm run serve")).toEqual([]);
      // The change log, as the replica streams it (reading the log the indexer's process wrote).
      const entries = await wholeFeed();
      const last = entries.at(-1)!.seq;
      const streamed = await streamFeed(replica.url, "?cursor=0", {
        headers: service.headers,
        rng: rng.query,
        enough: (got) => (got.entries.at(-1)?.seq ?? -1n) >= last,
      });
      const upTo = streamed.entries.filter((e) => e.seq <= last);
      expect(upTo.map(canonical), tag("the replica's stream: npm start's log")).toEqual(entries.map(canonical));
    },
  );
});

/** The next page's path of an answer (which must have one). */
function nextOf(a: Answer): string {
  const next = /^<([^>]+)>; rel="next"$/.exec(a.headers.get("link") ?? "")?.[1];
  if (next === undefined) throw new Error(`${a.path}: no next page (${a.status} ${a.text.slice(0, 200)})`);
  return next;
}
