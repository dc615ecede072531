/**
 * withDirectAnswers gives the app's very answers: the same requests, sent to the app alone and to
 * the app behind it, get the same status, headers (but Date) and body, whether it answered them
 * itself (a keyed GET check — at a block, or at a moment its copy's samples tell —, a keyed GET of a
 * whole listing at the newest indexed block, or a keyed JSON-RPC body) or handed them to the app
 * (anything else);
 * and each keyed request is counted once against its key, whichever answered it, and in the metrics
 * under the label the app gives it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import type { RequestListener } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getRequestListener } from "@hono/node-server";
import { Hono } from "hono";
import { type Address, encodeFunctionData, encodeFunctionResult, type Hex, maxUint256, toHex, zeroAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KeyStore, openKeyStore } from "../../api/access/keys";
import { memoryLimiter } from "../../api/access/memory-limiter";
import type { Access } from "../../api/access/open";
import { createApp } from "../../api/app";
import type { AccessDb } from "../../api/database/db";
import { pgliteAccessDb } from "../../api/database/pglite";
import { countRequests } from "../../api/http/metrics";
import { withDirectAnswers } from "../../api/routes/direct-answers";
import type { AppOptions } from "../../api/routes/env";
import { LISTING_CACHE_BYTES, LISTING_CACHE_MIN_ROWS, ListingCache } from "../../api/routes/listing-cache";
import type { HistoryStore } from "../../api/store/history-store";
import type { Store, V1Row, V2Row, WalletView } from "../../api/store/store";
import { type ChainAlarms, NO_ALARMS } from "../../api/watch/chain-alarms";
import { registryV2Abi } from "../../core/abi/registryV2";
import type { Sample } from "../../core/moment";
import { type V1CheckQuery, type V1Key, type V1Type, v1CheckKeys, v1KeyString } from "../../core/v1";
import {
  V2_CHECK_KINDS,
  V2_DELEGATION_TYPES,
  type V2CheckQuery,
  type V2DelegationType,
  type V2State,
  v2Check,
} from "../../core/v2";
import { type Listening, listenOn } from "../../devkit/http";
import { chooseSeed, Rng, spellAddress } from "../../devkit/random";

const SEED = chooseSeed();
const READY = 31337;
/** A second chain ready, behind the first: answers across chains are given directly where both can be. */
const OTHER = 10;
const OTHER_BLOCK = 4100n;
const SYNCING = 7;
const ALARMED = 5;
const BLOCK = 4242n;
const registry = { address: "0x00000000000000447e69651d841bD8D104Bed493", startBlock: null };
const chains = [READY, OTHER, SYNCING, ALARMED].map((id) => ({
  id,
  name: `chain${id}`,
  title: `Chain ${id}`,
  testnet: true,
  v1: registry,
  v2: registry,
}));
const alarms: ChainAlarms = {
  ...NO_ALARMS,
  current: () => new Map([[ALARMED, "a reorganization deeper than the finality depth"]]),
};

const rng = new Rng(SEED);
const address = (n: number) => `0x${n.toString(16).padStart(40, "0")}` as Address;
const WALLETS = [1, 2, 0xabcdef, 0x1234567890, 77, 78, 79, 80].map(address);
const CONTRACTS = [0xc0, 0xc1].map(address);
const RIGHTS: Hex[] = [`0x${"00".repeat(32)}`, `0x${"00".repeat(31)}01`];

function v2Query(): V2CheckQuery {
  const kind = rng.pick(V2_CHECK_KINDS);
  return {
    kind,
    to: rng.pick(WALLETS),
    from: rng.pick(WALLETS),
    rights: rng.pick(RIGHTS),
    contract: rng.pick(CONTRACTS),
    tokenId: BigInt(rng.int(3)),
  };
}
function v1Query(): V1CheckQuery {
  return {
    kind: rng.pick(["all", "contract", "token"] as const),
    delegate: rng.pick(WALLETS),
    vault: rng.pick(WALLETS),
    contract: rng.pick(CONTRACTS),
    tokenId: BigInt(rng.int(3)),
  };
}
const V2_QUERIES = Array.from({ length: 120 }, v2Query);
const V1_QUERIES = Array.from({ length: 60 }, v1Query);

