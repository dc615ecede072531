import { PgDialect } from "drizzle-orm/pg-core";
import pg from "pg";
import { type Address, type Hex, zeroAddress, zeroHash } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHECKPOINT_FIELDS } from "../api/ponder-0.16.10";
import { createSqlStore, type Store, StoreBusy, v1RowOf, v2RowOf } from "../api/store";
import { v1CheckKeys, v1InForce } from "../core/v1";
import { v2Check } from "../core/v2";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { installRegistries } from "../devkit/oracle";
import { type Service, startService } from "../devkit/service";

/**
 * Every read the API makes is an index lookup, never a scan: each of the store's statements is
 * explained and run (EXPLAIN ANALYZE) with the planner's normal settings over the tables Ponder
 * created, filled with a realistic dataset and analyzed (on empty tables the planner's choices
 * prove nothing). No plan may scan a delegation table, every index probe of one must name a
 * wallet, vault or hash (not the chain alone), and no read may touch more than a handful of rows.
 *
 * The dataset holds one v1 vault whose 10,000 delegations a single revokeAllDelegates voided: its
 * listing must not read them. Postgres only (PGlite belongs to the indexer's process, and its
 * planner is the same); PGlite's lack of statistics is played by copies never analyzed.
 */

const CHAIN = 31337;
/** The block the checkpoint names: after every synthetic row's. */
const HEAD = 1_000_000;
const BLOCK = CHECKPOINT_FIELDS.block;
const WALLETS = 3_000;
/** Bound on the rows of one table a read may touch: the busiest test wallet has a few dozen. */
const FEW = 100;

/** A pseudo-random lowercase address from a SQL text expression. */
const addr = (seed: string) => `('0x' || substr(md5(${seed}) || md5((${seed}) || '.'), 1, 40))`;
/** One of the WALLETS, by a SQL integer expression. */
const w = (i: string | number) => addr(`'w' || (${i})`);
/** A pseudo-random integer in [0, n) from a SQL text expression. */
const rand = (seed: string, n: number) => `mod(abs(hashtext(${seed})::bigint), ${n})`;
const BIG_VAULT = addr(`'big vault'`);
const TOKEN = addr(`'token'`);
/** A much-delegated wallet (a marketplace's hot wallet, say). */
const HOT = addr(`'hot wallet'`);
const ZERO = `'${zeroAddress}'`;

/** The delegation tables: no plan may scan them, every index probe must name a wallet, vault or hash. */
const TABLES = ["v2_delegation", "v1_delegation", "v1_vault_version", "v1_pair_version", "v2_event", "v1_event"];
const KEY = /\b(hash|from|to|vault|delegate)\b/;

type PlanNode = Record<string, unknown> & { "Node Type": string; Plans?: PlanNode[] };
type Explained = { query: string; plan: PlanNode; text: string };

function* nodes(plan: PlanNode): Generator<PlanNode> {
  yield plan;
  for (const child of plan.Plans ?? []) yield* nodes(child);
}

/** One line per node, with its conditions: enough to read a plan in a failure message. */
function render(plan: PlanNode, depth = 0): string {
  const pad = "  ".repeat(depth);
  const name = `${plan["Subplan Name"] ? `${plan["Subplan Name"]}: ` : ""}${plan["Node Type"]}`;
  const on =
    `${plan["Relation Name"] ? ` on ${plan["Relation Name"]}` : ""}` +
    `${plan["Index Name"] ? ` using ${plan["Index Name"]}` : ""}`;
  const removed = plan["Rows Removed by Filter"] ? ` removed=${plan["Rows Removed by Filter"]}` : "";
  const rows =
    plan["Actual Rows"] === undefined ? "" : ` (rows=${plan["Actual Rows"]} loops=${plan["Actual Loops"]}${removed})`;
  const details = ["Index Cond", "Recheck Cond", "Filter", "Join Filter", "Hash Cond"].filter(
    (k) => plan[k] !== undefined,
  );
  return [
    `${pad}${name}${on}${rows}`,
    ...details.map((k) => `${pad}    ${k}: ${plan[k]}`),
    ...(plan.Plans ?? []).map((p) => render(p, depth + 1)),
  ].join("\n");
}

