/**
 * Vaults in pages (`GET /registry/v{1,2}/:wallet/vaults?limit=…`): each version's vault records,
 * page after page by the `Link` each page gives, add up to the whole list. Listings at the head
 * spell their addresses with the store's checksum where it gives one; at a past block they are the
 * store's where it tells them, and only the rest are asked of the history.
 */
import { type Address, type Hex, zeroHash } from "viem";
import { describe, expect, it } from "vitest";
import { checksumAddress } from "../../core/keccak";
import type { Direction } from "../../core/parse";
import type { Access } from "../access/open";
import { createApp } from "../app";
import { toJson } from "../http/json";
import { JsonBytes } from "../http/json-bytes";
import { ChainState, type Spellings } from "../replica/chain-state";
import type { HistoryStore } from "../store/history-store";
import type { Store, V1Row, V2Row } from "../store/store";
import { NO_ALARMS } from "../watch/chain-alarms";
import { LISTING_CACHE_BYTES, LISTING_CACHE_MIN_ROWS, ListingCache } from "./listing-cache";
import { v2Record } from "./records";
import { type CheckReads, checksRead, wholeListing } from "./registry";
import { V2_SPEC } from "./v2";

const wallet = (n: number) => `0x${n.toString(16).padStart(40, "0")}` as V1Row["vault"];
const HOT = wallet(0xff);
const VAULTS = [wallet(0x30), wallet(0x10), wallet(0x20)];
const READY = { ready: true, indexedBlock: 100n, indexedTimestamp: 0 };

/** The hot wallet's incoming delegations at any block: an ALL delegation from each vault, in this order. */
const position = (i: number) => ({ block: 10n, logIndex: i });
const v1Rows = VAULTS.map((vault, i) => ({
  type: "ALL" as const,
  vault,
  delegate: HOT,
  contract: wallet(0),
  tokenId: 0n,
  position: position(i),
}));
const v2Rows = VAULTS.map((from, i): V2Row & { position: ReturnType<typeof position> } => ({
  hash: `0x${String(i).repeat(64)}`,
  delegationType: "ALL",
  from,
  to: HOT,
  contract: null,
  tokenId: null,
  rights: zeroHash,
  amount: null,
  position: position(i),
}));
const history = {
  v1Wallet: async () => ({ items: v1Rows, more: false }),
  v2Wallet: async () => ({ items: v2Rows, more: false }),
} as unknown as HistoryStore;
const store = { chainStates: async () => new Map([[31337, READY]]) } as unknown as Store;
const access = {
  keys: { use: async () => false },
  limiter: {
    take: async () => ({ allowed: true, limit: 25, windowMs: 10_000, remaining: 24, resetMs: 10_000 }),
    charge: async () => ({ allowed: true, limit: 25, windowMs: 10_000, remaining: 24, resetMs: 10_000 }),
    close: async () => {},
  },
  load: { shed: () => false },
  trustProxy: false,
} as unknown as Access;
const chains = [
  {
    id: 31337,
    name: "anvil",
    title: "Local development chain",
    testnet: true,
    v1: { address: "0x00000000000076A84feF008CDAbe6409d2FE638B", startBlock: null },
    v2: { address: "0x00000000000000447e69651d841bD8D104Bed493", startBlock: null },
  },
] as const;
const SOCKET = { incoming: { socket: { remoteAddress: "127.0.0.1", remotePort: 50000, remoteFamily: "IPv4" } } };

describe("vaults in pages", () => {
  const app = createApp({ store, history, alarms: NO_ALARMS, chains: [...chains], access, behindAfterSeconds: 120 });

  for (const version of ["v1", "v2"] as const) {
    it(`${version}: pages of 2 add up to every vault, by address`, async () => {
      const records: unknown[] = [];
      let path: string | undefined = `/registry/${version}/${HOT}/vaults?chainId=31337&type=all&limit=2`;
      for (let page = 0; path !== undefined && page < 3; page++) {
        const res = await app.request(path, {}, SOCKET);
        const body = await res.text();
        expect(`${res.status} ${res.headers.get("x-indexed-block")}`, body).toBe("200 100");
        records.push(...(JSON.parse(body) as unknown[]));
        path = /^<([^>]+)>; rel="next"$/.exec(res.headers.get("link") ?? "")?.[1];
      }
      expect(path, "no page after the second").toBeUndefined();
      expect(records).toEqual([...VAULTS].sort().map((vault) => ({ vault: checksumAddress(vault) })));
    });
  }
});

