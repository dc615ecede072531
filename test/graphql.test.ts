/**
 * GraphQL at /graphql on `npm start` (docs/graphql.md), against the real registries on anvil:
 *
 * 1. Only requests with a valid API key are served: keyless ones (POST and GET), an unknown key and
 *    a revoked key are 401 invalid_api_key, problem+json.
 * 2. A wallet's events by GraphQL (the page's WalletHistory query for v2; v1Events by vault,
 *    delegate or revokedDelegate for v1), page after page, equal its REST history
 *    (GET /registry/{v2,v1}/:wallet/history) event for event, every field; the whole chain's too,
 *    and both equal the registries' own logs. Seeded random writes of every kind, half backfilled,
 *    half indexed live.
 * 3. The delegations a vault grants, in force (the page's Granted query), equal the `from` = vault
 *    records of its REST listing, hashes too, in the contract's order once sorted as the page says.
 * 4. Every v2Delegation row (state, first enabling event, last event's block, event count) is what
 *    its delegation's events in the registry's own logs amount to.
 * 5. A query past Ponder's limits (tokens, depth, aliases, rows per page) is refused with a GraphQL
 *    error naming the limit, never a 500; a query at each limit is answered.
 *
 * Reproduce a failure with the seed it prints: SEED=<n> npx vitest run test/graphql.test.ts
 */
