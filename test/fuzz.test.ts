import { createHash } from "node:crypto";
import { request } from "node:http";
import { connect } from "node:net";
import {
  type Abi,
  type AbiFunction,
  type Address,
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  type Hex,
  http,
  toFunctionSelector,
  zeroHash,
} from "viem";
import { anvil as anvilChain } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_LABEL } from "../api/limits";
import { ADMIN_OPERATIONS, OPERATIONS, type Operation, OWNER_OPERATIONS } from "../api/openapi/document";
import { PARAMETERS, type ParameterKey, V1_CHECK_PARAMETERS, V2_CHECK_PARAMETERS } from "../api/openapi/parameters";
import { MULTICALL3_ADDRESS, multicall3Abi } from "../core/abi/multicall3";
import { FEED_TYPES, ROLES } from "../core/feed";
import { DIRECTIONS, MAX_BLOCK_NUMBER } from "../core/parse";
import { V1_CHECK_KINDS, type V1CheckKind } from "../core/v1";
import { V2_CHECK_KINDS, type V2CheckKind } from "../core/v2";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { ask } from "../devkit/ask";
import { answerMismatches } from "../devkit/openapi-check";
import { abis, addresses, installRegistries } from "../devkit/oracle";
import { chooseSeed, Rng, spellAddress } from "../devkit/random";
import { type Replica, type Service, startReplica, startService } from "../devkit/service";

/**
 * Abuse: at least 10,000 seeded random malformed requests against a running service. None may
 * give a 5xx, hang, or crash it; every error must be problem+json; every answer to a documented
 * path must be as /openapi.json says (devkit/openapi-check.ts); afterwards it still answers right.
 * The seed is printed and named in every failure.
 *
 * The requests come from a grammar: paths and queries of any shape; every operation of the
 * document with its path segments and parameters right or hostile (numbers past every column's
 * range, Object.prototype's names, NUL); cursors whose fields are any JSON, forged with the digest
 * a client can compute, for the request or for another, or not base64url at all; cursors a client
 * could make, which must be answered 200; prototype-named path segments; and POST bodies of any
 * JSON. Nine in ten carry the test's key: a keyless request's refusal waits 250 ms.
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
    // Built, not written out: layout.test.ts takes a literal `../` chain for a path out of the repository.
    () => `${"../".repeat(2)}etc/passwd`,
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

/** One request the grammar makes, and what it is for. */
type Fuzzed = {
  /** The grammar's branch, for the tally. */
  what: string;
  method: string;
  target: string;
  body?: { text: string; type?: string };
  /** A well-formed cursor with the right digest, among parameters all right: it must be answered 200. */
  sound?: boolean;
  /** Header parameters (the feed's Last-Event-ID). */
  headers?: Record<string, string>;
};

/** The first grammar: paths and queries of any shape, mostly malformed. */
const malformedRequest = (): Fuzzed => {
  const method = pick(METHODS);
  const body = { text: chance(0.5) ? "{" : repeat("x", 10_000) };
  const sends = ["POST", "PUT", "PATCH"].includes(method);
  return { what: "malformed", method, target: `${path()}${query()}`, ...(sends && { body }) };
};

/** Object.prototype's names: as path segments, parameter names and values, and JSON keys they name nothing. */
const PROTOTYPE_NAMES = [
  "__proto__",
  "constructor",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "prototype",
  "isPrototypeOf",
];

const power = (exponent: number, plus = 0n) => (2n ** BigInt(exponent) + plus).toString();
/**
 * Numbers past the ranges of the parsers and the columns (Postgres's integer, bigint and numeric(78),
 * JavaScript's safe integers), in decimal and hex, and what is close to an integer.
 */
const PAST_RANGE = [
  power(31, -1n),
  power(31),
  power(32),
  power(53),
  power(53, 1n),
  power(63, -1n),
  power(63),
  "9999999999999999999",
  power(64),
  power(256, -1n),
  power(256),
  `1${"0".repeat(80)}`,
  "-1",
  "-0",
  `-${power(63, 1n)}`,
  "0x7fffffffffffffff",
  "0x8000000000000000",
  "0xffffffffffffffff",
  `0x1${"0".repeat(64)}`,
  `0x${"f".repeat(65)}`,
  "1e3",
  "1e400",
  "1.5",
  "0.0",
  `${"0".repeat(30)}1`,
  "Infinity",
  "NaN",
];

