import { Hono, type MiddlewareHandler } from "hono";
import { describe, expect, it } from "vitest";
import { pgAccessDb } from "../database/pg";
import { Problem } from "../http/problem";
import type { KeyStore } from "./keys";
import type { RateLimiter } from "./limit";
import { memoryLimiter } from "./memory-limiter";
import { requireAccess, requireKey, throttleWrongTokens } from "./middleware";

const GOOD = "dlk_000000000001_good";
/** A key a copy held when last read, too long ago to vouch for it. */
const STALE = "dlk_000000000003_stale";

/** A key store that knows GOOD; `fail` makes every lookup throw it. */
function keys(fail?: Error): KeyStore & { used: string[] } {
  const used: string[] = [];
  return {
    used,
    use: async (key) => {
      if (fail) throw fail;
      used.push(key);
      return key === GOOD;
    },
  } as KeyStore & { used: string[] };
}

/** An app serving "served" behind requireKey. */
function app(store: KeyStore) {
  return new Hono().use("/q", requireKey(store, "GraphQL")).post("/q", (c) => c.text("served"));
}

const post = (a: Hono, headers: Record<string, string> = {}) =>
  a.request("/q", { method: "POST", headers, body: "{}" });

describe("requireKey", () => {
  it("serves a request with a valid key, counted as the key's use", async () => {
    const store = keys();
    const res = await post(app(store), { "X-API-KEY": GOOD });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("served");
    expect(store.used).toEqual([GOOD]);
  });

  it("answers a keyless request 401 invalid_api_key, saying to send a key", async () => {
    const res = await post(app(keys()));
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(await res.json()).toMatchObject({
      code: "invalid_api_key",
      status: 401,
      detail: "GraphQL takes only requests with an X-API-KEY: send your API key",
    });
  });

  it("answers an unknown or revoked key 401 invalid_api_key", async () => {
    const res = await post(app(keys()), { "X-API-KEY": "dlk_000000000002_revoked" });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({
      code: "invalid_api_key",
      detail: "the X-API-KEY is unknown or revoked; GraphQL takes only requests with a valid key",
    });
  });

  it("answers 503 chain_syncing with Retry-After when the keys' database cannot be reached", async () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    const res = await post(app(keys(refused)), { "X-API-KEY": GOOD });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(await res.json()).toMatchObject({ code: "chain_syncing" });
  });

  it("lets any other failure through, to the server's error handling", async () => {
    const res = await post(app(keys(new TypeError("a bug"))), { "X-API-KEY": GOOD });
    expect(res.status).toBe(500);
  });
});

