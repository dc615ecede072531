/** Local chains: anvil from the npm `@foundry-rs/anvil` package, each in a process group of its own. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, Child, freePort, GiveUp, waitFor } from "./processes";
import { rpc } from "./rpc";

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