/** Text no column or parser wants: NUL and other control characters, and more than ASCII. */
const ODD_TEXT = ["\u0000", "a\u0000b", "\u0000\u0000", "\u001f", "\u007f", "é", "😀", "\u2028"];

/** Lists of chains that no route takes (all in a list, a repeat, an empty or unknown chain). */
const CHAIN_LISTS = ["all,31337", "31337,all", "31337,31337", ",", "31337,", ",31337", "1,31337", "ALL", "all,all"];

/** A value no parameter takes: of the first grammar, past every range, a prototype's name, or odd text. */
const hostile = (): string =>
  rng.weighted<() => string>([
    [3, values],
    [1, () => pick(CHAIN_LISTS)],
    [2, () => pick(PAST_RANGE)],
    [2, () => pick(PROTOTYPE_NAMES)],
    [2, () => pick(ODD_TEXT)],
  ])();

/** What the chain holds (set up before the fuzz): the values that are right. */
const chain = { head: 0n, parties: [] as Address[], hashes: [] as string[] };
const CONTRACT: Address = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const TOKEN_ID = 42n;

const block = () => BigInt(rng.int(Number(chain.head) + 1));
const blockText = () => (chance(0.8) ? block().toString() : `0x${block().toString(16)}`);
const party = () => spellAddress(rng, pick(chain.parties));
const tokenId = () => pick([TOKEN_ID.toString(), `0x${TOKEN_ID.toString(16)}`, "0"]);
const lowerAddress = () => `0x${rng.bigint(160).toString(16).padStart(40, "0")}`;

/** The parameters but the cursor (the cursor grammar's own). */
type Key = Exclude<ParameterKey, "cursor">;
/** A right value of each parameter. */
const GOOD: Record<Key, () => string> = {
  chainId: () => "31337",
  rpcChainId: () => "31337",
  chains: () => pick(["31337", "all"]),
  blockNumber: blockText,
  // Moments around the chain's blocks (it started minutes ago), in decimal or hex.
  timestamp: () => {
    const moment = Math.floor(Date.now() / 1000) - rng.int(900);
    return chance(0.8) ? String(moment) : `0x${moment.toString(16)}`;
  },
  fromBlock: blockText,
  toBlock: blockText,
  to: party,
  from: party,
  delegate: party,
  vault: party,
  wallet: party,
  hotWallet: party,
  contract: () => spellAddress(rng, CONTRACT),
  contractPath: () => spellAddress(rng, CONTRACT),
  tokenId,
  listingTokenId: tokenId,
  rights: () => pick(["", zeroHash, "abc"]),
  limit: () => String(1 + rng.int(3)),
  feedCursor: () => String(rng.int(50)),
  lastEventId: () => String(rng.int(50)),
  feedStart: () => String(rng.int(50)),
  feedChains: () => pick(["31337", "all"]),
  feedVersion: () => pick(["v1", "v2"]),
  feedWallet: party,
  role: () => pick(ROLES),
  feedType: () => pick(FEED_TYPES),
  delivery: () => pick(["instant", "finalized"]),
  direction: () => pick(DIRECTIONS),
  v2VaultType: () => pick(V2_CHECK_KINDS),
  v1VaultType: () => pick(V1_CHECK_KINDS),
  hash: () => pick(chain.hashes),
  keyId: () => rng.bigint(48).toString(16).padStart(12, "0"),
  webhookId: () => `wh_${rng.bigint(64).toString(16).padStart(16, "0")}`,
};
const good = (key: Key) => GOOD[key]();
const rightOrHostile = (key: Key) => (chance(0.7) ? good(key) : hostile());

const OPERATION_LIST = [...OPERATIONS, ...ADMIN_OPERATIONS, ...OWNER_OPERATIONS];
const PAGED = OPERATIONS.filter((op) => op.parameters.includes("cursor"));

/** The operation's path, each path parameter given by `value`. */
const pathOf = (op: Operation, value: (key: Key) => string) =>
  op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const key = op.parameters.find((k) => PARAMETERS[k].in === "path" && PARAMETERS[k].name === name)!;
    return encodeURIComponent(value(key as Key));
  });

