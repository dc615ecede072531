/**
 * Answers sampled all through a reorganization: every answer equals what the contract says at the
 * block it reports, on the branch that was canonical then (the old one until the service follows
 * the new one, the new one after), or is refused 503 while the chain has replaced the indexed block.
 * An answer that matches neither branch at its X-Indexed-Block reports a block whose events it does
 * not hold.
 *
 * ERC20 amounts make the test sharp: each watched pair has one amount before the fork, another on
 * branch A and a third on branch B, so a half-reverted answer can pass for neither branch.
 * Moments (`timestamp`) asked on the old branch are asked again on the new one, stamped later: each
 * names the new branch's block, never one told by the old branch's headers.
 * On Postgres an API replica (npm run serve) is sampled beside the indexer's own API, which there
 * answers with a statement per request (INDEXER_IN_MEMORY=false): both stores are held to it.
 * The chain's new heads are heard on its WebSocket URL (PONDER_WS_URL_<id>), by Ponder and by the
 * replaced-head watcher; test/replaced-branch.test.ts holds the same to the polling without one.
 *
 * Reproduce a failure with the seed it prints: SEED=<n> npx vitest run test/reorg.test.ts
 */

import { type Address, toHex, zeroHash } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Anvil, revertChain, snapshotChain, startAnvil } from "../devkit/anvil";
import { ask } from "../devkit/ask";
import { abis, installRegistries } from "../devkit/oracle";
import { waitFor } from "../devkit/processes";
import { chooseSeed, Rng } from "../devkit/random";
import { callView, chainClient, rpc } from "../devkit/rpc";
import { sendWrite } from "../devkit/send";
import { plainOutput, type Replica, type Service, startReplica, startService } from "../devkit/service";
import { historyMismatches } from "./helpers/history";
import { blockStamps, momentProblem } from "./helpers/moments";

const SEED = chooseSeed();
console.log(`[reorg] SEED=${SEED} (rerun with SEED=${SEED} npx vitest run test/reorg.test.ts)`);
const tag = (text: string) => `[SEED=${SEED}] ${text}`;
const CHAIN_ID = 31337;
/** Requests in flight per sampled process. */
const SAMPLERS = 6;

/** `paused`: mining is paused, so the newest block may be asked too (see callView). */
type Query = { path: string; call: (block: bigint, paused?: boolean) => Promise<string> };
type Sample = { query: number; block: bigint; body: string; status: number; at: number };

