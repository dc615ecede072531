/**
 * `POST /rpc/{chainId}` as the integrations that read the registries see it: the official SDK
 * (`@delegatexyz/sdk`, unmodified, which reads through viem at the registries' mainnet addresses,
 * where devkit/oracle.ts puts them) and viem itself (readContract, the multicall action through
 * Multicall3, Multicall3's own functions, the v2 registry's multicall), each given once anvil's
 * transport and once the service's. Seeded writes of both registries; every read function of the
 * SDK and every view of both ABIs is called with wallets, contracts and tokens of those writes, and
 * the two sides' results must be deeply equal (errors: both an error, of the same kind).
 *
 * Reproduce a failure with the seed it prints: SEED=<n> npx vitest run test/rpc-sdk.test.ts
 */
import { isDeepStrictEqual } from "node:util";
import { DelegateV1, DelegateV2 } from "@delegatexyz/sdk";
import {
  type Abi,
  type AbiFunction,
  type Address,
  type Chain,
  createPublicClient,
  encodeAbiParameters,
  encodeFunctionData,
  type Hex,
  http,
  keccak256,
  maxUint256,
  type PublicClient,
  toFunctionSelector,
  toHex,
  zeroHash,
} from "viem";
import { foundry } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { indexedBlock } from "../devkit/ask";
import { installMulticall3, MULTICALL3_ABI, MULTICALL3_ADDRESS } from "../devkit/multicall3";
import { abis, installRegistries } from "../devkit/oracle";
import { waitFor } from "../devkit/processes";
import { chooseSeed, Rng } from "../devkit/random";
import { untilPast } from "../devkit/rpc";
import { type Service, startService } from "../devkit/service";
import { CONTRACTS as V1_CONTRACTS, TOKEN_IDS as V1_TOKEN_IDS } from "../devkit/v1/generate";
import {
  QUERY_ONLY_RIGHTS,
  CONTRACTS as V2_CONTRACTS,
  TOKEN_IDS as V2_TOKEN_IDS,
  WRITE_RIGHTS,
} from "../devkit/v2/generate";
import { SeededWrites } from "./helpers/seeded-writes";

const SEED = chooseSeed();
console.log(`[rpc-sdk] SEED=${SEED} (rerun with SEED=${SEED} npx vitest run test/rpc-sdk.test.ts)`);
const tag = (text: string) => `[SEED=${SEED}] ${text}`;

const CHAIN_ID = 31337;
/** Random argument sets per function: each is one call on either side. */
const CALLS = 16;

/** Anvil's chain as an integration would name it: Multicall3 where every chain has it. */
const CHAIN: Chain = { ...foundry, contracts: { multicall3: { address: MULTICALL3_ADDRESS } } };

type SdkV1 = InstanceType<typeof DelegateV1>;
type SdkV2 = InstanceType<typeof DelegateV2>;
/** One side of the comparison: a public client and the SDK, on one transport. */
type Side = { name: string; client: PublicClient; v1: SdkV1; v2: SdkV2 };

let anvil: Anvil;
let service: Service;
let registries: { v1: Address; v2: Address };
let writes: SeededWrites;
let head: bigint;
let node: Side;
let ours: Side;

function side(name: string, url: string, headers: Record<string, string> = {}): Side {
  // No retries: a refusal is an answer to compare, not a fault to wait out.
  const transport = http(url, { fetchOptions: { headers }, retryCount: 0 });
  return {
    name,
    client: createPublicClient({ chain: CHAIN, transport }) as PublicClient,
    v1: new DelegateV1(transport, CHAIN),
    v2: new DelegateV2({ userTransport: transport, chain: CHAIN }),
  };
}

beforeAll(async () => {
  anvil = await startAnvil({ chainId: CHAIN_ID });
  registries = await installRegistries(anvil.url);
  await installMulticall3(anvil.url);
  writes = await SeededWrites.on(anvil.url, SEED, registries);
  await writes.v2(40);
  await writes.v1(30, 3);
  service = await startService({ rpc: { [CHAIN_ID]: anvil.url } });
  head = await waitFor(
    "the service to index the last write",
    async () => {
      const block = await indexedBlock({ serviceUrl: service.url, chainId: CHAIN_ID, headers: service.headers });
      return block !== undefined && block >= writes.lastWriteBlock ? block : undefined;
    },
    180_000,
  );
  // Anvil answers at its newest block from live state (devkit/rpc.ts): compare only past blocks.
  await untilPast(anvil.url, head);
  node = side("node", anvil.url);
  ours = side("service", `${service.url}/rpc/${CHAIN_ID}`, service.headers);
}, 400_000);

