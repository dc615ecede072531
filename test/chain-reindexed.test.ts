/**
 * A reorganization deeper than the finality depth, on one chain of a deployment whose chains are
 * indexed apart (INDEX_CHAINS_APART, Postgres: scripts/launcher/reindex.ts). Two chains, each an
 * anvil with the real registries and seeded random writes of both versions. On one, writes on a
 * branch that Ponder then holds final, and a longer branch of other writes that replaces it: its
 * alarm is raised, the chain is refused (`503 chain_reorganized`, saying it is being re-indexed)
 * while it alone is indexed afresh (/registry/chains and /metrics say so), and then it answers as
 * its contracts do on the new branch. The other chain answers every check asked of it throughout,
 * its indexer running, and none of its registry rows is written again (`ctid` and `xmin`).
 *
 * Reproduce a failure with the seed it prints: SEED=<n> DATABASE_URL=… npx vitest run test/chain-reindexed.test.ts
 */
import { toHex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chainSchema } from "../core/plan";
import { revertChain, snapshotChain } from "../devkit/anvil";
import { ask } from "../devkit/ask";
import { readLive } from "../devkit/database";
import { waitFor } from "../devkit/processes";
import { chooseSeed, Rng } from "../devkit/random";
import { chainClient, rpc } from "../devkit/rpc";
import { plainOutput, type Service, startService } from "../devkit/service";
import { checkpointsSql } from "../ponder/ponder-0.16.10";
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

const SEED = chooseSeed();
console.log(`[chain-reindexed] SEED=${SEED} (rerun with SEED=${SEED} npx vitest run test/chain-reindexed.test.ts)`);
const tag = (text: string) => `[SEED=${SEED}] ${text}`;

/** The chain reorganized, and the one beside it. */
const HIT = 31337;
const BESIDE = 10;
/** Ponder's finality depth on chain HIT (ponder/ponder-0.16.10.ts, ponderFinalityDepth). */
const FINALITY = 30n;
const refusal = process.env.DATABASE_URL ? undefined : "chains are indexed apart on Postgres (set DATABASE_URL)";

