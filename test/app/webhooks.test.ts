/**
 * The operator's webhook endpoints at /admin/webhooks, in process over a real store and change log
 * (PGlite in memory), with a receiver on loopback that verifies each delivery's signature with the
 * Standard Webhooks reference library; every answer is held to the OpenAPI document.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PGlite } from "@electric-sql/pglite";
import { Webhook as Verifier } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pgliteDb } from "../../api/database/pglite";
import { openChangeLog } from "../../api/feed/log";
import { ROUTES } from "../../api/routes/table";
import { openWebhookStore } from "../../api/webhooks/store";
import { checkAnswer } from "../../devkit/openapi-check";
import { CHAIN, emptyApp, SOCKET, wallet } from "../helpers/empty-app";

const TOKEN = "the operator's token";
let db: PGlite;
let receiver: Server;
let base: string;
const received: { headers: IncomingHttpHeaders; body: string }[] = [];
let app: ReturnType<typeof emptyApp>;
let guarded: ReturnType<typeof emptyApp>;

/** `method path` with the admin token (and a JSON body), its answer checked against the document. */
async function admin(method: string, path: string, body?: unknown, on = app) {
  const res = await on.request(
    path,
    {
      method,
      headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    },
    SOCKET,
  );
  const text = await res.text();
  checkAnswer({ method, path, status: res.status, headers: res.headers, text });
  return { status: res.status, body: JSON.parse(text) as Record<string, unknown> };
}

beforeAll(async () => {
  db = new PGlite();
  const log = await openChangeLog(pgliteDb(db), "hooks_app");
  const store = await openWebhookStore(pgliteDb(db), "hooks_app");
  const webhooks = { store, log: () => log, served: [CHAIN], timeoutMs: 2_000 };
  app = emptyApp({}, { changes: log, webhooks: { ...webhooks, allowPrivate: true } });
  guarded = emptyApp({}, { changes: log, webhooks: { ...webhooks, allowPrivate: false } });
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((ok) => receiver.listen(0, "127.0.0.1", ok));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(async () => {
  receiver.close();
  await db.close();
});

describe("/admin/webhooks", () => {
  it("makes an endpoint, shows its secret once, and sends it a signed test delivery", async () => {
    const made = await admin("POST", "/admin/webhooks", { url: `${base}/a`, filter: `wallet=${wallet(1)}&role=from` });
    expect(made.status).toBe(201);
    const { id, secret } = made.body as { id: string; secret: string };
    expect(secret).toMatch(/^whsec_/);
    const listed = await admin("GET", "/admin/webhooks");
    expect((listed.body as unknown as { id: string }[]).map((h) => h.id)).toEqual([id]);
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    const tested = await admin("POST", `/admin/webhooks/${id}/test`);
    expect(tested.body).toMatchObject({ status: 204, error: null });
    const delivery = received.at(-1)!;
    expect(JSON.parse(delivery.body)).toEqual({ entries: [], test: true });
    new Verifier(secret).verify(delivery.body, delivery.headers as Record<string, string>);
    // Rotated: the next delivery is signed by both, old and new.
    const rotated = await admin("POST", `/admin/webhooks/${id}/rotate`);
    const next = (rotated.body as { secret: string }).secret;
    expect(next).not.toBe(secret);
    await admin("POST", `/admin/webhooks/${id}/test`);
    const after = received.at(-1)!;
    for (const key of [secret, next]) new Verifier(key).verify(after.body, after.headers as Record<string, string>);
    expect((after.headers["webhook-signature"] as string).split(" ")).toHaveLength(2);
  });

  it("pauses, resumes, replays from a seq, changes, lists attempts and deletes", async () => {
    const { id } = (await admin("POST", "/admin/webhooks", { url: `${base}/b`, cursor: "0" })).body as { id: string };
    expect((await admin("POST", `/admin/webhooks/${id}/pause`)).body.paused).toBe(true);
    expect((await admin("POST", `/admin/webhooks/${id}/resume`)).body.paused).toBe(false);
    expect((await admin("POST", `/admin/webhooks/${id}/replay`, { cursor: "7" })).body.cursor).toBe(7);
    const changed = await admin("PATCH", `/admin/webhooks/${id}`, { filter: "version=v1", url: `${base}/c` });
    expect(changed.body).toMatchObject({ filter: "version=v1", url: `${base}/c` });
    expect((await admin("GET", `/admin/webhooks/${id}/deliveries`)).body).toEqual([]);
    expect((await admin("DELETE", `/admin/webhooks/${id}`)).status).toBe(200);
    expect((await admin("GET", `/admin/webhooks/${id}`)).status).toBe(404);
  });

  it("refuses what cannot receive deliveries or would not read, naming it", async () => {
    const cases: [unknown, number, string, string?][] = [
      [{ filter: "" }, 400, "invalid_parameter", "url"],
      ["{", 400, "invalid_body"],
      [{ url: "ftp://example.com/hook" }, 400, "invalid_parameter", "url"],
      [{ url: "https://user:pass@example.com/hook" }, 400, "invalid_parameter", "url"],
      [{ url: `${base}/x`, filter: "chainId=5" }, 400, "unsupported_chain", "chainId"],
      [{ url: `${base}/x`, filter: "limit=5" }, 400, "invalid_parameter", "filter"],
      [{ url: `${base}/x`, filter: "wallet=0x1" }, 400, "invalid_parameter", "filter.wallet"],
      [{ url: `${base}/x`, cursor: "-1" }, 400, "invalid_parameter", "cursor"],
    ];
    for (const [body, status, code, param] of cases) {
      const answer = await admin("POST", "/admin/webhooks", body);
      expect([answer.status, answer.body.code, answer.body.param], JSON.stringify(body)).toEqual([status, code, param]);
    }
    // Loopback, private and metadata addresses, unless the operator allows them.
    for (const url of [`${base}/x`, "http://10.1.2.3/x", "http://169.254.169.254/x", "http://[::1]/x"]) {
      const answer = await admin("POST", "/admin/webhooks", { url }, guarded);
      expect([answer.status, answer.body.param], url).toEqual([400, "url"]);
      expect(answer.body.detail, url).toMatch(/not a public address/);
    }
    expect((await admin("GET", "/admin/webhooks/wh_0000000000000000")).status).toBe(404);
    // An id no endpoint can have (Postgres's text holds no NUL), on every route that takes one: 404, not a failed query.
    for (const [method, path, body] of ROUTES.filter((r) => r.path.startsWith("/admin/webhooks/{id}")).map(
      (r) =>
        [r.method.toUpperCase(), r.path.replace("{id}", "a%00b"), r.requestBody ? { cursor: "1" } : undefined] as const,
    )) {
      const answer = await admin(method, path, body);
      expect([answer.status, answer.body.code], `${method} ${path}`).toEqual([404, "not_found"]);
    }
    const keyless = await app.request("/admin/webhooks", {}, SOCKET);
    expect(keyless.status).toBe(401);
  });
});
