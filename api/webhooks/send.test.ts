import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { delivered, postWebhook, RETRY_SCHEDULE_MS, retryAfter } from "./send";

/** A receiver on loopback answering each request as `answer` says, keeping what it was sent. */
let server: Server;
let base: string;
const received: { headers: IncomingMessage["headers"]; body: string }[] = [];
const answers: Record<string, (res: ServerResponse) => void> = {
  "/ok": (res) => res.writeHead(204).end(),
  "/fail": (res) => res.writeHead(500).end("down"),
  "/gone": (res) => res.writeHead(410).end(),
  "/redirect": (res) => res.writeHead(302, { Location: "/ok" }).end(),
  "/slow": () => {},
  "/huge": (res) => {
    res.writeHead(200);
    const chunk = Buffer.alloc(64 * 1024, 120);
    // Far more than is read: the sender stops reading, and the receiver's writes fail.
    const write = () => {
      for (let i = 0; i < 64; i++) if (!res.write(chunk)) return res.once("drain", write);
      res.end();
    };
    res.on("error", () => {});
    write();
  },
};

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      answers[req.url!]!(res);
    });
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

const post = (path: string, extra: { allowPrivate?: boolean; timeoutMs?: number; url?: string } = {}) =>
  postWebhook({
    url: extra.url ?? `${base}${path}`,
    headers: { "webhook-id": "msg_1" },
    body: '{"entries":[]}',
    timeoutMs: extra.timeoutMs ?? 2_000,
    allowPrivate: extra.allowPrivate ?? true,
  });

describe("a webhook's delivery attempt", () => {
  it("POSTs the body as JSON with the headers given; a 2xx delivered it", async () => {
    const attempt = await post("/ok");
    expect(attempt.status).toBe(204);
    expect(delivered(attempt)).toBe(true);
    const last = received.at(-1)!;
    expect(last.body).toBe('{"entries":[]}');
    expect(last.headers["content-type"]).toBe("application/json");
    expect(last.headers["webhook-id"]).toBe("msg_1");
  });

  it("a 5xx, a 410 and a redirect are answers, not deliveries; a redirect is not followed", async () => {
    const before = received.length;
    for (const [path, status] of [
      ["/fail", 500],
      ["/gone", 410],
      ["/redirect", 302],
    ] as const) {
      const attempt = await post(path);
      expect([attempt.status, delivered(attempt)], path).toEqual([status, false]);
    }
    expect(received.slice(before).map((r) => r.body)).toHaveLength(3);
  });

  it("gives up on an endpoint that does not answer in time, and reads a huge answer only so far", async () => {
    const slow = await post("/slow", { timeoutMs: 300 });
    expect(slow.error).toBe("no answer in 300 ms");
    expect(slow.ms).toBeGreaterThanOrEqual(290);
    expect(slow.ms).toBeLessThan(2_000);
    const huge = await post("/huge");
    expect(huge.status).toBe(200);
    expect(huge.ms).toBeLessThan(2_000);
  });

  it("refuses loopback, private and metadata addresses, by IP or by a name that resolves to one", async () => {
    const before = received.length;
    const port = new URL(base).port;
    for (const url of [
      `${base}/ok`,
      `http://localhost:${port}/ok`,
      `http://2130706433:${port}/ok`,
      `http://[::ffff:127.0.0.1]:${port}/ok`,
      "http://169.254.169.254/latest/meta-data",
      "http://10.0.0.1/hook",
    ]) {
      const attempt = await post("", { url, allowPrivate: false, timeoutMs: 1_000 });
      expect(attempt.status, url).toBeUndefined();
      expect(attempt.error, url).toMatch(/not a public address/);
    }
    expect(received.length, "nothing reached the receiver").toBe(before);
  });

  it("retries on Standard Webhooks' schedule, then gives up", () => {
    expect(RETRY_SCHEDULE_MS.map((ms) => ms / 1000)).toEqual([5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400]);
    expect(retryAfter(1)).toBe(5_000);
    expect(retryAfter(9)).toBe(86_400_000);
    expect(retryAfter(10)).toBeUndefined();
  });
});
