/**
 * The v2 HTTP surface against a real service: anvil with the real DelegateRegistry installed, a few
 * known delegations made with viem, and `ponder start` indexing them. Every row of the input, output
 * and error tables of ../shared/spec/api-contract.md is exercised for the v2 routes.
 *
 * The service only serves chain 31337 here, so every chain request passes `chainId=31337`. Requests
 * carry the service's API key, so the keyless limit (tested in access.test.ts) does not apply; CORS
 * preflights carry none, as browsers send them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Address,
  createPublicClient,
  createWalletClient,
  getAddress,
  type Hex,
  http,
  keccak256,
  maxUint256,
  stringToHex,
  toHex,
  zeroAddress,
  zeroHash,
} from "viem";
import { anvil as anvilChain } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { type Answer, ask } from "../devkit/ask";
import { abis, addresses, installRegistries } from "../devkit/oracle";
import { Child, freePort, GiveUp, waitFor } from "../devkit/processes";
import { rpc } from "../devkit/rpc";
import { adminToken, createApiKey, type Service, startService } from "../devkit/service";
import { ACCEPTED_ADDRESS_FORMS, lowerHex, REJECTED_ADDRESS_FORMS, upperHex } from "./helpers/address-forms";
import { expectOk as expectAnswer, expectProblem, type Query, qs, rename, replace, without } from "./helpers/answers";
import { parseJsonExact } from "./helpers/json";
import { startRpcProxy } from "./helpers/rpc-proxy";

const CHAIN = 31337;
const MAX_S = maxUint256.toString();
const ERC20_AMOUNT = 1000n;
/** Past 2^53: a JSON number written through a double would lose digits. */
const ERC1155_AMOUNT = 123456789012345678901234567890n;
const ERC1155_TOKEN = 7n;
/** Exactly 32 ASCII bytes: the longest plain-string rights value. */
const RIGHTS_32 = "abcdefghijklmnopqrstuvwxyz012345";

const CLAIM = stringToHex("claim", { size: 32 });

/** A deterministic contract address with letters in it (so its case matters). */
const contractAddress = (label: string): Address => getAddress(keccak256(toHex(label)).slice(0, 42));
const C_CONTRACT = contractAddress("contract delegation");
const C_721 = contractAddress("erc721 collection");
const C_20 = contractAddress("erc20 token");
const C_1155 = contractAddress("erc1155 collection");
const C_OTHER = contractAddress("never delegated");

let anvil: Anvil;
let service: Service;
/** The block of the last delegation transaction: every answer must reflect at least this block. */
let lastBlock = 0n;

/** The parties, filled in from anvil's accounts (EIP-55 case). */
const W = {} as {
  allFrom: Address;
  allTo: Address; // ALL, empty rights
  conFrom: Address;
  conTo: Address; // CONTRACT on C_CONTRACT, rights "claim"
  tokFrom: Address;
  tokTo: Address; // ERC721 at 2^256-1, ERC20 1000, ERC1155 #7 big amount
  revFrom: Address;
  revTo: Address; // ALL enabled then revoked; ERC20 set then set to 0
  self: Address; // ALL to itself
  r32From: Address;
  r32To: Address; // ALL with 32-character rights
  nobody: Address; // never in any delegation
};

// ---------------------------------------------------------------------------------------------
// HTTP helpers

/** A service to ask, with the headers that carry its API key. */
type Target = { url: string; headers: Record<string, string> };
type Init = { method?: string; headers?: Record<string, string>; body?: string };

/** One request with the target's API key, bounded in time, never asked again: a hang is a failure. */
function call(to: Target, path: string, init: Init = {}): Promise<Answer> {
  const headers = { ...to.headers, ...init.headers };
  return ask(to.url, path, { method: init.method, headers, body: init.body, timeoutMs: 20_000, reask: false });
}

const get = (path: string, query: Query = [], init: Init = {}) => call(service, `${path}${qs(query)}`, init);

/** A 200 chain answer whose X-Indexed-Block covers our writes; and its body, if given. */
const expectOk = (a: Answer, body?: string) => expectAnswer(a, lastBlock, body);

// ---------------------------------------------------------------------------------------------
// The routes, each with a query whose answer is known (true or a non-zero balance), so that a
// misread parameter shows as a different answer.

type CheckRoute = {
  kind: "all" | "contract" | "erc721" | "erc1155" | "erc20";
  /** The known query, without chainId; names as given (erc* use both spellings across routes). */
  query: () => Query;
  expected: () => string;
  /** Required parameters: each entry lists the names that may carry it. */
  required: string[][];
};

const CHECKS: CheckRoute[] = [
  {
    kind: "all",
    query: () => [
      ["to", W.allTo],
      ["from", W.allFrom],
    ],
    expected: () => "true",
    required: [["to"], ["from"]],
  },
  {
    kind: "contract",
    query: () => [
      ["to", W.conTo],
      ["from", W.conFrom],
      ["contract", C_CONTRACT],
      ["rights", "claim"],
    ],
    expected: () => "true",
    required: [["to"], ["from"], ["contract"]],
  },
  {
    kind: "erc721",
    query: () => [
      ["delegate", W.tokTo],
      ["vault", W.tokFrom],
      ["contract", C_721],
      ["tokenId", MAX_S],
    ],
    expected: () => "true",
    required: [["delegate", "to"], ["vault", "from"], ["contract"], ["tokenId"]],
  },
  {
    kind: "erc1155",
    query: () => [
      ["to", W.tokTo],
      ["from", W.tokFrom],
      ["contract", C_1155],
      ["tokenId", String(ERC1155_TOKEN)],
    ],
    expected: () => String(ERC1155_AMOUNT),
    required: [["to", "delegate"], ["from", "vault"], ["contract"], ["tokenId"]],
  },
  {
    kind: "erc20",
    query: () => [
      ["delegate", W.tokTo],
      ["vault", W.tokFrom],
      ["contract", C_20],
    ],
    expected: () => String(ERC20_AMOUNT),
    required: [["delegate", "to"], ["vault", "from"], ["contract"]],
  },
];

