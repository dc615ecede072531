/**
 * The route table against what derives from it: the app serves exactly its routes, in its order;
 * the OpenAPI document describes exactly them; the fast path answers exactly those marked fast; a
 * keyless client pays what each declares. Each check first fails on a mutation it must catch (a
 * route served but not declared, declared but answered by nothing, marked fast but beyond the fast
 * path, left out of the document). Each GET route reads exactly the parameters it lists, and
 * requires those it marks required. Last, a route added to the table alone is served, allowed,
 * documented, typed and answered on the fast path: one declaration is enough.
 */
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { getRequestListener } from "@hono/node-server";
import type { Hono } from "hono";
import openapiTS, { astToString } from "openapi-typescript";
import { afterAll, describe, expect, it, vi } from "vitest";
import type { Access } from "../access/open";
import type { createApp as CreateApp } from "../app";
import { FeedHub } from "../feed/hub";
import type { ChangeLog } from "../feed/log";
import type { openApiDocument as OpenApiDocument } from "../openapi/document";
import { PARAMETERS, type ParameterKey } from "../openapi/parameters";
import type { HistoryStore } from "../store/history-store";
import type { Store } from "../store/store";
import { NO_ALARMS } from "../watch/chain-alarms";
import type { withDirectAnswers as WithDirectAnswers } from "./direct-answers";
import type { AppOptions, Env } from "./env";
import { ListingCache } from "./listing-cache";
import { honoPath, type Route } from "./table";

const CHAIN = 31337;
const wallet = (n: number) => `0x${n.toString(16).padStart(40, "0")}`;
/** What @hono/node-server hands the app: the client's socket, whose address the keyless limit counts. */
const SOCKET = { incoming: { socket: { remoteAddress: "127.0.0.1", remotePort: 50000, remoteFamily: "IPv4" } } };

/**
 * `app` on node:http, as the service serves it (the feed's stream is written to Node's response):
 * `request` gives an answer's status, and its text when `read` (the body is cancelled otherwise).
 */
async function listen(app: Hono<Env>) {
  const server = createServer(getRequestListener(app.fetch));
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    async request(path: string, init: RequestInit, read: (status: number) => boolean) {
      const res = await fetch(`${origin}${path}`, init);
      if (read(res.status)) return { status: res.status, text: await res.text() };
      await res.body?.cancel();
      return { status: res.status, text: "" };
    },
    close() {
      server.closeAllConnections();
      return new Promise((ok) => server.close(ok));
    },
  };
}

/** `app`'s answer to one request over node:http (`listen`). */
async function overHttp(
  app: Hono<Env>,
  path: string,
  init: RequestInit,
  read: (status: number) => boolean,
): Promise<{ status: number; text: string }> {
  const served = await listen(app);
  try {
    return await served.request(path, init, read);
  } finally {
    await served.close();
  }
}

/** A valid text for each parameter (the vaults' types: those that read every check parameter). */
const VALID: Record<ParameterKey, string> = {
  chainId: String(CHAIN),
  rpcChainId: String(CHAIN),
  chains: String(CHAIN),
  blockNumber: "50",
  timestamp: "1700000000",
  fromBlock: "1",
  toBlock: "60",
  to: wallet(1),
  from: wallet(2),
  delegate: wallet(1),
  vault: wallet(2),
  contract: wallet(3),
  tokenId: "7",
  listingTokenId: "7",
  rights: "",
  limit: "10",
  cursor: "",
  feedCursor: "0",
  lastEventId: "0",
  feedStart: "0",
  feedChains: String(CHAIN),
  feedVersion: "v2",
  feedWallet: wallet(4),
  role: "from",
  feedType: "DelegateAll,ERC721",
  delivery: "instant",
  wallet: wallet(4),
  hotWallet: wallet(4),
  direction: "incoming",
  v2VaultType: "erc1155",
  v1VaultType: "token",
  hash: `0x${"ab".repeat(32)}`,
  contractPath: wallet(3),
  keyId: "k1",
  webhookId: "wh_0000000000000001",
};

/** A text every parameter's parser refuses. */
const INVALID = "0xnot-a-value";

/** What a route's request leaves out (`left`), gives INVALID (`bad`), and adds, INVALID (`extra`). */
type Asked = { left?: readonly ParameterKey[]; bad?: ParameterKey; extra?: ParameterKey };

/**
 * A route's request with every parameter valid but as `asked`. A cursor and `timestamp` (which
 * `blockNumber` excludes) are left out unless `bad`.
 */
