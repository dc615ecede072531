/**
 * JSON-RPC access to a chain, through viem. One client per URL, made to keep what the project's
 * callers expect of a plain JSON-RPC call: no retries (a test that talks to a faulty RPC on purpose
 * must see the fault), no time limit (the caller decides how long to wait), no cache (a block
 * number is the newest one), and calls made together go out as one JSON-RPC batch.
 *
 * Registry views are read at a block only once that block is past: anvil answers a call at its
 * newest block from its live state, which already holds part of the next block while that is being
 * mined (seen under load: one eth_call at block N gave block N+1's answer, the next gave N's).
 * So a view at the newest block waits for the next one: ask the views of many answers together
 * (`ethCalls`, as devkit/compare-checks.ts does), which waits once, rather than one after another.
 */
import {
  type Abi,
  type Address,
  createTestClient,
  type EIP1193RequestFn,
  http,
  publicActions,
  walletActions,
} from "viem";
import { chunks, pool } from "./pool";

function createChainClient(url: string) {
  return createTestClient({
    mode: "anvil",
    cacheTime: 0,
    transport: http(url, { batch: { batchSize: 250 }, retryCount: 0, timeout: 0 }),
  })
    .extend(publicActions)
    .extend(walletActions);
}

export type ChainClient = ReturnType<typeof createChainClient>;

const clients = new Map<string, ChainClient>();

/** The viem client of a JSON-RPC URL (one per URL): public, wallet and anvil actions; `request` for raw methods. */
export function chainClient(url: string): ChainClient {
  let client = clients.get(url);
  if (!client) {
    client = createChainClient(url);
    clients.set(url, client);
  }
  return client;
}

/** One JSON-RPC call of any method through the URL's client: its result as the node sent it. */
export function rpc(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  return (chainClient(url).request as EIP1193RequestFn)({ method, params });
}

/** Waits until `block` is no longer the chain's newest (see the module's head). */
export async function untilPast(url: string, block: bigint): Promise<void> {
  const deadline = Date.now() + 60_000;
  while ((await chainClient(url).getBlockNumber()) <= block) {
    if (Date.now() > deadline) throw new Error(`block ${block} is still the newest after 60 s`);
    await new Promise((ok) => setTimeout(ok, 100));
  }
}

/** A contract on a chain: where its views are read. */
export type Contract = { rpcUrl: string; registry: Address; abi: Abi };

/** A view of the contract, with its arguments. */
export type ViewCall = { functionName: string; args: readonly unknown[] };

/**
 * Many views of a contract, each at its own block, decoded; in JSON-RPC batches, a few in flight.
 * `paused`: mining is paused, so the newest block is whole and may be read at once.
 */
export async function ethCalls(
  o: Contract,
  calls: (ViewCall & { block: bigint })[],
  paused = false,
): Promise<unknown[]> {
  if (calls.length > 0 && !paused)
    await untilPast(
      o.rpcUrl,
      calls.reduce((max, c) => (c.block > max ? c.block : max), 0n),
    );
  const client = chainClient(o.rpcUrl);
  const batches = await pool(chunks(calls, 250), 4, (batch) =>
    Promise.all(
      batch.map((c) =>
        client.readContract({
          address: o.registry,
          abi: o.abi,
          functionName: c.functionName,
          args: c.args,
          blockNumber: c.block,
        } as never),
      ),
    ),
  );
  return batches.flat();
}

/** One view of a registry at a block (see ethCalls). */
export async function callView(
  url: string,
  abi: Abi,
  registry: Address,
  functionName: string,
  args: readonly unknown[],
  block: bigint,
  /** Set while mining is paused: then the newest block is whole. */
  paused = false,
): Promise<unknown> {
  const [result] = await ethCalls({ rpcUrl: url, registry, abi }, [{ functionName, args, block }], paused);
  return result;
}
