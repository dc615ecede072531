/**
 * A seeded random stream of v2 writes: every write function, multicall, re-enables, revokes of what
 * does not exist, amount changes, self-delegations, extreme token ids. The pools are small on
 * purpose, so that writes collide (re-enables, revokes of what exists) and checks hit.
 */
import {
  type Abi,
  type Address,
  encodeFunctionData,
  getAddress,
  type Hex,
  keccak256,
  maxUint256,
  stringToHex,
  toHex,
  zeroAddress,
  zeroHash,
} from "viem";
import type { Rng } from "../random";
import type { TxRequest } from "../send";

/** 0x…01, the v2 contract's marker of a revoked delegation: as `from`, like 0x0, it never delegates. */
export const ADDRESS_1: Address = "0x0000000000000000000000000000000000000001";

/** Rights the writes use (empty is the most common); each is also queried. */
export const WRITE_RIGHTS: readonly Hex[] = [
  stringToHex("opensea", { size: 32 }),
  stringToHex("claim+airdrop & more=yes %20/?#", { size: 32 }), // URL-hostile characters, 31 bytes
  stringToHex("0123456789abcdefABCDEF0123456789", { size: 32 }), // exactly 32 bytes: no zero padding
  keccak256(stringToHex("non-ascii rights")), // has no string spelling
];
/** Rights no write uses: a check with them only sees empty-rights delegations. */
export const QUERY_ONLY_RIGHTS: readonly Hex[] = [stringToHex("unused", { size: 32 }), toHex(1, { size: 32 })];

export const CONTRACTS: readonly Address[] = [
  "0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D",
  "0x6B175474E89094C44Da98b954EedeAC495271d0F",
  "0x76BE3b62873462d2142405439777e971754E8E77",
  zeroAddress, // a CONTRACT delegation for contract 0x0 still has a contract (not null)
];

export const TOKEN_IDS: readonly (readonly [number, bigint])[] = [
  [4, 0n],
  [4, 1n],
  [2, 2n],
  [2, 1337n],
  [3, maxUint256],
  [2, maxUint256 - 1n],
  [1, 1n << 255n],
];

export const AMOUNTS: readonly (readonly [number, bigint])[] = [
  [4, 1n],
  [3, 1000n],
  [2, 10n ** 18n],
  [2, maxUint256],
  [1, maxUint256 - 1n],
  [1, (1n << 128n) + 7n],
];

export type Pools = {
  /** Funded accounts that send writes. */
  senders: Address[];
  /** Delegates: most senders, some accounts that never write, and odd addresses. */
  delegates: Address[];
};

/** The pools of a run: the first 12 accounts send, 2 more are only delegates, with odd addresses. */
export function makePools(accounts: Address[]): Pools {
  const senders = accounts.slice(0, 12).map((a) => getAddress(a));
  const delegates = [
    ...senders.slice(0, 8),
    ...accounts.slice(12, 14).map((a) => getAddress(a)),
    getAddress("0x000000000000000000000000000000000000dEaD"),
    zeroAddress, // the contract lets anyone delegate to the zero address
  ];
  return { senders, delegates };
}

export type Write =
  | { fn: "delegateAll"; to: Address; rights: Hex; enable: boolean }
  | { fn: "delegateContract"; to: Address; contract: Address; rights: Hex; enable: boolean }
  | { fn: "delegateERC721"; to: Address; contract: Address; tokenId: bigint; rights: Hex; enable: boolean }
  | { fn: "delegateERC20"; to: Address; contract: Address; rights: Hex; amount: bigint }
  | { fn: "delegateERC1155"; to: Address; contract: Address; tokenId: bigint; rights: Hex; amount: bigint };

/** A write with its sender: enough to name the delegation it touches. */
export type SentWrite = Write & { from: Address };

export type Tx = { from: Address; nonce: number; writes: Write[]; multicall: boolean };

function writeKey(from: Address, w: Write): string {
  const contract = "contract" in w ? w.contract.toLowerCase() : "";
  const tokenId = "tokenId" in w ? w.tokenId : "";
  return `${w.fn}|${from.toLowerCase()}|${w.to.toLowerCase()}|${contract}|${tokenId}|${w.rights}`;
}

/**
 * The seeded stream of transactions. Each sender's transactions carry consecutive nonces, so each
 * sender's own delegations (the contract keys them by sender) change in a known order; the
 * generator keeps that state only to steer toward and count the interesting cases.
 */
export class WriteGenerator {
  readonly nonces = new Map<Address, number>();
  /** Every write generated so far, in generation order. */
  readonly history: SentWrite[] = [];
  readonly stats: Record<string, number> = {};
  private readonly state = new Map<string, { enabled: boolean; amount: bigint }>();
  private readonly bySender = new Map<Address, Write[]>();

  constructor(
    private readonly rng: Rng,
    private readonly pools: Pools,
  ) {}

  private count(name: string, n = 1) {
    this.stats[name] = (this.stats[name] ?? 0) + n;
  }

