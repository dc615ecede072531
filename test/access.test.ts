/**
 * Keys and the keyless limit against real services (docs/api.md, "Access"):
 * 25 keyless requests in any 10 seconds per client, a valid X-API-KEY without limit, a bad one
 * refused, the admin endpoints and the CLI that manage keys, and keys stored only as hashes.
 *
 * `proxied` trusts X-Forwarded-For (TRUSTED_PROXY=true), so each test counts against a client
 * address of its own; `direct` does not, and has no ADMIN_TOKEN. On Postgres (DATABASE_URL) a third
 * service shares their access schema, to show that the limit and revocations hold across processes.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashKey } from "../api/access/key";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { type Answer, ask as request } from "../devkit/ask";
import { installRegistries } from "../devkit/oracle";
import { ROOT } from "../devkit/processes";
import { type Service, startService } from "../devkit/service";
import { untilFresh } from "./helpers/until-fresh";

const HOT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const COLD = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const V2 = `/registry/v2/check/all?to=${HOT}&from=${COLD}&chainId=31337`;
const V1 = `/registry/v1/check/all?delegate=${HOT}&vault=${COLD}&chainId=31337`;
const CHAINS = "/registry/chains";
const LIMIT = 25;

let anvil: Anvil;
let proxied: Service;
let direct: Service;
/** proxied's PGLITE_DIR: its keys are in `${dir}-access`, read once it has stopped. */
let pgliteDir: string;
/** Shared by every service of this file: on Postgres, they keep their keys and windows together. */
const ACCESS_SCHEMA = `access_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
/** Every key shown to this file: none may be found in the access database. */
const shownKeys: string[] = [];

/** A client address of its own for each test (TEST-NET-2), as a trusted proxy would report it. */
let lastClient = 0;
const newClient = () => `198.51.100.${++lastClient}`;

/** One request as the test makes it: exactly one answer, never asked again. */
async function ask(
  to: Service,
  options: { path?: string; client?: string; key?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.client !== undefined) headers["X-Forwarded-For"] = options.client;
  if (options.key !== undefined) headers["X-API-KEY"] = options.key;
  return request(to.url, options.path ?? V2, { headers, timeoutMs: 20_000, reask: false });
}

async function admin(
  to: Service,
  method: string,
  path: string,
  options: { body?: unknown; token?: string | null } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  const token = options.token === undefined ? to.adminToken : options.token;
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  const body =
    options.body === undefined
      ? undefined
      : typeof options.body === "string"
        ? options.body
        : JSON.stringify(options.body);
  return request(to.url, `/admin${path}`, { method, headers, body, timeoutMs: 20_000, reask: false });
}

async function newKey(to: Service, label: string): Promise<{ id: string; key: string }> {
  const a = await admin(to, "POST", "/keys", { body: { label } });
  expect(a.status, a.text).toBe(201);
  const created = JSON.parse(a.text) as { id: string; key: string };
  shownKeys.push(created.key);
  return created;
}

function expectProblem(a: Answer, status: number, code: string): Record<string, unknown> {
  const where = `${a.status} ${a.text}`;
  expect(a.status, where).toBe(status);
  expect(a.headers.get("content-type"), where).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(a.text) as Record<string, unknown>;
  expect(body, where).toMatchObject({ status, code });
  expect(String(body.detail).length, where).toBeGreaterThan(0);
  return body;
}

/** The RateLimit headers of a keyless answer, as numbers. */
function rateLimit(a: Answer) {
  const number = (name: string) => {
    const value = a.headers.get(name);
    expect(value, `${name} on ${a.status} ${a.text.slice(0, 200)}`).toMatch(/^\d+$/);
    return Number(value);
  };
  return {
    limit: number("ratelimit-limit"),
    remaining: number("ratelimit-remaining"),
    reset: number("ratelimit-reset"),
  };
}

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/** Sends `n` keyless requests one after another; all must pass. */
async function spend(to: Service, client: string | undefined, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const a = await ask(to, { client });
    expect(a.status, `request ${i + 1} of ${n}: ${a.text}`).toBe(200);
  }
}

beforeAll(async () => {
  anvil = await startAnvil();
  await installRegistries(anvil.url);
  pgliteDir = join(mkdtempSync(join(tmpdir(), "access-test-")), "pglite");
  [proxied, direct] = await Promise.all([
    startService({ rpc: { 31337: anvil.url }, env: { TRUSTED_PROXY: "true", ACCESS_SCHEMA, PGLITE_DIR: pgliteDir } }),
    startService({ rpc: { 31337: anvil.url }, env: { ADMIN_TOKEN: "", ACCESS_SCHEMA } }),
  ]);
  shownKeys.push(proxied.apiKey!);
});

afterAll(async () => {
  await proxied?.stop();
  await direct?.stop();
  await anvil?.stop();
  if (pgliteDir) rmSync(join(pgliteDir, ".."), { recursive: true, force: true });
});

describe("the keyless limit: 25 requests in any 10 seconds per client", () => {
  it("25 pass, counting down RateLimit-Remaining; the 26th is 429 rate_limited with Retry-After; after it, requests \
pass again", async () => {
    const client = newClient();
    for (let i = 0; i < LIMIT; i++) {
      const a = await ask(proxied, { client });
      expect(a.status, a.text).toBe(200);
      const limit = rateLimit(a);
      expect(limit).toMatchObject({ limit: LIMIT, remaining: LIMIT - 1 - i });
      expect(limit.reset).toBeGreaterThanOrEqual(1);
      expect(limit.reset).toBeLessThanOrEqual(10);
    }
    const refused = await ask(proxied, { client });
    expectProblem(refused, 429, "rate_limited");
    expect(refused.headers.get("access-control-allow-origin")).toBe("*");
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(rateLimit(refused)).toEqual({ limit: LIMIT, remaining: 0, reset: retryAfter });
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(10);
    // Refused requests do not count: still refused, no later than before.
    const again = await ask(proxied, { client });
    expectProblem(again, 429, "rate_limited");
    expect(Number(again.headers.get("retry-after"))).toBeLessThanOrEqual(retryAfter);

    await sleep(retryAfter * 1000);
    const after = await ask(proxied, { client });
    expect(after.status, after.text).toBe(200);
  });

  it("the window slides, exact to the request: requests leave it 10 seconds after they were made", async () => {
    const client = newClient();
    await spend(proxied, client, 10);
    const firstDone = Date.now();
    await sleep(4_000);
    const secondStart = Date.now();
    const first = await ask(proxied, { client });
    expect(first.status).toBe(200);
    // RateLimit-Reset: when the oldest request (4 s old) leaves the window.
    expect(rateLimit(first).remaining).toBe(14);
    expect(rateLimit(first).reset).toBeLessThanOrEqual(6);
    await spend(proxied, client, 14);
    // 25 in the window: the first ten leave it 10 s after they were made, not at a window boundary.
    const refused = await ask(proxied, { client });
    expectProblem(refused, 429, "rate_limited");
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(4);
    expect(retryAfter).toBeLessThanOrEqual(7);

    await sleep(firstDone + 10_200 - Date.now());
    // The second fifteen stay in the window for a few seconds more: exactly ten slots are free.
    await spend(proxied, client, 10);
    expectProblem(await ask(proxied, { client }), 429, "rate_limited");
    expect(Date.now(), "the test ran too slowly to tell the windows apart").toBeLessThan(secondStart + 10_000);
  });

  it("v2, v1 and /registry/chains share one budget; every keyless answer carries the RateLimit headers", async () => {
    const client = newClient();
    const paths = [
      ...Array(8).fill(V2),
      ...Array(8).fill(V1),
      ...Array(6).fill(CHAINS),
      "/registry/v2/check/all?chainId=31337", // 400
      "/registry/v1/check/nothing", // 404
      "/registry/v3/anything", // 404
    ];
    for (const [i, path] of paths.entries()) {
      const a = await ask(proxied, { client, path });
      expect(a.status, `${path}: ${a.text}`).toBeLessThan(500);
      expect(a.status, `${path}: ${a.text}`).not.toBe(429);
      expect(rateLimit(a).remaining, path).toBe(LIMIT - 1 - i);
    }
    for (const path of [V1, V2, CHAINS]) expectProblem(await ask(proxied, { client, path }), 429, "rate_limited");
  });

  it("of 40 concurrent requests of one client, exactly 25 pass", async () => {
    const client = newClient();
    const answers = await Promise.all(Array.from({ length: 40 }, () => ask(proxied, { client })));
    expect(answers.filter((a) => a.status === 200).length).toBe(LIMIT);
    expect(answers.filter((a) => a.status === 429).length).toBe(40 - LIMIT);
  });

  it("behind a trusted proxy each client (the first X-Forwarded-For address) has its own budget", async () => {
    const a = newClient();
    const b = newClient();
    await spend(proxied, a, LIMIT);
    expectProblem(await ask(proxied, { client: a }), 429, "rate_limited");
    // The first address is the client; the proxies after it do not matter.
    expectProblem(await ask(proxied, { client: `${a}, 203.0.113.9` }), 429, "rate_limited");
    const other = await ask(proxied, { client: b });
    expect(other.status).toBe(200);
    expect(rateLimit(other).remaining).toBe(LIMIT - 1);
    expect(rateLimit(await ask(proxied, { client: ` ${b} , ${a}` })).remaining).toBe(LIMIT - 2);
  });

  it("behind a trusted proxy, a forwarded value that is not an IP address mints no budget: it counts as the proxy's \
own", async () => {
    const first = rateLimit(await ask(proxied, { client: "not-an-address-1" })).remaining;
    expect(rateLimit(await ask(proxied, { client: `not-an-address-2, ${newClient()}` })).remaining).toBe(first - 1);
    expect(rateLimit(await ask(proxied, { client: "x".repeat(2_000) })).remaining).toBe(first - 2);
    expect(rateLimit(await ask(proxied)).remaining).toBe(first - 3);
  });

  it("without TRUSTED_PROXY, X-Forwarded-For is ignored: the socket's address is the client", async () => {
    // On Postgres both test services share one limiter, so this socket's budget may be partly spent:
    // every answer takes one more from the same budget whatever X-Forwarded-For says.
    const opening = await ask(direct, { client: newClient() });
    expect(opening.status, opening.text).toBe(200);
    const first = rateLimit(opening).remaining;
    expect(first).toBeGreaterThan(10);
    for (let i = 1; i <= first; i++) {
      const a = await ask(direct, { client: newClient() });
      expect(a.status, a.text).toBe(200);
      expect(rateLimit(a).remaining).toBe(first - i);
    }
    expectProblem(await ask(direct, { client: newClient() }), 429, "rate_limited");
    expectProblem(await ask(direct), 429, "rate_limited");
  });
});

describe("API keys", () => {
  it("with a key there is no limit: a client over the keyless limit sends 500 requests in a burst, all \
answered", async () => {
    const client = newClient();
    await spend(proxied, client, LIMIT);
    expectProblem(await ask(proxied, { client }), 429, "rate_limited");
    const paths = Array.from({ length: 500 }, (_, i) => [V2, V1, CHAINS][i % 3]!);
    const answers: Answer[] = [];
    for (let i = 0; i < paths.length; i += 50) {
      answers.push(
        ...(await Promise.all(
          paths.slice(i, i + 50).map((path) => ask(proxied, { client, path, key: proxied.apiKey })),
        )),
      );
    }
    expect(answers.filter((a) => a.status !== 200).map((a) => `${a.status} ${a.text}`)).toEqual([]);
    for (const a of answers) expect(a.headers.get("ratelimit-remaining")).toBeNull();
  });

  it("an unknown, malformed or empty key is 401 invalid_api_key on every route, never served as keyless; each \
spends its client's keyless budget, and once that is spent such requests are 429", async () => {
    const client = newClient();
    const key = proxied.apiKey!;
    const flipped = key.slice(0, -1) + (key.endsWith("A") ? "B" : "A");
    const bad = [
      "",
      "nonsense",
      flipped,
      key.slice(0, -1),
      `dlk_000000000000_${"A".repeat(43)}`,
      key.replace(/^dlk_[0-9a-f]{12}/, "dlk_ffffffffffff"),
    ];
    let spent = 0;
    for (const candidate of bad) {
      for (const path of [V2, V1, CHAINS]) {
        const a = await ask(proxied, { client, path, key: candidate });
        expectProblem(a, 401, "invalid_api_key");
        expect(rateLimit(a).remaining, "a refused key spends one unit of the keyless budget").toBe(LIMIT - ++spent);
      }
    }
    while (spent < LIMIT)
      expectProblem(await ask(proxied, { client, key: bad[spent++ % bad.length] }), 401, "invalid_api_key");
    expect(spent).toBe(LIMIT);
    for (const candidate of bad) expectProblem(await ask(proxied, { client, key: candidate }), 429, "rate_limited");
    // The client's keyless requests share that budget.
    expectProblem(await ask(proxied, { client }), 429, "rate_limited");
  });

  it("a revoked key is refused from the very next request", async () => {
    // A client of its own: a key the process cannot vouch for spends keyless budget, and on
    // Postgres the tests before spent the socket address's, shared by both services.
    const client = newClient();
    const { id, key } = await newKey(proxied, "revoked at once");
    expect((await ask(proxied, { client, key })).status).toBe(200);
    const revoked = await admin(proxied, "DELETE", `/keys/${id}`);
    expect(revoked.status, revoked.text).toBe(200);
    expect(JSON.parse(revoked.text)).toMatchObject({ id, label: "revoked at once", revokedAt: expect.any(String) });
    for (const path of [V2, V1, CHAINS])
      expectProblem(await ask(proxied, { client, path, key }), 401, "invalid_api_key");
    const listed = (
      JSON.parse((await admin(proxied, "GET", "/keys")).text) as { id: string; revokedAt: string | null }[]
    ).find((k) => k.id === id);
    expect(listed?.revokedAt).toBe(JSON.parse(revoked.text).revokedAt);
  });

  it("the admin list counts the requests made with each key", async () => {
    const { id, key } = await newKey(proxied, "counted");
    for (const path of [V2, V2, V1, CHAINS, "/registry/v2/check/all?chainId=31337", V2, V1])
      await ask(proxied, { path, key });
    await ask(proxied, { key: `${key}x` });
    const list = JSON.parse((await admin(proxied, "GET", "/keys")).text) as Record<string, unknown>[];
    expect(list.find((k) => k.id === id)).toEqual({
      id,
      label: "counted",
      createdAt: expect.any(String),
      revokedAt: null,
      recentRequests: 7,
    });
  });
});

describe("the admin endpoints", () => {
  it("need Authorization: Bearer <ADMIN_TOKEN>", async () => {
    const token = proxied.adminToken!;
    const wrong = [
      null,
      "",
      token.slice(0, -1),
      `${token}x`,
      token.toUpperCase() === token ? token.toLowerCase() : token.toUpperCase(),
    ];
    for (const candidate of wrong) {
      for (const [method, path, body] of [
        ["GET", "/keys"],
        ["POST", "/keys", { label: "x" }],
        ["DELETE", "/keys/000000000000"],
      ] as const) {
        const a = await admin(proxied, method, path, { token: candidate, body });
        expectProblem(a, 401, "invalid_admin_token");
        expect(a.headers.get("www-authenticate")).toMatch(/^Bearer/);
      }
    }
    const basic = await request(proxied.url, "/admin/keys", {
      headers: { Authorization: `Basic ${Buffer.from(`admin:${token}`).toString("base64")}` },
      reask: false,
    });
    expect(basic.status).toBe(401);
    expect((await admin(proxied, "GET", "/keys")).status).toBe(200);
  });

  it("POST /admin/keys answers 201 with the key, once; it checks the label", async () => {
    const a = await admin(proxied, "POST", "/keys", { body: { label: "  shown once  " } });
    expect(a.status, a.text).toBe(201);
    expect(a.headers.get("cache-control")).toBe("no-store");
    const created = JSON.parse(a.text) as Record<string, string>;
    shownKeys.push(created.key!);
    expect(Object.keys(created).sort()).toEqual(["createdAt", "id", "key", "label"]);
    expect(created).toMatchObject({
      label: "shown once",
      key: expect.stringMatching(/^dlk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/),
    });
    expect(Math.abs(Date.parse(created.createdAt!) - Date.now())).toBeLessThan(60_000);
    // The list never shows a key's text.
    const list = await admin(proxied, "GET", "/keys");
    expect(list.headers.get("cache-control")).toBe("no-store");
    for (const key of shownKeys) expect(list.text).not.toContain(key.slice(17));
    expect(JSON.parse(list.text)).toContainEqual({
      id: created.id,
      label: "shown once",
      createdAt: created.createdAt,
      revokedAt: null,
      recentRequests: 0,
    });

    expect(expectProblem(await admin(proxied, "POST", "/keys", { body: {} }), 400, "missing_parameter").param).toBe(
      "label",
    );
    expectProblem(await admin(proxied, "POST", "/keys", { body: "not json" }), 400, "missing_parameter");
    for (const label of ["", "   ", 42, null, "x".repeat(101)]) {
      expectProblem(await admin(proxied, "POST", "/keys", { body: { label } }), 400, "invalid_parameter");
    }
  });

  it("DELETE of an unknown id is 404; other methods are 405 with Allow; the registry API stays read-only", async () => {
    expectProblem(await admin(proxied, "DELETE", "/keys/000000000000"), 404, "not_found");
    const put = await admin(proxied, "PUT", "/keys", { body: { label: "x" } });
    expectProblem(put, 405, "method_not_allowed");
    expect(put.headers.get("allow")).toBe("GET, HEAD, POST");
    const patch = await admin(proxied, "PATCH", "/keys/000000000000", { body: {} });
    expectProblem(patch, 405, "method_not_allowed");
    expect(patch.headers.get("allow")).toBe("DELETE");
    for (const method of ["POST", "DELETE", "PUT"]) {
      const res = await request(proxied.url, V2, { method, headers: { "X-API-KEY": proxied.apiKey! }, reask: false });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    }
  });

  it("without ADMIN_TOKEN they are off, and say so", async () => {
    for (const [method, path] of [
      ["GET", "/keys"],
      ["POST", "/keys"],
      ["DELETE", "/keys/000000000000"],
    ]) {
      const body = expectProblem(
        await admin(direct, method!, path!, { token: "anything at all, long enough" }),
        404,
        "not_found",
      );
      expect(body.detail).toContain("ADMIN_TOKEN");
    }
  });
});

describe("the keys CLI", () => {
  const run = promisify(execFile);
  const keys = async (args: string[], token = proxied.adminToken!) => {
    const env = { ...process.env, SERVICE_URL: proxied.url, ADMIN_TOKEN: token };
    return run("npm", ["run", "keys", "--", ...args], { cwd: ROOT, env, timeout: 60_000 }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({
        code: error.code,
        stdout: error.stdout,
        stderr: error.stderr,
      }),
    );
  };

  it("creates a key that works, lists it, and revokes it", async () => {
    const created = await keys(["create", "--label", "from the cli"]);
    expect(created.code, created.stderr).toBe(0);
    const key = /^key:\s+(dlk_([0-9a-f]{12})_[A-Za-z0-9_-]{43})$/m.exec(created.stdout);
    expect(key, created.stdout).not.toBeNull();
    const [, text, id] = key!;
    shownKeys.push(text!);
    expect((await ask(proxied, { key: text })).status).toBe(200);

    const listed = await keys(["list"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${id}\\s.*\\bactive\\b.*\\s1 requests/24h\\s+from the cli$`, "m"));
    expect(listed.stdout).not.toContain(text!.slice(17));

    const revoked = await keys(["revoke", id!]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain(`revoked ${id}`);
    // A client of its own, as in "a revoked key is refused from the very next request": a revoked
    // key spends keyless budget, which the tests before may have spent for the socket's address.
    expectProblem(await ask(proxied, { client: newClient(), key: text }), 401, "invalid_api_key");
    expect((await keys(["list"])).stdout).toMatch(new RegExp(`^${id}\\s.*\\brevoked 20`, "m"));
  });

  it("says what went wrong, and exits non-zero", async () => {
    const denied = await keys(["list"], "not the admin token at all");
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain("401");
    const usage = await keys(["create"]);
    expect(usage.code).toBe(1);
    expect(usage.stderr).toContain("usage: npm run keys");
    const missing = await keys(["revoke", "ffffffffffff"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("404");
  });
});

