/**
 * The typed client (client/): its documented examples (client/example.ts and client/example-vaults.ts,
 * which docs/api.md shows whole) against a service on anvil with the real registries, their answers
 * equal to the contract's eth_call and typed as the document says; an amount past 2^53 arrives
 * exact, as a bigint; the vaults example lists exactly the vaults the contract's check lets the hot
 * wallet claim for, asked of every candidate. And the client's types are the ones
 * `npm run client:types` writes from the document now. Its batch helper (client/batch.ts) answers
 * thousands of seeded random checks in order, a bounded number of batches at once, all at one block,
 * each as the contract's eth_call at that block.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Address, getAddress, maxUint256, zeroHash } from "viem";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { checkMany, type V2BatchCheck } from "../client/batch";
import { delegationOf } from "../client/example";
import { claimableVaults } from "../client/example-vaults";
import { createLookupClient } from "../client/index";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { indexedBlock } from "../devkit/ask";
import { abis, installRegistries } from "../devkit/oracle";
import { ROOT, waitFor } from "../devkit/processes";
import { chooseSeed, Rng } from "../devkit/random";
import { type ChainClient, chainClient, ethCalls, type ViewCall } from "../devkit/rpc";
import { type Service, startService } from "../devkit/service";
import { CLIENT_TYPES, clientTypes } from "../scripts/client-types";
import { docExample } from "./helpers/readme";

const CHAIN_ID = 31337;
/** The contract the delegations name. */
const TOKEN = "0x00000000000000000000000000000000000000aa" as Address;
/** A contract no delegation names: only ALL delegations cover it. */
const UNNAMED = "0x00000000000000000000000000000000000000bb" as Address;
/** An ERC20 amount past 2^53, which the client must give exactly. */
const AMOUNT = 10n ** 30n + 1n;

let anvil: Anvil;
let service: Service;
let registry: Address;
let chain: ChainClient;
/** `hot` may act for `cold` (ALL), `third` (CONTRACT on TOKEN) and `other` (an ERC20 amount of TOKEN). */
let wallets: { cold: Address; hot: Address; other: Address; third: Address };
/** The block of the last write. */
let lastWrite: bigint;

/** The v2 registry's view `functionName`, through eth_call (at `blockNumber`, else the newest block). */
const read = (functionName: string, args: unknown[], blockNumber?: bigint) =>
  chain.readContract({ address: registry, abi: abis.v2, functionName, args, blockNumber });

/** Sends a v2 registry write from `account`; resolves to its receipt. */
async function write(account: Address, functionName: string, args: unknown[]) {
  const hash = await chain.writeContract({ account, chain: null, address: registry, abi: abis.v2, functionName, args });
  return chain.waitForTransactionReceipt({ hash });
}

beforeAll(async () => {
  anvil = await startAnvil();
  registry = (await installRegistries(anvil.url)).v2;
  service = await startService({ rpc: { [CHAIN_ID]: anvil.url } });
  chain = chainClient(anvil.url);
  const [cold, hot, other, third] = await chain.getAddresses();
  wallets = { cold: cold!, hot: hot!, other: other!, third: third! };
  const receipts = [
    await write(cold!, "delegateAll", [hot, zeroHash, true]),
    await write(other!, "delegateERC20", [hot, TOKEN, zeroHash, AMOUNT]),
    await write(third!, "delegateContract", [hot, TOKEN, zeroHash, true]),
  ];
  lastWrite = receipts.at(-1)!.blockNumber;
  await waitFor("the writes indexed", async () =>
    ((await indexedBlock({ serviceUrl: service.url, chainId: CHAIN_ID })) ?? 0n) >= lastWrite ? true : undefined,
  );
});

