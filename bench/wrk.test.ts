import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoadRequest } from "./load";
import { runWrk } from "./wrk";

/** What the server saw of each request: method, path, a header and the body. */
type Seen = { method: string; path: string; key?: string; body: string };

describe("runWrk (Debian's wrk)", () => {
  const seen: Seen[] = [];
  let url: string;
  const server = createServer((req: IncomingMessage, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on("end", () => {
      seen.push({ method: req.method!, path: req.url!, key: req.headers["x-api-key"] as string, body });
      res.writeHead(req.url!.startsWith("/missing") ? 404 : 200, { "Content-Type": "text/plain" });
      res.end("ok");
    });
  });
  beforeAll(async () => {
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

  it("sends every request of the list, with its method, headers and body, and counts the answers", async () => {
    const requests: LoadRequest[] = [
      ...Array.from({ length: 50 }, (_, i): LoadRequest => ({ method: "GET", path: `/check?i=${i}&q="a\\b"` })),
      { method: "POST", path: "/batch", body: '{"checks":[1,2],\n"note":"quoted \\" and \\\\"}' },
      { method: "GET", path: "/own", headers: { "x-api-key": "own-key" } },
    ];
    const result = await runWrk("test", {
      url,
      connections: 4,
      durationS: 1,
      warmupS: 0,
      headers: { "x-api-key": "spec-key" },
      requests,
    });
    // Every request of the list was sent as listed (the list cycles, so all of it in a second).
    const paths = new Set(seen.map((s) => s.path));
    for (const request of requests) expect(paths, request.path).toContain(request.path);
    const posted = seen.filter((s) => s.path === "/batch");
    expect(posted.length).toBeGreaterThan(0);
    for (const s of posted)
      expect(s).toEqual({ method: "POST", path: "/batch", key: "spec-key", body: requests[50]!.body });
    expect(new Set(seen.filter((s) => s.path === "/own").map((s) => s.key))).toEqual(new Set(["own-key"]));
    // Its figures are the server's count: what wrk counted answered, within the warm-up's none.
    expect(result.requests).toBeGreaterThan(100);
    expect(result.requests).toBeLessThanOrEqual(seen.length);
    expect(result.non2xx).toBe(0);
    expect(result.errors).toBe(0);
    expect(result.rps).toBeCloseTo(result.requests / result.durationS, 6);
    expect(result.p50).toBeGreaterThan(0);
    expect(result.p99).toBeGreaterThanOrEqual(result.p50!);
    expect(result.generatorCpu).toBeGreaterThan(0);
  });

  it("counts answers other than 2xx apart", async () => {
    const result = await runWrk("test", {
      url,
      connections: 2,
      durationS: 1,
      warmupS: 0,
      headers: {},
      requests: [
        { method: "GET", path: "/missing" },
        { method: "GET", path: "/found" },
      ],
    });
    expect(result.non2xx).toBeGreaterThan(0);
    expect(result.requests).toBeGreaterThan(0);
    expect(result.statuses).toEqual({ "2xx": result.requests, "non-2xx": result.non2xx });
  });
});
