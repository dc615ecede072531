/**
 * What each load run asks, and what each answer must be, from the seeded dataset: the API's check
 * routes over many seeded wallets (most checks built from a seeded delegation, some from wallets
 * that never delegated to each other), at the head or each at a random past block; batches of
 * mixed checks; the hot wallets' listings (whole, at a past block, in pages); the vaults hot
 * wallets may act for, and bulk listings of many small wallets; pages of the history at random
 * depths; and the baselines' requests. Pages after the first carry the cursor their previous page's
 * Link would (api/routes/cursor.ts), pinned at the newest seeded block.
 */
import { type Abi, type Address, encodeFunctionData, zeroAddress, zeroHash } from "viem";
import { toJson } from "../api/http/json";
import { encodeCursor, requestDigest } from "../api/routes/cursor";
import { v1EventRecord, v1Record, v2EventRecord, v2Record, v2VaultRecord } from "../api/routes/records";
import { registryV1Abi } from "../core/abi/registryV1";
import { registryV2Abi } from "../core/abi/registryV2";
import { type V1CheckQuery, v1CheckKeys } from "../core/v1";
import { type V2CheckQuery, v2Check } from "../core/v2";
import { Rng } from "../devkit/random";
import type { ViewCall } from "../devkit/rpc";
import { checkCall as v1CheckCall } from "../devkit/v1/checks";
import { checkCall as v2CheckCall } from "../devkit/v2/checks";
import { WRITE_RIGHTS } from "../devkit/v2/generate";
import {
  type Dataset,
  type EventLog,
  type HotWallet,
  positionOf,
  positionParts,
  TOKEN_IDS,
  type V1CheckKind,
  type V1DelegationRow,
  type V1EventRow,
  type V2CheckKind,
  type V2DelegationRow,
  type V2EventRow,
} from "./dataset";
import type { LoadRequest } from "./load";

export type Route = {
  label: string;
  requests: LoadRequest[];
  /** Why the answer to request `i` is wrong; undefined when it is right. */
  wrong(i: number, status: number, body: string, headers: Headers): string | undefined;
  /** Checks: whether request `i` must be answered true or non-zero (a run of only misses measures little). */
  positive?(i: number): boolean;
  /** Checks at the head: the registry view that answers request `i`, for anvil's eth_call of the same check. */
  view?: { registry: Registry; call(i: number): ViewCall };
  /** Listings: the delegations of each wallet listed. */
  size?: number;
};

export type Registry = "v1" | "v2";

const exactly = (expected: string) => (status: number, body: string) =>
  status === 200 && body === expected
    ? undefined
    : `expected 200 ${expected.slice(0, 200)}, got ${status} ${body.slice(0, 200)}`;

/** Whether the answer links a next page, as it must exactly when `more` remain. */
function linked(headers: Headers, more: boolean): string | undefined {
  const link = headers.get("link");
  const next = link?.includes('rel="next"') ?? false;
  if (next === more) return undefined;
  return more ? "no Link to the next page, though more remain" : `a Link past the last page: ${link}`;
}

/** Distinct queries of the vaults route per hot wallet. */
const QUERIES_PER_HOT_WALLET = 10;

/** Checks that miss: wallets of the pool that never delegated to each other, most likely. */
const MISS_SHARE = 0.25;

/**
 * Different queries a check route asks at least (so that no cache of one URL's answer decides a
 * figure): where its seeded hits are fewer, more misses, up to MAX_MISS_SHARE of its queries (true
 * answers stay common enough for verifyRoute).
 */
export const MIN_QUERIES = 1_000;
const MAX_MISS_SHARE = 1 / 3;

/** How many misses a route of `hits` seeded queries asks beside them. */
const missesBeside = (hits: number) => {
  const most = Math.min(MIN_QUERIES - hits, (hits * MAX_MISS_SHARE) / (1 - MAX_MISS_SHARE));
  return Math.round(Math.max((hits * MISS_SHARE) / (1 - MISS_SHARE), most));
};