const checkPath = (kind: CheckRoute["kind"]) => `/registry/v2/check/${kind}`;
const withChain = (query: Query): Query => [...query, ["chainId", String(CHAIN)]];

// ---------------------------------------------------------------------------------------------
// Setup: chain, registry, delegations, service

async function makeDelegations(url: string): Promise<bigint> {
  const wallet = createWalletClient({ chain: anvilChain, transport: http(url) });
  const pub = createPublicClient({ chain: anvilChain, transport: http(url) });
  const accounts = await wallet.getAddresses();
  const at = (i: number) => getAddress(accounts[i]!);
  Object.assign(W, {
    allFrom: at(1),
    allTo: at(2),
    conFrom: at(3),
    conTo: at(4),
    tokFrom: at(5),
    tokTo: at(6),
    revFrom: at(7),
    revTo: at(8),
    self: at(9),
    r32From: at(10),
    r32To: at(11),
    nobody: at(15),
  });
  const registry = addresses.v2.address;
  const hashes: Hex[] = [];
  const write = async (account: Address, functionName: string, args: readonly unknown[]) => {
    // Sent one after another: each sender's transactions keep their order (nonces).
    // Explicit gas: an estimate made before the sender's previous transaction is mined can be short.
    hashes.push(
      await wallet.writeContract({
        account,
        address: registry,
        abi: abis.v2,
        functionName,
        args,
        gas: 500_000n,
      } as never),
    );
  };
  await write(W.allFrom, "delegateAll", [W.allTo, zeroHash, true]);
  await write(W.conFrom, "delegateContract", [W.conTo, C_CONTRACT, CLAIM, true]);
  await write(W.tokFrom, "delegateERC721", [W.tokTo, C_721, maxUint256, zeroHash, true]);
  await write(W.tokFrom, "delegateERC20", [W.tokTo, C_20, zeroHash, ERC20_AMOUNT]);
  await write(W.tokFrom, "delegateERC1155", [W.tokTo, C_1155, ERC1155_TOKEN, zeroHash, ERC1155_AMOUNT]);
  await write(W.revFrom, "delegateAll", [W.revTo, zeroHash, true]);
  await write(W.revFrom, "delegateERC20", [W.revTo, C_20, zeroHash, 5n]);
  await write(W.revFrom, "delegateAll", [W.revTo, zeroHash, false]);
  await write(W.revFrom, "delegateERC20", [W.revTo, C_20, zeroHash, 0n]);
  await write(W.self, "delegateAll", [W.self, zeroHash, true]);
  await write(W.r32From, "delegateAll", [W.r32To, stringToHex(RIGHTS_32, { size: 32 }), true]);
  let last = 0n;
  for (const hash of hashes) {
    const receipt = await pub.waitForTransactionReceipt({ hash, pollingInterval: 100 });
    if (receipt.status !== "success") throw new Error(`delegation transaction ${hash} reverted`);
    if (receipt.blockNumber > last) last = receipt.blockNumber;
  }
  return last;
}

beforeAll(async () => {
  anvil = await startAnvil();
  await installRegistries(anvil.url);
  lastBlock = await makeDelegations(anvil.url);
  service = await startService({ rpc: { [CHAIN]: anvil.url } });
  // /ready means the backfill is done; wait until the answers also reflect our last write.
  await waitFor("the service to index the delegations", async () => {
    const res = await ask(service.url, `/registry/v2/check/all?to=${W.allTo}&from=${W.allFrom}&chainId=${CHAIN}`, {
      headers: service.headers,
      reask: false,
    });
    const block = res.headers.get("x-indexed-block");
    return res.status === 200 && block !== null && BigInt(block) >= lastBlock ? true : undefined;
  });
});

afterAll(async () => {
  await service?.stop();
  await anvil?.stop();
});

// ---------------------------------------------------------------------------------------------
// Inputs

describe("inputs: addresses", () => {
  for (const route of CHECKS) {
    for (const param of ["to", "from", "delegate", "vault", "contract"]) {
      // Every name the route accepts for an address, including the alternative spellings.
      const names = route.required.find((names) => names.includes(param));
      if (!names) continue;
      const base = () => {
        const q = route.query();
        const given = q.find(([k]) => names.includes(k))![0];
        return given === param ? q : rename(q, given, param);
      };
      const value = () => base().find(([k]) => k === param)![1] as Address;

      it.each(ACCEPTED_ADDRESS_FORMS)(`check/${route.kind} '${param}' accepts %s`, async (_, form) => {
        const a = await get(checkPath(route.kind), withChain(replace(base(), param, form(value()))));
        expectOk(a, route.expected());
      });

      it.each(REJECTED_ADDRESS_FORMS)(`check/${route.kind} '${param}' rejects %s`, async (_, form) => {
        const a = await get(checkPath(route.kind), withChain(replace(base(), param, form(value()))));
        expectProblem(a, 400, "invalid_parameter", param);
      });
    }
  }

  it.each(ACCEPTED_ADDRESS_FORMS)("path :wallet accepts %s (same listing)", async (_, form) => {
    const reference = await get(`/registry/v2/${W.tokFrom}`, withChain([]));
    expectOk(reference);
    const a = await get(`/registry/v2/${form(W.tokFrom)}`, withChain([]));
    expectOk(a, reference.text);
    expect((parseJsonExact(a.text) as unknown[]).length).toBe(3);
  });

  it.each(REJECTED_ADDRESS_FORMS.filter(([form]) => form !== "empty"))("path :wallet rejects %s", async (_, form) => {
    const a = await get(`/registry/v2/${encodeURIComponent(form(W.tokFrom))}`, withChain([]));
    expectProblem(a, 400, "invalid_parameter", "wallet");
  });

  it("a different address gives a different answer (the forms above are not ignored)", async () => {
    expectOk(
      await get(
        checkPath("all"),
        withChain([
          ["to", W.allTo],
          ["from", W.conFrom],
        ]),
      ),
      "false",
    );
    expectOk(
      await get(
        checkPath("all"),
        withChain([
          ["to", W.conTo],
          ["from", W.allFrom],
        ]),
      ),
      "false",
    );
    expectOk(
      await get(
        checkPath("contract"),
        withChain([
          ["to", W.conTo],
          ["from", W.conFrom],
          ["contract", C_OTHER],
          ["rights", "claim"],
        ]),
      ),
      "false",
    );
  });
});

