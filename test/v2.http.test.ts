/**
 * The v2 answers against a real service: anvil with the real DelegateRegistry installed, a few
 * known delegations made with viem, and `ponder start` indexing them. Every rule of docs/api.md's
 * "Outputs" is exercised for the v2 routes, and the 503 of a chain still
 * backfilling; the input and error tables, which need no chain, are api/routes/v2.test.ts's.
 *
 * The service only serves chain 31337 here, so every chain request passes `chainId=31337`. Requests
 * carry the service's API key, so the keyless limit (tested in access.test.ts) does not apply.
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
  maxUint256,
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
import { lowerHex } from "./helpers/address-forms";
import { expectOk as expectAnswer, expectProblem, type Query, qs } from "./helpers/answers";
import { parseJsonExact } from "./helpers/json";
import { startRpcProxy } from "./helpers/rpc-proxy";
import {
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
} from "./helpers/v2/fixture";
import { registryHash } from "./helpers/v2/hash";

const CHAIN = 31337;

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
  nobody: Address; // never in any delegation
};

// ---------------------------------------------------------------------------------------------
// HTTP helpers

/** A service to ask, with the headers that carry its API key. */
type Target = { url: string; headers: Record<string, string> };

/** One GET with the target's API key, bounded in time, never asked again: a hang is a failure. */
const call = (to: Target, path: string): Promise<Answer> =>
  ask(to.url, path, { headers: to.headers, timeoutMs: 20_000, reask: false });

const get = (path: string, query: Query = []) => call(service, `${path}${qs(query)}`);

/** A 200 chain answer whose X-Indexed-Block covers our writes; and its body, if given. */
const expectOk = (a: Answer, body?: string) => expectAnswer(a, lastBlock, body);

// ---------------------------------------------------------------------------------------------
// The routes, each with a query whose answer is known (true or a non-zero balance).

type CheckRoute = {
  kind: "all" | "contract" | "erc721" | "erc1155" | "erc20";
  /** The known query, without chainId; names as given (erc* use both spellings across routes). */
  query: () => Query;
  expected: () => string;
};

const CHECKS: CheckRoute[] = [
  {
    kind: "all",
    query: () => [
      ["to", W.allTo],
      ["from", W.allFrom],
    ],
    expected: () => "true",
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
  },
  {
    kind: "erc20",
    query: () => [
      ["delegate", W.tokTo],
      ["vault", W.tokFrom],
      ["contract", C_20],
    ],
    expected: () => String(ERC20_AMOUNT),
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
    hash: registryHash(r.delegationType, r.rights, r.from, r.to, r.contract ?? undefined, r.tokenId ?? undefined),
  });
  const normalize = (list: Record<string, unknown>[]) =>
    list.map((r) => {
      expect(r.rights).toMatch(/^0x[0-9a-fA-F]{64}$/);
      return { ...r, rights: String(r.rights).toLowerCase(), hash: String(r.hash).toLowerCase() };
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
