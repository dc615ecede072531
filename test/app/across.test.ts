/**
 * Answers across chains in process (api/routes/across.ts): each chain's part is the very body its
 * one-chain request answers (or the problem body it answers with), by chain id; bad input is a 400;
 * a keyless client pays a unit per chain, all or none.
 */
import { describe, expect, it } from "vitest";
import type { Access } from "../../api/access/open";
import { createApp } from "../../api/app";
import type { HistoryStore } from "../../api/store/history-store";
import type { Store } from "../../api/store/store";
import { NO_ALARMS } from "../../api/watch/chain-alarms";
import { SOCKET, wallet } from "../helpers/empty-app";

const CHAINS = [8453, 1, 10];
/** Chain 10 is refused: a reorganization deeper than finality. */
const REFUSED = 10;
const BLOCK: Record<number, bigint> = { 1: 100n, 10: 200n, 8453: 300n };

/** The app over three chains, each indexed to its own block, none with a delegation; `budget`: keyless units. */
function app(budget = 25) {
  const taken: number[] = [];
  let left = budget;
  const head = async <T>(chainId: number, data: T) => ({ ready: true, indexedBlock: BLOCK[chainId]!, data });
  const store = {
    v2Enabled: (chainId: number) => head(chainId, new Map()),
    v2Wallet: (chainId: number) => head(chainId, []),
    v1InForce: (chainId: number) => head(chainId, []),
    v1Wallet: (chainId: number) => head(chainId, []),
    v2EnabledAt: async () => undefined,
    v1InForceAt: async () => undefined,
    chainStates: async () =>
      new Map(CHAINS.map((id) => [id, { ready: true, indexedBlock: BLOCK[id]!, indexedTimestamp: 0 }])),
  } as unknown as Store;
  // Two delegations on every chain's contract listing, so that a page of one has more.
  const history = new Proxy({} as HistoryStore, {
    get:
      (_, name) =>
      async (chainId: number, ...rest: unknown[]) => {
        if (name === "indexedBlock") return BLOCK[chainId];
        const page = rest.at(-1) as { after?: { block: bigint; logIndex: number }; limit?: number };
        const all = [1, 2].map((logIndex) => ({
          position: { block: 5n, logIndex },
          hash: `0x${String(logIndex).repeat(64)}`,
          delegationType: "CONTRACT",
          from: wallet(1),
          to: wallet(2),
          contract: wallet(3),
          tokenId: null,
          rights: `0x${"0".repeat(64)}`,
          amount: null,
        }));
        const rows = all.filter((row) => page.after === undefined || row.position.logIndex > page.after.logIndex);
        const items = rows.slice(0, page.limit);
        return { items, more: rows.length > items.length };
      },
  });
  const verdict = (allowed: boolean) => ({ allowed, limit: 25, windowMs: 10_000, remaining: left, resetMs: 4_000 });
  const access = {
    keys: { use: async () => false, useHeld: () => false, heldOnce: () => false, list: async () => [] },
    limiter: {
      take: async (_: string, units: number) => {
        const allowed = units <= left;
        if (allowed) {
          left -= units;
          taken.push(units);
        }
        return verdict(allowed);
      },
      charge: async (_: string, units: number) => {
        left -= units;
        return verdict(true);
      },
      close: async () => {},
    },
    load: { shed: () => false },
    trustProxy: false,
  } as unknown as Access;
  const served = createApp({
    store,
    history,
    alarms: { ...NO_ALARMS, current: () => new Map([[REFUSED, "a reorganization deeper than finality"]]) },
    chains: CHAINS.map((id) => ({
      id,
      name: `chain${id}`,
      title: `chain ${id}`,
      testnet: true,
      v1: { address: "0x00000000000076A84feF008CDAbe6409d2FE638B", startBlock: 0 },
      v2: { address: "0x00000000000000447e69651d841bD8D104Bed493", startBlock: 0 },
    })),
    access,
    behindAfterSeconds: 120,
  });
  return { get: (path: string) => served.request(path, {}, SOCKET), taken };
}

