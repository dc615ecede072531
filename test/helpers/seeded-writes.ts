/**
 * Seeded random writes to both real registries on an anvil chain: v2 writes of every kind
 * (devkit/v2/generate.ts), v1 writes directly and through two contract wallets, revokeDelegate by a
 * wallet among them (devkit/v1/generate.ts). Every transaction must succeed; each v1 log is checked
 * to be its call's event, and kept with the call (what the log hides: the delegate a revokeDelegate
 * revoked); each v2 write's event is kept with the delegation hash it touches.
 */
import { type Address, getAddress } from "viem";
import { abis } from "../../devkit/oracle";
import { Rng } from "../../devkit/random";
import { chainClient } from "../../devkit/rpc";
import { type Receipt, roomyBlocks, type SendOptions, SPREAD, sendAll } from "../../devkit/send";
import {
  makePools as makeV1Pools,
  WriteGenerator as V1Generator,
  type Pools as V1Pools,
} from "../../devkit/v1/generate";
import {
  makePools as makeV2Pools,
  WriteGenerator as V2Generator,
  type Pools as V2Pools,
  txRequest as v2TxRequest,
} from "../../devkit/v2/generate";
import { revokedDelegates } from "./event-records";
import { type Effect, effectsOf } from "./v1/effects";
import { type CompiledWallet, compileWallet, txRequest as v1TxRequest } from "./v1/wallet";
import { type ChainEvent, decodeEvents } from "./v2/events";

const lower = (a: string) => a.toLowerCase() as Address;

/** The writes of one chain and what they did. */
export class SeededWrites {
  /** Every v1 write that took effect, in chain order. */
  readonly effects: Effect[] = [];
  /** Every v2 event, in chain order. */
  readonly v2Events: ChainEvent[] = [];
  /** The newest block holding a write. */
  lastWriteBlock = 0n;

  private constructor(
    private readonly url: string,
    private readonly seed: number,
    private readonly registries: { v1: Address; v2: Address },
    private readonly wallet: CompiledWallet,
    readonly pools: { v1: V1Pools; v2: V2Pools },
    /** The write streams: what they wrote steers the tests' queries toward what exists. */
    readonly generators: { v1: V1Generator; v2: V2Generator },
    private readonly send: { v1: SendOptions | undefined; v2: SendOptions },
  ) {}

  /**
   * Writes to the registries at `registries` on the anvil chain at `url`, seeded by `seed`: gives
   * the chain roomy blocks and deploys the contract wallets (by anvil's last account). `send`: how
   * each round is sent (by default v2 writes spread over a few blocks, v1 writes in as few as fit).
   */
  static async on(
    url: string,
    seed: number,
    registries: { v1: Address; v2: Address },
    send?: SendOptions,
  ): Promise<SeededWrites> {
    await roomyBlocks(url);
    const accounts = await chainClient(url).getAddresses();
    const wallet = compileWallet();
    const deployer = accounts[19]!;
    const nonce = await chainClient(url).getTransactionCount({ address: deployer, blockTag: "pending" });
    const deployed = await sendAll(
      url,
      [0, 1].map((k) => ({ from: deployer, data: wallet.bytecode, gas: 1_500_000n, nonce: nonce + k })),
      seed,
    );
    const contractWallets = deployed.map((r) => getAddress(r.contractAddress!));
    const pools = { v1: makeV1Pools(accounts, contractWallets), v2: makeV2Pools(accounts) };
    const generators = {
      v1: new V1Generator(new Rng((seed ^ 0x6a09e667) >>> 0), pools.v1),
      v2: new V2Generator(new Rng(seed), pools.v2),
    };
    return new SeededWrites(url, seed, registries, wallet, pools, generators, { v1: send, v2: send ?? SPREAD });
  }

  /** Every wallet the writes may name, per version (lowercase). */
  wallets(): { v1: Address[]; v2: Address[] } {
    const { v1, v2 } = this.pools;
    return {
      v2: [...new Set([...v2.senders, ...v2.delegates].map(lower))],
      v1: [...new Set([...v1.eoas, ...v1.wallets, ...v1.delegates].map(lower))],
    };
  }

  /** The delegate each v1 RevokeDelegate log revoked (for the chain's event records). */
  revoked(): Map<string, Address> {
    return revokedDelegates(this.effects);
  }

  /** `n` random v2 transactions, spread over several blocks (as `send` sends them). */
  async v2(n: number, send = this.send.v2): Promise<void> {
    const { senders } = this.pools.v2;
    for (const s of senders) this.generators.v2.nonces.set(s, await this.pending(s));
    const txs = Array.from({ length: n }, () => this.generators.v2.nextTx());
    const requests = txs.map((tx) => v2TxRequest(this.registries.v2, abis.v2, tx));
    const receipts = await sendAll(this.url, requests, this.seed, send);
    this.seen(receipts, "v2 writes");
    const events = decodeEvents(abis.v2, this.registries.v2, receipts);
    const writes = txs.reduce((k, tx) => k + tx.writes.length, 0);
    if (events.length !== writes)
      throw new Error(`[SEED=${this.seed}] ${events.length} v2 events for ${writes} writes (multicalls' inner too)`);
    this.v2Events.push(...events);
  }

  /** `n` random v1 transactions, and `walletRevokes` revokeDelegate calls by contract wallets among them. */
  async v1(n: number, walletRevokes: number): Promise<void> {
    for (const e of this.pools.v1.eoas) this.generators.v1.nonces.set(e, await this.pending(e));
    const txs = Array.from({ length: n }, () => this.generators.v1.nextTx());
    for (let i = 0; i < walletRevokes; i++) txs.push(this.generators.v1.walletRevokeTx());
    const requests = txs.map((tx) => v1TxRequest(tx, this.registries.v1, abis.v1, this.wallet));
    const receipts = await sendAll(this.url, requests, this.seed, this.send.v1);
    this.seen(receipts, "v1 writes");
    const made = effectsOf(abis.v1, this.registries.v1, txs, receipts);
    if (made.problems.length > 0)
      throw new Error(`[SEED=${this.seed}] v1 logs that are not their calls' events: ${made.problems.join("; ")}`);
    this.effects.push(...made.effects);
  }

  /**
   * Forgets what was written after block `last`, which the chain was taken back to (revertChain);
   * the streams go on, so the next writes differ from those forgotten. The newest block written is
   * then taken to be `last` at the latest.
   */
  forgetAfter(last: bigint): void {
    const keep = <T extends { block: bigint }>(list: T[]) =>
      list.splice(0, list.length, ...list.filter((e) => e.block <= last));
    keep(this.effects);
    keep(this.v2Events);
    if (this.lastWriteBlock > last) this.lastWriteBlock = last;
  }

  private pending(a: Address): Promise<number> {
    return chainClient(this.url).getTransactionCount({ address: a, blockTag: "pending" });
  }

  /** Throws unless every transaction succeeded; notes the newest block written. */
  private seen(receipts: Receipt[], what: string): void {
    const failed = receipts.filter((r) => r.status !== "0x1").map((r) => r.transactionHash);
    if (failed.length > 0) throw new Error(`[SEED=${this.seed}] ${what}: transactions that reverted: ${failed}`);
    for (const r of receipts)
      if (BigInt(r.blockNumber) > this.lastWriteBlock) this.lastWriteBlock = BigInt(r.blockNumber);
  }
}
