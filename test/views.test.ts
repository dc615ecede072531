/**
 * Stable names for SQL (docs/data-model.md): `npm start` has Ponder keep views of the indexer's
 * tables in the views schema (DATABASE_VIEWS_SCHEMA, by default `delegation_views`), so that SQL
 * written against them keeps working when a re-index moves the indexer to a new DATABASE_SCHEMA.
 *
 * The page's own SQL examples (on the test's chain: `chain_id = 1` read as 31337) are run through
 * the views schema, by an SQL client of the database (on PGlite, which admits one process, with the
 * service stopped), and their answers compared with the REST API's: the v1 delegations in force with
 * the union of every wallet's v1 listing, the v2 delegations made per day with the v2 history, the
 * v2 delegations in force, by hash, with the union of every wallet's v2 listing.
 *
 * 1. After `npm start` on schema A, the SQL answers as A's REST API does.
 * 2. More writes while no indexer runs; then `npm start` on a new schema B (a re-index): the same SQL
 *    answers as B's REST API does, with the new writes, which A never saw; and again after
 *    `DROP SCHEMA` A (the re-index steps of docs/operations.md), which would drop views still on A.
 *
 * Reproduce a failure with the seed it prints: SEED=<n> npx vitest run test/views.test.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getAddress, toHex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { V2_RECORD_TYPE, type V2DelegationType } from "../core/v2";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { ask, indexedBlock } from "../devkit/ask";
import { installRegistries } from "../devkit/oracle";
import { waitFor } from "../devkit/processes";
import { chooseSeed } from "../devkit/random";
import { rpc } from "../devkit/rpc";
import { type Service, startService } from "../devkit/service";
import { ponderFinalityDepth } from "../ponder/ponder-0.16.10";
import type { ApiRecord } from "./helpers/compare-listings";
import { canonical, parseJsonExact } from "./helpers/json";
import { followPages } from "./helpers/pages";
import { docExample } from "./helpers/readme";
import { serviceRows } from "./helpers/rows";
import { SeededWrites } from "./helpers/seeded-writes";

const SEED = chooseSeed();
console.log(`[views] SEED=${SEED} (rerun with SEED=${SEED} npx vitest run test/views.test.ts)`);
const tag = (text: string) => `[SEED=${SEED}] ${text}`;

const CHAIN_ID = 31337;
/** Ponder's finality depth for the local chain. */
const FINALITY = BigInt(ponderFinalityDepth(31337));

let anvil: Anvil;
let writes: SeededWrites;
/** Both indexers' PGlite directory (their schemas side by side, as on one Postgres database). */
let pgliteDir: string;
const started: Service[] = [];

/** Rows of `sql` as the database's SQL clients see it (on PGlite only while no service runs). */
const query = (sql: string) => serviceRows(pgliteDir, sql);

/** A documented example on the test's chain: its `chain_id = 1` (the one there is) read as CHAIN_ID. */
function example(marker: string): string {
  const sql = docExample("docs/data-model.md", "sql", marker);
  const onChain = sql.replace(/chain_id = 1\b/g, `chain_id = ${CHAIN_ID}`);
  expect(onChain.match(new RegExp(`chain_id = ${CHAIN_ID}`, "g")), `${marker}: one chain_id = 1`).toHaveLength(1);
  return onChain.trim().replace(/;$/, "");
}

/** An example's rows, exact (numbers as bigints), the same from pg and PGlite: as one JSON text. */
async function exampleRows(marker: string): Promise<ApiRecord[]> {
  const [row] = await query(`SELECT coalesce(json_agg(q), '[]')::text AS rows FROM (\n${example(marker)}\n) q`);
  return parseJsonExact(String(row!.rows)) as ApiRecord[];
}

/** What the SQL and the REST API are compared on. */
type Answers = { v1InForce: string[]; v2PerDay: string[]; v2InForce: string[] };

const V1_IN_FORCE = "-- v1 delegations in force";
const PER_DAY = "-- v2 delegations made per day";
const V2_IN_FORCE = "-- v2 delegations in force";

/** The documented examples' answers through the views schema, as the REST API's records. */
async function sqlAnswers(): Promise<Answers> {
  const v1InForce = (await exampleRows(V1_IN_FORCE)).map((d) => ({
    type: d.type,
    vault: getAddress(d.vault as string),
    delegate: getAddress(d.delegate as string),
    // The table's zero address and 0 where they do not apply, the API's null.
    contract: d.type === "ALL" ? null : getAddress(d.contract as string),
    tokenId: d.type === "TOKEN" ? d.token_id : null,
  }));
  const perDay = (await exampleRows(PER_DAY)).map((r) => ({ day: r.day, count: r.count }));
  const v2InForce = (await exampleRows(V2_IN_FORCE)).map((d) => ({
    type: V2_RECORD_TYPE[d.delegation_type as V2DelegationType],
    from: getAddress(d.from as string),
    to: getAddress(d.to as string),
    contract: d.contract === null ? null : getAddress(d.contract as string),
    tokenId: d.token_id,
    delegationType: d.delegation_type,
    rights: d.rights,
    amount: d.amount,
    hash: d.hash,
  }));
  const sorted = (records: unknown[]) => records.map(canonical).sort();
  return { v1InForce: sorted(v1InForce), v2PerDay: sorted(perDay), v2InForce: sorted(v2InForce) };
}

