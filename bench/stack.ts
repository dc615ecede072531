/**
 * The processes the bench measures, each started with its undo step registered: a local chain with
 * the real registries, the indexer on it (in fresh schemas of the bench's database), API processes
 * (`npm run serve`) and the raw node:http hello.
 */
import { drizzle } from "drizzle-orm/node-postgres";
import type pg from "pg";
import type { Address } from "viem";
import { createSqlStore } from "../api/store";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { installRegistries } from "../devkit/oracle";
import { Child, freePort, ROOT, waitFor } from "../devkit/processes";
import { chainClient } from "../devkit/rpc";
import { type Replica, type Service, startReplica, startService } from "../devkit/service";
import type { Cleanup } from "./cleanup";
import type { Dataset } from "./dataset";
import { tagEnv } from "./procs";
import { seed } from "./seed-db";

export const CHAIN_ID = 31337;

export type Chain = { anvil: Anvil; registry: Address };

/** A fresh anvil (one block a second) with both registries at their canonical addresses. */
export async function startChain(cleanup: Cleanup, blockGasLimit?: bigint): Promise<Chain> {
  const anvil = await startAnvil({ chainId: CHAIN_ID });
  cleanup.add("anvil", () => anvil.stop());
  if (blockGasLimit !== undefined) await chainClient(anvil.url).setBlockGasLimit({ gasLimit: blockGasLimit });
  const { v2 } = await installRegistries(anvil.url);
  return { anvil, registry: v2 };
}

/** The indexer (`ponder start`) on the chain, in fresh schemas, ready, with an API key. */
export async function startIndexer(cleanup: Cleanup, chain: Chain, env: NodeJS.ProcessEnv = {}): Promise<Service> {
  const service = await startService({ rpc: { [CHAIN_ID]: chain.anvil.url }, env });
  cleanup.add("indexer", () => service.stop());
  return service;
}

/** `npm run serve` over the indexer's tables, its process tree tagged for memory figures. */
export async function startServe(cleanup: Cleanup, service: Service, tag: string): Promise<Replica> {
  // Loading a million delegations into each worker's copy takes a while on 2 cores.
  const replica = await startReplica(service, tagEnv(tag), 600_000);
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

/** The last block the indexer has written whole, as the API reads it. */
export async function indexedBlock(db: pg.Client, schema: string): Promise<bigint | undefined> {
  const orm = drizzle(db);
  const states = await createSqlStore((query) => orm.execute(query), schema).chainStates();
  return states.get(CHAIN_ID)?.indexedBlock;
}

/**
 * Grows the dataset and writes the new rows straight into the indexer's tables. They sit at blocks
 * the indexer has passed, so the API's consistency checks take them.
 */
export async function growDataset(
  db: pg.Client,
  service: Service,
  data: Dataset,
  counts: { v2: number; v1: number },
  hot: readonly number[],
) {
  const last = await waitFor("the indexer's first block", async () => {
    const block = await indexedBlock(db, service.schema);
    return block !== undefined && block >= 1n ? block : undefined;
  });
  return seed(db, service.schema, data.grow(counts, hot, { first: 1n, last }));
}
