/**
 * Differential testing of the v1 API against the real DelegationRegistry (../shared/oracle): a
 * seeded random write generator (direct calls, and calls through a compiled forwarding contract
 * wallet, several per transaction, some of them undone by a reverted frame), a JSON-RPC client for
 * sending those writes and for the contract's own view functions, a literal model of the contract
 * (only to count what the stream covered and to check the listing order, which the contract's sets
 * do not keep), and the comparison of the service's answers with the contract's.
 *
 * Nothing here uses the service's code to decide what is right.
 */
import { type Abi, type Address, decodeEventLog, encodeFunctionData, getAddress, type Hex, toHex } from "viem";
import { compileSolidity } from "../../scripts/solidity";
import {
  type Answer,
  askService,
  canonical,
  chunks,
  ethCalls,
  type Mismatch,
  parseJsonExact,
  pool,
  type Rng,
  rpc,
  rpcBatch,
  screenCheckAnswers,
} from "./common";

export {
  type Answer,
  canonical,
  chooseSeed,
  chunks,
  ethCalls,
  type Mismatch,
  NonInteger,
  parseJsonExact,
  pool,
  Rng,
  resentAfterClose,
  retried,
  rpc,
  rpcBatch,
} from "./common";

export const MAX_UINT256 = (1n << 256n) - 1n;
export const ADDRESS_0: Address = "0x0000000000000000000000000000000000000000";
export const DEAD: Address = "0x000000000000000000000000000000000000dead";

const lower = (a: string) => a.toLowerCase() as Address;

// ---------------------------------------------------------------------------------------------
// Seeded randomness

// ---------------------------------------------------------------------------------------------
// The contract wallet

/**
 * A minimal contract wallet: anyone may make it call anything. `forwardManyUndoSome` makes some of
 * its calls inside a frame that reverts after the call succeeded (`undoMask`: the registry call is
 * in the trace, its log is discarded) or with too little gas to succeed (`starveMask`: a reverted
 * registry frame).
 */
export const WALLET_SOURCE = `// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.20;

contract ForwardingWallet {
    function forward(address target, bytes calldata data) external returns (bytes memory) {
        return _call(target, data);
    }

    function forwardMany(address target, bytes[] calldata data) external {
        for (uint256 i = 0; i < data.length; i++) _call(target, data[i]);
    }

    function forwardManyUndoSome(address target, bytes[] calldata data, uint256 undoMask, uint256 starveMask) external {
        for (uint256 i = 0; i < data.length; i++) {
            if ((undoMask >> i) & 1 == 1) {
                try this.callThenRevert(target, data[i]) {
                    revert("undo did not revert");
                } catch {}
            } else if ((starveMask >> i) & 1 == 1) {
                (bool ok, ) = target.call{gas: 2300}(data[i]);
                require(!ok, "starved call succeeded");
            } else {
                _call(target, data[i]);
            }
        }
    }

    function callThenRevert(address target, bytes calldata data) external {
        _call(target, data);
        revert("undone");
    }

    function _call(address target, bytes calldata data) private returns (bytes memory ret) {
        bool ok;
        (ok, ret) = target.call(data);
        if (!ok) assembly { revert(add(ret, 32), mload(ret)) }
    }
}
`;

export type CompiledWallet = { abi: Abi; bytecode: Hex };