/** The distinct requests of a route: how many different queries its load run cycles through. */
export const distinctRequests = (requests: readonly LoadRequest[]) =>
  new Set(requests.map((r) => `${r.method} ${r.path} ${r.body ?? ""}`)).size;

/** The parameters given, as text. */
const given = (params: Record<string, string | bigint | number | undefined>) =>
  Object.entries(params).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)] as const]));
export const query = (params: Parameters<typeof given>[0]) =>
  given(params)
    .map(([k, v]) => `${k}=${v}`)
    .join("&");

export const rightsParam = (rights: V2CheckQuery["rights"]) => (rights === zeroHash ? undefined : rights);

/**
 * One check kind of one version: seeded queries, misses, their parameters, their answer at a
 * block, and the registry view that answers them.
 */
type Checks<Q> = {
  version: Registry;
  kind: string;
  hits: readonly Q[];
  miss: () => Q;
  params: (q: Q) => Record<string, string | bigint | undefined>;
  /** The answer at the end of `block` (undefined: the newest seeded). */
  answer: (q: Q, block?: bigint) => unknown;
  call: (q: Q) => ViewCall;
};

function v2Checks(data: Dataset, kind: V2CheckKind, rng: Rng): Checks<V2CheckQuery> {
  return {
    version: "v2",
    kind,
    hits: data.v2Samples.get(kind)!.items,
    miss: () => ({
      kind,
      from: rng.pick(data.wallets),
      to: rng.pick(data.wallets),
      rights: zeroHash,
      contract: kind === "all" ? undefined : rng.pick(data.contracts),
      tokenId: kind === "erc721" || kind === "erc1155" ? BigInt(rng.int(TOKEN_IDS)) : undefined,
    }),
    params: ({ to, from, contract, tokenId, rights }) => ({ to, from, contract, tokenId, rights: rightsParam(rights) }),
    answer: (q, block) => v2Check(q).answer(data.v2EnabledAt(block)),
    call: (q) => v2CheckCall({ ...q, contract: q.contract ?? zeroAddress, tokenId: q.tokenId ?? 0n }),
  };
}

function v1Checks(data: Dataset, kind: V1CheckKind, rng: Rng): Checks<V1CheckQuery> {
  return {
    version: "v1",
    kind,
    hits: data.v1Samples.get(kind)!.items,
    miss: () => ({
      kind,
      vault: rng.pick(data.wallets),
      delegate: rng.pick(data.wallets),
      contract: kind === "all" ? undefined : rng.pick(data.contracts),
      tokenId: kind === "token" ? BigInt(rng.int(TOKEN_IDS)) : undefined,
    }),
    params: ({ delegate, vault, contract, tokenId }) => ({ delegate, vault, contract, tokenId }),
    answer: (q, block) => v1CheckKeys(q).some(data.v1InForceAt(block)),
    call: (q) => v1CheckCall({ ...q, contract: q.contract ?? zeroAddress, tokenId: q.tokenId ?? 0n }),
  };
}

/** Every check kind of both registries. */
const allChecks = (data: Dataset, rng: Rng): Checks<unknown>[] =>
  [
    ...(["all", "contract", "erc721", "erc20", "erc1155"] as const).map((k) => v2Checks(data, k, rng)),
    ...(["all", "contract", "token"] as const).map((k) => v1Checks(data, k, rng)),
  ] as Checks<unknown>[];

/** The seeded queries of `checks` and misses (missesBeside), shuffled, each marked as a hit (seeded to hold) or not. */
const drawn = <Q>(c: Checks<Q>, rng: Rng) =>
  rng.shuffle([
    ...c.hits.map((q) => ({ q, hit: true })),
    ...Array.from({ length: missesBeside(c.hits.length) }, () => ({ q: c.miss(), hit: false })),
  ]);

/** Random blocks drawn for a hit before settling for one where it does not hold. */
const HIT_DRAWS = 8;

/** A block among those seeded (from `first` on), at random. */
export function pastBlock(data: Dataset, rng: Rng, first = data.blocks!.first): bigint {
  return first + BigInt(rng.int(Number(data.blocks!.last - first) + 1));
}

