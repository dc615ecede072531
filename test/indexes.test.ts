import { createHash } from "node:crypto";
import pg from "pg";
import { type Address, type Hex, zeroAddress, zeroHash } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHistoryStore, type HistoryStore, type PageRequest } from "../api/store/history-store";
import { createSqlStore, executeOver, type Store, StoreBusy, v1RowOf, v2RowOf } from "../api/store/store";
import { v1CheckKeys, v1InForce } from "../core/v1";
import { isAmountType, type V2DelegationType, v2Check } from "../core/v2";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { installRegistries } from "../devkit/oracle";
import { Rng } from "../devkit/random";
import { type Service, startService } from "../devkit/service";
import { CHECKPOINT_FIELDS, PONDER_STATE_TABLES } from "../ponder/ponder-0.16.10";
import { insertRows, type V1Emitted, type V2Emitted, v1Rows, v2Rows } from "./helpers/indexer-rows";
import type { Position } from "./helpers/position";

/**
 * Every read the API makes is an index lookup, never a scan: each of the store's and the history
 * store's statements is explained and run (EXPLAIN ANALYZE) with the planner's normal settings over
 * the tables Ponder created, filled with a realistic dataset and analyzed (on empty tables the
 * planner's choices prove nothing). No plan may scan an indexer table, every index probe of one must
 * name a wallet, vault, hash or contract (or, for the chain's history, a block range), and no read
 * may touch more rows than its bound: a handful for a check or a wallet's listing, and for a page
 * a few times its limit, at any depth of the history (the block asked, and the cursor).
 *
 * The dataset is a history of registry events, and the state tables are what the indexer makes of
 * it (test/helpers/indexer-rows.ts): the events, the state and the v1 change tables amount to the
 * same thing. It holds one v1 vault whose 10,000 delegations a single revokeAllDelegates voided:
 * its listing must not read them. Postgres only (PGlite belongs to the indexer's process, and its
 * planner is the same); PGlite's lack of statistics is played by copies never analyzed.
 */

const CHAIN = 31337;
/** The block the checkpoint names: after every synthetic row's. */
const HEAD = 1_000_000;
const BLOCK = CHECKPOINT_FIELDS.block;
const WALLETS = 3_000;
/** Bound on the rows of one table a read may touch: the busiest test wallet has a few dozen. */
const FEW = 100;
/** Blocks the history is read at: early, in the middle and late in it, and the newest. */
const DEPTHS = [150_000n, 320_000n, 700_000n, BigInt(HEAD)];

/** A pseudo-random lowercase address named by `seed` (the same in every run). */
const addr = (seed: string): Address => {
  const md5 = (text: string) => createHash("md5").update(text).digest("hex");
  return `0x${(md5(seed) + md5(`${seed}.`)).slice(0, 40)}`;
};
/** One of the WALLETS. */
const w = (i: number) => addr(`w${i}`);
/** One of 50 contracts. */
const contractNo = (i: number) => addr(`c${i % 50}`);
const BIG_VAULT = addr("big vault");
const TOKEN = addr("token");
/** A much-delegated wallet (a marketplace's hot wallet, say). */
const HOT = addr("hot wallet");

/** The indexer tables: no plan may scan them, every index probe must name a KEY. */
const TABLES = [
  "v2_delegation",
  "v1_delegation",
  "v1_vault_version",
  "v1_pair_version",
  "v2_event",
  "v1_event",
  "v1_delegation_change",
  "v1_version_change",
];
/** What an index probe must name: a wallet, vault, hash or contract, or (the chain's history) a block or time range. */
const KEY = /\b(hash|from|to|vault|delegate|revoked_delegate|contract|block_number|block_timestamp)\b/;

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

/** What is wrong with a plan: scans of an indexer table, and index probes that name no KEY. */
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
 * The dataset, on chain 31337, as the registries' events (a fixed seed: the same every run):
 * - v2: 30,000 delegations among 3,000 wallets over blocks 10,000–310,000 (each type in turn, 50
 *   contracts), a third written again (ERC20/ERC1155: a new amount), a tenth revoked later and half
 *   of those enabled again; a self-delegation of w(42); 1,000 revokes of what was never enabled;
 *   and TOKEN, a contract of 2,000 delegations of every type (750 on its token 42) from block
 *   400,000, a tenth revoked.
 * - v1: BIG_VAULT's 10,000 token delegations (3,000 to HOT, the rest to 2,000 wallets) from block
 *   100,000, all voided by one revokeAllDelegates at 200,000, then 7 new ones of which 5 stay in
 *   force (one to itself), and 2 incoming (one voided); 10,000 delegations among the wallets from
 *   120,000; revokeAllDelegates by two thirds of the wallets (once or twice) from 250,000 and a
 *   revokeDelegate or revokeSelf of half those pairs from 260,000; 10,000 more delegations from
 *   300,000 (one in 13 set false again); and HOT, the delegate of 2,000 wallets from 400,000.
 */