describe("listings at the head, from a store that spells their addresses", () => {
  const spelt: string[] = [];
  const checksum = (address: V1Row["vault"]) => {
    spelt.push(address);
    return checksumAddress(address);
  };
  const head = { indexedBlock: 100n, ready: true, checksum };
  const rows = { v1: v1Rows.map(({ position: _, ...row }) => row), v2: v2Rows.map(({ position: _, ...row }) => row) };
  const spelling: Store = {
    ...store,
    v1Wallet: async () => ({ ...head, data: rows.v1 }),
    v2Wallet: async () => ({ ...head, data: rows.v2 }),
    v1Wallets: async (_, wallets) => ({ ...head, data: wallets.map(() => rows.v1) }),
    v2Wallets: async (_, wallets) => ({ ...head, data: wallets.map(() => rows.v2) }),
  };
  const app = createApp({
    store: spelling,
    history,
    alarms: NO_ALARMS,
    chains: [...chains],
    access,
    behindAfterSeconds: 120,
  });
  /** The records' addresses, in order: each names its vault and the hot wallet (no contract: ALL). */
  const named = VAULTS.flatMap((vault) => [vault, HOT]);

  for (const version of ["v1", "v2"] as const) {
    it(`${version}: a whole listing and a bulk listing`, async () => {
      spelt.length = 0;
      const listing = await app.request(`/registry/${version}/${HOT}?chainId=31337`, {}, SOCKET);
      expect(listing.status).toBe(200);
      const records = (await listing.json()) as Record<string, unknown>[];
      expect(records.map((r) => r.vault ?? r.from)).toEqual(VAULTS.map(checksumAddress));
      expect(spelt).toEqual(named);
      spelt.length = 0;
      const init = {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ chainId: 31337, wallets: [HOT, VAULTS[0]] }),
      };
      const bulk = await app.request(`/registry/${version}/wallets`, init, SOCKET);
      expect(bulk.status, await bulk.clone().text()).toBe(200);
      expect(await bulk.json()).toEqual([records, records]);
      expect(spelt).toEqual([...named, ...named]);
    });
  }
});

describe("checks at a past block, told by the store in part", () => {
  it("asks the history for the checks the store cannot tell, alone, and answers all in order", async () => {
    const asked: string[][] = [];
    // The store tells every check but those named "untold"; the history answers what it is asked.
    const spec = {
      readChecks: (queries: string[]): CheckReads => ({
        head: async () => undefined,
        heldAt: async () => ({
          ...READY,
          data: queries.map((q) => (q.startsWith("untold") ? undefined : `store:${q}`)),
        }),
        at: async (_, __, block) => {
          asked.push(queries);
          return queries.map((q) => `history:${q}@${block}`);
        },
      }),
    };
    const vars = { store: {} as Store, history: {} as HistoryStore };
    const queries = ["a", "untold-b", "c", "untold-d"];
    const read = checksRead(spec, vars, 1, queries, (answers) => answers);
    expect(await read.heldAt?.(7n)).toEqual(["store:a", "history:untold-b@7", "store:c", "history:untold-d@7"]);
    expect(asked).toEqual([["untold-b", "untold-d"]]);
    // All told: the history is not asked.
    expect(await checksRead(spec, vars, 1, ["a", "c"], (answers) => answers).heldAt?.(7n)).toEqual([
      "store:a",
      "store:c",
    ]);
    expect(asked).toHaveLength(1);
  });
});