afterAll(async () => {
  await service?.stop();
  await anvil?.stop();
});

/** What a call came to: its value, or the kind of error it threw (the innermost cause's name). */
type Outcome = { value: unknown } | { error: string; message: string };

/**
 * The innermost Error of a chain of causes, by shape: the SDK's package names no `exports`, so Node
 * loads its `main` (CommonJS) and that loads viem's CommonJS build, whose errors are not instances
 * of the BaseError this module imports.
 */
function innermost(e: unknown): { error: string; message: string } {
  type Cause = Error & { details?: string; shortMessage?: string };
  let err: Cause = e instanceof Error ? e : new Error(String(e));
  while (err.cause instanceof Error) err = err.cause as Cause;
  return { error: err.name, message: (err.details || err.shortMessage || err.message).split("\n")[0]! };
}

async function outcome(f: () => Promise<unknown>): Promise<Outcome> {
  try {
    return { value: await f() };
  } catch (e) {
    return innermost(e);
  }
}

const show = (o: Outcome) =>
  "value" in o ? JSON.stringify(o.value, (_, v) => (typeof v === "bigint" ? `${v}n` : v)) : `${o.error}: ${o.message}`;

/** Tallies of one test's comparisons: what differs, and how many the node answered with a value. */
class Tally {
  readonly wrong: string[] = [];
  values = 0;
  errors = 0;

  /**
   * Runs `f` on both sides; notes it unless both give deeply equal values or errors of one kind
   * (a function the service says it does not serve, `notServed`: unless it says so).
   */
  async compare(what: string, f: (s: Side) => Promise<unknown>, notServed = false): Promise<void> {
    const [theirs, mine] = await Promise.all([outcome(() => f(node)), outcome(() => f(ours))]);
    if ("value" in theirs) this.values++;
    else this.errors++;
    const same = notServed
      ? "error" in mine && mine.message.startsWith("not served")
      : "value" in theirs
        ? "value" in mine && isDeepStrictEqual(mine.value, theirs.value)
        : "error" in mine && mine.error === theirs.error;
    if (!same) this.wrong.push(`${what}: node ${show(theirs)}; service ${show(mine)}`);
  }

  /** Asserts nothing differed and the node answered at least `values` calls with a value. */
  check(name: string, values = 1): void {
    console.log(`[rpc-sdk] ${name}: ${this.values} values, ${this.errors} errors; ${this.wrong.length} differ`);
    expect(this.wrong.slice(0, 5), tag(`${name}: ${this.wrong.length} answers differ from the node's`)).toEqual([]);
    expect(this.values, tag(`${name}: calls the node answered with a value`)).toBeGreaterThanOrEqual(values);
  }
}

/** A v2 check's arguments: those of a write most of the time (so that some hold), else random. */
type V2Query = { to: Address; from: Address; contract: Address; tokenId: bigint; rights: Hex };
/** A v1 check's arguments, likewise. */
type V1Query = { delegate: Address; vault: Address; contract: Address; tokenId: bigint };

/** Random arguments drawn from the seeded writes. */
class Draw {
  constructor(readonly rng: Rng) {}

  v2Wallet = (): Address => this.rng.pick(writes.wallets().v2);
  v1Wallet = (): Address => this.rng.pick(writes.wallets().v1);

  v2(): V2Query {
    const { rng } = this;
    const e = rng.chance(0.7) ? rng.pick(writes.v2Events).args : undefined;
    const rights = rng.chance(0.5) ? zeroHash : rng.pick([...WRITE_RIGHTS, ...QUERY_ONLY_RIGHTS]);
    return {
      to: e?.to ?? this.v2Wallet(),
      from: e?.from ?? this.v2Wallet(),
      contract: e?.contract_ !== undefined && rng.chance(0.8) ? e.contract_ : rng.pick(V2_CONTRACTS),
      tokenId: e?.tokenId !== undefined && rng.chance(0.8) ? e.tokenId : rng.weighted(V2_TOKEN_IDS),
      rights: e !== undefined && rng.chance(0.6) ? e.rights : rights,
    };
  }

