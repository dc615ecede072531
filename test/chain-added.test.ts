/**
 * Adding and removing a chain of a deployment whose chains are indexed apart (INDEX_CHAINS_APART,
 * Postgres: scripts/launcher/apart.ts). Two chains, each an anvil with the real registries and
 * seeded random writes of both versions, are indexed and answer; then the deployment is started
 * again with a third chain's RPC URL set, whose backfill is held (its RPC holds every eth_getLogs):
 * the first two answer as their contracts do as soon as the API is up, while the third is still
 * syncing; none of their registry rows is written again (every row keeps its `ctid` and `xmin`: a
 * row rewritten, or the chain indexed again, changes them). Once released, the added chain answers as its
 * contracts do. Then one chain's RPC URL is unset and the deployment started again: that chain is
 * `unsupported_chain`, the others answer, their rows untouched.
 *
 * Every write lies below Ponder's final block (ponder/ponder-0.16.10.ts, ponderFinalityDepth)
 * before the restarts: rows above it Ponder itself reverts and indexes again on any restart.
 *
 * Reproduce a failure with the seed it prints: SEED=<n> DATABASE_URL=… npx vitest run test/chain-added.test.ts
 */
import { type Address, getAddress, toHex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chainSchema } from "../core/plan";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { ask, indexedBlock } from "../devkit/ask";
import { type Oracle, report } from "../devkit/compare";
import { compareChecks } from "../devkit/compare-checks";
import { readLive } from "../devkit/database";
import { abis, addresses, installRegistries } from "../devkit/oracle";
import { waitFor } from "../devkit/processes";
import { chooseSeed, Rng } from "../devkit/random";
import { rpc } from "../devkit/rpc";
import { plainOutput, type Service, startService } from "../devkit/service";
import * as v1c from "../devkit/v1/checks";
import * as v2c from "../devkit/v2/checks";
import { expectProblem } from "./helpers/answers";
import { type RpcProxy, startRpcProxy } from "./helpers/rpc-proxy";
import { SeededWrites } from "./helpers/seeded-writes";

const SEED = chooseSeed();
console.log(`[chain-added] SEED=${SEED} (rerun with SEED=${SEED} npx vitest run test/chain-added.test.ts)`);
const tag = (text: string) => `[SEED=${SEED}] ${text}`;

/** Indexed from the start; added later (its backfill held); unset at the end. */
const FIRST = [31337, 10];
const ADDED = 56;
const REMOVED = 10;
const V1 = getAddress(addresses.v1.address);
const V2 = getAddress(addresses.v2.address);
/** Blocks mined past the last write: more than Ponder's finality depth (30) on these chains. */
const PAST_FINAL = 40;
/** Rows that change with every block by design (the chain's head and tip); the registries' are the rest. */
const PER_BLOCK_TABLES = ["chain_head", "chain_tip"];

type Run = { id: number; anvil: Anvil; writes: SeededWrites; oracles: { v1: Oracle; v2: Oracle } };

const refusal = process.env.DATABASE_URL ? undefined : "chains are indexed apart on Postgres (set DATABASE_URL)";

