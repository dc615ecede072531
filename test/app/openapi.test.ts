/**
 * The OpenAPI document against a maintained validator, and against the routes both ways: the app
 * serves exactly the documented operations, each operation's route reads and checks every
 * parameter the document lists for it and no other, and no parameter's schema refuses a text its
 * parser accepts.
 */
import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_OPERATIONS, OPERATIONS, OWNER_OPERATIONS, openApiDocument } from "../../api/openapi/document";
import { PARAMETERS, type ParameterKey } from "../../api/openapi/parameters";
import { CHAIN, emptyApp, SOCKET, servedApp, wallet } from "../helpers/empty-app";

const app = emptyApp();
const get = (path: string) => app.request(path, {}, SOCKET);
/** The app on node:http, where the feed's streams are written to Node's response. */
let served: Awaited<ReturnType<typeof servedApp>>;
beforeAll(async () => {
  served = await servedApp(app);
});
afterAll(() => served.close());

/** A valid text for each parameter. */
const VALID: Record<ParameterKey, string> = {
  chainId: String(CHAIN),
  rpcChainId: String(CHAIN),
  chains: String(CHAIN),
  blockNumber: "50",
  timestamp: "1700000000",
  fromBlock: "1",
  toBlock: "60",
  to: wallet(1),
  from: wallet(2),
  delegate: wallet(1),
  vault: wallet(2),
  contract: wallet(3),
  tokenId: "7",
  listingTokenId: "7",
  rights: "",
  limit: "10",
  cursor: "",
  feedCursor: "0",
  lastEventId: "0",
  feedStart: "0",
  feedChains: String(CHAIN),
  feedVersion: "v2",
  feedWallet: wallet(4),
  role: "from",
  feedType: "DelegateAll,ERC721",
  delivery: "instant",
  wallet: wallet(4),
  hotWallet: wallet(4),
  direction: "incoming",
  // The kinds that read every check parameter of a vaults listing.
  v2VaultType: "erc1155",
  v1VaultType: "token",
  hash: `0x${"ab".repeat(32)}`,
  contractPath: wallet(3),
  keyId: "k1",
  webhookId: "wh_0000000000000001",
};
/** A text every parameter's parser refuses. */
const INVALID = "0xnot-a-value";

/**
 * The request of an operation with its parameters valid, but for `bad`, given INVALID, `extra`,
 * added, and `left`, left out (a cursor and `timestamp`, which `blockNumber` excludes, are left out
 * unless `bad`).
 */
function request(op: (typeof OPERATIONS)[number], bad?: ParameterKey, extra?: ParameterKey, left?: ParameterKey) {
  let path = op.path;
  const headers: Record<string, string> = {};
  const query = new URLSearchParams();
  for (const key of [...op.parameters, ...(extra ? [extra] : [])]) {
    if (key === left) continue;
    const { name, in: where } = PARAMETERS[key];
    const value = key === bad || key === extra ? INVALID : VALID[key];
    if (where === "path") path = path.replace(`{${name}}`, value);
    else if (where === "header") headers[name] = value;
    else if ((key !== "cursor" && key !== "timestamp") || key === bad) query.set(name, value);
  }
  return { url: `${path}?${query}`, headers };
}

/**
 * A request's answer, and its body's text: of the feed's stream, what it sent first (the stream is
 * then closed: it stays open otherwise).
 */
async function answer(asked: { url: string; headers: Record<string, string> }) {
  const res = await served.request(asked.url, { headers: asked.headers });
  if (!res.headers.get("content-type")?.startsWith("text/event-stream")) return { res, text: await res.text() };
  const reader = res.body!.getReader();
  const { value } = await reader.read();
  await reader.cancel();
  return { res, text: new TextDecoder().decode(value) };
}