  v1(): V1Query {
    const { rng } = this;
    const e = rng.chance(0.7) ? rng.pick(writes.effects) : undefined;
    const call = e?.call as Partial<V1Query> | undefined;
    return {
      delegate: call?.delegate ?? this.v1Wallet(),
      vault: e?.actor ?? this.v1Wallet(),
      contract: call?.contract !== undefined && rng.chance(0.8) ? call.contract : rng.pick(V1_CONTRACTS),
      tokenId: call?.tokenId !== undefined && rng.chance(0.8) ? call.tokenId : rng.weighted(V1_TOKEN_IDS),
    };
  }

  /** Delegation hashes: of writes (enabled, revoked or replaced), now and then one never written. */
  hashes(): Hex[] {
    return Array.from({ length: this.rng.int(6) }, () =>
      this.rng.chance(0.85) ? this.rng.pick(writes.v2Events).hash : keccak256(toHex(this.rng.u32())),
    );
  }

  /** v2 storage slots: a written delegation's three (keccak256(hash, 0) onward), low slots, random ones. */
  slot(): Hex {
    const { rng } = this;
    if (rng.chance(0.2)) return toHex(rng.int(4), { size: 32 });
    if (rng.chance(0.2)) return keccak256(toHex(rng.u32()));
    const base = keccak256(
      encodeAbiParameters([{ type: "bytes32" }, { type: "uint256" }], [this.hashes()[0] ?? zeroHash, 0n]),
    );
    return toHex(BigInt(base) + BigInt(rng.int(3)), { size: 32 });
  }

  /** ERC-165's own id, each registry's interface id (the XOR of its functions' selectors), others. */
  interfaceId(): Hex {
    return this.rng.pick([
      "0x01ffc9a7",
      "0xffffffff",
      "0x00000000",
      interfaceIdOf(abis.v2),
      interfaceIdOf(abis.v1),
      toHex(this.rng.u32(), { size: 4 }),
    ]);
  }
}

function interfaceIdOf(abi: Abi): Hex {
  const fns = abi.filter((i): i is AbiFunction => i.type === "function" && i.name !== "supportsInterface");
  const id = fns.reduce((x, fn) => x ^ Number.parseInt(toFunctionSelector(fn).slice(2), 16), 0);
  return toHex(id >>> 0, { size: 4 });
}

/** Each view of each ABI: random arguments for it. A view missing here fails the test that lists them. */
const VIEW_ARGS: Record<"v1" | "v2", Record<string, (d: Draw) => unknown[]>> = {
  v2: {
    checkDelegateForAll: (d) => ((q) => [q.to, q.from, q.rights])(d.v2()),
    checkDelegateForContract: (d) => ((q) => [q.to, q.from, q.contract, q.rights])(d.v2()),
    checkDelegateForERC721: (d) => ((q) => [q.to, q.from, q.contract, q.tokenId, q.rights])(d.v2()),
    checkDelegateForERC20: (d) => ((q) => [q.to, q.from, q.contract, q.rights])(d.v2()),
    checkDelegateForERC1155: (d) => ((q) => [q.to, q.from, q.contract, q.tokenId, q.rights])(d.v2()),
    getIncomingDelegations: (d) => [d.v2Wallet()],
    getOutgoingDelegations: (d) => [d.v2Wallet()],
    getIncomingDelegationHashes: (d) => [d.v2Wallet()],
    getOutgoingDelegationHashes: (d) => [d.v2Wallet()],
    getDelegationsFromHashes: (d) => [d.hashes()],
    readSlot: (d) => [d.slot()],
    readSlots: (d) => [Array.from({ length: d.rng.int(5) }, () => d.slot())],
    supportsInterface: (d) => [d.interfaceId()],
  },
  v1: {
    checkDelegateForAll: (d) => ((q) => [q.delegate, q.vault])(d.v1()),
    checkDelegateForContract: (d) => ((q) => [q.delegate, q.vault, q.contract])(d.v1()),
    checkDelegateForToken: (d) => ((q) => [q.delegate, q.vault, q.contract, q.tokenId])(d.v1()),
    getContractLevelDelegations: (d) => [d.v1().vault],
    getDelegatesForAll: (d) => [d.v1().vault],
    getDelegatesForContract: (d) => ((q) => [q.vault, q.contract])(d.v1()),
    getDelegatesForToken: (d) => ((q) => [q.vault, q.contract, q.tokenId])(d.v1()),
    getDelegationsByDelegate: (d) => [d.v1().delegate],
    getTokenLevelDelegations: (d) => [d.v1().vault],
    supportsInterface: (d) => [d.interfaceId()],
  },
};

