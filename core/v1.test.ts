import { type Address, encodeFunctionData, getAddress, type Hex, maxUint256, zeroAddress } from "viem";
import { describe, expect, it } from "vitest";
import { registryV1Abi } from "./abi/registryV1";
import { V1_ADDRESS } from "./chains";
import {
  type CallFrame,
  registryCalls,
  V1_EVENT_NAME,
  type V1Key,
  type V1State,
  type V1Type,
  type V1Versions,
  v1CheckKeys,
  v1InForce,
  v1KeyOfString,
  v1KeyString,
  v1NextState,
  v1PairsRevokedAs,
  v1RevokedPair,
  v1Vaults,
} from "./v1";

const vault: Address = "0x1111111111111111111111111111111111111111";
const delegate: Address = "0x2222222222222222222222222222222222222222";
const token: Address = "0x3333333333333333333333333333333333333333";
const wallet: Address = "0x4444444444444444444444444444444444444444";
const other: Address = "0x5555555555555555555555555555555555555555";
const registry = V1_ADDRESS.toLowerCase() as Address;

const at = (block: bigint, logIndex = 0) => ({ block, logIndex });
const versions = (vaultVersion: number, pair: number): V1Versions => ({ vault: vaultVersion, pair });
const state = (s: Partial<V1State> = {}): V1State => ({
  enabled: true,
  vaultVersion: 0,
  pairVersion: 0,
  createdBlock: 10n,
  createdLogIndex: 3,
  ...s,
});

describe("V1_EVENT_NAME", () => {
  it("names each delegation type's event of the registry's ABI, every one of them", () => {
    const events = registryV1Abi.filter((item) => item.type === "event").map((item) => item.name);
    for (const [type, name] of Object.entries(V1_EVENT_NAME)) expect(name.toUpperCase().endsWith(type)).toBe(true);
    expect(Object.values(V1_EVENT_NAME).sort()).toEqual(events.filter((name) => name.startsWith("DelegateFor")).sort());
  });
});

describe("v1InForce", () => {
  it("is false for a key never written", () => {
    expect(v1InForce(undefined, versions(0, 0))).toBe(false);
    expect(v1InForce(undefined, versions(4, 2))).toBe(false);
  });

  it("is true when enabled at the current vault and pair versions", () => {
    expect(v1InForce(state(), versions(0, 0))).toBe(true);
    expect(v1InForce(state({ vaultVersion: 3, pairVersion: 7 }), versions(3, 7))).toBe(true);
  });

  it("is false when disabled, even at the current versions", () => {
    expect(v1InForce(state({ enabled: false }), versions(0, 0))).toBe(false);
  });

  it("is false once revokeAllDelegates bumped the vault version", () => {
    expect(v1InForce(state(), versions(1, 0))).toBe(false);
  });

  it("is false once revokeDelegate/revokeSelf bumped the pair version", () => {
    expect(v1InForce(state(), versions(0, 1))).toBe(false);
    expect(v1InForce(state({ vaultVersion: 2, pairVersion: 1 }), versions(2, 2))).toBe(false);
  });
});

