/** The demo's chain: a fresh anvil with the stand-in registries, and the demo's transactions to it. */
import { readFileSync } from "node:fs";
import { type Address, type Hex, toHex } from "viem";
import { registryV1Abi } from "../../core/abi/registryV1";
import { registryV2Abi } from "../../core/abi/registryV2";
import { V1_ADDRESS, V2_ADDRESS } from "../../core/chains";
import { type Anvil, startAnvil } from "../../devkit/anvil";
import { chunks } from "../../devkit/pool";
import { chainClient, rpc } from "../../devkit/rpc";
import { sendAll, type TxRequest } from "../../devkit/send";
import { encodeCall } from "../../devkit/v1/calls";
import { txData } from "../../devkit/v2/generate";
import { compileSolidity } from "../solidity";
import { type DemoTx, SEED } from "./activity";

export type StandIns = { v1: Hex; v2: Hex };

/** The stand-ins' runtime code. */
export function compileStandIns(): StandIns {
  const source = readFileSync(new URL("./StandIns.sol", import.meta.url), "utf8");
  const { DelegationRegistryStandIn: v1, DelegateRegistryStandIn: v2 } = compileSolidity("StandIns.sol", source);
  if (!v1 || !v2) throw new Error("solc produced no stand-in registries");
  return { v1: v1.deployedBytecode, v2: v2.deployedBytecode };
}

/** Anvil (chain 31337, a block a second) with the stand-ins' code at both registry addresses. */
export async function startDemoChain(code: StandIns): Promise<Anvil> {
  const anvil = await startAnvil({ chainId: 31337, blockTime: 1 });
  try {
    await Promise.all([
      rpc(anvil.url, "anvil_setCode", [V1_ADDRESS, code.v1]),
      rpc(anvil.url, "anvil_setCode", [V2_ADDRESS, code.v2]),
      // Any address may send: the demo's wallets are made-up addresses without keys.
      rpc(anvil.url, "anvil_autoImpersonateAccount", [true]),
    ]);
  } catch (error) {
    await anvil.stop();
    throw error;
  }
  return anvil;
}

// Declared gas, above what the stand-ins use (a call ~26k, each write of a multicall ~6k more): it
// decides how many transactions fit a block.
const V1_GAS = 40_000n;
const v2Gas = (writes: number) => 40_000n + 10_000n * BigInt(writes);

/** The demo's transactions, each sender's with consecutive nonces from 0 (its wallets are new). */
export class Sender {
  private readonly nonces = new Map<Address, number>();
  private readonly funded = new Set<Address>();

  /** Encodes the transactions; a sender's are sent in the order given. */
  prepare(txs: DemoTx[]): TxRequest[] {
    return txs.map((tx) => {
      const nonce = this.nonces.get(tx.from) ?? 0;
      this.nonces.set(tx.from, nonce + 1);
      if ("v1" in tx)
        return { from: tx.from, to: V1_ADDRESS, data: encodeCall(registryV1Abi, tx.v1), gas: V1_GAS, nonce };
      const data = txData(registryV2Abi, { from: tx.from, nonce, writes: tx.v2, multicall: tx.v2.length > 1 });
      return { from: tx.from, to: V2_ADDRESS, data, gas: v2Gas(tx.v2.length), nonce };
    });
  }

  /** Sends them in JSON-RPC batches (devkit/send), giving new senders ether for gas, and waits until all are mined. */
  async send(url: string, requests: TxRequest[]): Promise<void> {
    const fresh = [...new Set(requests.map((r) => r.from))].filter((a) => !this.funded.has(a));
    for (const batch of chunks(fresh, 500))
      await Promise.all(batch.map((a) => rpc(url, "anvil_setBalance", [a, toHex(10n ** 21n)])));
    for (const a of fresh) this.funded.add(a);
    const failed = (await sendAll(url, requests, SEED)).filter((r) => r.status !== "0x1");
    if (failed.length > 0)
      throw new Error(`${failed.length} demo transactions failed, e.g. ${failed[0]!.transactionHash}`);
  }
}

/**
 * Mines anvil's finality depth (64 blocks) at once, so that what was written is finalized, as a
 * real chain's history is: Ponder then indexes it in bulk, far faster than block by block live.
 * Returns the last block written before.
 */
export async function finalize(url: string): Promise<bigint> {
  const written = await chainClient(url).getBlockNumber();
  await rpc(url, "anvil_mine", [toHex(64)]);
  return written;
}