describe("inputs: tokenId", () => {
  const erc721 = CHECKS.find((r) => r.kind === "erc721")!;
  const erc1155 = CHECKS.find((r) => r.kind === "erc1155")!;

  it.each([
    ["2^256-1 in decimal", MAX_S, "true"],
    ["2^256-1 in 0x-hex", `0x${"f".repeat(64)}`, "true"],
    ["2^256-1 in 0x-hex, uppercase digits", `0x${"F".repeat(64)}`, "true"],
    ["0 (no delegation there)", "0", "false"],
    ["2 (no delegation there)", "2", "false"],
  ])("check/erc721 accepts %s", async (_, tokenId, expected) => {
    expectOk(await get(checkPath("erc721"), withChain(replace(erc721.query(), "tokenId", tokenId))), expected);
  });

  it.each([
    ["decimal", "7", String(ERC1155_AMOUNT)],
    ["0x-hex", "0x7", String(ERC1155_AMOUNT)],
    ["0x-hex with leading zeros", `0x${"7".padStart(64, "0")}`, String(ERC1155_AMOUNT)],
    ["another token (no delegation)", "8", "0"],
    ["2^256-1 (no delegation)", MAX_S, "0"],
  ])("check/erc1155 accepts %s", async (_, tokenId, expected) => {
    expectOk(await get(checkPath("erc1155"), withChain(replace(erc1155.query(), "tokenId", tokenId))), expected);
  });

  const REJECTED: [string, string][] = [
    ["negative", "-1"],
    ["negative zero", "-0"],
    ["fractional", "1.5"],
    ["fractional form of an integer", "7.0"],
    ["exponent form", "1e3"],
    ["exponent form of an integer it holds", "7e0"],
    ["2^256 in decimal", (maxUint256 + 1n).toString()],
    ["2^256 in 0x-hex", `0x1${"0".repeat(64)}`],
    ["empty", ""],
    ["0x alone", "0x"],
    ["not a number", "abc"],
  ];
  for (const route of [erc721, erc1155]) {
    it.each(REJECTED)(`check/${route.kind} rejects a tokenId that is %s`, async (_, tokenId) => {
      expectProblem(
        await get(checkPath(route.kind), withChain(replace(route.query(), "tokenId", tokenId))),
        400,
        "invalid_parameter",
        "tokenId",
      );
    });
  }
});

describe("inputs: chainId", () => {
  const all = CHECKS[0]!;

  function expectUnsupported(a: Answer, param = true) {
    const body = expectProblem(a, 400, "unsupported_chain", param ? "chainId" : undefined);
    // The problem lists the chains this instance serves: here only 31337.
    expect(body.detail).toContain(String(CHAIN));
    if ("chains" in body) expect(body.chains).toEqual([CHAIN]);
    return body;
  }

  it("absent means 1, which this instance does not serve: unsupported_chain listing 31337", async () => {
    for (const route of CHECKS) expectUnsupported(await get(checkPath(route.kind), route.query()), false);
    expectUnsupported(await get(`/registry/v2/${W.tokFrom}`), false);
  });

  it("absent is the same as chainId=1", async () => {
    const absent = expectUnsupported(await get(checkPath("all"), all.query()), false);
    const one = expectUnsupported(await get(checkPath("all"), [...all.query(), ["chainId", "1"]]));
    expect(absent.code).toBe(one.code);
  });

  it("31337 is served on every route", async () => {
    for (const route of CHECKS) expectOk(await get(checkPath(route.kind), withChain(route.query())), route.expected());
    expectOk(await get(`/registry/v2/${W.tokFrom}`, withChain([])));
  });

  it.each([
    ["mainnet, not served here", "1"],
    ["another known chain", "10"],
    ["an unknown chain", "999999"],
    ["letters", "abc"],
    ["negative", "-1"],
    ["negative of the served chain", "-31337"],
    ["fractional", "1.5"],
    ["the served chain with a fraction", "31337.0"],
    ["0x-hex of the served chain", "0x7a69"],
    ["exponent form", "3.1337e4"],
    ["zero", "0"],
    ["empty", ""],
    ["whitespace around the served chain", " 31337 "],
    ["trailing garbage", "31337abc"],
    ["huge", "9".repeat(40)],
  ])("%s (%j) is unsupported_chain listing the served chains", async (_, chainId) => {
    expectUnsupported(await get(checkPath("all"), [...all.query(), ["chainId", chainId]]));
    expectUnsupported(await get(`/registry/v2/${W.tokFrom}`, [["chainId", chainId]]));
  });
});