describe("v1NextState", () => {
  it("value=true on a new key creates it at the current versions and position", () => {
    expect(v1NextState(undefined, true, versions(2, 5), at(100n, 7))).toEqual({
      enabled: true,
      vaultVersion: 2,
      pairVersion: 5,
      createdBlock: 100n,
      createdLogIndex: 7,
    });
  });

  it("value=false on a key never written leaves nothing", () => {
    expect(v1NextState(undefined, false, versions(0, 0), at(100n))).toBeUndefined();
    expect(v1NextState(undefined, false, versions(3, 1), at(100n))).toBeUndefined();
  });

  it("re-enabling a delegation in force keeps its creation position (the set keeps its entry)", () => {
    const first = v1NextState(undefined, true, versions(0, 0), at(10n, 3))!;
    const again = v1NextState(first, true, versions(0, 0), at(20n, 1));
    expect(again).toEqual(first);
    expect(again!.createdBlock).toBe(10n);
    expect(again!.createdLogIndex).toBe(3);
    // Same block, later log: still the first position.
    expect(v1NextState(first, true, versions(0, 0), at(10n, 9))).toEqual(first);
  });

  it("value=false on a delegation in force disables it; enabling it again creates it anew", () => {
    const first = v1NextState(undefined, true, versions(1, 1), at(10n, 3))!;
    const off = v1NextState(first, false, versions(1, 1), at(11n, 0))!;
    expect(off.enabled).toBe(false);
    expect(v1InForce(off, versions(1, 1))).toBe(false);
    const off2 = v1NextState(off, false, versions(1, 1), at(12n, 0));
    expect(v1InForce(off2, versions(1, 1))).toBe(false);
    const back = v1NextState(off2, true, versions(1, 1), at(13n, 4))!;
    expect(back).toEqual({ enabled: true, vaultVersion: 1, pairVersion: 1, createdBlock: 13n, createdLogIndex: 4 });
  });

  it("value=false on a delegation voided by revokeAllDelegates does nothing", () => {
    const first = v1NextState(undefined, true, versions(0, 0), at(10n, 3))!;
    const after = v1NextState(first, false, versions(1, 0), at(11n, 0));
    // The contract removes only the current-version hash: the old entry is untouched.
    expect(after).toEqual(first);
    expect(v1InForce(after, versions(1, 0))).toBe(false);
  });

  it("value=false on a delegation voided by a pair revocation does nothing", () => {
    const first = v1NextState(undefined, true, versions(0, 0), at(10n, 3))!;
    const after = v1NextState(first, false, versions(0, 1), at(11n, 0));
    expect(after).toEqual(first);
    expect(v1InForce(after, versions(0, 1))).toBe(false);
  });

  it("re-delegation after revokeAllDelegates is a new delegation at a new position", () => {
    const first = v1NextState(undefined, true, versions(0, 0), at(10n, 3))!;
    const again = v1NextState(first, true, versions(1, 0), at(20n, 2))!;
    expect(again).toEqual({ enabled: true, vaultVersion: 1, pairVersion: 0, createdBlock: 20n, createdLogIndex: 2 });
    expect(v1InForce(again, versions(1, 0))).toBe(true);
  });

  it("re-delegation after revokeDelegate/revokeSelf is a new delegation at a new position", () => {
    const first = v1NextState(undefined, true, versions(0, 0), at(10n, 3))!;
    const again = v1NextState(first, true, versions(0, 2), at(20n, 2))!;
    expect(again).toEqual({ enabled: true, vaultVersion: 0, pairVersion: 2, createdBlock: 20n, createdLogIndex: 2 });
  });

  it("re-delegation after a revocation, even after a voided value=false, gets the new position", () => {
    let s = v1NextState(undefined, true, versions(0, 0), at(1n))!;
    s = v1NextState(s, false, versions(1, 0), at(2n))!; // voided: nothing
    s = v1NextState(s, true, versions(1, 0), at(3n, 5))!;
    expect(s).toEqual({ enabled: true, vaultVersion: 1, pairVersion: 0, createdBlock: 3n, createdLogIndex: 5 });
  });

  /**
   * A literal model of the contract for one key: a set of hashes keyed by (vault version, pair
   * version), the hash of the current versions added by value=true and removed by value=false.
   * Random histories of writes and revocations: v1NextState/v1InForce must agree with it, creation
   * position included.
   */
  it("agrees with a literal model of the contract's versioned sets over random histories", () => {
    let seed = 0x2545f491;
    const rand = () => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) / 0x1_0000_0000;
    };
    for (let run = 0; run < 300; run++) {
      const current = { vault: 0, pair: 0 };
      const set = new Map<string, { block: bigint; logIndex: number }>();
      let s: V1State | undefined;
      for (let step = 0; step < 40; step++) {
        const pos = at(BigInt(step + 1), Math.floor(rand() * 4));
        const r = rand();
        if (r < 0.1) current.vault++;
        else if (r < 0.2) current.pair++;
        else {
          const value = rand() < 0.6;
          const hash = `${current.vault}/${current.pair}`;
          if (value && !set.has(hash)) set.set(hash, pos);
          if (!value) set.delete(hash);
          s = v1NextState(s, value, { ...current }, pos);
        }
        const live = set.get(`${current.vault}/${current.pair}`);
        const where = `run ${run} step ${step}`;
        expect(v1InForce(s, { ...current }), where).toBe(live !== undefined);
        if (live) expect({ block: s!.createdBlock, logIndex: s!.createdLogIndex }, where).toEqual(live);
      }
    }
  });
});