const CHECK = `/registry/v2/check/all?to=${wallet(2)}&from=${wallet(1)}`;
const CONTRACT = `/registry/v2/contract/${wallet(3)}?limit=1`;

describe("answers across chains", () => {
  it("are each chain's one-chain body at its block, or its problem, by chain id; no X-Indexed-Block", async () => {
    for (const path of [CHECK, `/registry/v1/${wallet(1)}?direction=incoming`, CONTRACT]) {
      const { get } = app();
      const res = await get(`${path}&chainId=all`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("X-Indexed-Block")).toBeNull();
      const { chains } = (await res.json()) as { chains: Record<string, unknown>[] };
      expect(chains.map((e) => e.chainId)).toEqual([1, 10, 8453]);
      for (const entry of chains) {
        const one = await get(`${path}&chainId=${entry.chainId}`);
        const body = await one.json();
        if (entry.chainId === REFUSED) {
          expect(one.status).toBe(503);
          expect(entry).toEqual({ chainId: REFUSED, problem: body });
          continue;
        }
        expect(one.status).toBe(200);
        expect(entry.block).toBe(Number(one.headers.get("X-Indexed-Block")));
        expect(entry.answer).toEqual(body);
      }
    }
  });

  it("give each chain's next cursor, which continues that chain alone", async () => {
    const { get } = app();
    const res = await get(`${CONTRACT}&chainId=8453,1`);
    const { chains } = (await res.json()) as { chains: { chainId: number; answer: unknown[]; next?: string }[] };
    for (const { chainId, answer, next } of chains) {
      expect(answer).toHaveLength(1);
      const link = (await get(`${CONTRACT}&chainId=${chainId}`)).headers.get("Link");
      expect(link).toContain(`cursor=${next}`);
      const second = await get(`${CONTRACT}&chainId=${chainId}&cursor=${next}`);
      expect(second.status).toBe(200);
      expect(((await second.json()) as { hash: string }[]).map((r) => r.hash)).toEqual([`0x${"2".repeat(64)}`]);
    }
  });

  it("refuse bad input with a 400 naming the parameter", async () => {
    const { get } = app();
    for (const [query, code, param] of [
      ["chainId=all,1", "invalid_parameter", "chainId"],
      ["chainId=1,1", "invalid_parameter", "chainId"],
      ["chainId=1,", "invalid_parameter", "chainId"],
      ["chainId=1,7", "unsupported_chain", "chainId"],
      ["chainId=all&blockNumber=5", "conflicting_parameter", "blockNumber"],
      ["chainId=1,8453&cursor=x", "invalid_parameter", "cursor"],
      ["chainId=all&limit=0", "invalid_parameter", "limit"],
    ]) {
      const res = await get(`${CONTRACT.replace("limit=1", "")}&${query}`);
      const body = (await res.json()) as { code: string; param: string };
      expect([res.status, body.code, body.param], query).toEqual([400, code, param]);
    }
  });

  it("cost a keyless client a unit per chain, all or none", async () => {
    const three = app();
    expect((await three.get(`${CHECK}&chainId=all`)).status).toBe(200);
    expect(three.taken.reduce((a, b) => a + b, 0)).toBe(3);
    // Two units left: the arrival's, then two more for the other chains, refused: nothing read.
    const short = app(2);
    const res = await short.get(`${CHECK}&chainId=all`);
    expect(res.status).toBe(429);
    expect(short.taken).toEqual([1]);
    // Pages: each chain's page is paid beforehand, together (a page of 150 costs a unit beyond its
    // request), as on one chain: the refused chain answers before its page is paid.
    const pages = app();
    expect((await pages.get(`${CONTRACT.replace("limit=1", "limit=150")}&chainId=all`)).status).toBe(200);
    expect(pages.taken).toEqual([1, 2, 2]);
    const refused = app();
    expect((await refused.get(`${CONTRACT.replace("limit=1", "limit=150")}&chainId=${REFUSED}`)).status).toBe(503);
    expect(refused.taken).toEqual([1]);
  });
});