describe("inputs: rights", () => {
  const contractQuery = (rights?: string): Query => {
    const q = without(CHECKS[1]!.query(), "rights");
    return withChain(rights === undefined ? q : [...q, ["rights", rights]]);
  };

  it('a plain string is bytes32("..."): same answer as its 0x form, and it is not ignored', async () => {
    expectOk(await get(checkPath("contract"), contractQuery("claim")), "true");
    expectOk(await get(checkPath("contract"), contractQuery(CLAIM)), "true");
    expectOk(await get(checkPath("contract"), contractQuery(upperHex(CLAIM))), "true");
    // The delegation carries "claim": other rights, and no rights, do not match it.
    expectOk(await get(checkPath("contract"), contractQuery("claim2")), "false");
    expectOk(await get(checkPath("contract"), contractQuery("Claim")), "false");
    expectOk(await get(checkPath("contract"), contractQuery(" claim")), "false");
  });

  it("absent, empty and 32 zero bytes are all the zero rights", async () => {
    // The "claim" delegation does not answer a zero-rights check ...
    expectOk(await get(checkPath("contract"), contractQuery()), "false");
    expectOk(await get(checkPath("contract"), contractQuery("")), "false");
    expectOk(await get(checkPath("contract"), contractQuery(zeroHash)), "false");
    // ... while an empty-rights delegation answers every rights value, zero or not.
    const all = (rights?: string) =>
      withChain([
        ["to", W.allTo],
        ["from", W.allFrom],
        ...(rights === undefined ? [] : [["rights", rights] as [string, string]]),
      ]);
    for (const rights of [undefined, "", zeroHash, "claim", CLAIM])
      expectOk(await get(checkPath("all"), all(rights)), "true");
  });

  it("a 32-character string is accepted and taken as exactly those 32 bytes", async () => {
    const q = (rights?: string) =>
      withChain([
        ["to", W.r32To],
        ["from", W.r32From],
        ...(rights === undefined ? [] : [["rights", rights] as [string, string]]),
      ]);
    expectOk(await get(checkPath("all"), q(RIGHTS_32)), "true");
    expectOk(await get(checkPath("all"), q(stringToHex(RIGHTS_32, { size: 32 }))), "true");
    expectOk(await get(checkPath("all"), q(RIGHTS_32.slice(0, 31))), "false");
    expectOk(await get(checkPath("all"), q()), "false");
  });

  it("rights apply to every check route (erc* answered through the ALL delegation)", async () => {
    for (const kind of ["erc721", "erc1155", "erc20"] as const) {
      const base: Query = [
        ["to", W.allTo],
        ["from", W.allFrom],
        ["contract", C_OTHER],
      ];
      if (kind !== "erc20") base.push(["tokenId", "1"]);
      const expected = kind === "erc721" ? "true" : MAX_S;
      expectOk(await get(checkPath(kind), withChain([...base, ["rights", "claim"]])), expected);
      expectOk(await get(checkPath(kind), withChain([...base, ["rights", CLAIM]])), expected);
    }
  });

  const REJECTED: [string, string][] = [
    ["33 characters", `${RIGHTS_32}6`],
    ["non-ASCII (é)", "clé"],
    ["non-ASCII (emoji)", "😀"],
    ["non-ASCII (CJK)", "日本語"],
    ["short hex", "0x1234"],
    ["63 hex digits", `0x${"a".repeat(63)}`],
    ["65 hex digits", `0x${"a".repeat(65)}`],
    ["a non-hex digit in 64", `0x${"g".repeat(64)}`],
    ["0x alone", "0x"],
  ];
  for (const route of CHECKS) {
    it.each(REJECTED)(`check/${route.kind} rejects rights that are %s`, async (_, rights) => {
      const q = withChain([...without(route.query(), "rights"), ["rights", rights]]);
      expectProblem(await get(checkPath(route.kind), q), 400, "invalid_parameter", "rights");
    });
  }
});

describe("inputs: unknown and repeated parameters", () => {
  for (const route of CHECKS) {
    it(`check/${route.kind} ignores unknown parameters`, async () => {
      const q = withChain([
        ["foo", "bar"],
        ...route.query(),
        ["utm_source", "x"],
        ["empty", ""],
        ["chain", "1"],
        ["TO", "nonsense"],
      ]);
      expectOk(await get(checkPath(route.kind), q), route.expected());
    });

    for (const [name] of withChain(route.query())) {
      it(`check/${route.kind} rejects '${name}' given twice (same value)`, async () => {
        const q = withChain(route.query());
        const value = q.find(([k]) => k === name)![1];
        expectProblem(await get(checkPath(route.kind), [...q, [name, value]]), 400, undefined, name);
      });
    }
  }

  it("the listing ignores unknown parameters", async () => {
    const reference = await get(`/registry/v2/${W.tokFrom}`, withChain([]));
    expectOk(
      await get(
        `/registry/v2/${W.tokFrom}`,
        withChain([
          ["foo", "bar"],
          ["to", "x"],
        ]),
      ),
      reference.text,
    );
  });

  it("the listing rejects chainId given twice", async () => {
    expectProblem(
      await get(`/registry/v2/${W.tokFrom}`, [
        ["chainId", "31337"],
        ["chainId", "31337"],
      ]),
      400,
      undefined,
      "chainId",
    );
  });
});

