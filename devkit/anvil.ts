/** Local chains: anvil from the npm `@foundry-rs/anvil` package, each in a process group of its own. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Hex } from "viem";
import { BIN, Child, freePort, GiveUp, waitFor } from "./processes";
import { chainClient, rpc } from "./rpc";

/** More blocks than any chain here mines: every block's state is kept. */
const ALL_STATES = 1_000_000;

export type Anvil = { url: string; chainId: number; stop(): Promise<void> };

/** A fresh anvil chain with interval mining, as the Ponder notes require; resolves once it answers. */
export async function startAnvil(
  options: { chainId?: number; blockTime?: number; port?: number } = {},
): Promise<Anvil> {
  const port = options.port ?? (await freePort());
  const chainId = options.chainId ?? 31337;
  // Anvil keeps the states of older blocks on disk, by default under ~/.foundry/anvil/tmp beside
  // every other anvil's: each test chain keeps its own, deleted with it. It keeps them all, as an
  // archive node does: by default it drops older ones, and start-block discovery's eth_getCode at
  // an early block of a long chain (the bench mines 12,000 blocks) then fails.
  const cache = mkdtempSync(join(tmpdir(), "anvil-cache-"));
  const child = new Child(join(BIN, "anvil"), [
    "--cache-path",
    cache,
    "--max-persisted-states",
    String(ALL_STATES),
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    "--chain-id",
    String(chainId),
    "--block-time",
    String(options.blockTime ?? 1),
    "--accounts",
    "20",
    "--silent",
  ]);
  // However it ends: a test whose setup failed part way may never call stop (test/setup/leftovers.ts).
  child.process.once("exit", () => rmSync(cache, { recursive: true, force: true }));
  const url = `http://127.0.0.1:${port}`;
  await waitFor("anvil", async () => {
    if (!child.running) throw new GiveUp(`anvil exited: ${child.output.slice(-1000)}`);
    return (await rpc(url, "eth_chainId")) ? true : undefined;
  });
  return {
    url,
    chainId,
    stop: async () => {
      await child.stop();
      rmSync(cache, { recursive: true, force: true });
    },
  };
}

/** An evm_snapshot and the block it was taken at. */
export type ChainSnapshot = { id: Hex; block: bigint; hash: Hex };

/**
 * Runs `f` with interval mining paused, then mines every `blockTime` seconds (0: stays paused). In CI a
 * revert under interval mining left the chain going on from the old branch's tip (test/history: an
 * empty block on it, then the new writes), so no indexer saw a reorganization; an interval block begun
 * on the old tip and stored after the revert would do that.
 */
async function withMiningPaused<T>(url: string, blockTime: number, f: () => Promise<T>): Promise<T> {
  const client = chainClient(url);
  await client.setIntervalMining({ interval: 0 });
  // A block already under way when mining pauses is stored within milliseconds.
  await new Promise((ok) => setTimeout(ok, 250));
  try {
    return await f();
  } finally {
    if (blockTime > 0) await client.setIntervalMining({ interval: blockTime });
  }
}

/** Takes an evm_snapshot at the chain's newest block, known exactly: no block is mined in between. */
export function snapshotChain(url: string, { blockTime = 1 } = {}): Promise<ChainSnapshot> {
  return withMiningPaused(url, blockTime, async () => {
    const { number, hash } = await chainClient(url).getBlock();
    return { id: (await rpc(url, "evm_snapshot")) as Hex, block: number, hash };
  });
}

/** Takes the chain back to the snapshot; throws unless its newest block is then the snapshot's. */
export function revertChain(url: string, snapshot: ChainSnapshot, { blockTime = 1 } = {}): Promise<void> {
  return withMiningPaused(url, blockTime, async () => {
    if ((await rpc(url, "evm_revert", [snapshot.id])) !== true) throw new Error(`evm_revert ${snapshot.id} failed`);
    const { number, hash } = await chainClient(url).getBlock();
    if (hash !== snapshot.hash)
      throw new Error(`after evm_revert the newest block is ${number} ${hash}, not the snapshot's ${snapshot.block}`);
  });
}