/** Compiles the wallet with solc (standard JSON, in-process). */
export function compileWallet(): CompiledWallet {
  const contract = compileSolidity("ForwardingWallet.sol", WALLET_SOURCE).ForwardingWallet;
  if (!contract) throw new Error("solc produced no ForwardingWallet");
  return { abi: contract.abi, bytecode: contract.bytecode };
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC

export type Receipt = {
  transactionHash: Hex;
  status: Hex;
  blockNumber: Hex;
  contractAddress: Address | null;
  logs: { address: Address; topics: [Hex, ...Hex[]]; data: Hex; logIndex: Hex; blockNumber: Hex }[];
};

export type TxRequest = { from: Address; to?: Address; data: Hex; gas: bigint; nonce: number };

/** Declared gas per wave: under anvil's 30M block gas limit, which drops what does not fit. */
const WAVE_GAS = 25_000_000n;

/**
 * Sends the transactions in waves that fit one block: within a wave all are sent at once without
 * waiting (explicit nonces: anvil queues a later nonce until the earlier ones arrive), then every
 * one is awaited. Anvil drops, rather than defers, a transaction whose gas limit no longer fits the
 * block being built, hence the waves. Receipts in the order of `requests`.
 */
export async function sendAll(url: string, requests: TxRequest[], seed: number): Promise<Receipt[]> {
  const waves: TxRequest[][] = [];
  let gas = 0n;
  for (const r of requests) {
    if (waves.length === 0 || gas + r.gas > WAVE_GAS) {
      waves.push([]);
      gas = 0n;
    }
    waves[waves.length - 1]!.push(r);
    gas += r.gas;
  }
  const receipts: Receipt[] = [];
  for (const wave of waves) receipts.push(...(await sendWave(url, wave, seed)));
  return receipts;
}

async function sendWave(url: string, requests: TxRequest[], seed: number): Promise<Receipt[]> {
  const calls = requests.map((r) => ({
    method: "eth_sendTransaction",
    params: [
      {
        from: r.from,
        ...(r.to ? { to: r.to } : {}),
        data: r.data,
        gas: toHex(r.gas),
        nonce: toHex(r.nonce),
        maxFeePerGas: toHex(1000n * 10n ** 9n),
        maxPriorityFeePerGas: toHex(10n ** 9n),
      },
    ],
  }));
  const hashes = (await pool(chunks(calls, 100), 4, (batch) => rpcBatch(url, batch))).flat() as Hex[];
  const receipts = new Map<Hex, Receipt>();
  const deadline = Date.now() + 60_000;
  while (receipts.size < hashes.length) {
    if (Date.now() > deadline)
      throw new Error(
        `[SEED=${seed}] ${hashes.length - receipts.size} of ${hashes.length} transactions not mined after 60 s`,
      );
    await new Promise((ok) => setTimeout(ok, 250));
    const missing = hashes.filter((h) => !receipts.has(h));
    const got = (
      await pool(chunks(missing, 200), 4, (batch) =>
        rpcBatch(
          url,
          batch.map((h) => ({ method: "eth_getTransactionReceipt", params: [h] })),
        ),
      )
    ).flat() as (Receipt | null)[];
    for (const [i, r] of got.entries()) if (r) receipts.set(missing[i]!, r);
  }
  return hashes.map((h) => receipts.get(h)!);
}

// ---------------------------------------------------------------------------------------------
// Registry calls and transactions

export type RegistryCall =
  | { fn: "delegateForAll"; delegate: Address; value: boolean }
  | { fn: "delegateForContract"; delegate: Address; contract: Address; value: boolean }
  | { fn: "delegateForToken"; delegate: Address; contract: Address; tokenId: bigint; value: boolean }
  | { fn: "revokeAllDelegates" }
  | { fn: "revokeDelegate"; delegate: Address }
  | { fn: "revokeSelf"; vault: Address }
  /** A view called with CALL (not STATICCALL): it emits nothing. Used only where asked for. */
  | { fn: "checkDelegateForAll"; delegate: Address; vault: Address };

export type DelegateCall = Extract<RegistryCall, { value: boolean }>;

export function encodeCall(abi: Abi, c: RegistryCall): Hex {
  const args: readonly unknown[] = (() => {
    switch (c.fn) {
      case "delegateForAll":
        return [c.delegate, c.value];
      case "delegateForContract":
        return [c.delegate, c.contract, c.value];
      case "delegateForToken":
        return [c.delegate, c.contract, c.tokenId, c.value];
      case "revokeAllDelegates":
        return [];
      case "revokeDelegate":
        return [c.delegate];
      case "revokeSelf":
        return [c.vault];
      case "checkDelegateForAll":
        return [c.delegate, c.vault];
    }
  })();
  return encodeFunctionData({ abi, functionName: c.fn, args } as never);
}

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

const callGas = (c: RegistryCall) => (c.fn.startsWith("delegateFor") ? 260_000n : 70_000n);

export function txRequest(tx: Tx, registry: Address, registryAbi: Abi, wallet: CompiledWallet): TxRequest {
  const data = tx.calls.map((i) => encodeCall(registryAbi, i.call));
  const gas = 80_000n + tx.calls.reduce((sum, i) => sum + callGas(i.call) + 40_000n, 0n);
  const base = { from: tx.from, nonce: tx.nonce, gas };
  const w = (functionName: string, args: readonly unknown[]) =>
    encodeFunctionData({ abi: wallet.abi, functionName, args } as never);
  switch (tx.route) {
    case "direct":
      if (tx.calls.length !== 1) throw new Error("a direct transaction makes one call");
      return { ...base, to: registry, data: data[0]! };
    case "forward":
      return { ...base, to: tx.via[0]!, data: w("forward", [registry, data[0]!]) };
    case "forwardMany":
      return { ...base, to: tx.via[0]!, data: w("forwardMany", [registry, data]) };
    case "forwardUndo": {
      const mask = (fate: Fate) => tx.calls.reduce((m, i, k) => (i.fate === fate ? m | (1n << BigInt(k)) : m), 0n);
      return {
        ...base,
        to: tx.via[0]!,
        data: w("forwardManyUndoSome", [registry, data, mask("undone"), mask("starved")]),
      };
    }
    case "nested":
      return { ...base, to: tx.via[0]!, data: w("forward", [tx.via[1]!, w("forwardMany", [registry, data])]) };
  }
}

// ---------------------------------------------------------------------------------------------
// Pools and the write generator

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
  ADDRESS_0, // a CONTRACT or TOKEN delegation on contract 0x0 is still not ALL
];