describe("inputs: party names", () => {
  for (const kind of ["erc721", "erc1155", "erc20"] as const) {
    const route = CHECKS.find((r) => r.kind === kind)!;
    // The route's query with the hot wallet as `to` and the cold as `from`.
    const toFrom = () => rename(rename(route.query(), "delegate", "to"), "vault", "from");
    const delegateVault = () => rename(rename(route.query(), "to", "delegate"), "from", "vault");

    it(`check/${kind} takes to/from and delegate/vault alike, and any mix`, async () => {
      expectOk(await get(checkPath(kind), withChain(toFrom())), route.expected());
      expectOk(await get(checkPath(kind), withChain(delegateVault())), route.expected());
      expectOk(await get(checkPath(kind), withChain(rename(toFrom(), "from", "vault"))), route.expected());
      expectOk(await get(checkPath(kind), withChain(rename(toFrom(), "to", "delegate"))), route.expected());
    });

    it(`check/${kind}: both names for one party with the same value is fine`, async () => {
      expectOk(await get(checkPath(kind), withChain([...toFrom(), ["delegate", W.tokTo]])), route.expected());
      expectOk(await get(checkPath(kind), withChain([...toFrom(), ["vault", W.tokFrom]])), route.expected());
      // The same address in another case is the same value.
      expectOk(
        await get(
          checkPath(kind),
          withChain([...toFrom(), ["delegate", lowerHex(W.tokTo)], ["vault", upperHex(W.tokFrom)]]),
        ),
        route.expected(),
      );
    });

    it(`check/${kind}: both names for one party with different values is conflicting_parameter`, async () => {
      expectProblem(
        await get(checkPath(kind), withChain([...toFrom(), ["delegate", W.allTo]])),
        400,
        "conflicting_parameter",
        ["to", "delegate"],
      );
      expectProblem(
        await get(checkPath(kind), withChain([...toFrom(), ["vault", W.allFrom]])),
        400,
        "conflicting_parameter",
        ["from", "vault"],
      );
      expectProblem(
        await get(checkPath(kind), withChain([...delegateVault(), ["to", W.allTo]])),
        400,
        "conflicting_parameter",
        ["to", "delegate"],
      );
    });
  }

  for (const kind of ["all", "contract"] as const) {
    const route = CHECKS.find((r) => r.kind === kind)!;
    it(`check/${kind} takes to/from only: delegate/vault are unknown parameters`, async () => {
      const dv = rename(rename(route.query(), "to", "delegate"), "from", "vault");
      expectProblem(await get(checkPath(kind), withChain(dv)), 400, "missing_parameter", "to");
      expectProblem(
        await get(checkPath(kind), withChain(rename(route.query(), "from", "vault"))),
        400,
        "missing_parameter",
        "from",
      );
      // Given beside to/from, they are ignored, whatever their value.
      const extra = withChain([...route.query(), ["delegate", W.nobody], ["vault", "not an address"]]);
      expectOk(await get(checkPath(kind), extra), route.expected());
    });
  }
});

describe("inputs: missing parameters", () => {
  for (const route of CHECKS) {
    for (const names of route.required) {
      it(`check/${route.kind} without ${names.join("/")} is missing_parameter`, async () => {
        let q = withChain(route.query());
        for (const name of names) q = without(q, name);
        expectProblem(await get(checkPath(route.kind), q), 400, "missing_parameter", names);
      });
    }
    it(`check/${route.kind} with no parameters at all is a 400`, async () => {
      expectProblem(await get(checkPath(route.kind), withChain([])), 400, "missing_parameter");
    });
  }
});

// ---------------------------------------------------------------------------------------------
// Outputs

describe("outputs: checks", () => {
  it("boolean checks answer exactly true or false, as application/json", async () => {
    expectOk(
      await get(
        checkPath("all"),
        withChain([
          ["to", W.allTo],
          ["from", W.allFrom],
        ]),
      ),
      "true",
    );
    expectOk(
      await get(
        checkPath("all"),
        withChain([
          ["to", W.revTo],
          ["from", W.revFrom],
        ]),
      ),
      "false",
    ); // revoked
    expectOk(
      await get(
        checkPath("all"),
        withChain([
          ["to", W.allFrom],
          ["from", W.allTo],
        ]),
      ),
      "false",
    ); // reversed
    expectOk(
      await get(
        checkPath("all"),
        withChain([
          ["to", W.self],
          ["from", W.self],
        ]),
      ),
      "true",
    );
    expectOk(
      await get(
        checkPath("contract"),
        withChain([
          ["to", W.allTo],
          ["from", W.allFrom],
          ["contract", C_OTHER],
        ]),
      ),
      "true",
    ); // ALL covers it
    expectOk(
      await get(
        checkPath("contract"),
        withChain([
          ["to", W.revTo],
          ["from", W.revFrom],
          ["contract", C_OTHER],
        ]),
      ),
      "false",
    );
    expectOk(
      await get(
        checkPath("erc721"),
        withChain([
          ["to", W.allTo],
          ["from", W.allFrom],
          ["contract", C_OTHER],
          ["tokenId", "5"],
        ]),
      ),
      "true",
    );
    expectOk(
      await get(
        checkPath("erc721"),
        withChain([
          ["to", W.tokTo],
          ["from", W.tokFrom],
          ["contract", C_20],
          ["tokenId", MAX_S],
        ]),
      ),
      "false",
    );
  });

  it("balance checks answer a bare exact integer literal", async () => {
    const q = (kind: "erc20" | "erc1155", query: Query) => get(checkPath(kind), withChain(query));
    // Covered by ALL: 2^256-1, every digit.
    expectOk(
      await q("erc20", [
        ["to", W.allTo],
        ["from", W.allFrom],
        ["contract", C_OTHER],
      ]),
      MAX_S,
    );
    expectOk(
      await q("erc1155", [
        ["to", W.allTo],
        ["from", W.allFrom],
        ["contract", C_OTHER],
        ["tokenId", "3"],
      ]),
      MAX_S,
    );
    // Covered by CONTRACT (with the rights it carries): 2^256-1 too.
    expectOk(
      await q("erc20", [
        ["to", W.conTo],
        ["from", W.conFrom],
        ["contract", C_CONTRACT],
        ["rights", "claim"],
      ]),
      MAX_S,
    );
    expectOk(
      await q("erc20", [
        ["to", W.tokTo],
        ["from", W.tokFrom],
        ["contract", C_20],
      ]),
      "1000",
    );
    expectOk(
      await q("erc1155", [
        ["to", W.tokTo],
        ["from", W.tokFrom],
        ["contract", C_1155],
        ["tokenId", "7"],
      ]),
      "123456789012345678901234567890",
    );
    // None: 0. Revoked by amount 0: 0.
    expectOk(
      await q("erc20", [
        ["to", W.tokTo],
        ["from", W.tokFrom],
        ["contract", C_OTHER],
      ]),
      "0",
    );
    expectOk(
      await q("erc20", [
        ["to", W.revTo],
        ["from", W.revFrom],
        ["contract", C_20],
      ]),
      "0",
    );
    expectOk(
      await q("erc1155", [
        ["to", W.nobody],
        ["from", W.tokFrom],
        ["contract", C_1155],
        ["tokenId", "7"],
      ]),
      "0",
    );
  });
});

