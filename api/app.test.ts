/**
 * The app's CORS, as `npm run serve` and the launcher's waiting room answer it (inside Ponder,
 * Ponder's own CORS middleware answers preflights first): the preflight, and the headers every
 * registry answer and every error carries. And whole wallet listings, kept rendered while the
 * store's revision of the wallet holds.
 */
import { describe, expect, it } from "vitest";
import { checksumAddress } from "../core/keccak";
import type { Access } from "./access/open";
import { createApp } from "./app";
import { encodeCursor, requestDigest } from "./routes/cursor";
import { LISTING_CACHE_MIN_ROWS } from "./routes/listing-cache";
import type { HistoryStore } from "./store/history-store";
import { NOTHING_INDEXED, type Store, type V2Row, type WalletView } from "./store/store";
import { NO_ALARMS } from "./watch/chain-alarms";

/** Every keyless request is let through, and counted. */
function openAccess(): Access & { taken: number } {
  const access = {
    taken: 0,
    keys: { use: async () => false, useHeld: () => false, heldOnce: () => false } as unknown as Access["keys"],
    limiter: {
      take: async () => {
        access.taken++;
        return { allowed: true, limit: 25, windowMs: 10_000, remaining: 24, resetMs: 10_000 };
      },
      charge: async () => ({ allowed: true, limit: 25, windowMs: 10_000, remaining: 24, resetMs: 10_000 }),
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
      store: NOTHING_INDEXED,
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
      store: NOTHING_INDEXED,
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

describe("whole wallet listings", () => {
  /** A v2 delegation from the wallet to the n-th delegate. */
  const row = (n: number): V2Row => ({
    hash: `0x${n.toString(16).padStart(64, "0")}`,
    delegationType: "ALL",
    from: wallet(1) as V2Row["from"],
    to: wallet(0xab00 + n) as V2Row["to"],
    contract: null,
    tokenId: null,
    rights: `0x${"0".repeat(64)}`,
    amount: null,
  });
  const rows = (count: number) => Array.from({ length: count }, (_, n) => row(n));
  const LISTING = `/registry/v2/${wallet(1)}?chainId=31337`;

  /** An app over a store holding `now` (rows and revision), recording the revision each read was asked with. */
  function appOver(now: { rows: V2Row[]; revision?: string }) {
    const asked: (string | undefined)[] = [];
    const store: Store = {
      ...NOTHING_INDEXED,
      v2Wallet: async (_, __, held): Promise<WalletView<V2Row>> => {
        asked.push(held);
        const unchanged = now.revision !== undefined && held === now.revision;
        return { indexedBlock: 7n, ready: true, revision: now.revision, data: unchanged ? undefined : now.rows };
      },
    };
    const app = createApp({
      store,
      history: undefined,
      alarms: NO_ALARMS,
      chains,
      access: openAccess(),
      behindAfterSeconds: 120,
    });
    const get = async () => {
      const res = await app.request(LISTING, {}, SOCKET);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-indexed-block")).toBe("7");
      expect(res.headers.get("content-type")).toBe("application/json");
      return (await res.json()) as { to: string }[];
    };
    return { asked, get };
  }

  it("renders a large listing once per revision, and again as soon as the revision moves", async () => {
    const now = { rows: rows(LISTING_CACHE_MIN_ROWS + 8), revision: "1.4" };
    const { asked, get } = appOver(now);
    const first = await get();
    expect(first.length).toBe(LISTING_CACHE_MIN_ROWS + 8);
    expect(first.map((r) => r.to)).toEqual(now.rows.map((r) => checksumAddress(r.to)));
    // Asked with the revision held: the store reads no rows, and the body is the same.
    expect(await get()).toEqual(first);
    now.rows = rows(LISTING_CACHE_MIN_ROWS + 1);
    now.revision = "1.5";
    expect((await get()).length).toBe(LISTING_CACHE_MIN_ROWS + 1);
    expect(await get()).toHaveLength(LISTING_CACHE_MIN_ROWS + 1);
    expect(asked).toEqual([undefined, "1.4", "1.4", "1.5"]);
  });

  it("renders small listings, and those of stores without revisions, each time", async () => {
    const small = appOver({ rows: rows(LISTING_CACHE_MIN_ROWS - 1), revision: "1.1" });
    for (let i = 0; i < 3; i++) expect(await small.get()).toHaveLength(LISTING_CACHE_MIN_ROWS - 1);
    expect(small.asked).toEqual([undefined, undefined, undefined]);
    const sql = appOver({ rows: rows(LISTING_CACHE_MIN_ROWS + 8) });
    for (let i = 0; i < 3; i++) expect(await sql.get()).toHaveLength(LISTING_CACHE_MIN_ROWS + 8);
    expect(sql.asked).toEqual([undefined, undefined, undefined]);
  });
});

describe("blocks asked for", () => {
  /** A copy at block 10 (as a replica worker holds it), over history tables at `tables` (undefined: none read). */
  function appOver(tables: bigint | undefined) {
    const position = { indexedBlock: 10n, ready: true, indexedTimestamp: 0 };
    const history = {
      indexedBlock: async () => tables,
      v2Enabled: async () => new Map(),
    } as unknown as HistoryStore;
    return createApp({
      store: { ...NOTHING_INDEXED, chainStates: async () => new Map([[31337, position]]) },
      history,
      alarms: NO_ALARMS,
      chains,
      access: openAccess(),
      behindAfterSeconds: 120,
    });
  }

  it("past this process's copy are answered up to the history tables' newest block, and refused past it", async () => {
    const app = appOver(12n);
    const at = (block: number) => app.request(`${CHECK}&blockNumber=${block}`, {}, SOCKET);
    for (const block of [10, 12]) {
      const res = await at(block);
      expect(res.status, `block ${block}`).toBe(200);
      expect(res.headers.get("x-indexed-block")).toBe(String(block));
    }
    const refused = await at(13);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ code: "block_not_indexed", param: "blockNumber", indexedBlock: 12 });
    // Tables behind the copy (or none yet): the copy's block bounds what is asked.
    expect(await (await appOver(undefined).request(`${CHECK}&blockNumber=11`, {}, SOCKET)).json()).toMatchObject({
      code: "block_not_indexed",
      indexedBlock: 10,
    });
  });
});

describe("a page's parameters beside its cursor", () => {
  it("are checked though the cursor pins the block: a bad toBlock is a 400 naming it", async () => {
    const history = { indexedBlock: async () => 10n, v2Events: async () => ({ items: [], more: false }) };
    const app = createApp({
      store: {
        ...NOTHING_INDEXED,
        chainStates: async () => new Map([[31337, { indexedBlock: 10n, ready: true, indexedTimestamp: 0 }]]),
      },
      history: history as unknown as HistoryStore,
      alarms: NO_ALARMS,
      chains,
      access: openAccess(),
      behindAfterSeconds: 120,
    });
    const params: [string, string][] = [
      ["chainId", "31337"],
      ["toBlock", "toString"],
    ];
    const cursor = encodeCursor(requestDigest("/registry/v2/history", params), {
      block: 5n,
      after: { block: 1n, logIndex: 0 },
    });
    const res = await app.request(`/registry/v2/history?chainId=31337&toBlock=toString&cursor=${cursor}`, {}, SOCKET);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: "invalid_parameter", param: "toBlock" });
  });
});
