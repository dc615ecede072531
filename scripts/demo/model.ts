/**
 * What the demo's own writes leave in the registries, worked out from the writes by the contracts'
 * rules (never asked of the service, and without its code): the answers the printed examples
 * promise. Only what the examples ask is modelled: v2 checks with empty rights, listings' lengths,
 * v1 checks.
 */
import { type Address, maxUint256, zeroAddress, zeroHash } from "viem";
import { type Key, keyOf, keyString, type RegistryCall } from "../../devkit/v1/calls";
import type { Write } from "../../devkit/v2/generate";
import type { DemoTx } from "./activity";

type V2Fn = Write["fn"];
export type V2Entry = { from: Address; write: Write; value: bigint; everEnabled: boolean };

const lower = (a: Address) => a.toLowerCase() as Address;

function v2Key(fn: V2Fn, from: Address, to: Address, rights: string, contract?: Address, tokenId?: bigint): string {
  return [fn, lower(from), lower(to), rights, contract ? lower(contract) : "", tokenId ?? ""].join("|");
}

/** The registries' state after the demo's writes, by the contracts' rules (see the module's head). */
export class DemoModel {
  private readonly v2 = new Map<string, V2Entry>();
  /**
   * v1 voids delegations by version counters: revokeAllDelegates bumps the vault's,
   * revokeDelegate/revokeSelf the pair's.
   */
  private readonly vaultVersion = new Map<string, number>();
  private readonly pairVersion = new Map<string, number>();
  /** Each v1 delegation's last write, and the versions it was made at. */
  private readonly v1 = new Map<string, { key: Key; value: boolean; vault: number; pair: number }>();

  /** Applies transactions in the order the chain runs them. */
  apply(txs: DemoTx[]) {
    for (const tx of txs) {
      if ("v1" in tx) this.applyV1(tx.from, tx.v1);
      else for (const w of tx.v2) this.applyV2(tx.from, w);
    }
  }

  private applyV2(from: Address, w: Write) {
    const key = v2Key(
      w.fn,
      from,
      w.to,
      w.rights,
      "contract" in w ? w.contract : undefined,
      "tokenId" in w ? w.tokenId : undefined,
    );
    // What a check reads: 1 or 0 for enable, the amount for ERC20 and ERC1155 (0 revokes).
    const value = "enable" in w ? (w.enable ? 1n : 0n) : w.amount;
    const everEnabled = (this.v2.get(key)?.everEnabled ?? false) || value > 0n;
    this.v2.set(key, { from, write: w, value, everEnabled });
  }

  private applyV1(from: Address, call: RegistryCall) {
    const bump = (counters: Map<string, number>, key: string) => counters.set(key, (counters.get(key) ?? 0) + 1);
    switch (call.fn) {
      case "revokeAllDelegates":
        return bump(this.vaultVersion, lower(from));
      case "revokeDelegate":
        return bump(this.pairVersion, `${lower(from)}|${lower(call.delegate)}`);
      case "revokeSelf":
        return bump(this.pairVersion, `${lower(call.vault)}|${lower(from)}`);
      case "checkDelegateForAll":
        return;
    }
    const key = keyOf(from, call);
    this.v1.set(keyString(key), { key, value: call.value, ...this.versions(key) });
  }

  private versions(key: Key): { vault: number; pair: number } {
    return {
      vault: this.vaultVersion.get(key.vault) ?? 0,
      pair: this.pairVersion.get(`${key.vault}|${key.delegate}`) ?? 0,
    };
  }

  /** Every v2 delegation ever written, in the order first written, with its last write. */
  v2Delegations(): V2Entry[] {
    return [...this.v2.values()];
  }

  private v2Value(fn: V2Fn, from: Address, to: Address, contract?: Address, tokenId?: bigint): bigint {
    return this.v2.get(v2Key(fn, from, to, zeroHash, contract, tokenId))?.value ?? 0n;
  }

  /** checkDelegateForAll(to, from, "") */
  v2CheckAll(to: Address, from: Address): boolean {
    return this.v2Value("delegateAll", from, to) > 0n;
  }

  /** checkDelegateForContract(to, from, contract, "") */
  v2CheckContract(to: Address, from: Address, contract: Address): boolean {
    return this.v2CheckAll(to, from) || this.v2Value("delegateContract", from, to, contract) > 0n;
  }

  /** checkDelegateForERC721(to, from, contract, tokenId, "") */
  v2CheckErc721(to: Address, from: Address, contract: Address, tokenId: bigint): boolean {
    return this.v2CheckContract(to, from, contract) || this.v2Value("delegateERC721", from, to, contract, tokenId) > 0n;
  }

  /** checkDelegateForERC20(to, from, contract, ""): ALL or CONTRACT delegate every unit. */
  v2CheckErc20(to: Address, from: Address, contract: Address): bigint {
    return this.v2CheckContract(to, from, contract) ? maxUint256 : this.v2Value("delegateERC20", from, to, contract);
  }

  /** How many delegations in force name the wallet as `from` or `to`: the length of its listing. */
  v2ListingLength(wallet: Address): number {
    const w = lower(wallet);
    return this.v2Delegations().filter((e) => e.value > 0n && (lower(e.from) === w || lower(e.write.to) === w)).length;
  }

  /** Whether a v1 delegation is in force: set at the versions now current, and not unset since. */
  private inForce(key: Key): boolean {
    const d = this.v1.get(keyString(key));
    const now = this.versions(key);
    return d?.value === true && d.vault === now.vault && d.pair === now.pair;
  }

  /** The v1 delegations in force. */
  v1InForce(): Key[] {
    return [...this.v1.values()].map((d) => d.key).filter((key) => this.inForce(key));
  }

  /**
   * checkDelegateForAll / ForContract / ForToken: a token falls back to its contract, a contract to
   * the whole vault.
   */
  v1Check(delegate: Address, vault: Address, contract?: Address, tokenId?: bigint): boolean {
    const base = { vault: lower(vault), delegate: lower(delegate) };
    const keys: Key[] = [{ ...base, type: "ALL", contract: zeroAddress, tokenId: 0n }];
    if (contract) keys.push({ ...base, type: "CONTRACT", contract: lower(contract), tokenId: 0n });
    if (contract && tokenId !== undefined) keys.push({ ...base, type: "TOKEN", contract: lower(contract), tokenId });
    return keys.some((k) => this.inForce(k));
  }

  /** How many v1 delegations in force name the wallet as vault or delegate. */
  v1ListingLength(wallet: Address): number {
    const w = lower(wallet);
    return this.v1InForce().filter((key) => key.vault === w || key.delegate === w).length;
  }
}