export const TOKEN_IDS: readonly (readonly [number, bigint])[] = [
  [4, 0n],
  [4, 1n],
  [3, 2n],
  [2, 42n],
  [2, MAX_UINT256],
  [1, 1n << 255n],
];

export function makePools(accounts: Address[], wallets: Address[]): Pools {
  const eoas = accounts.slice(0, 12).map(lower);
  return {
    eoas,
    wallets: wallets.map(lower),
    delegates: [...eoas.slice(0, 9), ...wallets.map(lower), ...accounts.slice(12, 15).map(lower), DEAD, ADDRESS_0],
    contracts: [...CONTRACTS],
    tokenIds: TOKEN_IDS,
  };
}

/** A delegateFor* write generated, with its vault: what checks are drawn from. */
export type Delegation = DelegateCall & { vault: Address };

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

// ---------------------------------------------------------------------------------------------
// What happened on chain

export type Position = { block: bigint; logIndex: number };
export const before = (a: Position, b: Position) =>
  a.block < b.block || (a.block === b.block && a.logIndex < b.logIndex);

/** A registry write that took effect, where its log is. */
export type Effect = Position & { actor: Address; call: RegistryCall; tx: Tx; hash: Hex };

/**
 * Pairs each transaction's registry logs with the calls that should have made them, checking each
 * log is the event its call emits. Returns the effects in chain order and any disagreement.
 */
export function effectsOf(
  abi: Abi,
  registry: Address,
  txs: Tx[],
  receipts: Receipt[],
): { effects: Effect[]; problems: string[] } {
  const effects: Effect[] = [];
  const problems: string[] = [];
  txs.forEach((tx, i) => {
    const r = receipts[i]!;
    const logs = r.logs.filter((l) => lower(l.address) === lower(registry));
    const calls = doneCalls(tx);
    if (logs.length !== calls.length) {
      problems.push(
        `${r.transactionHash}: ${logs.length} registry logs for ${calls.length} calls that take effect (${tx.route})`,
      );
      return;
    }
    logs.forEach((log, k) => {
      const call = calls[k]!;
      const { eventName, args } = decodeEventLog({ abi, data: log.data, topics: log.topics }) as unknown as {
        eventName: string;
        args: Record<string, unknown>;
      };
      const a = (name: string) => (typeof args[name] === "string" ? lower(args[name] as string) : args[name]);
      const actor = tx.actor;
      const want: [string, Record<string, unknown>] = (() => {
        switch (call.fn) {
          case "delegateForAll":
            return ["DelegateForAll", { vault: actor, delegate: call.delegate, value: call.value }];
          case "delegateForContract":
            return [
              "DelegateForContract",
              { vault: actor, delegate: call.delegate, contract_: call.contract, value: call.value },
            ];
          case "delegateForToken":
            return [
              "DelegateForToken",
              {
                vault: actor,
                delegate: call.delegate,
                contract_: call.contract,
                tokenId: call.tokenId,
                value: call.value,
              },
            ];
          case "revokeAllDelegates":
            return ["RevokeAllDelegates", { vault: actor }];
          case "revokeDelegate":
            // The contract's quirk: the revoked delegate is not in the event.
            return ["RevokeDelegate", { vault: actor, delegate: actor }];
          case "revokeSelf":
            return ["RevokeDelegate", { vault: call.vault, delegate: actor }];
          case "checkDelegateForAll":
            throw new Error("a view emits nothing");
        }
      })();
      const same = (x: unknown, y: unknown) => (typeof y === "string" ? lower(y) === x : x === y);
      const ok = eventName === want[0] && Object.entries(want[1]).every(([k2, v]) => same(a(k2), v));
      if (!ok)
        problems.push(
          `${r.transactionHash} log ${Number(log.logIndex)}: ${eventName} ${JSON.stringify(args, big)} for ${JSON.stringify(call, big)} by ${actor}`,
        );
      effects.push({
        actor,
        call,
        tx,
        hash: r.transactionHash,
        block: BigInt(log.blockNumber),
        logIndex: Number(log.logIndex),
      });
    });
  });
  effects.sort((x, y) => (before(x, y) ? -1 : before(y, x) ? 1 : 0));
  return { effects, problems };
}