function dataset(): { v2: V2Emitted[]; v1: V1Emitted[] } {
  const rng = new Rng(0x1dea);
  const logs = new Map<number, number>();
  /** The next log position in `block`. */
  const at = (block: number): Position => {
    const logIndex = logs.get(block) ?? 0;
    logs.set(block, logIndex + 1);
    return { block: BigInt(block), logIndex };
  };
  const wallet = () => w(rng.int(WALLETS));

  const v2: V2Emitted[] = [];
  const TYPES: V2DelegationType[] = ["ALL", "CONTRACT", "ERC721", "ERC20", "ERC1155"];
  /** A v2 delegation's writes: enabled at `first`, then each of `later` [block, enabled] in turn. */
  const v2Writes = (
    key: Omit<V2Emitted, "block" | "logIndex" | "enable" | "amount">,
    first: number,
    later: [number, boolean, bigint?][],
  ) => {
    for (const [block, on, amount = 1000n] of [[first, true] as [number, boolean], ...later]) {
      const value = isAmountType(key.type) ? { amount: on ? amount : 0n } : { enable: on };
      v2.push({ ...at(block), ...key, ...value } as V2Emitted);
    }
  };
  for (let n = 0; n < 30_000; n++) {
    const type = TYPES[n % 5]!;
    const first = 10_000 + n * 10;
    const later: [number, boolean, bigint?][] = [];
    if (n % 3 === 1) later.push([first + 50_000 + (n % 1000), true, 2000n]);
    if (n % 10 === 1) later.push([first + 100_000, false]);
    if (n % 20 === 1) later.push([first + 150_000, true]);
    v2Writes(
      {
        type,
        from: n === 0 ? w(42) : wallet(),
        to: n === 0 ? w(42) : wallet(),
        rights: zeroHash,
        contract: type === "ALL" ? undefined : contractNo(n),
        tokenId: type === "ERC721" || type === "ERC1155" ? BigInt(n) : undefined,
      },
      first,
      later,
    );
  }
  for (let n = 0; n < 1_000; n++) {
    v2.push({ ...at(20_000 + n * 300), type: "ALL", from: wallet(), to: wallet(), rights: zeroHash, enable: false });
  }
  for (let i = 0; i < 2_000; i++) {
    const type = (["CONTRACT", "ERC20", "ERC721", "ERC1155"] as const)[i % 4]!;
    const tokenId = type === "ERC1155" || (type === "ERC721" && i % 8 === 2) ? 42n : BigInt(100_000 + i);
    const first = 400_000 + i * 20;
    v2Writes(
      {
        type,
        from: wallet(),
        to: wallet(),
        rights: zeroHash,
        contract: TOKEN,
        tokenId: type === "ERC721" || type === "ERC1155" ? tokenId : undefined,
      },
      first,
      i % 10 === 3 ? [[first + 5_000, false]] : [],
    );
  }

  const v1: V1Emitted[] = [];
  const delegateFor = (block: number, vault: Address, delegate: Address, n: number, value = true): V1Emitted => {
    const position = at(block);
    switch (n % 3) {
      case 0:
        return { ...position, kind: "DelegateForAll", vault, delegate, value };
      case 1:
        return { ...position, kind: "DelegateForContract", vault, delegate, contract: contractNo(n), value };
      default:
        return {
          ...position,
          kind: "DelegateForToken",
          vault,
          delegate,
          contract: contractNo(n),
          tokenId: BigInt(n),
          value,
        };
    }
  };
  const token = (block: number, vault: Address, delegate: Address, tokenId: number, value = true): V1Emitted => ({
    ...at(block),
    kind: "DelegateForToken",
    vault,
    delegate,
    contract: TOKEN,
    tokenId: BigInt(tokenId),
    value,
  });
  const revokeDelegate = (block: number, vault: Address, delegate: Address, bySelf = false): V1Emitted => ({
    ...at(block),
    kind: "RevokeDelegate",
    vault,
    sender: bySelf ? delegate : vault,
    revoked: delegate,
  });
  const revokeAll = (block: number, vault: Address): V1Emitted => ({ ...at(block), kind: "RevokeAllDelegates", vault });

  for (let n = 0; n < 10_000; n++)
    v1.push(token(100_000 + Math.floor(n / 100), BIG_VAULT, n < 3000 ? HOT : w(n % 2000), n));
  const early: [Address, Address][] = [];
  for (let n = 0; n < 10_000; n++) {
    const [vault, delegate] = [wallet(), wallet()];
    early.push([vault, delegate]);
    v1.push(delegateFor(120_000 + Math.floor(n / 10), vault, delegate, n));
  }
  v1.push(
    revokeAll(200_000, BIG_VAULT),
    revokeDelegate(200_000, BIG_VAULT, w(7)),
    { ...at(200_001), kind: "DelegateForAll", vault: BIG_VAULT, delegate: w(1), value: true },
    { ...at(200_001), kind: "DelegateForContract", vault: BIG_VAULT, delegate: w(2), contract: TOKEN, value: true },
    token(200_001, BIG_VAULT, w(3), 20001),
    { ...at(200_001), kind: "DelegateForAll", vault: BIG_VAULT, delegate: BIG_VAULT, value: true },
    token(200_002, BIG_VAULT, w(7), 20002),
    token(200_002, BIG_VAULT, w(4), 20003),
    token(200_002, BIG_VAULT, w(5), 20004),
    { ...at(200_003), kind: "DelegateForAll", vault: w(9), delegate: BIG_VAULT, value: true },
    { ...at(200_003), kind: "DelegateForAll", vault: w(10), delegate: BIG_VAULT, value: true },
    token(200_003, BIG_VAULT, w(4), 20003, false),
    revokeDelegate(200_004, BIG_VAULT, w(5)),
  );
  for (let i = 0; i < WALLETS; i++) {
    if (i % 3 >= 1) v1.push(revokeAll(250_000 + Math.floor(i / 10), w(i)));
    if (i % 3 === 2) v1.push(revokeAll(255_000 + Math.floor(i / 10), w(i)));
  }
  early.forEach(([vault, delegate], n) => {
    if (rng.chance(0.5)) v1.push(revokeDelegate(260_000 + Math.floor(n / 10), vault, delegate, rng.chance(0.5)));
  });
  for (let n = 0; n < 10_000; n++) {
    const [vault, delegate] = [wallet(), wallet()];
    v1.push(delegateFor(300_000 + Math.floor(n / 10), vault, delegate, n));
    if (n % 13 === 0) v1.push(delegateFor(350_000 + Math.floor(n / 10), vault, delegate, n, false));
  }
  for (let i = 0; i < 2_000; i++) {
    v1.push({ ...at(400_000 + i), kind: "DelegateForAll", vault: w(i), delegate: HOT, value: true });
  }
  return { v2, v1 };
}

