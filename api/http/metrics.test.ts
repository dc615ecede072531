import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { countRequests, metricsText, type RequestCounts, sumFigures } from "./metrics";

describe("countRequests", () => {
  it("counts each answer by the route pattern that gave it and its status, errors and misses included", async () => {
    const counts: RequestCounts = {};
    const app = new Hono()
      .use(countRequests(counts))
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
    expect(counts).toEqual({
      "/registry/v2/:wallet 200": 2,
      "/registry/v2/:wallet 400": 1,
      "/boom 500": 1,
      "/* 404": 2,
    });
  });
});

describe("sumFigures", () => {
  it("adds the processes' counts key by key, and their memory", () => {
    expect(
      sumFigures([
        { pid: 7, requests: { "/a 200": 2, "/a 404": 1 }, rssBytes: 10 },
        { pid: 8, requests: { "/a 200": 3, "/b 200": 4 }, rssBytes: 5 },
      ]),
    ).toEqual({ requests: { "/a 200": 5, "/a 404": 1, "/b 200": 4 }, rssBytes: 15 });
    expect(sumFigures([])).toEqual({ requests: {}, rssBytes: 0 });
  });
});

describe("metricsText", () => {
  const chain = (id: number) => ({ id, name: `c${id}`, title: `C${id}`, testnet: false });
  const text = metricsText({
    processes: [
      { pid: 912, requests: { "/registry/v2/:wallet 200": 5, "/registry/chains 200": 2 }, rssBytes: 1000 },
      { pid: 48, requests: { "/registry/v2/:wallet 200": 2, '/x"y 404': 1 }, rssBytes: 234 },
    ],
    chains: [chain(1), chain(10), chain(137), chain(8453)],
    states: new Map([
      [1, { indexedBlock: 20_000_000n, ready: true, indexedTimestamp: 1_000 }],
      [10, { indexedBlock: 5n, ready: true, indexedTimestamp: 800 }],
      [8453, { indexedBlock: 9n, ready: true, indexedTimestamp: 800 }],
    ]),
    nowSeconds: 1_030,
    behindAfterSeconds: 120,
    alarmed: new Set([8453]),
  });
  const samples = text.split("\n").filter((line) => line && !line.startsWith("#"));

  it("gives every sample once, with escaped labels, and ends with a newline", () => {
    expect(samples).toEqual([
      'delegation_api_requests_total{route="/registry/chains",status="200"} 2',
      'delegation_api_requests_total{route="/registry/v2/:wallet",status="200"} 7',
      'delegation_api_requests_total{route="/x\\"y",status="404"} 1',
      "delegation_api_workers 2",
      "delegation_api_resident_memory_bytes 1234",
      'delegation_api_process_requests_total{pid="48"} 3',
      'delegation_api_process_requests_total{pid="912"} 7',
      'delegation_api_process_resident_memory_bytes{pid="48"} 234',
      'delegation_api_process_resident_memory_bytes{pid="912"} 1000',
      'delegation_chain_indexed_block{chain_id="1"} 20000000',
      'delegation_chain_indexed_block{chain_id="10"} 5',
      'delegation_chain_indexed_block{chain_id="8453"} 9',
      'delegation_chain_lag_seconds{chain_id="1"} 30',
      'delegation_chain_lag_seconds{chain_id="10"} 230',
      'delegation_chain_lag_seconds{chain_id="8453"} 230',
      'delegation_chain_ready{chain_id="1"} 1',
      'delegation_chain_ready{chain_id="10"} 1',
      'delegation_chain_ready{chain_id="137"} 0',
      'delegation_chain_ready{chain_id="8453"} 1',
      'delegation_chain_behind{chain_id="1"} 0',
      'delegation_chain_behind{chain_id="10"} 1',
      'delegation_chain_behind{chain_id="137"} 0',
      'delegation_chain_behind{chain_id="8453"} 0',
      'delegation_chain_reorganized{chain_id="1"} 0',
      'delegation_chain_reorganized{chain_id="10"} 0',
      'delegation_chain_reorganized{chain_id="137"} 0',
      'delegation_chain_reorganized{chain_id="8453"} 1',
    ]);
    expect(text.endsWith("\n")).toBe(true);
  });

  it("declares each metric's type before its samples", () => {
    for (const name of new Set(samples.map((s) => /^[a-z_]+/.exec(s)![0]))) {
      const declared = text.indexOf(`# TYPE ${name} `);
      expect(declared, name).toBeGreaterThanOrEqual(0);
      expect(declared, name).toBeLessThan(text.indexOf(`\n${name}`));
    }
  });
});
