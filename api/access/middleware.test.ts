import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { KeyStore } from "./keys";
import { requireKey } from "./middleware";

const GOOD = "dlk_000000000001_good";

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
