import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LoadRequest, runLoad } from "./load";

describe("runLoad (autocannon in its own process)", () => {
  let url: string;
  // Paths under /slow answer after 800 ms, the others at once.
  const server = createServer((req, res) => setTimeout(() => res.end("ok"), req.url!.startsWith("/slow") ? 800 : 0));
  beforeAll(async () => {
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

  const pages: LoadRequest[] = [
    { method: "GET", path: "/fast", group: "page 1" },
    { method: "GET", path: "/slow", group: "page 2" },
  ];
  const spec = (requests: LoadRequest[], untilAnsweredS?: number) => ({
    url,
    connections: 1,
    durationS: 0.3,
    warmupS: 0,
    headers: {},
    requests,
    ...(untilAnsweredS === undefined ? {} : { untilAnsweredS }),
  });

  it("ends a run at its duration, a group's slow answer still in flight", async () => {
    const result = await runLoad("pages", spec(pages));
    expect(Object.keys(result.groups)).toEqual(["page 1"]);
    expect(result.durationS).toBeLessThan(0.8);
  });

  it("with untilAnsweredS, goes on until every group has an answer, and no longer", async () => {
    const result = await runLoad("pages", spec(pages, 10));
    expect(Object.keys(result.groups).sort()).toEqual(["page 1", "page 2"]);
    expect(result.groups["page 2"]!.p50).toBeGreaterThanOrEqual(800);
    expect(result.durationS).toBeGreaterThanOrEqual(0.8);
    expect(result.durationS).toBeLessThan(3);
    expect(result.rps).toBeCloseTo(result.requests / result.durationS, 6);
  });

  it("with untilAnsweredS and no groups, goes on until the run has an answer", async () => {
    const result = await runLoad("slow", spec([{ method: "GET", path: "/slow" }], 10));
    expect(result.requests).toBeGreaterThanOrEqual(1);
    expect(result.p50).toBeGreaterThanOrEqual(800);
    expect(result.durationS).toBeLessThan(3);
  });
});