describe("outputs: listing", () => {
  const listing = async (wallet: string) => {
    const a = await get(`/registry/v2/${wallet}`, withChain([]));
    expectOk(a);
    const body = parseJsonExact(a.text);
    expect(Array.isArray(body), a.text).toBe(true);
    return body as Record<string, unknown>[];
  };
  const record = (r: {
    type: string;
    from: Address;
    to: Address;
    contract: Address | null;
    tokenId: bigint | null;
    delegationType: string;
    rights: Hex;
    amount: bigint | null;
  }) => ({
    type: r.type,
    from: getAddress(r.from),
    to: getAddress(r.to),
    contract: r.contract && getAddress(r.contract),
    tokenId: r.tokenId,
    delegationType: r.delegationType,
    rights: r.rights,
    amount: r.amount,
  });
  const normalize = (list: Record<string, unknown>[]) =>
    list.map((r) => {
      expect(r.rights).toMatch(/^0x[0-9a-fA-F]{64}$/);
      return { ...r, rights: String(r.rights).toLowerCase() };
    });

  const tokRecords = () => [
    record({
      type: "TOKEN",
      from: W.tokFrom,
      to: W.tokTo,
      contract: C_721,
      tokenId: maxUint256,
      delegationType: "ERC721",
      rights: zeroHash,
      amount: null,
    }),
    record({
      type: "CONTRACT",
      from: W.tokFrom,
      to: W.tokTo,
      contract: C_20,
      tokenId: null,
      delegationType: "ERC20",
      rights: zeroHash,
      amount: ERC20_AMOUNT,
    }),
    record({
      type: "TOKEN",
      from: W.tokFrom,
      to: W.tokTo,
      contract: C_1155,
      tokenId: ERC1155_TOKEN,
      delegationType: "ERC1155",
      rights: zeroHash,
      amount: ERC1155_AMOUNT,
    }),
  ];

  it("ALL: contract, tokenId and amount null, rights 0x00…00, addresses EIP-55", async () => {
    const expected = [
      record({
        type: "ALL",
        from: W.allFrom,
        to: W.allTo,
        contract: null,
        tokenId: null,
        delegationType: "ALL",
        rights: zeroHash,
        amount: null,
      }),
    ];
    expect(normalize(await listing(W.allFrom))).toEqual(expected);
    expect(normalize(await listing(lowerHex(W.allTo)))).toEqual(expected); // incoming
  });

  it("CONTRACT with rights: the rights' bytes32", async () => {
    const expected = [
      record({
        type: "CONTRACT",
        from: W.conFrom,
        to: W.conTo,
        contract: C_CONTRACT,
        tokenId: null,
        delegationType: "CONTRACT",
        rights: CLAIM,
        amount: null,
      }),
    ];
    expect(normalize(await listing(W.conFrom))).toEqual(expected);
  });

  it("ERC721 (TOKEN), ERC20 (CONTRACT, amount), ERC1155 (TOKEN, amount) with exact integers, in chain \
order", async () => {
    expect(normalize(await listing(W.tokFrom))).toEqual(tokRecords());
    expect(normalize(await listing(W.tokTo))).toEqual(tokRecords());
  });

  it("tokenId and amount are bare integer literals with every digit", async () => {
    const a = await get(`/registry/v2/${W.tokFrom}`, withChain([]));
    expect(a.text).toMatch(new RegExp(`"tokenId"\\s*:\\s*${MAX_S}\\s*[,}]`));
    expect(a.text).toMatch(new RegExp(`"amount"\\s*:\\s*${ERC1155_AMOUNT}\\s*[,}]`));
    expect(a.text).not.toMatch(/e\+|E\+/);
  });

  it("revoked delegations (ALL disabled, ERC20 set to 0) are not listed", async () => {
    expect(await listing(W.revFrom)).toEqual([]);
    expect(await listing(W.revTo)).toEqual([]);
  });

  it("a self-delegation appears once", async () => {
    expect(normalize(await listing(W.self))).toEqual([
      record({
        type: "ALL",
        from: W.self,
        to: W.self,
        contract: null,
        tokenId: null,
        delegationType: "ALL",
        rights: zeroHash,
        amount: null,
      }),
    ]);
  });

  it("a wallet with no delegations is an empty array", async () => {
    const a = await get(`/registry/v2/${W.nobody}`, withChain([]));
    expectOk(a);
    expect(JSON.parse(a.text)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Errors and HTTP

describe("errors: paths and methods", () => {
  it.each([
    "/nothing",
    "/registry/v3/x",
    "/registry/v3/check/all",
    "/registry/v2/check/nothing",
    "/registry/v2/check/all/extra",
    "/registry/v2/0x70997970C51812dc3A010C7d01b50e0d17dc79C8/extra",
    "/registry",
    "/registry/v2/check/erc721/1",
  ])("GET %s is 404 not_found", async (path) => {
    expectProblem(await get(path, withChain([])), 404, "not_found");
  });

  it("GET /registry/v2/check, the batch checks' path, is 405 with Allow: POST, OPTIONS", async () => {
    const a = await get("/registry/v2/check", withChain([]));
    expectProblem(a, 405, "method_not_allowed");
    expect(a.headers.get("allow")).toBe("POST, OPTIONS");
  });

  const PATHS = () => [
    `${checkPath("all")}${qs(withChain(CHECKS[0]!.query()))}`,
    `${checkPath("erc20")}${qs(withChain(CHECKS[4]!.query()))}`,
    `/registry/v2/${W.tokFrom}${qs(withChain([]))}`,
  ];

  it.each(["POST", "PUT", "DELETE", "PATCH"])(
    "%s is 405 method_not_allowed with Allow: GET, HEAD, OPTIONS",
    async (method) => {
      for (const path of PATHS()) {
        const a = await call(service, path, {
          method,
          headers: { "content-type": "application/json" },
          body: method === "DELETE" ? undefined : "{}",
        });
        expectProblem(a, 405, "method_not_allowed");
        expect(a.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
      }
    },
  );

  it("HEAD answers the GET headers with an empty body", async () => {
    for (const path of [...PATHS(), `${checkPath("all")}?chainId=${CHAIN}`, "/nothing", `${checkPath("all")}`]) {
      const g = await call(service, path);
      const h = await call(service, path, { method: "HEAD" });
      expect(h.status, path).toBe(g.status);
      expect(h.text, path).toBe("");
      for (const name of ["content-type", "access-control-allow-origin", "allow"]) {
        expect(h.headers.get(name), `${path} ${name}`).toBe(g.headers.get(name));
      }
      // The chain moves on between the two requests: HEAD reports the GET's block or a later one.
      const [gb, hb] = [g.headers.get("x-indexed-block"), h.headers.get("x-indexed-block")];
      expect(hb === null, `${path} x-indexed-block on HEAD iff on GET`).toBe(gb === null);
      if (gb !== null) expect(BigInt(hb!) >= BigInt(gb), `${path} x-indexed-block ${hb} after ${gb}`).toBe(true);
    }
  });

  it("OPTIONS preflight is answered with CORS headers that allow GET and X-API-KEY", async () => {
    for (const path of PATHS()) {
      const res = await fetch(`${service.url}${path}`, {
        method: "OPTIONS",
        headers: {
          Origin: "https://example.org",
          "Access-Control-Request-Method": "GET",
          "Access-Control-Request-Headers": "X-API-KEY",
        },
      });
      expect([200, 204]).toContain(res.status);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      const methods = (res.headers.get("access-control-allow-methods") ?? "")
        .split(",")
        .map((m) => m.trim().toUpperCase())
        .filter(Boolean);
      // The app's CORS answers it (api/app.ts), inside npm start too (answerBesidePonder); the API
      // refuses all but GET/HEAD/OPTIONS with 405 (tested above).
      expect(methods).toEqual(["GET", "HEAD", "OPTIONS"]);
      expect(res.headers.get("access-control-allow-headers")).toBe("X-API-KEY,Content-Type");
    }
  });

  it("GET answers and errors carry Access-Control-Allow-Origin: *", async () => {
    for (const path of PATHS())
      expect((await call(service, path)).headers.get("access-control-allow-origin")).toBe("*");
    expect((await get(checkPath("all"), withChain([]))).headers.get("access-control-allow-origin")).toBe("*");
    expect((await get("/nothing")).headers.get("access-control-allow-origin")).toBe("*");
    expect((await get(checkPath("all"))).headers.get("access-control-allow-origin")).toBe("*");
  });
});

describe("errors: no input gives a 5xx or a hang", () => {
  const A = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
  const RAW: string[] = [
    `/registry/v2/check/all?to=%zz&from=${A}&chainId=31337`,
    `/registry/v2/check/all?to=${A}&from=%E0%A4%A&chainId=31337`,
    `/registry/v2/check/all?to=%C0%80&from=${A}&chainId=31337`,
    `/registry/v2/check/all?to=%00&from=%00&chainId=31337`,
    `/registry/v2/check/all?to&from&chainId=31337`,
    `/registry/v2/check/all?=&&&=x&chainId=31337`,
    `/registry/v2/check/all?%zz=1&to=${A}&from=${A}&chainId=31337`,
    `/registry/v2/check/all?to=${A}&from=${A}&chainId=31337&chainId`,
    `/registry/v2/check/all?to=${A}&from=${A}&chainId=%zz`,
    `/registry/v2/check/all?to=${A}&from=${A}&chainId=31337&rights=%00`,
    `/registry/v2/check/all?to=${A}&from=${A}&chainId=31337&rights=%zz`,
    `/registry/v2/check/all?to=${A}&from=${A}&chainId=31337&rights=${"x".repeat(6000)}`,
    `/registry/v2/check/all?to=${"a".repeat(6000)}&from=${A}&chainId=31337`,
    `/registry/v2/check/all?to[]=${A}&from=${A}&chainId=31337`,
    `/registry/v2/check/all?__proto__=1&constructor=1&to=${A}&from=${A}&chainId=31337`,
    `/registry/v2/check/erc721?to=${A}&from=${A}&contract=${A}&tokenId=${"9".repeat(5000)}&chainId=31337`,
    `/registry/v2/check/erc1155?to=${A}&from=${A}&contract=${A}&tokenId=0x${"f".repeat(3000)}&chainId=31337`,
    `/registry/v2/check/erc20?to=${A}&from=${A}&contract=${A}&chainId=${"9".repeat(400)}`,
    `/registry/v2/check/erc20?to=${A}&from=${zeroAddress}&contract=${A}&chainId=31337`,
    `/registry/v2/check/erc20?to=${A}&from=0x0000000000000000000000000000000000000001&contract=${A}&chainId=31337`,
    `/registry/v2/%zz?chainId=31337`,
    `/registry/v2/%00?chainId=31337`,
    `/registry/v2/%F0%9F%98%80?chainId=31337`,
    `/registry/v2/${"a".repeat(6000)}?chainId=31337`,
    `/registry/v2/..%2F..%2Fetc%2Fpasswd?chainId=31337`,
    `/registry/v2/${zeroAddress}?chainId=31337`,
    `/registry/v2/check?chainId=31337`,
    `/registry/v2/check/?chainId=31337`,
    `/registry/v2/?chainId=31337`,
    `/registry/v2?chainId=31337`,
    `/registry/v2//check/all?chainId=31337`,
    `/%2e%2e/%2e%2e/`,
  ];
  it.each(RAW.map((path) => [path.length > 110 ? `${path.slice(0, 100)}…(${path.length} chars)` : path, path]))(
    "GET %s",
    async (_, path) => {
      const a = await call(service, path);
      expect(a.status, `${a.status} ${a.text.slice(0, 300)}`).toBeLessThan(500);
      if (a.status >= 400) expectProblem(a, a.status);
      else expectOk(a);
    },
  );
});

// ---------------------------------------------------------------------------------------------
// 503 while the chain is backfilling: a second service whose RPC holds every eth_getLogs.

/** A JSON-RPC proxy to `target` that holds eth_getLogs requests until released. */
async function startGetLogsGate(target: string) {
  let release = () => {};
  const released = new Promise<void>((ok) => (release = ok));
  let getLogsSeen = 0;
  const proxy = await startRpcProxy(target, async (calls) => {
    if (calls.some((c) => c.method === "eth_getLogs")) {
      getLogsSeen++;
      await released;
    }
    return undefined;
  });
  return {
    url: proxy.url,
    get getLogsSeen() {
      return getLogsSeen;
    },
    release,
    close: proxy.close,
  };
}

describe("errors: 503 chain_syncing while the backfill is incomplete", () => {
  let gate: Awaited<ReturnType<typeof startGetLogsGate>>;
  let ponder: Child;
  let url: string;
  let syncing: Target;
  let dir: string;

  beforeAll(async () => {
    // Put the registries' deployment well below the chain's finalized block: a start block above
    // it needs no backfill (Ponder goes ready at once and fetches the logs live).
    await rpc(anvil.url, "anvil_mine", ["0x100"]);
    gate = await startGetLogsGate(anvil.url);
    // startService waits for /ready, which never comes while eth_getLogs is held: start ponder
    // the same way by hand.
    const port = await freePort();
    dir = mkdtempSync(join(tmpdir(), "delegation-lookup-syncing-"));
    const schema = `test_sync_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
    const token = adminToken();
    const env: NodeJS.ProcessEnv = {
      PONDER_TELEMETRY_DISABLED: "true",
      PGLITE_DIR: join(dir, "pglite"),
      ADMIN_TOKEN: token,
      ACCESS_SCHEMA: `access_${schema}`,
      [`PONDER_RPC_URL_${CHAIN}`]: gate.url,
    };
    for (const name of Object.keys(process.env)) {
      if (name.startsWith("PONDER_RPC_URL_") && !(name in env)) env[name] = "";
    }
    ponder = new Child("npm", ["start", "--silent", "--", "--schema", schema, "--port", String(port)], env);
    url = `http://127.0.0.1:${port}`;
    try {
      // The API is up, and ponder has asked for the logs it will not get.
      await waitFor(
        "the syncing service's API",
        async () => {
          if (!ponder.running) throw new GiveUp("ponder exited");
          const res = await fetch(`${url}/health`);
          return res.status === 200 && gate.getLogsSeen > 0 ? true : undefined;
        },
        300_000,
      );
      syncing = { url, headers: { "X-API-KEY": await createApiKey(url, token) } };
    } catch (error) {
      throw new Error(`${(error as Error).message}\n--- ponder output ---\n${ponder.output.slice(-5000)}`);
    }
  });

  afterAll(async () => {
    gate?.release();
    await ponder?.stop();
    await gate?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("every chain answer is 503 chain_syncing with Retry-After, while /ready says not ready", async () => {
    expect((await fetch(`${url}/ready`)).status).toBe(503);
    const paths = [
      ...CHECKS.map((r) => `${checkPath(r.kind)}${qs(withChain(r.query()))}`),
      `/registry/v2/${W.tokFrom}${qs(withChain([]))}`,
      `/registry/v2/${W.nobody}${qs(withChain([]))}`,
      `${checkPath("all")}${qs(
        withChain([
          ["to", W.nobody],
          ["from", W.nobody],
        ]),
      )}`,
    ];
    for (const path of paths) {
      const a = await call(syncing, path);
      expectProblem(a, 503, "chain_syncing");
      expect(a.headers.get("retry-after"), path).toMatch(/^[1-9]\d*$/);
      const block = a.headers.get("x-indexed-block");
      if (block !== null) expect(block).toMatch(/^\d+$/);
    }
    // Bad input is still bad input.
    expectProblem(await call(syncing, `${checkPath("all")}?chainId=${CHAIN}`), 400, "missing_parameter");
    expectProblem(await call(syncing, `${checkPath("all")}?to=${W.allTo}&from=${W.allFrom}`), 400, "unsupported_chain");
  });

  it("once the logs flow, the same requests answer", async () => {
    gate.release();
    await waitFor(
      "the syncing service to be ready",
      async () => {
        if (!ponder.running) throw new GiveUp(`ponder exited\n${ponder.output.slice(-3000)}`);
        return (await fetch(`${url}/ready`)).status === 200 ? true : undefined;
      },
      300_000,
    );
    await waitFor(
      "the delegations to be indexed",
      async () => {
        const a = await call(syncing, `${checkPath("erc1155")}${qs(withChain(CHECKS[3]!.query()))}`);
        return a.status === 200 && a.text === String(ERC1155_AMOUNT) ? true : undefined;
      },
      60_000,
    );
    for (const route of CHECKS) {
      const a = await call(syncing, `${checkPath(route.kind)}${qs(withChain(route.query()))}`);
      expect(a.status).toBe(200);
      expect(a.text).toBe(route.expected());
    }
  });
});
