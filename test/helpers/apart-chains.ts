/**
 * Chains of a deployment that indexes them apart (INDEX_CHAINS_APART, Postgres): each an anvil
 * with the real registries and seeded random writes of both versions; its answers compared with
 * its contracts; its registry rows, where they are and which transaction wrote them, to tell rows
 * kept from rows written again.
 */
import { type Address, getAddress, toHex } from "viem";
import { expect } from "vitest";
import { chainSchema } from "../../core/plan";
import { type Anvil, startAnvil } from "../../devkit/anvil";
import { indexedBlock } from "../../devkit/ask";
import { type Oracle, report } from "../../devkit/compare";
import { compareChecks } from "../../devkit/compare-checks";
import { readLive } from "../../devkit/database";
import { abis, addresses, installRegistries } from "../../devkit/oracle";
import { waitFor } from "../../devkit/processes";
import type { Rng } from "../../devkit/random";
import { rpc } from "../../devkit/rpc";
import { plainOutput, type Service } from "../../devkit/service";
import * as v1c from "../../devkit/v1/checks";
import * as v2c from "../../devkit/v2/checks";
import { SeededWrites } from "./seeded-writes";

export const V1 = getAddress(addresses.v1.address);
export const V2 = getAddress(addresses.v2.address);
/** Blocks mined past the writes: more than Ponder's finality depth (30) on the chains the tests pose as. */
const PAST_FINAL = 40;
/** Rows that change with every block by design (the chain's head and tip); the registries' are the rest. */
const PER_BLOCK_TABLES = ["chain_head", "chain_tip"];

export type ApartChain = { id: number; anvil: Anvil; writes: SeededWrites; oracles: { v1: Oracle; v2: Oracle } };

/**
 * An anvil posing as chain `id` (a block every second) with the registries and seeded writes (`v2`
 * and `v1` transactions), then PAST_FINAL blocks: every write final once indexed.
 */
export async function writtenChain(id: number, seed: number, writes = { v2: 40, v1: 20 }): Promise<ApartChain> {
  const anvil = await startAnvil({ chainId: id, blockTime: 1 });
  await installRegistries(anvil.url);
  const written = await SeededWrites.on(anvil.url, seed, { v1: V1, v2: V2 });
  await written.v2(writes.v2);
  await written.v1(writes.v1, 2);
  await rpc(anvil.url, "anvil_mine", [toHex(PAST_FINAL)]);
  const oracle = (registry: Address, version: "v1" | "v2"): Oracle => ({
    rpcUrl: anvil.url,
    serviceUrl: "",
    registry,
    abi: abis[version],
    chainId: id,
  });
  return { id, anvil, writes: written, oracles: { v1: oracle(V1, "v1"), v2: oracle(V2, "v2") } };
}

/** Random checks of both versions on the chain, each equal to its contract's at the block the answer names. */
export async function expectContracts(service: Service, chain: ApartChain, rng: Rng, seed: number): Promise<void> {
  const { id, writes, oracles } = chain;
  const at = { minBlock: writes.lastWriteBlock };
  const v2 = Array.from({ length: 120 }, () => v2c.randomCheck(rng, writes.pools.v2, writes.generators.v2.history));
  const v1 = Array.from({ length: 60 }, () =>
    v1c.randomCheck(rng, writes.pools.v1, writes.generators.v1.delegations, []),
  );
  for (const o of Object.values(oracles)) Object.assign(o, { serviceUrl: service.url, headers: service.headers });
  const urls = { v2: v2.map((s) => v2c.checkUrl(rng, id, s)), v1: v1.map((s) => v1c.checkUrl(rng, id, s)) };
  const a = await compareChecks(oracles.v2, v2c.v2Checks, v2, urls.v2, at);
  const b = await compareChecks(oracles.v1, v1c.v1Checks, v1, urls.v1, at);
  expect(a.mismatches.length, report(seed, `chain ${id}: v2 checks`, a.mismatches)).toBe(0);
  expect(b.mismatches.length, report(seed, `chain ${id}: v1 checks`, b.mismatches)).toBe(0);
  expect(a.positive + b.positive, `[SEED=${seed}] chain ${id}: checks true`).toBeGreaterThan(10);
}

/** A chain schema's registry rows, by table: where each is and which transaction wrote it → the row. */
export type ChainRows = Map<string, Map<string, string>>;

/**
 * Every registry row of the chains' schemas (`schema`: the deployment's), by table, as `ctid` and
 * `xmin` → the row. A chain indexed again into fresh tables may put equal rows at equal places;
 * never with the same `xmin`.
 */
export async function rowsOf(schema: string, ids: number[]): Promise<ChainRows> {
  const rows: ChainRows = new Map();
  for (const id of ids) {
    const chain = chainSchema(schema, id);
    const tables = await readLive(
      process.env.DATABASE_URL!,
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'
         AND table_name NOT LIKE '\\_%' AND NOT table_name = ANY($2)`,
      [chain, PER_BLOCK_TABLES],
    );
    expect(tables.length, `registry tables in ${chain}`).toBeGreaterThan(4);
    for (const { table_name } of tables) {
      const name = `"${chain}"."${String(table_name)}"`;
      const held = await readLive(
        process.env.DATABASE_URL!,
        `SELECT ctid::text || ' ' || xmin::text AS at, t::text AS row FROM ${name} t`,
      );
      rows.set(name, new Map(held.map((r) => [String(r.at), String(r.row)])));
    }
  }
  return rows;
}

/** Each table of `before` holds exactly the same rows at the same places, written by the same transactions. */
export async function expectUntouched(schema: string, before: ChainRows, ids: number[], seed: number): Promise<void> {
  const now = await rowsOf(schema, ids);
  let rows = 0;
  for (const [name, held] of before) {
    const moved = [...held].filter(([at, row]) => now.get(name)?.get(at) !== row);
    const e = JSON.stringify(moved.slice(0, 3));
    expect(moved.length, `[SEED=${seed}] ${name}: rows moved or changed, e.g. ${e}`).toBe(0);
    expect(now.get(name)?.size, `[SEED=${seed}] ${name}: rows`).toBe(held.size);
    rows += held.size;
  }
  expect(rows, `[SEED=${seed}] registry rows compared`).toBeGreaterThan(50);
}

/** The service's last lines but the indexed blocks: what a failure's message shows. */
export const recentOutput = (service: Service) => () =>
  plainOutput(service)
    .split("\n")
    .filter((line) => !line.includes("Indexed block"))
    .slice(-40)
    .join("\n");

/** Waits until the service answers about chain `id` at `block` or later; the block it answers at. */
export const indexedPast = (service: Service, id: number, block: bigint, seed: number, withinMs = 180_000) =>
  waitFor(
    `[SEED=${seed}] chain ${id} indexed to block ${block}`,
    async () => {
      const at = await indexedBlock({ serviceUrl: service.url, chainId: id, headers: service.headers });
      return at !== undefined && at >= block ? at : undefined;
    },
    withinMs,
    recentOutput(service),
  );
