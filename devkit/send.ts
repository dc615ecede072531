/**
 * Transactions from anvil's unlocked accounts (or any sender, with anvil's impersonation): one at a
 * time, waiting for it; or thousands at once.
 *
 * Many at once are sent without waiting for each (explicit nonces: anvil queues a later nonce until
 * the earlier ones arrive), in waves. Anvil drops, rather than defers, a transaction whose gas limit
 * no longer fits the block being built (anvil 1.7 drops the sender's later transactions with it, and
 * they are never mined), so a wave must fit what is pending in a block: on anvil's 30M-gas blocks,
 * waves of 25M declared gas, each mined before the next (FITTING_BLOCKS); on a chain whose blocks
 * hold a whole run (roomyBlocks), one wave in batches a little apart, so that they land in several
 * blocks (SPREAD).
 */
import { type Abi, type Address, encodeFunctionData, type Hex, toHex } from "viem";
import { chunks, pool } from "./pool";
import { waitFor } from "./processes";
import { chainClient, rpc } from "./rpc";

export type TxRequest = { from: Address; to?: Address; data: Hex; gas: bigint; nonce: number };

export type Receipt = {
  transactionHash: Hex;
  status: Hex;
  blockNumber: Hex;
  contractAddress: Address | null;
  logs: { address: Address; topics: [Hex, ...Hex[]]; data: Hex; logIndex: Hex; blockNumber: Hex }[];
};

export type SendOptions = {
  /** Declared gas a wave may hold; unset: all in one wave. */
  waveGas?: bigint;
  /** Transactions per JSON-RPC batch, and the pause between a wave's batches. */
  batchSize: number;
  spreadMs: number;
  /** How long a wave may take to be mined. */
  timeoutMs: number;
};

/** Anvil's default blocks (30M gas): waves that fit one block, each mined before the next. */
export const FITTING_BLOCKS: SendOptions = { waveGas: 25_000_000n, batchSize: 100, spreadMs: 0, timeoutMs: 60_000 };

/** A chain with roomy blocks (roomyBlocks): one wave, in batches 250 ms apart. */
export const SPREAD: SendOptions = { batchSize: 100, spreadMs: 250, timeoutMs: 120_000 };

/**
 * Each transaction mined before the next is sent: for automine, which mines a block per arrival.
 * Sent together, a sender's later nonce may arrive first; anvil's automine then mined the earlier
 * alone and left the later queued, never mined (test/feed-crash in CI: "queued": "0x1").
 */
export const ONE_AT_A_TIME: SendOptions = { waveGas: 1n, batchSize: 1, spreadMs: 0, timeoutMs: 60_000 };

/** Blocks big enough for every write of a run (1G gas), for sending with SPREAD. */
export async function roomyBlocks(url: string): Promise<void> {
  await chainClient(url).setBlockGasLimit({ gasLimit: 1_000_000_000n });
}

/** Sends the transactions in waves (see the module's head) and waits until all are mined: receipts in order. */
export async function sendAll(
  url: string,
  requests: TxRequest[],
  seed: number,
  options: SendOptions = FITTING_BLOCKS,
): Promise<Receipt[]> {
  const waves: TxRequest[][] = [];
  let gas = 0n;
  for (const r of requests) {
    if (waves.length === 0 || (options.waveGas !== undefined && gas + r.gas > options.waveGas)) {
      waves.push([]);
      gas = 0n;
    }
    waves[waves.length - 1]!.push(r);
    gas += r.gas;
  }
  const receipts: Receipt[] = [];
  for (const wave of waves) receipts.push(...(await sendWave(url, wave, seed, options)));
  return receipts;
}

async function sendWave(url: string, requests: TxRequest[], seed: number, options: SendOptions): Promise<Receipt[]> {
  const hashes: Hex[] = [];
  for (const [i, batch] of chunks(requests, options.batchSize).entries()) {
    if (i > 0 && options.spreadMs > 0) await new Promise((ok) => setTimeout(ok, options.spreadMs));
    hashes.push(
      ...(await Promise.all(batch.map((r) => rpc(url, "eth_sendTransaction", [transaction(r)]) as Promise<Hex>))),
    );
  }
  const receipts = new Map<Hex, Receipt>();
  const deadline = Date.now() + options.timeoutMs;
  while (receipts.size < hashes.length) {
    if (Date.now() > deadline) {
      const status = JSON.stringify(await rpc(url, "txpool_status").catch((e: Error) => e.message));
      throw new Error(
        `[SEED=${seed}] ${hashes.length - receipts.size} of ${hashes.length} transactions not mined after ` +
          `${options.timeoutMs} ms (txpool ${status})`,
      );
    }
    await new Promise((ok) => setTimeout(ok, 250));
    const missing = hashes.filter((h) => !receipts.has(h));
    const got = await pool(chunks(missing, 200), 4, (batch) =>
      Promise.all(batch.map((h) => rpc(url, "eth_getTransactionReceipt", [h]) as Promise<Receipt | null>)),
    );
    for (const [i, r] of got.flat().entries()) if (r) receipts.set(missing[i]!, r);
  }
  return hashes.map((h) => receipts.get(h)!);
}

/** The eth_sendTransaction object of a request, with fees far above the base fee however full blocks get. */
function transaction(r: TxRequest) {
  return {
    from: r.from,
    ...(r.to ? { to: r.to } : {}),
    data: r.data,
    gas: toHex(r.gas),
    nonce: toHex(r.nonce),
    maxFeePerGas: toHex(1000n * 10n ** 9n),
    maxPriorityFeePerGas: toHex(10n ** 9n),
  };
}

/** Sends one transaction from an unlocked anvil account and waits for it; throws unless it succeeded. */
export async function sendTx(
  url: string,
  from: Address,
  to: Address,
  data: Hex,
  gas = 500_000,
): Promise<{ block: bigint; hash: Hex }> {
  const hash = (await rpc(url, "eth_sendTransaction", [{ from, to, data, gas: toHex(gas) }])) as Hex;
  const receipt = await waitFor(
    `the receipt of ${hash}`,
    async () =>
      ((await rpc(url, "eth_getTransactionReceipt", [hash])) as { status: Hex; blockNumber: Hex } | null) ?? undefined,
    60_000,
  );
  if (receipt.status !== "0x1") throw new Error(`transaction ${hash} from ${from} to ${to} reverted`);
  return { block: BigInt(receipt.blockNumber), hash };
}

/** A registry write (sendTx of the encoded call): the block it landed in. */
export const sendWrite = (
  url: string,
  abi: Abi,
  from: Address,
  registry: Address,
  functionName: string,
  args: readonly unknown[],
) => sendTx(url, from, registry, encodeFunctionData({ abi, functionName, args } as never)).then((r) => r.block);