describe.runIf(process.env.DATABASE_URL)("several API processes on one Postgres", () => {
  let second: Service;

  beforeAll(async () => {
    // Its own Ponder schema, the same access schema (and the same proxy trust) as `proxied`.
    second = await startService({
      rpc: { 31337: anvil.url },
      env: { TRUSTED_PROXY: "true", ACCESS_SCHEMA, ADMIN_TOKEN: "" },
    });
  });

  afterAll(async () => {
    await second?.stop();
  });

  it("share one keyless budget: of 40 concurrent requests of one client spread over two processes, 25 \
pass", async () => {
    const client = newClient();
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => ask(i % 2 ? second : proxied, { client })));
    expect(answers.filter((a) => a.status === 200).length).toBe(LIMIT);
    expect(answers.filter((a) => a.status === 429).length).toBe(40 - LIMIT);
  });

  it("share one keyless budget both ways: what one process served, the other counts", async () => {
    const statuses = async (service: Service, client: string, n: number) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push((await ask(service, { client })).status);
      return out;
    };
    const expected = [...Array(LIMIT - 20).fill(200), ...Array(15).fill(429)];
    for (const [first, then] of [
      [proxied, second],
      [second, proxied],
    ] as const) {
      const client = newClient();
      expect(await statuses(first, client, 20), `${first.url} first`).toEqual(Array(20).fill(200));
      expect(await statuses(then, client, 20), `${then.url} after ${first.url}`).toEqual(expected);
    }
  });

  it("share keys: one made through one process works on the other, and its revocation holds there within \
1 s", async () => {
    const { id, key } = await newKey(proxied, "two processes");
    expect((await ask(second, { key })).status).toBe(200);
    expect((await admin(proxied, "DELETE", `/keys/${id}`)).status).toBe(200);
    await untilFresh(Date.now());
    expectProblem(await ask(second, { key }), 401, "invalid_api_key");
  });
});

