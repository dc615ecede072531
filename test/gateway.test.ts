/**
 * The shipped deployment's gateway: Debian's nginx runs deploy/nginx.conf, with
 * the test's own upstreams and ports put in, in front of `npm start` and an `npm run serve` replica
 * that connects as the roles npm start made (REPLICA_DATABASE_URL, REPLICA_ACCESS_DATABASE_URL):
 * a 10,000-check batch passes through and is answered as the contract does; a client's own
 * X-Forwarded-For is overwritten; bodies past the API's limit are refused in its words; the
 * operator's paths are not served on the public port, and are on the operator's; the replica reads
 * as the reader and keeps the keyless budget through the access role, and neither can do more.
 * Postgres only: replicas and roles are Postgres's.
 *
 * Reproduce a failure with the seed it prints: SEED=<n> DATABASE_URL=… npx vitest run test/gateway.test.ts
 */
import { randomBytes } from "node:crypto";
import { request } from "node:http";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { ask } from "../devkit/ask";
import type { Oracle } from "../devkit/compare";
import { abis, installRegistries } from "../devkit/oracle";
import { waitFor } from "../devkit/processes";
import { chooseSeed, Rng } from "../devkit/random";
import { type Replica, type Service, startReplica, startService } from "../devkit/service";
import { checkUrl, randomCheck, v2Checks } from "../devkit/v2/checks";
import { batchHeaders, compareBatch, itemOfUrl } from "./helpers/batch";
import { type Gateway, startGateway } from "./helpers/gateway";
import { SeededWrites } from "./helpers/seeded-writes";

const SEED = chooseSeed();
console.log(`[gateway] SEED=${SEED} (rerun with SEED=${SEED} npx vitest run test/gateway.test.ts)`);
if (!process.env.DATABASE_URL)
  console.log("[gateway] skipped: the gateway runs in front of API replicas, which need Postgres (set DATABASE_URL)");
const tag = (text: string) => `[SEED=${SEED}] ${text}`;
const CHAIN_ID = 31337;
const TXS = 200;
const CHECKS = 10_000;
const MiB = 1024 * 1024;

/** A GET of `path` exactly as written (`..`, `//` and escapes kept, as fetch would not): status, type, body. */
function rawGet(base: string, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; type: string; body: string }>((ok, fail) => {
    const req = request(`${base}/`, { path, headers }, (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on("end", () => ok({ status: res.statusCode!, type: String(res.headers["content-type"]), body }));
    });
    req.on("error", fail).end();
  });
}

/** `url` logging in as `user` with `password` instead. */
function asRole(url: string, user: string, password: string): string {
  const as = new URL(url);
  as.username = user;
  as.password = password;
  return as.toString();
}

/** The Postgres error code `text` fails with as `url`'s role; undefined when it succeeds (then rolled back). */
async function failsWith(url: string, text: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("BEGIN");
    await client.query(text);
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code ?? (error as Error).message;
  } finally {
    await client.query("ROLLBACK").catch(() => {});
    await client.end();
  }
}

