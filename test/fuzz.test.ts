import { request } from "node:http";
import { connect } from "node:net";
import { type Address, createPublicClient, createWalletClient, encodeFunctionData, http, zeroHash } from "viem";
import { anvil as anvilChain } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { ask } from "../devkit/ask";
import { answerMismatches } from "../devkit/openapi-check";
import { abis, addresses, installRegistries } from "../devkit/oracle";
import { chooseSeed, Rng } from "../devkit/random";
import { type Replica, type Service, startReplica, startService } from "../devkit/service";

/**
 * Abuse: at least 10,000 seeded random malformed requests against a running service. None may
 * give a 5xx, hang, or crash it; every error must be problem+json; every answer to a documented
 * path must be as /openapi.json says (devkit/openapi-check.ts); afterwards it still answers right.
 * The seed is printed and named in every failure.
 *
 * What Node's HTTP parser refuses (request line and headers past its 16 KiB limit, bytes that are
 * not HTTP/1.1) never reaches the app: the server answers it with a problem (api/http/client-error.ts),
 * Ponder's (`npm start`, through scripts/launcher/parser-errors.mjs) and a replica's (`npm run
 * serve`, on Postgres only) alike.
 */

const SEED = chooseSeed();
const COUNT = 10_000;
const tag = (what: string) => `[SEED=${SEED}] ${what}`;

const rng = new Rng(SEED);
const next = () => rng.next();
const pick = <T>(items: readonly T[]): T => rng.pick(items);
const chance = (p: number) => rng.chance(p);
const repeat = (text: string, times: number) => text.repeat(Math.max(0, times));

const ADDRESS = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const values = (): string =>
  pick([
    () => ADDRESS,
    () => ADDRESS.toLowerCase(),
    () => ADDRESS.replace("C", "c"), // bad checksum
    () => ADDRESS.slice(0, 1 + Math.floor(next() * 41)),
    () => `${ADDRESS}${"0".repeat(1 + Math.floor(next() * 5))}`,
    () => "vitalik.eth",
    () => " ",
    () => "",
    () => String(Math.floor(next() * 1e6)),
    () => `-${Math.floor(next() * 100)}`,
    () => "1.5",
    () => "1e18",
    () => `0x${"f".repeat(64)}`,
    () => `0x1${"0".repeat(64)}`,
    () => repeat("9", 80 + Math.floor(next() * 2000)),
    () => "%",
    () => "%ZZ",
    () => "%C3%28", // invalid UTF-8
    () => "%FF%FE",
    () => "%E2%82",
    () => "%00",
    () => "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    () => "../../etc/passwd",
    () => encodeURIComponent("é∑😀"),
    () => encodeURIComponent("' OR 1=1 --"),
    () => encodeURIComponent('{"a":1}'),
    () => repeat("a", Math.floor(next() * 40)),
    () => repeat("A", 4000 + Math.floor(next() * 6000)),
    () => "31337",
    () => "0x7a69",
    () => "NaN",
    () => "Infinity",
  ])();

const NAMES = [
  "to",
  "from",
  "delegate",
  "vault",
  "contract",
  "tokenId",
  "rights",
  "chainId",
  "wallet",
  "x",
  "",
  "%ZZ",
  "to[]",
  "__proto__",
  "constructor",
];
const query = () => {
  const pairs: string[] = [];
  const count = Math.floor(next() * 9);
  for (let i = 0; i < count; i++) {
    const name = pick(NAMES);
    pairs.push(chance(0.1) ? name : `${name}=${values()}`);
    if (chance(0.1)) pairs.push(pairs[pairs.length - 1]!); // a duplicate
  }
  if (chance(0.6)) pairs.push("chainId=31337");
  return pairs.length ? `?${pairs.join(pick(["&", "&", "&", ";", "&&"]))}` : pick(["", "?", "?&", "?="]);
};

/** What follows /registry/v2/check/: the kinds, and what is close to one. */
const V2_CHECK_PATHS = ["all", "contract", "erc721", "erc1155", "erc20", "token", "", "ALL", "all/", "all/x"];

const path = () =>
  pick([
    () => `/registry/v2/${values()}`,
    () => `/registry/v1/${values()}`,
    () => `/registry/v2/check/${pick(V2_CHECK_PATHS)}`,
    () => `/registry/v1/check/${pick(["all", "contract", "token", "erc20", ""])}`,
    () =>
      pick([
        "/registry/chains",
        "/registry",
        "/registry/",
        "/registry/v3/x",
        "//registry//v2",
        "/registry/v2/%2F",
        "/registry/v2/..%2F..%2F",
      ]),
    () => `/${repeat("a/", Math.floor(next() * 50))}`,
    () => `/registry/v2/${repeat("%", 3)}`,
    () => "/developer/../registry/v2/check/all",
    () => `/admin/keys/${values()}`,
  ])();