/** The table of one of Ponder's index names (`<table>_<columns>_index`, `<table>_<columns>_pk`). */
const tableOfIndex = (name: string) =>
  TABLES.filter((t) => name.startsWith(`${t}_`)).sort((a, b) => b.length - a.length)[0];

/** What is wrong with a plan: scans of a delegation table, and index probes by chain alone. */
function problems(plan: PlanNode): string[] {
  const found: string[] = [];
  for (const node of nodes(plan)) {
    const type = node["Node Type"];
    const index = node["Index Name"] as string | undefined;
    const table =
      (node["Relation Name"] as string | undefined) ?? (index === undefined ? undefined : tableOfIndex(index));
    if (table === undefined || !TABLES.includes(table)) continue;
    // A bitmap heap scan reads the pages its bitmap index scans (children, checked) found.
    if (type === "Bitmap Heap Scan") continue;
    if (!["Index Scan", "Index Only Scan", "Bitmap Index Scan"].includes(type)) found.push(`${type} on ${table}`);
    else if (!KEY.test(String(node["Index Cond"] ?? "")))
      found.push(`${type} on ${table} using ${index} by ${node["Index Cond"] ?? "nothing"}`);
  }
  return found;
}

/** Rows of `table` a plan read, over all loops: those it kept and those its filters dropped. */
function rowsRead(plan: PlanNode, table: string): number {
  let read = 0;
  for (const node of nodes(plan)) {
    if (node["Relation Name"] !== table) continue;
    const dropped = Number(node["Rows Removed by Filter"] ?? 0) + Number(node["Rows Removed by Index Recheck"] ?? 0);
    read += (Number(node["Actual Rows"]) + dropped) * Number(node["Actual Loops"]);
  }
  return read;
}

/**
 * The dataset, on chain 31337 (written with triggers off: Ponder's reorg and live-query triggers
 * are the indexer's business):
 * - v2: 30,000 delegations among 3,000 wallets, a tenth revoked, and a self-delegation of w(42);
 * - v1: 20,000 delegations among the same wallets at assorted vault and pair versions (two thirds
 *   of the wallets have revoked all once or twice, half the pairs once); BIG_VAULT, with
 *   10,000 token delegations (3,000 to HOT, the rest to 2,000 wallets) all voided by one
 *   revokeAllDelegates, then 7 new ones at version 1 of which 5 are in force (one to itself), and
 *   2 incoming (one voided); and HOT, also the delegate of 2,000 wallets.
 */