describe("v1CheckKeys", () => {
  const base = { vault, delegate };
  const all = { ...base, type: "ALL", contract: zeroAddress, tokenId: 0n };

  it("check/all looks at the ALL delegation only", () => {
    expect(v1CheckKeys({ kind: "all", ...base })).toEqual([all]);
  });

  it("check/contract falls back to ALL", () => {
    expect(v1CheckKeys({ kind: "contract", ...base, contract: token })).toEqual([
      all,
      { ...base, type: "CONTRACT", contract: token, tokenId: 0n },
    ]);
  });

  it("check/token falls back to the contract, then to ALL", () => {
    expect(v1CheckKeys({ kind: "token", ...base, contract: token, tokenId: maxUint256 })).toEqual([
      all,
      { ...base, type: "CONTRACT", contract: token, tokenId: 0n },
      { ...base, type: "TOKEN", contract: token, tokenId: maxUint256 },
    ]);
  });

  it("keeps the keys of contract 0x0 and token 0 apart by type", () => {
    const keys = v1CheckKeys({ kind: "token", ...base, contract: zeroAddress, tokenId: 0n });
    expect(keys.map((k) => k.type)).toEqual(["ALL", "CONTRACT", "TOKEN"]);
    expect(new Set(keys.map((k) => `${k.type}|${k.contract}|${k.tokenId}`)).size).toBe(3);
    // The vault and delegate are never swapped.
    for (const k of keys) expect([k.vault, k.delegate]).toEqual([vault, delegate]);
  });
});

describe("v1Vaults", () => {
  const key = (type: V1Type, from: Address, contract: Address = zeroAddress, tokenId = 0n): V1Key => ({
    type,
    vault: from,
    delegate,
    contract,
    tokenId,
  });

  it("lists each vault whose check holds once, by address, through the ALL and contract fallbacks", () => {
    const inForce = [
      key("TOKEN", other, token, 7n),
      key("CONTRACT", wallet, token),
      key("ALL", vault),
      key("TOKEN", wallet, token, 7n),
      key("TOKEN", other, token, 8n),
    ];
    expect(v1Vaults({ kind: "token", delegate, contract: token, tokenId: 7n }, inForce)).toEqual([
      vault,
      wallet,
      other,
    ]);
    expect(v1Vaults({ kind: "token", delegate, contract: token, tokenId: 9n }, inForce)).toEqual([vault, wallet]);
    expect(v1Vaults({ kind: "contract", delegate, contract: token }, inForce)).toEqual([vault, wallet]);
    expect(v1Vaults({ kind: "contract", delegate, contract: other }, inForce)).toEqual([vault]);
    expect(v1Vaults({ kind: "all", delegate }, inForce)).toEqual([vault]);
  });

  it("counts only the delegate's own delegations", () => {
    const toOther = { ...key("ALL", vault), delegate: other };
    expect(v1Vaults({ kind: "all", delegate }, [toOther])).toEqual([]);
    expect(v1Vaults({ kind: "all", delegate: other }, [toOther])).toEqual([vault]);
  });
});

