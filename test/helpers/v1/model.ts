/**
 * A literal model of the v1 contract: only to count what the write stream covered and to check the
 * listing order, which the contract's sets do not keep.
 */
import { type Address, zeroAddress } from "viem";
import { type Key, keyOf, keyString, type V1Type } from "../../../devkit/v1/calls";
import { doneCalls } from "../../../devkit/v1/generate";
import type { ApiRecord } from "../compare-listings";
import type { Position } from "../position";
import type { Effect } from "./effects";

const lower = (a: string) => a.toLowerCase() as Address;

/** The pairs (actor, d) of a transaction's calls that log `RevokeDelegate(actor, actor)`: each d. */
const selfRevokedDelegates = (tx: Effect["tx"], actor: Address) =>
  doneCalls(tx).flatMap((c) =>
    c.fn === "revokeDelegate"
      ? [lower(c.delegate)]
      : c.fn === "revokeSelf" && lower(c.vault) === lower(actor)
        ? [lower(actor)]
        : [],
  );

/** Each v1 delegation event's type. */
const RECORD_TYPE: Record<string, V1Type> = {
  DelegateForAll: "ALL",
  DelegateForContract: "CONTRACT",
  DelegateForToken: "TOKEN",
};

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

  /** Applies one registry write that took effect (in chain order), counting what it did. */
  apply(e: Effect) {
    const c = e.call;
    const byWallet = this.wallets.has(lower(e.actor));
    const several = doneCalls(e.tx).length > 1;
    switch (c.fn) {
      case "revokeAllDelegates":
        this.revokeAll(e.actor);
        this.count(byWallet ? "revokeAllDelegates by a contract wallet" : "revokeAllDelegates");
        return;
      case "revokeDelegate":
        this.bump(e.actor, c.delegate, "revokeDelegate");
        this.count(byWallet ? "revokeDelegate by a contract wallet" : "revokeDelegate");
        if (byWallet && several)
          this.count("revokeDelegate by a contract wallet among other writes of one transaction");
        if (byWallet && e.tx.route === "nested") this.count("revokeDelegate through two wallets");
        // Logs alike, (actor, actor), for different pairs: only the receipt's order tells them apart.
        if (byWallet && new Set(selfRevokedDelegates(e.tx, e.actor)).size > 1)
          this.count("revokeDelegate by a contract wallet beside its own revoke of another pair");
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
    const last = this.lastAdd.get(ks);
    const now = this.versions(key.vault, key.delegate);
    if (key.vault === key.delegate) this.count("self-delegations");
    if (byWallet) this.count(`${c.fn} by a contract wallet`);
    const did = this.setValue(key, c.value, { block: e.block, logIndex: e.logIndex });
    if (c.value) {
      if (did === "kept") return this.count("value=true on a delegation in force (keeps its place)");
      if (!last) this.count("first delegations");
      else if (last.vault !== now.vault) this.count("re-delegations after revokeAllDelegates");
      else if (last.pair !== now.pair)
        this.count(`re-delegations after ${this.lastPairBump.get(`${key.vault}|${key.delegate}`)}`);
      else this.count("re-delegations after value=false");
    } else {
      if (did === "removed") return this.count("value=false on a delegation in force");
      if (last && this.set.has(`${ks}@${last.vault}/${last.pair}`)) this.count("value=false on a voided delegation");
      else this.count("value=false on nothing");
    }
  }

  /**
   * Applies one v1 event as the history records it (docs/api.md, "History"), in chain order: what the
   * change feed carries. A RevokeDelegate's revoked delegate is the record's `revokedDelegate`, as the
   * log does not name it.
   */
  applyRecord(r: ApiRecord) {
    const vault = lower(String(r.vault));
    if (r.event === "RevokeAllDelegates") return this.revokeAll(vault);
    if (r.event === "RevokeDelegate") return this.bump(vault, String(r.revokedDelegate) as Address, "revokeDelegate");
    const type = RECORD_TYPE[String(r.event)];
    if (!type) throw new Error(`not a v1 event: ${String(r.event)}`);
    const key: Key = {
      type,
      vault,
      delegate: lower(String(r.delegate)),
      contract: r.contract === null ? zeroAddress : lower(String(r.contract)),
      tokenId: r.tokenId === null ? 0n : BigInt(r.tokenId as bigint),
    };
    this.setValue(key, r.value === true, { block: BigInt(r.blockNumber as bigint), logIndex: Number(r.logIndex) });
  }

  /** revokeAllDelegates: the vault's delegations so far are void. */
  private revokeAll(vault: Address) {
    this.vaultVersion.set(lower(vault), (this.vaultVersion.get(lower(vault)) ?? 0) + 1);
  }

  /** The key's delegation set (`value`) or cleared under the versions now current; what that did. */
  private setValue(key: Key, value: boolean, at: Position): "kept" | "added" | "removed" | "none" {
    const ks = keyString(key);
    this.keys.set(ks, key);
    const now = this.versions(key.vault, key.delegate);
    const entry = `${ks}@${now.vault}/${now.pair}`;
    if (!value) return this.set.delete(entry) ? "removed" : "none";
    if (this.set.has(entry)) return "kept";
    this.set.set(entry, at);
    this.lastAdd.set(ks, now);
    return "added";
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
