/**
 * The app's CORS, as `npm run serve` and the launcher's waiting room answer it (inside Ponder,
 * Ponder's own CORS middleware answers preflights first): the preflight, and the headers every
 * registry answer and every error carries.
 */
import { describe, expect, it } from "vitest";
import type { Access } from "./access/open";
import { createApp } from "./app";
import { NO_ALARMS } from "./chain-alarms";
import type { Store } from "./store";

const nothingIndexed: Store = {
  v2Enabled: async () => undefined,
  v2Wallet: async () => undefined,
  v1InForce: async () => undefined,
  v1Wallet: async () => undefined,
  chainStates: async () => new Map(),
};

/** Every keyless request is let through, and counted. */
function openAccess(): Access & { taken: number } {
  const access = {
    taken: 0,
    keys: { use: async () => false } as unknown as Access["keys"],
    limiter: {
      take: async () => {
        access.taken++;
        return { allowed: true, limit: 25, windowMs: 10_000, remaining: 24, resetMs: 10_000 };
      },
      close: async () => {},
    },
    trustProxy: false,
    adminToken: undefined,
    db: undefined as unknown as Access["db"],
    schema: "access",
    close: async () => {},
  };
  return access;
}

const chains = [
  {
    id: 31337,
    name: "anvil",
    title: "Local development chain",
    testnet: true,
    v2: { address: "0x00000000000000447e69651d841bD8D104Bed493", startBlock: null },
  },
];
const wallet = (n: number) => `0x${n.toString(16).padStart(40, "0")}`;
const CHECK = `/registry/v2/check/all?chainId=31337&to=${wallet(2)}&from=${wallet(3)}`;
const EXPOSED = ["x-indexed-block", "retry-after", "ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"];
/** What @hono/node-server hands the app: the client's socket, whose address the keyless limit counts. */
const SOCKET = { incoming: { socket: { remoteAddress: "127.0.0.1", remotePort: 50000, remoteFamily: "IPv4" } } };
const list = (header: string | null) => (header ?? "").split(",").map((item) => item.trim().toLowerCase());

describe("CORS", () => {
  it("answers a preflight: 204, the methods and headers allowed, a day's max age, Allow; not counted", async () => {
    const access = openAccess();
    const app = createApp({
      store: nothingIndexed,
      history: undefined,
      alarms: NO_ALARMS,
      chains,
      access,
      behindAfterSeconds: 120,
    });
    const res = await app.request(CHECK, {
      method: "OPTIONS",
      headers: {
        Origin: "https://example.org",
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "X-API-KEY",
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(list(res.headers.get("access-control-allow-methods"))).toEqual(["get", "head", "options"]);
    expect(list(res.headers.get("access-control-allow-headers"))).toEqual(["x-api-key", "content-type"]);
    expect(res.headers.get("access-control-max-age")).toBe("86400");
    expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    expect(list(res.headers.get("access-control-expose-headers"))).toEqual(EXPOSED);
    expect(await res.text()).toBe("");
    expect(access.taken, "a preflight is not counted against the keyless limit").toBe(0);
  });

  it("registry answers and all errors carry Access-Control-Allow-Origin: * and the exposed headers", async () => {
    const app = createApp({
      store: nothingIndexed,
      history: undefined,
      alarms: NO_ALARMS,
      chains,
      access: openAccess(),
      behindAfterSeconds: 120,
    });
    for (const [path, method, status] of [
      ["/registry/chains", "GET", 200],
      [CHECK, "GET", 503],
      [CHECK, "HEAD", 503],
      [CHECK.replace("chainId=31337", "chainId=10"), "GET", 400],
      [CHECK, "POST", 405],
      ["/nothing", "GET", 404],
    ] as const) {
      const res = await app.request(path, { method }, SOCKET);
      expect(res.status, `${method} ${path}`).toBe(status);
      expect(res.headers.get("access-control-allow-origin"), `${method} ${path}`).toBe("*");
      expect(list(res.headers.get("access-control-expose-headers")), `${method} ${path}`).toEqual(EXPOSED);
      if (status === 405) expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    }
  });
});