// Some of what the checks look up is enabled: trues, falses and amounts among the answers.
const enabled = new Map<Hex, V2State>();
for (const query of V2_QUERIES) {
  const { hashes } = v2Check(query);
  if (hashes.length > 0 && rng.chance(0.3)) enabled.set(rng.pick(hashes), { enabled: true, amount: rng.bigint(64) });
}
// An amount among them whatever the seed drew: a balance check's own delegation (its last hash),
// where none wider is enabled.
const isAmount = (answer: boolean | bigint) => typeof answer === "bigint" && answer > 0n && answer < maxUint256;
const answerNow = (q: V2CheckQuery) => v2Check(q).answer((hash) => enabled.get(hash));
if (!V2_QUERIES.some((q) => isAmount(answerNow(q)))) {
  const balance = V2_QUERIES.find((q) => v2Check(q).hashes.length > 0 && answerNow(q) === 0n)!;
  enabled.set(v2Check(balance).hashes.at(-1)!, { enabled: true, amount: 1n + rng.bigint(64) });
}
const inForce = V1_QUERIES.flatMap(v1CheckKeys).filter(() => rng.chance(0.2));

/**
 * The history: the checks' answers at blocks before HELD_FROM, which differ from the head's (nothing
 * was enabled yet); no listings, pages nor events.
 */
const earlier = <T>(rows: T[], at: bigint) => (at >= HELD_FROM ? rows : []);
const nothing = async () => ({ items: [], more: false });
const noLists = async (_: number, wallets: readonly string[]) => ({ lists: wallets.map(() => []), more: false });
/** The reads of the history's checks and of the store's listings, by either server. */
const reads = { history: 0, listings: 0 };
const history: HistoryStore = {
  indexedBlock: async () => BLOCK,
  eventSamples: async () => ({}),
  liveSamples: async () => ({}),
  v2Enabled: async (_, hashes, at) => {
    reads.history++;
    return new Map(earlier([...enabledOf(hashes)], at));
  },
  v1InForce: async (_, keys, at) => {
    reads.history++;
    return earlier(inForceOf(keys), at);
  },
  v2Delegation: async () => undefined,
  v2Wallet: nothing,
  v2Wallets: noLists,
  v2Contract: nothing,
  v2Events: nothing,
  v1Wallet: nothing,
  v1Wallets: noLists,
  v1Contract: nothing,
  v1Events: nothing,
};

/** Delegations in force, among the wallets: the first wallet's listing is long enough to be held rendered. */
const V2_ROWS: V2Row[] = Array.from({ length: 3 * LISTING_CACHE_MIN_ROWS }, (_, i) => {
  const delegationType = rng.pick<V2DelegationType>(["ALL", "CONTRACT", "ERC721", "ERC20", "ERC1155"]);
  return {
    hash: `0x${rng.bigint(256).toString(16).padStart(64, "0")}`,
    delegationType,
    from: i % 2 === 0 ? WALLETS[0]! : rng.pick(WALLETS),
    to: rng.pick(WALLETS),
    contract: delegationType === "ALL" ? null : rng.pick(CONTRACTS),
    tokenId: delegationType === "ERC721" || delegationType === "ERC1155" ? rng.bigint(256) : null,
    rights: rng.pick(RIGHTS),
    amount: delegationType === "ERC20" || delegationType === "ERC1155" ? rng.bigint(256) : null,
  };
});
const V1_ROWS: V1Row[] = Array.from({ length: 40 }, () => {
  const type = rng.pick<V1Type>(["ALL", "CONTRACT", "TOKEN"]);
  const contract = type === "ALL" ? address(0) : rng.pick(CONTRACTS);
  return { type, vault: rng.pick(WALLETS), delegate: rng.pick(WALLETS), contract, tokenId: BigInt(rng.int(3)) };
});
/** Each wallet's revision: moved by the test, as a sync that changes its listing moves it. */
const revisions = new Map<Address, number>();
function walletView<Row>(
  chainId: number,
  rows: Row[],
  wallet: Address,
  held: string | undefined,
  parties: (row: Row) => Address[],
): WalletView<Row> {
  const revision = String(revisions.get(wallet) ?? 0);
  const listed = rows.filter((row) => parties(row).includes(wallet));
  return { ...view(chainId, held === revision ? undefined : listed), revision };
}

/** The first block at which the store's copy can tell its answers (none of its rows changed since). */
const HELD_FROM = 4000n;
const view = <T>(chainId: number, data: T) =>
  chainId === READY || chainId === OTHER
    ? { indexedBlock: chainId === READY ? BLOCK : OTHER_BLOCK, ready: true, data }
    : { indexedBlock: 3n, ready: false, data };