  /** The next transaction: a sender, and one write or a multicall of several. */
  nextTx(): Tx {
    const rng = this.rng;
    const from = rng.pick(this.pools.senders);
    const nonce = this.nonces.get(from) ?? 0;
    this.nonces.set(from, nonce + 1);
    const multicall = rng.chance(0.12);
    const writes: Write[] = [];
    const n = multicall ? 2 + rng.int(5) : 1;
    for (let i = 0; i < n; i++) writes.push(this.nextWrite(from));
    this.count("transactions");
    if (multicall) {
      this.count("multicall batches");
      this.count("writes inside multicall", n);
    }
    return { from, nonce, writes, multicall };
  }

  private nextWrite(from: Address): Write {
    const rng = this.rng;
    const own = this.bySender.get(from) ?? [];
    let w: Write;
    if (own.length > 0 && rng.chance(0.45)) {
      // The same delegation again: re-enable, revoke, change the amount, or repeat.
      const base = rng.pick(own);
      w = "enable" in base ? { ...base, enable: rng.chance(0.5) } : { ...base, amount: this.amount() };
    } else {
      const to = rng.chance(0.08) ? from : rng.pick(this.pools.delegates);
      const contract = rng.pick(CONTRACTS.slice(0, rng.chance(0.05) ? 4 : 3));
      const tokenId = rng.weighted(TOKEN_IDS);
      const rights = rng.chance(0.5) ? zeroHash : rng.pick(WRITE_RIGHTS);
      const enable = rng.chance(0.6);
      w = rng.weighted<Write>([
        [15, { fn: "delegateAll", to, rights, enable }],
        [20, { fn: "delegateContract", to, contract, rights, enable }],
        [25, { fn: "delegateERC721", to, contract, tokenId, rights, enable }],
        [20, { fn: "delegateERC20", to, contract, rights, amount: this.amount() }],
        [20, { fn: "delegateERC1155", to, contract, tokenId, rights, amount: this.amount() }],
      ]);
    }
    this.account(from, w);
    own.push(w);
    this.bySender.set(from, own);
    this.history.push({ ...w, from });
    return w;
  }

  private amount(): bigint {
    return this.rng.chance(0.3) ? 0n : this.rng.weighted(AMOUNTS);
  }

  /** Counts what the write does to the contract's state (exact: the sender's nonces order them). */
  private account(from: Address, w: Write) {
    this.count(w.fn);
    if (w.to.toLowerCase() === from.toLowerCase()) this.count("self-delegations");
    if (w.rights !== zeroHash) this.count("non-empty rights");
    if ("tokenId" in w && w.tokenId >= maxUint256 - 1n) this.count("tokenId near 2^256-1");
    const key = writeKey(from, w);
    const prev = this.state.get(key);
    const enabling = "enable" in w ? w.enable : w.amount !== 0n;
    const amount = "amount" in w ? w.amount : 0n;
    if (enabling) {
      if (prev === undefined) this.count("first enables");
      else if (!prev.enabled) this.count("re-enables of revoked");
      else if ("amount" in w && prev.amount !== amount) this.count("amount changes");
      else this.count("enables of enabled");
      this.state.set(key, { enabled: true, amount });
    } else {
      if (prev === undefined) this.count("disables of never-enabled");
      else if (prev.enabled) this.count("amount" in w ? "revokes by amount 0" : "revokes of enabled");
      else this.count("revokes of revoked");
      if (prev?.enabled) this.state.set(key, { enabled: false, amount: 0n });
    }
  }
}

function writeArgs(w: Write): readonly unknown[] {
  switch (w.fn) {
    case "delegateAll":
      return [w.to, w.rights, w.enable];
    case "delegateContract":
      return [w.to, w.contract, w.rights, w.enable];
    case "delegateERC721":
      return [w.to, w.contract, w.tokenId, w.rights, w.enable];
    case "delegateERC20":
      return [w.to, w.contract, w.rights, w.amount];
    case "delegateERC1155":
      return [w.to, w.contract, w.tokenId, w.rights, w.amount];
  }
}

/** The calldata of a transaction: its write, or a multicall of its writes. */
export function txData(abi: Abi, tx: Tx): Hex {
  const inner = tx.writes.map((w) => encodeFunctionData({ abi, functionName: w.fn, args: writeArgs(w) }));
  return tx.multicall ? encodeFunctionData({ abi, functionName: "multicall", args: [inner] }) : inner[0]!;
}

/** A first enable writes at most 9 fresh slots (~200k gas); this leaves room. */
const txGas = (tx: Tx) => (tx.multicall ? 60_000 + 300_000 * tx.writes.length : 300_000);

/** The transaction of `tx` to the registry, with gas to spare. */
export const txRequest = (registry: Address, abi: Abi, tx: Tx): TxRequest => ({
  from: tx.from,
  to: registry,
  data: txData(abi, tx),
  gas: BigInt(txGas(tx)),
  nonce: tx.nonce,
});
