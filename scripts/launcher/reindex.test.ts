import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { AccessDb } from "../../api/database/db";
import { ChainSchemas } from "../../api/store/chain-schemas";
import type { Query } from "../../core/sql";
import { PONDER_SYNC_SCHEMA } from "../../ponder/ponder-0.16.10";
import { ALARM_POLL_MS, type IndexerGroup, Reindexer } from "./reindex";

/** A database of the access schema's alarms, as far as the re-indexer reads and writes them; every statement kept. */
function alarmsDb(alarms: { indexer_schema: string; chain_id: number; detail: string }[]) {
  const statements: { text: string; params: unknown[] }[] = [];
  const query: Query = async (text, params = []) => {
    statements.push({ text, params });
    if (text.startsWith("SELECT indexer_schema, chain_id, detail"))
      return { rows: alarms.filter((a) => (params[0] as string[]).includes(a.indexer_schema)) };
    if (text.includes("to_regclass")) return { rows: [{ present: true }] };
    if (text.startsWith("DELETE FROM") && text.includes("alarm")) {
      const at = alarms.findIndex((a) => a.indexer_schema === params[0] && a.chain_id === params[1]);
      if (at >= 0) alarms.splice(at, 1);
    }
    return { rows: [] };
  };
  const db: AccessDb = { query, transaction: (work) => work(query), close: async () => {} };
  return { db, statements };
}

describe("Reindexer", () => {
  let ready: Server;
  let port: number;
  beforeAll(async () => {
    ready = createServer((_, res) => res.writeHead(200).end());
    await new Promise<void>((ok) => ready.listen(0, "127.0.0.1", ok));
    port = (ready.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((ok) => ready.close(() => ok())));

  it("stops and indexes afresh the whole group of a chain alarmed, and no other group", async () => {
    const pair: IndexerGroup = { key: 10, chainIds: [10, 56], name: "chains 10, 56" };
    const alone: IndexerGroup = { key: 137, chainIds: [137], name: "chain 137" };
    const schemaOf = new Map([
      [10, "s_10"],
      [56, "s_10"],
      [137, "s_137"],
    ]);
    // Chain 56's alarm in its group's schema; an earlier indexer's alarm of chain 137 (not its schema now).
    const { db, statements } = alarmsDb([
      { indexer_schema: "s_10", chain_id: 56, detail: "Reorganized past its final block." },
      { indexer_schema: "s_old", chain_id: 137, detail: "An earlier indexer's." },
    ]);
    const grants = vi.fn(async () => {});
    const reindexer = new Reindexer(db, {
      accessSchema: "access",
      schemas: new ChainSchemas(schemaOf, "s"),
      groups: [pair, alone],
      viewsSchemaOf: (group) => `v_${group.key}`,
      grantReaders: grants,
    });
    vi.spyOn(console, "error").mockImplementation(() => {});
    vi.spyOn(console, "log").mockImplementation(() => {});
    try {
      const stops = [reindexer.starting(pair, port), reindexer.starting(alone, port)];
      await vi.waitFor(() => expect(stops[0]!.aborted).toBe(true), { timeout: ALARM_POLL_MS * 2 });
      expect(stops[1]!.aborted, "the other group's Ponder runs on").toBe(false);
      expect(reindexer.exited(alone)).toBe(false);
      expect(reindexer.exited(pair), "the group is to be indexed afresh").toBe(true);

      const before = statements.length;
      expect(await reindexer.prepare(alone)).toBeUndefined();
      expect(statements.length, "nothing dropped for the other group").toBe(before);
      expect(await reindexer.prepare(pair)).toBeUndefined();
      const dropped = statements.slice(before).map((s) => s.text);
      expect(dropped.filter((t) => t.startsWith("DROP SCHEMA"))).toEqual([
        'DROP SCHEMA IF EXISTS "v_10" CASCADE',
        'DROP SCHEMA IF EXISTS "s_10" CASCADE',
      ]);
      // The sync cache of the alarmed chain only: the other chain of the group keeps what it fetched.
      const synced = statements.slice(before).filter((s) => s.text.startsWith(`DELETE FROM ${PONDER_SYNC_SCHEMA}.`));
      expect(synced.length).toBeGreaterThan(0);
      expect(new Set(synced.map((s) => s.params[0]))).toEqual(new Set([56]));
      expect(grants).toHaveBeenCalledTimes(1);
      expect(reindexer.afresh(pair)).toBe(true);
      expect(reindexer.afresh(alone)).toBe(false);
      // Prepared once: run again (an exit meanwhile), nothing is dropped twice.
      const again = statements.length;
      expect(await reindexer.prepare(pair)).toBeUndefined();
      expect(statements.length).toBe(again);

      // Its Ponder ready: the group's alarms cleared, the group no longer afresh.
      const cleared = vi.fn();
      const stop = reindexer.starting(pair, port, cleared);
      await vi.waitFor(() => expect(cleared).toHaveBeenCalledTimes(1), { timeout: 5_000 });
      expect(reindexer.afresh(pair)).toBe(false);
      expect(stop.aborted).toBe(false);
      const deletes = statements.filter(
        (s) => s.text.startsWith("DELETE FROM") && !s.text.includes(PONDER_SYNC_SCHEMA),
      );
      expect(deletes.map((s) => s.params)).toEqual([
        ["s_10", 56],
        ["s_10", 56],
      ]);
      // Read again with the alarm gone: the group runs on.
      await new Promise((wait) => setTimeout(wait, ALARM_POLL_MS + 500));
      expect(stop.aborted).toBe(false);
      expect(reindexer.exited(pair)).toBe(false);
    } finally {
      reindexer.stop();
      vi.restoreAllMocks();
    }
  });
});