import { type Address, getAddress, toHex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { type Answer, ask, indexedBlock } from "../devkit/ask";
import { type Mismatch, report } from "../devkit/compare";
import { abis, installRegistries } from "../devkit/oracle";
import { waitFor } from "../devkit/processes";
import { chooseSeed, Rng, spellAddress } from "../devkit/random";
import { rpc } from "../devkit/rpc";
import type { Receipt } from "../devkit/send";
import { type Service, startService } from "../devkit/service";
import { ponderFinalityDepth } from "../ponder/ponder-0.16.10";
import { expectProblem } from "./helpers/answers";
import type { ApiRecord } from "./helpers/compare-listings";
import { eventRecords, normalizeEvent, registryLogs, V2_TYPE } from "./helpers/event-records";
import { canonical, parseJsonExact } from "./helpers/json";
import { followPages } from "./helpers/pages";
import { docExample } from "./helpers/readme";
import { SeededWrites } from "./helpers/seeded-writes";
import { decodeEvents } from "./helpers/v2/events";

const SEED = chooseSeed();
console.log(`[graphql] SEED=${SEED} (rerun with SEED=${SEED} npx vitest run test/graphql.test.ts)`);
const tag = (text: string) => `[SEED=${SEED}] ${text}`;

const CHAIN_ID = 31337;
/** Ponder's finality depth for the local chain. */
const FINALITY = BigInt(ponderFinalityDepth(31337));
/** Random transactions before the service starts (its backfill), and after (indexed live). */
const BACKFILL = { v2: 220, v1: 140, walletRevokes: 10 };
const LIVE = { v2: 100, v1: 60, walletRevokes: 5 };

type Version = "v1" | "v2";

const rng = new Rng((SEED ^ 0x5bd1e995) >>> 0);
let anvil: Anvil;
let service: Service;
let writes: SeededWrites;
const registries = {} as Record<Version, Address>;

/** A GraphQL request's answer: the HTTP answer, and its body when it is JSON. */
type GraphqlAnswer = Answer & { body: { data?: Record<string, unknown> | null; errors?: { message: string }[] } };

/** POSTs a GraphQL query to the service, with the test's key unless `headers` says otherwise. */
async function graphql(
  query: string,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = service.headers,
): Promise<GraphqlAnswer> {
  const a = await ask(service.url, "/graphql", {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify({ query, variables }),
  });
  const json = (a.headers.get("content-type") ?? "").startsWith("application/json");
  return { ...a, body: json ? JSON.parse(a.text) : {} };
}

/** A page of a GraphQL list field. */
type Page = { items: Record<string, unknown>[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };

/**
 * Every row of list field `field`, following `endCursor` while `hasNextPage` (the query takes
 * `$after`); each page must be a 200 with data and no errors.
 */
async function allRows(field: string, query: string, variables: Record<string, unknown>): Promise<ApiRecord[]> {
  const rows: ApiRecord[] = [];
  let after: string | null = null;
  for (let page = 0; ; page++) {
    const a = await graphql(query, { ...variables, after });
    const where = tag(`${field} page ${page} of ${JSON.stringify(variables)}: ${a.status} ${a.text.slice(0, 500)}`);
    expect(a.status, where).toBe(200);
    expect(a.body.errors, where).toBeUndefined();
    const got = a.body.data?.[field] as Page;
    rows.push(...got.items);
    if (!got.pageInfo.hasNextPage) return rows;
    expect(got.items.length, where).toBeGreaterThan(0);
    after = got.pageInfo.endCursor;
  }
}

const big = (v: unknown) => (v === null ? null : BigInt(v as string | number));
const address = (v: unknown) => (v === null ? null : getAddress(v as string));

/** A v2Event row as the REST history's record (docs/api.md, "History"). */
function v2Record(g: ApiRecord): ApiRecord {
  const kind = g.kind as string;
  return {
    blockNumber: big(g.blockNumber),
    blockTimestamp: big(g.blockTimestamp),
    transactionHash: g.transactionHash,
    logIndex: big(g.logIndex),
    event: kind,
    delegationType: V2_TYPE[kind] ?? `unknown kind ${kind}`,
    from: address(g.from),
    to: address(g.to),
    contract: address(g.contract),
    tokenId: big(g.tokenId),
    rights: g.rights,
    // ERC20 and ERC1155 events carry an amount, not enable: REST's enable is amount > 0.
    enable: g.enable ?? BigInt(g.amount as string) > 0n,
    amount: big(g.amount),
    hash: g.hash,
  };
}

/** A v1Event row as the REST history's record. */
function v1Record(g: ApiRecord): ApiRecord {
  return {
    blockNumber: big(g.blockNumber),
    blockTimestamp: big(g.blockTimestamp),
    transactionHash: g.transactionHash,
    logIndex: big(g.logIndex),
    event: g.kind,
    vault: address(g.vault),
    delegate: address(g.delegate),
    contract: address(g.contract),
    tokenId: big(g.tokenId),
    value: g.value,
    revokedDelegate: address(g.revokedDelegate),
  };
}

const EVENT_FIELDS = "blockNumber blockTimestamp transactionHash logIndex kind";
const V2_FIELDS = `${EVENT_FIELDS} from to contract tokenId rights amount enable hash`;
const V1_FIELDS = `${EVENT_FIELDS} vault delegate contract tokenId value revokedDelegate`;

/** A wallet's v1 events, as docs/graphql.md says to ask for them (vault, delegate or revokedDelegate). */
const V1_WALLET_HISTORY = `query V1WalletHistory($chainId: Int!, $wallet: String!, $limit: Int, $after: String) {
  v1Events(
    where: { chainId: $chainId, OR: [{ vault: $wallet }, { delegate: $wallet }, { revokedDelegate: $wallet }] }
    orderBy: "blockNumber"
    limit: $limit
    after: $after
  ) {
    items { ${V1_FIELDS} }
    pageInfo { hasNextPage endCursor }
  }
}`;

/** A version's whole history on the chain, in pages of `$limit`. */
/** A chain's events; `upTo`: those at or before the moment `$at` (docs/graphql.md). */
const chainHistoryQuery = (version: Version, upTo = false) => `query ChainHistory($chainId: Int!, $limit: Int, \
$after: String${upTo ? ", $at: BigInt!" : ""}) {
  ${version}Events(where: { chainId: $chainId${upTo ? ", blockTimestamp_lte: $at" : ""} }, orderBy: "blockNumber", \
limit: $limit, after: $after) {
    items { ${version === "v2" ? V2_FIELDS : V1_FIELDS} }
    pageInfo { hasNextPage endCursor }
  }
}`;

/** A page size for REST and GraphQL pages: small ones, so that a wallet's events take several. */
const randomLimit = () =>
  rng.weighted<number>([
    [4, 1 + rng.int(10)],
    [4, 10 + rng.int(60)],
    [1, 1000],
  ]);

/** A REST history, followed page by page: its items, and the block every page answered at. */
async function restHistory(path: string): Promise<{ items: ApiRecord[]; block: bigint | undefined }> {
  const paged = await followPages(() => service.url, `${path}${path.includes("?") ? "&" : "?"}limit=${randomLimit()}`, {
    headers: service.headers,
  });
  expect(paged.problems, tag(`the pages of ${path}`)).toEqual([]);
  return { items: paged.items as ApiRecord[], block: paged.block };
}

/** Compares two lists of records item by item, as `normalize` makes them; a mismatch names the first difference. */
function sameList(
  mismatches: Mismatch[],
  what: string,
  got: ApiRecord[],
  want: ApiRecord[],
  normalize: (r: ApiRecord) => ApiRecord = normalizeEvent,
): void {
  const g = got.map((r) => canonical(normalize(r)));
  const w = want.map((r) => canonical(normalize(r)));
  if (g.join("\n") === w.join("\n")) return;
  const at = Math.max(
    0,
    g.findIndex((x, i) => x !== w[i]),
  );
  mismatches.push({
    what: `${what} (${w.length} expected, ${g.length} got; first difference at #${at})`,
    query: what,
    expected: w[at] ?? "(end of list)",
    got: g[at] ?? "(end of list)",
  });
}

beforeAll(async () => {
  anvil = await startAnvil({ chainId: CHAIN_ID });
  const installed = await installRegistries(anvil.url);
  registries.v1 = installed.v1;
  registries.v2 = installed.v2;
  writes = await SeededWrites.on(anvil.url, SEED, installed);
  await writes.v2(BACKFILL.v2);
  await writes.v1(BACKFILL.v1, BACKFILL.walletRevokes);
  // Past Ponder's finality depth: those writes are its backfill, not its live sync.
  await rpc(anvil.url, "anvil_mine", [toHex(FINALITY + 5n)]);
  const t0 = Date.now();
  service = await startService({ rpc: { [CHAIN_ID]: anvil.url } });
  console.log(`[graphql] service ready in ${Date.now() - t0} ms`);
  await writes.v2(LIVE.v2);
  await writes.v1(LIVE.v1, LIVE.walletRevokes);
  await waitFor(
    `the service to index block ${writes.lastWriteBlock}`,
    async () => {
      const at = await indexedBlock({ serviceUrl: service.url, chainId: CHAIN_ID, headers: service.headers });
      return at !== undefined && at >= writes.lastWriteBlock ? true : undefined;
    },
    180_000,
  );
  console.log(`[graphql] writes up to block ${writes.lastWriteBlock} indexed`);
});

afterAll(async () => {
  await service?.stop();
  await anvil?.stop();
});

describe("GraphQL", () => {
  const simple = "{ v2Events(limit: 1) { items { id } } }";

  it("serves only requests with a valid API key: keyless, unknown and revoked keys are 401", async () => {
    expectProblem(await graphql(simple, {}, {}), 401, "invalid_api_key", null);
    const page = await ask(service.url, "/graphql");
    expectProblem(page, 401, "invalid_api_key", null);
    expectProblem(await graphql(simple, {}, { "X-API-KEY": "dlk_000000000000_unknown" }), 401, "invalid_api_key", null);

    const admin = { Authorization: `Bearer ${service.adminToken}`, "Content-Type": "application/json" };
    const created = await ask(service.url, "/admin/keys", {
      method: "POST",
      headers: admin,
      body: JSON.stringify({ label: "revoked later" }),
    });
    expect(created.status, created.text).toBe(201);
    const { id, key } = JSON.parse(created.text) as { id: string; key: string };
    const served = await graphql(simple, {}, { "X-API-KEY": key });
    expect(served.status, served.text).toBe(200);
    expect(served.body.data?.v2Events, served.text).toEqual({ items: [expect.any(Object)] });
    expect((await ask(service.url, `/admin/keys/${id}`, { method: "DELETE", headers: admin })).status).toBe(200);
    expectProblem(await graphql(simple, {}, { "X-API-KEY": key }), 401, "invalid_api_key", null);

    const ide = await ask(service.url, "/graphql", { headers: service.headers });
    expect(ide.status, "GET with a key: Ponder's GraphiQL page").toBe(200);
    expect(ide.headers.get("content-type")).toMatch(/^text\/html/);
  });

  it("a wallet's events, and the chain's, equal the REST history and the registries' logs, v2 and v1", async () => {
    const mismatches: Mismatch[] = [];
    const walletHistory = {
      v2: docExample("docs/graphql.md", "graphql", "query WalletHistory("),
      v1: V1_WALLET_HISTORY,
    };
    const toRecord = { v2: v2Record, v1: v1Record };
    const counts = { v2: 0, v1: 0 };
    const kinds = { v2: new Set<unknown>(), v1: new Set<unknown>() };
    for (const version of ["v2", "v1"] as const) {
      const logs = await registryLogs(anvil.url, registries[version], 0n, writes.lastWriteBlock);
      const revoked = version === "v1" ? writes.revoked() : undefined;
      const chain = await eventRecords(anvil.url, version, abis[version], logs, revoked);
      const rest = await restHistory(`/registry/${version}/history?chainId=${CHAIN_ID}`);
      const gql = await allRows(`${version}Events`, chainHistoryQuery(version), {
        chainId: CHAIN_ID,
        limit: randomLimit(),
      });
      sameList(mismatches, `${version} chain history: REST and the logs`, rest.items, chain);
      sameList(mismatches, `${version} chain history: GraphQL and REST`, gql.map(toRecord[version]), rest.items);
      // Up to a moment: an event's timestamp, so that the events of its block and before are listed.
      const at = chain[rng.int(chain.length)]!.blockTimestamp as bigint;
      const upTo = await allRows(`${version}Events`, chainHistoryQuery(version, true), {
        chainId: CHAIN_ID,
        limit: randomLimit(),
        at: String(at),
      });
      const before = chain.filter((r) => (r.blockTimestamp as bigint) <= at);
      sameList(mismatches, `${version} chain history up to ${at}`, upTo.map(toRecord[version]), before);
      expect(before.length < chain.length || at === chain.at(-1)!.blockTimestamp, tag("a moment inside")).toBe(true);
      for (const r of chain) kinds[version].add(r.event);

      for (const wallet of writes.wallets()[version]) {
        const restWallet = await restHistory(
          `/registry/${version}/${spellAddress(rng, wallet)}/history?chainId=${CHAIN_ID}`,
        );
        expect(restWallet.block! >= writes.lastWriteBlock, tag("REST answers past the last write")).toBe(true);
        // The documented query has its own page size; the v1 one takes a random one.
        const rows = await allRows(`${version}Events`, walletHistory[version], {
          chainId: CHAIN_ID,
          wallet: spellAddress(rng, wallet),
          ...(version === "v1" ? { limit: randomLimit() } : {}),
        });
        sameList(
          mismatches,
          `${version} history of ${wallet}: GraphQL and REST`,
          rows.map(toRecord[version]),
          restWallet.items,
        );
        counts[version] += rows.length;
      }
    }
    console.log(
      `[graphql] wallet events compared: ${JSON.stringify(counts)}; kinds: v2 ${[...kinds.v2]}, v1 ${[...kinds.v1]}`,
    );
    expect(mismatches, report(SEED, "GraphQL history", mismatches)).toEqual([]);
    // Not a comparison of nothing: every kind of event of both registries, many of each wallet's.
    expect(kinds.v2.size, tag("v2 event kinds written")).toBe(5);
    expect(kinds.v1.size, tag("v1 event kinds written")).toBe(5);
    expect(counts.v2, tag("v2 wallet events compared")).toBeGreaterThan(500);
    expect(counts.v1, tag("v1 wallet events compared")).toBeGreaterThan(300);
  });

  it("the delegations a vault grants, in force, equal its REST listing's", async () => {
    const mismatches: Mismatch[] = [];
    const granted = docExample("docs/graphql.md", "graphql", "query Granted(");
    let compared = 0;
    for (const vault of writes.wallets().v2) {
      const a = await graphql(granted, { chainId: CHAIN_ID, vault: spellAddress(rng, vault) });
      expect(a.status, a.text).toBe(200);
      expect(a.body.errors, a.text).toBeUndefined();
      const page = a.body.data?.v2Delegations as { totalCount: number; items: ApiRecord[] };
      expect(page.totalCount, tag(`${vault}: totalCount counts the items`)).toBe(page.items.length);
      // The contract's order, as docs/graphql.md says to sort.
      const sorted = [...page.items].sort((x, y) => {
        const [bx, by] = [BigInt(x.firstBlock as string), BigInt(y.firstBlock as string)];
        return bx !== by ? (bx < by ? -1 : 1) : (x.firstLogIndex as number) - (y.firstLogIndex as number);
      });
      const got = sorted.map((g) => ({
        delegationType: g.delegationType,
        from: getAddress(vault),
        to: address(g.to),
        contract: address(g.contract),
        tokenId: big(g.tokenId),
        rights: g.rights,
        amount: big(g.amount),
        hash: g.hash,
      }));
      const listing = await ask(service.url, `/registry/v2/${vault}?chainId=${CHAIN_ID}`, { headers: service.headers });
      expect(listing.status, listing.text).toBe(200);
      const want = (parseJsonExact(listing.text) as ApiRecord[])
        .filter((r) => String(r.from).toLowerCase() === vault)
        .map(({ type: _, ...r }) => ({ ...r, rights: String(r.rights).toLowerCase() }));
      sameList(mismatches, `v2 delegations granted by ${vault}`, got, want, (r) => r);
      compared += want.length;
    }
    console.log(`[graphql] delegations in force compared: ${compared}`);
    expect(mismatches, report(SEED, "GraphQL delegations in force", mismatches)).toEqual([]);
    expect(compared, tag("delegations in force compared")).toBeGreaterThan(50);
  });

  it("each v2Delegation row is what its delegation's events on chain amount to", async () => {
    // From the registry's own logs, by the contract's rules: a revoke of what was never enabled
    // writes nothing; the first enabling event fixes the list position; every later event counts.
    const want = new Map<string, ApiRecord>();
    let ignoredRevokes = 0;
    const logs = await registryLogs(anvil.url, registries.v2, 0n, writes.lastWriteBlock);
    const events = decodeEvents(abis.v2, registries.v2, [{ logs } as unknown as Receipt]);
    for (const { type, args, enabling, block, logIndex } of events) {
      const key = [type, args.from, args.to, args.contract_ ?? null, args.tokenId ?? null, args.rights].join(" ");
      const prev = want.get(key);
      if (prev === undefined && !enabling) {
        ignoredRevokes++;
        continue;
      }
      want.set(key, {
        key,
        enabled: enabling,
        amount: args.amount === undefined ? null : enabling ? args.amount : 0n,
        firstBlock: prev?.firstBlock ?? block,
        firstLogIndex: prev?.firstLogIndex ?? logIndex,
        updatedBlock: block,
        eventCount: ((prev?.eventCount as number | undefined) ?? 0) + 1,
      });
    }
    const rows = await allRows(
      "v2Delegations",
      `query Delegations($chainId: Int!, $after: String) {
        v2Delegations(where: { chainId: $chainId }, limit: 1000, after: $after) {
          items {
            delegationType from to contract tokenId rights
            enabled amount firstBlock firstLogIndex updatedBlock eventCount
          }
          pageInfo { hasNextPage endCursor }
        }
      }`,
      { chainId: CHAIN_ID },
    );
    const got = rows.map((r) => ({
      key: [r.delegationType, address(r.from), address(r.to), address(r.contract), big(r.tokenId), r.rights].join(" "),
      enabled: r.enabled,
      amount: big(r.amount),
      firstBlock: big(r.firstBlock),
      firstLogIndex: r.firstLogIndex,
      updatedBlock: big(r.updatedBlock),
      eventCount: r.eventCount,
    }));
    const byKey = (a: ApiRecord, b: ApiRecord) => (String(a.key) < String(b.key) ? -1 : 1);
    const mismatches: Mismatch[] = [];
    sameList(mismatches, "v2Delegation rows", got.sort(byKey), [...want.values()].sort(byKey), (r) => r);
    expect(mismatches, report(SEED, "v2Delegation rows", mismatches)).toEqual([]);
    // Not a comparison of what never changed: rows revoked, rows written again, revokes of nothing.
    const counts = { rows: got.length, revoked: got.filter((r) => !r.enabled).length, ignoredRevokes };
    const rewritten = got.filter((r) => (r.eventCount as number) > 1).length;
    console.log(`[graphql] v2Delegation rows compared: ${JSON.stringify({ ...counts, rewritten })}`);
    expect(counts.revoked, tag("revoked rows")).toBeGreaterThan(0);
    expect(rewritten, tag("rows written by more than one event")).toBeGreaterThan(0);
    expect(ignoredRevokes, tag("revokes of what was never enabled")).toBeGreaterThan(0);
  });

  it("past Ponder's limits a query is refused, naming the limit (no 500); at the limit it is answered", async () => {
    const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: _meta { status }`).join(" ")} }`;
    // __schema, types, n times ofType, name: a depth of n + 3.
    const depth = (n: number) => `{ __schema { types { ${"ofType { ".repeat(n - 3)}name${" }".repeat(n - 3)} } } }`;
    // A field repeated (the same field merges), between two braces.
    const tokens = (n: number) => `{ ${"__typename ".repeat(n - 2)}}`;
    const rows = (limit: number) => `{ v2Events(limit: ${limit}) { items { id } } }`;
    const cases: [string, string, string][] = [
      ["31 aliases", aliases(31), "Syntax Error: Aliases limit of 30 exceeded, found 31."],
      ["depth 101", depth(101), "Syntax Error: Query depth limit of 100 exceeded, found 101."],
      ["1001 tokens", tokens(1001), "Syntax Error: Token limit of 1000 exceeded."],
      ["1001 rows a page", rows(1001), "Invalid limit. Got 1001, expected <=1000."],
    ];
    for (const [what, query, message] of cases) {
      const a = await graphql(query);
      expect(a.status, `${what}: GraphQL answers its errors with 200, never a 500: ${a.text}`).toBe(200);
      expect(a.headers.get("content-type"), what).toMatch(/^application\/json/);
      expect(
        a.body.errors?.map((e) => e.message),
        what,
      ).toEqual([message]);
      expect(a.body.data ?? null, `${what}: nothing answered`).toBeNull();
    }
    for (const [what, query] of [
      ["30 aliases", aliases(30)],
      ["depth 100", depth(100)],
      ["1000 tokens", tokens(1000)],
      ["1000 rows a page", rows(1000)],
    ]) {
      const a = await graphql(query!);
      expect(a.status, `${what}: ${a.text.slice(0, 300)}`).toBe(200);
      expect(a.body.errors, `${what}: ${a.text.slice(0, 300)}`).toBeUndefined();
      expect(a.body.data, what).toBeTruthy();
    }
  });
});
