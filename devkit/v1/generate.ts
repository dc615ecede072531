/**
 * A seeded random stream of v1 writes: delegateForAll/Contract/Token with true and false,
 * revokeAllDelegates, revokeDelegate, revokeSelf, re-delegations after each kind of revocation,
 * made directly by EOAs and through contract wallets (one call, several calls in one transaction,
 * calls undone by a reverted frame or starved of gas, calls through two wallets). A transaction
 * names its route and calls; the contract wallet that carries them, and its encoding, are the
 * tests' own.
 */
import { type Address, maxUint256, zeroAddress } from "viem";
import type { Rng } from "../random";
import type { DelegateCall, RegistryCall } from "./calls";

const lower = (a: string) => a.toLowerCase() as Address;

/** An address no account holds, named as a delegate. */
export const DEAD: Address = "0x000000000000000000000000000000000000dead";

/** What becomes of an inner call: it takes effect, is undone by a reverting parent, or runs out of gas. */
export type Fate = "done" | "undone" | "starved";
export type Inner = { call: RegistryCall; fate: Fate };
export type Route = "direct" | "forward" | "forwardMany" | "forwardUndo" | "nested";

export type Tx = {
  /** The EOA that signs. */
  from: Address;
  nonce: number;
  route: Route;
  /** msg.sender at the registry: `from` for direct calls, else the (innermost) wallet. */
  actor: Address;
  /** Wallets the calls pass through, outermost first. */
  via: Address[];
  calls: Inner[];
};

const emits = (c: RegistryCall) => c.fn !== "checkDelegateForAll";
/** The calls that leave a log, in order. */
export const doneCalls = (tx: Tx) => tx.calls.filter((i) => i.fate === "done" && emits(i.call)).map((i) => i.call);

export type Pools = {
  /** Funded accounts: senders, vaults, delegates. */
  eoas: Address[];
  /** Contract wallets: vaults (through them) and delegates. */
  wallets: Address[];
  /** Everyone a delegation may name: EOAs, wallets, accounts that never write, odd addresses. */
  delegates: Address[];
  contracts: Address[];
  tokenIds: readonly (readonly [number, bigint])[];
};

export const CONTRACTS: readonly Address[] = [
  lower("0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D"),
  lower("0x60E4d786628Fea6478F785A6d7e704777c86a7c6"),
  lower("0x76BE3b62873462d2142405439777e971754E8E77"),
  zeroAddress, // a CONTRACT or TOKEN delegation on contract 0x0 is still not ALL
];

export const TOKEN_IDS: readonly (readonly [number, bigint])[] = [
  [4, 0n],
  [4, 1n],
  [3, 2n],
  [2, 42n],
  [2, maxUint256],
  [1, 1n << 255n],
];

/** The pools of a run: the first 12 accounts write, 3 more are only named, with the contract wallets. */
export function makePools(accounts: Address[], wallets: Address[]): Pools {
  const eoas = accounts.slice(0, 12).map(lower);
  return {
    eoas,
    wallets: wallets.map(lower),
    delegates: [...eoas.slice(0, 9), ...wallets.map(lower), ...accounts.slice(12, 15).map(lower), DEAD, zeroAddress],
    contracts: [...CONTRACTS],
    tokenIds: TOKEN_IDS,
  };
}

/** A delegateFor* write generated, with its vault: what checks are drawn from. */
export type Delegation = DelegateCall & { vault: Address };

/** The seeded stream of transactions; each sender's carry consecutive nonces from `nonces`. */
export class WriteGenerator {
  readonly nonces = new Map<Address, number>();
  readonly delegations: Delegation[] = [];
  readonly stats: Record<string, number> = {};
  private readonly own = new Map<Address, DelegateCall[]>();
  private readonly delegatorsOf = new Map<Address, Set<Address>>();

  constructor(
    private readonly rng: Rng,
    private readonly pools: Pools,
  ) {}

  private count(name: string, n = 1) {
    this.stats[name] = (this.stats[name] ?? 0) + n;
  }

  private nonce(from: Address): number {
    const n = this.nonces.get(from);
    if (n === undefined) throw new Error(`no nonce for ${from}`);
    this.nonces.set(from, n + 1);
    return n;
  }