describe("the OpenAPI document", () => {
  it("is valid OpenAPI 3.1, as a maintained validator reads it", async () => {
    const result = await new Validator().validate(openApiDocument() as Parameters<Validator["validate"]>[0]);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(openApiDocument().openapi).toBe("3.1.0");
  });

  it("is served at /openapi.json, keyless, readable across origins", async () => {
    const res = await get("/openapi.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(await res.json()).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
  });

  it("lists exactly the operations the app routes under /registry, /rpc, /admin and /developer", () => {
    const routed = app.routes
      .filter((r) => /^\/(registry|rpc|admin|developer)\//.test(r.path) && !r.path.endsWith("*") && r.method !== "ALL")
      .map((r) => `${r.method} ${r.path.replaceAll(/:(\w+)/g, "{$1}")}`);
    const documented = [...OPERATIONS, ...ADMIN_OPERATIONS, ...OWNER_OPERATIONS].map(
      (op) => `${op.method.toUpperCase()} ${op.path}`,
    );
    expect(new Set(documented)).toEqual(new Set(routed));
  });

  it("answers each operation's valid request with its documented status", async () => {
    for (const op of OPERATIONS.filter((o) => o.method === "get")) {
      const { res, text } = await answer(request(op));
      expect(res.status, `${op.method} ${request(op).url}: ${text}`).toBe(op.ok.status);
    }
  });

  it("lists every parameter an operation's route checks, and no other", async () => {
    const checkedBy = async (op: (typeof OPERATIONS)[number], bad?: ParameterKey, extra?: ParameterKey) => {
      const { res, text } = await answer(request(op, bad, extra));
      return res.status === 400 ? (JSON.parse(text) as { param?: string }).param : undefined;
    };
    for (const op of OPERATIONS.filter((o) => o.method === "get")) {
      for (const key of op.parameters) {
        // An unknown chain is unsupported_chain, naming chainId too.
        expect(await checkedBy(op, key), `${op.path}: ${key} given ${INVALID}`).toBe(PARAMETERS[key].name);
      }
      const names = new Set(op.parameters.map((key) => PARAMETERS[key].name));
      for (const key of Object.keys(PARAMETERS) as ParameterKey[]) {
        if (names.has(PARAMETERS[key].name) || PARAMETERS[key].in === "path") continue;
        expect(await checkedBy(op, undefined, key), `${op.path} reads ${key}, undocumented`).toBeUndefined();
      }
    }
  });

  it("marks required exactly the query parameters a route cannot do without (some only for some types)", async () => {
    for (const op of OPERATIONS.filter((o) => o.method === "get")) {
      for (const key of op.parameters.filter((k) => PARAMETERS[k].in === "query")) {
        const { res, text } = await answer(request(op, undefined, undefined, key));
        const body = (res.status === 400 ? JSON.parse(text) : {}) as { code?: string; param?: string };
        // VALID's vaults types are those that need every conditional parameter.
        const required = (op.required?.includes(key) || op.conditional?.includes(key)) ?? false;
        expect(
          res.status === 400 && body.code === "missing_parameter" ? body.param : undefined,
          `${op.path} without ${key}, which the document marks ${required ? "required" : "optional"}`,
        ).toBe(required ? PARAMETERS[key].name : undefined);
        // Without chainId, chain 1 is asked about, which this app does not serve.
        if (!required && PARAMETERS[key].name !== "chainId")
          expect(res.status, `${op.path} without ${key}`).toBe(op.ok.status);
      }
    }
  });

  it("refuses no parameter text its parser accepts", () => {
    const ajv = new Ajv2020({ strict: false });
    const samples = [
      "",
      "0",
      "1",
      "0x",
      "0x0",
      "0x1f",
      "01",
      "1000",
      "1001",
      "9999",
      "10000",
      "-1",
      "1.5",
      "1e3",
      " 1",
      "abc",
      "all",
      "x".repeat(32),
      "x".repeat(33),
      "é",
      wallet(5),
      wallet(5).toUpperCase().replace("0X", "0x"),
      "0x52908400098527886E0F7030069857D2E4169EE7",
      "0x52908400098527886e0f7030069857d2e4169ee7",
      "0x52908400098527886E0F7030069857D2E4169Ee7",
      `0x${"ab".repeat(32)}`,
      `0x${"AB".repeat(32)}`,
      `0x${"ab".repeat(31)}`,
      (2n ** 256n - 1n).toString(),
      (2n ** 256n).toString(),
      (2n ** 63n - 1n).toString(),
      "9007199254740993",
    ];
    for (const [key, spec] of Object.entries(PARAMETERS)) {
      const validate = ajv.compile(spec.schema);
      for (const text of samples) {
        let accepted: boolean;
        try {
          accepted = spec.parse(text) !== undefined;
        } catch {
          accepted = false;
        }
        if (accepted) expect(validate(text), `${key}: the parser accepts ${JSON.stringify(text)}`).toBe(true);
      }
    }
  });
});
