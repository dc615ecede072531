/**
 * The processes the bench measures, each started with its undo step registered: a local chain with
 * the real registries, the indexer on it (in fresh schemas of the bench's database), API processes
 * (`npm run serve`) and the raw node:http hello.
 */
import { drizzle } from "drizzle-orm/node-postgres";
import type pg from "pg";
import { type Address, toHex } from "viem";
import { createSqlStore } from "../api/store/store";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { installRegistries } from "../devkit/oracle";
import { chunks } from "../devkit/pool";
import { Child, freePort, ROOT, waitFor } from "../devkit/processes";
import { chainClient, rpc } from "../devkit/rpc";
import { type Replica, type Service, startReplica, startService } from "../devkit/service";
import type { Cleanup } from "./cleanup";
import { Dataset, type HotSizes, type SeedBlock } from "./dataset";
import type { BenchOptions } from "./options";
import { tagEnv } from "./procs";
import type { Registry } from "./routes";
import { seed } from "./seed-db";

export const CHAIN_ID = 31337;

export type Chain = { id: number; anvil: Anvil; registries: Record<Registry, Address>; seedBlocks: SeedBlock[] };

/**
 * A fresh anvil (one block a second) with both registries at their canonical addresses; then
 * `seedBlocks` empty blocks mined at once (before any indexer starts, so that its backfill passes
 * them), with their hashes and times: the blocks a seeded history is spread over.
 */
export async function startChain(
  cleanup: Cleanup,
  options: { blockGasLimit?: bigint; seedBlocks?: number; chainId?: number } = {},
): Promise<Chain> {
  const id = options.chainId ?? CHAIN_ID;
  const anvil = await startAnvil({ chainId: id });
  cleanup.add("anvil", () => anvil.stop());
  const client = chainClient(anvil.url);
  if (options.blockGasLimit !== undefined) await client.setBlockGasLimit({ gasLimit: options.blockGasLimit });
  const registries = await installRegistries(anvil.url);
  const count = options.seedBlocks ?? 0;
  if (count === 0) return { id, anvil, registries, seedBlocks: [] };
  const first = (await client.getBlockNumber()) + 1n;
  await rpc(anvil.url, "anvil_mine", [toHex(count), toHex(1)]);
  const numbers = Array.from({ length: count }, (_, i) => first + BigInt(i));
  const seedBlocks: SeedBlock[] = [];
  // Calls made together go out as JSON-RPC batches (devkit/rpc.ts).
  for (const part of chunks(numbers, 1_000)) {
    const blocks = await Promise.all(part.map((blockNumber) => client.getBlock({ blockNumber })));
    seedBlocks.push(...blocks.map((b) => ({ number: b.number, hash: b.hash, timestamp: b.timestamp })));
  }
  return { id, anvil, registries, seedBlocks };
}

/** The indexer (`ponder start`) on the chains, in fresh schemas, ready, with an API key. */
export async function startIndexer(
  cleanup: Cleanup,
  chains: Chain | readonly Chain[],
  env: NodeJS.ProcessEnv = {},
): Promise<Service> {
  const rpc = Object.fromEntries([chains].flat().map((chain) => [chain.id, chain.anvil.url]));
  const service = await startService({ rpc, env });
  cleanup.add("indexer", () => service.stop());
  return service;
}

/** `npm run serve` over the indexer's tables (with `env`), its process tree tagged for memory figures. */
export async function startServe(
  cleanup: Cleanup,
  service: Service,
  tag: string,
  env: NodeJS.ProcessEnv = {},
): Promise<Replica> {
  // Loading a million delegations into each worker's copy takes a while on 2 cores.
  const replica = await startReplica(service, { ...env, ...tagEnv(tag) }, 600_000);
  cleanup.add("npm run serve", () => replica.stop());
  return replica;
}

/** The raw node:http hello server (bench/hello-server.ts); its URL once it answers. */
export async function startHello(cleanup: Cleanup): Promise<string> {
  const port = await freePort();
  const child = new Child(`${ROOT}/node_modules/.bin/tsx`, ["bench/hello-server.ts"], { PORT: String(port) });
  cleanup.add("hello server", () => child.stop());
  const url = `http://127.0.0.1:${port}`;
  await waitFor("the hello server", async () => ((await fetch(url)).ok ? true : undefined), 60_000);
  return url;
}

