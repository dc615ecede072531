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
import { generateKey, keyId } from "../../api/access/key";
import { pgliteDb } from "../../api/database/pglite";
import { openChangeLog } from "../../api/feed/log";
import { WEBHOOKS_PER_KEY } from "../../api/limits";
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
const KEYS = [generateKey().key, generateKey().key] as const;
const holders: ReturnType<typeof emptyApp>[] = [];
/** `method path` as key holder `n` (0 or 1), on that holder's app. */
const asKey = (n: 0 | 1, method: string, path: string, body?: unknown) =>
  call({ "X-API-KEY": KEYS[n] }, method, path, body, holders[n]);

/** `method path` with the admin token (and a JSON body), its answer checked against the document. */
function admin(method: string, path: string, body?: unknown, on = app) {
  return call({ Authorization: `Bearer ${TOKEN}` }, method, path, body, on);
}

/** `method path` with `headers` (and a JSON body), its answer checked against the document. */
async function call(headers: Record<string, string>, method: string, path: string, body?: unknown, on = app) {
  const res = await on.request(
    path,
    {
      method,
      headers: { ...headers, "Content-Type": "application/json" },
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
  // Two key holders' apps over the same endpoints.
  for (const key of KEYS)
    holders.push(emptyApp({}, { changes: log, key, webhooks: { ...webhooks, allowPrivate: true } }));
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
    // An id no endpoint can have (Postgres's text holds no NUL), on every route that takes one: 404, not
    // a failed query.
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

describe("/developer/webhooks: a key's own endpoints", () => {
  it("are made, listed and changed with that key only; another key, the admin token or none gets nothing", async () => {
    const made = await asKey(0, "POST", "/developer/webhooks", { url: `${base}/own`, filter: "version=v2" });
    expect(made.status).toBe(201);
    const { id, secret, owner } = made.body as { id: string; secret: string; owner: string };
    expect([owner, secret]).toEqual([keyId(KEYS[0]), expect.stringMatching(/^whsec_/)]);
    const own = (n: 0 | 1) => asKey(n, "GET", "/developer/webhooks").then((a) => a.body as unknown as { id: string }[]);
    expect((await own(0)).map((h) => h.id)).toEqual([id]);
    expect(await own(1)).toEqual([]);
    // The operator sees every endpoint, the key's among them.
    const all = (await admin("GET", "/admin/webhooks")).body as unknown as { id: string; owner: string | null }[];
    expect(all.find((h) => h.id === id)?.owner).toBe(keyId(KEYS[0]));
    // Every route of the other key's endpoint: 404, as if it did not exist; nothing changed.
    for (const route of ROUTES.filter((r) => r.access === "owner" && r.path.includes("{id}"))) {
      const path = route.path.replace("{id}", id);
      const answer = await asKey(1, route.method.toUpperCase(), path, route.requestBody ? { cursor: "1" } : undefined);
      expect([answer.status, answer.body.code], `${route.method} ${path}`).toEqual([404, "not_found"]);
    }
    expect((await asKey(0, "GET", `/developer/webhooks/${id}`)).body).toMatchObject({ id, paused: false });
    expect((await asKey(0, "POST", `/developer/webhooks/${id}/pause`)).body.paused).toBe(true);
    const tested = await asKey(0, "POST", `/developer/webhooks/${id}/test`);
    expect(tested.body).toMatchObject({ status: 204, error: null });
    new Verifier(secret).verify(received.at(-1)!.body, received.at(-1)!.headers as Record<string, string>);
    // No key, the operator's token, or a key on the operator's routes: refused.
    expect((await call({}, "GET", "/developer/webhooks", undefined, holders[0])).body.code).toBe("invalid_api_key");
    const token = await call({ Authorization: `Bearer ${TOKEN}` }, "GET", "/developer/webhooks", undefined, holders[0]);
    expect([token.status, token.body.code]).toEqual([401, "invalid_api_key"]);
    expect((await asKey(0, "GET", "/admin/webhooks")).body.code).toBe("invalid_admin_token");
    expect((await asKey(0, "DELETE", `/developer/webhooks/${id}`)).status).toBe(200);
    expect(await own(0)).toEqual([]);
  });

  it(`holds ${WEBHOOKS_PER_KEY} a key at most: the next is 409 limit_reached; the operator's not counted`, async () => {
    for (let i = 0; i < WEBHOOKS_PER_KEY; i++)
      expect((await asKey(1, "POST", "/developer/webhooks", { url: `${base}/n${i}` })).status).toBe(201);
    const over = await asKey(1, "POST", "/developer/webhooks", { url: `${base}/over` });
    expect([over.status, over.body.code]).toEqual([409, "limit_reached"]);
    expect((await asKey(0, "POST", "/developer/webhooks", { url: `${base}/other` })).status).toBe(201);
    expect((await admin("POST", "/admin/webhooks", { url: `${base}/operator` })).status).toBe(201);
    const [first] = (await asKey(1, "GET", "/developer/webhooks")).body as unknown as { id: string }[];
    expect((await asKey(1, "DELETE", `/developer/webhooks/${first!.id}`)).status).toBe(200);
    expect((await asKey(1, "POST", "/developer/webhooks", { url: `${base}/again` })).status).toBe(201);
  });
});