  /** The next transaction: a route drawn by weight, and its calls. */
  nextTx(): Tx {
    const rng = this.rng;
    const route = rng.weighted<Route>([
      [60, "direct"],
      [11, "forward"],
      [13, "forwardMany"],
      [9, "forwardUndo"],
      [7, "nested"],
    ]);
    this.count(`route ${route}`);
    if (route === "direct") {
      const actor = rng.pick(this.pools.eoas);
      return {
        from: actor,
        nonce: this.nonce(actor),
        route,
        actor,
        via: [],
        calls: [{ call: this.nextCall(actor), fate: "done" }],
      };
    }
    const from = rng.pick(this.pools.eoas);
    const outer = rng.pick(this.pools.wallets);
    const via = route === "nested" ? [outer, rng.pick(this.pools.wallets.filter((w) => w !== outer))] : [outer];
    const actor = via[via.length - 1]!;
    const n = route === "forward" ? 1 : route === "nested" ? 1 + rng.int(3) : 2 + rng.int(4);
    const calls: Inner[] = [];
    for (let i = 0; i < n; i++) {
      const fate: Fate =
        route === "forwardUndo"
          ? rng.weighted<Fate>([
              [5, "done"],
              [3, "undone"],
              [2, "starved"],
            ])
          : "done";
      calls.push({ call: this.nextCall(actor), fate });
    }
    // Many transactions of several writes carry a revokeDelegate: the case only a trace resolves.
    if ((route === "forwardMany" || route === "forwardUndo" || route === "nested") && rng.chance(0.5)) {
      calls.splice(rng.int(calls.length + 1), 0, { call: this.revokeDelegate(actor), fate: "done" });
    }
    for (const i of calls) if (i.fate !== "done") this.count(`calls ${i.fate} (reverted frame)`);
    return { from, nonce: this.nonce(from), route, actor, via, calls };
  }

  /** A wallet revokes a delegate it delegated to, among other writes, in one transaction. */
  walletRevokeTx(): Tx {
    const rng = this.rng;
    const from = rng.pick(this.pools.eoas);
    const actor = rng.pick(this.pools.wallets);
    const calls: Inner[] = [
      { call: this.nextCall(actor), fate: "done" },
      { call: this.revokeDelegate(actor), fate: "done" },
    ];
    if (rng.chance(0.5)) calls.push({ call: this.nextCall(actor), fate: "done" });
    rng.shuffle(calls);
    this.count("route forwardMany");
    return { from, nonce: this.nonce(from), route: "forwardMany", actor, via: [actor], calls };
  }

  private revokeDelegate(actor: Address): RegistryCall {
    const mine = this.own.get(actor) ?? [];
    const delegate =
      mine.length && this.rng.chance(0.85) ? this.rng.pick(mine).delegate : this.rng.pick(this.pools.delegates);
    return { fn: "revokeDelegate", delegate };
  }

  private nextCall(actor: Address): RegistryCall {
    const rng = this.rng;
    const mine = this.own.get(actor) ?? [];
    const kind = rng.weighted([
      [mine.length ? 34 : 0, "reuse"],
      [44, "new"],
      [3, "revokeAll"],
      [10, "revokeDelegate"],
      [9, "revokeSelf"],
    ] as const);
    let call: RegistryCall;
    switch (kind) {
      case "reuse":
        call = { ...rng.pick(mine), value: rng.chance(0.55) };
        break;
      case "new": {
        const delegate = rng.chance(0.07) ? actor : rng.pick(this.pools.delegates);
        const contract = rng.pick(this.pools.contracts);
        const value = rng.chance(0.75);
        call = rng.weighted<RegistryCall>([
          [28, { fn: "delegateForAll", delegate, value }],
          [30, { fn: "delegateForContract", delegate, contract, value }],
          [42, { fn: "delegateForToken", delegate, contract, tokenId: rng.weighted(this.pools.tokenIds), value }],
        ]);
        break;
      }
      case "revokeAll":
        call = { fn: "revokeAllDelegates" };
        break;
      case "revokeDelegate":
        call = this.revokeDelegate(actor);
        break;
      case "revokeSelf": {
        const delegators = [...(this.delegatorsOf.get(actor) ?? [])];
        const vaults = [...this.pools.eoas, ...this.pools.wallets];
        call = {
          fn: "revokeSelf",
          vault: delegators.length && rng.chance(0.85) ? rng.pick(delegators) : rng.pick(vaults),
        };
        break;
      }
    }
    if ("value" in call) {
      if (kind !== "reuse") {
        mine.push(call);
        this.own.set(actor, mine);
      }
      this.delegations.push({ ...call, vault: actor });
      const set = this.delegatorsOf.get(call.delegate) ?? new Set();
      set.add(actor);
      this.delegatorsOf.set(call.delegate, set);
    }
    this.count(call.fn + ("value" in call ? `(${call.value})` : ""));
    return call;
  }
}