describe.runIf(!refusal)("a chain added to, then removed from, a deployment of chains apart", () => {
  const rng = new Rng(SEED);
  const runs = new Map<number, Run>();
  let service: Service;
  let proxy: RpcProxy;
  /** While set, the added chain's RPC holds every eth_getLogs until it is released. */
  let holding: Promise<void> | undefined;
  let release = () => {};

  beforeAll(async () => {
    for (const [i, id] of [...FIRST, ADDED].entries()) {
      const anvil = await startAnvil({ chainId: id, blockTime: 1 });
      await installRegistries(anvil.url);
      const writes = await SeededWrites.on(anvil.url, (SEED ^ (i * 0x9e3779b9)) >>> 0, { v1: V1, v2: V2 });
      await writes.v2(40);
      await writes.v1(20, 2);
      await rpc(anvil.url, "anvil_mine", [toHex(PAST_FINAL)]);
      const oracle = (registry: Address, version: "v1" | "v2"): Oracle => ({
        rpcUrl: anvil.url,
        serviceUrl: "",
        registry,
        abi: abis[version],
        chainId: id,
      });
      runs.set(id, { id, anvil, writes, oracles: { v1: oracle(V1, "v1"), v2: oracle(V2, "v2") } });
    }
    proxy = await startRpcProxy(runs.get(ADDED)!.anvil.url, async (calls) => {
      if (calls.some((c) => c.method === "eth_getLogs")) await holding;
      return undefined;
    });
    service = await startService({ rpc: rpcOf(FIRST), env: { INDEX_CHAINS_APART: "true" } });
    for (const id of FIRST) await indexedPast(id);
  }, 600_000);

  afterAll(async () => {
    release();
    await service?.stop();
    await proxy?.close();
    await Promise.all([...runs.values()].map((r) => r.anvil.stop()));
  });

  /** The chains' RPC URLs: the added chain's through the proxy. */
  const rpcOf = (ids: number[]) =>
    Object.fromEntries(ids.map((id) => [id, id === ADDED ? proxy.url : runs.get(id)!.anvil.url]));
  const seen = () =>
    plainOutput(service)
      .split("\n")
      .filter((line) => !line.includes("Indexed block"))
      .slice(-40)
      .join("\n");
  const indexedPast = (id: number, withinMs = 180_000) =>
    waitFor(
      tag(`chain ${id} indexed past its last write`),
      async () => {
        const at = await indexedBlock({ serviceUrl: service.url, chainId: id, headers: service.headers });
        return at !== undefined && at >= runs.get(id)!.writes.lastWriteBlock ? at : undefined;
      },
      withinMs,
      seen,
    );

  /** Random checks of both versions on chain `id`, each compared with its contract at the block the answer names. */
  async function expectContracts(id: number): Promise<void> {
    const r = runs.get(id)!;
    const at = { minBlock: r.writes.lastWriteBlock };
    const v2 = Array.from({ length: 120 }, () =>
      v2c.randomCheck(rng, r.writes.pools.v2, r.writes.generators.v2.history),
    );
    const v1 = Array.from({ length: 60 }, () =>
      v1c.randomCheck(rng, r.writes.pools.v1, r.writes.generators.v1.delegations, []),
    );
    for (const o of Object.values(r.oracles)) Object.assign(o, { serviceUrl: service.url, headers: service.headers });
    const a = await compareChecks(
      r.oracles.v2,
      v2c.v2Checks,
      v2,
      v2.map((s) => v2c.checkUrl(rng, id, s)),
      at,
    );
    const b = await compareChecks(
      r.oracles.v1,
      v1c.v1Checks,
      v1,
      v1.map((s) => v1c.checkUrl(rng, id, s)),
      at,
    );
    expect(a.mismatches.length, report(SEED, `chain ${id}: v2 checks`, a.mismatches)).toBe(0);
    expect(b.mismatches.length, report(SEED, `chain ${id}: v1 checks`, b.mismatches)).toBe(0);
    expect(a.positive + b.positive, tag(`chain ${id}: checks true`)).toBeGreaterThan(10);
  }

  /**
   * Every registry row of the chains' schemas, by table, as where it is and which transaction wrote
   * it (`ctid`, `xmin`) → the row. A chain indexed again into fresh tables may put equal rows at
   * equal places; never with the same `xmin`.
   */
  async function rowsOf(ids: number[]): Promise<Map<string, Map<string, string>>> {
    const rows = new Map<string, Map<string, string>>();
    for (const id of ids) {
      const schema = chainSchema(service.schema, id);
      const tables = await readLive(
        process.env.DATABASE_URL!,
        `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'
           AND table_name NOT LIKE '\\_%' AND NOT table_name = ANY($2)`,
        [schema, PER_BLOCK_TABLES],
      );
      expect(tables.length, tag(`registry tables in ${schema}`)).toBeGreaterThan(4);
      for (const { table_name } of tables) {
        const name = `"${schema}"."${String(table_name)}"`;
        const held = await readLive(
          process.env.DATABASE_URL!,
          `SELECT ctid::text || ' ' || xmin::text AS at, t::text AS row FROM ${name} t`,
        );
        rows.set(name, new Map(held.map((r) => [String(r.at), String(r.row)])));
      }
    }
    return rows;
  }

  /** Each table of `before` holds exactly the same rows at the same places now. */
  async function expectUntouched(before: Map<string, Map<string, string>>, ids: number[]): Promise<void> {
    const now = await rowsOf(ids);
    let rows = 0;
    for (const [name, held] of before) {
      const moved = [...held].filter(([at, row]) => now.get(name)?.get(at) !== row);
      expect(moved.length, tag(`${name}: rows moved or changed, e.g. ${JSON.stringify(moved.slice(0, 3))}`)).toBe(0);
      expect(now.get(name)?.size, tag(`${name}: rows`)).toBe(held.size);
      rows += held.size;
    }
    expect(rows, tag("registry rows compared")).toBeGreaterThan(100);
  }

  /** A check on chain `id` answered (any 200), whatever else the deployment is doing. */
  const answers = async (id: number) =>
    (
      await ask(service.url, `/registry/v2/check/all?chainId=${id}&from=${V1}&to=${V2}`, {
        headers: service.headers,
        reask: false,
      })
    ).status === 200;

  it("indexes only the added chain, the others answering as soon as the API is up; a removed one is unsupported", async () => {
    for (const id of FIRST) await expectContracts(id);
    const before = await rowsOf(FIRST);

    // Started again with a third chain, whose backfill is held.
    holding = new Promise((ok) => {
      release = ok;
    });
    const stoppedAt = Date.now();
    await service.child.stop();
    await service.restart("listening", rpcOf([...FIRST, ADDED]));
    const back = await waitFor(
      tag("the first chains to answer again"),
      async () => ((await Promise.all(FIRST.map(answers))).every(Boolean) ? Date.now() : undefined),
      120_000,
      seen,
    );
    console.log(`[chain-added] the first chains answered ${back - stoppedAt} ms after the deployment was stopped`);
    const added = JSON.parse((await ask(service.url, "/registry/chains", { headers: service.headers })).text) as {
      chainId: number;
      status: string;
    }[];
    expect(added.find((c) => c.chainId === ADDED)?.status, tag(JSON.stringify(added))).toBe("syncing");
    expect(await answers(ADDED), tag("the added chain answers before its backfill")).toBe(false);
    for (const id of FIRST) await expectContracts(id);
    await expectUntouched(before, FIRST);

    // Its backfill released: it catches up and answers as its contracts do.
    release();
    holding = undefined;
    await indexedPast(ADDED);
    await expectContracts(ADDED);
    await expectUntouched(before, FIRST);

    // Started again without one chain: it is not served; the others answer, their rows kept.
    const kept = [FIRST[0]!, ADDED];
    const keptRows = await rowsOf(kept);
    await service.child.stop();
    await service.restart("listening", rpcOf(kept));
    for (const id of kept) await indexedPast(id, 120_000);
    const gone = await ask(service.url, `/registry/v2/check/all?chainId=${REMOVED}&from=${V1}&to=${V2}`, {
      headers: service.headers,
    });
    expectProblem(gone, 400, "unsupported_chain");
    for (const id of kept) await expectContracts(id);
    await expectUntouched(keptRows, kept);
    // The removed chain's rows stay where they were, for a later return.
    await expectUntouched(new Map([...before].filter(([name]) => name.includes(`_${REMOVED}"`))), [REMOVED]);
  });
});