/** Where a check is asked: at the head, at a past block, or at that block's moment (`timestamp`). */
export type CheckAt = "head" | "block" | "moment";
const AT_LABEL: Record<CheckAt, string> = { head: "", block: " at a past block", moment: " at a past moment" };

/** A GET check route: each query at the head, or at a random seeded block (by number or by its timestamp). */
function checkRoute<Q>(data: Dataset, c: Checks<Q>, rng: Rng, at: CheckAt): Route {
  const past = at !== "head";
  // A hit is asked at a random block where it held (one of a few draws), as a snapshot asks about
  // holders: random blocks alone would mostly ask before the delegation was made.
  const blockFor = (q: Q, hit: boolean) => {
    let block = pastBlock(data, rng);
    for (let draw = 1; hit && draw < HIT_DRAWS && ["false", "0"].includes(toJson(c.answer(q, block))); draw++)
      block = pastBlock(data, rng);
    return block;
  };
  const asked = drawn(c, rng).map(({ q, hit }) => ({ q, block: past ? blockFor(q, hit) : undefined }));
  const answer = (i: number) => toJson(c.answer(asked[i]!.q, asked[i]!.block));
  return {
    label: `${c.version} check ${c.kind}${AT_LABEL[at]}`,
    requests: asked.map(({ q, block }) => ({
      method: "GET",
      path:
        `/registry/${c.version}/check/${c.kind}?` +
        query({
          chainId: String(data.chainId),
          ...c.params(q),
          ...(at === "moment" ? { timestamp: data.stamps.get(block!) } : { blockNumber: block }),
        }),
    })),
    wrong: (i, status, body) => exactly(answer(i))(status, body),
    positive: (i) => !["false", "0"].includes(answer(i)),
    // eth_call asks the chain's head: the same check at a past block is not compared.
    ...(past ? {} : { view: { registry: c.version, call: (i: number) => c.call(asked[i]!.q) } }),
  };
}

/**
 * Every check route of both registries, over the seeded state, each query `at` the head or a past
 * block; with one seed, the same queries and blocks whether asked by block or by moment.
 */
export function checkRoutes(data: Dataset, seed: number, at: CheckAt = "head"): Route[] {
  const rng = new Rng(seed);
  return allChecks(data, rng).map((c) => checkRoute(data, c, rng, at));
}

/**
 * Batches of `size` checks of every kind of `version` (drawn as the check routes draw them), each
 * batch at the head or (`past`) at a random seeded block; `count` distinct batches.
 */
/**
 * Draws checks of one version as a batch carries them: each of a random kind, a seeded query or a
 * miss; `draw(n)` gives n of them, each with its batch item (as the body lists it) and its answer.
 */
function checkDraws(data: Dataset, version: "v1" | "v2", rng: Rng) {
  const kinds = allChecks(data, rng).filter((c) => c.version === version);
  // Each query's batch item is built once: a million drawn checks share a pool's objects.
  const pools = kinds.map((c) => {
    const queries = drawn(c, rng).map(({ q }) => q);
    return { c, queries, items: queries.map((q) => ({ type: c.kind, ...Object.fromEntries(given(c.params(q))) })) };
  });
  return (n: number) =>
    Array.from({ length: n }, () => {
      const { c, queries, items } = rng.pick(pools);
      const i = rng.int(queries.length);
      return { item: items[i]! as Record<string, string>, answer: (block?: bigint) => c.answer(queries[i]!, block) };
    });
}

/**
 * An airdrop's snapshot: `count` v2 checks of every kind (drawn as the batches' are) at one random
 * seeded block, as a client hands them to the typed client's checkMany (client/batch.ts).
 */
export function airdropChecks(data: Dataset, count: number, seed: number) {
  const rng = new Rng(seed);
  const block = pastBlock(data, rng);
  return { block, checks: checkDraws(data, "v2", rng)(count) };
}