/** The last block of a chain the indexer has written whole, as the API reads it. */
export async function indexedBlock(db: pg.Client, schema: string, chainId = CHAIN_ID): Promise<bigint | undefined> {
  const orm = drizzle(db);
  const states = await createSqlStore((query) => orm.execute(query), schema).chainStates();
  return states.get(chainId)?.indexedBlock;
}

/**
 * Grows the dataset over `blocks` of the chain and writes the new rows straight into the indexer's
 * tables, once the indexer has passed those blocks (so the API's consistency checks take them).
 */
export async function growDataset(
  db: pg.Client,
  service: Service,
  data: Dataset,
  counts: { v2: number; v1: number },
  hot: HotSizes,
  blocks: readonly SeedBlock[],
) {
  const last = blocks.at(-1)!.number;
  await waitFor("the indexer to pass the seeded blocks", async () => {
    const block = await indexedBlock(db, service.schema, data.chainId);
    return block !== undefined && block >= last ? true : undefined;
  });
  return seed(db, service.schema, data.grow(counts, hot, blocks));
}

/** What a seeded database holds after a growth step. */
export type Size = {
  v2: number;
  v1: number;
  wallets: number;
  v2Events: number;
  v1Events: number;
  blocks: number;
  seedMs: number;
};

/** The bulk listings' wallets' numbers of delegations, taken in turn: 10 on average. */
export const BULK_SIZES = [8, 9, 10, 11, 12];

/** The large step's hot wallets: listings', vaults' (only delegated to) and bulk listings' (~10 delegations each). */
const largeHot = (o: BenchOptions): HotSizes => ({
  both: o.hot,
  incoming: Array.from({ length: o.vaultWallets }, () => o.vaultIncoming),
  bulk: Array.from({ length: o.bulkWallets }, (_, i) => BULK_SIZES[i % BULK_SIZES.length]!),
});

/**
 * The chain (with `o.blocks` blocks to seed), the indexer on it and the dataset, and its growth:
 * the small database over the first blocks (their share as of its delegations), then the large one
 * (with the hot wallets) over the rest.
 */
export async function seededStack(o: BenchOptions, cleanup: Cleanup, db: pg.Client, log: (line: string) => void) {
  const chain = await startChain(cleanup, { seedBlocks: o.blocks });
  // The delays' webhook endpoint is on loopback (bench/delay.ts).
  const service = await startIndexer(cleanup, chain, { WEBHOOK_ALLOW_PRIVATE: "true" });
  log(`indexer ready on a fresh chain with ${o.blocks.toLocaleString("en")} blocks to seed (schema ${service.schema})`);
  const data = new Dataset(o.seed, {
    chainId: CHAIN_ID,
    wallets: o.wallets,
    samplesPerRoute: Math.round(o.urlsPerRoute * 0.75),
  });
  const smallBlocks = Math.max(1, Math.round((chain.seedBlocks.length * o.small) / o.large));
  const grow = async (step: "small" | "large"): Promise<Size> => {
    const total = step === "small" ? o.small : o.large - o.small;
    const { rows, events, ms } = await growDataset(
      db,
      service,
      data,
      { v2: total - Math.round(total * o.v1Share), v1: Math.round(total * o.v1Share) },
      step === "small" ? { both: [] } : largeHot(o),
      step === "small" ? chain.seedBlocks.slice(0, smallBlocks) : chain.seedBlocks.slice(smallBlocks),
    );
    const counts = data.counts;
    const seeded = Number(data.blocks!.last - data.blocks!.first) + 1;
    log(
      `seeded ${rows.toLocaleString("en")} delegations with ${events.toLocaleString("en")} events in ` +
        `${(ms / 1000).toFixed(1)} s: now ${counts.v2.toLocaleString("en")} v2 and ${counts.v1.toLocaleString("en")} ` +
        `v1 over ${counts.wallets.toLocaleString("en")} wallets, ` +
        `${(counts.v2Events + counts.v1Events).toLocaleString("en")} events in ${seeded.toLocaleString("en")} blocks`,
    );
    return { ...counts, blocks: seeded, seedMs: ms };
  };
  return { chain, service, data, grow };
}