const METHODS = ["GET", "GET", "GET", "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "PROPFIND"];

type Answer = { status: number; type: string; body: string; headers: Headers };

function send(base: URL, method: string, target: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((ok, fail) => {
    const req = request(
      { host: base.hostname, port: base.port, method, path: target, headers, timeout: 20_000 },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => {
          const headers = new Headers(Object.entries(res.headers).map(([k, v]) => [k, String(v)]));
          ok({ status: res.statusCode ?? 0, type: String(res.headers["content-type"] ?? ""), body, headers });
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer in 20 s: ${method} ${target.slice(0, 200)}`)));
    req.on("error", fail);
    if (method === "POST" || method === "PUT" || method === "PATCH") req.end(chance(0.5) ? "{" : repeat("x", 10_000));
    else req.end();
  });
}

type RawAnswer = { status: number; type: string; body: string; reset: boolean };

/**
 * One request's bytes on a new connection, and what comes back until the server closes it. A reset
 * (the server closing while the client still sends) is reported, not thrown; no answer in 20 s is.
 */
function exchange(base: URL, bytes: Buffer): Promise<RawAnswer> {
  return new Promise((ok, fail) => {
    const socket = connect(Number(base.port), base.hostname);
    let data = "";
    let reset = false;
    socket.setTimeout(20_000, () =>
      socket.destroy(new Error(`no answer in 20 s to ${JSON.stringify(bytes.toString("latin1").slice(0, 60))}`)),
    );
    socket.on("data", (chunk) => (data += chunk.toString("latin1")));
    socket.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ECONNRESET" || error.code === "EPIPE") reset = true;
      else fail(error);
    });
    socket.on("close", () => {
      const split = data.indexOf("\r\n\r\n");
      const head = split < 0 ? data : data.slice(0, split);
      ok({
        status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1] ?? 0),
        type: /\r\ncontent-type: *([^\r]*)/i.exec(head)?.[1] ?? "",
        body: split < 0 ? "" : data.slice(split + 4),
        reset,
      });
    });
    socket.end(bytes);
  });
}

const rawGet = (target: string, headers: Record<string, string> = {}) =>
  Buffer.from(
    `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join("")}Connection: close\r\n\r\n`,
    "latin1",
  );

/** Past Node's 16 KiB limit on the request line and headers: 431. */
const OVERSIZED: [what: string, target: string, headers: Record<string, string>][] = [
  ["a 20 KiB header", "/registry/chains", { "X-Filler": "h".repeat(20 * 1024) }],
  ["a 100 KiB header", "/registry/chains", { "X-Filler": "h".repeat(100 * 1024) }],
  ["a 70 KiB URL", `/registry/v2/check/all?chainId=31337&to=${"a".repeat(70 * 1024)}`, {}],
];

/** Bytes Node's HTTP parser refuses: 400. */
const MALFORMED: [what: string, bytes: Buffer][] = [
  [
    "invalid UTF-8 in the target",
    Buffer.concat([
      Buffer.from("GET /r"),
      Buffer.from([0xff, 0xfe, 0x80]),
      Buffer.from(" HTTP/1.1\r\nHost: x\r\n\r\n"),
    ]),
  ],
  [
    "a raw latin-1 byte in the query",
    Buffer.from("GET /registry/v2/check/all?to=\u00e9 HTTP/1.1\r\nHost: x\r\n\r\n", "latin1"),
  ],
  ["control bytes in the target", Buffer.from("GET /registry/v2/\u0001\u0002 HTTP/1.1\r\nHost: x\r\n\r\n")],
  ["a space in the target", Buffer.from("GET /registry/v2/check all HTTP/1.1\r\nHost: x\r\n\r\n")],
  ["a header line without a colon", Buffer.from("GET /registry/chains HTTP/1.1\r\nHost x\r\n\r\n")],
  ["a NUL in a header value", Buffer.from("GET /registry/chains HTTP/1.1\r\nHost: x\r\nX-API-KEY: a\u0000b\r\n\r\n")],
  [
    "a Content-Length that is no number",
    Buffer.from("GET /registry/chains HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n"),
  ],
  [
    "Content-Length and Transfer-Encoding both",
    Buffer.from(
      "POST /registry/chains HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    ),
  ],
  ["an unknown HTTP version", Buffer.from("GET /registry/chains HTTP/7.3\r\nHost: x\r\n\r\n")],
  ["bare LF line ends", Buffer.from("GET /registry/chains HTTP/1.1\nHost: x\n\n")],
  ["not HTTP", Buffer.from("GARBAGE\r\n\r\n")],
  [
    "a TLS ClientHello on the plain port",
    Buffer.from([0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03]),
  ],
];

/** Everything wrong with a problem+json answer; empty when it is a complete problem with `status`. */
function problemFaults(answer: { status: number; type: string; body: string }, status: number, code: string): string[] {
  const faults: string[] = [];
  if (answer.status !== status) faults.push(`status ${answer.status}, not ${status}`);
  if (!answer.type.startsWith("application/problem+json")) faults.push(`Content-Type ${JSON.stringify(answer.type)}`);
  let problem: Record<string, unknown> = {};
  try {
    problem = JSON.parse(answer.body) as Record<string, unknown>;
  } catch {
    faults.push(`body not JSON: ${JSON.stringify(answer.body.slice(0, 200))}`);
  }
  if (problem.status !== answer.status || problem.code !== code || !problem.title || !problem.detail || !problem.type) {
    faults.push(`incomplete problem: ${answer.body.slice(0, 300)}`);
  }
  return faults;
}

/** What Node's parser refuses, sent raw and from HTTP clients: a problem from `server`, never a reset or a hang. */
function parserRefusals(server: string, url: () => string) {
  it(`${server}: answers request lines and headers past 16 \
KiB with a 431 problem, raw or from an HTTP client`, async () => {
    const base = new URL(url());
    const bad: string[] = [];
    for (const [what, target, headers] of OVERSIZED) {
      const raw = await exchange(base, rawGet(target, headers));
      if (raw.reset) bad.push(`raw, ${what}: connection reset (got ${JSON.stringify(raw.body.slice(0, 100))})`);
      bad.push(...problemFaults(raw, 431, "headers_too_large").map((fault) => `raw, ${what}: ${fault}`));
      const fetched = async () => {
        const res = await fetch(new URL(target, base), {
          headers: { ...service.headers, ...headers },
          signal: AbortSignal.timeout(20_000),
        });
        return { status: res.status, type: res.headers.get("content-type") ?? "", body: await res.text() };
      };
      for (const [client, answer] of [
        ["http.request", () => send(base, "GET", target, { ...service.headers, ...headers })],
        ["fetch", fetched],
      ] as const) {
        try {
          bad.push(
            ...problemFaults(await answer(), 431, "headers_too_large").map((fault) => `${client}, ${what}: ${fault}`),
          );
        } catch (error) {
          const cause = (error as { cause?: { code?: string } }).cause?.code;
          bad.push(`${client}, ${what}: ${(error as Error).message}${cause ? ` (${cause})` : ""}`);
        }
      }
    }
    expect(bad, tag(`${server}, oversized requests`)).toEqual([]);
  });

  it(`${server}: answers malformed request bytes with a 400 problem`, async () => {
    const base = new URL(url());
    const bad: string[] = [];
    for (const [what, bytes] of MALFORMED) {
      const answer = await exchange(base, bytes);
      if (answer.reset) bad.push(`${what}: connection reset`);
      bad.push(...problemFaults(answer, 400, "malformed_request").map((fault) => `${what}: ${fault}`));
    }
    expect(bad, tag(`${server}, malformed requests`)).toEqual([]);
  });
}

let anvil: Anvil;
let service: Service;
let from: Address;
let to: Address;

beforeAll(async () => {
  console.log(`fuzz seed: SEED=${SEED}`);
  anvil = await startAnvil();
  await installRegistries(anvil.url);
  const transport = http(anvil.url);
  const client = createPublicClient({ transport, chain: anvilChain });
  [from, to] = (await createWalletClient({ transport, chain: anvilChain }).getAddresses()) as [Address, Address];
  const wallet = createWalletClient({ transport, account: from, chain: anvilChain });
  const hash = await wallet.sendTransaction({
    to: addresses.v2.address,
    data: encodeFunctionData({ abi: abis.v2, functionName: "delegateAll", args: [to, zeroHash, true] }),
  });
  await client.waitForTransactionReceipt({ hash });
  service = await startService({ rpc: { 31337: anvil.url } });
});

afterAll(async () => {
  await service?.stop();
  await anvil?.stop();
});

describe("abuse", () => {
  it(`survives ${COUNT} random malformed requests: no 5xx, no hang, every error problem+json`, async () => {
    const base = new URL(service.url);
    const bad: string[] = [];
    let sent = 0;
    let refusedByParser = 0;
    const worker = async () => {
      while (sent < COUNT) {
        const method = pick(METHODS);
        // What an HTTP client can send: anything outside printable ASCII goes percent-encoded.
        const target = `${path()}${query()}`.replace(/[^\x21-\x7e]/g, encodeURIComponent);
        // Mostly with the test's key (else the keyless limit answers nearly everything), sometimes
        // keyless, sometimes with a bad key.
        const headers: Record<string, string> = chance(0.8)
          ? { ...service.headers }
          : chance(0.5)
            ? { "X-API-KEY": values().replace(/[^\x21-\x7e]/g, "") || "x" }
            : {};
        if (chance(0.05)) headers["X-Filler"] = repeat("h", 8_000);
        if (chance(0.05)) headers["X-Forwarded-For"] = values().replace(/[^\x21-\x7e]/g, "") || "x";
        sent++;
        const request =
          `${method} ${target.slice(0, 300)} (${target.length} bytes; headers ` +
          `${Object.keys(headers).join(", ") || "none"}, ${JSON.stringify(headers).length} bytes)`;
        const answer = await send(base, method, target, headers).catch((error: Error) => error);
        if (answer instanceof Error) {
          bad.push(`no answer: ${request}: ${answer.message}`);
          continue;
        }
        const where = `${request} → ${answer.status} ${answer.type} ${answer.body.slice(0, 200)}`;
        if (answer.status === 431) refusedByParser++;
        const documented = { method, path: target, status: answer.status, headers: answer.headers, text: answer.body };
        for (const mismatch of answerMismatches(documented)) bad.push(`not as /openapi.json says: ${mismatch}`);
        if (answer.status >= 500) bad.push(`5xx: ${where}`);
        else if (answer.status >= 400 && method !== "HEAD") {
          if (!answer.type.startsWith("application/problem+json")) bad.push(`not problem+json: ${where}`);
          else {
            const problem = JSON.parse(answer.body) as {
              status?: number;
              code?: string;
              title?: string;
              detail?: string;
              type?: string;
            };
            if (
              problem.status !== answer.status ||
              !problem.code ||
              !problem.title ||
              !problem.detail ||
              !problem.type
            ) {
              bad.push(`incomplete problem: ${where}`);
            }
          }
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    expect(bad.slice(0, 20), tag(`${bad.length} bad answers of ${COUNT}`)).toEqual([]);
    expect(refusedByParser, tag("requests past Node's 16 KiB header limit among them")).toBeGreaterThan(10);
  });

  parserRefusals("npm start", () => service.url);

  it("still answers correctly afterwards", async () => {
    const check = async (hot: Address, cold: Address) => {
      const answer = await ask(service.url, `/registry/v2/check/all?chainId=31337&to=${hot}&from=${cold}`, {
        headers: service.headers,
        reask: false,
      });
      expect(answer.status, tag("check after fuzz")).toBe(200);
      return answer.text;
    };
    expect(await check(to, from), tag(`the delegation made before the fuzz (${from} → ${to})`)).toBe("true");
    expect(await check(from, to), tag("the reverse, never made")).toBe("false");
    const health = await fetch(`${service.url}/health`);
    expect(health.status).toBe(200);
    expect(service.child.running, tag("the service process is alive")).toBe(true);
  });
});

describe.runIf(process.env.DATABASE_URL)(
  "abuse of an API replica (npm run serve): what Node's parser refuses is a problem too",
  () => {
    let replica: Replica;
    beforeAll(async () => {
      replica = await startReplica(service);
    });
    afterAll(async () => {
      await replica?.stop();
    });

    parserRefusals("npm run serve", () => replica.url);

    it("still answers correctly afterwards", async () => {
      const answer = await ask(replica.url, `/registry/v2/check/all?chainId=31337&to=${to}&from=${from}`, {
        headers: service.headers,
        reask: false,
      });
      expect(answer.status, tag("check on the replica after the abuse")).toBe(200);
      expect(answer.text, tag(`the delegation made before the fuzz (${from} → ${to})`)).toBe("true");
      expect(replica.child.running, tag("the replica process is alive")).toBe(true);
    });
  },
);