/** The contract's view a batch check asks, by its type. */
function viewOf(c: V2BatchCheck): ViewCall {
  const [to, from, rights] = [c.to, c.from, c.rights ?? zeroHash];
  switch (c.type) {
    case "all":
      return { functionName: "checkDelegateForAll", args: [to, from, rights] };
    case "contract":
      return { functionName: "checkDelegateForContract", args: [to, from, c.contract, rights] };
    case "erc721":
      return { functionName: "checkDelegateForERC721", args: [to, from, c.contract, BigInt(c.tokenId!), rights] };
    case "erc20":
      return { functionName: "checkDelegateForERC20", args: [to, from, c.contract, rights] };
    case "erc1155":
      return { functionName: "checkDelegateForERC1155", args: [to, from, c.contract, BigInt(c.tokenId!), rights] };
  }
}

afterAll(async () => {
  await service?.stop();
  await anvil?.stop();
});

/** A documented example as docs/api.md shows it: its import from the package's folder, `./client`. */
const asDocumented = (file: string) => readFileSync(join(ROOT, file), "utf8").replace('"./index"', '"./client"').trim();

describe("the typed client", () => {
  it("is generated from the document as it is now", async () => {
    expect(readFileSync(CLIENT_TYPES, "utf8"), "client/openapi.ts is stale: npm run client:types").toBe(
      await clientTypes(),
    );
  });

  it("runs the documented example: answers equal to eth_call, typed, exact past 2^53", async () => {
    expect(docExample("docs/api.md", "ts", "delegationOf").trim()).toBe(asDocumented("client/example.ts"));
    const { cold, hot, other } = wallets;
    for (const [vault, expected] of [
      [cold, maxUint256],
      [other, AMOUNT],
    ] as const) {
      const answer = await delegationOf(service.url, hot, vault, TOKEN, String(CHAIN_ID));
      expectTypeOf(answer.mayAct).toEqualTypeOf<boolean>();
      expectTypeOf(answer.amount).toEqualTypeOf<number | bigint>();
      expect(answer.mayAct).toBe(await read("checkDelegateForAll", [hot, vault, zeroHash]));
      const contract = await read("checkDelegateForERC20", [hot, vault, TOKEN, zeroHash]);
      expect(contract).toBe(expected);
      expect(answer.amount).toBe(contract);
      expect(BigInt(answer.block!)).toBeGreaterThanOrEqual(lastWrite);
    }
  });

  it("runs the documented vaults example: the vaults checkDelegateForContract answers true for, no more", async () => {
    expect(docExample("docs/api.md", "ts", "claimableVaults").trim()).toBe(asDocumented("client/example-vaults.ts"));
    const { cold, hot, third } = wallets;
    // ALL covers every contract, CONTRACT its own; an ERC20 amount (other's) is no contract-wide delegation.
    for (const [collection, expected] of [
      [TOKEN, [cold, third]],
      [UNNAMED, [cold]],
    ] as const) {
      const answer = await claimableVaults(service.url, hot, collection, String(CHAIN_ID));
      expectTypeOf(answer.vaults).toEqualTypeOf<string[]>();
      const block = BigInt(answer.block!);
      expect(block).toBeGreaterThanOrEqual(lastWrite);
      // Every wallet that could be a vault: the chain's accounts, and whoever delegates to `hot`.
      const incoming = (await read("getIncomingDelegations", [hot], block)) as { from: Address }[];
      const candidates = new Set([...(await chain.getAddresses()), ...incoming.map((d) => getAddress(d.from))]);
      const claimable: Address[] = [];
      for (const vault of candidates) {
        if ((await read("checkDelegateForContract", [hot, vault, collection, zeroHash], block)) === true)
          claimable.push(vault);
      }
      expect(new Set(claimable), `the contract's vaults on ${collection}`).toEqual(new Set(expected));
      // Ordered by address, as a 160-bit number.
      expect(answer.vaults, collection).toEqual(claimable.sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)));
    }
  });

  it("checkMany: thousands of checks in order, three batches at once, all at the first batch's block", async () => {
    const seed = chooseSeed();
    const rng = new Rng(seed);
    const tag = (text: string) => `[SEED=${seed}] ${text}`;
    const wallets = (await chain.getAddresses()).slice(0, 5);
    const types = ["all", "contract", "erc721", "erc1155", "erc20"] as const;
    const checks: V2BatchCheck[] = Array.from({ length: 2_500 }, () => {
      const type = rng.pick(types);
      return {
        type,
        to: rng.pick(wallets),
        from: rng.pick(wallets),
        ...(type === "all" ? {} : { contract: rng.pick([TOKEN, UNNAMED]) }),
        ...(type === "erc721" || type === "erc1155" ? { tokenId: String(rng.int(3)) } : {}),
        ...(rng.chance(0.2) ? { rights: `0x${rng.bigint(256).toString(16).padStart(64, "0")}` } : {}),
      };
    });
    let [inFlight, most] = [0, 0];
    const asked: (string | undefined)[] = [];
    const counting = async (request: Request) => {
      asked.push(((await request.clone().json()) as { blockNumber?: string }).blockNumber);
      most = Math.max(most, ++inFlight);
      try {
        return await fetch(request);
      } finally {
        inFlight--;
      }
    };
    const api = createLookupClient(service.url, { apiKey: service.apiKey, fetch: counting });
    const { block, answers } = await checkMany(api, "v2", checks, {
      chainId: CHAIN_ID,
      batchSize: 300,
      concurrency: 3,
    });
    expect(block, tag("the block")).toBeGreaterThanOrEqual(lastWrite);
    // Nine batches: the first names no block, the eight after it the first's, three of them at once.
    expect(asked, tag("blockNumber of each batch")).toEqual([undefined, ...new Array(8).fill(String(block))]);
    expect(most, tag("batches in flight at once")).toBe(3);
    const expected = await ethCalls(
      { rpcUrl: anvil.url, registry, abi: abis.v2 },
      checks.map((c) => ({ ...viewOf(c), block: block! })),
    );
    expect(answers.map(String), tag("the answers, in order")).toEqual(expected.map(String));
    expect(answers.filter((a) => a === true || (typeof a !== "boolean" && a > 0)).length, tag("yes")).toBeGreaterThan(
      0,
    );

    // At a moment (a second before the block above's: before the head's): the first batch finds its
    // block, the rest ask that block.
    const moment = (await chain.getBlock({ blockNumber: block! })).timestamp - 1n;
    asked.length = 0;
    const atMoment = await checkMany(api, "v2", checks.slice(0, 900), {
      chainId: CHAIN_ID,
      batchSize: 300,
      timestamp: Number(moment),
    });
    const found = atMoment.block!;
    const [at, next] = await Promise.all([found, found + 1n].map((b) => chain.getBlock({ blockNumber: b })));
    expect(at!.timestamp <= moment && next!.timestamp > moment, tag(`block ${found} at moment ${moment}`)).toBe(true);
    expect(asked, tag("blockNumber of each batch at a moment")).toEqual([undefined, String(found), String(found)]);
    const atFound = await ethCalls(
      { rpcUrl: anvil.url, registry, abi: abis.v2 },
      checks.slice(0, 900).map((c) => ({ ...viewOf(c), block: found })),
    );
    expect(atMoment.answers.map(String), tag("the answers at the moment's block")).toEqual(atFound.map(String));

    const bad = [...checks.slice(0, 700), { type: "all", to: "0x12", from: wallets[0] } as const];
    await expect(checkMany(api, "v2", bad, { chainId: CHAIN_ID, batchSize: 300 }), tag("a bad check")).rejects.toThrow(
      /^400 invalid_parameter \(checks\[700\]\.to\)/,
    );
  });

  it("types the problems: a bad address is a 400 whose code and param the client reads", async () => {
    const api = createLookupClient(service.url, { apiKey: service.apiKey });
    const { data, error, response } = await api.GET("/registry/v2/check/all", {
      params: { query: { to: "0x12", from: "0x0000000000000000000000000000000000000001", chainId: "31337" } },
    });
    expect(data).toBeUndefined();
    expect(response.status).toBe(400);
    expect(error?.code).toBe("invalid_parameter");
    expect(error?.param).toBe("to");
  });
});