const heldAt = (block: bigint) => block >= HELD_FROM && block <= BLOCK;
const enabledOf = (hashes: readonly Hex[]) =>
  new Map(hashes.flatMap((h): [Hex, V2State][] => (enabled.has(h) ? [[h, enabled.get(h)!]] : [])));
/** Blocks two seconds apart; those with registry events, all but every fourth (a moment there is not told). */
const stampOf = (block: bigint) => 1_000_000n + 2n * block;
const withEvents = (block: bigint) => block % 4n !== 0n;
/** The event blocks nearest a moment, up to `head`, as the copy's samples (api/replica/event-times.ts). */
function eventSamples(timestamp: bigint, head: bigint): { before?: Sample; after?: Sample } {
  const sample = (block: bigint): Sample => ({ block, timestamp: stampOf(block) });
  let [before, after] = [(timestamp - stampOf(0n)) / 2n, (timestamp - stampOf(0n)) / 2n + 1n];
  while (before >= 0n && !withEvents(before)) before--;
  while (after <= head && !withEvents(after)) after++;
  return { before: before >= 0n ? sample(before) : undefined, after: after <= head ? sample(after) : undefined };
}
const inForceOf = (keys: readonly V1Key[]) =>
  inForce.filter((row) => keys.some((k) => v1KeyString(k) === v1KeyString(row)));
const store: Store = {
  v2Enabled: async (chainId, hashes) => view(chainId, enabledOf(hashes)),
  v1InForce: async (chainId, keys) => view(chainId, inForceOf(keys)),
  v2EnabledAt: async (chainId, hashes, block) => view(chainId, heldAt(block) ? enabledOf(hashes) : undefined),
  v1InForceAt: async (chainId, keys, block) => view(chainId, heldAt(block) ? inForceOf(keys) : undefined),
  v2Wallet: async (chainId, wallet, held) => {
    reads.listings++;
    return walletView(chainId, V2_ROWS, wallet, held, (r) => [r.from, r.to]);
  },
  v2Wallets: async () => undefined,
  v2Delegation: async () => undefined,
  v1Wallet: async (chainId, wallet, held) => walletView(chainId, V1_ROWS, wallet, held, (r) => [r.vault, r.delegate]),
  v1Wallets: async () => undefined,
  eventSamples: (chainId, timestamp, head) =>
    chainId === READY || chainId === OTHER ? eventSamples(timestamp, head) : undefined,
  chainStates: async () =>
    new Map([
      [READY, { indexedBlock: BLOCK, ready: true, indexedTimestamp: Number(stampOf(BLOCK)) }],
      [OTHER, { indexedBlock: OTHER_BLOCK, ready: true, indexedTimestamp: Number(stampOf(OTHER_BLOCK)) }],
      [SYNCING, { indexedBlock: 3n, ready: false, indexedTimestamp: 1 }],
    ]),
};

const v2Url = (q: V2CheckQuery) => {
  const params = new URLSearchParams({ chainId: String(READY), to: spellAddress(rng, q.to) });
  params.set(
    q.kind === "all" || q.kind === "contract" || rng.chance(0.5) ? "from" : "vault",
    spellAddress(rng, q.from),
  );
  if (q.rights !== RIGHTS[0] || rng.chance(0.5)) params.set("rights", q.rights);
  if (q.kind !== "all") params.set("contract", q.contract!);
  if (q.kind === "erc721" || q.kind === "erc1155") params.set("tokenId", String(q.tokenId));
  return `/registry/v2/check/${q.kind}?${params}`;
};
const v1Url = (q: V1CheckQuery) => {
  const params = new URLSearchParams({
    chainId: String(READY),
    delegate: q.delegate,
    vault: spellAddress(rng, q.vault),
  });
  if (q.kind !== "all") params.set("contract", q.contract!);
  if (q.kind === "token") params.set("tokenId", String(q.tokenId));
  return `/registry/v1/check/${q.kind}?${params}`;
};

let dir: string;
let db: AccessDb;
let keys: KeyStore;
let key: string;
let keyId: string;
let revoked: string;
const servers: Listening[] = [];
/** The app alone; the app behind withDirectAnswers, and the answers it gave itself. */
let appOnly: string;
let direct: string;
const directly: string[] = [];
/** The app's answers, as npm run serve's metrics count them. */
const appCounts: Record<string, number> = {};

