import type { Address, Hex } from "viem";
import { type V1Key, type V1State, type V1Type, v1InForce, v1KeyString } from "../../core/v1";
import type { V2DelegationType, V2State } from "../../core/v2";
import type { V1Row, V2Row } from "../store";

/** A row of v2_delegation, as held in memory. */
export type V2Entry = V2Row & {
  hash: Hex;
  enabled: boolean;
  firstBlock: number;
  firstLogIndex: number;
  updatedBlock: number;
};
/** A row of v1_delegation. */
export type V1Entry = V1Row & Omit<V1State, "createdBlock"> & { createdBlock: number; updatedBlock: number };
/** A row of v1_vault_version (`delegate` undefined) or v1_pair_version. */
export type VersionEntry = { vault: Address; delegate?: Address; version: number; updatedBlock: number };

/** One state row, by table; `key` is its primary key within the chain (see the key functions). */
export type StateRow =
  | { table: "v2"; row: V2Entry }
  | { table: "v1"; row: V1Entry }
  | { table: "vault"; row: VersionEntry }
  | { table: "pair"; row: VersionEntry };

/** A (vault, delegate) pair's key in the copy's maps. */
export const pairKeyOf = (vault: Address, delegate: Address) => `${vault}|${delegate}`;

/** Where a row lives: its table and primary key, one string. */
export function rowKey(r: StateRow): string {
  switch (r.table) {
    case "v2":
      return `v2:${r.row.hash}`;
    case "v1":
      return `v1:${v1KeyString(r.row)}`;
    case "vault":
      return `vault:${r.row.vault}`;
    case "pair":
      return `pair:${pairKeyOf(r.row.vault, r.row.delegate!)}`;
  }
}

const byPosition = <T extends { block: number; logIndex: number }>(a: T, b: T) =>
  a.block - b.block || a.logIndex - b.logIndex;

/**
 * One chain's indexed state, in memory: the four state tables as maps, indexed by wallet, with
 * the same answers as the SQL store. Rows are replaced whole as the indexer wrote them, so no rule
 * of the registries is applied here except core's `v1InForce`.
 *
 * It also remembers, for blocks not yet final, which rows each block changed and a fingerprint of
 * each block's events, so that a reorganization can be found and undone (api/replica/feed.ts).
 */
export class ChainState {
  /** The last block whose state this holds. */
  block = 0;
  private readonly v2 = new Map<Hex, V2Entry>();
  /** Per wallet, its v2 hashes (from or to) in first-enable order. */
  private readonly v2ByWallet = new Map<Address, Hex[]>();
  private readonly v1 = new Map<string, V1Entry>();
  private readonly v1ByWallet = new Map<Address, Set<string>>();
  private readonly vaults = new Map<Address, VersionEntry>();
  private readonly pairs = new Map<string, VersionEntry>();
  /** Blocks past the final one: the rows each changed, and its events' fingerprint. */
  readonly touched = new Map<number, Set<string>>();
  readonly fingerprints = new Map<number, string>();

  /** Puts a row as the database now has it, or removes it (`undefined`: it no longer exists). */
  put(key: string, r: StateRow | undefined, final: number) {
    if (r === undefined) return this.remove(key);
    switch (r.table) {
      case "v2": {
        const { row } = r;
        const old = this.v2.get(row.hash);
        this.v2.set(row.hash, row);
        // A hash names its wallets, and its place is fixed by its first enable: only a row new
        // here (or put back in another place by a reorganization) enters the wallet lists.
        if (old && old.firstBlock === row.firstBlock && old.firstLogIndex === row.firstLogIndex) break;
        for (const wallet of new Set([row.from, row.to])) {
          const list = this.v2ByWallet.get(wallet) ?? [];
          if (old) list.splice(list.indexOf(old.hash), 1);
          list.push(row.hash);
          const before = list.length > 1 ? this.v2.get(list[list.length - 2]!)! : undefined;
          if (before && this.v2Order(before.hash, row.hash) > 0) list.sort((a, b) => this.v2Order(a, b));
          this.v2ByWallet.set(wallet, list);
        }
        break;
      }
      case "v1": {
        const k = v1KeyString(r.row);
        this.v1.set(k, r.row);
        for (const wallet of [r.row.vault, r.row.delegate]) {
          const set = this.v1ByWallet.get(wallet) ?? new Set();
          set.add(k);
          this.v1ByWallet.set(wallet, set);
        }
        break;
      }
      case "vault":
        this.vaults.set(r.row.vault, r.row);
        break;
      case "pair":
        this.pairs.set(pairKeyOf(r.row.vault, r.row.delegate!), r.row);
        break;
    }
    if (r.row.updatedBlock > final) {
      const set = this.touched.get(r.row.updatedBlock) ?? new Set();
      set.add(key);
      this.touched.set(r.row.updatedBlock, set);
    }
  }

