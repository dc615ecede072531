/**
 * Default chainId 1 behaves as documented (docs/contract.md, "The interface spec": every operation
 * takes an optional chainId, default 1).
 *
 * One service indexes chain 1: anvil started with chain id 1 and the real registries installed on
 * it (chain 1 is not `local` in core/chains.ts, so unlike the other tests' chains Ponder caches its
 * RPC answers and backfills through that cache; each run has a fresh schema and database). Some
 * delegations are written long enough before the service starts to be finalized (backfilled), the
 * rest inside Ponder's unfinalized window (indexed as realtime blocks). Then, with the chain held
 * still, every operation asked without chainId answers exactly what it answers with chainId=1:
 * status, Content-Type, body byte for byte and X-Indexed-Block; each check's body is the
 * contract's own answer (eth_call) at that block; each listing holds exactly the delegations the
 * contract holds for the wallet, in the order they were made. /registry/chains lists chain 1 only,
 * and another chain id is refused.
 */

import { type Abi, type Address, getAddress, type Hex, maxUint256, stringToHex, toHex, zeroHash } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { type Answer, ask } from "../devkit/ask";
import { abis, installRegistries } from "../devkit/oracle";
import { waitFor } from "../devkit/processes";
import { callView, chainClient, rpc } from "../devkit/rpc";
import { sendWrite } from "../devkit/send";
import { type Service, startService } from "../devkit/service";
import { ponderFinalityDepth } from "../ponder/ponder-0.16.10";
import { canonical, parseJsonExact } from "./helpers/json";
import type { ListedChain } from "./helpers/listed-chain";
import { contractRecords } from "./helpers/v1/listing";
import { expectedRecord } from "./helpers/v2/listing";

const CHAIN_ID = 1;
/** Ponder's finality depth for the chain: older blocks are backfilled. */
const FINALITY = BigInt(ponderFinalityDepth(CHAIN_ID));
const CLAIM = stringToHex("claim", { size: 32 });
/** An ERC20 amount past 2^53 and 2^64: any rounding on the way would show. */
const BIG = 2n ** 255n + 12_345_678_901_234_567n;
/** Mainnet's BAYC and USDC, as contracts to delegate (the registries do not look at them). */
const BAYC = getAddress("0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d");
const USDC = getAddress("0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48");

const log = (text: string) => console.log(`[default-chain] ${text}`);

let anvil: Anvil | undefined;
let service: Service | undefined;
let registries: { v1: Address; v2: Address };
let P: Address, Q: Address, R: Address, S: Address;
/** The block of the last delegation written before the service started. */
let lastWrite = 0n;
/** The block every answer must report: the head, with mining paused. */
let held = 0n;

type Write = { by: Address; version: "v1" | "v2"; fn: string; args: readonly unknown[] };

/** Writes one after the other (their order is the listings' order); the last block. */
async function write(writes: Write[]): Promise<bigint> {
  let block = 0n;
  for (const w of writes) {
    block = await sendWrite(anvil!.url, abis[w.version], w.by, registries[w.version], w.fn, w.args);
  }
  return block;
}