describe("answers sampled during a reorganization", () => {
  let anvil: Anvil;
  let service: Service;
  let replica: Replica | undefined;
  let registries: { v1: Address; v2: Address };
  let accounts: Address[];
  const rng = new Rng(SEED);

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: CHAIN_ID });
    registries = await installRegistries(anvil.url);
    accounts = await chainClient(anvil.url).getAddresses();
    service = await startService({
      rpc: { [CHAIN_ID]: anvil.url },
      env: {
        [`PONDER_WS_URL_${CHAIN_ID}`]: anvil.url.replace(/^http/, "ws"),
        ...(process.env.DATABASE_URL && { INDEXER_IN_MEMORY: "false" }),
      },
    });
    // Given the chain's RPC: it reads headers to find a moment's block, as npm start's API does.
    if (process.env.DATABASE_URL) replica = await startReplica(service, { [`PONDER_RPC_URL_${CHAIN_ID}`]: anvil.url });
  });

  afterAll(async () => {
    await replica?.stop();
    await service?.stop();
    await anvil?.stop();
  });

  it("every answer equals the contract at its X-Indexed-Block on the branch canonical then, and none goes back to the \
old branch", async () => {
    const [vaultA, vaultB, ...others] = accounts.slice(1) as Address[];
    const delegates = others.slice(0, 6);
    const token = accounts[19]!;
    const v2 = (from: Address, fn: string, args: readonly unknown[]) =>
      sendWrite(anvil.url, abis.v2, from, registries.v2, fn, args);
    const v1 = (from: Address, fn: string, args: readonly unknown[]) =>
      sendWrite(anvil.url, abis.v1, from, registries.v1, fn, args);
    const amount = () => BigInt(1 + rng.int(1_000_000));

    // Watched: ERC20 amounts of (vault, delegate) pairs, and v1 delegations for all.
    const queries: Query[] = [];
    for (const vault of [vaultA!, vaultB!]) {
      for (const delegate of delegates) {
        queries.push({
          path: `/registry/v2/check/erc20?chainId=${CHAIN_ID}&from=${vault}&to=${delegate}&contract=${token}&rights=`,
          call: async (block, paused) =>
            String(
              await callView(
                anvil.url,
                abis.v2,
                registries.v2,
                "checkDelegateForERC20",
                [delegate, vault, token, zeroHash],
                block,
                paused,
              ),
            ),
        });
        queries.push({
          path: `/registry/v1/check/all?chainId=${CHAIN_ID}&delegate=${delegate}&vault=${vault}`,
          call: async (block, paused) =>
            String(
              await callView(
                anvil.url,
                abis.v1,
                registries.v1,
                "checkDelegateForAll",
                [delegate, vault],
                block,
                paused,
              ),
            ),
        });
      }
    }

    // Before the fork: every pair has an amount and a v1 delegation.
    for (const vault of [vaultA!, vaultB!]) {
      for (const delegate of delegates) {
        await v2(vault, "delegateERC20", [delegate, token, zeroHash, amount()]);
        await v1(vault, "delegateForAll", [delegate, true]);
      }
    }
    const processes = [service.url, ...(replica ? [replica.url] : [])];
    const indexedAt = async (base: string) => {
      const a = await ask(base, queries[0]!.path, { headers: service.headers, timeoutMs: 0, reask: false });
      return a.status === 200 ? (a.block ?? 0n) : undefined;
    };
    const untilEvery = (what: string, block: bigint) =>
      Promise.all(
        processes.map((base) =>
          waitFor(
            `${base} to index block ${block} (${what})`,
            async () => {
              const indexed = await indexedAt(base);
              return indexed !== undefined && indexed >= block ? indexed : undefined;
            },
            120_000,
          ),
        ),
      );

    const snapshot = await snapshotChain(anvil.url);
    const fork = snapshot.block;
    await untilEvery("the fork", fork);

    /** One branch's writes, a few per block over several blocks: new amounts and v1 revocations of each kind. */
    const branch = async (vault: Address) => {
      let head = 0n;
      const max = (b: bigint) => (head = b > head ? b : head);
      for (const delegate of delegates) max(await v2(vaultA!, "delegateERC20", [delegate, token, zeroHash, amount()]));
      for (const delegate of delegates) max(await v2(vaultB!, "delegateERC20", [delegate, token, zeroHash, amount()]));
      max(await v1(vault, "revokeDelegate", [rng.pick(delegates)]));
      max(await v1(rng.pick(delegates), "revokeSelf", [vault]));
      max(await v1(vault === vaultA ? vaultB! : vaultA!, "revokeAllDelegates", []));
      return head;
    };

    // Branch A, indexed live; the contract's answers on it are kept before it goes. Its last blocks
    // hold no event, 5 s apart: a moment among them is found by reading their headers.
    await branch(vaultA!);
    await rpc(anvil.url, "anvil_mine", [toHex(8), toHex(5)]);
    // Mining pauses until the revert, so that the answers kept cover branch A to its tip.
    await chainClient(anvil.url).setIntervalMining({ interval: 0 });
    const tipA = await chainClient(anvil.url).getBlockNumber();
    await untilEvery("branch A", tipA);
    const onA = await answersOn(queries, fork + 1n, tipA, true);
    // Moments from before the fork to A's tip, each answered at A's block: asked again on B below.
    const stamp = blockStamps(anvil.url);
    const [early, late] = await Promise.all([stamp(fork - 3n), stamp(tipA)]);
    const moments = Array.from({ length: 12 }, () => early + BigInt(rng.int(Number(late - early))));
    const blocksOnA = await atMoments(moments, true);

    // Sample every process from now until each has followed branch B well past A's head.
    const samples = new Map<string, Sample[]>(processes.map((p) => [p, []]));
    let sampling = true;
    const samplers = processes.flatMap((base) =>
      Array.from({ length: SAMPLERS }, async (_, worker) => {
        for (let i = worker; sampling; i += SAMPLERS) {
          const query = i % queries.length;
          const a = await ask(base, queries[query]!.path, { headers: service.headers, timeoutMs: 0, reask: false });
          samples.get(base)!.push({ query, status: a.status, body: a.text, block: a.block ?? -1n, at: Date.now() });
        }
      }),
    );

    try {
      await new Promise((ok) => setTimeout(ok, 1_000));
      await revertChain(anvil.url, snapshot);
      // B's blocks stamped 10 minutes later than A's at the same heights: a moment's block moves.
      await rpc(anvil.url, "evm_increaseTime", [toHex(600)]);
      const headB0 = await branch(vaultB!);
      const now = await chainClient(anvil.url).getBlockNumber();
      await rpc(anvil.url, "anvil_mine", [toHex(tipA > now ? tipA - now + 3n : 3n)]);
      const headB = await chainClient(anvil.url).getBlockNumber();
      expect(headB > tipA && headB >= headB0, tag("branch B is longer than A")).toBe(true);
      await untilEvery("branch B", headB);
      await new Promise((ok) => setTimeout(ok, 1_000));
      // However slow the machine (the suite runs files side by side), each process is sampled more
      // than 500 times: sampling goes on, on branch B, until it is.
      const counts = () => processes.map((p) => `${p}: ${samples.get(p)!.length}`).join(", ");
      await waitFor(
        "more than 500 answers sampled from every process",
        async () => processes.every((p) => samples.get(p)!.length > 500) || undefined,
        60_000,
        counts,
      );
    } finally {
      sampling = false;
      await Promise.all(samplers);
    }
    expect(plainOutput(service), tag("the indexer saw the reorganization")).toMatch(/Reorged block/);

    const headB = await chainClient(anvil.url).getBlockNumber();
    const lowest = [...samples.values()]
      .flat()
      .reduce((min, s) => (s.block >= 0n && s.block < min ? s.block : min), fork);
    const onB = await answersOn(queries, lowest, headB);
    for (const [base, taken] of samples) {
      const problems: string[] = [];
      let followedB = false;
      for (const s of taken) {
        const where = `${queries[s.query]!.path} at X-Indexed-Block ${s.block}`;
        // While the chain has replaced the indexed block, answers are refused until the service follows it.
        if (s.status === 503 && s.body.includes('"code":"chain_syncing"') && s.body.includes("replaced block"))
          continue;
        if (s.status !== 200) {
          problems.push(`${s.status} for ${where}: ${s.body}`);
          continue;
        }
        const b = onB.get(s.block)?.[s.query];
        // Up to the fork both branches are one chain.
        const a = s.block <= fork ? b : onA.get(s.block)?.[s.query];
        if (s.body !== a && s.body !== b)
          problems.push(
            `${where}: ${s.body}, branch A says ${a ?? "(no such block)"}, branch B ${b ?? "(no such block)"}`,
          );
        else if (s.body === b && s.body !== a) followedB = true;
        else if (followedB && s.body !== b)
          problems.push(`${where}: ${s.body}, branch A's answer after the process had answered from branch B`);
      }
      expect(taken.length, tag(`${base}: answers sampled`)).toBeGreaterThan(500);
      expect(followedB, tag(`${base}: followed branch B`)).toBe(true);
      expect(
        problems.slice(0, 10),
        tag(`${base}: ${problems.length} of ${taken.length} sampled answers wrong`),
      ).toEqual([]);
    }

    const history = await historyMismatches(service, anvil.url, registries);
    expect(history.mismatches, tag("history rows against the chain's logs after the reorganization")).toEqual([]);

    // The same moments on branch B: B's blocks at them (B is stamped later: most moved), B's answers there.
    const blocksOnB = await atMoments(moments);
    const moved = blocksOnB.filter((block, i) => block !== blocksOnA[i]).length;
    expect(
      moved,
      tag(`moments whose block differs between the branches: ${blocksOnA} then ${blocksOnB}`),
    ).toBeGreaterThan(0);

    /**
     * Each process's answer at each moment (to a query taken in turn), held to the chain as it is
     * now: the block named is the newest stamped at or before the moment, the answer the contract's
     * there. The blocks named, in order (every process must name the same).
     */
    async function atMoments(at: bigint[], paused = false): Promise<bigint[]> {
      const problems: string[] = [];
      const named: bigint[] = [];
      for (const base of processes)
        for (const [i, timestamp] of at.entries()) {
          const query = queries[i % queries.length]!;
          const a = await ask(base, `${query.path}&timestamp=${timestamp}`, { headers: service.headers, reask: false });
          const problem = await momentProblem(stamp, a, timestamp, (block) => query.call(block, paused));
          if (problem !== undefined) problems.push(`${base}${problem}`);
          else if (base === processes[0]) named.push(a.block!);
          else if (named[i] !== a.block)
            problems.push(`${base}${a.path}: block ${a.block}, the first process ${named[i]}`);
        }
      expect(problems, tag("answers at moments")).toEqual([]);
      return named;
    }

    /** The contract's answer to every query at every block of [from, to], on the chain as it is now. */
    async function answersOn(all: Query[], from: bigint, to: bigint, paused = false): Promise<Map<bigint, string[]>> {
      const out = new Map<bigint, string[]>();
      for (let block = from; block <= to; block++)
        out.set(block, await Promise.all(all.map((q) => q.call(block, paused))));
      return out;
    }
  });
});
