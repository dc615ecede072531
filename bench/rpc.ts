/**
 * `POST /rpc` beside what its users would do instead, a node's `eth_call` of the same calls
 * (docs/performance.md): a chain on which one wallet is delegated to `o.rpcListing` times (v2
 * delegateContract, each for a contract of its own, in multicalls), `npm start` indexing it, then
 * the same JSON-RPC requests to the service and to anvil: checks of those delegations (and of
 * contracts never delegated) at the head, after a hello run; the same checks at past blocks; the
 * wallet's getIncomingDelegations (driven by autocannon, then by wrk); and Multicall3's aggregate3
 * of 100 checks beside one REST batch of the same 100. Every answer is the node's: each run
 * verifies a sample first.
 */
import { type Address, encodeFunctionData, encodeFunctionResult, type Hex, toHex, zeroHash } from "viem";
import { toJson } from "../api/http/json";
import { MULTICALL3_ADDRESS, multicall3Abi } from "../core/abi/multicall3";
import { registryV2Abi } from "../core/abi/registryV2";
import { indexedBlock } from "../devkit/ask";
import { installMulticall3 } from "../devkit/multicall3";
import { waitFor } from "../devkit/processes";
import { Rng } from "../devkit/random";
import { chainClient, rpc } from "../devkit/rpc";
import type { Cleanup } from "./cleanup";
import type { LoadRequest } from "./load";
import type { HelloFigure, RouteFigure, RouteMeasurer } from "./measure";
import type { BenchOptions } from "./options";
import { MIN_QUERIES, type Route } from "./routes";
import { CHAIN_ID, startChain, startIndexer, startServe } from "./stack";

export type RpcFigures = {
  /** Delegations of the listed wallet. */
  size: number;
  check: HelloFigure;
  anvilCheck: HelloFigure;
  past: HelloFigure;
  listing: RouteFigure;
  anvilListing: RouteFigure;
  /** The same two, driven by wrk: autocannon reading a listing's 448 KB answers takes over a core. */
  listingWrk: RouteFigure;
  anvilListingWrk: RouteFigure;
  aggregate: RouteFigure;
  batch: RouteFigure;
};

/** The wallet delegated to, and the one delegating (anvil's first account, unlocked). */
const HOT: Address = "0x00000000000000000000000000000000000b0a7d";
const SENDER: Address = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const PER_TX = 100;
const AGGREGATED = 100;
const contractOf = (i: number): Address => `0x${(0x10_0000 + i).toString(16).padStart(40, "0")}`;

const checkData = (i: number) =>
  encodeFunctionData({
    abi: registryV2Abi,
    functionName: "checkDelegateForContract",
    args: [HOT, SENDER, contractOf(i), zeroHash],
  });
const boolResult = (held: boolean) => (held ? `0x${"0".repeat(63)}1` : zeroHash);

/** A JSON-RPC eth_call body, and its answer's exact text for `result`. */
const ethCall = (to: Address, data: Hex, block: bigint | "latest"): string =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "eth_call",
    params: [{ to, data }, block === "latest" ? block : toHex(block)],
  });
const resulting = (result: string) => (status: number, body: string) => {
  const answer = status === 200 ? (JSON.parse(body) as { result?: string }) : {};
  return answer.result === result
    ? undefined
    : `expected the result ${result.slice(0, 80)}, got ${status} ${body.slice(0, 200)}`;
};

/** A route of JSON-RPC bodies, each answered `results[i]`. */
const rpcRoute = (label: string, path: string, bodies: string[], results: string[]): Route => ({
  label,
  requests: bodies.map((body): LoadRequest => ({ method: "POST", path, body })),
  wrong: (i, status, body) => resulting(results[i]!)(status, body),
});

/** The same route asked of the node, whose JSON-RPC is at its root. */
const atNode = (route: Route, label: string): Route => ({
  ...route,
  label,
  requests: route.requests.map((request) => ({ ...request, path: "/" })),
});