export function batchRoute(
  data: Dataset,
  version: "v1" | "v2",
  options: { size: number; count: number; past: boolean },
  seed: number,
): Route {
  const rng = new Rng(seed);
  const draw = checkDraws(data, version, rng);
  const batches = Array.from({ length: options.count }, () => {
    const block = options.past ? pastBlock(data, rng) : undefined;
    return { block, items: draw(options.size) };
  });
  return {
    label: `${version} batch of ${options.size.toLocaleString("en")} checks${options.past ? " at a past block" : ""}`,
    requests: batches.map(({ block, items }) => ({
      method: "POST",
      path: `/registry/${version}/check`,
      body: toJson({
        chainId: data.chainId,
        ...(block === undefined ? {} : { blockNumber: block.toString() }),
        checks: items.map(({ item }) => item),
      }),
    })),
    wrong: (i, status, body) => {
      const { block, items } = batches[i]!;
      return exactly(toJson(items.map(({ answer }) => answer(block))))(status, body);
    },
  };
}

type Hot = { v2: HotWallet<V2DelegationRow, V2EventRow>; v1: HotWallet<V1DelegationRow, V1EventRow> };

/** A hot wallet's listed delegations: each one's record and list position. */
export function hotListing(version: "v1" | "v2", hot: Hot["v1"] | Hot["v2"]) {
  if (version === "v1")
    return (hot as Hot["v1"]).rows.map((r) => ({
      record: v1Record(r),
      at: positionOf(r.createdBlock, r.createdLogIndex),
    }));
  return (hot as Hot["v2"]).rows.map((r) => ({ record: v2Record(r), at: positionOf(r.firstBlock, r.firstLogIndex) }));
}

/** Throws unless every one of a hot wallet's delegations (`listed`) was made by the end of `block`. */
function madeBy(listed: readonly { at: number }[], block: bigint) {
  if (listed.some((d) => d.at > positionOf(block, 2 ** 20 - 1)))
    throw new Error(`a hot wallet has delegations after block ${block}`);
}

/** The hot wallets of one size. */
const hotWallets = (data: Dataset, version: "v1" | "v2", size: number) =>
  [...data.hot[version]].filter(([, hot]) => hot.size === size);

/**
 * Whole listings of `wallets`: at the head, or at block `at` (by which each must have made every
 * delegation). Each answer is built when asked: thousands of wallets' would take a while.
 */
function wholeListings(
  data: Dataset,
  version: Registry,
  wallets: readonly (readonly [Address, Hot["v1"] | Hot["v2"]])[],
  at?: bigint,
): Pick<Route, "requests" | "wrong"> {
  const listed = (i: number) => hotListing(version, wallets[i]![1]);
  if (at !== undefined) for (const i of wallets.keys()) madeBy(listed(i), at);
  return {
    requests: wallets.map(([wallet]) => ({
      method: "GET",
      path: `/registry/${version}/${wallet}?${query({ chainId: String(data.chainId), blockNumber: at })}`,
    })),
    wrong: (i, status, body) => exactly(toJson(listed(i).map((d) => d.record)))(status, body),
  };
}

/**
 * The listings of the hot wallets of one size, whole: at the head, or at the block after which the
 * dataset added no hot delegation (`data.snapshotBlock`), with history after it.
 */
export function listingRoute(data: Dataset, version: Registry, size: number, past = false): Route {
  return {
    label: `${version} listing${past ? " at a past block" : ""}, ${size.toLocaleString("en")}-delegation wallet`,
    size,
    ...wholeListings(data, version, hotWallets(data, version, size), past ? data.snapshotBlock! : undefined),
  };
}

/** The whole v2 listing of one of the small wallets the bulk listings draw from (~10 delegations each), at the head. */
export function smallListingRoute(data: Dataset): Route {
  const wallets = [...data.bulkWallets];
  const sizes = wallets.map(([, hot]) => hot.size);
  return {
    label:
      `v2 listing of a small wallet, one of ${wallets.length.toLocaleString("en")} of ` +
      `${Math.min(...sizes)}–${Math.max(...sizes)} delegations`,
    ...wholeListings(data, "v2", wallets),
  };
}

/** A block at random from the one after which the dataset added no hot delegation (`data.snapshotBlock`) on. */
export const afterHotBlock = (data: Dataset, rng: Rng) => pastBlock(data, rng, data.snapshotBlock!);