/** Writes the dataset into the indexer's tables, moves the checkpoint to HEAD, and analyzes. */
async function fill(client: pg.Client, schema: string, { v2, v1 }: ReturnType<typeof dataset>) {
  const t = (name: string) => `"${schema}"."${name}"`;
  await insertRows(client, schema, new Map([...v2Rows(CHAIN, v2), ...v1Rows(CHAIN, v1)]));
  // One transaction: the same xmin, so the position is the checkpoint's block.
  await client.query("BEGIN");
  await client.query("SET LOCAL session_replication_role = replica");
  await client.query(`UPDATE ${t("chain_head")} SET last_event_block = ${HEAD} WHERE chain_id = ${CHAIN}`);
  const head = HEAD.toString().padStart(BLOCK.length, "0");
  await client.query(
    `UPDATE ${t(PONDER_STATE_TABLES.checkpoint)} SET latest_checkpoint = overlay(latest_checkpoint placing '${head}' ` +
      `from ${BLOCK.from} for ${BLOCK.length}) WHERE chain_id = ${CHAIN}`,
  );
  await client.query("COMMIT");
  for (const table of [...TABLES, "chain_head", PONDER_STATE_TABLES.checkpoint])
    await client.query(`ANALYZE ${t(table)}`);
}

/** A read to explain: its name, the read, and the rows of any one table it may touch (default FEW). */
type Read = { name: string; read: () => Promise<unknown>; bound?: number; hot?: true };

/** A page's bound: it stops at its limit in each of its `branches` (index ranges merged), skipping a few rows. */
const pageBound = (limit: number, branches: number) => 2 * branches * (limit + 1);

/** The page, which must be full and have more after it (a bound proves little on a short page). */
function full<T extends { items: unknown[]; more: boolean }>(page: T, limit: number, what: string): T {
  expect(page.items.length, `${what}: a full page`).toBe(limit);
  expect(page.more, `${what}: more after it`).toBe(true);
  return page;
}