const big = (_: string, v: unknown) => (typeof v === "bigint" ? v.toString() : v);

// ---------------------------------------------------------------------------------------------
// A literal model of the contract

export type V1Type = "ALL" | "CONTRACT" | "TOKEN";
export type Key = { type: V1Type; vault: Address; delegate: Address; contract: Address; tokenId: bigint };

export const keyString = (k: Key) =>
  `${k.type}|${lower(k.vault)}|${lower(k.delegate)}|${lower(k.contract)}|${k.tokenId}`;

export function keyOf(vault: Address, c: DelegateCall): Key {
  const v = lower(vault);
  const d = lower(c.delegate);
  switch (c.fn) {
    case "delegateForAll":
      return { type: "ALL", vault: v, delegate: d, contract: ADDRESS_0, tokenId: 0n };
    case "delegateForContract":
      return { type: "CONTRACT", vault: v, delegate: d, contract: lower(c.contract), tokenId: 0n };
    case "delegateForToken":
      return { type: "TOKEN", vault: v, delegate: d, contract: lower(c.contract), tokenId: c.tokenId };
  }
}

/**
 * The contract as it is written: version counters, and per vault version a set of delegation
 * hashes, each hash naming a key at the vault and pair versions current when it was added. Used to
 * count what the stream covered and for the creation position of each delegation in force.
 */
export class Model {
  readonly stats: Record<string, number> = {};
  private readonly vaultVersion = new Map<Address, number>();
  private readonly pairVersion = new Map<string, number>();
  private readonly lastPairBump = new Map<string, string>();
  /** `${key}@${vaultVersion}/${pairVersion}` → where it was added. */
  private readonly set = new Map<string, Position>();
  private readonly lastAdd = new Map<string, { vault: number; pair: number }>();
  private readonly keys = new Map<string, Key>();

  constructor(private readonly wallets: ReadonlySet<Address>) {}

  private count(name: string) {
    this.stats[name] = (this.stats[name] ?? 0) + 1;
  }

  private versions(vault: Address, delegate: Address) {
    return { vault: this.vaultVersion.get(vault) ?? 0, pair: this.pairVersion.get(`${vault}|${delegate}`) ?? 0 };
  }

  private bump(vault: Address, delegate: Address, by: string) {
    const pair = `${lower(vault)}|${lower(delegate)}`;
    this.pairVersion.set(pair, (this.pairVersion.get(pair) ?? 0) + 1);
    this.lastPairBump.set(pair, by);
  }