beforeAll(async () => {
  const t0 = Date.now();
  anvil = await startAnvil({ chainId: CHAIN_ID });
  expect(BigInt((await rpc(anvil.url, "eth_chainId")) as string), "anvil's chain id").toBe(1n);
  registries = await installRegistries(anvil.url);
  [P, Q, R, S] = (await chainClient(anvil.url).getAddresses()).slice(1, 5).map((a) => getAddress(a)) as [
    Address,
    Address,
    Address,
    Address,
  ];

  // Finalized by the time the service starts: backfilled.
  const early = await write([
    { by: P, version: "v2", fn: "delegateAll", args: [Q, zeroHash, true] },
    { by: P, version: "v2", fn: "delegateContract", args: [R, BAYC, zeroHash, true] },
    { by: P, version: "v2", fn: "delegateERC20", args: [S, USDC, zeroHash, 1234n] },
    { by: P, version: "v1", fn: "delegateForAll", args: [R, true] },
    { by: Q, version: "v1", fn: "delegateForToken", args: [S, BAYC, 42n, true] },
  ]);
  await rpc(anvil.url, "anvil_mine", [toHex(FINALITY + 15n)]);
  // Inside the unfinalized window when the service starts: indexed as realtime blocks.
  lastWrite = await write([
    { by: Q, version: "v2", fn: "delegateERC20", args: [R, USDC, zeroHash, BIG] },
    { by: Q, version: "v2", fn: "delegateContract", args: [P, BAYC, CLAIM, true] },
    { by: S, version: "v2", fn: "delegateContract", args: [P, BAYC, zeroHash, true] },
    { by: R, version: "v1", fn: "delegateForAll", args: [P, true] },
    { by: S, version: "v1", fn: "delegateForToken", args: [Q, BAYC, 7n, true] },
  ]);
  const head = await chainClient(anvil.url).getBlockNumber();
  log(
    `chain ${CHAIN_ID}: early delegations by block ${early}, the rest by block ${lastWrite}; head ${head}; ` +
      `${Date.now() - t0} ms`,
  );

  service = await startService({ rpc: { [CHAIN_ID]: anvil.url } });
  const started = await chainClient(anvil.url).getBlockNumber();
  // The premise of "some backfilled, some realtime": Ponder took the head (somewhere in head..started)
  // and finalized everything `FINALITY` blocks below it.
  expect(early, `early writes finalized when the service started (head ${head}..${started})`).toBeLessThanOrEqual(
    head - FINALITY,
  );
  expect(lastWrite, `later writes unfinalized when the service started (head ${head}..${started})`).toBeGreaterThan(
    started - FINALITY,
  );

  // Indexed past the last write, asked without chainId (the default).
  await waitFor(
    `chain ${CHAIN_ID} indexed to block ${lastWrite}`,
    async () => {
      const a = await get(`/registry/v2/check/all?to=${Q}&from=${P}`);
      const block = a.status === 200 ? a.block : undefined;
      return block !== undefined && block >= lastWrite ? block : undefined;
    },
    60_000,
  );

  // Hold the chain still, so that both answers of a pair reflect the same block, and wait for the
  // service to reach the head.
  await chainClient(anvil.url).setIntervalMining({ interval: 0 });
  held = await chainClient(anvil.url).getBlockNumber();
  await waitFor(
    `the service at the held head ${held}`,
    async () => {
      const a = await get(`/registry/v2/check/all?to=${Q}&from=${P}`);
      return a.status === 200 && a.block === held ? true : undefined;
    },
    30_000,
  );
  log(`service ready and at the held head ${held} (mining paused); ${Date.now() - t0} ms since anvil started`);
});

afterAll(async () => {
  await service?.stop();
  await anvil?.stop();
});

/** A request to the service, with its access headers. */
const get = (path: string) => ask(service!.url, path, { headers: service!.headers });

/** `path` asked without chainId and with chainId=1: the same answer, byte for byte, at the same block. */
async function same(path: string): Promise<Answer> {
  const bare = await get(path);
  const one = await get(`${path}${path.includes("?") ? "&" : "?"}chainId=${CHAIN_ID}`);
  for (const a of [bare, one]) {
    expect(a.status, `${a.path}: ${a.text}`).toBe(200);
    expect(a.headers.get("content-type"), `${a.path}: Content-Type`).toMatch(/^application\/json/);
    expect(a.block, `${a.path}: X-Indexed-Block`).toBe(held);
  }
  expect(bare.text, `${path}: without chainId vs ${one.path}`).toBe(one.text);
  expect(bare.headers.get("content-type"), `${path}: Content-Type`).toBe(one.headers.get("content-type"));
  expect(bare.headers.get("x-indexed-block"), `${path}: X-Indexed-Block`).toBe(one.headers.get("x-indexed-block"));
  return bare;
}

