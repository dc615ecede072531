/**
 * The v2 routes' inputs and errors, in process (no chain: a unit test): every rule of docs/api.md's
 * "Inputs" and "Errors" for the v2 routes, asked of the app over a store that holds a few
 * known delegations, so that a misread parameter shows as a different answer. What the answers are
 * for real chain data (outputs, the backfill's 503) is test/v2.http.test.ts's.
 *
 * The app serves chain 31337 only, so every chain request passes `chainId=31337`. Requests carry no
 * API key: the keyless limit lets every one through.
 */
import { type Address, maxUint256, stringToHex, zeroAddress, zeroHash } from "viem";
import { describe, expect, it } from "vitest";
import type { Access } from "../../api/access/open";
import { createApp } from "../../api/app";
import { NOTHING_INDEXED, type Store, type V2Row } from "../../api/store/store";
import { NO_ALARMS } from "../../api/watch/chain-alarms";
import { v2DelegationHash } from "../../core/v2";
import type { Answer } from "../../devkit/ask";
import { checkAnswer } from "../../devkit/openapi-check";
import { ACCEPTED_ADDRESS_FORMS, lowerHex, REJECTED_ADDRESS_FORMS, upperHex } from "../helpers/address-forms";
import { expectOk as expectAnswer, expectProblem, type Query, qs, rename, replace, without } from "../helpers/answers";
import { SOCKET } from "../helpers/empty-app";
import {
  addressOf,
  C_20,
  C_721,
  C_1155,
  C_CONTRACT,
  C_OTHER,
  CLAIM,
  ERC20_AMOUNT,
  ERC1155_AMOUNT,
  ERC1155_TOKEN,
  MAX_S,
} from "../helpers/v2/fixture";

const CHAIN = 31337;
/** The block every answer reports. */
const INDEXED_BLOCK = 100n;
/** Exactly 32 ASCII bytes: the longest plain-string rights value. */
const RIGHTS_32 = "abcdefghijklmnopqrstuvwxyz012345";

/** The parties (EIP-55 case). */
const W = {
  allFrom: addressOf("all from"),
  allTo: addressOf("all to"), // ALL, empty rights
  conFrom: addressOf("contract from"),
  conTo: addressOf("contract to"), // CONTRACT on C_CONTRACT, rights "claim"
  tokFrom: addressOf("token from"),
  tokTo: addressOf("token to"), // ERC721 at 2^256-1, ERC20 1000, ERC1155 #7 big amount
  r32From: addressOf("rights32 from"),
  r32To: addressOf("rights32 to"), // ALL with 32-character rights
  nobody: addressOf("nobody"), // never in any delegation
};

// ---------------------------------------------------------------------------------------------
// The app over a store holding the delegations

/** The enabled delegations, in the order they were first enabled, each under its hash. */
const DELEGATIONS: V2Row[] = (
  [
    {
      delegationType: "ALL",
      from: W.allFrom,
      to: W.allTo,
      contract: null,
      tokenId: null,
      rights: zeroHash,
      amount: null,
    },
    {
      delegationType: "CONTRACT",
      from: W.conFrom,
      to: W.conTo,
      contract: C_CONTRACT,
      tokenId: null,
      rights: CLAIM,
      amount: null,
    },
    {
      delegationType: "ERC721",
      from: W.tokFrom,
      to: W.tokTo,
      contract: C_721,
      tokenId: maxUint256,
      rights: zeroHash,
      amount: null,
    },
    {
      delegationType: "ERC20",
      from: W.tokFrom,
      to: W.tokTo,
      contract: C_20,
      tokenId: null,
      rights: zeroHash,
      amount: ERC20_AMOUNT,
    },
    {
      delegationType: "ERC1155",
      from: W.tokFrom,
      to: W.tokTo,
      contract: C_1155,
      tokenId: ERC1155_TOKEN,
      rights: zeroHash,
      amount: ERC1155_AMOUNT,
    },
    {
      delegationType: "ALL",
      from: W.r32From,
      to: W.r32To,
      contract: null,
      tokenId: null,
      rights: stringToHex(RIGHTS_32, { size: 32 }),
      amount: null,
    },
  ] satisfies Omit<V2Row, "hash">[]
).map((row) => ({
  ...row,
  hash: v2DelegationHash({
    type: row.delegationType,
    from: row.from,
    to: row.to,
    rights: row.rights,
    contract: row.contract ?? undefined,
    tokenId: row.tokenId ?? undefined,
  }),
}));

/** Each delegation's state under its hash, as the contract keeps it. */
const STATES = new Map(DELEGATIONS.map((row) => [row.hash, { enabled: true, amount: row.amount ?? 0n }]));

const atIndexedBlock = <T>(data: T) => ({ indexedBlock: INDEXED_BLOCK, ready: true, data });
const sameAddress = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

const store: Store = {
  ...NOTHING_INDEXED,
  v2Enabled: async (_, hashes) =>
    atIndexedBlock(new Map(hashes.flatMap((hash) => (STATES.has(hash) ? [[hash, STATES.get(hash)!] as const] : [])))),
  v2Wallet: async (_, wallet) =>
    atIndexedBlock(DELEGATIONS.filter((row) => sameAddress(row.from, wallet) || sameAddress(row.to, wallet))),
  chainStates: async () =>
    new Map([[CHAIN, { indexedBlock: INDEXED_BLOCK, ready: true, indexedTimestamp: Math.floor(Date.now() / 1000) }]]),
};