function requestOf(route: Route, { left = [], bad, extra }: Asked = {}) {
  let path = route.path;
  const headers: Record<string, string> = {};
  const query = new URLSearchParams();
  for (const key of [...route.parameters, ...(extra ? [extra] : [])]) {
    if (left.includes(key)) continue;
    const { name, in: where } = PARAMETERS[key];
    const value = key === bad || key === extra ? INVALID : VALID[key];
    if (where === "path") path = path.replace(`{${name}}`, value);
    else if (where === "header") headers[name] = value;
    else if ((key !== "cursor" && key !== "timestamp") || key === bad) query.set(name, value);
  }
  return { url: `${path}?${query}`, headers };
}

/** A route's path and query, every parameter valid but those `left` out (requestOf). */
const pathOf = (route: Route, left: ParameterKey[] = []) => requestOf(route, { left }).url;

/** A delegation, found by any hash asked. */
const DELEGATION = {
  hash: VALID.hash,
  delegationType: "ALL",
  from: wallet(1),
  to: wallet(2),
  contract: null,
  tokenId: null,
  rights: `0x${"0".repeat(64)}`,
  amount: null,
};
/** A chain indexed to block 100 with nothing in it but DELEGATION: every other read answers, empty. */
const view = <T>(data: T) => ({ indexedBlock: 100n, ready: true, indexedTimestamp: 0, data });
const STORE = {
  v2Enabled: async () => view(new Map()),
  v1InForce: async () => view([]),
  v2EnabledAt: async () => view(new Map()),
  v1InForceAt: async () => view([]),
  v2Wallet: async () => view([]),
  v1Wallet: async () => view([]),
  v2Wallets: async (_: number, wallets: readonly string[]) => view(wallets.map(() => [])),
  v1Wallets: async (_: number, wallets: readonly string[]) => view(wallets.map(() => [])),
  v2Delegation: async () => view(DELEGATION),
  chainStates: async () => new Map([[CHAIN, view(undefined)]]),
} as unknown as Store;
const HISTORY_READS: Record<string, unknown> = { indexedBlock: 100n, v2Enabled: new Map(), v1InForce: [] };
const HISTORY = new Proxy({} as HistoryStore, {
  get: (_, name: string) => async () =>
    name === "v2Delegation" ? DELEGATION : (HISTORY_READS[name] ?? { items: [], more: false }),
});
const registry = { address: "0x00000000000000447e69651d841bD8D104Bed493", startBlock: 0 };
const CHAINS = [{ id: CHAIN, name: "anvil", title: "anvil", testnet: true, v1: registry, v2: registry }];

/** The app's options: the API key "key" is vouched for; a keyless client's units are counted in `spent`. */
function appOptions(): AppOptions & { spent: { units: number } } {
  const spent = { units: 0 };
  const verdict = { allowed: true, limit: 1000, windowMs: 10_000, remaining: 1000, resetMs: 10_000 };
  const access = {
    keys: {
      use: async () => false,
      useHeld: (key: string) => key === "key",
      heldOnce: (key: string) => key === "key",
      vouchesFor: (key: string) => key === "key",
    },
    limiter: {
      take: async (_: string, units: number) => {
        spent.units += units;
        return verdict;
      },
      charge: async (_: string, units: number) => {
        spent.units += units;
        return verdict;
      },
      close: async () => {},
    },
    load: { shed: () => false },
    trustProxy: false,
    adminToken: "token",
  } as unknown as Access;
  // An empty change log.
  const changes = {
    entries: async () => [],
    pruned: async () => 0n,
    newest: async () => 0n,
    floors: async () => new Map(),
  } as unknown as ChangeLog;
  const options = {
    store: STORE,
    history: HISTORY,
    chains: CHAINS,
    alarms: NO_ALARMS,
    access,
    behindAfterSeconds: 120,
  };
  return { ...options, changes: () => changes, feed: new FeedHub(() => changes, { everyMs: 1_000 }), spent };
}

// The unit project's workers keep modules for their next file (vitest.config.ts, `isolate`): the
// last `load` left a table with a route added, which the next file's app and document were made of.
afterAll(() => {
  vi.resetModules();
});