/** The contract's answer at the held head (mining is paused: the newest block is whole). */
const contract = (version: "v1" | "v2", fn: string, args: readonly unknown[]) =>
  callView(anvil!.url, abis[version] as Abi, registries[version], fn, args, held, true);

type Check = { path: string; fn: string; args: readonly unknown[]; want: string };

async function expectChecks(version: "v1" | "v2", checks: Check[]) {
  for (const c of checks) {
    const a = await same(c.path);
    const onChain = String(await contract(version, c.fn, c.args));
    expect(onChain, `${version} ${c.fn}(${c.args.join(", ")}) at block ${held}: the test's expectation`).toBe(c.want);
    expect(a.text, `${c.path}: the contract's ${c.fn} at block ${held}`).toBe(onChain);
  }
  log(`${version}: ${checks.length} checks, without chainId = with chainId=1 = the contract at block ${held}`);
}

const pick = (list: Record<string, unknown>[], keys: string[]) =>
  list.map((x) => Object.fromEntries(keys.map((k) => [k, x[k]])));
type ContractDelegation = Parameters<typeof expectedRecord>[0];
const asSet = (records: unknown[]) => [...new Set(records.map(canonical))].sort();

describe("Default chainId 1 behaves as documented", () => {
  it("v2 checks (all, contract, erc721, erc1155, erc20): without chainId = chainId=1 = the contract", async () => {
    await expectChecks("v2", [
      {
        path: `/registry/v2/check/all?to=${Q}&from=${P}`,
        fn: "checkDelegateForAll",
        args: [Q, P, zeroHash],
        want: "true",
      },
      {
        path: `/registry/v2/check/all?to=${R}&from=${P}`,
        fn: "checkDelegateForAll",
        args: [R, P, zeroHash],
        want: "false",
      },
      {
        path: `/registry/v2/check/all?to=${P}&from=${Q}`,
        fn: "checkDelegateForAll",
        args: [P, Q, zeroHash],
        want: "false",
      },
      {
        path: `/registry/v2/check/contract?to=${R}&from=${P}&contract=${BAYC}`,
        fn: "checkDelegateForContract",
        args: [R, P, BAYC, zeroHash],
        want: "true",
      },
      {
        path: `/registry/v2/check/contract?to=${Q}&from=${P}&contract=${BAYC}`,
        fn: "checkDelegateForContract",
        args: [Q, P, BAYC, zeroHash],
        want: "true",
      },
      {
        path: `/registry/v2/check/contract?to=${S}&from=${P}&contract=${BAYC}`,
        fn: "checkDelegateForContract",
        args: [S, P, BAYC, zeroHash],
        want: "false",
      },
      {
        path: `/registry/v2/check/contract?to=${P}&from=${Q}&contract=${BAYC}`,
        fn: "checkDelegateForContract",
        args: [P, Q, BAYC, zeroHash],
        want: "false",
      },
      {
        path: `/registry/v2/check/contract?to=${P}&from=${Q}&contract=${BAYC}&rights=claim`,
        fn: "checkDelegateForContract",
        args: [P, Q, BAYC, CLAIM],
        want: "true",
      },
      {
        path: `/registry/v2/check/contract?to=${P}&from=${S}&contract=${BAYC}`,
        fn: "checkDelegateForContract",
        args: [P, S, BAYC, zeroHash],
        want: "true",
      },
      {
        path: `/registry/v2/check/erc721?to=${R}&from=${P}&contract=${BAYC}&tokenId=1`,
        fn: "checkDelegateForERC721",
        args: [R, P, BAYC, 1n, zeroHash],
        want: "true",
      },
      {
        path: `/registry/v2/check/erc721?to=${S}&from=${P}&contract=${BAYC}&tokenId=1`,
        fn: "checkDelegateForERC721",
        args: [S, P, BAYC, 1n, zeroHash],
        want: "false",
      },
      {
        path: `/registry/v2/check/erc1155?to=${R}&from=${P}&contract=${BAYC}&tokenId=1`,
        fn: "checkDelegateForERC1155",
        args: [R, P, BAYC, 1n, zeroHash],
        want: maxUint256.toString(),
      },
      {
        path: `/registry/v2/check/erc20?to=${S}&from=${P}&contract=${USDC}`,
        fn: "checkDelegateForERC20",
        args: [S, P, USDC, zeroHash],
        want: "1234",
      },
      {
        path: `/registry/v2/check/erc20?delegate=${S}&vault=${P}&contract=${USDC}`,
        fn: "checkDelegateForERC20",
        args: [S, P, USDC, zeroHash],
        want: "1234",
      },
      {
        path: `/registry/v2/check/erc20?to=${Q}&from=${P}&contract=${USDC}`,
        fn: "checkDelegateForERC20",
        args: [Q, P, USDC, zeroHash],
        want: maxUint256.toString(),
      },
      {
        path: `/registry/v2/check/erc20?to=${R}&from=${Q}&contract=${USDC}`,
        fn: "checkDelegateForERC20",
        args: [R, Q, USDC, zeroHash],
        want: BIG.toString(),
      },
      {
        path: `/registry/v2/check/erc20?to=${S}&from=${Q}&contract=${USDC}`,
        fn: "checkDelegateForERC20",
        args: [S, Q, USDC, zeroHash],
        want: "0",
      },
      {
        path: `/registry/v2/check/erc20?to=${R}&from=${P}&contract=${BAYC}`,
        fn: "checkDelegateForERC20",
        args: [R, P, BAYC, zeroHash],
        want: maxUint256.toString(),
      },
    ]);
  });

  it("v2 listings: without chainId = chainId=1, exactly the contract's delegations of the wallet, in the order \
made", async () => {
    const listings = new Map<Address, Record<string, unknown>[]>();
    for (const wallet of [P, Q, R, S]) {
      const a = await same(`/registry/v2/${wallet}`);
      const list = parseJsonExact(a.text) as Record<string, unknown>[];
      listings.set(wallet, list);
      // The contract's delegations from and to the wallet, each with its hash, as API records.
      const side = async (view: string) => {
        const delegations = (await contract("v2", `${view}Delegations`, [wallet])) as ContractDelegation[];
        const hashes = (await contract("v2", `${view}DelegationHashes`, [wallet])) as Hex[];
        return delegations.map((d, i) => ({ ...expectedRecord(d), hash: hashes[i] }));
      };
      expect(asSet(list), `v2 listing of ${wallet} vs the contract at block ${held}`).toEqual(
        asSet([...(await side("getOutgoing")), ...(await side("getIncoming"))]),
      );
      expect(list.length, `v2 listing of ${wallet}: each delegation once`).toBe(asSet(list).length);
    }
    const keys = ["delegationType", "from", "to", "contract", "tokenId", "rights", "amount"];
    const all = {
      delegationType: "ALL",
      from: P,
      to: Q,
      contract: null,
      tokenId: null,
      rights: zeroHash,
      amount: null,
    };
    const contractPR = {
      delegationType: "CONTRACT",
      from: P,
      to: R,
      contract: BAYC,
      tokenId: null,
      rights: zeroHash,
      amount: null,
    };
    const erc20PS = {
      delegationType: "ERC20",
      from: P,
      to: S,
      contract: USDC,
      tokenId: null,
      rights: zeroHash,
      amount: 1234n,
    };
    const erc20QR = {
      delegationType: "ERC20",
      from: Q,
      to: R,
      contract: USDC,
      tokenId: null,
      rights: zeroHash,
      amount: BIG,
    };
    const claimQP = {
      delegationType: "CONTRACT",
      from: Q,
      to: P,
      contract: BAYC,
      tokenId: null,
      rights: CLAIM,
      amount: null,
    };
    const contractSP = {
      delegationType: "CONTRACT",
      from: S,
      to: P,
      contract: BAYC,
      tokenId: null,
      rights: zeroHash,
      amount: null,
    };
    expect(pick(listings.get(P)!, keys), "v2 listing of P").toEqual([all, contractPR, erc20PS, claimQP, contractSP]);
    expect(pick(listings.get(Q)!, keys), "v2 listing of Q").toEqual([all, erc20QR, claimQP]);
    expect(pick(listings.get(R)!, keys), "v2 listing of R").toEqual([contractPR, erc20QR]);
    expect(pick(listings.get(S)!, keys), "v2 listing of S").toEqual([erc20PS, contractSP]);
    expect(
      listings.get(P)!.map((d) => d.type),
      "v2 listing of P: the spec's types",
    ).toEqual(["ALL", "CONTRACT", "CONTRACT", "CONTRACT", "CONTRACT"]);
    // A wallet with none.
    expect((await same(`/registry/v2/${getAddress(registries.v1)}`)).text).toBe("[]");
    log(`v2: 5 listings, without chainId = with chainId=1 = the contract at block ${held}`);
  });

  it("v1 checks (all, contract, token): without chainId = chainId=1 = the contract", async () => {
    await expectChecks("v1", [
      {
        path: `/registry/v1/check/all?delegate=${R}&vault=${P}`,
        fn: "checkDelegateForAll",
        args: [R, P],
        want: "true",
      },
      {
        path: `/registry/v1/check/all?delegate=${P}&vault=${R}`,
        fn: "checkDelegateForAll",
        args: [P, R],
        want: "true",
      },
      {
        path: `/registry/v1/check/all?delegate=${Q}&vault=${P}`,
        fn: "checkDelegateForAll",
        args: [Q, P],
        want: "false",
      },
      {
        path: `/registry/v1/check/all?delegate=${S}&vault=${Q}`,
        fn: "checkDelegateForAll",
        args: [S, Q],
        want: "false",
      },
      {
        path: `/registry/v1/check/contract?delegate=${R}&vault=${P}&contract=${BAYC}`,
        fn: "checkDelegateForContract",
        args: [R, P, BAYC],
        want: "true",
      },
      {
        path: `/registry/v1/check/contract?delegate=${S}&vault=${Q}&contract=${BAYC}`,
        fn: "checkDelegateForContract",
        args: [S, Q, BAYC],
        want: "false",
      },
      {
        path: `/registry/v1/check/token?delegate=${S}&vault=${Q}&contract=${BAYC}&tokenId=42`,
        fn: "checkDelegateForToken",
        args: [S, Q, BAYC, 42n],
        want: "true",
      },
      {
        path: `/registry/v1/check/token?delegate=${S}&vault=${Q}&contract=${BAYC}&tokenId=0x2a`,
        fn: "checkDelegateForToken",
        args: [S, Q, BAYC, 42n],
        want: "true",
      },
      {
        path: `/registry/v1/check/token?delegate=${S}&vault=${Q}&contract=${BAYC}&tokenId=43`,
        fn: "checkDelegateForToken",
        args: [S, Q, BAYC, 43n],
        want: "false",
      },
      {
        path: `/registry/v1/check/token?delegate=${Q}&vault=${S}&contract=${BAYC}&tokenId=7`,
        fn: "checkDelegateForToken",
        args: [Q, S, BAYC, 7n],
        want: "true",
      },
      {
        path: `/registry/v1/check/token?delegate=${Q}&vault=${S}&contract=${USDC}&tokenId=7`,
        fn: "checkDelegateForToken",
        args: [Q, S, USDC, 7n],
        want: "false",
      },
      {
        path: `/registry/v1/check/token?delegate=${R}&vault=${P}&contract=${USDC}&tokenId=1`,
        fn: "checkDelegateForToken",
        args: [R, P, USDC, 1n],
        want: "true",
      },
    ]);
  });

  it("v1 listings: without chainId = chainId=1, exactly the contract's delegations of the wallet, in the order \
made", async () => {
    const listings = new Map<Address, Record<string, unknown>[]>();
    for (const wallet of [P, Q, R, S]) {
      const a = await same(`/registry/v1/${wallet}`);
      const list = parseJsonExact(a.text) as Record<string, unknown>[];
      listings.set(wallet, list);
      // The contract's delegations to the wallet (as delegate) and from it (as vault), as API records.
      const onChain = await contractRecords(
        { rpcUrl: anvil!.url, registry: registries.v1, abi: abis.v1 },
        wallet,
        held,
        (what, expected, got) => {
          throw new Error(`v1 views of ${wallet} at block ${held}: ${what}: expected ${expected}, got ${got}`);
        },
        true,
      );
      expect(asSet(list), `v1 listing of ${wallet} vs the contract at block ${held}`).toEqual(asSet(onChain!));
      expect(list.length, `v1 listing of ${wallet}: each delegation once`).toBe(asSet(list).length);
    }
    const allPR = { type: "ALL", vault: P, delegate: R, contract: null, tokenId: null };
    const allRP = { type: "ALL", vault: R, delegate: P, contract: null, tokenId: null };
    const tokenQS = { type: "TOKEN", vault: Q, delegate: S, contract: BAYC, tokenId: 42n };
    const tokenSQ = { type: "TOKEN", vault: S, delegate: Q, contract: BAYC, tokenId: 7n };
    expect(listings.get(P), "v1 listing of P").toEqual([allPR, allRP]);
    expect(listings.get(R), "v1 listing of R").toEqual([allPR, allRP]);
    expect(listings.get(Q), "v1 listing of Q").toEqual([tokenQS, tokenSQ]);
    expect(listings.get(S), "v1 listing of S").toEqual([tokenQS, tokenSQ]);
    expect((await same(`/registry/v1/${getAddress(registries.v2)}`)).text).toBe("[]");
    log(`v1: 5 listings, without chainId = with chainId=1 = the contract at block ${held}`);
  });

  it("/registry/chains lists chain 1 only; another chain id is refused, naming chain 1", async () => {
    const a = await get("/registry/chains");
    expect(a.status, a.text).toBe(200);
    const list = JSON.parse(a.text) as ListedChain[];
    expect(
      list.map((c) => c.chainId),
      a.text,
    ).toEqual([CHAIN_ID]);
    const [chain] = list;
    expect(chain, a.text).toMatchObject({
      chainId: 1,
      name: "mainnet",
      title: "Ethereum",
      testnet: false,
      indexedBlock: Number(held),
      status: "live",
    });
    for (const version of ["v1", "v2"] as const) {
      const registry = chain!.registries[version];
      expect(registry?.address, `${version} address`).toBe(getAddress(registries[version]));
      // The start block found by the discovery is where the code first appears.
      const sb = BigInt(registry!.startBlock);
      expect(
        await rpc(anvil!.url, "eth_getCode", [registry!.address, toHex(sb - 1n)]),
        `${version} code at ${sb - 1n}`,
      ).toBe("0x");
      expect(await rpc(anvil!.url, "eth_getCode", [registry!.address, toHex(sb)]), `${version} code at ${sb}`).not.toBe(
        "0x",
      );
    }
    // Not an "any chain" default: another chain is refused, and the refusal names chain 1.
    const other = await get(`/registry/v2/check/all?to=${Q}&from=${P}&chainId=31337`);
    expect(other.status, other.text).toBe(400);
    const body = JSON.parse(other.text) as { code: string; chains?: number[] };
    expect(body.code, other.text).toBe("unsupported_chain");
    expect(body.chains, other.text).toEqual([CHAIN_ID]);
    log(`chains: ${a.text}`);
  });
});