  apply(e: Effect) {
    const c = e.call;
    const byWallet = this.wallets.has(lower(e.actor));
    const several = doneCalls(e.tx).length > 1;
    switch (c.fn) {
      case "revokeAllDelegates":
        this.vaultVersion.set(lower(e.actor), (this.vaultVersion.get(lower(e.actor)) ?? 0) + 1);
        this.count(byWallet ? "revokeAllDelegates by a contract wallet" : "revokeAllDelegates");
        return;
      case "revokeDelegate":
        this.bump(e.actor, c.delegate, "revokeDelegate");
        this.count(byWallet ? "revokeDelegate by a contract wallet" : "revokeDelegate");
        if (byWallet && several)
          this.count("revokeDelegate by a contract wallet among other writes of one transaction");
        if (byWallet && e.tx.route === "nested") this.count("revokeDelegate through two wallets");
        if (byWallet && e.tx.calls.some((i) => i.fate !== "done"))
          this.count("revokeDelegate beside reverted registry frames");
        if (lower(c.delegate) === lower(e.actor)) this.count("revokeDelegate of oneself");
        return;
      case "revokeSelf":
        this.bump(c.vault, e.actor, "revokeSelf");
        this.count(byWallet ? "revokeSelf by a contract wallet" : "revokeSelf");
        return;
      case "checkDelegateForAll":
        return;
    }
    const key = keyOf(e.actor, c);
    const ks = keyString(key);
    this.keys.set(ks, key);
    const now = this.versions(key.vault, key.delegate);
    const entry = `${ks}@${now.vault}/${now.pair}`;
    const last = this.lastAdd.get(ks);
    if (key.vault === key.delegate) this.count("self-delegations");
    if (byWallet) this.count(`${c.fn} by a contract wallet`);
    if (c.value) {
      if (this.set.has(entry)) return this.count("value=true on a delegation in force (keeps its place)");
      if (!last) this.count("first delegations");
      else if (last.vault !== now.vault) this.count("re-delegations after revokeAllDelegates");
      else if (last.pair !== now.pair)
        this.count(`re-delegations after ${this.lastPairBump.get(`${key.vault}|${key.delegate}`)}`);
      else this.count("re-delegations after value=false");
      this.set.set(entry, { block: e.block, logIndex: e.logIndex });
      this.lastAdd.set(ks, now);
    } else {
      if (this.set.delete(entry)) return this.count("value=false on a delegation in force");
      if (last && this.set.has(`${ks}@${last.vault}/${last.pair}`)) this.count("value=false on a voided delegation");
      else this.count("value=false on nothing");
    }
  }

  /** Where the delegation now in force for the key was created, if one is. */
  position(key: Key): Position | undefined {
    const now = this.versions(lower(key.vault), lower(key.delegate));
    return this.set.get(`${keyString(key)}@${now.vault}/${now.pair}`);
  }

  /** Every delegation in force. */
  inForce(): { key: Key; position: Position }[] {
    const out: { key: Key; position: Position }[] = [];
    for (const key of this.keys.values()) {
      const position = this.position(key);
      if (position) out.push({ key, position });
    }
    return out;
  }
}

// ---------------------------------------------------------------------------------------------
// The comparison

export type Oracle = {
  rpcUrl: string;
  serviceUrl: string;
  registry: Address;
  abi: Abi;
  chainId: number;
  /** Sent with every request to the service (an X-API-KEY: tens of thousands of requests). */
  headers?: Record<string, string>;
};

export type CheckKind = "all" | "contract" | "token";
export type CheckSpec = { kind: CheckKind; delegate: Address; vault: Address; contract: Address; tokenId: bigint };

/**
 * About two thirds drawn from a delegation: some write named it, or (a share of those, when the
 * model's delegations in force are given) it is in force now, so true answers stay common however
 * much the stream revoked. Perturbed now and then; the rest from the pools.
 */
export function randomCheck(
  rng: Rng,
  pools: Pools,
  delegations: readonly Delegation[],
  inForce: readonly Key[] = [],
): CheckSpec {
  const vaults = [...pools.eoas, ...pools.wallets];
  if (delegations.length > 0 && rng.chance(0.68)) {
    const d = inForce.length > 0 && rng.chance(0.4) ? rng.pick(inForce) : namedKey(rng.pick(delegations));
    const fitting: Record<V1Type, readonly CheckKind[]> = {
      ALL: ["all", "contract", "token"],
      CONTRACT: ["contract", "token"],
      TOKEN: ["token"],
    };
    const spec: CheckSpec = {
      kind: rng.chance(0.9) ? rng.pick(fitting[d.type]) : rng.pick(["all", "contract", "token"] as const),
      delegate: d.delegate,
      vault: d.vault,
      contract: d.type === "ALL" ? rng.pick(pools.contracts) : d.contract,
      tokenId: d.type === "TOKEN" ? d.tokenId : rng.weighted(pools.tokenIds),
    };
    if (rng.chance(0.08)) spec.tokenId = rng.weighted(pools.tokenIds);
    if (rng.chance(0.08)) spec.contract = rng.pick(pools.contracts);
    if (rng.chance(0.04)) [spec.delegate, spec.vault] = [spec.vault, spec.delegate];
    if (rng.chance(0.04)) spec.delegate = rng.pick(pools.delegates);
    return spec;
  }
  return {
    kind: rng.pick(["all", "contract", "token"] as const),
    delegate: rng.pick(pools.delegates),
    vault: rng.chance(0.9) ? rng.pick(vaults) : rng.pick(pools.delegates),
    contract: rng.pick(pools.contracts),
    tokenId: rng.weighted(pools.tokenIds),
  };
}