const viewsOf = (abi: Abi) =>
  abi.filter(
    (i): i is AbiFunction => i.type === "function" && (i.stateMutability === "view" || i.stateMutability === "pure"),
  );

/** A random view call of either registry, as viem's contract calls name one. */
type ContractCall = { address: Address; abi: Abi; functionName: string; args: unknown[] };

/**
 * The views the service says it does not serve (docs/contract.md, "A drop-in for the node"): a call
 * of one, alone or among others, is answered "not served", never with a value.
 */
const NOT_SERVED = new Set(["readSlot", "readSlots"]);
/** The views a call may name, served ones. */
const servedViews = (version: "v1" | "v2") => Object.keys(VIEW_ARGS[version]).filter((name) => !NOT_SERVED.has(name));

function randomView(d: Draw): ContractCall {
  const version = d.rng.chance(0.6) ? "v2" : "v1";
  const functionName = d.rng.pick(servedViews(version));
  return { address: registries[version], abi: abis[version], functionName, args: VIEW_ARGS[version][functionName]!(d) };
}

/** A call that reverts: a function of one registry sent to the other (neither has a fallback). */
function failingView(d: Draw): ContractCall {
  const [version, other] = d.rng.chance(0.5) ? (["v2", "v1"] as const) : (["v1", "v2"] as const);
  const functionName = version === "v2" ? "getIncomingDelegations" : "getDelegatesForAll";
  return { address: registries[other], abi: abis[version], functionName, args: [d.v2Wallet()] };
}

const calldataOf = (c: ContractCall) => ({ target: c.address, callData: encodeFunctionData(c) });
/** A call named by its ABI's version, and the registry it goes to when that is the other one. */
const what = (c: ContractCall) => {
  const [version, target] = [c.abi === abis.v2 ? "v2" : "v1", c.address === registries.v2 ? "v2" : "v1"];
  return `${version} ${c.functionName}(${show({ value: c.args })})${version === target ? "" : ` to ${target}`}`;
};

/**
 * A token id as the SDK takes it, a number: ids past 2^53 round, and those near 2^256 round up to
 * 2^256, which no uint256 holds (viem refuses to encode it on either side); those become 2^255.
 */
const sdkTokenId = (id: bigint) => (BigInt(Number(id)) > maxUint256 ? Number(1n << 255n) : Number(id));

/** The SDK's read functions, each with random arguments. */
const SDK_READS: Record<"v1" | "v2", Record<string, (s: Side, d: Draw) => Promise<unknown>>> = {
  v2: {
    checkDelegateForAll: (s, d) => ((q) => s.v2.checkDelegateForAll(q.to, q.from, q.rights))(d.v2()),
    checkDelegateForContract: (s, d) =>
      ((q) => s.v2.checkDelegateForContract(q.to, q.from, q.contract, q.rights))(d.v2()),
    checkDelegateForERC721: (s, d) =>
      ((q) => s.v2.checkDelegateForERC721(q.to, q.from, q.contract, sdkTokenId(q.tokenId), q.rights))(d.v2()),
    checkDelegateForERC20: (s, d) => ((q) => s.v2.checkDelegateForERC20(q.to, q.from, q.contract, q.rights))(d.v2()),
    checkDelegateForERC1155: (s, d) =>
      ((q) => s.v2.checkDelegateForERC1155(q.to, q.from, q.contract, sdkTokenId(q.tokenId), q.rights))(d.v2()),
    getIncomingDelegations: (s, d) => s.v2.getIncomingDelegations(d.v2Wallet()),
    getOutgoingDelegations: (s, d) => s.v2.getOutgoingDelegations(d.v2Wallet()),
  },
  v1: {
    checkDelegateForAll: (s, d) => ((q) => s.v1.checkDelegateForAll(q.delegate, q.vault))(d.v1()),
    checkDelegateForContract: (s, d) => ((q) => s.v1.checkDelegateForContract(q.delegate, q.vault, q.contract))(d.v1()),
    checkDelegateForToken: (s, d) =>
      ((q) => s.v1.checkDelegateForToken(q.delegate, q.vault, q.contract, sdkTokenId(q.tokenId)))(d.v1()),
    getContractLevelDelegations: (s, d) => s.v1.getContractLevelDelegations(d.v1().vault),
    getDelegatesForAll: (s, d) => s.v1.getDelegatesForAll(d.v1().vault),
    getDelegatesForContract: (s, d) => ((q) => s.v1.getDelegatesForContract(q.vault, q.contract))(d.v1()),
    getDelegatesForToken: (s, d) =>
      ((q) => s.v1.getDelegatesForToken(q.vault, q.contract, sdkTokenId(q.tokenId)))(d.v1()),
    getDelegationsByDelegate: (s, d) => s.v1.getDelegationsByDelegate(d.v1().delegate),
    getTokenLevelDelegations: (s, d) => s.v1.getTokenLevelDelegations(d.v1().vault),
  },
};