describe("storage", () => {
  it("no row of the access database holds a key's text, only its hash", async () => {
    // PGlite admits one process: stop the service to read its database.
    await proxied.stop();
    let rows: string[];
    if (process.env.DATABASE_URL) {
      const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await client.connect();
      try {
        rows = await dump((sql) => client.query(sql).then((r) => r.rows));
      } finally {
        await client.end();
      }
    } else {
      const db = await PGlite.create(`${pgliteDir}-access`);
      try {
        rows = await dump((sql) => db.query<Record<string, unknown>>(sql).then((r) => r.rows));
      } finally {
        await db.close();
      }
    }
    const text = rows.join("\n");
    expect(shownKeys.length).toBeGreaterThanOrEqual(5);
    for (const key of shownKeys) {
      expect(text).toContain(hashKey(key));
      // The secret part, and so the whole key.
      expect(text).not.toContain(key.slice(17));
    }
  });

  /** Every row of every table in the access schema, as text. */
  async function dump(query: (sql: string) => Promise<Record<string, unknown>[]>): Promise<string[]> {
    const tables = await query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = '${ACCESS_SCHEMA}'`,
    );
    expect(tables.map((t) => t.table_name)).toContain("api_key");
    const rows: string[] = [];
    for (const { table_name } of tables) {
      for (const row of await query(`SELECT t::text AS row FROM "${ACCESS_SCHEMA}"."${table_name as string}" t`))
        rows.push(row.row as string);
    }
    return rows;
  }
});