/** Writes the delegations; the block each multicall of PER_TX landed in. */
async function delegate(url: string, registry: Address, size: number): Promise<bigint[]> {
  const hashes: Hex[] = [];
  for (let first = 0; first < size; first += PER_TX) {
    const calls = Array.from({ length: Math.min(PER_TX, size - first) }, (_, k) =>
      encodeFunctionData({
        abi: registryV2Abi,
        functionName: "delegateContract",
        args: [HOT, contractOf(first + k), zeroHash, true],
      }),
    );
    const data = encodeFunctionData({ abi: registryV2Abi, functionName: "multicall", args: [calls] });
    hashes.push(
      (await rpc(url, "eth_sendTransaction", [{ from: SENDER, to: registry, data, gas: "0x1c9c380" }])) as Hex,
    );
  }
  const client = chainClient(url);
  const receipts = await Promise.all(hashes.map((hash) => client.waitForTransactionReceipt({ hash })));
  for (const r of receipts)
    if (r.status !== "success") throw new Error(`delegating to ${HOT} failed in ${r.transactionHash}`);
  return receipts.map((r) => r.blockNumber);
}

/** Multicall3's aggregate3 of 100 checks, beside one REST batch of the same 100 (both alone). */
async function measureAggregate(
  o: BenchOptions,
  service: { url: string; headers: Record<string, string> },
  registry: Address,
  queries: number[],
  size: number,
  rng: Rng,
  measure: RouteMeasurer,
) {
  const path = `/rpc/${CHAIN_ID}`;
  const json = { ...service.headers, "Content-Type": "application/json" };
  const sets = Array.from({ length: 10 }, () => Array.from({ length: AGGREGATED }, () => rng.pick(queries)));
  const aggregate3 = (set: number[]) =>
    encodeFunctionData({
      abi: multicall3Abi,
      functionName: "aggregate3",
      args: [set.map((i) => ({ target: registry, allowFailure: false, callData: checkData(i) }))],
    });
  const expectedOf = (set: number[]) =>
    encodeFunctionResult({
      abi: multicall3Abi,
      functionName: "aggregate3",
      result: set.map((i) => ({ success: true, returnData: boolResult(i < size) })),
    });
  const aggregate = await measure(
    service.url,
    rpcRoute(
      `Multicall3 aggregate3 of ${AGGREGATED} v2 checks through /rpc`,
      path,
      sets.map((set) => ethCall(MULTICALL3_ADDRESS, aggregate3(set), "latest")),
      sets.map(expectedOf),
    ),
    json,
    `Multicall3 aggregate3 of ${AGGREGATED} v2 checks through /rpc, 1 connection`,
    1,
    o.batchDurationS,
  );
  const batchBodies = sets.map((set) =>
    toJson({
      chainId: CHAIN_ID,
      checks: set.map((i) => ({ type: "contract", to: HOT, from: SENDER, contract: contractOf(i) })),
    }),
  );
  const batch = await measure(
    service.url,
    {
      label: `v2 batch of the same ${AGGREGATED} checks`,
      requests: batchBodies.map((body) => ({ method: "POST", path: "/registry/v2/check", body })),
      wrong: (i, status, body) => {
        const expected = toJson(sets[i]!.map((q) => q < size));
        return status === 200 && body === expected
          ? undefined
          : `expected ${expected.slice(0, 80)}, got ${status} ${body.slice(0, 200)}`;
      },
    },
    json,
    `v2 batch of the same ${AGGREGATED} checks, 1 connection`,
    1,
    o.batchDurationS,
  );
  return { aggregate, batch };
}