const namedKey = (d: Delegation): Key => keyOf(d.vault, d);

/** An address spelled lowercase, EIP-55 or with uppercase digits: all three are accepted. */
export function spellAddress(rng: Rng, a: Address): string {
  const l = lower(a);
  return rng.weighted([
    [2, l],
    [2, getAddress(l)],
    [1, `0x${l.slice(2).toUpperCase()}`],
  ]);
}

export function checkUrl(rng: Rng, chainId: number, spec: CheckSpec): string {
  const params: [string, string][] = [
    ["chainId", String(chainId)],
    ["delegate", spellAddress(rng, spec.delegate)],
    ["vault", spellAddress(rng, spec.vault)],
  ];
  if (spec.kind !== "all") params.push(["contract", spellAddress(rng, spec.contract)]);
  if (spec.kind === "token")
    params.push(["tokenId", rng.chance(0.6) ? spec.tokenId.toString() : `0x${spec.tokenId.toString(16)}`]);
  if (rng.chance(0.03)) params.push(["utm_source", "v1-differential"]);
  rng.shuffle(params);
  return `/registry/v1/check/${spec.kind}?${params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&")}`;
}

export function checkCall(spec: CheckSpec): { functionName: string; args: readonly unknown[] } {
  switch (spec.kind) {
    case "all":
      return { functionName: "checkDelegateForAll", args: [spec.delegate, spec.vault] };
    case "contract":
      return { functionName: "checkDelegateForContract", args: [spec.delegate, spec.vault, spec.contract] };
    case "token":
      return { functionName: "checkDelegateForToken", args: [spec.delegate, spec.vault, spec.contract, spec.tokenId] };
  }
}

const get = (o: Oracle, url: string) => askService(o.serviceUrl, url, o.headers);

/** The block the service has indexed up to, from a v1 answer for the chain. */
export async function indexedBlock(o: Oracle): Promise<bigint | undefined> {
  const a = await get(o, `/registry/v1/check/all?chainId=${o.chainId}&delegate=${DEAD}&vault=${DEAD}`);
  return a.status === 200 ? a.block : undefined;
}

export type CheckResult = { compared: number; positive: number; mismatches: Mismatch[] };

/**
 * Asks the service each check, then the contract the same at the block the answer reports (its
 * X-Indexed-Block), and compares. `minBlock`: answers must reflect at least this block.
 */
export async function compareChecks(
  o: Oracle,
  specs: CheckSpec[],
  urls: string[],
  minBlock: bigint,
  concurrency = 32,
): Promise<CheckResult> {
  const answers = await pool(urls, concurrency, (url) => get(o, url));
  const { toCall, mismatches } = screenCheckAnswers(answers, minBlock);
  const expected = await ethCalls(
    o,
    toCall.map(({ i, block }) => ({ ...checkCall(specs[i]!), block })),
  );
  let positive = 0;
  toCall.forEach(({ i, block }, j) => {
    const want = expected[j] as boolean;
    const a = answers[i]!;
    if (want) positive++;
    const got = a.body === "true" ? true : a.body === "false" ? false : `body ${JSON.stringify(a.body.slice(0, 200))}`;
    if (got !== want) {
      const s = specs[i]!;
      mismatches.push({
        what: `check/${s.kind} at block ${block} (delegate ${s.delegate}, vault ${s.vault}${s.kind !== "all" ? `, contract ${s.contract}` : ""}${s.kind === "token" ? `, tokenId ${s.tokenId}` : ""})`,
        query: a.url,
        expected: String(want),
        got: String(got),
      });
    }
  });
  await explain(o, specs, answers, mismatches);
  return { compared: toCall.length, positive, mismatches };
}

/**
 * For the first mismatching checks: the blocks near the reported one at which the contract gives
 * the service's answer, to tell an answer that reflects another block from a wrong one.
 */