  private v2Order(a: Hex, b: Hex): number {
    const x = this.v2.get(a)!;
    const y = this.v2.get(b)!;
    return byPosition(
      { block: x.firstBlock, logIndex: x.firstLogIndex },
      { block: y.firstBlock, logIndex: y.firstLogIndex },
    );
  }

  private remove(key: string) {
    const [table, id] = [key.slice(0, key.indexOf(":")), key.slice(key.indexOf(":") + 1)];
    if (table === "v2") {
      const old = this.v2.get(id as Hex);
      if (!old) return;
      this.v2.delete(old.hash);
      for (const wallet of new Set([old.from, old.to])) {
        const list = this.v2ByWallet.get(wallet)!.filter((h) => h !== old.hash);
        if (list.length) this.v2ByWallet.set(wallet, list);
        else this.v2ByWallet.delete(wallet);
      }
    } else if (table === "v1") {
      const old = this.v1.get(id);
      if (!old) return;
      this.v1.delete(id);
      for (const wallet of [old.vault, old.delegate]) {
        const set = this.v1ByWallet.get(wallet)!;
        set.delete(id);
        if (set.size === 0) this.v1ByWallet.delete(wallet);
      }
    } else if (table === "vault") this.vaults.delete(id as Address);
    else this.pairs.delete(id);
  }

  /** The keys of every row changed after block `after` (and forgets that they were). */
  takeTouchedAfter(after: number): Set<string> {
    const keys = new Set<string>();
    for (const [block, set] of this.touched) {
      if (block <= after) continue;
      for (const key of set) keys.add(key);
      this.touched.delete(block);
    }
    return keys;
  }

  /** Forgets the bookkeeping of blocks that are final: they cannot be reorganized away. */
  finalize(final: number) {
    for (const block of this.touched.keys()) if (block <= final) this.touched.delete(block);
    for (const block of this.fingerprints.keys()) if (block <= final) this.fingerprints.delete(block);
  }

  v2Enabled(hashes: readonly Hex[]): Map<Hex, V2State> {
    const out = new Map<Hex, V2State>();
    for (const hash of hashes) {
      const row = this.v2.get(hash);
      if (row?.enabled) out.set(hash, { enabled: true, amount: row.amount ?? 0n });
    }
    return out;
  }

  v2Wallet(wallet: Address): V2Row[] {
    const out: V2Row[] = [];
    for (const hash of this.v2ByWallet.get(wallet) ?? []) {
      const row = this.v2.get(hash)!;
      if (row.enabled) out.push(v2Row(row));
    }
    return out;
  }

  private current(vault: Address, delegate: Address) {
    return {
      vault: this.vaults.get(vault)?.version ?? 0,
      pair: this.pairs.get(pairKeyOf(vault, delegate))?.version ?? 0,
    };
  }

  private inForce(row: V1Entry): boolean {
    return v1InForce({ ...row, createdBlock: BigInt(row.createdBlock) }, this.current(row.vault, row.delegate));
  }

  v1InForce(keys: readonly V1Key[]): V1Row[] {
    const rows = keys
      .map((k) => this.v1.get(v1KeyString(k)))
      .filter((row): row is V1Entry => row !== undefined && this.inForce(row));
    return sortV1(rows).map(v1Row);
  }

  v1Wallet(wallet: Address): V1Row[] {
    const rows = [...(this.v1ByWallet.get(wallet) ?? [])]
      .map((k) => this.v1.get(k)!)
      .filter((row) => this.inForce(row));
    return sortV1(rows).map(v1Row);
  }
}

const sortV1 = (rows: V1Entry[]) =>
  rows.sort((a, b) =>
    byPosition(
      { block: a.createdBlock, logIndex: a.createdLogIndex },
      { block: b.createdBlock, logIndex: b.createdLogIndex },
    ),
  );

const v2Row = (e: V2Entry): V2Row => ({
  delegationType: e.delegationType as V2DelegationType,
  from: e.from,
  to: e.to,
  contract: e.contract,
  tokenId: e.tokenId,
  rights: e.rights,
  amount: e.amount,
});

const v1Row = (e: V1Entry): V1Row => ({
  type: e.type as V1Type,
  vault: e.vault,
  delegate: e.delegate,
  contract: e.contract,
  tokenId: e.tokenId,
});