describe.runIf(!refusal)("a deep reorganization on one chain of chains apart: that chain alone is re-indexed", () => {
  const rng = new Rng(SEED);
  const runs = new Map<number, ApartChain>();
  let service: Service;

  beforeAll(async () => {
    for (const [i, id] of [HIT, BESIDE].entries())
      runs.set(id, await writtenChain(id, (SEED ^ (i * 0x9e3779b9)) >>> 0, { v2: 30, v1: 15 }));
    const rpcUrls = Object.fromEntries([...runs.values()].map((r) => [r.id, r.anvil.url]));
    service = await startService({
      rpc: rpcUrls,
      env: { INDEX_CHAINS_APART: "true", REORG_CHECK_SECONDS: "2" },
    });
    for (const id of runs.keys()) await indexedPast(id, runs.get(id)!.writes.lastWriteBlock);
  }, 600_000);

  afterAll(async () => {
    await service?.stop();
    await Promise.all([...runs.values()].map((r) => r.anvil.stop()));
  });

  const seen = () => recentOutput(service)();
  const indexedPast = (id: number, block: bigint, withinMs?: number) =>
    indexedPastOf(service, id, block, SEED, withinMs);
  /** The block Ponder holds final on chain `id`, from its checkpoints. */
  const finalBlock = async (id: number) => {
    const [row] = await readLive(
      process.env.DATABASE_URL!,
      `SELECT finalized_block::text AS final FROM ${checkpointsSql(chainSchema(service.schema, id))} c`,
    );
    return BigInt(String(row?.final ?? 0));
  };
  /** Each chain's entry of /registry/chains: its status and its own indexer's state. */
  const chainStates = async () => {
    const a = await ask(service.url, "/registry/chains", { headers: service.headers });
    const entries = JSON.parse(a.text) as {
      chainId: number;
      status: string;
      indexer: Record<string, unknown> | null;
    }[];
    return new Map(entries.map((e) => [e.chainId, e]));
  };
  const check = (id: number) =>
    ask(service.url, `/registry/v2/check/all?chainId=${id}&from=${V1}&to=${V2}`, {
      headers: service.headers,
      reask: false,
    });

  it("refuses the reorganized chain while only it is re-indexed, then answers as its contracts; the other \
throughout", async () => {
    const hit = runs.get(HIT)!;
    const client = chainClient(hit.anvil.url);
    const beside = await rowsOf(service.schema, [BESIDE]);

    // The other chain is asked all through: every answer a 200.
    const besideAnswers: number[] = [];
    /** What the reorganized chain answered (status and problem code) while watched, in order. */
    const hitAnswers: string[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const [a, b] = await Promise.all([check(BESIDE), check(HIT)]);
        besideAnswers.push(a.status);
        const code = b.status === 200 ? "" : ` ${(JSON.parse(b.text) as { code?: string }).code}`;
        if (hitAnswers.at(-1) !== `${b.status}${code}`) hitAnswers.push(`${b.status}${code}`);
        await new Promise((ok) => setTimeout(ok, 250));
      }
    })();

    try {
      // Writes on a branch Ponder then holds final.
      const fork = await snapshotChain(hit.anvil.url);
      await hit.writes.v2(12);
      await hit.writes.v1(6, 1);
      await rpc(hit.anvil.url, "anvil_mine", [toHex(2n * FINALITY + 10n)]);
      const oldTip = await client.getBlockNumber();
      await indexedPast(HIT, oldTip);
      const oldLast = hit.writes.lastWriteBlock;
      await waitFor(
        tag(`Ponder to hold block ${oldLast} final`),
        async () => ((await finalBlock(HIT)) >= oldLast ? true : undefined),
        60_000,
        seen,
      );

      // A longer branch of other writes replaces it.
      await revertChain(hit.anvil.url, fork);
      hit.writes.forgetAfter(fork.block);
      await hit.writes.v2(12);
      await hit.writes.v1(6, 1);
      const now = await client.getBlockNumber();
      if (now < oldTip + 5n) await rpc(hit.anvil.url, "anvil_mine", [toHex(oldTip + 5n - now)]);

      // Refused, saying it is being re-indexed.
      await waitFor(
        tag("the chain refused while it is re-indexed"),
        async () => {
          const a = await check(HIT);
          return a.status === 503 && /chain_reorganized/.test(a.text) && /Re-indexing it since/.test(a.text)
            ? true
            : undefined;
        },
        60_000,
        seen,
      );
      // Operators see which chain is being indexed afresh, and that the other's indexer runs.
      // (noted as its Ponder starts again, just after the alarm says it is re-indexed).
      const during = await waitFor(
        tag("the chain's indexer noted re-indexing"),
        async () => {
          const states = await chainStates();
          return states.get(HIT)?.indexer?.state === "reindexing" ? states : undefined;
        },
        10_000,
        seen,
      );
      expect(during.get(HIT)?.status, tag(JSON.stringify([...during]))).toBe("reorganized");
      expect(during.get(BESIDE)?.status, tag(JSON.stringify([...during]))).toBe("live");
      expect(during.get(BESIDE)?.indexer, tag(JSON.stringify([...during]))).toMatchObject({
        state: "running",
        rpcFailingSince: null,
      });
      const metrics = (await ask(service.url, "/metrics")).text;
      expect(metrics, tag("/metrics")).toContain(`delegation_chain_reindexing{chain_id="${HIT}"} 1`);
      expect(metrics, tag("/metrics")).toContain(`delegation_chain_indexer_running{chain_id="${BESIDE}"} 1`);

      // Indexed afresh: it answers again, as its contracts do on the new branch.
      await waitFor(
        tag("the log to say the chain was indexed afresh"),
        async () => (/indexed afresh; its alarm is cleared/.test(plainOutput(service)) ? true : undefined),
        180_000,
        seen,
      );
      await indexedPast(HIT, hit.writes.lastWriteBlock, 60_000);
      // And the sampler saw it answer.
      await waitFor(
        tag("the sampler to see the chain answer"),
        async () => (hitAnswers.at(-1) === "200" ? true : undefined),
        10_000,
      );
    } finally {
      sampling = false;
      await sampler;
    }
    await expectContracts(service, hit, rng, SEED);
    await expectContracts(service, runs.get(BESIDE)!, rng, SEED);
    await waitFor(
      tag("the reorganized chain's indexer noted running again"),
      async () => ((await chainStates()).get(HIT)?.indexer?.state === "running" ? true : undefined),
      10_000,
      seen,
    );

    // Once refused, never a 200 until it was indexed afresh: 200s, then 503 chain_reorganized (and
    // perhaps chain_syncing as the copy loads it afresh), then 200s.
    console.log(`[chain-reindexed] the reorganized chain answered, in turn: ${hitAnswers.join(", ")}`);
    const refused = hitAnswers.indexOf("503 chain_reorganized");
    expect(refused, tag(`the reorganized chain's answers: ${hitAnswers.join(", ")}`)).toBeGreaterThan(0);
    const after = hitAnswers.slice(refused);
    expect(after.at(-1), tag(hitAnswers.join(", "))).toBe("200");
    expect(
      after.slice(0, -1).every((a) => a.startsWith("503 ")),
      tag(hitAnswers.join(", ")),
    ).toBe(true);
    // The other chain: answered every time, its rows kept.
    expect(besideAnswers.length, tag("checks of the other chain")).toBeGreaterThan(40);
    expect(
      besideAnswers.filter((s) => s !== 200),
      tag("the other chain's statuses"),
    ).toEqual([]);
    await expectUntouched(service.schema, beside, [BESIDE], SEED);
    expect(plainOutput(service), tag("only the reorganized chain was stopped")).not.toMatch(
      new RegExp(`chain ${BESIDE} \\([^)]*\\): (its indexer stopped|.*Indexing it afresh)`),
    );
  });
});