/** The figures (see the module's head); `measure` runs after a hello run of its own where asked. */
export async function measureRpc(
  o: BenchOptions,
  cleanup: Cleanup,
  measure: RouteMeasurer,
  measureAfterHello: (...args: Parameters<RouteMeasurer>) => Promise<HelloFigure>,
  measureWrk: RouteMeasurer,
  log: (line: string) => void,
): Promise<RpcFigures> {
  const rng = new Rng(o.seed + 11);
  const size = o.rpcListing;
  const chain = await startChain(cleanup);
  await installMulticall3(chain.anvil.url);
  const registry = chain.registries.v2;
  const blocks = await delegate(chain.anvil.url, registry, size);
  const head = blocks.at(-1)!;
  log(`/rpc: ${size.toLocaleString("en")} delegations to one wallet in ${blocks.length} blocks up to ${head}`);
  const indexer = await startIndexer(cleanup, chain);
  // Ready can come before the newest blocks are indexed: the checks' answers need the last one.
  const indexedTo = (url: string) =>
    waitFor(
      "the service to index the delegations",
      async () => {
        const at = await indexedBlock({ serviceUrl: url, chainId: CHAIN_ID, headers: indexer.headers });
        return at !== undefined && at >= head ? true : undefined;
      },
      120_000,
    );
  await indexedTo(indexer.url);
  // Measured where the REST checks are: on the replicas, whose workers the hello runs match.
  const replica = await startServe(cleanup, indexer, "rpc");
  await indexedTo(replica.url);
  const service = { url: replica.url, headers: indexer.headers };
  const client = chainClient(chain.anvil.url);
  // Anvil answers "latest" from its newest block: compare once both are past the last delegation.
  await rpc(chain.anvil.url, "anvil_mine", ["0x2"]);
  const path = `/rpc/${CHAIN_ID}`;
  const json = { ...service.headers, "Content-Type": "application/json" };
  const anvilJson = { "Content-Type": "application/json" };

  // Checks: most of them of the delegations, the rest of contracts never delegated.
  const queries = Array.from({ length: Math.max(MIN_QUERIES, size) }, (_, i) => (i % 4 === 3 ? size + i : i % size));
  const heldAt = (i: number, block: bigint) => i < size && block >= blocks[Math.floor(i / PER_TX)]!;
  const atHead = queries.map((i) => ethCall(registry, checkData(i), "latest"));
  const headResults = queries.map((i) => boolResult(i < size));
  const checks = rpcRoute("v2 check contract through /rpc", path, atHead, headResults);
  const check = await measureAfterHello(service.url, checks, json);
  const anvilCheck = {
    ...(await measure(chain.anvil.url, atNode(checks, "(b) anvil eth_call of the same checks"), anvilJson)),
    hello: check.hello,
  };

  const first = blocks[0]! - 1n;
  const pastBlocks = queries.map(() => first + BigInt(rng.int(Number(head - first) + 1)));
  const past = await measureAfterHello(
    service.url,
    rpcRoute(
      "v2 check contract through /rpc at a past block",
      path,
      queries.map((i, k) => ethCall(registry, checkData(i), pastBlocks[k]!)),
      queries.map((i, k) => boolResult(heldAt(i, pastBlocks[k]!))),
    ),
    json,
  );

  // The wallet's listing: the node's answer is the one expected of both.
  const incoming = encodeFunctionData({ abi: registryV2Abi, functionName: "getIncomingDelegations", args: [HOT] });
  const listed = (await client.call({ to: registry, data: incoming, blockNumber: head })).data!;
  const listingRoute = rpcRoute(
    `v2 getIncomingDelegations through /rpc, ${size.toLocaleString("en")}-delegation wallet`,
    path,
    [ethCall(registry, incoming, "latest")],
    [listed],
  );
  // A listing takes longer than a check: its runs are as long as the batches'. Driven by both load
  // generators, as the check routes are (bench/serving.ts).
  const listings = async (driver: RouteMeasurer, by: string): Promise<[RouteFigure, RouteFigure]> => [
    await driver(service.url, listingRoute, json, `${listingRoute.label}${by}`, undefined, o.batchDurationS),
    await driver(
      chain.anvil.url,
      atNode(listingRoute, `(b) anvil eth_call of the same listing${by}`),
      anvilJson,
      undefined,
      undefined,
      o.batchDurationS,
    ),
  ];
  const [listing, anvilListing] = await listings(measure, "");
  const [listingWrk, anvilListingWrk] = await listings(measureWrk, " (wrk)");

  const { aggregate, batch } = await measureAggregate(o, service, registry, queries, size, rng, measure);
  return { size, check, anvilCheck, past, listing, anvilListing, listingWrk, anvilListingWrk, aggregate, batch };
}