/** Counts each answer into `counts` under `"<route> <status>"`. */
const countInto = (counts: Record<string, number>) => (route: string, status: number) => {
  counts[`${route} ${status}`] = (counts[`${route} ${status}`] ?? 0) + 1;
};

async function listen(listener: RequestListener): Promise<string> {
  const server = await listenOn(listener);
  servers.push(server);
  return server.url;
}

/**
 * The app's options: each server its own keyless limiter, so that both count the same keyless requests,
 * and no shedding, which follows the test process's load and so could refuse one server's request only.
 */
function options(): AppOptions {
  const access: Access = {
    keys,
    limiter: memoryLimiter(),
    load: { shed: () => false },
    trustProxy: false,
    adminToken: undefined,
    db,
    schema: "access",
    close: async () => {},
  };
  return { store, history, chains, alarms, access, behindAfterSeconds: 120 };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "direct-answers-"));
  db = await pgliteAccessDb(join(dir, "db"));
  keys = await openKeyStore(db, "access");
  ({ key, id: keyId } = await keys.create("direct"));
  const old = await keys.create("revoked");
  await keys.revoke(old.id);
  revoked = old.key;
  appOnly = await listen(
    getRequestListener(new Hono().use(countRequests(countInto(appCounts))).route("/", createApp(options())).fetch),
  );
  const behind = { ...options(), listings: new ListingCache(LISTING_CACHE_BYTES) };
  direct = await listen(
    withDirectAnswers(behind, getRequestListener(createApp(behind).fetch), (route, status) =>
      directly.push(`${route} ${status}`),
    ),
  );
}, 60_000);