/**
 * What a hot wallet only delegated to may do, `GET /registry/v2/:wallet/vaults` of `kind` (all, or
 * erc20 naming a contract one of its vaults delegated ERC20 amounts for; with no rights, or rights
 * some delegations carry), each query at the head or (`past`) at a random block after every hot
 * delegation. Each answer is every vault for which the check to the wallet from it holds, asked of
 * the dataset one vault at a time: a missing or an extra vault is wrong.
 */
export function vaultsRoute(data: Dataset, kind: "all" | "erc20", past: boolean, seed: number): Route {
  const rng = new Rng(seed);
  const queries = [...data.hotIncoming].flatMap(([wallet, hot]) => {
    const contracts = [...new Set(hot.rows.filter((r) => r.delegationType === "ERC20").map((r) => r.contract!))];
    return Array.from({ length: QUERIES_PER_HOT_WALLET }, () => {
      const block = past ? afterHotBlock(data, rng) : undefined;
      if (block !== undefined) madeBy(hotListing("v2", hot), block);
      const query = {
        kind,
        to: wallet,
        rights: rng.chance(0.5) ? zeroHash : rng.pick(WRITE_RIGHTS),
        contract: kind === "erc20" ? rng.pick(contracts) : undefined,
      };
      return { query, block, vaults: [...new Set(hot.rows.map((r) => r.from))].sort() };
    });
  });
  const expected = (i: number) => {
    const { query, block, vaults } = queries[i]!;
    const enabled = data.v2EnabledAt(block);
    return toJson(
      vaults.flatMap((vault) => {
        const answer = v2Check({ ...query, from: vault }).answer(enabled);
        return answer === false || answer === 0n ? [] : [v2VaultRecord({ vault, answer })];
      }),
    );
  };
  const sizes = [...new Set([...data.hotIncoming.values()].map((hot) => hot.size.toLocaleString("en")))];
  return {
    label: `v2 vaults type=${kind}${past ? " at a past block" : ""}, ${sizes.join("/")}-incoming-delegation wallet`,
    requests: queries.map(({ query: { to, rights, contract }, block }) => ({
      method: "GET",
      path:
        `/registry/v2/${to}/vaults?` +
        query({ chainId: String(data.chainId), type: kind, contract, rights: rightsParam(rights), blockNumber: block }),
    })),
    wrong: (i, status, body) => exactly(expected(i))(status, body),
  };
}

/**
 * Bulk listings, `POST /registry/v2/wallets`: `count` lists of `size` small wallets drawn at random,
 * each at the head or (`past`) at a random block after every hot delegation; each answer every
 * wallet's whole listing, in order.
 */
export function bulkRoute(data: Dataset, options: { size: number; count: number; past: boolean }, seed: number): Route {
  const rng = new Rng(seed);
  const wallets = [...data.bulkWallets.keys()];
  const lists = Array.from({ length: options.count }, () => {
    const block = options.past ? afterHotBlock(data, rng) : undefined;
    const list = rng.shuffle([...wallets]).slice(0, options.size);
    if (block !== undefined) for (const wallet of list) madeBy(hotListing("v2", data.bulkWallets.get(wallet)!), block);
    return { block, list };
  });
  return {
    label:
      `v2 bulk listing of ${options.size.toLocaleString("en")} wallets of ~10 delegations` +
      `${options.past ? " at a past block" : ""}`,
    requests: lists.map(({ block, list }) => ({
      method: "POST",
      path: "/registry/v2/wallets",
      body: toJson({
        chainId: data.chainId,
        ...(block === undefined ? {} : { blockNumber: block.toString() }),
        wallets: list,
      }),
    })),
    // Built when asked: a list's answer is megabytes.
    wrong: (i, status, body) => {
      const listings = lists[i]!.list.map((w) => hotListing("v2", data.bulkWallets.get(w)!).map((d) => d.record));
      return exactly(toJson(listings))(status, body);
    },
  };
}