describe("v2 listings at a past block, told by the store in part", () => {
  // The store tells every wallet but VAULTS[0] (a row of its changed after the block); the history
  // lists the same rows, and says which wallets it was asked for.
  const of = (w: string) => v2Rows.filter((row) => row.from === w || row.to === w);
  const asked: string[][] = [];
  /** The addresses the store spelt (as a copy does: without hashing them again). */
  const spelt: string[] = [];
  const held: Store = {
    ...store,
    v2WalletsAt: async (_, wallets) => ({
      ...READY,
      checksum: (address) => {
        spelt.push(address);
        return checksumAddress(address);
      },
      data: wallets.map((w) => (w === VAULTS[0] ? undefined : of(w).map(({ position: _, ...row }) => row))),
    }),
  };
  const app = createApp({
    store: held,
    history: {
      ...history,
      v2Wallet: async (_, w) => {
        asked.push([w]);
        return { items: of(w), more: false };
      },
      v2Wallets: async (_, wallets) => {
        asked.push([...wallets]);
        return { lists: wallets.map(of), more: false };
      },
    } as HistoryStore,
    alarms: NO_ALARMS,
    chains: [...chains],
    access,
    behindAfterSeconds: 120,
  });
  const listing = async (w: string, direction = "both") => {
    const res = await app.request(`/registry/v2/${w}?chainId=31337&blockNumber=7&direction=${direction}`, {}, SOCKET);
    expect(res.status, await res.clone().text()).toBe(200);
    return res.json();
  };

  it("a whole listing from the store where it tells it, spelt by it, else from the history; in a direction \
too", async () => {
    asked.length = 0;
    spelt.length = 0;
    const records = (await listing(HOT)) as Record<string, unknown>[];
    expect(records.map((r) => r.from)).toEqual(VAULTS.map(checksumAddress));
    expect(spelt).toEqual(VAULTS.flatMap((vault) => [vault, HOT]));
    expect(await listing(HOT, "outgoing")).toEqual([]);
    expect(asked).toEqual([]);
    spelt.length = 0;
    expect(await listing(VAULTS[0]!)).toHaveLength(1);
    expect(asked).toEqual([[VAULTS[0]]]);
    expect(spelt).toEqual([]);
  });

  it("a bulk listing asks the history for the untold wallets alone, and answers every wallet in order", async () => {
    const wallets = [HOT, VAULTS[0]!, VAULTS[1]!, HOT];
    const each = [];
    for (const w of wallets) each.push(await listing(w));
    asked.length = 0;
    const res = await app.request(
      "/registry/v2/wallets",
      {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ chainId: 31337, blockNumber: "7", wallets }),
      },
      SOCKET,
    );
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toEqual(each);
    expect(asked).toEqual([[VAULTS[0]]]);
  });
});

