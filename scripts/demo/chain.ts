/** The demo's chain: a fresh anvil with the stand-in registries, and the demo's transactions to it. */
import { readFileSync } from "node:fs";
import { type Address, type Hex, toHex } from "viem";
import { registryV1Abi } from "../../core/abi/registryV1";
import { registryV2Abi } from "../../core/abi/registryV2";
import { V1_ADDRESS, V2_ADDRESS } from "../../core/chains";
import { rpc, rpcBatch } from "../../test/helpers/common";
import { type Anvil, startAnvil } from "../../test/helpers/processes";
import { encodeCall, type RegistryCall, sendAll, type TxRequest } from "../../test/helpers/v1-writes";
import { txData, type Write } from "../../test/helpers/v2-writes";
import { compileSolidity } from "../solidity";
import { SEED } from "./activity";

/** One transaction of the demo: v2 writes (several go through multicall), or one v1 write. */
export type DemoTx = { from: Address; v2: Write[] } | { from: Address; v1: RegistryCall };

export type StandIns = { v1: Hex; v2: Hex };

/** The stand-ins' runtime code. */
export function compileStandIns(): StandIns {
  const source = readFileSync(new URL("StandIns.sol", import.meta.url), "utf8");
  const { DelegationRegistryStandIn: v1, DelegateRegistryStandIn: v2 } = compileSolidity("StandIns.sol", source);
  if (!v1 || !v2) throw new Error("solc produced no stand-in registries");
  return { v1: v1.deployedBytecode, v2: v2.deployedBytecode };
}

/** Anvil (chain 31337, a block a second) with the stand-ins' code at both registry addresses. */
export async function startDemoChain(code: StandIns): Promise<Anvil> {
  const anvil = await startAnvil({ chainId: 31337, blockTime: 1 });
  try {
    await rpcBatch(anvil.url, [
      { method: "anvil_setCode", params: [V1_ADDRESS, code.v1] },
      { method: "anvil_setCode", params: [V2_ADDRESS, code.v2] },
      // Any address may send: the demo's wallets are made-up addresses without keys.
      { method: "anvil_autoImpersonateAccount", params: [true] },
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

  /** Sends them in JSON-RPC batches, giving new senders ether for gas, and waits until all are mined. */
  async send(url: string, requests: TxRequest[]): Promise<void> {
    const fresh = [...new Set(requests.map((r) => r.from))].filter((a) => !this.funded.has(a));
    const funding = fresh.map((a) => ({ method: "anvil_setBalance", params: [a, toHex(10n ** 21n)] }));
    for (let i = 0; i < funding.length; i += 500) await rpcBatch(url, funding.slice(i, i + 500));
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
  const written = BigInt((await rpc(url, "eth_blockNumber")) as Hex);
  await rpc(url, "anvil_mine", [toHex(64)]);
  return written;
}
