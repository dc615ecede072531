/**
 * Answers across chains (docs/api.md, "Every chain at once"): `o.acrossChains` anvil chains of the
 * chain table, each with the real registries and a history of its own seeded into the indexer's
 * tables, one indexer on all of them and `npm run serve` over it; then v2 check all and a small
 * wallet's v2 listing asked with `chainId=all` at 64 connections, each after a hello run of its
 * own. Each answer is held to every chain's dataset: one entry per chain, by chain id, each that
 * chain's answer at a block past its seeded history.
 */
import type pg from "pg";
import { zeroHash } from "viem";
import { toJson } from "../api/http/json";
import { type V2CheckQuery, v2Check } from "../core/v2";
import { Rng } from "../devkit/random";
import type { Cleanup } from "./cleanup";
import { Dataset } from "./dataset";
import { afterHello, type HelloFigure, routeMeasurer, settle } from "./measure";
import type { BenchOptions } from "./options";
import { hotListing, query, type Route, rightsParam } from "./routes";
import { BULK_SIZES, CHAIN_ID, growDataset, startChain, startHello, startIndexer, startServe } from "./stack";
import type { Verified } from "./verify";

/** Chains of the chain table (core/chains.ts) the bench seeds, the local one first. */
const CHAIN_IDS = [CHAIN_ID, 1, 10, 56, 137, 8453, 42161, 43114, 100, 59144];

export type AcrossFigures = { chains: number; delegations: number; check: HelloFigure; smallListing: HelloFigure };

type Entry = { chainId: number; block?: number; answer?: unknown; problem?: unknown };

/** Why an answer across `datasets`' chains is wrong: each chain's entry must be `want(its dataset)`. */
function wrongAcross(datasets: readonly Dataset[], want: (data: Dataset) => unknown) {
  return (status: number, body: string): string | undefined => {
    if (status !== 200) return `expected 200, got ${status} ${body.slice(0, 300)}`;
    const { chains } = JSON.parse(body) as { chains: Entry[] };
    if (chains.length !== datasets.length) return `${chains.length} entries for ${datasets.length} chains`;
    for (const [i, data] of datasets.entries()) {
      const entry = chains[i]!;
      if (entry.chainId !== data.chainId) return `entry ${i} is not chain ${data.chainId}'s: ${toJson(entry)}`;
      if (entry.block === undefined || BigInt(entry.block) < data.blocks!.last)
        return `chain ${data.chainId}'s entry is not at a block past its seeded history: ${toJson(entry)}`;
      const [expected, got] = [JSON.stringify(JSON.parse(toJson(want(data)))), JSON.stringify(entry.answer)];
      if (got !== expected)
        return `chain ${data.chainId}: expected ${expected.slice(0, 200)}, got ${got.slice(0, 200)}`;
    }
    return undefined;
  };
}

/** v2 check all across every chain: each query a seeded delegation of one chain, or two of its wallets. */
function checkAcross(datasets: readonly Dataset[], count: number, rng: Rng): Route {
  const queries = Array.from({ length: count }, (): V2CheckQuery => {
    const data = rng.pick(datasets);
    const hits = data.v2Samples.get("all")!.items;
    if (rng.int(4) > 0 && hits.length > 0) return rng.pick(hits);
    return { kind: "all", from: rng.pick(data.wallets), to: rng.pick(data.wallets), rights: zeroHash };
  });
  const answer = (i: number) => (data: Dataset) => v2Check(queries[i]!).answer(data.v2EnabledAt());
  return {
    label: `v2 check all across ${datasets.length} chains`,
    requests: queries.map(({ from, to, rights }) => {
      const params = { chainId: "all", from, to, rights: rightsParam(rights) };
      return { method: "GET", path: `/registry/v2/check/all?${query(params)}` };
    }),
    wrong: (i, status, body) => wrongAcross(datasets, answer(i))(status, body),
    positive: (i) => datasets.some((data) => answer(i)(data) === true),
  };
}

/** The whole v2 listing across every chain of a small wallet (~10 delegations) of one chain. */
function smallListingAcross(datasets: readonly Dataset[]): Route {
  const wallets = datasets.flatMap((data) => [...data.bulkWallets].map(([wallet, hot]) => ({ data, wallet, hot })));
  const listed = (i: number) => (data: Dataset) =>
    data === wallets[i]!.data ? hotListing("v2", wallets[i]!.hot).map((d) => d.record) : [];
  const of = wallets.length.toLocaleString("en");
  return {
    label: `v2 listing across ${datasets.length} chains of a small wallet, one of ${of}`,
    requests: wallets.map(({ wallet }) => ({ method: "GET", path: `/registry/v2/${wallet}?chainId=all` })),
    wrong: (i, status, body) => wrongAcross(datasets, listed(i))(status, body),
  };
}

/** The figures across chains (see the module's head). */
export async function measureAcross(
  o: BenchOptions,
  cleanup: Cleanup,
  db: pg.Client,
  verified: Verified,
  log: (line: string) => void,
  /** `npm run serve`'s environment beside the bench's (bench/profile.ts profiles it). */
  serveEnv: NodeJS.ProcessEnv = {},
): Promise<AcrossFigures> {
  const blocks = Math.max(1, Math.round((o.blocks * o.acrossDelegations) / o.large));
  const chains = [];
  for (const chainId of CHAIN_IDS.slice(0, o.acrossChains))
    chains.push(await startChain(cleanup, { seedBlocks: blocks, chainId }));
  const service = await startIndexer(cleanup, chains);
  log(`across chains: one indexer ready on ${chains.length} fresh chains, ${blocks} blocks each to seed`);
  const datasets = chains.map(
    (chain, i) =>
      new Dataset(o.seed + 20 + i, {
        chainId: chain.id,
        wallets: Math.round(o.acrossDelegations / 2),
        samplesPerRoute: o.urlsPerRoute,
      }),
  );
  const bulk = Array.from(
    { length: Math.round(o.bulkWallets / chains.length) },
    (_, i) => BULK_SIZES[i % BULK_SIZES.length]!,
  );
  const v1 = Math.round(o.acrossDelegations * o.v1Share);
  for (const [i, data] of datasets.entries())
    await growDataset(
      db,
      service,
      data,
      { v2: o.acrossDelegations - v1, v1 },
      { both: [], bulk },
      chains[i]!.seedBlocks,
    );
  datasets.sort((a, b) => a.chainId - b.chainId);
  const delegations = datasets.reduce((sum, data) => sum + data.counts.v2 + data.counts.v1, 0);
  log(`across chains: seeded ${delegations.toLocaleString("en")} delegations over ${chains.length} chains`);
  const serve = await startServe(cleanup, service, `across-${process.pid}`, serveEnv);
  await settle(serve.url, service.headers, 600_000);
  const measure = afterHello(routeMeasurer(o, log, verified), await startHello(cleanup));
  const rng = new Rng(o.seed + 30);
  const check = await measure(serve.url, checkAcross(datasets, o.urlsPerRoute, rng), service.headers);
  const smallListing = await measure(serve.url, smallListingAcross(datasets), service.headers);
  return { chains: chains.length, delegations, check, smallListing };
}