async function fill(client: pg.Client, t: (name: string) => string) {
  await client.query("BEGIN");
  await client.query("SET LOCAL session_replication_role = replica");
  await client.query(`
    INSERT INTO ${t("v2_delegation")} (chain_id, hash, delegation_type, "from", "to", contract, token_id, rights,
      amount, enabled, first_block, first_log_index, updated_block, event_count)
    SELECT ${CHAIN}, '0x' || md5('h' || n) || md5('h.' || n), k.type,
      CASE WHEN n = 0 THEN ${w(42)} ELSE ${w(rand(`'f' || n`, WALLETS))} END,
      CASE WHEN n = 0 THEN ${w(42)} ELSE ${w(rand(`'t' || n`, WALLETS))} END,
      CASE WHEN k.type <> 'ALL' THEN ${addr(`'c' || n % 50`)} END,
      CASE WHEN k.type IN ('ERC721', 'ERC1155') THEN n END,
      '0x' || repeat('0', 64),
      CASE WHEN k.type IN ('ERC20', 'ERC1155') THEN CASE WHEN n % 10 = 1 THEN 0 ELSE 1000 END END,
      n % 10 <> 1, 1 + n / 10, n % 10, 1 + n / 10 + n % 7, 1 + n % 3
    FROM generate_series(0, 29999) n
    CROSS JOIN LATERAL (SELECT (ARRAY['ALL', 'CONTRACT', 'ERC721', 'ERC20', 'ERC1155'])[1 + n % 5] AS type) k`);

  const v1 = `INSERT INTO ${t("v1_delegation")} (chain_id, vault, delegate, type, contract, token_id, enabled,
    vault_version, pair_version, created_block, created_log_index, updated_block)`;
  await client.query(`
    ${v1}
    SELECT ${CHAIN}, ${w("x.v")}, ${w("x.d")}, x.type,
      CASE WHEN x.type = 'ALL' THEN ${ZERO} ELSE ${addr(`'c' || n`)} END,
      CASE WHEN x.type = 'TOKEN' THEN n ELSE 0 END, n % 13 <> 0,
      CASE WHEN n % 4 = 0 THEN 0 ELSE x.v % 3 END, n % 2, 300000 + n / 10, n % 10, 300000 + n / 10
    FROM generate_series(0, 19999) n
    CROSS JOIN LATERAL (SELECT ${rand(`'v' || n`, WALLETS)} AS v, ${rand(`'d' || n`, WALLETS)} AS d,
      (ARRAY['ALL', 'CONTRACT', 'TOKEN'])[1 + n % 3] AS type) x
    ON CONFLICT DO NOTHING`);
  await client.query(`
    INSERT INTO ${t("v1_vault_version")} (chain_id, vault, version, updated_block)
    SELECT ${CHAIN}, ${w("i")}, i % 3, 250000 FROM generate_series(0, ${WALLETS - 1}) i WHERE i % 3 <> 0`);
  await client.query(`
    INSERT INTO ${t("v1_pair_version")} (chain_id, vault, delegate, version, updated_block)
    SELECT DISTINCT ${CHAIN}, vault, delegate, 1, 250000 FROM ${t("v1_delegation")}
    WHERE ${rand("vault || delegate", 2)} = 0`);

  await client.query(`
    ${v1}
    SELECT ${CHAIN}, ${BIG_VAULT}, CASE WHEN n < 3000 THEN ${HOT} ELSE ${w("n % 2000")} END, 'TOKEN', ${TOKEN}, n,
      true, 0, 0, 100000 + n / 100, n % 100, 100000 + n / 100
    FROM generate_series(0, 9999) n`);
  await client.query(`INSERT INTO ${t("v1_vault_version")} VALUES (${CHAIN}, ${BIG_VAULT}, 1, 200000)`);
  await client.query(
    `INSERT INTO ${t("v1_pair_version")} VALUES (${CHAIN}, ${BIG_VAULT}, ${w(5)}, 1, 200000), (${CHAIN}, ` +
      `${BIG_VAULT}, ${w(7)}, 1, 200000)`,
  );
  await client.query(`
    ${v1} VALUES
      (${CHAIN}, ${BIG_VAULT}, ${w(1)}, 'ALL', ${ZERO}, 0, true, 1, 0, 200001, 0, 200001),
      (${CHAIN}, ${BIG_VAULT}, ${w(2)}, 'CONTRACT', ${TOKEN}, 0, true, 1, 0, 200001, 1, 200001),
      (${CHAIN}, ${BIG_VAULT}, ${w(3)}, 'TOKEN', ${TOKEN}, 20001, true, 1, 0, 200001, 2, 200001),
      (${CHAIN}, ${BIG_VAULT}, ${BIG_VAULT}, 'ALL', ${ZERO}, 0, true, 1, 0, 200001, 3, 200001),
      (${CHAIN}, ${BIG_VAULT}, ${w(7)}, 'TOKEN', ${TOKEN}, 20002, true, 1, 1, 200002, 0, 200002),
      (${CHAIN}, ${BIG_VAULT}, ${w(4)}, 'TOKEN', ${TOKEN}, 20003, false, 1, 0, 200002, 1, 200003),
      (${CHAIN}, ${BIG_VAULT}, ${w(5)}, 'TOKEN', ${TOKEN}, 20004, true, 1, 0, 200002, 2, 200002),
      (${CHAIN}, ${w(9)}, ${BIG_VAULT}, 'ALL', ${ZERO}, 0, true, 0, 0, 200003, 0, 200003),
      (${CHAIN}, ${w(10)}, ${BIG_VAULT}, 'ALL', ${ZERO}, 0, true, 0, 0, 200003, 1, 200003)`);

  await client.query(`
    ${v1}
    SELECT ${CHAIN}, ${w("i")}, ${HOT}, 'ALL', ${ZERO}, 0, true, i % 3, 0, 400000 + i, 0, 400000 + i
    FROM generate_series(0, 1999) i`);

  // One transaction: the same xmin, so the position is the checkpoint's block.
  await client.query(`UPDATE ${t("chain_head")} SET last_event_block = ${HEAD} WHERE chain_id = ${CHAIN}`);
  await client.query(
    `UPDATE ${t("_ponder_checkpoint")} SET latest_checkpoint = overlay(latest_checkpoint placing ` +
      `'${HEAD.toString().padStart(BLOCK.length, "0")}' from ${BLOCK.from} for ${BLOCK.length}) ` +
      `WHERE chain_id = ${CHAIN}`,
  );
  await client.query("COMMIT");
  for (const table of [
    "v2_delegation",
    "v1_delegation",
    "v1_vault_version",
    "v1_pair_version",
    "chain_head",
    "_ponder_checkpoint",
  ]) {
    await client.query(`ANALYZE ${t(table)}`);
  }
}

