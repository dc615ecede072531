/**
 * Wallet listings asked of the service and compared with the contract's views at the block
 * compared (see CompareAt): the records as a set (each once, each naming the wallet), the further
 * checks a version makes against the contract's views, and the order against where each
 * delegation was made. The versions differ only in the records the contract's views amount to,
 * and where a record was made (ListingKit); a kit may ask for one direction of the listing.
 */
import { type Address, getAddress } from "viem";
import type { Direction } from "../../core/parse";
import { ask } from "../../devkit/ask";
import { blockToCompare, type CompareAt, type Mismatch, type Oracle, pathAt } from "../../devkit/compare";
import { pool } from "../../devkit/pool";
import { type Rng, spellAddress } from "../../devkit/random";
import { type Contract, chainClient } from "../../devkit/rpc";
import { canonical, parseJsonExact } from "./json";
import { before, type Position } from "./position";

export type ApiRecord = Record<string, unknown>;

/** Reports a mismatch of the listing being compared. */
export type Bad = (what: string, expected: string, got: string) => void;

/** What the contract's views say of one wallet's listing. */
export type Expected = {
  /** The wallet's records (as the API spells them), each once. */
  records: ApiRecord[];
  /** Further checks of the listing against the views (their order, hashes…). */
  check?(list: ApiRecord[]): void;
};

/** What a version's listings need for the comparison. */
export type ListingKit = {
  version: "v1" | "v2";
  /** The listing's `direction` asked (none: the parameter is left out, which is `both`). */
  direction?: Direction;
  /** The fields of a record that may name the wallet (in the direction asked). */
  parties: readonly string[];
  /** The wallet's records by the contract's views at `block`; undefined when the views are unusable (reported). */
  expected(o: Contract, wallet: Address, block: bigint, bad: Bad): Promise<Expected | undefined>;
  /** A record as compared (v2: rights in lowercase, as their case is free). */
  normalize?(r: ApiRecord): ApiRecord;
  /** Where each record's delegation was made, to check the order; and what a record without one is. */
  order?: { position(r: ApiRecord): Position | undefined; unplaced: { what: string; expected: string } };
};

export type ListingResult = {
  compared: number;
  records: number;
  mismatches: Mismatch[];
  /** The contract's records (canonical) of each wallet compared, by its lowercase address. */
  expected: Map<string, Set<string>>;
};

/**
 * Each wallet's listing compared at `at` (asked at that block, when it names one); its address in
 * the path as given, or spelled at random with `rng`.
 */
export async function compareListings(
  o: Oracle,
  kit: ListingKit,
  wallets: readonly Address[],
  at: CompareAt,
  rng?: Rng,
): Promise<ListingResult> {
  const mismatches: Mismatch[] = [];
  const expected = new Map<string, Set<string>>();
  let records = 0;
  let compared = 0;
  await pool(wallets, 8, async (wallet) => {
    const direction = kit.direction === undefined ? "" : `&direction=${kit.direction}`;
    const path = pathAt(
      `/registry/${kit.version}/${rng ? spellAddress(rng, wallet) : wallet}?chainId=${o.chainId}${direction}`,
      at,
    );
    const a = await ask(o.serviceUrl, path, { headers: o.headers, dispatcher: o.dispatcher, reask: o.reask });
    // Read after the answer: the chain mines on meanwhile.
    const head = await chainClient(o.rpcUrl).getBlockNumber();
    const fit = blockToCompare(a, at, head);
    if (!("block" in fit)) return void mismatches.push({ what: `${kit.version} listing answer`, query: path, ...fit });
    const w = wallet.toLowerCase() as Address;
    const where = `${kit.version} listing of ${getAddress(w)} at block ${fit.block}`;
    const bad: Bad = (what, expected, got) =>
      mismatches.push({ what: `${where}: ${what}`, query: path, expected, got });
    let list: ApiRecord[];
    try {
      const parsed = parseJsonExact(a.text);
      if (!Array.isArray(parsed)) throw new Error("not an array");
      list = parsed as ApiRecord[];
    } catch (error) {
      return bad("body", "a JSON array", `${(error as Error).message}: ${a.text.slice(0, 300)}`);
    }
    compared++;
    records += list.length;
    const want = await compareListing(o, kit, w, list, fit.block, bad);
    if (want) expected.set(w, want);
  });
  return { compared, records, mismatches, expected };
}

/**
 * One wallet's listing (its records as the API gave them, from any route) compared with the
 * contract's views at `block`: the contract's records (canonical), or undefined when the views
 * are unusable (reported).
 */
export async function compareListing(
  o: Contract,
  kit: ListingKit,
  wallet: Address,
  list: ApiRecord[],
  block: bigint,
  bad: Bad,
): Promise<Set<string> | undefined> {
  const w = wallet.toLowerCase() as Address;
  const normalize = kit.normalize ?? ((r: ApiRecord) => r);
  const want = await kit.expected(o, w, block, bad);
  if (!want) return undefined;

  const wanted = new Map(want.records.map((r) => [canonical(normalize(r)), r]));
  const got = new Map<string, ApiRecord>();
  for (const r of list) {
    const c = canonical(normalize(r));
    if (got.has(c)) bad("a record twice", "each delegation once", c);
    got.set(c, r);
  }
  const missing = [...wanted.keys()].filter((k) => !got.has(k));
  const extra = [...got.keys()].filter((k) => !wanted.has(k));
  if (missing.length || extra.length) {
    bad(
      `records as a set (${wanted.size} expected, ${got.size} got; ${missing.length} missing, ${extra.length} extra)`,
      `missing: ${missing.slice(0, 3).join(" ")}`,
      `extra: ${extra.slice(0, 3).join(" ")}`,
    );
  }
  for (const r of list) {
    if (!kit.parties.some((p) => String(r[p]).toLowerCase() === w))
      bad("record of another wallet", `${kit.parties.join(" or ")} == wallet`, canonical(r));
  }
  want.check?.(list);
  if (kit.order) {
    // Order: by where each delegation was made.
    let last: Position | undefined;
    for (const [i, r] of list.entries()) {
      const pos = kit.order.position(r);
      if (!pos) {
        bad(`record #${i} ${kit.order.unplaced.what}`, kit.order.unplaced.expected, canonical(r));
        continue;
      }
      if (last && !before(last, pos)) {
        bad(
          `order of record #${i}`,
          `after block ${last.block} log ${last.logIndex}`,
          `block ${pos.block} log ${pos.logIndex}: ${canonical(r)}`,
        );
      }
      last = pos;
    }
  }
  return new Set(wanted.keys());
}