/** The query string of page `after` (a position; undefined: the first page) of `path`, as its Link gives it. */
function pageQuery(data: Dataset, path: string, limit: number, after: number | undefined): string {
  const params: [string, string][] = [["chainId", String(data.chainId)]];
  const cursor =
    after === undefined
      ? undefined
      : encodeCursor(requestDigest(path, params), { block: data.blocks!.last, after: positionParts(after) });
  return query({ ...Object.fromEntries(params), limit: String(limit), cursor });
}

/**
 * The hot wallets of one size read in pages of `limit`: every page of each, as a client following
 * Link asks them (each request grouped by its page's number, for each page's latency).
 */
export function listingPagesRoute(data: Dataset, version: "v1" | "v2", size: number, limit: number): Route {
  const pages = hotWallets(data, version, size).flatMap(([wallet, hot]) => {
    const listed = hotListing(version, hot);
    const path = `/registry/${version}/${wallet}`;
    return Array.from({ length: Math.ceil(size / limit) }, (_, k) => ({
      request: {
        method: "GET" as const,
        path: `${path}?${pageQuery(data, path, limit, k === 0 ? undefined : listed[k * limit - 1]!.at)}`,
        group: `page ${k + 1}`,
      },
      expected: toJson(listed.slice(k * limit, (k + 1) * limit).map((d) => d.record)),
      more: (k + 1) * limit < size,
    }));
  });
  return {
    label: `${version} ${size.toLocaleString("en")}-delegation wallet in pages of ${limit.toLocaleString("en")}`,
    size,
    requests: pages.map((p) => p.request),
    wrong: (i, status, body, headers) => exactly(pages[i]!.expected)(status, body) ?? linked(headers, pages[i]!.more),
  };
}

/** A page's records, each as written. */
const records = (body: string) =>
  body
    .slice(2, -2)
    .split("},{")
    .map((r) => `{${r}}`);

const eventRecord = (version: "v1" | "v2", row: V2EventRow | V1EventRow) =>
  toJson(version === "v2" ? v2EventRecord(row as V2EventRow) : v1EventRecord(row as V1EventRow));

/**
 * Why a page of `limit` history events from event `start` of `log` is wrong: each event at its place
 * (block, log index) and in order, those whose whole row is `known` exactly as the dataset made
 * them, and a Link exactly when more remain.
 */
export function historyPageWrong<E extends V2EventRow | V1EventRow>(
  version: "v1" | "v2",
  log: EventLog<E>,
  start: number,
  limit: number,
  known: (index: number) => E | undefined,
  page: { status: number; body: string; headers: Headers },
): string | undefined {
  if (page.status !== 200) return `expected 200, got ${page.status} ${page.body.slice(0, 200)}`;
  const events = JSON.parse(page.body) as { blockNumber: number; logIndex: number }[];
  const expected = log.positions.slice(start, start + limit);
  if (events.length !== expected.length) return `expected ${expected.length} events, got ${events.length}`;
  const misplaced = events.findIndex((e, k) => positionOf(e.blockNumber, e.logIndex) !== expected[k]);
  if (misplaced !== -1) {
    const want = positionParts(expected[misplaced]!);
    return (
      `event ${start + misplaced} is at block ${events[misplaced]!.blockNumber} log ${events[misplaced]!.logIndex}, ` +
      `expected block ${want.block} log ${want.logIndex}`
    );
  }
  let written: string[] | undefined;
  for (let k = 0; k < events.length; k++) {
    const row = known(start + k);
    if (row === undefined) continue;
    written ??= records(page.body);
    if (written[k] !== eventRecord(version, row))
      return `event ${start + k}: expected ${eventRecord(version, row)}, got ${written[k]}`;
  }
  return linked(page.headers, start + limit < log.positions.length);
}

/**
 * Pages of `limit` events of the chain-wide history, each starting at a random depth: at each event
 * of the dataset's uniform sample, which the page must begin with.
 */
