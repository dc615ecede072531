import { describe, expect, it } from "vitest";
import type { Query } from "../../core/sql";
import type { AccessDb } from "../database/db";
import { ChainSchemas } from "../store/chain-schemas";
import { openChainIndexers } from "./chain-indexers";

const dbOf = (query: Query): AccessDb => ({ query, transaction: (work) => work(query), close: async () => {} });
const schemas = new ChainSchemas(
  new Map([
    [1, "s_1"],
    [2, "s_2"],
  ]),
  "s",
);

describe("openChainIndexers", () => {
  it("holds each chain's indexer as noted for its own schema, times in ISO 8601", async () => {
    const rows = [
      {
        indexer_schema: "s_1",
        chain_id: 1,
        state: "running",
        since: new Date(5_000),
        rpc_failing_since: null,
        detail: null,
        // bigint columns come as text.
        backfill_blocks: "250",
        backfill_of_blocks: "1000",
      },
      // An earlier deployment's note of chain 2, under another schema.
      {
        indexer_schema: "s_1",
        chain_id: 2,
        state: "running",
        since: new Date(1_000),
        rpc_failing_since: null,
        detail: null,
      },
      {
        indexer_schema: "s_2",
        chain_id: 2,
        state: "waiting",
        since: "2026-11-30 07:00:00+00",
        rpc_failing_since: "2026-11-30 06:59:00+00",
        detail: "cannot reach its RPC",
      },
    ];
    const asked: unknown[] = [];
    const db = dbOf(async (_, params = []) => {
      asked.push(params[0]);
      return { rows: rows.filter((r) => (params[0] as string[]).includes(r.indexer_schema)) };
    });
    const indexers = await openChainIndexers(db, "access", schemas, 60_000);
    expect(asked[0]).toEqual(["s_1", "s_2"]);
    expect([...indexers.current()]).toEqual([
      [
        1,
        {
          ...{ state: "running", since: "1970-01-01T00:00:05.000Z", rpcFailingSince: null, detail: null },
          backfill: { blocks: 250, ofBlocks: 1_000 },
        },
      ],
      [
        2,
        {
          state: "waiting",
          since: "2026-11-30T07:00:00.000Z",
          rpcFailingSince: "2026-11-30T06:59:00.000Z",
          detail: "cannot reach its RPC",
          backfill: null,
        },
      ],
    ]);
    indexers.close();
  });

  it("holds none while the table is not there (one indexer for every chain), and keeps what it read through \
an outage", async () => {
    let fail: { code?: string } | undefined = { code: "42P01" };
    const db = dbOf(async () => {
      if (fail) throw Object.assign(new Error("failed"), fail);
      return {
        rows: [
          {
            indexer_schema: "s_1",
            chain_id: 1,
            state: "running",
            since: new Date(0),
            rpc_failing_since: null,
            detail: null,
          },
        ],
      };
    });
    const indexers = await openChainIndexers(db, "access", schemas, 5);
    expect(indexers.current().size).toBe(0);
    fail = undefined;
    await new Promise((ok) => setTimeout(ok, 30));
    expect(indexers.current().get(1)?.state).toBe("running");
    fail = { code: "57P01" };
    await new Promise((ok) => setTimeout(ok, 30));
    expect(indexers.current().get(1)?.state).toBe("running");
    indexers.close();
  });
});
