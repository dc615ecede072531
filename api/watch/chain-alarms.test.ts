import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { Query } from "../../core/sql";
import type { AccessDb } from "../database/db";
import { ChainSchemas } from "../store/chain-schemas";
import { type ChainAlarms, NO_ALARMS, openChainAlarms, refuseWhileAlarmed } from "./chain-alarms";

const alarmed = (chains: Record<number, string>): ChainAlarms => ({
  ...NO_ALARMS,
  current: () => new Map(Object.entries(chains).map(([id, detail]) => [Number(id), detail])),
});
const app = (alarms: ChainAlarms) =>
  new Hono().use("/graphql", refuseWhileAlarmed(alarms)).post("/graphql", (c) => c.json({ data: {} }));

describe("refuseWhileAlarmed", () => {
  it("lets requests through while no chain is alarmed", async () => {
    const res = await app(NO_ALARMS).request("/graphql", { method: "POST" });
    expect(res.status).toBe(200);
  });

  it("refuses every request while any chain is alarmed: 503 chain_reorganized with the alarm's detail", async () => {
    const res = await app(alarmed({ 10: "chain 10: block 5 was replaced" })).request("/graphql", { method: "POST" });
    expect(res.status).toBe(503);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(await res.json()).toMatchObject({ code: "chain_reorganized", detail: "chain 10: block 5 was replaced" });
  });
});

describe("openChainAlarms", () => {
  it("holds an alarm raised here through a read of the table begun before its insert", async () => {
    let rows: Record<string, unknown>[] = [];
    let release = () => {};
    let slow = false;
    const query: Query = async (text) => {
      if (!text.startsWith("SELECT indexer_schema")) return { rows: [] };
      const seen = rows;
      // A slow read returns what the table held when it began.
      if (slow) await new Promise<void>((ok) => (release = ok));
      return { rows: seen };
    };
    const db: AccessDb = { query, transaction: (work) => work(query), close: async () => {} };
    const alarms = await openChainAlarms(db, "access", ChainSchemas.one("indexer"), 10);
    slow = true;
    await new Promise((ok) => setTimeout(ok, 30)); // a read is now in flight, and its timer waits on it
    await alarms.raise(10, "chain 10: block 5 was replaced");
    rows = [{ indexer_schema: "indexer", chain_id: 10, detail: "chain 10: block 5 was replaced" }];
    release();
    await new Promise((ok) => setTimeout(ok, 5));
    expect(alarms.current().get(10)).toBe("chain 10: block 5 was replaced");
    slow = false;
    alarms.close();
  });

  it("holds each chain's alarms of its own schema, and raises them there", async () => {
    const table = [
      { indexer_schema: "chain_1", chain_id: 1, detail: "chain 1: replaced" },
      // An earlier indexer's, which wrote chain 2 before its own schema did.
      { indexer_schema: "chain_1", chain_id: 2, detail: "chain 2: an old alarm" },
      { indexer_schema: "chain_2", chain_id: 2, detail: "chain 2: replaced" },
    ];
    const asked: unknown[][] = [];
    const query: Query = async (text, params = []) => {
      asked.push([text.split(" ")[0], ...params]);
      if (!text.startsWith("SELECT indexer_schema")) return { rows: [] };
      const wanted = params[0] as string[];
      return { rows: table.filter((row) => wanted.includes(row.indexer_schema)) };
    };
    const db: AccessDb = { query, transaction: (work) => work(query), close: async () => {} };
    const schemas = new ChainSchemas(
      new Map([
        [1, "chain_1"],
        [2, "chain_2"],
      ]),
      "unused",
    );
    const alarms = await openChainAlarms(db, "access", schemas, 60_000);
    expect([...alarms.current()]).toEqual([
      [1, "chain 1: replaced"],
      [2, "chain 2: replaced"],
    ]);
    await alarms.raise(2, "chain 2: again");
    await alarms.markReplaced(1, "chain 1: head replaced");
    expect(asked.filter(([verb]) => verb === "INSERT")).toEqual([
      ["INSERT", "chain_2", 2, "chain 2: again"],
      ["INSERT", "chain_1", 1, "chain 1: head replaced"],
    ]);
    alarms.close();
  });

  it("lets go of an alarm raised here once a read begun after its insert no longer holds it (cleared)", async () => {
    let rows: Record<string, unknown>[] = [];
    const query: Query = async (text, params = []) => {
      if (text.startsWith("INSERT")) rows = [{ indexer_schema: "indexer", chain_id: params[1], detail: params[2] }];
      return { rows: text.startsWith("SELECT indexer_schema") ? rows : [] };
    };
    const db: AccessDb = { query, transaction: (work) => work(query), close: async () => {} };
    const alarms = await openChainAlarms(db, "access", ChainSchemas.one("indexer"), 5);
    await alarms.raise(10, "chain 10: block 5 was replaced");
    await new Promise((ok) => setTimeout(ok, 20));
    expect(alarms.current().get(10)).toBe("chain 10: block 5 was replaced");
    // Noted on by the launcher re-indexing it: every process says so.
    rows = [{ indexer_schema: "indexer", chain_id: 10, detail: "chain 10: block 5 was replaced. Re-indexing." }];
    await new Promise((ok) => setTimeout(ok, 20));
    expect(alarms.current().get(10)).toBe("chain 10: block 5 was replaced. Re-indexing.");
    rows = [];
    await new Promise((ok) => setTimeout(ok, 20));
    expect(alarms.current().has(10)).toBe(false);
    alarms.close();
  });
});