describe("requireAccess", () => {
  /** A key store that vouches for GOOD from its copy and looks every other key up, counting the lookups. */
  function counted() {
    const store = {
      lookups: 0,
      use: async () => {
        store.lookups++;
        return false;
      },
      useHeld: (k: string) => k === GOOD,
      heldOnce: (k: string) => k === GOOD || k === STALE,
    };
    return store;
  }
  const SOCKET = { incoming: { socket: { remoteAddress: "198.51.100.7", remotePort: 1, remoteFamily: "IPv4" } } };
  /**
   * An app serving GET and POST /q behind requireAccess (a budget of 25 units per 10 s), over `keys`;
   * a POST's units are its route's to spend, per item.
   */
  function guarded(keys: ReturnType<typeof counted>, saturated = false) {
    const limiter = memoryLimiter();
    const load = { shed: () => saturated };
    const perItem = (method: string) => method === "POST";
    const access = { keys: keys as unknown as KeyStore, limiter, trustProxy: false, load, perItem };
    const app = new Hono()
      .use(requireAccess(access) as MiddlewareHandler)
      .get("/q", (c) => c.text("served"))
      .post("/q", async (c) => c.text(await c.req.text()));
    app.onError((error) => (error as Problem).response());
    return { app, limiter };
  }

  it("an unknown key is 401 and spends a unit while the budget lasts, then 429 with no lookup", async () => {
    const keys = counted();
    const { app } = guarded(keys);
    const ask = () => app.request("/q", { headers: { "X-API-KEY": "dlk_000000000002_unknown" } }, SOCKET);
    for (let i = 1; i <= 25; i++) {
      const res = await ask();
      expect(res.status).toBe(401);
      expect(res.headers.get("ratelimit-remaining")).toBe(String(25 - i));
    }
    expect(keys.lookups).toBe(25);
    expect((await ask()).status).toBe(429);
    expect(keys.lookups, "no lookup once the budget is spent").toBe(25);
    // A key the copy vouches for is served whatever the budget.
    expect((await app.request("/q", { headers: { "X-API-KEY": GOOD } }, SOCKET)).status).toBe(200);
  }, 10_000);

  it("refuses a POST of a client whose budget is spent before its body is read, a moment later", async () => {
    const { app, limiter } = guarded(counted());
    await limiter.charge("198.51.100.7", 25);
    let pulled = 0;
    const body = new ReadableStream(
      {
        pull(controller) {
          pulled++;
          controller.enqueue(new TextEncoder().encode("{}"));
          controller.close();
        },
      },
      { highWaterMark: 0 },
    );
    const started = Date.now();
    const res = await app.request("/q", { method: "POST", body, duplex: "half" } as RequestInit, SOCKET);
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(pulled, "the body was not read").toBe(0);
    expect(Date.now() - started, "a refusal waits before it goes").toBeGreaterThanOrEqual(240);
  });

  it("while the process is saturated, turns keyless requests away (spending nothing), serves keyed ones", async () => {
    const keys = counted();
    const { app, limiter } = guarded(keys, true);
    const shed = await app.request("/q", {}, SOCKET);
    expect(shed.status).toBe(429);
    expect(shed.headers.get("retry-after")).toBe("1");
    expect(await shed.json()).toMatchObject({ code: "rate_limited", detail: expect.stringContaining("busy") });
    expect((await app.request("/q", { headers: { "X-API-KEY": "dlk_000000000002_x" } }, SOCKET)).status).toBe(429);
    expect(keys.lookups, "no key lookup for a request turned away").toBe(0);
    expect((await limiter.take("198.51.100.7", 25)).allowed, "nothing of the budget was spent").toBe(true);
    expect((await app.request("/q", { headers: { "X-API-KEY": GOOD } }, SOCKET)).status).toBe(200);
    // A key the copy held but is too old to vouch for: looked up (here refused), not turned away.
    const again = counted();
    const { app: busy, limiter: budget } = guarded(again, true);
    const stale = await busy.request("/q", { headers: { "X-API-KEY": STALE } }, SOCKET);
    expect(stale.status, await stale.clone().text()).toBe(401);
    expect(again.lookups).toBe(1);
    expect((await budget.take("198.51.100.7", 25)).allowed, "at no keyless cost").toBe(true);
  });

  it("a budget whose database cannot be reached: keyless requests 503 (Retry-After), keyed ones served", async () => {
    // The budget's own pool (pgAccessDb), on a port where nothing listens: the error it really throws.
    const db = pgAccessDb("postgres://nobody@127.0.0.1:1/none");
    const spend = () =>
      db.transaction(async () => ({ allowed: true, limit: 25, windowMs: 10_000, remaining: 24, resetMs: 0 }));
    const unreachable: RateLimiter = { take: spend, charge: spend, close: async () => {} };
    const keys = counted();
    const app = new Hono()
      .use(requireAccess({ keys: keys as unknown as KeyStore, limiter: unreachable, trustProxy: false }))
      .get("/q", (c) => c.text("served"));
    // As the API app answers errors: a Problem as itself, anything else a 500.
    app.onError((error) => (error instanceof Problem ? error.response() : new Response("bug", { status: 500 })));
    try {
      const asked: Record<string, string>[] = [{}, { "X-API-KEY": "dlk_000000000002_unknown" }];
      for (const headers of asked) {
        const res = await app.request("/q", { headers }, SOCKET);
        expect(res.status).toBe(503);
        expect(res.headers.get("retry-after")).toBe("5");
        expect(await res.json()).toMatchObject({
          code: "chain_syncing",
          detail: expect.stringMatching(/keyless budget cannot be checked.*send an X-API-KEY/),
        });
      }
      expect(keys.lookups, "no key lookup without a unit spent").toBe(0);
      expect((await app.request("/q", { headers: { "X-API-KEY": GOOD } }, SOCKET)).status).toBe(200);
    } finally {
      await db.close();
    }
  });

  it("a budget failing otherwise (a bug) is not taken for an unreachable database", async () => {
    const bug = async () => {
      throw new TypeError("a bug");
    };
    const broken: RateLimiter = { take: bug, charge: bug, close: async () => {} };
    const app = new Hono()
      .use(requireAccess({ keys: counted() as unknown as KeyStore, limiter: broken, trustProxy: false }))
      .get("/q", (c) => c.text("served"));
    app.onError((error) => (error instanceof Problem ? error.response() : new Response("bug", { status: 500 })));
    expect((await app.request("/q", {}, SOCKET)).status).toBe(500);
  });

  it("a POST with budget left spends nothing on arrival: its route spends what it asks", async () => {
    const { app } = guarded(counted());
    const res = await app.request("/q", { method: "POST", body: "x" }, SOCKET);
    // The headers before the body: once a test file in this worker has served HTTP,
    // @hono/node-server's Response is global, and reading its body first rebuilds it from the
    // headers it was made with, without those set later (its own listener reads them unbuilt).
    expect(res.headers.get("ratelimit-remaining")).toBe("25");
    expect(await res.text()).toBe("x");
  });
});

describe("throttleWrongTokens", () => {
  it("a wrong token spends a unit of its own budget; a spent one is refused before any token is compared", async () => {
    const limiter = memoryLimiter();
    const compared: string[] = [];
    const app = new Hono()
      .use(throttleWrongTokens({ keys: {} as KeyStore, limiter, trustProxy: false }))
      .get("/admin", (c) => {
        const token = c.req.header("Authorization") ?? "";
        compared.push(token);
        return c.text("", token === "Bearer right" ? 200 : 401);
      });
    app.onError((error) => (error as Problem).response());
    const SOCKET = { incoming: { socket: { remoteAddress: "198.51.100.8", remotePort: 1, remoteFamily: "IPv4" } } };
    const ask = (token: string) => app.request("/admin", { headers: { Authorization: `Bearer ${token}` } }, SOCKET);
    for (let i = 0; i < 3; i++) expect((await ask("right")).status, "the right token costs nothing").toBe(200);
    // Its own budget: the client's keyless budget, spent, stops no admin request.
    await limiter.charge("198.51.100.8", 25);
    expect((await ask("right")).status).toBe(200);
    await limiter.charge("198.51.100.8 admin", 23);
    for (let i = 0; i < 2; i++) expect((await ask("wrong")).status).toBe(401);
    expect((await ask("right")).status, "refused before it is compared").toBe(429);
    expect(compared).toHaveLength(6);
  });
});