afterAll(async () => {
  for (const server of servers) await server.close();
  await keys.close();
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

type Answer = { status: number; headers: Record<string, string>; body: string };
async function answer(base: string, path: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(base + path, init);
  const headers = Object.fromEntries([...res.headers].filter(([name]) => name !== "date"));
  return { status: res.status, headers, body: await res.text() };
}
const recentRequests = async () => (await keys.list()).find((k) => k.id === keyId)!.recentRequests;

/** Sends `path` to both servers; expects the same answer, and the key's uses counted alike. */
async function same(path: string, init: RequestInit = {}): Promise<Answer> {
  const before = await recentRequests();
  const mine = await answer(direct, path, init);
  const used = (await recentRequests()) - before;
  const app = await answer(appOnly, path, init);
  // A keyless answer's seconds until its budget resets are each server's own, read moments apart:
  // they may fall either side of a second.
  const reset = (a: Answer) => Number(a.headers["ratelimit-reset"] ?? 0);
  expect(Math.abs(reset(mine) - reset(app)), `RateLimit-Reset of ${path} (SEED=${SEED})`).toBeLessThanOrEqual(1);
  const others = (a: Answer) => ({ ...a, headers: { ...a.headers, "ratelimit-reset": undefined } });
  expect(others(mine), `${path} (SEED=${SEED})`).toEqual(others(app));
  expect(used, `uses of the key counted for ${path} (SEED=${SEED})`).toBe((await recentRequests()) - before - used);
  return mine;
}

const keyed = (k = key) => ({ headers: { "X-API-KEY": k } });

/** A v2 check as the registry's calldata. */
function v2Calldata(q: V2CheckQuery): Hex {
  const abi = registryV2Abi;
  const { to, from, rights } = q;
  const contract = q.contract!;
  const tokenId = q.tokenId!;
  switch (q.kind) {
    case "all":
      return encodeFunctionData({ abi, functionName: "checkDelegateForAll", args: [to, from, rights] });
    case "contract":
      return encodeFunctionData({ abi, functionName: "checkDelegateForContract", args: [to, from, contract, rights] });
    case "erc721":
      return encodeFunctionData({
        abi,
        functionName: "checkDelegateForERC721",
        args: [to, from, contract, tokenId, rights],
      });
    case "erc20":
      return encodeFunctionData({ abi, functionName: "checkDelegateForERC20", args: [to, from, contract, rights] });
    case "erc1155":
      return encodeFunctionData({
        abi,
        functionName: "checkDelegateForERC1155",
        args: [to, from, contract, tokenId, rights],
      });
  }
}
/** A POST of a JSON-RPC body (text as given) to chain `chainId`'s /rpc. */
const rpcPost = (body: string, k: string | null = key) => ({
  method: "POST",
  body,
  headers: { "Content-Type": "application/json", ...(k === null ? {} : { "X-API-KEY": k }) },
});
const ethCall = (id: number, data: Hex, block: string | object = "latest", to: string = registry.address) => ({
  jsonrpc: "2.0",
  id,
  method: "eth_call",
  params: [{ to, data }, block],
});

// Real servers and a PGlite key store: seconds, more on a busy machine.
describe("withDirectAnswers", { timeout: 60_000 }, () => {
  it("answers keyed GET checks at the newest indexed block itself, as the app answers them", async () => {
    const paths = [...V2_QUERIES.map(v2Url), ...V1_QUERIES.map(v1Url)];
    const bodies = new Set<string>();
    for (const path of paths) {
      const got = await same(path, keyed());
      expect(got.status, path).toBe(200);
      expect(got.headers["x-indexed-block"]).toBe(String(BLOCK));
      bodies.add(got.body);
    }
    // The answers vary (the store holds some of what they look up), and every one was given directly.
    expect(bodies).toContain("true");
    expect(bodies).toContain("false");
    const amounts = [...bodies].filter((b) => /^[1-9]\d*$/.test(b) && BigInt(b) < maxUint256);
    expect(amounts, `${[...bodies].join(" ")} (SEED=${SEED})`).not.toEqual([]);
    expect(directly).toHaveLength(paths.length);
    // Counted under the labels the app's metrics give the same answers.
    const counts: Record<string, number> = {};
    for (const label of directly) counts[label] = (counts[label] ?? 0) + 1;
    expect(counts).toEqual(appCounts);
    expect(new Set(directly)).toContain("/registry/v2/check/erc1155 200");
    expect(new Set(directly)).toContain("/registry/v1/check/token 200");
  });

  it("answers keyed GET checks at past blocks itself: from the store where it can tell, else the history", async () => {
    const count = directly.length;
    const past = (path: string, block: bigint) => `${path}&blockNumber=${block}`;
    const held = [...V2_QUERIES.slice(0, 60).map(v2Url), ...V1_QUERIES.slice(0, 30).map(v1Url)];
    const changed = new Set<string>();
    for (const [i, path] of held.entries()) {
      const block = HELD_FROM + BigInt(i % 2 === 0 ? 0 : rng.int(Number(BLOCK - HELD_FROM) + 1));
      const got = await same(past(path, block), keyed());
      expect(got.status, path).toBe(200);
      expect(got.headers["x-indexed-block"]).toBe(String(block));
      // Before the copy can tell: the history's answer.
      const before = await same(past(path, HELD_FROM - 1n - BigInt(rng.int(100))), keyed());
      expect(before.status, path).toBe(200);
      if (before.body !== got.body) changed.add(path);
    }
    expect(changed.size, `answers the history gives otherwise (SEED=${SEED})`).toBeGreaterThan(0);
    expect(directly).toHaveLength(count + 2 * held.length);
    // Past the newest block, and no block: the app's 400s.
    const [path] = held as [string];
    expect((await same(past(path, BLOCK + 1n), keyed())).status).toBe(400);
    expect((await same(past(path, -1n), keyed())).status).toBe(400);
    expect(directly).toHaveLength(count + 2 * held.length);
  });

  it("answers keyed GET checks at moments its copy's samples tell itself; hands the app the others", async () => {
    const paths = [...V2_QUERIES.slice(0, 60).map(v2Url), ...V1_QUERIES.slice(0, 30).map(v1Url)];
    const told = new Set<bigint>();
    for (const path of paths) {
      const block = HELD_FROM - 200n + BigInt(rng.int(Number(BLOCK - HELD_FROM) + 200));
      const count = directly.length;
      const got = await same(`${path}&timestamp=${stampOf(block) + BigInt(rng.int(2))}`, keyed());
      // Told where the block and the next have events; else the app needs headers this process has no RPC for.
      if (withEvents(block) && withEvents(block + 1n)) {
        expect(got.status, path).toBe(200);
        expect(got.headers["x-indexed-block"]).toBe(String(block));
        expect(directly, path).toHaveLength(count + 1);
        told.add(block);
      } else {
        expect(got.status, `${path} at block ${block}: ${got.body}`).toBe(400);
        expect(directly, path).toHaveLength(count);
      }
    }
    expect(told.size, `moments told (SEED=${SEED})`).toBeGreaterThan(20);
  });

  it("answers keyed GET checks and whole listings across chains itself where it gives every part", async () => {
    const both = `chainId=${READY},${OTHER}`;
    const across = (path: string) => path.replace(`chainId=${READY}`, both);
    const listings = WALLETS.slice(0, 3).flatMap((w) => [`/registry/v2/${w}?${both}`, `/registry/v1/${w}?${both}`]);
    const direct = [...V2_QUERIES.slice(0, 30).map(v2Url), ...V1_QUERIES.slice(0, 15).map(v1Url)].map(across);
    // Moments: told on both chains (directly), or past the second chain's newest block (the app's).
    const told = V2_QUERIES.slice(0, 10).map((q) => `${across(v2Url(q))}&timestamp=${stampOf(4001n)}`);
    const past = V2_QUERIES.slice(0, 10).map((q) => `${across(v2Url(q))}&timestamp=${stampOf(OTHER_BLOCK + 2n)}`);
    for (const [paths, given] of [
      [[...direct, ...listings, ...told], 1],
      [[...past, ...direct.slice(0, 5).map((p) => p.replace(both, "chainId=all"))], 0],
    ] as const)
      for (const path of paths) {
        const count = directly.length;
        const got = await same(path, keyed());
        expect(got.status, path).toBe(200);
        const { chains: parts } = JSON.parse(got.body) as { chains: { chainId: number; block?: number }[] };
        const asked = path.includes("chainId=all") ? chains.map((c) => c.id) : [OTHER, READY];
        expect(
          parts.map((p) => p.chainId),
          path,
        ).toEqual(asked.sort((a, b) => a - b));
        expect(directly, path).toHaveLength(count + given);
      }
  });

  it("answers keyed GETs of whole listings itself, each direction, as the app does, also once held", async () => {
    const count = directly.length;
    const before = { ...appCounts };
    const paths = (["v2", "v1"] as const).flatMap((version) =>
      [...WALLETS, address(0xfeed)].flatMap((wallet) =>
        [undefined, "both", "incoming", "outgoing"].map((direction) => {
          const params = new URLSearchParams({ chainId: String(READY) });
          if (direction !== undefined) params.set("direction", direction);
          return `/registry/${version}/${spellAddress(rng, wallet)}?${params}`;
        }),
      ),
    );
    // Twice: the second time the long listings are held rendered, by the app and here alike.
    const records = new Set<number>();
    for (const path of [...paths, ...paths]) {
      const got = await same(path, keyed());
      expect(got.status, path).toBe(200);
      expect(got.headers["x-indexed-block"]).toBe(String(BLOCK));
      records.add((JSON.parse(got.body) as unknown[]).length);
    }
    expect(Math.max(...records), "a listing long enough to be held").toBeGreaterThanOrEqual(LISTING_CACHE_MIN_ROWS);
    expect(records).toContain(0);
    expect(directly).toHaveLength(count + 2 * paths.length);
    for (const version of ["v2", "v1"]) {
      const label = `/registry/${version}/:wallet 200`;
      expect(directly.slice(count).filter((l) => l === label)).toHaveLength(appCounts[label]! - (before[label] ?? 0));
    }

    // A delegation more for the long listing's wallet, and its revision moves: both answer it.
    const [wallet] = WALLETS as [Address];
    const added = { ...V2_ROWS[0]!, from: wallet, hash: `0x${"ee".repeat(32)}` as Hex };
    V2_ROWS.push(added);
    revisions.set(wallet, (revisions.get(wallet) ?? 0) + 1);
    const got = await same(`/registry/v2/${wallet}?chainId=${READY}&direction=outgoing`, keyed());
    expect(got.body).toContain(added.hash);
    expect(directly).toHaveLength(count + 2 * paths.length + 1);
  });

  it("answers a check spelt with percent-encoding and an unknown parameter itself too", async () => {
    const count = directly.length;
    const path = `/registry/v2/check/all?chainId=${READY}&to=%30x${WALLETS[1]!.slice(2)}&from=${WALLETS[2]}&extra=1`;
    expect((await same(path, keyed())).status).toBe(200);
    expect(directly).toHaveLength(count + 1);
  });

  it("answers keyed JSON-RPC bodies itself, as the app answers them: calls, batches, errors", async () => {
    const count = directly.length;
    const path = `/rpc/${READY}`;
    const pastBlock = () =>
      toHex(rng.chance(0.5) ? HELD_FROM + BigInt(rng.int(100)) : HELD_FROM - 1n - BigInt(rng.int(100)));
    const calls = V2_QUERIES.map((q, i) => ethCall(i, v2Calldata(q), i % 3 === 0 ? pastBlock() : "latest"));
    const bodies = [
      ...calls.map((call) => JSON.stringify(call)),
      JSON.stringify(calls.slice(0, 20)),
      JSON.stringify([
        { jsonrpc: "2.0", id: "a", method: "eth_chainId" },
        { jsonrpc: "2.0", method: "eth_chainId" },
      ]),
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber" }),
      JSON.stringify({ jsonrpc: "2.0", method: "eth_chainId" }),
      JSON.stringify(ethCall(1, v2Calldata(V2_QUERIES[0]!), toHex(BLOCK + 1n))),
      JSON.stringify(ethCall(1, v2Calldata(V2_QUERIES[0]!), { blockHash: `0x${"ab".repeat(32)}` })),
      JSON.stringify(ethCall(1, v2Calldata(V2_QUERIES[0]!), "latest", address(0xdead))),
      JSON.stringify(ethCall(1, `${v2Calldata(V2_QUERIES[0]!).slice(0, 40)}` as Hex)),
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_sendTransaction", params: [] }),
      "[]",
      "{not json",
    ];
    const results = new Set<string>();
    for (const body of bodies) {
      const got = await same(path, rpcPost(body));
      // Only a lone notification gets no answer.
      const notification = body.startsWith('{"jsonrpc"') && !("id" in JSON.parse(body));
      expect(got.status, body).toBe(notification ? 204 : 200);
      if (got.status === 200)
        for (const reply of [JSON.parse(got.body)].flat())
          results.add(JSON.stringify(reply.result ?? reply.error?.code));
    }
    // Trues, falses, amounts and errors among the answers, every one given directly.
    expect(results.size, `${[...results].join(" ")} (SEED=${SEED})`).toBeGreaterThan(5);
    expect(results).toContain(JSON.stringify(`0x${"0".repeat(63)}1`));
    expect(directly).toHaveLength(count + bodies.length);
    expect(directly.filter((l) => l === "/rpc/:chainId 200")).toHaveLength(appCounts["/rpc/:chainId 200"]!);

    // A long listing, rendered once and then held: both times the contract's encoding of its rows.
    const [wallet] = WALLETS as [Address];
    const outgoing = V2_ROWS.filter((row) => row.from === wallet);
    expect(outgoing.length).toBeGreaterThanOrEqual(LISTING_CACHE_MIN_ROWS);
    const listing = ethCall(
      1,
      encodeFunctionData({ abi: registryV2Abi, functionName: "getOutgoingDelegations", args: [wallet] }),
    );
    const expected = encodeFunctionResult({
      abi: registryV2Abi,
      functionName: "getOutgoingDelegations",
      result: outgoing.map((row) => ({
        type_: V2_DELEGATION_TYPES.indexOf(row.delegationType),
        to: row.to,
        from: row.from,
        rights: row.rights,
        contract_: row.contract ?? zeroAddress,
        tokenId: row.tokenId ?? 0n,
        amount: row.amount ?? 0n,
      })),
    });
    for (const time of ["rendered", "held"]) {
      const got = await same(path, rpcPost(JSON.stringify(listing)));
      expect((JSON.parse(got.body) as { result: Hex }).result, time).toBe(expected);
    }

    // What it does not answer itself, the app answers: no key, a key it cannot vouch for, a chain
    // not served or refused, a body of unknown length.
    const other = [
      [path, rpcPost(bodies[0]!, null), 200],
      [path, rpcPost(bodies[0]!, revoked), 401],
      [`/rpc/999`, rpcPost(bodies[0]!), 400],
      [`/rpc/${ALARMED}`, rpcPost(bodies[0]!), 503],
      [`/rpc/x`, rpcPost(bodies[0]!), 400],
    ] as const;
    for (const [url, init, status] of other) expect((await same(url, init)).status, url).toBe(status);
    const stream = () => ({
      ...rpcPost(""),
      body: new Blob([bodies[0]!]).stream(),
      duplex: "half" as const,
    });
    const [mine, app] = [await answer(direct, path, stream()), await answer(appOnly, path, stream())];
    expect(mine).toEqual(app);
    expect(mine.status).toBe(200);
    expect(directly).toHaveLength(count + bodies.length + 2);
  });

  it("reads nothing for a key its copy cannot vouch for: the app refuses it, as it would alone", async () => {
    const count = directly.length;
    const before = { ...reads };
    const check = `${v2Url(V2_QUERIES[0]!)}&blockNumber=${HELD_FROM - 1n}`;
    const listing = `/registry/v2/${WALLETS[0]}?chainId=${READY}`;
    for (const k of [revoked, `dlk_ffffffffffff_${"a".repeat(43)}`, "dlk_nope"])
      for (const path of [check, listing]) expect((await same(path, keyed(k))).status, path).toBe(401);
    expect(reads).toEqual(before);
    expect(directly).toHaveLength(count);
  });

  it("hands every other request to the app, unchanged", async () => {
    const count = directly.length;
    const good = `chainId=${READY}&to=${WALLETS[0]}&from=${WALLETS[1]}`;
    const cases: [string, RequestInit, number][] = [
      [`/registry/v2/check/all?${good}`, {}, 200], // keyless: the keyless limit's headers
      [`/registry/v2/check/all?${good}`, keyed("dlk_nope"), 401],
      [`/registry/v2/check/all?${good}`, keyed(`dlk_ffffffffffff_${"a".repeat(43)}`), 401],
      [`/registry/v2/check/all?${good}`, keyed(revoked), 401],
      [`/registry/v2/check/all?${good}&to=${WALLETS[2]}`, keyed(), 400],
      [`/registry/v2/check/all?chainId=${READY}&to=0x12&from=${WALLETS[1]}`, keyed(), 400],
      [`/registry/v2/check/erc721?${good}&contract=${CONTRACTS[0]}`, keyed(), 400],
      [`/registry/v2/check/all?${good}&to=%zz`, keyed(), 400],
      [`/registry/v2/check/all?${good.replace(String(READY), "999")}`, keyed(), 400],
      [`/registry/v2/check/all?${good.replace(String(READY), String(SYNCING))}`, keyed(), 503],
      [`/registry/v1/check/all?chainId=${ALARMED}&delegate=${WALLETS[0]}&vault=${WALLETS[1]}`, keyed(), 503],
      [`/registry/v2/check/nope?${good}`, keyed(), 404],
      [`/registry/v2/check/all/more?${good}`, keyed(), 404],
      [`/registry/v3/check/all?${good}`, keyed(), 404],
      [`/registry/v2/check/all?${good}`, { ...keyed(), method: "HEAD" }, 200],
      [`/registry/v2/${WALLETS[0]}?chainId=${READY}`, {}, 200],
      [`/registry/v2/${WALLETS[0]}?chainId=${READY}&limit=5`, keyed(), 200],
      [`/registry/v2/${WALLETS[0]}?chainId=${READY}&cursor=x`, keyed(), 400],
      [`/registry/v1/${WALLETS[0]}?chainId=${READY}&blockNumber=1`, keyed(), 200],
      [`/registry/v2/${WALLETS[0]}?chainId=${READY}&direction=sideways`, keyed(), 400],
      [`/registry/v2/${WALLETS[0]}?chainId=${READY}&direction=incoming&direction=outgoing`, keyed(), 400],
      [`/registry/v2/${WALLETS[2]!.replace("a", "A")}?chainId=${READY}`, keyed(), 400],
      [`/registry/v2/${WALLETS[0]}?chainId=${SYNCING}`, keyed(), 503],
      [`/registry/v1/${WALLETS[0]}?chainId=${ALARMED}`, keyed(), 503],
      [`/registry/v2/${WALLETS[0]}?chainId=999`, keyed(), 400],
      [`/registry/v2/${WALLETS[0]}/?chainId=${READY}`, keyed(), 404],
      [`/registry/v2/${WALLETS[0]}`, keyed(), 400],
      [`/registry/v2/${WALLETS[0]}?chainId=${READY}`, keyed(revoked), 401],
      [`/registry/v2/${WALLETS[0]}?chainId=${READY}`, { ...keyed(), method: "HEAD" }, 200],
      [`/registry/v2/check/all?${good}`, { ...keyed(), method: "POST", body: "{}" }, 405],
      [
        `/registry/v2/check/all?${good}`,
        { method: "OPTIONS", headers: { Origin: "https://example.org", "Access-Control-Request-Method": "GET" } },
        204,
      ],
    ];
    for (const [path, init, status] of cases) {
      const got = await same(path, init);
      expect(got.status, `${init.method ?? "GET"} ${path}`).toBe(status);
    }
    expect(directly).toHaveLength(count);
  });
});