/** Every keyless request is let through, however loaded the test process. */
const openAccess = {
  load: { shed: () => false },
  keys: { use: async () => false, useHeld: () => false, heldOnce: () => false },
  limiter: {
    take: async () => ({ allowed: true, limit: 25, windowMs: 10_000, remaining: 24, resetMs: 10_000 }),
    charge: async () => ({ allowed: true, limit: 25, windowMs: 10_000, remaining: 24, resetMs: 10_000 }),
    close: async () => {},
  },
  trustProxy: false,
  adminToken: undefined,
} as unknown as Access;

const app = createApp({
  store,
  history: undefined,
  alarms: NO_ALARMS,
  chains: [
    {
      id: CHAIN,
      name: "anvil",
      title: "Local development chain",
      testnet: true,
      v2: { address: "0x00000000000000447e69651d841bD8D104Bed493", startBlock: 0 },
    },
  ],
  access: openAccess,
  behindAfterSeconds: 120,
});

// ---------------------------------------------------------------------------------------------
// Requests and answers

type Init = { method?: string; headers?: Record<string, string>; body?: string };

/** One request to the app, as a client sends it; its answer held to the OpenAPI document. */
async function call(path: string, init: Init = {}): Promise<Answer> {
  const res = await app.request(path, init, SOCKET);
  const text = await res.text();
  checkAnswer({ method: init.method ?? "GET", path, status: res.status, headers: res.headers, text });
  const block = res.headers.get("x-indexed-block");
  return { path, status: res.status, headers: res.headers, text, block: block === null ? undefined : BigInt(block) };
}

const get = (path: string, query: Query = [], init: Init = {}) => call(`${path}${qs(query)}`, init);

/** Asserts a 200 chain answer: JSON, CORS, exactly the store's X-Indexed-Block; and its body, if given. */
function expectOk(a: Answer, body?: string): void {
  expectAnswer(a, INDEXED_BLOCK, body);
  expect(a.block, `${a.status} ${a.text}`).toBe(INDEXED_BLOCK);
}

// ---------------------------------------------------------------------------------------------
// The v2 checks

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
    expect((JSON.parse(a.text) as unknown[]).length).toBe(3);
  });

  it.each(REJECTED_ADDRESS_FORMS.filter(([form]) => form !== "empty"))("path :wallet rejects %s", async (_, form) => {
    const a = await get(`/registry/v2/${encodeURIComponent(form(W.tokFrom))}`, withChain([]));
    expectProblem(a, 400, "invalid_parameter", "wallet");
  });

  it("a different address gives a different answer (the forms above are not ignored)", async () => {
    const answer = (kind: CheckRoute["kind"], ...query: Query) => get(checkPath(kind), withChain(query));
    expectOk(await answer("all", ["to", W.allTo], ["from", W.conFrom]), "false");
    expectOk(await answer("all", ["to", W.conTo], ["from", W.allFrom]), "false");
    expectOk(
      await answer("contract", ["to", W.conTo], ["from", W.conFrom], ["contract", C_OTHER], ["rights", "claim"]),
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

  const PATHS = [
    `${checkPath("all")}${qs(withChain(CHECKS[0]!.query()))}`,
    `${checkPath("erc20")}${qs(withChain(CHECKS[4]!.query()))}`,
    `/registry/v2/${W.tokFrom}${qs(withChain([]))}`,
  ];

  it.each(["POST", "PUT", "DELETE", "PATCH"])(
    "%s is 405 method_not_allowed with Allow: GET, HEAD, OPTIONS",
    async (method) => {
      for (const path of PATHS) {
        const a = await call(path, {
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
    for (const path of [...PATHS, `${checkPath("all")}?chainId=${CHAIN}`, "/nothing", `${checkPath("all")}`]) {
      const g = await call(path);
      const h = await call(path, { method: "HEAD" });
      expect(h.status, path).toBe(g.status);
      expect(h.text, path).toBe("");
      // The store stays at one block: HEAD reports the GET's.
      for (const name of ["content-type", "access-control-allow-origin", "allow", "x-indexed-block"]) {
        expect(h.headers.get(name), `${path} ${name}`).toBe(g.headers.get(name));
      }
    }
  });

  it("OPTIONS preflight is answered with CORS headers that allow GET and X-API-KEY", async () => {
    for (const path of PATHS) {
      const res = await app.request(
        path,
        {
          method: "OPTIONS",
          headers: {
            Origin: "https://example.org",
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "X-API-KEY",
          },
        },
        SOCKET,
      );
      expect([200, 204]).toContain(res.status);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      const methods = (res.headers.get("access-control-allow-methods") ?? "")
        .split(",")
        .map((m) => m.trim().toUpperCase())
        .filter(Boolean);
      // The API refuses all but GET/HEAD/OPTIONS with 405 (tested above).
      expect(methods).toEqual(["GET", "HEAD", "OPTIONS"]);
      expect(res.headers.get("access-control-allow-headers")).toBe("X-API-KEY,Content-Type");
    }
  });

  it("GET answers and errors carry Access-Control-Allow-Origin: *", async () => {
    for (const path of PATHS) expect((await call(path)).headers.get("access-control-allow-origin")).toBe("*");
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
      const a = await call(path);
      expect(a.status, `${a.status} ${a.text.slice(0, 300)}`).toBeLessThan(500);
      if (a.status >= 400) expectProblem(a, a.status);
      else expectOk(a);
    },
  );
});