/** Every wallet's whole `version` listing at the service, each delegation once (canonical records). */
async function everyListing(service: Service, version: "v1" | "v2"): Promise<string[]> {
  const inForce = new Set<string>();
  for (const wallet of writes.wallets()[version]) {
    const path = `/registry/${version}/${wallet}?chainId=${CHAIN_ID}`;
    const a = await ask(service.url, path, { headers: service.headers });
    expect(a.status, a.text).toBe(200);
    expect(a.block! >= writes.lastWriteBlock, tag("the listing reports the last write")).toBe(true);
    for (const r of parseJsonExact(a.text) as ApiRecord[]) inForce.add(canonical(r));
  }
  return [...inForce].sort();
}

/**
 * The same questions asked of a service's REST API: every wallet's v1 and v2 listings (the
 * delegations in force, each once), and the v2 history's enabling events by UTC day.
 */
async function restAnswers(service: Service): Promise<Answers> {
  const history = await followPages(() => service.url, `/registry/v2/history?chainId=${CHAIN_ID}&limit=1000`, {
    headers: service.headers,
  });
  expect(history.problems, tag("the v2 history's pages")).toEqual([]);
  const perDay = new Map<string, bigint>();
  for (const e of history.items as ApiRecord[]) {
    if (e.enable !== true) continue;
    const day = new Date(Number(e.blockTimestamp as bigint) * 1000).toISOString().slice(0, 10);
    perDay.set(day, (perDay.get(day) ?? 0n) + 1n);
  }
  return {
    v1InForce: await everyListing(service, "v1"),
    v2PerDay: [...perDay].map(([day, count]) => canonical({ day, count })).sort(),
    v2InForce: await everyListing(service, "v2"),
  };
}

/** `npm start` on a new schema, on the views schema's default, and once it has indexed every write. */
async function startIndexer(): Promise<Service> {
  // DATABASE_VIEWS_SCHEMA empty is unset: the default (startService gives each run views of its own otherwise).
  const service = await startService({
    rpc: { [CHAIN_ID]: anvil.url },
    env: { DATABASE_VIEWS_SCHEMA: "", PGLITE_DIR: pgliteDir },
  });
  started.push(service);
  await waitFor(
    `${service.schema} to index block ${writes.lastWriteBlock}`,
    async () => {
      const at = await indexedBlock({ serviceUrl: service.url, chainId: CHAIN_ID, headers: service.headers });
      return at !== undefined && at >= writes.lastWriteBlock ? true : undefined;
    },
    180_000,
  );
  return service;
}

/**
 * The SQL's answers while `service` runs (on PGlite, one process at a time, once it stopped),
 * compared with its REST API's; then `then` with those (before the service stops, on Postgres).
 */
async function sqlWhileServed(service: Service, then?: (rest: Answers) => Promise<void>): Promise<Answers> {
  const rest = await restAnswers(service);
  const pglite = !process.env.DATABASE_URL;
  if (pglite) await service.stop();
  const sql = await sqlAnswers();
  expect(sql, tag(`the documented SQL through the views schema, while ${service.schema} is indexed`)).toEqual(rest);
  await then?.(rest);
  if (!pglite) await service.stop();
  return sql;
}

beforeAll(async () => {
  pgliteDir = mkdtempSync(join(tmpdir(), "views-pglite-"));
  anvil = await startAnvil({ chainId: CHAIN_ID });
  const installed = await installRegistries(anvil.url);
  writes = await SeededWrites.on(anvil.url, SEED, installed);
  await writes.v2(80);
  await writes.v1(60, 6);
  // Past Ponder's finality depth: the first indexer backfills these writes.
  await rpc(anvil.url, "anvil_mine", [toHex(FINALITY + 5n)]);
});

afterAll(async () => {
  for (const service of started) await service.stop();
  await anvil?.stop();
  for (const dir of [pgliteDir, `${pgliteDir}-access`]) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the views schema", () => {
  it("the docs' SQL answers through it after npm start, and the same after a re-index on a new schema", async () => {
    const first = await startIndexer();
    const before = await sqlWhileServed(first);
    // Not a comparison of nothing.
    expect(before.v1InForce.length, tag("v1 delegations in force")).toBeGreaterThan(5);
    expect(before.v2PerDay.length, tag("days with v2 delegations made")).toBeGreaterThan(0);
    expect(before.v2InForce.length, tag("v2 delegations in force")).toBeGreaterThan(5);

    // Writes only the next indexer sees.
    await writes.v2(40);
    await writes.v1(30, 3);
    const second = await startIndexer();
    expect(second.schema, "a new DATABASE_SCHEMA").not.toBe(first.schema);
    const after = await sqlWhileServed(second, async (rest) => {
      // The documented re-index steps end with dropping the old schema: views still on it would go too.
      await query(`DROP SCHEMA "${first.schema}" CASCADE`);
      expect(await sqlAnswers(), tag(`after DROP SCHEMA ${first.schema}`)).toEqual(rest);
    });
    expect(after, tag("the views now answer from the new schema, with the writes the old one never saw")).not.toEqual(
      before,
    );
  });
});
