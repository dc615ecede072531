/**
 * Where each registry's indexing starts on each configured chain: the chain table's `startBlock` if
 * given, else the block found before (remembered in START_BLOCKS_FILE, keyed by chain id, genesis
 * hash and address: a restarted dev chain is a new chain), else the deployment block found by
 * binary search of eth_getCode over the chain's history (about 25 calls; it needs an RPC that serves
 * historical state). A registry with no code at the chain's head is not there, and is skipped.
 *
 * Two dev chains started in the same second share a genesis hash, so a remembered block is checked
 * before it is used: code at it, and none just before.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { type Address, createPublicClient, fallback, http, type PublicClient } from "viem";
import type { ChainEntry } from "../../core/chains";
import type { IndexedChain } from "../../core/plan";
import type { ConfiguredChain } from "../../core/settings";
import { rpcFailure } from "./rpc";

/** viem's http transport's default, given here because the failures name it. */
const TIMEOUT_MS = 10_000;

/** `request`'s answer; when it fails, an error naming the chain and `method` and why, without the URL. */
async function answer<T>(chain: ChainEntry, method: string, request: Promise<T>): Promise<T> {
  try {
    return await request;
  } catch (error) {
    throw new Error(`chain ${chain.id} (${chain.title}): ${method} failed (${rpcFailure(error, method, TIMEOUT_MS)})`);
  }
}

/**
 * The first block at which `hasCode` holds, by binary search over [0, latest]; undefined when
 * there is no code at `latest` (the registry is not on this chain). Code, once deployed, stays:
 * the registries cannot self-destruct.
 */
export async function findDeploymentBlock(
  hasCode: (block: bigint) => Promise<boolean>,
  latest: bigint,
): Promise<bigint | undefined> {
  if (!(await hasCode(latest))) return undefined;
  let low = 0n;
  let high = latest;
  while (low < high) {
    const middle = (low + high) / 2n;
    if (await hasCode(middle)) high = middle;
    else low = middle + 1n;
  }
  return low;
}

/** Start blocks found before, by chain, genesis block and address (a restarted dev chain is new). */
class StartBlockMemory {
  constructor(private readonly file: string) {}

  private read(): Record<string, number> {
    try {
      return JSON.parse(readFileSync(this.file, "utf8")) as Record<string, number>;
    } catch {
      return {};
    }
  }

  get(key: string): number | undefined {
    return this.read()[key];
  }

  set(key: string, block: number) {
    const all = { ...this.read(), [key]: block };
    mkdirSync(dirname(this.file), { recursive: true });
    // Write then rename: several services may share the file.
    const temp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify(all, null, 2)}\n`);
    renameSync(temp, this.file);
  }
}

async function startBlock(
  client: PublicClient,
  chain: ChainEntry,
  version: "v1" | "v2",
  address: Address,
  latest: bigint,
  key: string,
  memory: StartBlockMemory,
  log: (message: string) => void,
): Promise<number | undefined> {
  const hasCode = async (blockNumber: bigint) => {
    try {
      return ((await client.getCode({ address, blockNumber })) ?? "0x") !== "0x";
    } catch (error) {
      throw new Error(
        `chain ${chain.id} (${chain.title}): could not find where registry ${version} starts: eth_getCode at block ` +
          `${blockNumber} failed (${rpcFailure(error, "eth_getCode", TIMEOUT_MS)}). Finding the deployment block ` +
          "needs an RPC that serves historical state (an archive node), or add the block to core/chains.ts as " +
          "startBlock.",
      );
    }
  };
  const remembered = memory.get(key);
  if (remembered !== undefined) {
    const block = BigInt(remembered);
    if ((await hasCode(block)) && (block === 0n || !(await hasCode(block - 1n)))) return remembered;
    log(
      `chain ${chain.id} (${chain.title}): the remembered start of registry ${version} (block ${remembered}) ` +
        "does not hold; searching again",
    );
  }
  const found = await findDeploymentBlock(hasCode, latest);
  if (found === undefined) {
    log(
      `chain ${chain.id} (${chain.title}): registry ${version} has no code at ${address}; ` +
        `not indexing ${version} there`,
    );
    return undefined;
  }
  log(`chain ${chain.id} (${chain.title}): registry ${version} was deployed in block ${found}; indexing from there`);
  memory.set(key, Number(found));
  return Number(found);
}

/**
 * What to index on each configured chain: the registries that are there, each from its start
 * block (the table's, or the one found and remembered in `memoryFile`). Registries absent from a
 * chain are skipped.
 */
export async function planChains(
  chains: readonly ConfiguredChain[],
  options: { memoryFile: string; log?: (message: string) => void },
): Promise<IndexedChain[]> {
  const log = options.log ?? ((message: string) => console.log(message));
  const memory = new StartBlockMemory(options.memoryFile);
  return Promise.all(
    chains.map(async ({ chain, rpc, ws }): Promise<IndexedChain> => {
      const transport = fallback(rpc.map((url) => http(url, { timeout: TIMEOUT_MS })));
      const client = createPublicClient({ transport }) as PublicClient;
      const [latest, genesis] = await Promise.all([
        answer(chain, "eth_blockNumber", client.getBlockNumber()),
        answer(chain, "eth_getBlockByNumber", client.getBlock({ blockNumber: 0n })),
      ]);
      const plan: IndexedChain = { chain, rpc, ...(ws && { ws }) };
      for (const version of ["v1", "v2"] as const) {
        const registry = chain[version];
        if (registry === false) {
          log(
            `chain ${chain.id} (${chain.title}): registry ${version} is not deployed there (chain table); not indexed`,
          );
          continue;
        }
        const key = `${chain.id}:${genesis.hash}:${registry.address.toLowerCase()}`;
        const block =
          registry.startBlock ?? (await startBlock(client, chain, version, registry.address, latest, key, memory, log));
        if (block !== undefined) plan[version] = { address: registry.address, startBlock: block };
      }
      return plan;
    }),
  );
}