/** The routes, the app, the document and the fast path, as modules loaded afresh (after `declare` adds routes). */
async function load(declare: (routes: Route[]) => void = () => {}) {
  vi.resetModules();
  const table = await import("./table");
  declare(table.ROUTES as Route[]);
  const { createApp }: { createApp: typeof CreateApp } = await import("../app");
  const { openApiDocument }: { openApiDocument: typeof OpenApiDocument } = await import("../openapi/document");
  const { methodsOf } = await import("./cors");
  const direct = async () =>
    ((await import("./direct-answers")) as { withDirectAnswers: typeof WithDirectAnswers }).withDirectAnswers;
  return { routes: table.ROUTES, createApp, openApiDocument, methodsOf, direct };
}

/** `METHOD /path` of each route, as the app names it. */
const declared = (routes: readonly Route[]) => routes.map((r) => `${r.method.toUpperCase()} ${honoPath(r.path)}`);
/** `METHOD /path` of each route served under /registry, /rpc, /admin, /developer, in order (no guards, 405s). */
const served = (app: Hono<Env>) =>
  app.routes
    .filter((r) => /^\/(registry|rpc|admin|developer)\//.test(r.path) && r.method !== "ALL")
    .map((r) => `${r.method} ${r.path}`);
/** What the app serves that the table does not declare, and what the table declares that the app does not serve. */
function differences(app: Hono<Env>, routes: readonly Route[]) {
  const [have, want] = [served(app), declared(routes)];
  return { undeclared: have.filter((r) => !want.includes(r)), unserved: want.filter((r) => !have.includes(r)) };
}
/** The routes the document lacks, and the operations it has that no route declares. */
function undocumented(document: { paths: Record<string, Record<string, unknown>> }, routes: readonly Route[]) {
  const operations = Object.entries(document.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => `${method} ${path} ${(op as { operationId: string }).operationId}`),
  );
  const want = routes.map((r) => `${r.method} ${r.path} ${r.operationId}`);
  return { missing: want.filter((o) => !operations.includes(o)), extra: operations.filter((o) => !want.includes(o)) };
}

/** Who answered a keyed request of `url` (a POST of `body`) behind the fast path: the route it named, or "app". */
function answeredBy(withDirectAnswers: typeof WithDirectAnswers, url: string, body?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const options = { ...appOptions(), listings: new ListingCache(1 << 20) };
    const app: RequestListener = () => resolve("app");
    const res = { writeHead: () => res, end: () => {} };
    const length = body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) };
    const req = Object.assign(Readable.from(body === undefined ? [] : [Buffer.from(body)]), {
      method: body === undefined ? "GET" : "POST",
      url,
      headers: { "x-api-key": "key", ...length },
    });
    withDirectAnswers(options, app, (route, status) => (status === 200 ? resolve(route) : reject(status)))(
      req as unknown as IncomingMessage,
      res as unknown as ServerResponse,
    );
  });
}

/** A fast path's request: what it answers itself is at the newest block, whole (no page). */
const fastPathOf = (route: Route) => pathOf(route, ["blockNumber", "limit"]);