describe("v1KeyString / v1KeyOfString", () => {
  it("names every key of v1CheckKeys by a string that gives the key back, each a different string", () => {
    const keys = v1CheckKeys({ kind: "token", vault, delegate, contract: token, tokenId: maxUint256 });
    expect(keys.map((k) => v1KeyOfString(v1KeyString(k)))).toEqual(keys);
    expect(new Set(keys.map(v1KeyString)).size).toBe(3);
  });
});

describe("registryCalls", () => {
  const data = (functionName: string, args: readonly unknown[] = []): Hex =>
    encodeFunctionData({ abi: registryV1Abi, functionName, args } as never);
  const frame = (f: Partial<CallFrame> & { from: Address }): CallFrame => ({ type: "CALL", input: "0x", ...f });
  const toRegistry = (from: Address, input: Hex, extra: Partial<CallFrame> = {}) =>
    frame({ from, to: registry, input, ...extra });

  it("a direct call is the root frame", () => {
    const root = toRegistry(vault, data("revokeDelegate", [delegate]));
    expect(registryCalls(root, registry)).toEqual([root]);
  });

  it("matches the registry address in any case, both ways", () => {
    const root = frame({ from: vault, to: getAddress(registry), input: data("revokeAllDelegates") });
    expect(registryCalls(root, registry)).toEqual([root]);
    const lowerRoot = toRegistry(vault, data("revokeAllDelegates"));
    expect(registryCalls(lowerRoot, getAddress(registry))).toEqual([lowerRoot]);
  });

  it("lists a wallet's calls in execution order, nested ones included, and nothing else", () => {
    const a = toRegistry(wallet, data("delegateForAll", [delegate, true]));
    const b = toRegistry(other, data("revokeDelegate", [delegate]));
    const c = toRegistry(wallet, data("revokeSelf", [vault]));
    const root = frame({
      from: vault,
      to: wallet,
      calls: [
        a,
        frame({ from: wallet, to: token, calls: [frame({ from: token, to: other, calls: [b] })] }),
        frame({ from: wallet, to: token }),
        c,
      ],
    });
    expect(registryCalls(root, registry)).toEqual([a, b, c]);
  });

  it("skips a reverted registry call", () => {
    const ok = toRegistry(wallet, data("revokeDelegate", [delegate]));
    const failed = toRegistry(wallet, data("revokeDelegate", [other]), { error: "out of gas" });
    const root = frame({ from: vault, to: wallet, calls: [failed, ok] });
    expect(registryCalls(root, registry)).toEqual([ok]);
  });

  it("skips the registry calls inside a reverted frame, however deep, though they did not fail themselves", () => {
    const undone1 = toRegistry(wallet, data("revokeDelegate", [other]));
    const undone2 = toRegistry(wallet, data("delegateForAll", [other, true]));
    const ok = toRegistry(wallet, data("revokeDelegate", [delegate]));
    const root = frame({
      from: vault,
      to: wallet,
      calls: [
        frame({
          from: wallet,
          to: wallet,
          error: "execution reverted",
          calls: [undone1, frame({ from: wallet, to: token, calls: [undone2] })],
        }),
        ok,
      ],
    });
    expect(registryCalls(root, registry)).toEqual([ok]);
  });

  it("a reverted transaction has no registry calls", () => {
    const root = frame({
      from: vault,
      to: wallet,
      error: "execution reverted",
      calls: [toRegistry(wallet, data("revokeDelegate", [delegate]))],
    });
    expect(registryCalls(root, registry)).toEqual([]);
    expect(
      registryCalls(toRegistry(vault, data("revokeDelegate", [delegate]), { error: "out of gas" }), registry),
    ).toEqual([]);
  });

  it("skips frames that are not CALLs (STATICCALL, DELEGATECALL, CALLCODE, CREATE) but walks into them", () => {
    const inner = toRegistry(token, data("revokeDelegate", [delegate]));
    const root = frame({
      from: vault,
      to: wallet,
      calls: [
        toRegistry(wallet, data("checkDelegateForAll", [delegate, wallet]), { type: "STATICCALL" }),
        toRegistry(wallet, data("revokeDelegate", [other]), { type: "DELEGATECALL" }),
        toRegistry(wallet, data("revokeDelegate", [other]), { type: "CALLCODE" }),
        frame({ from: wallet, to: token, type: "CREATE", calls: [inner] }),
      ],
    });
    expect(registryCalls(root, registry)).toEqual([inner]);
  });

  it("walks a contract-creation root (to absent)", () => {
    const inner = toRegistry(token, data("revokeDelegate", [delegate]));
    const root: CallFrame = { type: "CREATE", from: vault, input: "0x6080", calls: [inner] };
    expect(registryCalls(root, registry)).toEqual([inner]);
  });

  // The indexer pairs the k-th registry call with the registry's k-th log of the transaction; only
  // the six writes emit a log. A view called with CALL (a low-level `registry.call(...)`, or an
  // interface that does not declare it `view`) emits none, so it must not be counted.
  it("skips a registry view called with CALL: it emits no log", () => {
    const view = toRegistry(wallet, data("checkDelegateForAll", [delegate, wallet]));
    const write = toRegistry(wallet, data("revokeDelegate", [delegate]));
    const root = frame({ from: vault, to: wallet, calls: [view, write] });
    expect(registryCalls(root, registry)).toEqual([write]);
  });

  it("keeps every write and no view, whatever the case of the selector", () => {
    const writes = [
      data("delegateForAll", [delegate, true]),
      data("delegateForContract", [delegate, token, false]),
      data("delegateForToken", [delegate, token, maxUint256, true]),
      data("revokeAllDelegates"),
      data("revokeDelegate", [delegate]),
      data("revokeSelf", [vault]),
    ].map((input) => toRegistry(wallet, input));
    const views = [
      data("checkDelegateForAll", [delegate, vault]),
      data("checkDelegateForContract", [delegate, vault, token]),
      data("checkDelegateForToken", [delegate, vault, token, 1n]),
      data("getDelegatesForAll", [vault]),
      data("getDelegatesForContract", [vault, token]),
      data("getDelegatesForToken", [vault, token, 1n]),
      data("getDelegationsByDelegate", [delegate]),
      data("getContractLevelDelegations", [vault]),
      data("getTokenLevelDelegations", [vault]),
      data("supportsInterface", ["0x01ffc9a7"]),
    ].map((input) => toRegistry(wallet, input));
    const upper = toRegistry(wallet, `0x${data("revokeDelegate", [other]).slice(2).toUpperCase()}`);
    const root = frame({ from: vault, to: wallet, calls: [...views.slice(0, 5), ...writes, ...views.slice(5), upper] });
    expect(registryCalls(root, registry)).toEqual([...writes, upper]);
  });

  it("skips a call with no selector (a plain transfer) or an unknown one", () => {
    const root = frame({
      from: vault,
      to: wallet,
      calls: [toRegistry(wallet, "0x"), toRegistry(wallet, "0xdeadbeef"), toRegistry(wallet, "0x12")],
    });
    expect(registryCalls(root, registry)).toEqual([]);
  });
});