const queryOf = (pairs: [string, string][]) =>
  pairs.length ? `?${pairs.map(([n, v]) => `${encodeURIComponent(n)}=${encodeURIComponent(v)}`).join("&")}` : "";

/**
 * A cursor's digest of the request it continues, computed as a client can: sha256 of the path and
 * the parameters but `cursor` and `limit`, sorted by name, as JSON (independently of
 * api/routes/cursor.ts, so that a change there that clients cannot follow shows).
 */
function digestOf(path: string, pairs: [string, string][]): string {
  const kept = pairs.filter(([name]) => name !== "cursor" && name !== "limit").sort(([a], [b]) => (a < b ? -1 : 1));
  return createHash("sha256")
    .update(JSON.stringify([path, kept]))
    .digest("base64url")
    .slice(0, 16);
}

const JSON_NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;
/** A number's text as JSON: mostly a JSON number of any size where it is one, else a string. */
const numberJson = (text: string) => (JSON_NUMBER.test(text) && chance(0.7) ? text : JSON.stringify(text));
const objectJson = (entries: [string, string][]) =>
  `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(",")}}`;
/** JSON nested `depth` deep. */
const nestedJson = (depth: number) =>
  chance(0.5) ? `${"[".repeat(depth)}${"]".repeat(depth)}` : `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

/** Any JSON value, as text: numbers of any size, prototype-named keys, nesting. */
function anyJson(depth = 2): string {
  const nest = depth > 0 ? 2 : 0;
  const list = () => Array.from({ length: rng.int(4) }, () => anyJson(depth - 1));
  const key = () => pick([...PROTOTYPE_NAMES, "a", "checks", "wallets", "type", "to"]);
  return rng.weighted<() => string>([
    [2, () => pick(["null", "true", "false"])],
    [3, () => numberJson(pick(PAST_RANGE))],
    [2, () => JSON.stringify(pick([...PROTOTYPE_NAMES, ...ODD_TEXT, "\ud800", ADDRESS, "", "1", "0x1", "all"]))],
    [nest, () => `[${list().join(",")}]`],
    [nest, () => objectJson(list().map((value): [string, string] => [key(), value]))],
    [1, () => nestedJson(pick([10, 100, 1000]))],
  ])();
}

type CursorKind = "position" | "address";
const kindOf = (op: Operation): CursorKind => (op.path.endsWith("/vaults") ? "address" : "position");

/** A cursor's body as JSON text, for a request of `digest`: right in shape or not, with numbers of any size. */
function cursorJson(digest: string, kind: CursorKind): string {
  const number = (right: () => string) =>
    rng.weighted<() => string>([
      [6, right],
      [3, () => numberJson(pick(PAST_RANGE))],
      [1, () => anyJson()],
    ])();
  const where =
    kind === "address"
      ? [
          rng.weighted<() => string>([
            [5, () => JSON.stringify(lowerAddress())],
            [2, () => JSON.stringify(party())],
            [2, () => anyJson()],
          ])(),
        ]
      : [number(() => JSON.stringify(block().toString())), number(() => String(rng.int(5)))];
  const fields = [
    chance(0.9) ? "1" : pick(["0", "2", "-1", "1.0", '"1"', "true", "null", "9999999999999999999", "[1]"]),
    chance(0.9) ? JSON.stringify(digest) : anyJson(),
    number(() => JSON.stringify(block().toString())),
    ...where,
  ];
  // Too few fields, or too many.
  if (chance(0.1)) fields.splice(rng.int(fields.length), 1 + rng.int(2));
  if (chance(0.1)) fields.push(anyJson());
  return chance(0.05) ? anyJson() : `[${fields.join(",")}]`;
}

/** A cursor's text for the request of `path` and `pairs`: forged, for another request, or not a cursor at all. */
function cursorText(op: Operation, path: string, pairs: [string, string][]): string {
  const other = pick(PAGED);
  const digest = rng.weighted<() => string>([
    [8, () => digestOf(path, pairs)],
    [1, () => digestOf(pathOf(other, good), chance(0.5) ? [] : pairs)],
    [1, () => Buffer.from(repeat("a", 12)).toString("base64url")],
  ])();
  const json = cursorJson(digest, chance(0.8) ? kindOf(op) : pick(["position", "address"] as const));
  const encoded = Buffer.from(json).toString("base64url");
  return rng.weighted<() => string>([
    [12, () => encoded],
    [1, () => Buffer.from(json).toString("base64")],
    [1, () => encoded.slice(0, -1 - rng.int(3))],
    [1, () => `${encoded.slice(0, 5)}${pick(["!", "%", "*", " ", "=", ".", "\u00e9"])}${encoded.slice(5)}`],
    [1, () => json],
    [1, () => Buffer.from(Array.from({ length: rng.int(64) }, () => rng.int(256))).toString("base64url")],
    [1, () => pick(["", ...PROTOTYPE_NAMES])],
    [1, () => repeat("A", 1000 + rng.int(8000))],
  ])();
}

/**
 * A request to one of the document's operations: path segments and parameters right or hostile,
 * prototype-named parameters beside, a cursor (with `cursors` chance) and a body for a POST.
 */
function operationRequest(operations: readonly Operation[], cursors: number): Fuzzed {
  const op = pick(operations);
  const path = pathOf(op, rightOrHostile);
  const pairs: [string, string][] = [];
  const headers: Record<string, string> = {};
  for (const key of op.parameters) {
    if (PARAMETERS[key].in === "path" || key === "cursor") continue;
    if (!chance(op.required?.includes(key) || key === "chainId" ? 0.9 : 0.4)) continue;
    if (PARAMETERS[key].in === "header")
      headers[PARAMETERS[key].name] = rightOrHostile(key).replace(/[^\x21-\x7e]/g, "");
    else pairs.push([PARAMETERS[key].name, rightOrHostile(key)]);
  }
  if (chance(0.15)) pairs.push([pick(PROTOTYPE_NAMES), chance(0.5) ? pick(PROTOTYPE_NAMES) : hostile()]);
  if (chance(0.05) && pairs.length > 0) pairs.push(pick(pairs));
  if (op.parameters.includes("cursor") && chance(cursors)) pairs.push(["cursor", cursorText(op, path, pairs)]);
  const method = chance(0.85) ? (op.method === "get" && chance(0.1) ? "HEAD" : op.method.toUpperCase()) : pick(METHODS);
  return {
    what: cursors === 1 ? "cursor" : "operation",
    headers,
    method,
    target: `${path}${queryOf(rng.shuffle(pairs))}`,
    ...(op.requestBody && { body: bodyOf(op) }),
  };
}

/**
 * A request to a paged operation, every parameter right, with a cursor a client could have made: the
 * right digest, a block indexed, and where the last page ended anywhere in the cursor's ranges.
 */
function soundCursorRequest(): Fuzzed {
  const op = pick(PAGED);
  const path = pathOf(op, good);
  const pairs: [string, string][] = [["chainId", "31337"]];
  const at = block();
  const optional = (key: Key, value = GOOD[key]) => {
    if (op.parameters.includes(key) && chance(0.5)) pairs.push([PARAMETERS[key].name, value()]);
  };
  if (op.required?.length) pairs.push(["type", "all"]);
  optional("direction");
  optional("listingTokenId");
  optional("limit");
  optional("toBlock");
  optional("fromBlock", () => BigInt(rng.int(Number(at) + 1)).toString());
  const after =
    kindOf(op) === "address"
      ? [lowerAddress()]
      : [pick([block(), MAX_BLOCK_NUMBER, rng.bigint(63)]).toString(), pick([0, rng.int(5), 2 ** 31 - 1])];
  const cursor = JSON.stringify([1, digestOf(path, pairs), at.toString(), ...after]);
  pairs.push(["cursor", Buffer.from(cursor).toString("base64url")]);
  return { what: "sound cursor", method: "GET", target: `${path}${queryOf(rng.shuffle(pairs))}`, sound: true };
}

/** Paths with a segment swapped for a prototype's name (or a hostile value), and more segments beside. */
function segmentRequest(): Fuzzed {
  const base = pick([
    ...OPERATION_LIST.map((op) => pathOf(op, good)),
    "/docs",
    "/docs/swagger-ui.css",
    "/developer",
    "/openapi.json",
    "/health",
    "/ready",
    "/registry",
    "/admin",
  ]);
  const segments = base.split("/");
  segments[1 + rng.int(segments.length - 1)] = chance(0.8) ? pick(PROTOTYPE_NAMES) : encodeURIComponent(hostile());
  if (chance(0.3)) segments.push(pick(PROTOTYPE_NAMES));
  const pairs: [string, string][] = chance(0.5) ? [[pick(PROTOTYPE_NAMES), pick(PROTOTYPE_NAMES)]] : [];
  return {
    what: "segments",
    method: chance(0.7) ? "GET" : pick(METHODS),
    target: `${segments.join("/")}${queryOf(pairs)}`,
  };
}

/** A value's JSON: mostly right (numbers' text sometimes as JSON numbers), else hostile. */
const fieldJson = (key: Key) =>
  chance(0.75) ? numberJson(GOOD[key]()) : chance(0.5) ? numberJson(hostile()) : anyJson();

/** Prototype-named fields, sometimes. */
const prototypeFields = (): [string, string][] => (chance(0.15) ? [[pick(PROTOTYPE_NAMES), anyJson()]] : []);

/** One item of a batch of checks: its type and the check's fields, right or hostile. */
function checkItemJson(version: "v1" | "v2"): string {
  const kind = version === "v2" ? pick(V2_CHECK_KINDS) : pick(V1_CHECK_KINDS);
  const keys: readonly ParameterKey[] =
    version === "v2" ? V2_CHECK_PARAMETERS[kind as V2CheckKind] : V1_CHECK_PARAMETERS[kind as V1CheckKind];
  const entries: [string, string][] = [["type", chance(0.9) ? JSON.stringify(kind) : anyJson()]];
  for (const key of keys) {
    if (key !== "cursor" && chance(0.85)) entries.push([PARAMETERS[key].name, fieldJson(key)]);
  }
  return objectJson([...entries, ...prototypeFields()]);
}

/** A list's JSON: 1 to 4 items, or anything else. */
const listJson = (item: () => string) =>
  chance(0.95) ? `[${Array.from({ length: 1 + rng.int(4) }, item).join(",")}]` : anyJson();

/** Calldata for a registry or Multicall3: a call of any of their functions (writes too), spoilt or not. */
function calldataOf(depth = 2): string {
  const version = pick(["v1", "v2"] as const);
  const abi = abis[version] as Abi;
  const fns = abi.filter((item): item is AbiFunction => item.type === "function");
  const fn = pick(fns);
  const arg = (type: string): unknown => {
    if (type === "address") return pick([...chain.parties, CONTRACT, ADDRESS]);
    if (type === "bool") return chance(0.5);
    if (type === "bytes32") return pick([zeroHash, ...(chain.hashes as Hex[])].slice(0, 8));
    if (type === "bytes4") return pick(["0x01ffc9a7", "0x5f68bc5a", "0xffffffff"]);
    if (type === "uint256") return pick([0n, TOKEN_ID, (1n << 256n) - 1n]);
    if (type === "bytes32[]") return Array.from({ length: rng.int(4) }, () => arg("bytes32"));
    if (type === "bytes[]") return depth > 0 ? Array.from({ length: rng.int(4) }, () => calldataOf(depth - 1)) : [];
    return [];
  };
  let data: string;
  try {
    data = encodeFunctionData({ abi: [fn], functionName: fn.name, args: fn.inputs.map((input) => arg(input.type)) });
  } catch {
    data = toFunctionSelector(fn);
  }
  if (depth > 0 && chance(0.15)) {
    const calls = Array.from({ length: rng.int(4) }, () => ({
      target: pick<Address>([addresses.v2.address, addresses.v1.address, MULTICALL3_ADDRESS, CONTRACT]),
      allowFailure: chance(0.5),
      callData: calldataOf(depth - 1) as Hex,
    }));
    data = encodeFunctionData({ abi: multicall3Abi, functionName: "aggregate3", args: [calls] });
  }
  return rng.weighted<() => string>([
    [6, () => data],
    [1, () => data.slice(0, 2 + rng.int(data.length - 1))],
    [1, () => `${data.slice(0, 10)}${"f".repeat(64)}${data.slice(74)}`],
    [1, () => `0x${rng.bigint(8 * rng.int(100)).toString(16)}`],
    [1, () => hostile()],
  ])();
}

/** A JSON-RPC call for /rpc: eth_call of registry calldata at any block, other methods, or hostile fields. */
function rpcCallJson(): string {
  const to = pick([addresses.v2.address, addresses.v1.address, MULTICALL3_ADDRESS, CONTRACT, "0x", hostile()]);
  const tx = objectJson([
    ["to", JSON.stringify(to)],
    [chance(0.8) ? "data" : "input", chance(0.95) ? JSON.stringify(calldataOf()) : anyJson()],
    ...(chance(0.1) ? [["value", JSON.stringify(pick(["0x0", "0x1", "0x", "1", hostile()]))] as [string, string]] : []),
  ]);
  const at = rng.weighted<() => string>([
    [3, () => JSON.stringify(pick(["latest", "safe", "finalized", "pending", "earliest"]))],
    [3, () => JSON.stringify(`0x${block().toString(16)}`)],
    [1, () => JSON.stringify(`0x${(chain.head + 1000n).toString(16)}`)],
    [1, () => objectJson([["blockNumber", JSON.stringify(`0x${block().toString(16)}`)]])],
    [1, () => objectJson([["blockHash", JSON.stringify(zeroHash)]])],
    [1, () => anyJson(1)],
  ])();
  const method = pick([
    "eth_call",
    "eth_call",
    "eth_call",
    "eth_chainId",
    "eth_blockNumber",
    "net_version",
    "eth_sendTransaction",
    "eth_getBalance",
    hostile(),
  ]);
  return objectJson([
    ...(chance(0.95) ? [["jsonrpc", JSON.stringify(chance(0.95) ? "2.0" : hostile())] as [string, string]] : []),
    ...(chance(0.9) ? [["id", chance(0.8) ? String(rng.int(1000)) : anyJson(1)] as [string, string]] : []),
    ["method", JSON.stringify(method)],
    ["params", chance(0.9) ? `[${tx}${chance(0.8) ? `,${at}` : ""}]` : anyJson(1)],
  ]);
}

const CHAIN_ID_CALL = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}';
/** A JSON-RPC body: one call, a batch (up to past the 1,000 allowed), or none. */
const rpcBodyJson = (): string =>
  rng.weighted<() => string>([
    [4, rpcCallJson],
    [3, () => `[${Array.from({ length: 1 + rng.int(5) }, rpcCallJson).join(",")}]`],
    [1, () => `[${Array.from({ length: pick([1000, 1001]) }, () => CHAIN_ID_CALL).join(",")}]`],
    [1, () => pick(["[]", "{}", "[1]", '{"jsonrpc":"2.0"}'])],
  ])();

/** A POST's body: of the operation's shape, right or hostile in every field, or no JSON object at all. */
function bodyOf(op: Operation): { text: string; type?: string } {
  const version = op.path.includes("/v1/") ? "v1" : "v2";
  const chainFields = (): [string, string][] => [
    ...(chance(0.8)
      ? [["chainId", chance(0.8) ? numberJson("31337") : numberJson(hostile())] as [string, string]]
      : []),
    ...(chance(0.3) ? [["blockNumber", fieldJson("blockNumber")] as [string, string]] : []),
  ];
  const shaped = (): string => {
    if (op.path.startsWith("/rpc/")) return rpcBodyJson();
    if (op.path.endsWith("/check"))
      return objectJson([...chainFields(), ["checks", listJson(() => checkItemJson(version))], ...prototypeFields()]);
    if (op.path.endsWith("/wallets")) {
      const direction: [string, string][] = chance(0.5) ? [["direction", fieldJson("direction")]] : [];
      return objectJson([
        ...chainFields(),
        ...direction,
        ["wallets", listJson(() => fieldJson("wallet"))],
        ...prototypeFields(),
      ]);
    }
    const label = rng.weighted<() => string>([
      [2, () => JSON.stringify(pick(["fuzz", " ", "", repeat("l", MAX_LABEL + 1)]))],
      [2, () => JSON.stringify(hostile())],
      [1, () => anyJson()],
    ])();
    return objectJson([["label", label], ...prototypeFields()]);
  };
  const text = rng.weighted<() => string>([
    [16, shaped],
    [1, () => anyJson(3)],
    [1, () => nestedJson(pick([1000, 20_000, 200_000]))],
    [1, () => pick(["", "{", "null", "[]", "{}", '{"checks":[],"wallets":[]}'])],
  ])();
  const type = rng.weighted([
    [18, "application/json"],
    [1, "application/json; charset=utf-8"],
    [1, pick(["text/plain", "APPLICATION/JSON", "application/jsonx", "", "multipart/form-data"])],
  ]);
  return { text, ...(type && { type }) };
}

/** POSTs to the batch checks and bulk listings, with bodies of every kind. */
const bodyRequest = (): Fuzzed => {
  const op = pick(OPERATIONS.filter((o) => o.requestBody !== undefined));
  const method = chance(0.9) ? "POST" : pick(METHODS);
  return { what: "body", method, target: `${pathOf(op, good)}${chance(0.2) ? query() : ""}`, body: bodyOf(op) };
};

/** One request of the whole grammar. */
const fuzzed = (): Fuzzed =>
  rng.weighted<() => Fuzzed>([
    [30, malformedRequest],
    [30, () => operationRequest(OPERATION_LIST, 0.3)],
    [15, () => operationRequest(PAGED, 1)],
    [5, soundCursorRequest],
    [5, segmentRequest],
    [15, bodyRequest],
  ])();

type Answer = { status: number; type: string; body: string; headers: Headers };

function send(
  base: URL,
  method: string,
  target: string,
  headers: Record<string, string>,
  body?: string,
  localAddress?: string,
): Promise<Answer> {
  return new Promise((ok, fail) => {
    const req = request(
      { host: base.hostname, port: base.port, method, path: target, headers, timeout: 20_000, localAddress },
      (res) => {
        let body = "";
        const headers = new Headers(Object.entries(res.headers).map(([k, v]) => [k, String(v)]));
        const answer = () =>
          ok({ status: res.statusCode ?? 0, type: String(res.headers["content-type"] ?? ""), body, headers });
        res.setEncoding("utf8");
        // A stream (the change feed) stays open: what it sent first is its answer.
        const stream = String(res.headers["content-type"]).startsWith("text/event-stream");
        res.on("data", (chunk: string) => {
          body += chunk;
          if (stream && body.includes("\n\n")) {
            answer();
            req.destroy();
          }
        });
        res.on("end", answer);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer in 20 s: ${method} ${target.slice(0, 200)}`)));
    req.on("error", fail);
    req.end(body);
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

