import { PgDialect } from "drizzle-orm/pg-core";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Address, Hex } from "viem";
import { createSqlStore } from "../api/store";
import { v1CheckKeys } from "../core/v1";
import { v2Check } from "../core/v2";
import { installRegistries } from "./helpers/oracle";
import { startAnvil, startService, type Anvil, type Service } from "./helpers/processes";

/**
 * Every read the API makes is an index lookup, never a scan of a delegation table: each of the
 * store's statements is explained on Postgres with sequential scans priced out of reach, so a
 * plan still scanning means no index serves it. Postgres only: PGlite belongs to the indexer's
 * process, and its planner is the same.
 */
describe.runIf(process.env.DATABASE_URL)("indexes", () => {
  let anvil: Anvil;
  let service: Service;
  let client: pg.Client;
  const plans: { query: string; plan: string }[] = [];

  beforeAll(async () => {
    anvil = await startAnvil();
    await installRegistries(anvil.url);
    service = await startService({ rpc: { 31337: anvil.url } });
    client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    await client.query("SET enable_seqscan = off");
  });

  afterAll(async () => {
    await client?.end();
    await service?.stop();
    await anvil?.stop();
  });

  it("serves every store read from an index", async () => {
    const dialect = new PgDialect();
    const store = createSqlStore(async (query) => {
      const { sql, params } = dialect.sqlToQuery(query);
      const explained = await client.query(`EXPLAIN ${sql}`, params);
      plans.push({ query: sql, plan: explained.rows.map((row) => row["QUERY PLAN"]).join("\n") });
      return client.query(sql, params);
    }, service.schema);

    const a = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8" as Address;
    const b = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc" as Address;
    const token = "0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d" as Address;
    const rights = `0x${"0".repeat(64)}` as Hex;
    await store.v2Enabled(31337, v2Check({ kind: "erc1155", to: a, from: b, rights, contract: token, tokenId: 1n }).hashes);
    await store.v2Wallet(31337, a);
    await store.v1InForce(31337, v1CheckKeys({ kind: "token", delegate: a, vault: b, contract: token, tokenId: 1n }));
    await store.v1Wallet(31337, a);

    expect(plans).toHaveLength(4);
    for (const { query, plan } of plans) {
      for (const table of ["v2_delegation", "v1_delegation", "v1_vault_version", "v1_pair_version", "v2_event", "v1_event"]) {
        expect(plan, `${query}\n${plan}`).not.toMatch(new RegExp(`Seq Scan on ${table}\\b`));
      }
    }
  });
});