describe.runIf(process.env.DATABASE_URL)("indexes", () => {
  let anvil: Anvil;
  let service: Service;
  let client: pg.Client;
  let store: Store;
  const explained: Explained[] = [];
  const t = (name: string) => `"${service.schema}"."${name}"`;
  const value = async (expression: string) => (await client.query(`SELECT ${expression} AS v`)).rows[0].v as Address;

  /** `call`'s result and the plans of the statements it ran. */
  async function traced<T>(call: () => Promise<T>): Promise<{ result: T; plans: Explained[] }> {
    const before = explained.length;
    const result = await call();
    return { result, plans: explained.slice(before) };
  }

  /** The wallet's v1 delegations in force, by the rules of core/v1.ts over all its rows. */
  async function v1Expected(wallet: Address) {
    const { rows } = await client.query(
      `SELECT d.*, d.token_id::text AS token_id, vv.version AS vault_now, pv.version AS pair_now
       FROM ${t("v1_delegation")} d
       LEFT JOIN ${t("v1_vault_version")} vv USING (chain_id, vault)
       LEFT JOIN ${t("v1_pair_version")} pv USING (chain_id, vault, delegate)
       WHERE d.chain_id = $1 AND (d.vault = $2 OR d.delegate = $2)`,
      [CHAIN, wallet],
    );
    return rows
      .filter((r) =>
        v1InForce(
          {
            enabled: r.enabled,
            vaultVersion: r.vault_version,
            pairVersion: r.pair_version,
            createdBlock: 0n,
            createdLogIndex: 0,
          },
          { vault: r.vault_now ?? 0, pair: r.pair_now ?? 0 },
        ),
      )
      .sort((a, b) => Number(a.created_block) - Number(b.created_block) || a.created_log_index - b.created_log_index)
      .map(v1RowOf);
  }

  /** The wallet's enabled v2 delegations, from and to it, in first-enable order. */
  async function v2Expected(wallet: Address) {
    const { rows } = await client.query(
      `SELECT *, token_id::text AS token_id, amount::text AS amount FROM ${t("v2_delegation")}
       WHERE chain_id = $1 AND ("from" = $2 OR "to" = $2) AND enabled`,
      [CHAIN, wallet],
    );
    return rows
      .sort((a, b) => Number(a.first_block) - Number(b.first_block) || a.first_log_index - b.first_log_index)
      .map(v2RowOf);
  }

  /** A store over `schema` that explains (and runs) each statement it runs, into `explained`. */
  function tracingStore(schema: string): Store {
    const dialect = new PgDialect();
    return createSqlStore(async (query) => {
      const { sql, params } = dialect.sqlToQuery(query);
      const result = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, params);
      const plan = (result.rows[0]["QUERY PLAN"] as { Plan: PlanNode }[])[0]!.Plan;
      explained.push({ query: sql, plan, text: render(plan) });
      return client.query(sql, params);
    }, schema);
  }

  beforeAll(async () => {
    anvil = await startAnvil();
    await installRegistries(anvil.url);
    service = await startService({ rpc: { [CHAIN]: anvil.url } });
    // Ponder has created its tables; stopped, it leaves them to be filled.
    await service.child.stop();
    client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    await fill(client, t);

    store = tracingStore(service.schema);
  });

  afterAll(async () => {
    await client?.end();
    await service?.stop();
    await anvil?.stop();
  });

  /**
   * Every kind of store read, on wallets and keys of the dataset: what is wrong with their plans,
   * and the plans. `hot`: also the reads of keys with thousands of rows, which only statistics tell.
   */
  async function checkReads(store: Store, hot: boolean): Promise<{ failures: string[]; report: string }> {
    const w42 = await value(w(42));
    const w5 = await value(w(5));
    const bigVault = await value(BIG_VAULT);
    const token = await value(TOKEN);
    const hotWallet = await value(HOT);
    const busiest = await value(
      `(SELECT v FROM (SELECT "from" AS v FROM ${t("v2_delegation")} UNION ALL SELECT "to" FROM ` +
        `${t("v2_delegation")}) x GROUP BY v ORDER BY count(*) DESC LIMIT 1)`,
    );
    const pair = (
      await client.query(
        `SELECT vault, delegate, contract, token_id::text FROM ${t("v1_delegation")} WHERE type = 'TOKEN' AND vault ` +
          `<> ${BIG_VAULT} LIMIT 1`,
      )
    ).rows[0];
    const hashes = (await client.query(`SELECT hash FROM ${t("v2_delegation")} ORDER BY hash LIMIT 3`)).rows.map(
      (r) => r.hash as Hex,
    );
    const rights = zeroHash;

    const reads: [string, () => Promise<unknown>, "hot"?][] = [
      [
        "v2Enabled (a check)",
        () =>
          store.v2Enabled(
            CHAIN,
            v2Check({ kind: "erc1155", to: w42, from: busiest, rights, contract: token, tokenId: 1n }).hashes,
          ),
      ],
      ["v2Enabled (known hashes)", () => store.v2Enabled(CHAIN, hashes)],
      ["v2Wallet", () => store.v2Wallet(CHAIN, w42)],
      ["v2Wallet (busiest)", () => store.v2Wallet(CHAIN, busiest)],
      [
        "v1InForce",
        () =>
          store.v1InForce(
            CHAIN,
            v1CheckKeys({
              kind: "token",
              vault: pair.vault,
              delegate: pair.delegate,
              contract: pair.contract,
              tokenId: BigInt(pair.token_id),
            }),
          ),
      ],
      [
        "v1InForce (big vault)",
        () =>
          store.v1InForce(
            CHAIN,
            v1CheckKeys({ kind: "token", vault: bigVault, delegate: w42, contract: token, tokenId: 42n }),
          ),
      ],
      [
        "v1InForce (a hot delegate)",
        () =>
          store.v1InForce(
            CHAIN,
            v1CheckKeys({ kind: "token", vault: w42, delegate: hotWallet, contract: token, tokenId: 1n }),
          ),
        "hot",
      ],
      // 3,000 rows of this pair, all voided: the check probes its three keys.
      [
        "v1InForce (big vault, hot delegate)",
        () =>
          store.v1InForce(
            CHAIN,
            v1CheckKeys({ kind: "token", vault: bigVault, delegate: hotWallet, contract: token, tokenId: 42n }),
          ),
        "hot",
      ],
      ["v1Wallet", () => store.v1Wallet(CHAIN, w42)],
      ["v1Wallet (big vault)", () => store.v1Wallet(CHAIN, bigVault)],
      ["v1Wallet (a delegate of the big vault)", () => store.v1Wallet(CHAIN, w5)],
      ["chainStates", () => store.chainStates()],
    ];
    const report: string[] = [];
    const failures: string[] = [];
    for (const [name, read, kind] of reads) {
      if (kind === "hot" && !hot) continue;
      const { plans } = await traced(read);
      expect(plans, name).toHaveLength(1);
      const [{ query, plan, text }] = plans as [Explained];
      const counts = Object.fromEntries(TABLES.map((table) => [table, rowsRead(plan, table)]).filter(([, n]) => n));
      const wrong = [
        ...problems(plan),
        ...Object.entries(counts)
          .filter(([, n]) => Number(n) > FEW)
          .map(([table, n]) => `${n} rows of ${table}`),
      ];
      report.push(`${name}: rows read ${JSON.stringify(counts)}\n${text}${wrong.length ? `\n${query}` : ""}`);
      failures.push(...wrong.map((problem) => `${name}: ${problem}`));
    }
    if (process.env.INDEXES_PLANS) console.log(report.join("\n\n"));
    return { failures, report: report.join("\n\n") };
  }

  it("serves every store read from index lookups by wallet, vault or hash", async () => {
    const { failures, report } = await checkReads(store, true);
    expect(failures, report).toEqual([]);
  });

  // PGlite never analyzes (no autovacuum, and Ponder analyzes only its sync tables): the planner
  // has row counts from table sizes and default selectivities only, the same for every key, so it
  // cannot tell a hot key (then it may probe by the smallest index that names a wallet, e.g. a
  // check by the delegate's rows rather than the pair's). Copies of the tables, never analyzed,
  // stand for that.
  it("serves every store read from index lookups without statistics too, as on PGlite", async () => {
    const bare = `${service.schema}_bare`;
    await client.query(`CREATE SCHEMA "${bare}"`);
    for (const table of [
      "_ponder_meta",
      "_ponder_checkpoint",
      "chain_head",
      "v2_delegation",
      "v1_delegation",
      "v1_vault_version",
      "v1_pair_version",
    ]) {
      await client.query(
        `CREATE TABLE "${bare}"."${table}" (LIKE ${t(table)} INCLUDING ALL) WITH (autovacuum_enabled = false)`,
      );
      await client.query(`INSERT INTO "${bare}"."${table}" SELECT * FROM ${t(table)}`);
    }
    const { rows } = await client.query(
      `SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 ` +
        `AND c.relkind = 'r' AND c.reltuples >= 0`,
      [bare],
    );
    expect(rows[0].n).toBe(0);
    const { failures, report } = await checkReads(tracingStore(bare), false);
    expect(failures, report).toEqual([]);
  });

  it("lists a vault whose 10,000 delegations one revokeAllDelegates voided without reading them", async () => {
    const bigVault = await value(BIG_VAULT);
    const values: Address[] = [];
    for (const expression of [TOKEN, w(1), w(2), w(3), w(7), w(9)]) values.push(await value(expression));
    const [token, w1, w2, w3, w7, w9] = values as [Address, Address, Address, Address, Address, Address];
    const {
      rows: [{ voided }],
    } = await client.query(
      `SELECT count(*)::int AS voided FROM ${t("v1_delegation")} WHERE vault = $1 AND vault_version = 0`,
      [bigVault],
    );
    expect(voided).toBe(10_000);

    const { result, plans } = await traced(() => store.v1Wallet(CHAIN, bigVault));
    const [{ plan, text }] = plans as [Explained];
    expect(rowsRead(plan, "v1_delegation"), text).toBeLessThanOrEqual(20);
    expect(result?.indexedBlock).toBe(BigInt(HEAD));
    const out = (delegate: Address, type: "ALL" | "CONTRACT" | "TOKEN", contract: Address, tokenId: bigint) => ({
      type,
      vault: bigVault,
      delegate,
      contract,
      tokenId,
    });
    expect(result?.data).toEqual([
      out(w1, "ALL", zeroAddress, 0n),
      out(w2, "CONTRACT", token, 0n),
      out(w3, "TOKEN", token, 20001n),
      out(bigVault, "ALL", zeroAddress, 0n),
      out(w7, "TOKEN", token, 20002n),
      { type: "ALL", vault: w9, delegate: bigVault, contract: zeroAddress, tokenId: 0n },
    ]);
    expect(result?.data).toEqual(await v1Expected(bigVault));
  });

  // The rows a revokeAllDelegates voids are no longer read, so the vault's version row stands for
  // them: with one of the next block visible (PGlite shows a block's writes table by table, the
  // checkpoint last), the listing waits for the block rather than answer for the last one.
  it("waits for a revokeAllDelegates being written", async () => {
    const {
      rows: [{ vault }],
    } = await client.query(
      // One never revoked, with delegations in force and none to itself (whose rows it would read).
      `SELECT d.vault FROM ${t("v1_delegation")} d WHERE d.enabled AND d.vault_version = 0 AND d.pair_version = 0
         AND NOT EXISTS (SELECT 1 FROM ${t("v1_vault_version")} v WHERE v.vault = d.vault)
         AND NOT EXISTS (SELECT 1 FROM ${t("v1_pair_version")} p WHERE p.vault = d.vault AND p.delegate = d.delegate)
         AND NOT EXISTS (SELECT 1 FROM ${t("v1_delegation")} e WHERE e.vault = d.vault AND e.delegate = d.vault)
       LIMIT 1`,
    );
    const before = await store.v1Wallet(CHAIN, vault);
    expect(before?.data.some((row) => row.vault === vault)).toBe(true);
    const write = async (statement: string) => {
      await client.query("BEGIN");
      await client.query("SET LOCAL session_replication_role = replica"); // Ponder's triggers off
      await client.query(statement, [vault]);
      await client.query("COMMIT");
    };
    await write(`INSERT INTO ${t("v1_vault_version")} VALUES (${CHAIN}, $1, 1, ${HEAD + 1})`);
    try {
      await expect(store.v1Wallet(CHAIN, vault)).rejects.toThrow(StoreBusy);
    } finally {
      await write(`DELETE FROM ${t("v1_vault_version")} WHERE vault = $1`);
    }
    expect(await store.v1Wallet(CHAIN, vault)).toEqual(before);
  });

  it("lists exactly the delegations in force", async () => {
    const ids = [0, 1, 5, 7, 9, 10, 42, 1999, 2000, 2999, ...Array.from({ length: 20 }, (_, i) => 17 + i * 131)];
    const wallets = [await value(BIG_VAULT), await value(HOT)];
    for (const i of ids) wallets.push(await value(w(i)));
    // Self-delegations are listed once.
    const selves = await client.query(
      `SELECT vault FROM ${t("v1_delegation")} WHERE vault = delegate AND vault_version = 0 AND pair_version = 0 AND ` +
        `enabled AND vault <> ${BIG_VAULT} LIMIT 3`,
    );
    wallets.push(...selves.rows.map((r) => r.vault as Address));
    let listed = 0;
    for (const wallet of wallets) {
      const v1 = await store.v1Wallet(CHAIN, wallet);
      expect(v1?.data, wallet).toEqual(await v1Expected(wallet));
      const v2 = await store.v2Wallet(CHAIN, wallet);
      expect(v2?.data, wallet).toEqual(await v2Expected(wallet));
      listed += v1!.data.length + v2!.data.length;
    }
    expect(listed).toBeGreaterThan(200);
  });
});