describe("a whole listing from a store that writes its JSON", () => {
  it("is the records' JSON on either side of the length held, written alike, and only the longer held", async () => {
    const state = new ChainState();
    const [small, large, other] = [wallet(0xa1), wallet(0xa2), wallet(0xa3)];
    let n = 0;
    const delegate = (from: Address, to: Address) => {
      n++;
      const row = { ...v2Rows[0]!, hash: `0x${n.toString(16).padStart(64, "0")}` as Hex, from, to };
      const entry = { ...row, enabled: true, firstBlock: n, firstLogIndex: 0, updatedBlock: n };
      state.put(`v2:${row.hash}`, { table: "v2", row: entry }, 0);
    };
    // The small wallet one row short of what is held, both ways; the large one at that length.
    for (let i = 0; i < LISTING_CACHE_MIN_ROWS - 1; i++)
      delegate(i % 2 === 0 ? small : other, i % 2 === 0 ? other : small);
    for (let i = 0; i < LISTING_CACHE_MIN_ROWS; i++) delegate(large, other);
    const view = <T>(data: T) => ({ indexedBlock: 100n, ready: true, data });
    const written: Address[] = [];
    const jsonStore = {
      v2Wallet: async (_: number, w: Address) => {
        const spelt: Spellings = new Map();
        const rows = state.v2Wallet(w, spelt);
        return { ...view(rows), revision: state.walletRevision(w), checksum: (a: Address) => spelt.get(a)! };
      },
      v2WalletsJson: async (
        _: number,
        wallets: readonly Address[],
        direction: Direction,
        block: undefined,
        most: number,
      ) => {
        written.push(...wallets);
        const out = new JsonBytes();
        const records = state.v2WalletsJson(wallets, direction, block, most, out)!;
        return view({ json: out.bytes(), records });
      },
    } as unknown as Store;
    const listings = new ListingCache(LISTING_CACHE_BYTES);
    for (const w of [small, large, other])
      for (const direction of ["both", "incoming", "outgoing"] as const) {
        const rows = state.v2Wallet(w).filter((r) => direction === "both" || V2_SPEC.inDirection(r, w, direction));
        const listing = await wholeListing(V2_SPEC, jsonStore, listings, 31337, w, direction);
        const at = `${w} ${direction}`;
        expect(new TextDecoder().decode(listing!.json), at).toBe(toJson(rows.map((r) => v2Record(r))));
        expect(listing!.records, at).toBe(rows.length);
        // Held from the length held on, as before the JSON was written by the store.
        expect(listings.get(`v2/31337/${w}/${direction}`) !== undefined, at).toBe(
          rows.length >= LISTING_CACHE_MIN_ROWS,
        );
      }
    // Each listing was asked of the store's JSON first.
    expect(written.length).toBe(9);
  });
});

describe("a whole listing at a past block from a store that writes its pages", () => {
  // 150 delegations to HOT, one a block; a keyless client with no units left may read 100 rows.
  const state = new ChainState();
  for (let n = 1; n <= 150; n++) {
    const row = { ...v2Rows[0]!, hash: `0x${n.toString(16).padStart(64, "0")}` as Hex, from: wallet(0x1000 + n) };
    const entry = { ...row, enabled: true, firstBlock: n, firstLogIndex: 0, updatedBlock: n };
    state.put(`v2:${row.hash}`, { table: "v2", row: entry }, 0);
  }
  state.block = 150;
  const noneLeft = async () => ({ ...(await access.limiter.take("", 0)), remaining: 0 });
  const app = createApp({
    store: {
      chainStates: async () => new Map([[31337, { ...READY, indexedBlock: 150n }]]),
      v2WalletPageJson: async (_, w, block, page, direction) => {
        const out = new JsonBytes();
        const written = state.v2WalletPageJson(w, Number(block), direction, page, out);
        return { ...READY, indexedBlock: 150n, data: written && { ...written, json: out.bytes() } };
      },
    } as Partial<Store> as Store,
    // Never asked: every row is told at every block.
    history: {} as HistoryStore,
    alarms: NO_ALARMS,
    chains: [...chains],
    access: {
      ...access,
      keys: { use: async (key: string) => key === "a key", useHeld: () => false, heldOnce: () => false },
      limiter: { ...access.limiter, take: noneLeft, charge: noneLeft },
    } as unknown as Access,
    behindAfterSeconds: 120,
  });
  const listing = (block: number, key?: string) =>
    app.request(
      `/registry/v2/${HOT}?chainId=31337&blockNumber=${block}`,
      key ? { headers: { "X-API-KEY": key } } : {},
      SOCKET,
    );

  it("is the records' JSON of the rows then; past what a keyless client may read, refused", async () => {
    for (const block of [60, 120]) {
      const res = await listing(block, "a key");
      expect(res.status, await res.clone().text()).toBe(200);
      const rows = state.v2WalletAt(HOT, block)!;
      expect(rows).toHaveLength(block);
      expect(await res.text()).toBe(toJson(rows.map((r) => v2Record(r))));
    }
    expect((await listing(100)).status).toBe(200);
    const over = await listing(101);
    expect(over.status).toBe(429);
    expect(((await over.json()) as { detail: string }).detail).toContain("holds more than the 100 rows");
  });
});
