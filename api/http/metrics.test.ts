import { Hono } from "hono";
import { AggregatorRegistry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { ChainIndexer } from "../watch/chain-indexers";
import { countRequests, metricsRoute, processFigures, type WatchedChains } from "./metrics";

/** A text's samples (its lines but comments and blank ones). */
const samplesOf = (text: string) => text.split("\n").filter((line) => line && !line.startsWith("#"));

describe("countRequests", () => {
  it("counts each answer by the route pattern that gave it and its status, errors and misses included", async () => {
    const counted: string[] = [];
    const app = new Hono()
      .use(countRequests((route, status) => counted.push(`${route} ${status}`)))
      .get("/registry/v2/:wallet", (c) => (c.req.param("wallet") === "bad" ? c.text("no", 400) : c.text("ok")))
      .get("/boom", () => {
        throw new Error("boom");
      })
      .all("*", (c) => c.text("none", 404))
      .onError((_error, c) => c.text("failed", 500));
    for (const path of [
      "/registry/v2/0x1",
      "/registry/v2/0x2",
      "/registry/v2/bad",
      "/boom",
      "/elsewhere",
      "/else/where",
    ])
      await app.request(path);
    expect(counted).toEqual([
      "/registry/v2/:wallet 200",
      "/registry/v2/:wallet 200",
      "/registry/v2/:wallet 400",
      "/boom 500",
      "/* 404",
      "/* 404",
    ]);
  });
});

describe("processFigures", () => {
  it("lists a process that has answered nothing yet, at 0", async () => {
    const { registry } = processFigures({ pid: 7, rss: () => 10 });
    expect(samplesOf(await registry.metrics())).toEqual([
      "delegation_api_workers 1",
      "delegation_api_resident_memory_bytes 10",
      'delegation_api_process_requests_total{pid="7"} 0',
      'delegation_api_process_resident_memory_bytes{pid="7"} 10',
    ]);
  });

  it("reads the process's memory at each scrape", async () => {
    let rss = 10;
    const { registry } = processFigures({ pid: 7, rss: () => rss });
    await registry.metrics();
    rss = 25;
    expect(samplesOf(await registry.metrics())).toContain("delegation_api_resident_memory_bytes 25");
  });

  it("sums over processes as a cluster's primary does: counts label by label, memory, the processes", async () => {
    const a = processFigures({ pid: 912, rss: () => 1000 });
    const b = processFigures({ pid: 48, rss: () => 234 });
    for (let i = 0; i < 5; i++) a.countAnswer("/registry/v2/:wallet", 200);
    a.countAnswer("/registry/chains", 200);
    a.countAnswer("/registry/chains", 200);
    b.countAnswer("/registry/v2/:wallet", 200);
    b.countAnswer("/registry/v2/:wallet", 200);
    b.countAnswer('/x"y', 404);
    const sum = AggregatorRegistry.aggregate([
      await a.registry.getMetricsAsJSON(),
      await b.registry.getMetricsAsJSON(),
    ]);
    expect(samplesOf(await sum.metrics()).sort()).toEqual(
      [
        'delegation_api_requests_total{route="/registry/v2/:wallet",status="200"} 7',
        'delegation_api_requests_total{route="/registry/chains",status="200"} 2',
        'delegation_api_requests_total{route="/x\\"y",status="404"} 1',
        "delegation_api_workers 2",
        "delegation_api_resident_memory_bytes 1234",
        'delegation_api_process_requests_total{pid="912"} 7',
        'delegation_api_process_requests_total{pid="48"} 3',
        'delegation_api_process_resident_memory_bytes{pid="912"} 1000',
        'delegation_api_process_resident_memory_bytes{pid="48"} 234',
      ].sort(),
    );
  });
});

describe("metricsRoute", () => {
  const chain = (id: number) => ({ id, name: `c${id}`, title: `C${id}`, testnet: false });
  const watched: WatchedChains = {
    chains: [chain(1), chain(10), chain(137), chain(8453)],
    states: async () =>
      new Map([
        [1, { indexedBlock: 20_000_000n, ready: true, indexedTimestamp: 1_000 }],
        [10, { indexedBlock: 5n, ready: true, indexedTimestamp: 800 }],
        [8453, { indexedBlock: 9n, ready: true, indexedTimestamp: 800 }],
        // Its replay trails its primary too far: behind, however fresh its newest block.
        [
          137,
          {
            indexedBlock: 3n,
            ready: true,
            indexedTimestamp: 1_030,
            replication: { lagSeconds: 500, behindAfterSeconds: 60 },
          },
        ],
      ]),
    behindAfterSeconds: 120,
    alarmed: () => new Set([8453]),
    nowSeconds: () => 1_030,
  };
  const processes = processFigures({ pid: 912, rss: () => 1000 });
  processes.countAnswer("/registry/chains", 200);

  it("answers the processes' figures, then each chain's position, in Prometheus text", async () => {
    const res = await metricsRoute(() => processes.registry.metrics(), watched).request("/metrics");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const text = await res.text();
    expect(samplesOf(text)).toEqual([
      'delegation_api_requests_total{route="/registry/chains",status="200"} 1',
      "delegation_api_workers 1",
      "delegation_api_resident_memory_bytes 1000",
      'delegation_api_process_requests_total{pid="912"} 1',
      'delegation_api_process_resident_memory_bytes{pid="912"} 1000',
      'delegation_chain_indexed_block{chain_id="1"} 20000000',
      'delegation_chain_indexed_block{chain_id="10"} 5',
      'delegation_chain_indexed_block{chain_id="137"} 3',
      'delegation_chain_indexed_block{chain_id="8453"} 9',
      'delegation_chain_lag_seconds{chain_id="1"} 30',
      'delegation_chain_lag_seconds{chain_id="10"} 230',
      'delegation_chain_lag_seconds{chain_id="137"} 0',
      'delegation_chain_lag_seconds{chain_id="8453"} 230',
      'delegation_chain_ready{chain_id="1"} 1',
      'delegation_chain_ready{chain_id="10"} 1',
      'delegation_chain_ready{chain_id="137"} 1',
      'delegation_chain_ready{chain_id="8453"} 1',
      'delegation_chain_behind{chain_id="1"} 0',
      'delegation_chain_behind{chain_id="10"} 1',
      'delegation_chain_behind{chain_id="137"} 1',
      'delegation_chain_behind{chain_id="8453"} 0',
      'delegation_chain_reorganized{chain_id="1"} 0',
      'delegation_chain_reorganized{chain_id="10"} 0',
      'delegation_chain_reorganized{chain_id="137"} 0',
      'delegation_chain_reorganized{chain_id="8453"} 1',
    ]);
    expect(text.endsWith("\n")).toBe(true);
  });

  it("tells each chain's own indexer where chains are indexed apart: running, re-indexing, its RPC \
failing, backfilling", async () => {
    const at = (seconds: number) => new Date(seconds * 1000).toISOString();
    const backfill = { blocks: 250, ofBlocks: 1_000 };
    const indexer = (state: ChainIndexer["state"], since: number, failing: number | null): ChainIndexer => ({
      ...{ state, since: at(since), rpcFailingSince: failing === null ? null : at(failing) },
      ...{ detail: null, backfill: null },
    });
    const indexers = new Map<number, ChainIndexer>([
      [10, indexer("running", 900, 1_000)],
      [137, { ...indexer("reindexing", 1_020, null), backfill }],
      [8453, { ...indexer("waiting", 1_020, 1_020), detail: "no answer" }],
    ]);
    const res = await metricsRoute(async () => "", { ...watched, indexers: () => indexers }).request("/metrics");
    const samples = samplesOf(await res.text()).filter((s) => /indexer|reindexing|rpc_failing|backfill/.test(s));
    expect(samples).toEqual([
      'delegation_chain_indexer_running{chain_id="10"} 1',
      'delegation_chain_indexer_running{chain_id="137"} 1',
      'delegation_chain_indexer_running{chain_id="8453"} 0',
      'delegation_chain_reindexing{chain_id="10"} 0',
      'delegation_chain_reindexing{chain_id="137"} 1',
      'delegation_chain_reindexing{chain_id="8453"} 0',
      'delegation_chain_rpc_failing_seconds{chain_id="10"} 30',
      'delegation_chain_rpc_failing_seconds{chain_id="137"} 0',
      'delegation_chain_rpc_failing_seconds{chain_id="8453"} 10',
      'delegation_chain_backfill_blocks{chain_id="137"} 250',
      'delegation_chain_backfill_of_blocks{chain_id="137"} 1000',
    ]);
  });

  it("leaves out a chain's block and lag until its first position", async () => {
    const res = await metricsRoute(async () => "", { ...watched, states: async () => new Map() }).request("/metrics");
    const samples = samplesOf(await res.text());
    expect(samples.filter((s) => s.startsWith("delegation_chain_indexed_block"))).toEqual([]);
    expect(samples.filter((s) => s.startsWith("delegation_chain_lag_seconds"))).toEqual([]);
    expect(samples).toContain('delegation_chain_ready{chain_id="137"} 0');
  });

  it("declares each metric's type once, before its samples, which follow one another", async () => {
    const text = await (await metricsRoute(() => processes.registry.metrics(), watched).request("/metrics")).text();
    const lines = text.split("\n").filter((line) => line && !line.startsWith("# HELP"));
    const names = samplesOf(text).map((s) => /^[a-z_]+/.exec(s)![0]);
    for (const name of new Set(names)) {
      const declared = lines.filter((line) => line.startsWith(`# TYPE ${name} `));
      expect(declared, name).toHaveLength(1);
      const first = lines.indexOf(declared[0]!);
      const count = names.filter((n) => n === name).length;
      expect(
        lines.slice(first + 1, first + 1 + count).every((line) => line.startsWith(name)),
        name,
      ).toBe(true);
    }
  });

  it("is a 503 when the processes' figures cannot be had, not a sum that leaves a worker out", async () => {
    const res = await metricsRoute(() => Promise.reject(new Error("Operation timed out.")), watched).request(
      "/metrics",
    );
    expect(res.status).toBe(503);
    expect(await res.text()).not.toMatch(/^delegation_/m);
  });
});