async function explain(o: Oracle, specs: CheckSpec[], answers: Answer[], mismatches: Mismatch[]) {
  const head = BigInt((await rpc(o.rpcUrl, "eth_blockNumber")) as string);
  const byUrl = new Map(answers.map((a, i) => [a.url, i]));
  for (const m of mismatches.slice(0, 12)) {
    const i = byUrl.get(m.query);
    const a = i === undefined ? undefined : answers[i];
    if (!a || a.block === undefined || (a.body !== "true" && a.body !== "false")) continue;
    const blocks: bigint[] = [];
    for (let b = a.block - 6n; b <= a.block + 6n; b++) if (b >= 0n && b <= head) blocks.push(b);
    const results = (await ethCalls(
      o,
      blocks.map((block) => ({ ...checkCall(specs[i!]!), block })),
    )) as boolean[];
    const agree = blocks.filter((_, k) => String(results[k]) === a.body);
    m.got += ` (the contract answers ${a.body} at blocks ${agree.length ? agree.join(", ") : "none"} of ${blocks[0]}..${blocks[blocks.length - 1]})`;
  }
}

type ApiRecord = Record<string, unknown>;
type DelegationInfo = { type_: number; vault: Address; delegate: Address; contract_: Address; tokenId: bigint };

const TYPE_OF: Record<number, V1Type> = { 1: "ALL", 2: "CONTRACT", 3: "TOKEN" };

/** The API record (api-contract.md) of one delegation. */
export function record(
  type: V1Type,
  vault: Address,
  delegate: Address,
  contract: Address | null,
  tokenId: bigint | null,
): ApiRecord {
  return {
    type,
    vault: getAddress(vault),
    delegate: getAddress(delegate),
    contract: type === "ALL" ? null : getAddress(contract!),
    tokenId: type === "TOKEN" ? tokenId : null,
  };
}

/** The key an API record names, if it is well formed. */
function recordKey(r: ApiRecord): Key | undefined {
  try {
    const type = r.type as V1Type;
    if (!["ALL", "CONTRACT", "TOKEN"].includes(type)) return undefined;
    return {
      type,
      vault: lower(String(r.vault)),
      delegate: lower(String(r.delegate)),
      contract: type === "ALL" ? ADDRESS_0 : lower(String(r.contract)),
      tokenId: type === "TOKEN" ? (r.tokenId as bigint) : 0n,
    };
  } catch {
    return undefined;
  }
}

export type ListingResult = { compared: number; records: number; mismatches: Mismatch[]; modelMismatches: Mismatch[] };

/**
 * Each wallet's listing, as a set, against the union of getDelegationsByDelegate(wallet) and
 * getDelegatesForAll / getContractLevelDelegations / getTokenLevelDelegations(wallet) at the
 * listing's X-Indexed-Block. With a model (only when no write is in flight): the listing's order
 * against the creation position of each delegation, and the model against the contract (a check of
 * this harness, reported apart).
 */
