/**
 * The one assembly of the service (api/service.ts): what each process adds to the app, and what
 * /ready says from the chains' positions, their alarms and a standby's replication.
 */
import { describe, expect, it } from "vitest";
import type { Query } from "../core/sql";
import type { Access } from "./access/open";
import { assembleService, readinessOf, type ServiceParts } from "./service";
import { ChainSchemas } from "./store/chain-schemas";
import { NOTHING_INDEXED } from "./store/store";
import { NO_ALARMS } from "./watch/chain-alarms";

const chain = (id: number) => ({ id, name: `chain-${id}`, title: `Chain ${id}`, testnet: true });
const chains = [chain(1), chain(10)];
const NOW = 10_000;
/** What @hono/node-server hands the app: the client's socket, whose address the keyless limit counts. */
const SOCKET = { incoming: { socket: { remoteAddress: "127.0.0.1", remotePort: 50000, remoteFamily: "IPv4" } } };
const at = (indexedTimestamp: number, ready = true) => ({ indexedBlock: 7n, indexedTimestamp, ready });
const storeOf = (states: [number, ReturnType<typeof at>][]) => ({
  ...NOTHING_INDEXED,
  chainStates: async () => new Map(states),
});

describe("readinessOf", () => {
  const readiness = (options: Partial<Parameters<typeof readinessOf>[0]>) =>
    readinessOf({
      chains,
      store: storeOf([
        [1, at(NOW)],
        [10, at(NOW)],
      ]),
      alarms: NO_ALARMS,
      behindAfterSeconds: 120,
      nowSeconds: () => NOW,
      ...options,
    })();

  it("is not ready until every chain is backfilled", async () => {
    expect(await readiness({ store: storeOf([[1, at(NOW)]]) })).toEqual({
      ready: false,
      text: "not every chain is backfilled yet",
    });
    expect(
      await readiness({
        store: storeOf([
          [1, at(NOW)],
          [10, at(NOW, false)],
        ]),
      }),
    ).toMatchObject({ ready: false });
  });

  it("is ready then, saying nothing while every chain is live", async () => {
    expect(await readiness({})).toEqual({ ready: true, text: "" });
  });

  it("stays ready, naming a chain behind, a chain refused and a standby trailing its primary", async () => {
    const alarms = { current: () => new Map([[10, "chain 10: block 5 was replaced"]]) };
    const replication = { current: () => ({ lagSeconds: 45, behindAfterSeconds: 30 }) };
    const store = storeOf([
      [1, at(NOW - 121)],
      [10, at(NOW)],
    ]);
    expect(await readiness({ store, alarms, replication })).toEqual({
      ready: true,
      text: [
        "every chain is behind: the standby it reads trails its primary by 45 s (more than 30 s)",
        "chain 1 is behind: its newest indexed block is 121 s old",
        "chain 10 is refused: chain 10: block 5 was replaced",
      ].join("\n"),
    });
  });
});

describe("assembleService", () => {
  /** The access database: no table yet, and none it may make (the alarms are read, none raised). */
  const query: Query = async () => ({ rows: [] });
  const db = { query, transaction: <T>(work: (q: Query) => Promise<T>) => work(query), close: async () => {} };

  /** Keys that all fail: what a request without a valid key meets. */
  const access = (): Access => ({
    keys: {
      use: async () => false,
      useHeld: () => false,
      heldOnce: () => false,
      vouchesFor: () => false,
    } as unknown as Access["keys"],
    limiter: {
      take: async () => ({ allowed: true, limit: 25, windowMs: 10_000, remaining: 24, resetMs: 10_000 }),
      charge: async () => ({ allowed: true, limit: 25, windowMs: 10_000, remaining: 24, resetMs: 10_000 }),
      close: async () => {},
    },
    trustProxy: false,
    adminToken: undefined,
    db,
    schema: "access",
    close: async () => {},
  });
  const parts = (more: Partial<ServiceParts>): ServiceParts => ({
    schemas: ChainSchemas.one("indexer"),
    chains,
    access: access(),
    store: storeOf([[1, at(NOW)]]),
    execute: async () => ({ rows: [] }),
    behindAfterSeconds: 120,
    ...more,
  });

  it("alone: answers /health, /ready and /metrics itself, and counts the answers", async () => {
    const counted: string[] = [];
    const service = await assembleService(
      parts({
        alone: { countAnswer: (route, status) => counted.push(`${route} ${status}`), figures: async () => "# figures" },
      }),
    );
    expect((await service.app.request("/health")).status).toBe(200);
    const ready = await service.app.request("/ready");
    expect([ready.status, await ready.text()]).toEqual([503, "not every chain is backfilled yet"]);
    const metrics = await service.app.request("/metrics");
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/^# figures\n[\s\S]*chain_id="1"/);
    expect(counted).toEqual(["/health 200", "/ready 503", "/metrics 200"]);
    // GraphQL is Ponder's: not served here.
    expect((await service.app.request("/graphql", { method: "POST" }, SOCKET)).status).toBe(404);
    service.alarms.close();
  });

  it("inside Ponder: /graphql only with a valid key, and no probes of its own (Ponder answers them)", async () => {
    const service = await assembleService(parts({ graphql: async (c) => c.json({ data: {} }) }));
    const refused = await service.app.request("/graphql", { method: "POST" });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("access-control-allow-origin")).toBe("*");
    expect((await service.app.request("/health", {}, SOCKET)).status).toBe(404);
    expect((await service.readiness()).ready).toBe(false);
    service.alarms.close();
  });
});
