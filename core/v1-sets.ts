import type { Address } from "viem";
import { type V1Key, type V1Type, v1KeyString } from "./v1";

/**
 * The v1 registry's enumerable sets, replayed from its events, for its listing views in the
 * contract's own order. Each vault has a set of delegation hashes per vault version, each delegate
 * one set of hashes; an entry is added at the end (if absent) and removed by moving the last entry
 * into its place (OpenZeppelin's EnumerableSet). A hash names a delegation at the versions current
 * when it was written: a version bump leaves its entries in place, void, and the views skip them.
 * Addresses are lowercase.
 */

/** A v1 event as the sets need it (and as the history reads it: api/store/history-store.ts). */
export type V1SetEvent = {
  kind: string;
  vault: Address;
  delegate: Address | null;
  contract: Address | null;
  tokenId: bigint | null;
  value: boolean | null;
  revokedDelegate: Address | null;
};

/** One entry of a set: the delegation its hash names, at the versions it was written at. */
export type V1Entry = V1Key & { vaultVersion: number; pairVersion: number };

const TYPE_OF: Record<string, V1Type> = {
  DelegateForAll: "ALL",
  DelegateForContract: "CONTRACT",
  DelegateForToken: "TOKEN",
};
const ZERO: Address = "0x0000000000000000000000000000000000000000";

/** An EnumerableSet of entries by identity. */
class EnumerableSet {
  readonly values: V1Entry[] = [];
  readonly #index = new Map<string, number>();

  add(id: string, entry: V1Entry) {
    if (this.#index.has(id)) return;
    this.#index.set(id, this.values.push(entry) - 1);
  }

  remove(id: string) {
    const at = this.#index.get(id);
    if (at === undefined) return;
    const last = this.values.pop()!;
    this.#index.delete(id);
    if (at === this.values.length) return;
    this.values[at] = last;
    this.#index.set(entryId(last), at);
  }
}

const entryId = (entry: V1Entry) => `${v1KeyString(entry)}|${entry.vaultVersion}|${entry.pairVersion}`;

/** The sets after a chain's events, in order; read with the registry's views' own filters. */
export class V1Sets {
  readonly #vaultVersions = new Map<Address, number>();
  readonly #pairVersions = new Map<string, number>();
  readonly #byVault = new Map<string, EnumerableSet>();
  readonly #byDelegate = new Map<Address, EnumerableSet>();

  #vaultVersion = (vault: Address) => this.#vaultVersions.get(vault) ?? 0;
  #pairVersion = (vault: Address, delegate: Address) => this.#pairVersions.get(`${vault}|${delegate}`) ?? 0;
  #set = <K>(sets: Map<K, EnumerableSet>, key: K) => {
    const set = sets.get(key) ?? new EnumerableSet();
    sets.set(key, set);
    return set;
  };
  #vaultSet = (vault: Address) => this.#set(this.#byVault, `${vault}|${this.#vaultVersion(vault)}`);

  /** Applies one event (events in chain order, each once). */
  apply(event: V1SetEvent): void {
    const { vault } = event;
    if (event.kind === "RevokeAllDelegates") this.#vaultVersions.set(vault, this.#vaultVersion(vault) + 1);
    else if (event.kind === "RevokeDelegate" && event.revokedDelegate !== null) {
      const delegate = event.revokedDelegate;
      this.#pairVersions.set(`${vault}|${delegate}`, this.#pairVersion(vault, delegate) + 1);
    } else if (TYPE_OF[event.kind] !== undefined && event.delegate !== null) {
      const type = TYPE_OF[event.kind]!;
      const { delegate } = event;
      const entry: V1Entry = {
        type,
        vault,
        delegate,
        contract: type === "ALL" ? ZERO : (event.contract ?? ZERO),
        tokenId: type === "TOKEN" ? (event.tokenId ?? 0n) : 0n,
        vaultVersion: this.#vaultVersion(vault),
        pairVersion: this.#pairVersion(vault, delegate),
      };
      const id = entryId(entry);
      const sets = [this.#vaultSet(vault), this.#set(this.#byDelegate, delegate)];
      for (const set of sets) event.value ? set.add(id, entry) : set.remove(id);
    }
  }

  /** Whether an entry's hash is the one its delegation has now (the views' "check version" test). */
  #current = (entry: V1Entry) =>
    entry.vaultVersion === this.#vaultVersion(entry.vault) &&
    entry.pairVersion === this.#pairVersion(entry.vault, entry.delegate);

  /** The vault's entries of `type` in force, in its set's order (getDelegatesFor*, get*LevelDelegations). */
  vaultEntries(vault: Address, type: V1Type): V1Entry[] {
    return this.#vaultSet(vault).values.filter((entry) => entry.type === type && this.#current(entry));
  }

  /** The delegate's entries in force, in its set's order (getDelegationsByDelegate). */
  delegateEntries(delegate: Address): V1Entry[] {
    return (this.#byDelegate.get(delegate)?.values ?? []).filter(this.#current);
  }
}
