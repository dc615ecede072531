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
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ask } from "../devkit/ask";
import { waitFor } from "../devkit/processes";
import { chooseSeed, Rng } from "../devkit/random";
import { type Service, startService } from "../devkit/service";
import { BACKFILL_READ_MS } from "../scripts/launcher/indexer-notes";
import { expectProblem } from "./helpers/answers";
import {
  type ApartChain,
  expectContracts,
  expectUntouched,
  indexedPast as indexedPastOf,
  recentOutput,
  rowsOf,
  V1,
  V2,
  writtenChain,
} from "./helpers/apart-chains";
import { type RpcProxy, startRpcProxy } from "./helpers/rpc-proxy";

const SEED = chooseSeed();
console.log(`[chain-added] SEED=${SEED} (rerun with SEED=${SEED} npx vitest run test/chain-added.test.ts)`);
const tag = (text: string) => `[SEED=${SEED}] ${text}`;

/** Indexed from the start; added later (its backfill held); unset at the end. */
const FIRST = [31337, 10];
const ADDED = 56;
const REMOVED = 10;
const refusal = process.env.DATABASE_URL ? undefined : "chains are indexed apart on Postgres (set DATABASE_URL)";

describe.runIf(!refusal)("a chain added to, then removed from, a deployment of chains apart", () => {
  const rng = new Rng(SEED);
  const runs = new Map<number, ApartChain>();
  let service: Service;
  let proxy: RpcProxy;
  /** While set, the added chain's RPC holds every eth_getLogs until it is released. */
  let holding: Promise<void> | undefined;
  let release = () => {};

  beforeAll(async () => {
    for (const [i, id] of [...FIRST, ADDED].entries())
      runs.set(id, await writtenChain(id, (SEED ^ (i * 0x9e3779b9)) >>> 0));
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
  const seen = () => recentOutput(service)();
  const indexedPast = (id: number, withinMs?: number) =>
    indexedPastOf(service, id, runs.get(id)!.writes.lastWriteBlock, SEED, withinMs);

  /** A check on chain `id` answered (any 200), whatever else the deployment is doing. */
  const answers = async (id: number) =>
    (
      await ask(service.url, `/registry/v2/check/all?chainId=${id}&from=${V1}&to=${V2}`, {
        headers: service.headers,
        reask: false,
      })
    ).status === 200;

  /** The chain's backfill progress as /registry/chains tells it (its indexer's). */
  const backfillOf = async (id: number) => {
    const chains = JSON.parse((await ask(service.url, "/registry/chains", { headers: service.headers })).text) as {
      chainId: number;
      indexer: { backfill: { blocks: number; ofBlocks: number } | null } | null;
    }[];
    return chains.find((c) => c.chainId === id)?.indexer?.backfill;
  };

  it("indexes only the added chain, the others answering as soon as the API is up; a removed one is \
unsupported", async () => {
    for (const id of FIRST) await expectContracts(service, runs.get(id)!, rng, SEED);
    const before = await rowsOf(service.schema, FIRST);

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
    // Operators see its backfill's progress, read from its own Ponder (scripts/launcher/backfill.ts),
    // once that Ponder has started its sync: the first chains answer from the API's copy before the
    // three Ponders restarted together are up, and on two loaded cores (CI) they took over 25 s.
    const progress = await waitFor(
      tag("the added chain's backfill progress to be told"),
      async () => (await backfillOf(ADDED)) ?? undefined,
      BACKFILL_READ_MS + 90_000,
      seen,
    );
    expect(progress.ofBlocks, tag(JSON.stringify(progress))).toBeGreaterThan(0);
    expect(progress.blocks, tag(JSON.stringify(progress))).toBeLessThan(progress.ofBlocks);
    const metrics = (await ask(service.url, "/metrics")).text;
    expect(metrics).toContain(`delegation_chain_backfill_of_blocks{chain_id="${ADDED}"} ${progress.ofBlocks}\n`);
    for (const id of FIRST) await expectContracts(service, runs.get(id)!, rng, SEED);
    await expectUntouched(service.schema, before, FIRST, SEED);

    // Its backfill released: it catches up and answers as its contracts do.
    release();
    holding = undefined;
    await indexedPast(ADDED);
    await expectContracts(service, runs.get(ADDED)!, rng, SEED);
    await expectUntouched(service.schema, before, FIRST, SEED);
    // Live: no backfill to tell.
    await waitFor(
      tag("the added chain's backfill progress to be gone"),
      async () => ((await backfillOf(ADDED)) === null ? true : undefined),
      BACKFILL_READ_MS + 10_000,
      seen,
    );

    // Started again without one chain: it is not served; the others answer, their rows kept.
    const kept = [FIRST[0]!, ADDED];
    const keptRows = await rowsOf(service.schema, kept);
    await service.child.stop();
    await service.restart("listening", rpcOf(kept));
    for (const id of kept) await indexedPast(id, 120_000);
    const gone = await ask(service.url, `/registry/v2/check/all?chainId=${REMOVED}&from=${V1}&to=${V2}`, {
      headers: service.headers,
    });
    expectProblem(gone, 400, "unsupported_chain");
    for (const id of kept) await expectContracts(service, runs.get(id)!, rng, SEED);
    await expectUntouched(service.schema, keptRows, kept, SEED);
    // The removed chain's rows stay where they were, for a later return.
    await expectUntouched(
      service.schema,
      new Map([...before].filter(([name]) => name.includes(`_${REMOVED}"`))),
      [REMOVED],
      SEED,
    );
  });
});