/** An Rng of its own per test, so that each reproduces alone. */
const rngFor = (name: string) => new Rng((SEED ^ Number.parseInt(keccak256(toHex(name)).slice(2, 10), 16)) >>> 0);

describe("the fixtures", () => {
  it("Multicall3 on anvil answers as the calls it batches, at the block it names", async () => {
    const d = new Draw(rngFor("multicall3 fixture"));
    const calls = Array.from({ length: 8 }, () => randomView(d));
    const direct = await Promise.all(
      calls.map(
        async (c) => (await node.client.call({ to: c.address, data: calldataOf(c).callData, blockNumber: head })).data,
      ),
    );
    const read = <F extends string>(functionName: F, args: unknown[]) =>
      node.client.readContract({
        address: MULTICALL3_ADDRESS,
        abi: MULTICALL3_ABI,
        functionName,
        args,
        blockNumber: head,
      } as never);
    const batch = calls.map(calldataOf);
    const [aggregated, tried, blockAnd] = (await Promise.all([
      read("aggregate", [batch]),
      read("tryAggregate", [true, batch]),
      read("blockAndAggregate", [batch]),
    ])) as [[bigint, Hex[]], { success: boolean; returnData: Hex }[], [bigint, Hex, { returnData: Hex }[]]];
    expect(aggregated, tag("aggregate")).toEqual([head, direct]);
    expect(
      tried.map((r) => r.returnData),
      tag("tryAggregate"),
    ).toEqual(direct);
    expect([blockAnd[0], blockAnd[2].map((r) => r.returnData)], tag("blockAndAggregate")).toEqual([head, direct]);
    expect(await read("getBlockNumber", []), tag("getBlockNumber")).toBe(head);
    const viaViem = await node.client.multicall({ contracts: calls as never, blockNumber: head, allowFailure: false });
    const oneByOne = await Promise.all(
      calls.map((c) => node.client.readContract({ ...c, blockNumber: head } as never)),
    );
    expect(viaViem, tag("viem's multicall")).toEqual(oneByOne);
  });
});

describe("the official SDK on the service's /rpc, and on the node", () => {
  for (const version of ["v2", "v1"] as const)
    for (const [name, read] of Object.entries(SDK_READS[version]))
      it(`${version} ${name}`, async () => {
        const d = new Draw(rngFor(`sdk ${version} ${name}`));
        const tally = new Tally();
        for (let i = 0; i < CALLS; i++) {
          const fork = d.rng.u32();
          // Both sides draw the same arguments.
          await tally.compare(`sdk ${version} ${name} #${i}`, (s) => read(s, new Draw(new Rng(fork))));
        }
        tally.check(`sdk ${version} ${name}`, CALLS);
      });

  it("are every read function of the SDK, whose registries are where devkit/oracle.ts puts them", () => {
    const sdkReads = (sdk: object) =>
      Object.entries(sdk)
        .filter(([key, value]) => typeof value === "function" && /^(check|get)/.test(key))
        .map(([key]) => key)
        .sort();
    expect(sdkReads(node.v2), tag("the SDK's v2 reads")).toEqual(Object.keys(SDK_READS.v2).sort());
    expect(sdkReads(node.v1), tag("the SDK's v1 reads")).toEqual(Object.keys(SDK_READS.v1).sort());
    expect([node.v2.contractConfig.address, node.v1.contractConfig.address].map((a) => a.toLowerCase())).toEqual(
      [registries.v2, registries.v1].map((a) => a.toLowerCase()),
    );
  });
});