describe.runIf(process.env.DATABASE_URL)("indexes", () => {
  let anvil: Anvil;
  let service: Service;
  let client: pg.Client;
  let store: Store;
  let history: HistoryStore;
  /** The wallet with the most v2 delegations. */
  let busiest: Address;
  let data: ReturnType<typeof dataset>;
  const explained: Explained[] = [];
  const t = (name: string) => `"${service.schema}"."${name}"`;

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

  /** Runs each statement, after explaining it (EXPLAIN ANALYZE) into `explained`. */
  const tracing = executeOver(async (sql, params) => {
    const result = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, params);
    const plan = (result.rows[0]["QUERY PLAN"] as { Plan: PlanNode }[])[0]!.Plan;
    explained.push({ query: sql, plan, text: render(plan) });
    return client.query(sql, params);
  });

  /** The position of the `n`-th event of `table` (of those matching `where`), oldest first. */
  async function nthEvent(table: string, n: number, where = "true"): Promise<Position> {
    const { rows } = await client.query(
      `SELECT block_number::text AS block, log_index FROM ${t(table)} WHERE chain_id = $1 AND ${where}
       ORDER BY block_number, log_index OFFSET $2 LIMIT 1`,
      [CHAIN, n],
    );
    return { block: BigInt(rows[0].block), logIndex: rows[0].log_index };
  }

  /** How many rows of `table` match `where` on the chain. */
  /** The timestamp of the newest block with a v2 event at or before `block`. */
  async function stampAt(block: bigint): Promise<bigint> {
    const { rows } = await client.query(
      `SELECT block_timestamp::text AS t FROM ${t("v2_event")} WHERE chain_id = $1 AND block_number <= $2
       ORDER BY block_number DESC LIMIT 1`,
      [CHAIN, block.toString()],
    );
    return BigInt(rows[0].t);
  }

  async function count(table: string, where: string): Promise<number> {
    const { rows } = await client.query(`SELECT count(*)::int AS n FROM ${t(table)} WHERE chain_id = $1 AND ${where}`, [
      CHAIN,
    ]);
    return rows[0].n;
  }

  beforeAll(async () => {
    anvil = await startAnvil();
    await installRegistries(anvil.url);
    service = await startService({ rpc: { [CHAIN]: anvil.url } });
    // Ponder has created its tables; stopped, it leaves them to be filled.
    await service.child.stop();
    client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    data = dataset();
    await fill(client, service.schema, data);
    busiest = (
      await client.query(
        `SELECT v FROM (SELECT "from" AS v FROM ${t("v2_delegation")} UNION ALL SELECT "to" FROM ` +
          `${t("v2_delegation")}) x GROUP BY v ORDER BY count(*) DESC LIMIT 1`,
      )
    ).rows[0].v;
    store = createSqlStore(tracing, service.schema);
    history = createHistoryStore(tracing, service.schema);
  });

  afterAll(async () => {
    await client?.end();
    await service?.stop();
    await anvil?.stop();
  });

  /**
   * Explains each read: what is wrong with their plans (scans, probes by chain alone, more rows of a
   * table than the read's bound), and the plans. `hot`: also the reads of keys with thousands of
   * rows, which only statistics tell.
   */
  async function checkReads(reads: Read[], hot: boolean): Promise<{ failures: string[]; report: string }> {
    const report: string[] = [];
    const failures: string[] = [];
    for (const { name, read, bound = FEW, hot: needsStatistics } of reads) {
      if (needsStatistics && !hot) continue;
      const { plans } = await traced(read);
      expect(plans, name).toHaveLength(1);
      const [{ query, plan, text }] = plans as [Explained];
      const counts = Object.fromEntries(TABLES.map((table) => [table, rowsRead(plan, table)]).filter(([, n]) => n));
      const wrong = [
        ...problems(plan),
        ...Object.entries(counts)
          .filter(([, n]) => Number(n) > bound)
          .map(([table, n]) => `${n} rows of ${table} (at most ${bound})`),
      ];
      report.push(`${name}: rows read ${JSON.stringify(counts)}\n${text}${wrong.length ? `\n${query}` : ""}`);
      failures.push(...wrong.map((problem) => `${name}: ${problem}`));
    }
    if (process.env.INDEXES_PLANS) console.log(report.join("\n\n"));
    return { failures, report: report.join("\n\n") };
  }

  /** Every kind of store read (the newest block's), on wallets and keys of the dataset. */
  async function storeReads(store: Store): Promise<Read[]> {
    const pair = (
      await client.query(
        `SELECT vault, delegate, contract, token_id::text FROM ${t("v1_delegation")} WHERE type = 'TOKEN' AND vault ` +
          `<> '${BIG_VAULT}' LIMIT 1`,
      )
    ).rows[0];
    const hashes = (await client.query(`SELECT hash FROM ${t("v2_delegation")} ORDER BY hash LIMIT 3`)).rows.map(
      (r) => r.hash as Hex,
    );
    const rights = zeroHash;
    const w42 = w(42);
    return [
      {
        name: "v2Enabled (a check)",
        read: () =>
          store.v2Enabled(
            CHAIN,
            v2Check({ kind: "erc1155", to: w42, from: busiest, rights, contract: TOKEN, tokenId: 1n }).hashes,
          ),
      },
      { name: "v2Enabled (known hashes)", read: () => store.v2Enabled(CHAIN, hashes) },
      { name: "v2Wallet", read: () => store.v2Wallet(CHAIN, w42) },
      { name: "v2Wallet (busiest)", read: () => store.v2Wallet(CHAIN, busiest) },
      { name: "v2Wallets", read: () => store.v2Wallets(CHAIN, [w42, w(7), busiest]) },
      {
        name: "v1InForce",
        read: () =>
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
      },
      {
        name: "v1InForce (big vault)",
        read: () =>
          store.v1InForce(
            CHAIN,
            v1CheckKeys({ kind: "token", vault: BIG_VAULT, delegate: w42, contract: TOKEN, tokenId: 42n }),
          ),
      },
      {
        name: "v1InForce (a hot delegate)",
        read: () =>
          store.v1InForce(
            CHAIN,
            v1CheckKeys({ kind: "token", vault: w42, delegate: HOT, contract: TOKEN, tokenId: 1n }),
          ),
        hot: true,
      },
      // 3,000 rows of this pair, all voided: the check probes its three keys.
      {
        name: "v1InForce (big vault, hot delegate)",
        read: () =>
          store.v1InForce(
            CHAIN,
            v1CheckKeys({ kind: "token", vault: BIG_VAULT, delegate: HOT, contract: TOKEN, tokenId: 42n }),
          ),
        hot: true,
      },
      { name: "v1Wallet", read: () => store.v1Wallet(CHAIN, w42) },
      { name: "v1Wallet (big vault)", read: () => store.v1Wallet(CHAIN, BIG_VAULT) },
      { name: "v1Wallet (a delegate of the big vault)", read: () => store.v1Wallet(CHAIN, w(5)) },
      { name: "v1Wallets", read: () => store.v1Wallets(CHAIN, [w42, BIG_VAULT, w(5)]) },
      { name: "chainStates", read: () => store.chainStates() },
    ];
  }

  /**
   * Every kind of history read (api/store/history-store.ts) at each depth of the history: checks and
   * whole listings at a block; pages of listings and of the events, first pages and pages after a
   * cursor deep in the list, each bound to a few times its limit.
   */
  async function historyReads(history: HistoryStore): Promise<Read[]> {
    const w42 = w(42);
    const whole = { from: 0n, to: BigInt(HEAD) };
    const page = (limit: number, after?: Position): PageRequest => ({ limit, after });
    const v2Events = await count("v2_event", "true");
    const v1Events = await count("v1_event", "true");
    const hotEvents = await count("v1_event", `(delegate = '${HOT}' OR vault = '${HOT}')`);
    const busiestEvents = await count("v2_event", `("from" = '${busiest}' OR "to" = '${busiest}')`);
    const hotRows = await count("v1_delegation_change", `delegate = '${HOT}'`);
    const tokenRows = await count("v1_delegation_change", `contract = '${TOKEN}'`);
    const reads: Read[] = [];
    for (const at of DEPTHS) {
      reads.push(
        {
          name: `v2Enabled (a check) at ${at}`,
          read: () =>
            history.v2Enabled(
              CHAIN,
              v2Check({ kind: "erc1155", to: w42, from: busiest, rights: zeroHash, contract: TOKEN, tokenId: 42n })
                .hashes,
              at,
            ),
        },
        {
          name: `v1InForce (big vault) at ${at}`,
          read: () =>
            history.v1InForce(
              CHAIN,
              v1CheckKeys({ kind: "token", vault: BIG_VAULT, delegate: HOT, contract: TOKEN, tokenId: 42n }),
              at,
            ),
        },
        { name: `v2Wallet at ${at}`, read: () => history.v2Wallet(CHAIN, w42, at, {}) },
        { name: `v2Wallet (busiest) at ${at}`, read: () => history.v2Wallet(CHAIN, busiest, at, {}) },
        { name: `v1Wallet at ${at}`, read: () => history.v1Wallet(CHAIN, w42, at, {}) },
        { name: `v1Wallet (a delegate of the big vault) at ${at}`, read: () => history.v1Wallet(CHAIN, w(5), at, {}) },
        { name: `v2Wallets at ${at}`, read: () => history.v2Wallets(CHAIN, [w42, w(7), busiest], at, 1_000) },
        { name: `v1Wallets at ${at}`, read: () => history.v1Wallets(CHAIN, [w42, w(7), w(5)], at, 1_000) },
        {
          // The big vault holds 10,000 in force early on, none once voided: read no more than asked.
          name: `v1Wallets (the big vault's first) at ${at}`,
          read: () => history.v1Wallets(CHAIN, [BIG_VAULT, w42], at, 100),
          bound: pageBound(100, 2),
        },
        {
          name: `v2Contract (a page) at ${at}`,
          read: () => history.v2Contract(CHAIN, contractNo(7), undefined, at, page(100)),
          bound: pageBound(100, 1),
        },
        {
          name: `v1Contract (a token's) at ${at}`,
          read: () => history.v1Contract(CHAIN, TOKEN, 20001n, at, page(100)),
        },
        {
          name: `v2Events (a wallet's, a page) at ${at}`,
          read: () => history.v2Events(CHAIN, busiest, { from: 0n, to: at }, page(5)),
          bound: pageBound(5, 2),
        },
        {
          // A moment just after the block's: the blocks with events nearest it, on each side.
          name: `eventSamples (a moment) at ${at}`,
          read: async () => history.eventSamples(CHAIN, (await stampAt(at)) + 1n),
        },
        {
          name: `v1Events (the chain's, a page) from ${at}`,
          read: () => history.v1Events(CHAIN, undefined, { from: at, to: BigInt(HEAD) }, page(100)),
          bound: pageBound(100, 1),
        },
      );
    }
    // Pages after a cursor at a tenth, half and nine tenths of a list (a full page short of its end).
    for (const share of [0.1, 0.5, 0.9]) {
      const nth = (events: number, limit: number) => Math.min(Math.floor(events * share), events - limit - 2);
      const hotWhere = `(delegate = '${HOT}' OR vault = '${HOT}')`;
      const busiestWhere = `("from" = '${busiest}' OR "to" = '${busiest}')`;
      const v2After = await nthEvent("v2_event", nth(v2Events, 100));
      const v1After = await nthEvent("v1_event", nth(v1Events, 100));
      const hotAfter = await nthEvent("v1_event", nth(hotEvents, 100), hotWhere);
      const busiestAfter = await nthEvent("v2_event", nth(busiestEvents, 10), busiestWhere);
      const depth = `${share * 100}% deep`;
      reads.push(
        {
          name: `v2Events (the chain's) ${depth}`,
          read: async () => full(await history.v2Events(CHAIN, undefined, whole, page(100, v2After)), 100, "v2Events"),
          bound: pageBound(100, 1),
        },
        {
          name: `v1Events (the chain's) ${depth}`,
          read: async () => full(await history.v1Events(CHAIN, undefined, whole, page(100, v1After)), 100, "v1Events"),
          bound: pageBound(100, 1),
        },
        {
          name: `v1Events (a hot wallet's) ${depth}`,
          read: async () => full(await history.v1Events(CHAIN, HOT, whole, page(100, hotAfter)), 100, "HOT's events"),
          bound: pageBound(100, 3),
        },
        {
          name: `v2Events (the busiest wallet's) ${depth}`,
          read: async () =>
            full(await history.v2Events(CHAIN, busiest, whole, page(10, busiestAfter)), 10, "the busiest's events"),
          bound: pageBound(10, 2),
        },
      );
    }
    reads.push(
      {
        name: "v1Events (a revoked delegate's)",
        read: () => history.v1Events(CHAIN, w(5), whole, page(100)),
      },
      {
        name: "v2Contract (TOKEN) 10% deep",
        read: async () =>
          full(
            await history.v2Contract(
              CHAIN,
              TOKEN,
              undefined,
              BigInt(HEAD),
              page(100, { block: 404_000n, logIndex: 0 }),
            ),
            100,
            "TOKEN's listing",
          ),
        bound: pageBound(100, 1),
      },
      {
        name: "v2Contract (TOKEN's token 42) 50% deep",
        read: async () =>
          full(
            await history.v2Contract(CHAIN, TOKEN, 42n, BigInt(HEAD), page(100, { block: 420_000n, logIndex: 0 })),
            100,
            "token 42's listing",
          ),
        bound: pageBound(100, 2),
      },
      {
        name: "v1Wallet (the big vault, all in force then) 50% deep",
        read: async () =>
          full(
            await history.v1Wallet(CHAIN, BIG_VAULT, 150_000n, page(100, { block: 100_050n, logIndex: 0 })),
            100,
            "the big vault's listing",
          ),
        bound: pageBound(100, 2),
      },
      {
        name: "v1Wallet (the big vault, its 10,000 voided)",
        read: () => history.v1Wallet(CHAIN, BIG_VAULT, BigInt(HEAD), page(100)),
        bound: 20,
      },
      {
        name: "v1Wallet (a hot delegate) 50% deep",
        read: async () =>
          full(
            await history.v1Wallet(CHAIN, HOT, BigInt(HEAD), page(100, { block: 401_000n, logIndex: 0 })),
            100,
            "HOT's listing",
          ),
        bound: pageBound(100, 2),
      },
      // A delegate's or a contract's page reads past the rows that revocations by their vaults voided
      // (whether a row is voided depends on its vault's version at the block asked: no index skips
      // them), as the store's listing of a delegate does at the head: here the 3,000 delegations to
      // HOT and the 10,000 on TOKEN that the big vault voided. Never more than the subject's own rows.
      {
        name: "v1Wallet (a hot delegate, first page)",
        read: async () => full(await history.v1Wallet(CHAIN, HOT, BigInt(HEAD), page(100)), 100, "HOT's listing"),
        bound: hotRows,
      },
      {
        name: "v1Contract (TOKEN, first page)",
        read: () => history.v1Contract(CHAIN, TOKEN, undefined, BigInt(HEAD), page(100)),
        bound: tokenRows,
      },
      {
        name: "v1Contract (a contract) 50% deep",
        read: async () =>
          full(
            await history.v1Contract(
              CHAIN,
              contractNo(7),
              undefined,
              320_000n,
              page(20, { block: 300_000n, logIndex: 0 }),
            ),
            20,
            "the contract's listing",
          ),
        bound: pageBound(20, 1),
      },
    );
    return reads;
  }

  it("serves every store read from index lookups by wallet, vault or hash", async () => {
    const { failures, report } = await checkReads(await storeReads(store), true);
    expect(failures, report).toEqual([]);
  });

  it("serves every history read from index scans that stop at the page's limit, at any depth of the \
history", async () => {
    const { failures, report } = await checkReads(await historyReads(history), true);
    expect(failures, report).toEqual([]);
  });

  /** A copy of the tables never analyzed (see below), made once. */
  let bare: string | undefined;
  async function bareSchema(): Promise<string> {
    if (bare) return bare;
    const schema = `${service.schema}_bare`;
    await client.query(`CREATE SCHEMA "${schema}"`);
    for (const table of [...Object.values(PONDER_STATE_TABLES), "chain_head", ...TABLES]) {
      await client.query(
        `CREATE TABLE "${schema}"."${table}" (LIKE ${t(table)} INCLUDING ALL) WITH (autovacuum_enabled = false)`,
      );
      await client.query(`INSERT INTO "${schema}"."${table}" SELECT * FROM ${t(table)}`);
    }
    bare = schema;
    return schema;
  }

  // PGlite never analyzes (no autovacuum, and Ponder analyzes only its sync tables): the planner
  // has row counts from table sizes and default selectivities only, the same for every key, so it
  // cannot tell a hot key (then it may probe by the smallest index that names a wallet, e.g. a
  // check by the delegate's rows rather than the pair's). Copies of the tables, never analyzed,
  // stand for that.
  it("serves every store read from index lookups without statistics too, as on PGlite", async () => {
    const schema = await bareSchema();
    const { rows } = await client.query(
      `SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 ` +
        `AND c.relkind = 'r' AND c.reltuples >= 0`,
      [schema],
    );
    expect(rows[0].n).toBe(0);
    const { failures, report } = await checkReads(await storeReads(createSqlStore(tracing, schema)), false);
    expect(failures, report).toEqual([]);
  });

  it("serves every history read from index scans that stop at the page's limit without statistics too", async () => {
    const schema = await bareSchema();
    const { failures, report } = await checkReads(await historyReads(createHistoryStore(tracing, schema)), false);
    expect(failures, report).toEqual([]);
  });

  /**
   * The state at block `at` by core/'s rules over the dataset's events up to it (as the indexer
   * would have left its state tables then): the v2 delegations enabled, and the v1 ones in force,
   * each as the API lists them, in list order, with what they are listed by.
   */
  function stateAt(at: bigint) {
    const upTo = <T extends Position>(events: T[]) => events.filter((e) => e.block <= at);
    const v2 = (v2Rows(CHAIN, upTo(data.v2)).get("v2_delegation") ?? [])
      .filter((d) => d.enabled)
      .sort(
        (a, b) =>
          Number(a.first_block) - Number(b.first_block) || Number(a.first_log_index) - Number(b.first_log_index),
      );
    const v1 = v1Rows(CHAIN, upTo(data.v1));
    const version = new Map(
      [...v1.get("v1_vault_version")!, ...v1.get("v1_pair_version")!].map((c) => [
        `${c.vault}|${c.delegate ?? ""}`,
        c.version as number,
      ]),
    );
    const v1InForceRows = v1
      .get("v1_delegation")!
      .filter(
        (d) =>
          d.enabled &&
          d.vault_version === (version.get(`${d.vault}|`) ?? 0) &&
          d.pair_version === (version.get(`${d.vault}|${d.delegate}`) ?? 0),
      )
      .sort(
        (a, b) =>
          Number(a.created_block) - Number(b.created_block) ||
          Number(a.created_log_index) - Number(b.created_log_index),
      );
    return { v2, v1: v1InForceRows };
  }

  /** A listing's items without their positions. */
  const listed = <T>(page: { items: (T & { position: Position })[] }) =>
    page.items.map(({ position: _, ...row }) => row);

  /** Every page of a read, `limit` at a time, following each page's last position: the items, and how many pages. */
  async function allPages<T>(
    read: (page: PageRequest) => Promise<{ items: (T & { position: Position })[]; more: boolean }>,
    limit: number,
  ) {
    const items: (T & { position: Position })[] = [];
    let pages = 0;
    for (let after: Position | undefined; ; pages++) {
      const page = await read({ limit, after });
      items.push(...page.items);
      if (!page.more) return { items: listed({ items }), pages: pages + 1 };
      after = page.items.at(-1)!.position;
    }
  }

  it("the history's answers at a block are the state the events up to it amount to, whole or in pages", async () => {
    // Not explained: thousands of statements.
    const history = createHistoryStore(
      executeOver((sql, params) => client.query(sql, params)),
      service.schema,
    );
    const wallets = [BIG_VAULT, HOT, busiest, ...[0, 1, 5, 7, 9, 10, 42, 1999, 2000, 2999].map(w)];
    const contracts: [Address, bigint | undefined][] = [
      [TOKEN, undefined],
      [TOKEN, 42n],
      [TOKEN, 20001n],
      [contractNo(7), undefined],
      [contractNo(7), 7n],
    ];
    let compared = 0;
    for (const at of DEPTHS) {
      const state = stateAt(at);
      for (const wallet of wallets) {
        const where = `${wallet} at ${at}`;
        const v2 = state.v2.filter((d) => d.from === wallet || d.to === wallet).map(v2RowOf);
        const v1 = state.v1.filter((d) => d.vault === wallet || d.delegate === wallet).map(v1RowOf);
        expect(listed(await history.v2Wallet(CHAIN, wallet, at, {})), `v2 ${where}`).toEqual(v2);
        expect(listed(await history.v1Wallet(CHAIN, wallet, at, {})), `v1 ${where}`).toEqual(v1);
        compared += v1.length + v2.length;
      }
      // All of them in one read, in the order asked (one twice), each whole: as the wallets' own.
      const asked = [...wallets.slice(3).reverse(), wallets[5]!, ...wallets.slice(0, 3)];
      for (const version of ["v2", "v1"] as const) {
        const one = (wallet: Address) =>
          version === "v2" ? history.v2Wallet(CHAIN, wallet, at, {}) : history.v1Wallet(CHAIN, wallet, at, {});
        const each = [];
        for (const wallet of asked) each.push((await one(wallet)).items);
        const most = each.reduce((sum, items) => sum + items.length, 0);
        const all = version === "v2" ? history.v2Wallets : history.v1Wallets;
        expect(await all(CHAIN, asked, at, most), `${version} wallets at ${at}`).toEqual({ lists: each, more: false });
        // One row fewer than they hold: more, and no more rows than that.
        const short = await all(CHAIN, asked, at, most - 1);
        expect(short.more, `${version} wallets at ${at}, one short`).toBe(true);
        expect(short.lists.flat().length, `${version} wallets at ${at}, one short`).toBe(most);
      }
      for (const [contract, tokenId] of contracts) {
        const where = `${contract} (token ${tokenId}) at ${at}`;
        const v2 = state.v2
          .filter(
            (d) =>
              d.contract === contract &&
              (tokenId === undefined || d.token_id === tokenId || d.delegation_type === "CONTRACT"),
          )
          .map(v2RowOf);
        const v1 = state.v1
          .filter(
            (d) =>
              d.contract === contract &&
              d.type !== "ALL" &&
              (tokenId === undefined || d.token_id === tokenId || d.type === "CONTRACT"),
          )
          .map(v1RowOf);
        expect(
          (await allPages((p) => history.v2Contract(CHAIN, contract, tokenId, at, p), 97)).items,
          `v2 ${where}`,
        ).toEqual(v2);
        expect(
          (await allPages((p) => history.v1Contract(CHAIN, contract, tokenId, at, p), 97)).items,
          `v1 ${where}`,
        ).toEqual(v1);
        compared += v1.length + v2.length;
      }
    }
    // Long lists in pages: each the whole list.
    const paged = [
      [
        await allPages((p) => history.v1Wallet(CHAIN, HOT, BigInt(HEAD), p), 333),
        listed(await history.v1Wallet(CHAIN, HOT, BigInt(HEAD), {})),
      ],
      [
        await allPages((p) => history.v1Wallet(CHAIN, BIG_VAULT, 150_000n, p), 777),
        listed(await history.v1Wallet(CHAIN, BIG_VAULT, 150_000n, {})),
      ],
      [
        await allPages((p) => history.v2Wallet(CHAIN, busiest, BigInt(HEAD), p), 7),
        listed(await history.v2Wallet(CHAIN, busiest, BigInt(HEAD), {})),
      ],
    ] as const;
    for (const [{ items, pages }, whole] of paged) {
      expect(pages).toBeGreaterThan(1);
      expect(items).toEqual(whole);
    }
    // The events, oldest first: the chain's, a range of them, and a wallet's in each role.
    const position = (e: Position) => `${e.block}:${e.logIndex}`;
    const ofEvents = (page: { blockNumber: bigint; logIndex: number }[]) =>
      page.map((e) => position({ block: e.blockNumber, logIndex: e.logIndex }));
    const sorted = <T extends Position>(events: T[]) =>
      [...events].sort((a, b) => (a.block === b.block ? a.logIndex - b.logIndex : a.block < b.block ? -1 : 1));
    const range = { from: 150_000n, to: 400_500n };
    const inRange = (e: Position) => e.block >= range.from && e.block <= range.to;
    const v1Of = (wallet: Address) => (e: V1Emitted) =>
      e.vault === wallet ||
      ("delegate" in e && e.delegate === wallet) ||
      ("revoked" in e && (e.revoked === wallet || e.sender === wallet));
    const v2Of = (wallet: Address) => (e: V2Emitted) => e.from === wallet || e.to === wallet;
    const events: [string, string[], string[]][] = [
      [
        "v2, the chain's",
        ofEvents(
          (await allPages((p) => history.v2Events(CHAIN, undefined, { from: 0n, to: BigInt(HEAD) }, p), 1000)).items,
        ),
        sorted(data.v2).map(position),
      ],
      [
        "v1, the chain's, in a range",
        ofEvents((await allPages((p) => history.v1Events(CHAIN, undefined, range, p), 1000)).items),
        sorted(data.v1.filter(inRange)).map(position),
      ],
      [
        "v1, HOT's",
        ofEvents((await allPages((p) => history.v1Events(CHAIN, HOT, { from: 0n, to: BigInt(HEAD) }, p), 500)).items),
        sorted(data.v1.filter(v1Of(HOT))).map(position),
      ],
      [
        "v1, w5's (a revoked delegate)",
        ofEvents((await allPages((p) => history.v1Events(CHAIN, w(5), range, p), 3)).items),
        sorted(data.v1.filter(inRange).filter(v1Of(w(5)))).map(position),
      ],
      [
        "v2, the busiest wallet's",
        ofEvents((await allPages((p) => history.v2Events(CHAIN, busiest, range, p), 4)).items),
        sorted(data.v2.filter(inRange).filter(v2Of(busiest))).map(position),
      ],
    ];
    for (const [what, got, want] of events) {
      expect(want.length, what).toBeGreaterThan(2);
      expect(got, what).toEqual(want);
    }
    expect(compared).toBeGreaterThan(5_000);
  });

  it("lists a vault whose 10,000 delegations one revokeAllDelegates voided without reading them", async () => {
    const [bigVault, token, w1, w2, w3, w7, w9] = [BIG_VAULT, TOKEN, w(1), w(2), w(3), w(7), w(9)];
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
    expect(before?.data?.some((row) => row.vault === vault)).toBe(true);
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
    const wallets = [BIG_VAULT, HOT, ...ids.map(w)];
    // Self-delegations are listed once.
    const selves = await client.query(
      `SELECT vault FROM ${t("v1_delegation")} WHERE vault = delegate AND vault_version = 0 AND pair_version = 0 AND ` +
        `enabled AND vault <> '${BIG_VAULT}' LIMIT 3`,
    );
    wallets.push(...selves.rows.map((r) => r.vault as Address));
    let listed = 0;
    for (const wallet of wallets) {
      const v1 = await store.v1Wallet(CHAIN, wallet);
      expect(v1?.data, wallet).toEqual(await v1Expected(wallet));
      const v2 = await store.v2Wallet(CHAIN, wallet);
      expect(v2?.data, wallet).toEqual(await v2Expected(wallet));
      listed += v1!.data!.length + v2!.data!.length;
    }
    expect(listed).toBeGreaterThan(200);
    // All at once, with a repeat: each wallet's list as alone, though rows name two of them.
    const bulk = [...wallets, wallets[2]!];
    const [v1s, v2s] = [await store.v1Wallets(CHAIN, bulk), await store.v2Wallets(CHAIN, bulk)];
    for (const [i, wallet] of bulk.entries()) {
      expect(v1s?.data[i], wallet).toEqual(await v1Expected(wallet));
      expect(v2s?.data[i], wallet).toEqual(await v2Expected(wallet));
    }
  });
});