/** The delegations the fuzz finds: of every v2 type and v1 scope, so that pages of 1 have a next one. */
async function delegate(url: string, [cold, hot, other]: Address[]) {
  const transport = http(url);
  const client = createPublicClient({ transport, chain: anvilChain });
  const write = (account: Address, version: "v1" | "v2", functionName: string, args: unknown[]) => {
    const wallet = createWalletClient({ transport, account, chain: anvilChain });
    const abi = abis[version];
    const data = encodeFunctionData({ abi, functionName, args } as Parameters<typeof encodeFunctionData>[0]);
    return wallet.sendTransaction({ to: addresses[version].address, data });
  };
  // Sent one after another (anvil numbers each sender's), mined together.
  const sent = [
    await write(cold!, "v2", "delegateAll", [hot, zeroHash, true]),
    await write(cold!, "v2", "delegateContract", [hot, CONTRACT, zeroHash, true]),
    await write(cold!, "v2", "delegateERC721", [hot, CONTRACT, TOKEN_ID, zeroHash, true]),
    await write(cold!, "v2", "delegateERC20", [hot, CONTRACT, zeroHash, 1000n]),
    await write(cold!, "v2", "delegateERC1155", [hot, CONTRACT, TOKEN_ID, zeroHash, 2n ** 255n]),
    await write(other!, "v2", "delegateAll", [hot, zeroHash, true]),
    await write(cold!, "v1", "delegateForAll", [hot, true]),
    await write(cold!, "v1", "delegateForContract", [hot, CONTRACT, true]),
    await write(cold!, "v1", "delegateForToken", [hot, CONTRACT, TOKEN_ID, true]),
    await write(other!, "v1", "delegateForAll", [hot, true]),
  ];
  const receipts = await Promise.all(sent.map((hash) => client.waitForTransactionReceipt({ hash })));
  for (const receipt of receipts) expect(receipt.status, tag("a delegation written before the fuzz")).toBe("success");
  return receipts.reduce((newest, receipt) => (receipt.blockNumber > newest ? receipt.blockNumber : newest), 0n);
}