describe("v1PairsRevokedAs", () => {
  const call = (from: Address, functionName: string, args: readonly unknown[] = []): CallFrame => ({
    type: "CALL",
    from,
    to: registry,
    input: encodeFunctionData({ abi: registryV1Abi, functionName, args } as never),
  });

  it("lists revokeDelegate by the vault and revokeSelf(vault) by the vault, in order", () => {
    const calls = [
      call(vault, "revokeDelegate", [delegate]),
      call(vault, "delegateForAll", [delegate, true]),
      call(vault, "revokeSelf", [vault]),
      call(vault, "revokeDelegate", [other]),
    ];
    expect(v1PairsRevokedAs(calls, vault)).toEqual([
      { vault, delegate },
      { vault, delegate: vault },
      { vault, delegate: other },
    ]);
  });

  it("leaves out what logs another pair: other callers, revokeSelf of another vault, other writes", () => {
    const calls = [
      call(wallet, "revokeDelegate", [delegate]),
      call(vault, "revokeSelf", [other]),
      call(delegate, "revokeSelf", [vault]),
      call(vault, "revokeAllDelegates"),
      call(vault, "delegateForToken", [delegate, token, 1n, true]),
    ];
    expect(v1PairsRevokedAs(calls, vault)).toEqual([]);
  });

  it("matches the caller in any case", () => {
    const mixed = getAddress("0xabcdefabcdefabcdefabcdefabcdefabcdefabcd");
    const calls = [call(mixed, "revokeDelegate", [delegate])];
    const pair = { vault: mixed.toLowerCase(), delegate };
    expect(v1PairsRevokedAs(calls, mixed)).toEqual([pair]);
    expect(v1PairsRevokedAs(calls, mixed.toLowerCase() as Address)).toEqual([pair]);
  });
});