describe("viem's readContract on the service's /rpc, and on the node", () => {
  it("has arguments for every view of both ABIs", () => {
    for (const version of ["v2", "v1"] as const)
      expect(
        viewsOf(abis[version])
          .map((fn) => fn.name)
          .sort(),
        version,
      ).toEqual(Object.keys(VIEW_ARGS[version]).sort());
  });

  for (const version of ["v2", "v1"] as const)
    for (const [functionName, args] of Object.entries(VIEW_ARGS[version]))
      it(`${version} ${functionName}`, async () => {
        const d = new Draw(rngFor(`readContract ${version} ${functionName}`));
        const tally = new Tally();
        for (let i = 0; i < CALLS; i++) {
          const call = { address: registries[version], abi: abis[version], functionName, args: args(d) };
          await tally.compare(
            what(call),
            (s) => s.client.readContract({ ...call, blockNumber: head }),
            NOT_SERVED.has(functionName),
          );
        }
        tally.check(`readContract ${version} ${functionName}`, CALLS);
      });
});

describe("batched reads on the service's /rpc, and on the node", () => {
  it("viem's multicall action (Multicall3's aggregate3), all calls succeeding", async () => {
    const d = new Draw(rngFor("multicall all"));
    const tally = new Tally();
    for (let i = 0; i < 6; i++) {
      const calls = Array.from({ length: 2 + d.rng.int(12) }, () => randomView(d));
      await tally.compare(`multicall #${i} [${calls.map(what).join(", ")}]`, (s) =>
        s.client.multicall({ contracts: calls as never, blockNumber: head, allowFailure: false }),
      );
    }
    tally.check("multicall", 6);
  });

  it("viem's multicall action with allowFailure: true and a failing call among them", async () => {
    const d = new Draw(rngFor("multicall failing"));
    const tally = new Tally();
    // A failure's error names the transport's URL: compare its kind only.
    const kinds = (results: { status: string; result?: unknown; error?: Error }[]) =>
      results.map((r) => (r.status === "success" ? r : { status: r.status, error: innermost(r.error).error }));
    for (let i = 0; i < 6; i++) {
      const calls = Array.from({ length: 2 + d.rng.int(8) }, () => randomView(d));
      calls.splice(d.rng.int(calls.length + 1), 0, failingView(d));
      await tally.compare(`multicall #${i} [${calls.map(what).join(", ")}]`, async (s) =>
        kinds(await s.client.multicall({ contracts: calls as never, blockNumber: head, allowFailure: true })),
      );
    }
    tally.check("multicall allowFailure", 6);
  });

  it("Multicall3's aggregate, aggregate3, tryAggregate, blockAndAggregate and tryBlockAndAggregate", async () => {
    const d = new Draw(rngFor("multicall3 functions"));
    const tally = new Tally();
    for (let i = 0; i < 4; i++) {
      const ok = Array.from({ length: 1 + d.rng.int(8) }, () => calldataOf(randomView(d)));
      const failing = [...ok];
      failing.splice(d.rng.int(ok.length + 1), 0, calldataOf(failingView(d)));
      const allowing = failing.map((c) => ({ ...c, allowFailure: true }));
      const calls: [string, unknown[]][] = [
        ["aggregate", [ok]],
        ["aggregate", [failing]],
        ["aggregate3", [ok.map((c) => ({ ...c, allowFailure: false }))]],
        ["aggregate3", [allowing]],
        ["tryAggregate", [true, ok]],
        ["tryAggregate", [false, failing]],
        ["tryAggregate", [true, failing]],
        ["blockAndAggregate", [ok]],
        ["tryBlockAndAggregate", [false, failing]],
      ];
      for (const [functionName, args] of calls)
        await tally.compare(`#${i} ${functionName}(${show({ value: args })})`, (s) =>
          s.client.readContract({
            address: MULTICALL3_ADDRESS,
            abi: MULTICALL3_ABI,
            functionName,
            args,
            blockNumber: head,
          } as never),
        );
    }
    tally.check("Multicall3's functions", 4 * 7);
  });

  it("the v2 registry's own multicall of its views", async () => {
    const d = new Draw(rngFor("v2 multicall"));
    const tally = new Tally();
    for (let i = 0; i < 8; i++) {
      const inner = Array.from({ length: 1 + d.rng.int(6) }, () => {
        const functionName = d.rng.pick(servedViews("v2"));
        return encodeFunctionData({ abi: abis.v2, functionName, args: VIEW_ARGS.v2[functionName]!(d) });
      });
      if (i % 4 === 3) inner.push("0xdeadbeef");
      const call = { address: registries.v2, abi: abis.v2, functionName: "multicall", args: [inner] };
      await tally.compare(
        `v2 multicall(${show({ value: inner })})`,
        async (s) =>
          (await s.client.call({ to: registries.v2, data: encodeFunctionData(call), blockNumber: head })).data,
      );
    }
    tally.check("v2 multicall", 6);
  });
});