beforeAll(async () => {
  console.log(`fuzz seed: SEED=${SEED}`);
  anvil = await startAnvil();
  await installRegistries(anvil.url);
  const accounts = await createWalletClient({ transport: http(anvil.url), chain: anvilChain }).getAddresses();
  chain.parties = accounts.slice(0, 3);
  [from, to] = chain.parties as [Address, Address];
  const written = await delegate(anvil.url, chain.parties);
  service = await startService({ rpc: { 31337: anvil.url } });
  // The writes indexed (anvil mines on: the fuzz asks about blocks up to this one), and their hashes.
  const listing = async () => ask(service.url, `/registry/v2/${from}?chainId=31337`, { headers: service.headers });
  let answer = await listing();
  for (let tries = 0; (answer.block ?? 0n) < written && tries < 100; tries++) {
    await new Promise((wait) => setTimeout(wait, 100));
    answer = await listing();
  }
  expect(answer.block, tag("the block the listing is at")).toBeGreaterThanOrEqual(written);
  chain.head = answer.block!;
  chain.hashes = (JSON.parse(answer.text) as { hash: string }[]).map((d) => d.hash);
  expect(chain.hashes, tag("the v2 delegations made")).toHaveLength(5);
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
    const tally: Record<string, Record<number, number>> = {};
    const worker = async () => {
      while (sent < COUNT) {
        const fuzz = fuzzed();
        const method = fuzz.method;
        // What an HTTP client can send: anything outside printable ASCII goes percent-encoded.
        const target = fuzz.target.replace(/[^\x21-\x7e]/g, encodeURIComponent);
        // Mostly with the test's key: without one, a request spends the keyless budget, whose
        // refusals wait 250 ms each (api/access/middleware.ts).
        const access = fuzz.sound
          ? "key"
          : rng.weighted([
              [90, "key"],
              [5, "bad key"],
              [5, "none"],
            ] as const);
        const headers: Record<string, string> =
          access === "key"
            ? { ...service.headers }
            : access === "bad key"
              ? { "X-API-KEY": values().replace(/[^\x21-\x7e]/g, "") || "x" }
              : {};
        // The operator, from an address of its own: its budget is not the one keyless requests spend.
        const admin = target.startsWith("/admin");
        if (admin) {
          headers.Authorization = chance(0.9) ? `Bearer ${service.adminToken}` : `Bearer ${pick(PROTOTYPE_NAMES)}`;
        }
        Object.assign(headers, fuzz.headers);
        if (fuzz.body?.type) headers["Content-Type"] = fuzz.body.type;
        if (!fuzz.sound && chance(0.05)) headers["X-Filler"] = repeat("h", 8_000);
        if (!fuzz.sound && chance(0.05)) headers["X-Forwarded-For"] = values().replace(/[^\x21-\x7e]/g, "") || "x";
        sent++;
        const body = fuzz.body === undefined ? "" : `, body ${JSON.stringify(fuzz.body.text.slice(0, 300))}`;
        const request =
          `${method} ${target.slice(0, 300)} (${target.length} bytes; headers ` +
          `${Object.keys(headers).join(", ") || "none"}, ${JSON.stringify(headers).length} bytes${body})`;
        const answer = await send(
          base,
          method,
          target,
          headers,
          fuzz.body?.text,
          admin ? "127.0.0.2" : undefined,
        ).catch((error: Error) => error);
        if (answer instanceof Error) {
          bad.push(`no answer: ${request}: ${answer.message}`);
          continue;
        }
        const where = `${request} → ${answer.status} ${answer.type} ${answer.body.slice(0, 200)}`;
        if (answer.status === 431) refusedByParser++;
        const counts = tally[fuzz.what] ?? {};
        counts[answer.status] = (counts[answer.status] ?? 0) + 1;
        tally[fuzz.what] = counts;
        if (fuzz.sound && answer.status !== 200) bad.push(`a cursor a client could make, refused: ${where}`);
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
    console.log(`[SEED=${SEED}] answers by the grammar's branch and status: ${JSON.stringify(tally)}`);
    expect(bad.slice(0, 20), tag(`${bad.length} bad answers of ${COUNT}`)).toEqual([]);
    expect(refusedByParser, tag("requests past Node's 16 KiB header limit among them")).toBeGreaterThan(10);
    const sound = Object.values(tally["sound cursor"] ?? {}).reduce((sum, n) => sum + n, 0);
    expect(sound, tag("requests with a cursor a client could make among them")).toBeGreaterThan(100);
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