describe("v1RevokedPair", () => {
  const input = (functionName: string, args: readonly unknown[] = []): Hex =>
    encodeFunctionData({ abi: registryV1Abi, functionName, args } as never);

  it("revokeDelegate(x) by the vault: the pair (caller, x)", () => {
    expect(v1RevokedPair(vault, input("revokeDelegate", [delegate]))).toEqual({ vault, delegate });
  });

  it("revokeSelf(vault) by the delegate: the pair (vault, caller)", () => {
    expect(v1RevokedPair(delegate, input("revokeSelf", [vault]))).toEqual({ vault, delegate });
  });

  it("revokeDelegate(self) and revokeSelf(self) both void the self-pair", () => {
    expect(v1RevokedPair(vault, input("revokeDelegate", [vault]))).toEqual({ vault, delegate: vault });
    expect(v1RevokedPair(vault, input("revokeSelf", [vault]))).toEqual({ vault, delegate: vault });
  });

  it("lowercases the caller and the argument, whatever their case", () => {
    const mixedCaller = getAddress("0xabcdefabcdefabcdefabcdefabcdefabcdefabcd");
    const mixedArg = getAddress("0xfedcbafedcbafedcbafedcbafedcbafedcbafedc");
    expect(v1RevokedPair(mixedCaller, input("revokeDelegate", [mixedArg]))).toEqual({
      vault: mixedCaller.toLowerCase(),
      delegate: mixedArg.toLowerCase(),
    });
    expect(v1RevokedPair(mixedCaller, input("revokeSelf", [mixedArg]))).toEqual({
      vault: mixedArg.toLowerCase(),
      delegate: mixedCaller.toLowerCase(),
    });
    const upperCaller = `0x${mixedCaller.slice(2).toUpperCase()}` as Address;
    expect(v1RevokedPair(upperCaller, input("revokeDelegate", [delegate])).vault).toBe(mixedCaller.toLowerCase());
  });

  it("revokeDelegate of the zero address is the pair (caller, 0x0)", () => {
    expect(v1RevokedPair(vault, input("revokeDelegate", [zeroAddress]))).toEqual({ vault, delegate: zeroAddress });
  });

  it("throws for a call that cannot emit RevokeDelegate", () => {
    expect(() => v1RevokedPair(vault, input("delegateForAll", [delegate, true]))).toThrow();
    expect(() => v1RevokedPair(vault, input("revokeAllDelegates"))).toThrow();
    expect(() => v1RevokedPair(vault, input("checkDelegateForAll", [delegate, vault]))).toThrow();
  });

  it("throws for input that is not a registry call", () => {
    expect(() => v1RevokedPair(vault, "0x")).toThrow();
    expect(() => v1RevokedPair(vault, "0xdeadbeef")).toThrow();
  });
});