describe.runIf(process.env.DATABASE_URL)("the gateway (deploy/nginx.conf) in front of API replicas", () => {
  let anvil: Anvil;
  let service: Service;
  let replica: Replica;
  let gateway: Gateway;
  let owner: pg.Client;
  let oracle: Oracle;
  let writes: SeededWrites;
  const suffix = `${process.pid}_${Date.now().toString(36)}`;
  const roles = {
    reader: { name: `gw_reader_${suffix}`, password: randomBytes(12).toString("hex") },
    access: { name: `gw_access_${suffix}`, password: randomBytes(12).toString("hex") },
  };
  let readerUrl: string;
  let accessUrl: string;
  /** A cheap keyless GET. */
  let keylessPath: string;

  beforeAll(async () => {
    const database = process.env.DATABASE_URL!;
    readerUrl = asRole(database, roles.reader.name, roles.reader.password);
    accessUrl = asRole(database, roles.access.name, roles.access.password);
    owner = new pg.Client({ connectionString: database });
    await owner.connect();

    anvil = await startAnvil({ chainId: CHAIN_ID });
    const installed = await installRegistries(anvil.url);
    writes = await SeededWrites.on(anvil.url, SEED, installed);
    await writes.v2(TXS);
    oracle = { rpcUrl: anvil.url, serviceUrl: "", registry: installed.v2, abi: abis.v2, chainId: CHAIN_ID };
    const { delegates, senders } = writes.pools.v2;
    keylessPath = `/registry/v2/check/all?chainId=${CHAIN_ID}&to=${delegates[0]}&from=${senders[0]}`;

    service = await startService({
      rpc: { [CHAIN_ID]: anvil.url },
      env: { REPLICA_DATABASE_URL: readerUrl, REPLICA_ACCESS_DATABASE_URL: accessUrl },
    });
    replica = await startReplica(service, {
      DATABASE_URL: readerUrl,
      ACCESS_DATABASE_URL: accessUrl,
      ADMIN_TOKEN: service.adminToken,
      TRUSTED_PROXY: "true",
      API_WORKERS: "1",
    });
    gateway = await startGateway({ api: [replica.url], indexer: service.url });
    await waitFor("the replica to reach the last write", async () => {
      const res = await ask(gateway.url, keylessPath, { headers: service.headers });
      return res.block !== undefined && res.block >= writes.lastWriteBlock ? true : undefined;
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await replica?.stop();
    await service?.stop();
    await anvil?.stop();
    if (owner) {
      // Their grants live in this database (dropped after the file); the roles are the server's.
      const names = [roles.reader.name, roles.access.name].map((name) => `"${name}"`).join(", ");
      await owner.query(`DROP OWNED BY ${names}`).catch(() => {});
      await owner.query(`DROP ROLE IF EXISTS ${names}`);
      await owner.end();
    }
  });

  it("a batch of 10,000 checks (past nginx's default 1 MiB) passes through, answered as the contract", async () => {
    const rng = new Rng(SEED ^ 0x5bd1e995);
    const specs = Array.from({ length: CHECKS }, () => randomCheck(rng, writes.pools.v2, writes.generators.v2.history));
    const items = specs.map((spec) => itemOfUrl(rng, checkUrl(rng, CHAIN_ID, spec)));
    const o = { ...oracle, serviceUrl: gateway.url, headers: service.headers };
    const result = await compareBatch(o, v2Checks, "v2", specs, items, { minBlock: writes.lastWriteBlock }, rng);
    expect(result.mismatches, tag("mismatches")).toEqual([]);
    expect(result.compared, tag("checks compared")).toBe(CHECKS);
    expect(result.positive, tag("true/non-zero answers among them")).toBeGreaterThan(CHECKS * 0.1);
    expect(Buffer.byteLength(result.body), tag("the body's size")).toBeGreaterThan(MiB);
  });

  it("a body past 4 MiB is the API's 413, one past 5 MiB nginx's; both problem+json", async () => {
    const padded = (size: number) => `{"checks":[${"0,".repeat(size / 2)}0]}`;
    const post = (body: string) =>
      ask(gateway.url, "/registry/v2/check", {
        method: "POST",
        headers: batchHeaders(service.headers),
        body,
        reask: false,
      });
    for (const [size, from] of [
      [4.5 * MiB, "the API"],
      [6 * MiB, "nginx"],
    ] as const) {
      const res = await post(padded(size));
      expect(res.status, tag(`a ${size / MiB} MiB body: ${res.text.slice(0, 200)}`)).toBe(413);
      expect(res.headers.get("content-type"), tag(`a ${size / MiB} MiB body`)).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(res.text), tag(`a ${size / MiB} MiB body, refused by ${from}`)).toMatchObject({
        status: 413,
        code: "content_too_large",
        detail: from === "nginx" ? expect.stringMatching(/larger than 5 MiB/) : expect.not.stringMatching(/5 MiB/),
      });
    }
  });

  it("a client's own X-Forwarded-For is overwritten: forged addresses spend the real client's budget", async () => {
    const remaining = async (base: string, forwarded: string) => {
      const res = await ask(base, keylessPath, { headers: { "X-Forwarded-For": forwarded }, reask: false });
      expect(res.status, tag(`${base}: ${res.text.slice(0, 200)}`)).toBe(200);
      return Number(res.headers.get("ratelimit-remaining"));
    };
    // Straight to the replica (TRUSTED_PROXY) each forwarded address is a client of its own: the
    // header the gateway must not pass on would choose the budget.
    const direct = [await remaining(replica.url, "192.0.2.1"), await remaining(replica.url, "192.0.2.2")];
    expect(direct[1], tag("two forwarded addresses straight to the replica")).toBe(direct[0]);
    const through = [await remaining(gateway.url, "203.0.113.7"), await remaining(gateway.url, "198.51.100.9")];
    expect(through[1], tag("two forged addresses through the gateway share one budget")).toBeLessThan(through[0]!);
    const { rows } = await owner.query(`SELECT client FROM "${service.accessSchema}".keyless_spend`);
    const clients = rows.map((row) => row.client as string);
    expect(clients, tag("the budgets spent")).toContain("127.0.0.1");
    expect(clients, tag("the budgets spent")).not.toContain("203.0.113.7");
    expect(clients, tag("the budgets spent")).not.toContain("198.51.100.9");
  });

  it("the operator's paths are 404 on the public port, however spelt, and served on the operator's", async () => {
    const admin = { Authorization: `Bearer ${service.adminToken}` };
    const hidden = [
      "/admin/keys",
      "/developer",
      "/metrics",
      "//metrics",
      "/%61dmin/keys",
      "/registry/../admin/keys",
      "/Admin/keys",
    ];
    for (const path of hidden) {
      const res = await rawGet(gateway.url, path, admin);
      expect(res.status, tag(`public ${path}`)).toBe(404);
      expect(res.type, tag(`public ${path}`)).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(res.body), tag(`public ${path}`)).toMatchObject({ status: 404, code: "not_found" });
    }
    for (const base of [replica.url, gateway.operatorUrl]) {
      const keys = await rawGet(base, "/admin/keys", admin);
      expect(keys.status, tag(`${base}/admin/keys: ${keys.body.slice(0, 200)}`)).toBe(200);
      expect(JSON.parse(keys.body), tag(`${base}/admin/keys`)).toEqual(
        expect.arrayContaining([expect.objectContaining({ label: "tests" })]),
      );
      const metrics = await rawGet(base, "/metrics");
      expect(metrics.status, tag(`${base}/metrics`)).toBe(200);
      expect(metrics.body, tag(`${base}/metrics`)).toMatch(/^delegation_api_requests_total\{/m);
      expect((await rawGet(base, "/developer")).status, tag(`${base}/developer`)).toBe(200);
    }
    const res = await fetch(`${gateway.url}/health`);
    expect(res.headers.get("server"), tag("Server: no version")).toBe("nginx");
  });

  it("the replica reads as the reader, keeps the budget through the access role; neither can do more", async () => {
    const { rows } = await owner.query(
      `SELECT usename, application_name FROM pg_stat_activity
       WHERE usename = ANY($1::text[]) AND datname = current_database()`,
      [[roles.reader.name, roles.access.name]],
    );
    const names = (role: string) => new Set(rows.filter((r) => r.usename === role).map((r) => r.application_name));
    expect([...names(roles.reader.name)], tag("the reader's connections")).toEqual(["delegation-lookup replica"]);
    expect(names(roles.access.name).has("delegation-lookup keyless"), tag("the access role's connections")).toBe(true);

    const indexed = `"${service.schema}".v2_delegation`;
    const keys = `"${service.accessSchema}".api_key`;
    const spends = `"${service.accessSchema}".keyless_spend`;
    // The reader: every transaction read-only, and nothing of the access schema (the keys' hashes).
    expect(await failsWith(readerUrl, `SELECT count(*) FROM ${indexed}`), tag("reader reads")).toBeUndefined();
    expect(await failsWith(readerUrl, `DELETE FROM ${indexed}`), tag("reader deletes")).toBe("25006");
    expect(await failsWith(readerUrl, `SET TRANSACTION READ WRITE; DELETE FROM ${indexed}`)).toBe("42501");
    expect(await failsWith(readerUrl, `SELECT count(*) FROM ${keys}`), tag("reader reads keys")).toBe("42501");
    // The access role: the access tables, no DDL, nothing of the indexer's.
    expect(await failsWith(accessUrl, `DELETE FROM ${spends}`), tag("access writes budgets")).toBeUndefined();
    expect(await failsWith(accessUrl, `SELECT count(*) FROM ${indexed}`), tag("access reads")).toBe("42501");
    expect(
      await failsWith(accessUrl, `CREATE TABLE "${service.accessSchema}".other (x int)`),
      tag("access creates a table"),
    ).toBe("42501");
    expect(await failsWith(accessUrl, `DROP TABLE ${spends}`), tag("access drops a table")).toBe("42501");
  });
});