export async function compareListings(
  o: Oracle,
  rng: Rng,
  wallets: readonly Address[],
  minBlock: bigint,
  model?: Model,
): Promise<ListingResult> {
  const mismatches: Mismatch[] = [];
  const modelMismatches: Mismatch[] = [];
  let records = 0;
  let compared = 0;
  const inForce = model?.inForce();
  await pool(wallets, 8, async (wallet) => {
    const url = `/registry/v1/${spellAddress(rng, wallet)}?chainId=${o.chainId}`;
    const a = await get(o, url);
    const bad = (what: string, expected: string, got: string) => mismatches.push({ what, query: url, expected, got });
    if (a.status !== 200 || !a.contentType.startsWith("application/json") || a.block === undefined) {
      return bad(
        "listing answer",
        "200 application/json with X-Indexed-Block",
        `${a.status} ${a.contentType} ${a.body.slice(0, 300)}`,
      );
    }
    if (a.block < minBlock) return bad("listing answer", `X-Indexed-Block >= ${minBlock}`, String(a.block));
    let list: ApiRecord[];
    try {
      const parsed = parseJsonExact(a.body);
      if (!Array.isArray(parsed)) throw new Error("not an array");
      list = parsed as ApiRecord[];
    } catch (error) {
      return bad("listing body", "a JSON array", `${(error as Error).message}: ${a.body.slice(0, 300)}`);
    }
    compared++;
    records += list.length;
    const w = lower(wallet);
    const where = `listing of ${getAddress(w)} at block ${a.block}`;
    const [byDelegate, forAll, contractLevel, tokenLevel] = (await ethCalls(o, [
      { functionName: "getDelegationsByDelegate", args: [w], block: a.block },
      { functionName: "getDelegatesForAll", args: [w], block: a.block },
      { functionName: "getContractLevelDelegations", args: [w], block: a.block },
      { functionName: "getTokenLevelDelegations", args: [w], block: a.block },
    ])) as [
      DelegationInfo[],
      Address[],
      { contract_: Address; delegate: Address }[],
      { contract_: Address; tokenId: bigint; delegate: Address }[],
    ];
    const want = new Map<string, ApiRecord>();
    const add = (r: ApiRecord) => want.set(canonical(r), r);
    for (const d of byDelegate) {
      const type = TYPE_OF[d.type_];
      if (!type) return bad(`${where}: oracle`, "type_ 1, 2 or 3", String(d.type_));
      if (lower(d.delegate) !== w) bad(`${where}: oracle getDelegationsByDelegate`, `delegate ${w}`, lower(d.delegate));
      add(record(type, d.vault, d.delegate, d.contract_, d.tokenId));
    }
    for (const d of forAll) add(record("ALL", w, d, null, null));
    for (const d of contractLevel) add(record("CONTRACT", w, d.delegate, d.contract_, null));
    for (const d of tokenLevel) add(record("TOKEN", w, d.delegate, d.contract_, d.tokenId));

    const got = new Map<string, ApiRecord>();
    for (const r of list) {
      const c = canonical(r);
      if (got.has(c)) bad(`${where}: a record twice`, "each delegation once", c);
      got.set(c, r);
    }
    const missing = [...want.keys()].filter((k) => !got.has(k));
    const extra = [...got.keys()].filter((k) => !want.has(k));
    if (missing.length || extra.length) {
      bad(
        `${where}: records as a set (${want.size} expected, ${got.size} got; ${missing.length} missing, ${extra.length} extra)`,
        `missing: ${missing.slice(0, 3).join(" ")}`,
        `extra: ${extra.slice(0, 3).join(" ")}`,
      );
    }
    for (const r of list) {
      if (lower(String(r.vault)) !== w && lower(String(r.delegate)) !== w)
        bad(`${where}: record of another wallet`, "vault or delegate == wallet", canonical(r));
    }
    if (!model || !inForce) return;

    // Order: by the position at which the delegation now in force was created.
    let last: Position | undefined;
    for (const [i, r] of list.entries()) {
      const key = recordKey(r);
      const pos = key && model.position(key);
      if (!pos) {
        bad(`${where}: record #${i} is not in force by the model`, "a delegation in force", canonical(r));
        continue;
      }
      if (last && !before(last, pos)) {
        bad(
          `${where}: order of record #${i}`,
          `after block ${last.block} log ${last.logIndex}`,
          `block ${pos.block} log ${pos.logIndex}: ${canonical(r)}`,
        );
      }
      last = pos;
    }
    // The harness's model against the contract.
    const modelSet = new Set(
      inForce
        .filter(({ key }) => key.vault === w || key.delegate === w)
        .map(({ key }) => canonical(record(key.type, key.vault, key.delegate, key.contract, key.tokenId))),
    );
    const modelMissing = [...want.keys()].filter((k) => !modelSet.has(k));
    const modelExtra = [...modelSet].filter((k) => !want.has(k));
    if (modelMissing.length || modelExtra.length) {
      modelMismatches.push({
        what: `model of ${w}`,
        query: url,
        expected: modelMissing.slice(0, 3).join(" "),
        got: modelExtra.slice(0, 3).join(" "),
      });
    }
  });
  return { compared, records, mismatches, modelMismatches };
}

export function report(seed: number, label: string, mismatches: Mismatch[]): string {
  const first = mismatches
    .slice(0, 10)
    .map(
      (m, i) =>
        `  ${i + 1}. ${m.what}\n     query:    ${m.query}\n     expected: ${m.expected}\n     got:      ${m.got}`,
    )
    .join("\n");
  return `[SEED=${seed}] ${label}: ${mismatches.length} mismatches with the contract (rerun with SEED=${seed} npx vitest run test/v1.differential.test.ts):\n${first}`;
}