export function historyRoute(data: Dataset, version: "v1" | "v2", limit: number): Route {
  const log = data.events[version] as EventLog<V2EventRow | V1EventRow>;
  const starts = log.sample.items;
  const path = `/registry/${version}/history`;
  return {
    label: `${version} history, page of ${limit} at a random depth`,
    requests: starts.map(({ index }) => ({
      method: "GET",
      path: `${path}?${pageQuery(data, path, limit, index === 0 ? undefined : log.positions[index - 1])}`,
    })),
    wrong: (i, status, body, headers) => {
      const { index, row } = starts[i]!;
      return historyPageWrong(version, log, index, limit, (k) => (k === index ? row : undefined), {
        status,
        body,
        headers,
      });
    },
  };
}

/** Pages of `limit` events of a hot wallet's history (of the largest), each starting at a random event of it. */
export function walletHistoryRoute(data: Dataset, version: "v1" | "v2", limit: number, seed: number): Route {
  const rng = new Rng(seed);
  const [wallet, hot] = [...data.hot[version]].reduce((a, b) => (b[1].size > a[1].size ? b : a));
  const events = (hot.events as (V2EventRow | V1EventRow)[]).map((row) => ({
    at: positionOf(row.blockNumber, row.logIndex),
    record: eventRecord(version, row),
  }));
  const path = `/registry/${version}/${wallet}/history`;
  const starts = Array.from({ length: Math.min(events.length, 1_000) }, () => rng.int(events.length));
  return {
    label: `${version} ${hot.size.toLocaleString("en")}-event wallet history, page of ${limit} at a random depth`,
    requests: starts.map((j) => ({
      method: "GET",
      path: `${path}?${pageQuery(data, path, limit, j === 0 ? undefined : events[j - 1]!.at)}`,
    })),
    wrong: (i, status, body, headers) => {
      const j = starts[i]!;
      const page = events.slice(j, j + limit);
      return (
        exactly(`[${page.map((e) => e.record).join(",")}]`)(status, body) ?? linked(headers, j + limit < events.length)
      );
    },
  };
}

/**
 * v2 check all on a chain whose delegations were written through the registry: each of `queries`
 * answered as the contract answered it (`answers`, by eth_call).
 */
export function chainCheckAllRoute(
  label: string,
  chainId: number,
  queries: readonly { from: Address; to: Address; rights: `0x${string}` }[],
  answers: readonly boolean[],
): Route {
  return {
    label,
    requests: queries.map(({ from, to, rights }) => ({
      method: "GET",
      path: `/registry/v2/check/all?${query({ chainId, to, from, rights: rightsParam(rights) })}`,
    })),
    wrong: (i, status, body) => exactly(String(answers[i]))(status, body),
    positive: (i) => answers[i]!,
  };
}

/** (a) The raw node:http hello: the ceiling of any node:http server here. */
export const helloRoute: Route = {
  label: "(a) raw node:http hello",
  requests: [{ method: "GET", path: "/" }],
  wrong: (_i, status, body) => exactly("hello")(status, body),
};

/**
 * (b) What a user does instead of asking the API: anvil's eth_call of the registry view that
 * answers each of the check route's requests (`route.view`), to the same registry version at
 * `registries`. The chain holds none of the seeded delegations (they went into the database
 * directly): every answer is false, or 0.
 */
export function ethCallRoute(registries: Record<Registry, Address>, route: Route): Route {
  const view = route.view;
  if (view === undefined) throw new Error(`${route.label}: no registry view answers it`);
  const abi: Abi = view.registry === "v2" ? registryV2Abi : registryV1Abi;
  const requests = route.requests.map(
    (_, i): LoadRequest => ({
      method: "POST",
      path: "/",
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "eth_call",
        params: [{ to: registries[view.registry], data: encodeFunctionData({ abi, ...view.call(i) }) }, "latest"],
      }),
    }),
  );
  return {
    label: `(b) anvil eth_call ${view.registry} ${view.call(0).functionName}`,
    requests,
    wrong: (_i, status, body) =>
      status === 200 && (JSON.parse(body) as { result?: string }).result === zeroHash
        ? undefined
        : `expected the result ${zeroHash}, got ${status} ${body.slice(0, 200)}`,
  };
}