describe("the route table", { timeout: 60_000 }, () => {
  it("is what the app serves, in order: one served but undeclared is found; one unanswered, refused", async () => {
    const { routes, createApp } = await load();
    const app = createApp(appOptions());
    expect(served(app)).toEqual(declared(routes));
    expect(differences(app, routes)).toEqual({ undeclared: [], unserved: [] });

    // A route added to the app alone is found.
    app.get("/registry/v2/undeclared", (c) => c.text("not in the table"));
    expect(differences(app, routes)).toEqual({ undeclared: ["GET /registry/v2/undeclared"], unserved: [] });
    // A route declared that nothing answers stops the app being made.
    const unanswered = await load((all) => all.push({ ...all.find((r) => r.answer === "delegation")!, version: "v1" }));
    expect(() => unanswered.createApp(appOptions())).toThrow(
      /v2\/delegation\/\{hash\} is declared, but nothing answers it/,
    );
  });

  it("answers each route's valid request with its documented status, and allows its method", async () => {
    const { routes, createApp, methodsOf } = await load();
    const options = appOptions();
    const app = createApp(options);
    for (const route of routes.filter((r) => r.access === "keyed")) {
      const method = route.method.toUpperCase();
      const body = route.requestBody === undefined ? undefined : JSON.stringify(bodyOf(route, 1));
      const headers = { "Content-Type": "application/json" };
      // Read only when refused: the feed's answer is a stream that stays open (cancelled).
      const res = await overHttp(app, pathOf(route), { method, body, headers }, (status) => status !== route.ok.status);
      expect(res.status, `${method} ${pathOf(route)}: ${res.text}`).toBe(route.ok.status);
      expect(methodsOf(route.path.replaceAll(/\{\w+\}/g, wallet(9)))).toContain(method);
    }
  });

  it("is what the OpenAPI document describes: a route left out of it is found", async () => {
    const { routes, openApiDocument } = await load();
    expect(undocumented(openApiDocument(), routes)).toEqual({ missing: [], extra: [] });
    const [first, ...rest] = routes;
    expect(undocumented(openApiDocument(rest), routes).missing).toEqual([
      `${first!.method} ${first!.path} ${first!.operationId}`,
    ]);
  });

  it("is served at /openapi.json, keyless, readable across origins", async () => {
    const { createApp, openApiDocument } = await load();
    const res = await createApp(appOptions()).request("/openapi.json", {}, SOCKET);
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(await res.json()).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
  });

  it("lists every parameter a GET route checks, and no other", async () => {
    const { routes, createApp } = await load();
    const served = await listen(createApp(appOptions()));
    /** The parameter a 400 names, of the route's request as `asked`. */
    const checkedBy = async (route: Route, asked: Asked) => {
      const { url, headers } = requestOf(route, asked);
      const { status, text } = await served.request(url, { headers }, (s) => s === 400);
      return status === 400 ? (JSON.parse(text) as { param?: string }).param : undefined;
    };
    try {
      for (const route of routes.filter((r) => r.access === "keyed" && r.method === "get")) {
        for (const bad of route.parameters) {
          // An unknown chain is unsupported_chain, naming chainId too.
          expect(await checkedBy(route, { bad }), `${route.path}: ${bad} given ${INVALID}`).toBe(PARAMETERS[bad].name);
        }
        const names = new Set(route.parameters.map((key) => PARAMETERS[key].name));
        for (const extra of Object.keys(PARAMETERS) as ParameterKey[]) {
          if (names.has(PARAMETERS[extra].name) || PARAMETERS[extra].in === "path") continue;
          expect(await checkedBy(route, { extra }), `${route.path} reads ${extra}, undocumented`).toBeUndefined();
        }
      }
    } finally {
      await served.close();
    }
  });

  it("marks required exactly the query parameters a GET route needs (some only for some types)", async () => {
    const { routes, createApp } = await load();
    const served = await listen(createApp(appOptions()));
    try {
      for (const route of routes.filter((r) => r.access === "keyed" && r.method === "get")) {
        for (const key of route.parameters.filter((k) => PARAMETERS[k].in === "query")) {
          const { url, headers } = requestOf(route, { left: [key] });
          const res = await served.request(url, { headers }, (status) => status === 400);
          const body = (res.status === 400 ? JSON.parse(res.text) : {}) as { code?: string; param?: string };
          // VALID's vaults types are those that need every conditional parameter.
          const required = (route.required?.includes(key) || route.conditional?.includes(key)) ?? false;
          expect(
            res.status === 400 && body.code === "missing_parameter" ? body.param : undefined,
            `${route.path} without ${key}, which the document marks ${required ? "required" : "optional"}`,
          ).toBe(required ? PARAMETERS[key].name : undefined);
          // Without chainId, chain 1 is asked about, which this app does not serve.
          if (!required && PARAMETERS[key].name !== "chainId")
            expect(res.status, `${route.path} without ${key}`).toBe(route.ok.status);
        }
      }
    } finally {
      await served.close();
    }
  });

  it("marks fast exactly the routes the fast path answers itself; one it cannot answer fails to load", async () => {
    const { routes, direct } = await load();
    const withDirectAnswers = await direct();
    const keyed = routes.filter((r) => r.access === "keyed");
    expect(keyed.filter((r) => r.fast && r.method === "get").length).toBeGreaterThan(0);
    expect(keyed.filter((r) => r.fast && r.method === "post").length).toBeGreaterThan(0);
    for (const route of keyed) {
      const expected = route.fast ? honoPath(route.path) : "app";
      const body = route.requestBody === undefined ? undefined : JSON.stringify(bodyOf(route, 1));
      expect(await answeredBy(withDirectAnswers, fastPathOf(route), body), route.path).toBe(expected);
    }
    // Marked fast, a route the fast path has no answer for.
    const chains = await load((all) => all.push({ ...all.find((r) => r.answer === "chains")!, fast: true }));
    await expect(chains.direct()).rejects.toThrow(/GET \/registry\/chains is marked fast, but the fast path cannot/);
  });

  it("costs a keyless client what it declares: a unit a request, or one per item of its body", async () => {
    const { routes, createApp } = await load();
    for (const route of routes.filter((r) => r.access === "keyed")) {
      const options = appOptions();
      const app = createApp(options);
      const method = route.method.toUpperCase();
      const body = route.requestBody === undefined ? undefined : JSON.stringify(bodyOf(route, 3));
      const headers = { "Content-Type": "application/json" };
      const res = await overHttp(app, pathOf(route), { method, body, headers }, () => false);
      expect(res.status, `${method} ${route.path}`).toBe(200);
      expect(options.spent.units, `${method} ${route.path}`).toBe(route.cost.per === "item" ? 3 : 1);
    }
  });

  it("costs what the table says, not the method: a batch declared per request pays on arrival too", async () => {
    const { routes, createApp } = await load((all) => {
      for (const route of all) if (route.answer === "checks") route.cost = { per: "request", rows: false };
    });
    const route = routes.find((r) => r.answer === "checks")!;
    const options = appOptions();
    const body = JSON.stringify(bodyOf(route, 3));
    const headers = { "Content-Type": "application/json" };
    const res = await createApp(options).request(pathOf(route), { method: "POST", body, headers }, SOCKET);
    expect(res.status).toBe(200);
    expect(options.spent.units, "a unit on arrival, and one per item by the route").toBe(4);
  });

  it("costs a unit for a keyless POST that no route spends per item: a path no route has, an admin path", async () => {
    const { createApp } = await load();
    for (const path of ["/registry/v2/nothing", "/registry/v2/check/all", "/developer/keys"]) {
      const options = appOptions();
      const res = await createApp(options).request(path, { method: "POST", body: "{}" }, SOCKET);
      expect(res.status, `POST ${path}`).toBeGreaterThanOrEqual(400);
      expect(options.spent.units, `POST ${path}`).toBe(1);
    }
  });

  it("is all it takes: a route added to the table alone is served, allowed, documented, typed and fast", async () => {
    const route: Route = {
      method: "get",
      path: "/registry/v2/wallets/{wallet}",
      answer: "walletListing",
      version: "v2",
      operationId: "v2WalletListingAgain",
      tag: "v2 registry",
      summary: "The wallet's delegations in force, at another path",
      parameters: ["wallet", "direction", "chainId"],
      ok: { status: 200, schema: { type: "array" }, headers: ["X-Indexed-Block"], description: "The delegations." },
      problems: [],
      access: "keyed",
      cost: { per: "request", rows: true },
      fast: true,
    };
    const before = await load();
    const url = pathOf(route);
    expect((await before.createApp(appOptions()).request(url, {}, SOCKET)).status).toBe(404);
    expect(undocumented(before.openApiDocument(), [route]).missing).toHaveLength(1);
    expect(await answeredBy(await before.direct(), url)).toBe("app");

    const after = await load((all) => all.push(route));
    const app = after.createApp(appOptions());
    expect(differences(app, after.routes)).toEqual({ undeclared: [], unserved: [] });
    const res = await app.request(url, {}, SOCKET);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("[]");
    expect(after.methodsOf(`/registry/v2/wallets/${wallet(4)}`)).toEqual(["GET", "HEAD", "OPTIONS"]);
    const document = after.openApiDocument();
    expect(undocumented(document, after.routes)).toEqual({ missing: [], extra: [] });
    const types = astToString(await openapiTS(document as unknown as Parameters<typeof openapiTS>[0]));
    expect(types).toContain(`"/registry/v2/wallets/{wallet}": {`);
    expect(types).toContain(`get: operations["v2WalletListingAgain"];`);
    expect(await answeredBy(await after.direct(), url)).toBe("/registry/v2/wallets/:wallet");
    // The bulk listing at the literal path beside it is still a POST only.
    expect(after.methodsOf("/registry/v2/wallets")).toEqual(["POST", "OPTIONS"]);
  });
});

/** A POST route's body with `items` items (checks of the first kind, or wallets). */
function bodyOf(route: Route, items: number) {
  const list = Array.from({ length: items }, (_, i) => wallet(10 + i));
  if (route.answer === "walletListings") return { chainId: CHAIN, wallets: list };
  if (route.answer === "rpc") return list.map((_, id) => ({ jsonrpc: "2.0", id, method: "eth_chainId" }));
  const kind = route.version === "v1" ? { type: "all", delegate: wallet(1) } : { type: "all", to: wallet(1) };
  return {
    chainId: CHAIN,
    checks: list.map((from) => ({ ...kind, [route.version === "v1" ? "vault" : "from"]: from })),
  };
}
