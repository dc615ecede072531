import type { Address, Hex } from "viem";
import { writeHex, writeUint256 } from "../../core/hex";
import { CHECKSUM_CASE_BYTES, checksumAddress, withChecksumCase, writeChecksumCase } from "../../core/keccak";
import type { Direction } from "../../core/parse";
import {
  V1_EVENT_NAME,
  type V1Key,
  type V1State,
  type V1Type,
  v1InForce,
  v1KeyOfString,
  v1KeyString,
} from "../../core/v1";
import {
  INVALID_FROM,
  V2_DELEGATION_TYPES,
  V2_RECORD_TYPE,
  type V2Check,
  type V2CheckQuery,
  type V2DelegationType,
  type V2Scope,
  type V2State,
  v2Check,
} from "../../core/v2";
import { asciiBytes, type JsonBytes } from "../http/json-bytes";
import type { PageJson, PageRequest, Told, V1Row, V2Row } from "../store/store";
import { ByteKeys, trimmed, withRoom } from "./byte-keys";
import { PairIndex } from "./pair-index";
import { cellOf, UintCells } from "./uint-cells";

/** A row of v2_delegation, as held in memory. */
export type V2Entry = V2Row & {
  hash: Hex;
  enabled: boolean;
  firstBlock: number;
  firstLogIndex: number;
  updatedBlock: number;
};
/** A row of v1_delegation. */
export type V1Entry = V1Row &
  Omit<V1State, "createdBlock"> & { createdBlock: number; firstBlock: number; updatedBlock: number };
/** A row of v1_vault_version (`delegate` undefined) or v1_pair_version. */
export type VersionEntry = { vault: Address; delegate?: Address; version: number; updatedBlock: number };

/** One state row, by table; `key` is its primary key within the chain (see the key functions). */
export type StateRow =
  | { table: "v2"; row: V2Entry }
  | { table: "v1"; row: V1Entry }
  | { table: "vault"; row: VersionEntry }
  | { table: "pair"; row: VersionEntry };

/** Addresses in EIP-55 case, by their lowercase text. */
export type Spellings = Map<string, Address>;

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

const NONE = -1;
/** The JSON between a v2 record's values (v2RecordJson), each delegation type's where it names it. */
const V2_JSON = {
  // (NONE's is never written: no row holds it.)
  type: V2_DELEGATION_TYPES.map((t) => asciiBytes(`{"type":"${V2_RECORD_TYPE[t as V2DelegationType]}","from":"`)),
  to: asciiBytes('","to":"'),
  contract: asciiBytes('","contract":'),
  tokenId: asciiBytes(',"tokenId":'),
  delegationType: V2_DELEGATION_TYPES.map((t) => asciiBytes(`,"delegationType":"${t}","rights":"`)),
  amount: asciiBytes('","amount":'),
  hash: asciiBytes(',"hash":"'),
  end: asciiBytes('"}'),
  null: asciiBytes("null"),
};
/** JSON's punctuation, as written by v2WalletsJson. */
const [OPEN, CLOSE, COMMA, QUOTE, CLOSE_RECORD] = [...'[],"}'].map((c) => c.charCodeAt(0)) as [
  number,
  number,
  number,
  number,
  number,
];
/** A vault that may delegate (not core's INVALID_FROM), for the check v2VaultsJson asks of every vault. */
const MAY_DELEGATE: Address = "0x0000000000000000000000000000000000000002";
/** The JSON around a v2 vault's values (v2VaultsJson). */
const VAULT_JSON = {
  first: asciiBytes('{"vault":"'),
  next: asciiBytes(',{"vault":"'),
  amount: asciiBytes(',"amount":'),
};
/** A row's flags: it exists (in the database now), and it is enabled. */
const LIVE = 1;
const ENABLED = 2;

const V1_TYPES = Object.keys(V1_EVENT_NAME) as V1Type[];
/** The JSON between a v1 record's values (v1RecordJson), each type's where it names it. */
const V1_JSON = {
  type: V1_TYPES.map((t) => asciiBytes(`{"type":"${t}","vault":"`)),
  delegate: asciiBytes('","delegate":"'),
  contract: asciiBytes('","contract":'),
  tokenId: asciiBytes(',"tokenId":'),
};
/** Where each field lies in a v1 key's bytes; vault and delegate first, as in a pair's key. */
const V1_KEY = { type: 40, contract: 41, tokenId: 61, width: 93 } as const;

/**
 * A row's last changed block as held (4 bytes a row): a block past what this holds is kept as
 * UNKNOWN_BLOCK, which counts as changed after any block.
 */
const UNKNOWN_BLOCK = 0xffffffff;
const heldBlock = (block: number) => Math.min(block, UNKNOWN_BLOCK);
/** Whether a row last changed at `held` may differ at `block` from what this holds now. */
const changedAfter = (held: number, block: number) => held === UNKNOWN_BLOCK || held > block;

/**
 * What a row says of a past block: it held then as it holds now; it did not exist yet (before a v2
 * row's first enable the contract held nothing under its hash, before a v1 key's first write it was
 * in no set: core/v2-rows.ts and core/v1-rows.ts keep firstBlock through later writes); or it
 * changed since, and only the history can tell.
 */
const AS_HELD = 0;
const NOT_YET = 1;
const UNTOLD = 2;
type RowAt = (row: number) => typeof AS_HELD | typeof NOT_YET | typeof UNTOLD;
/** What every row says of the block held. */
const HELD: RowAt = () => AS_HELD;

/** A check's scope in a copy's numbers (ChainState's `numbered`). */
type NumberedScope = {
  /** False for a scope no row holds (its rights or its contract never seen here): the rest unset. */
  held: boolean;
  type: number;
  rights: number;
  contract: number;
  tokenId: bigint | null;
  /** tokenId's cell (api/replica/uint-cells.ts). */
  tokenCell: number;
};

/** The most scopes a v2 check consults: three for each of two rights values (core/v2.ts). */
const MOST_SCOPES = 6;

/**
 * The most rows of its pair a v2 check walks to find its delegations by their fields; past it (a
 * vault that delegated that many contracts or tokens to one wallet), the check's hashes are looked
 * up. Walking a row costs a few typed-array reads; a hash (core/keccak.ts) about a microsecond and a
 * half on a 2-core VM, and a check takes up to six.
 */
export const SCAN_ROWS = 128;

type Column = Int32Array | Uint32Array | Uint8Array | Float64Array;

/** Grows every column of a table to hold `rows` rows. */
function withRows(columns: Record<string, Column>, rows: number) {
  for (const name of Object.keys(columns)) columns[name] = withRoom(columns[name]!, rows);
}

/** Gives back every column's room past `rows` rows (byte-keys.ts, `trimmed`). */
function trimRows(columns: Record<string, Column>, rows: number) {
  for (const name of Object.keys(columns)) columns[name] = trimmed(columns[name]!, rows);
}

/** A row's fields in RowLists' `links`: its two wallets, and the next row in each one's list. */
const A = 0;
const B = 1;
const NEXT_A = 2;
const NEXT_B = 3;
/** A wallet's fields in RowLists' `lists`: its list's first and last rows. */
const HEAD = 0;
const TAIL = 1;
/** Fields per row, and per wallet: side by side, a row's (or a wallet's) lie in one cache line. */
const STRIDE = 4;
const WALLET_STRIDE = 2;

/**
 * Per wallet, a linked list of the rows that name it. A row names two wallets (the same one for a
 * self-delegation, listed once) and holds the next row of each one's list, so that a list costs
 * no memory of its own. Ordered by `before` when given; otherwise in the order rows were linked.
 *
 * A row's fields lie side by side, as do a wallet's: walking a list over a million rows reads a
 * row at random, and with a column per field each row read missed the cache three times, most
 * of a batch's walk (docs/performance.md).
 */
class RowLists {
  private lists = new Int32Array(0);
  private links = new Int32Array(0);

  constructor(private readonly before?: (x: number, y: number) => boolean) {}

  wallets(row: number): [number, number] {
    return [this.links[row * STRIDE + A]!, this.links[row * STRIDE + B]!];
  }

  link(row: number, a: number, b: number) {
    this.links = withRoom(this.links, (row + 1) * STRIDE);
    this.lists = withRoom(this.lists, (Math.max(a, b) + 1) * WALLET_STRIDE, NONE);
    this.links[row * STRIDE + A] = a;
    this.links[row * STRIDE + B] = b;
    this.insert(row, a);
    if (b !== a) this.insert(row, b);
  }

  /** Gives back the room past `rows` rows and `wallets` wallets (byte-keys.ts, `trimmed`). */
  trim(rows: number, wallets: number) {
    this.links = trimmed(this.links, rows * STRIDE);
    this.lists = trimmed(this.lists, wallets * WALLET_STRIDE);
  }

  unlink(row: number) {
    const [a, b] = this.wallets(row);
    this.remove(row, a);
    if (b !== a) this.remove(row, b);
  }

  rows(wallet: number): number[] {
    const rows: number[] = [];
    for (let row = this.first(wallet); row !== NONE; row = this.next(row, wallet)) rows.push(row);
    return rows;
  }

  /** The wallet's first row (NONE: it has none); `next` walks on without an array. */
  first(wallet: number): number {
    return wallet < 0 || wallet * WALLET_STRIDE >= this.lists.length
      ? NONE
      : this.lists[wallet * WALLET_STRIDE + HEAD]!;
  }

  next(row: number, wallet: number): number {
    const at = row * STRIDE;
    return this.links[at + A] === wallet ? this.links[at + NEXT_A]! : this.links[at + NEXT_B]!;
  }

  private setNext(row: number, wallet: number, next: number) {
    const at = row * STRIDE;
    this.links[this.links[at + A] === wallet ? at + NEXT_A : at + NEXT_B] = next;
  }

  private insert(row: number, wallet: number) {
    const at = wallet * WALLET_STRIDE;
    const tail = this.lists[at + TAIL]!;
    if (tail === NONE || this.before === undefined || this.before(tail, row)) {
      this.setNext(row, wallet, NONE);
      if (tail === NONE) this.lists[at + HEAD] = row;
      else this.setNext(tail, wallet, row);
      this.lists[at + TAIL] = row;
      return;
    }
    // Put back in an earlier place (after a reorganization): walk to it.
    let previous = NONE;
    let next = this.lists[at + HEAD]!;
    while (next !== NONE && this.before(next, row)) [previous, next] = [next, this.next(next, wallet)];
    this.setNext(row, wallet, next);
    if (previous === NONE) this.lists[at + HEAD] = row;
    else this.setNext(previous, wallet, row);
  }

  private remove(row: number, wallet: number) {
    const at = wallet * WALLET_STRIDE;
    let previous = NONE;
    let next = this.lists[at + HEAD]!;
    while (next !== row && next !== NONE) [previous, next] = [next, this.next(next, wallet)];
    if (next === NONE) return;
    const after = this.next(row, wallet);
    if (previous === NONE) this.lists[at + HEAD] = after;
    else this.setNext(previous, wallet, after);
    if (this.lists[at + TAIL] === row) this.lists[at + TAIL] = previous;
  }
}

/**
 * One chain's indexed state, in memory: the four state tables, indexed by wallet, with the same
 * answers as the SQL store. Rows are replaced whole as the indexer wrote them, so no rule of the
 * registries is applied here except core's `v1InForce`.
 *
 * Held compactly: addresses, hashes and keys as bytes numbered by ByteKeys, every field
 * a typed array indexed by those numbers, wallet lists linked through the rows. A delegation costs
 * a few hundred bytes rather than kilobytes of objects and strings, and the garbage collector has
 * almost nothing to walk. A row removed by a reorganization keeps its number, marked not LIVE.
 *
 * It also remembers, for blocks not yet final, which rows each block changed and a fingerprint of
 * each block's events, so that a reorganization can be found and undone (api/replica/feed.ts).
 */
export class ChainState {
  /** The last block whose state this holds. */
  block = 0;
  /** Blocks past the final one: the rows each changed, and its events' fingerprint. */
  readonly touched = new Map<number, Set<string>>();
  readonly fingerprints = new Map<number, string>();

  /** Every address a row names, and each one's vault version (v1_vault_version; 0 when absent). */
  private readonly addresses = new ByteKeys(20);
  private vaultVersion = new Uint32Array(0);
  private vaultUpdated = new Uint32Array(0);
  /**
   * Per address, its EIP-55 case (CHECKSUM_CASE_BYTES), worked out when it is first spelt: a
   * listing spells every address it names, and a memo of spellings (core's checksumAddress) keeps
   * fewer addresses than a large chain's listings name, so that most were hashed again.
   */
  private checksumCase = new Uint8Array(0);
  private checksumCaseKnown = new Uint8Array(0);
  /** Per address, how many puts changed a listing of it: with `serial`, the listing's revision. */
  private listingChanges = new Uint32Array(0);
  private static made = 0;
  private readonly serial = ++ChainState.made;

  /** v2_delegation, by hash; its wallets are its list's (from, to), in first-enable order. */
  private readonly v2Keys = new ByteKeys(32);
  private readonly v2Lists = new RowLists((x, y) => this.v2Before(x, y));
  /** v2 rows by their (from, to): a check's, found without walking a party's list. */
  private readonly v2Pairs = new PairIndex();
  private readonly v2 = {
    flags: new Uint8Array(0),
    type: new Uint8Array(0),
    contract: new Int32Array(0),
    rights: new Uint32Array(0),
    firstBlock: new Float64Array(0),
    firstLogIndex: new Uint32Array(0),
    updatedBlock: new Uint32Array(0),
  };
  private readonly v2TokenId = new UintCells();
  private readonly v2Amount = new UintCells();
  /** The rights values rows hold (few: most are empty), numbered. */
  private readonly rights: Hex[] = [];
  private readonly rightsNumber = new Map<Hex, number>();

  /** v1_delegation, by its key's bytes; its wallets are its list's (vault, delegate), in creation order. */
  private readonly v1Keys = new ByteKeys(V1_KEY.width);
  private readonly v1Lists = new RowLists((x, y) => this.v1Before(x, y));
  private readonly v1 = {
    flags: new Uint8Array(0),
    pair: new Int32Array(0),
    vaultVersion: new Uint32Array(0),
    pairVersion: new Uint32Array(0),
    createdBlock: new Float64Array(0),
    createdLogIndex: new Uint32Array(0),
    firstBlock: new Uint32Array(0),
    updatedBlock: new Uint32Array(0),
  };

  /** v1_pair_version, by (vault, delegate). */
  private readonly pairs = new ByteKeys(40);
  private pairVersion = new Uint32Array(0);
  private pairUpdated = new Uint32Array(0);

  /** numbered's scopes, one check's at a time. */
  private readonly wanted: NumberedScope[] = Array.from({ length: MOST_SCOPES }, () => ({
    held: false,
    type: 0,
    rights: 0,
    contract: NONE,
    tokenId: null,
    tokenCell: 0,
  }));
  /** Scratch for the key being looked up, one per kind (a v1 key's lookup also looks up addresses). */
  private readonly scratch = { address: new Uint8Array(20), hash: new Uint8Array(32), v1: new Uint8Array(93) };

  /**
   * Gives back the room its columns grew into and do not use: a copy loaded whole, in each worker,
   * left up to half of each unused (docs/performance.md, "The replicas' memory, trimmed").
   */
  trim() {
    const [addresses, pairs] = [this.addresses.size, this.pairs.size];
    for (const keys of [this.addresses, this.v2Keys, this.v1Keys, this.pairs]) keys.trim();
    this.v2Lists.trim(this.v2Keys.size, addresses);
    this.v1Lists.trim(this.v1Keys.size, addresses);
    this.v2Pairs.trim();
    trimRows(this.v2, this.v2Keys.size);
    this.v2TokenId.trim(this.v2Keys.size);
    this.v2Amount.trim(this.v2Keys.size);
    trimRows(this.v1, this.v1Keys.size);
    this.vaultVersion = trimmed(this.vaultVersion, addresses);
    this.vaultUpdated = trimmed(this.vaultUpdated, addresses);
    this.listingChanges = trimmed(this.listingChanges, addresses);
    this.checksumCase = trimmed(this.checksumCase, addresses * CHECKSUM_CASE_BYTES);
    this.checksumCaseKnown = trimmed(this.checksumCaseKnown, addresses);
    this.pairVersion = trimmed(this.pairVersion, pairs);
    this.pairUpdated = trimmed(this.pairUpdated, pairs);
  }

  /** Puts a row as the database now has it, or removes it (`undefined`: it no longer exists). */
  put(key: string, r: StateRow | undefined, final: number) {
    if (r === undefined) return this.remove(key);
    switch (r.table) {
      case "v2":
        this.putV2(r.row);
        break;
      case "v1":
        this.putV1(r.row);
        break;
      case "vault": {
        // Numbered first: numbering may grow the array.
        const vault = this.address(r.row.vault);
        this.vaultVersion[vault] = r.row.version;
        this.vaultUpdated[vault] = heldBlock(r.row.updatedBlock);
        this.vaultChanged(vault);
        break;
      }
      case "pair": {
        const pair = this.pair(r.row.vault, r.row.delegate!);
        this.pairVersion[pair] = r.row.version;
        this.pairUpdated[pair] = heldBlock(r.row.updatedBlock);
        this.listingsChanged(this.address(r.row.vault), this.address(r.row.delegate!));
        break;
      }
    }
    if (r.row.updatedBlock > final) {
      const set = this.touched.get(r.row.updatedBlock) ?? new Set();
      set.add(key);
      this.touched.set(r.row.updatedBlock, set);
    }
  }

  private putV2(row: V2Entry) {
    const id = this.v2Keys.add(this.hashBytes(row.hash));
    withRows(this.v2, id + 1);
    const live = (this.v2.flags[id]! & LIVE) !== 0;
    // A hash names its wallets, and its place is fixed by its first enable: only a row new here
    // (or put back in another place by a reorganization) enters the wallet lists.
    const samePlace =
      live && this.v2.firstBlock[id] === row.firstBlock && this.v2.firstLogIndex[id] === row.firstLogIndex;
    if (live && !samePlace) this.v2Lists.unlink(id);
    this.v2.flags[id] = LIVE | (row.enabled ? ENABLED : 0);
    this.v2.type[id] = V2_DELEGATION_TYPES.indexOf(row.delegationType);
    this.v2.contract[id] = row.contract === null ? NONE : this.address(row.contract);
    this.v2.rights[id] = this.rightsNumberOf(row.rights);
    this.v2.firstBlock[id] = row.firstBlock;
    this.v2.firstLogIndex[id] = row.firstLogIndex;
    this.v2.updatedBlock[id] = heldBlock(row.updatedBlock);
    this.v2TokenId.set(id, row.tokenId);
    this.v2Amount.set(id, row.amount);
    const [from, to] = [this.address(row.from), this.address(row.to)];
    this.v2Pairs.add(id, from, to);
    if (!samePlace) this.v2Lists.link(id, from, to);
    this.listingsChanged(from, to);
  }

  private putV1(row: V1Entry) {
    const id = this.v1Keys.add(this.v1KeyBytes(row));
    withRows(this.v1, id + 1);
    const [vault, delegate] = [this.address(row.vault), this.address(row.delegate)];
    const live = (this.v1.flags[id]! & LIVE) !== 0;
    // Unlike a v2 row's, a key's place moves: it is made again, at new versions, at a later log.
    const samePlace =
      live && this.v1.createdBlock[id] === row.createdBlock && this.v1.createdLogIndex[id] === row.createdLogIndex;
    if (live && !samePlace) this.v1Lists.unlink(id);
    this.listingsChanged(vault, delegate);
    this.v1.flags[id] = LIVE | (row.enabled ? ENABLED : 0);
    this.v1.pair[id] = this.pair(row.vault, row.delegate);
    this.v1.vaultVersion[id] = row.vaultVersion;
    this.v1.pairVersion[id] = row.pairVersion;
    this.v1.createdBlock[id] = row.createdBlock;
    this.v1.createdLogIndex[id] = row.createdLogIndex;
    // Held no later than it is, so a block before it held is before it.
    this.v1.firstBlock[id] = heldBlock(row.firstBlock);
    this.v1.updatedBlock[id] = heldBlock(row.updatedBlock);
    if (!samePlace) this.v1Lists.link(id, vault, delegate);
  }

  private remove(key: string) {
    const [table, id] = [key.slice(0, key.indexOf(":")), key.slice(key.indexOf(":") + 1)];
    if (table === "v2") {
      const row = this.v2Keys.find(this.hashBytes(id as Hex));
      if (row === NONE || (this.v2.flags[row]! & LIVE) === 0) return;
      this.listingsChanged(...this.v2Lists.wallets(row));
      this.v2Lists.unlink(row);
      this.v2.flags[row] = 0;
    } else if (table === "v1") {
      const row = this.v1Keys.find(this.v1KeyBytes(v1KeyOfString(id)));
      if (row === NONE || (this.v1.flags[row]! & LIVE) === 0) return;
      this.listingsChanged(...this.v1Lists.wallets(row));
      this.v1Lists.unlink(row);
      this.v1.flags[row] = 0;
    } else if (table === "vault") {
      const vault = this.findAddress(id as Address);
      if (vault === NONE) return;
      this.vaultVersion[vault] = 0;
      this.vaultUpdated[vault] = 0;
      this.vaultChanged(vault);
    } else {
      const [vault, delegate] = id.split("|") as [Address, Address];
      const pair = this.pairs.find(this.pairBytes(vault, delegate));
      if (pair === NONE) return;
      this.pairVersion[pair] = 0;
      this.pairUpdated[pair] = 0;
      this.listingsChanged(this.findAddress(vault), this.findAddress(delegate));
    }
  }

  /** The revision of the wallet's listings (v2 and v1): it moves whenever either may have changed. */
  walletRevision(wallet: Address): string {
    const id = this.findAddress(wallet);
    return `${this.serial}.${id === NONE ? 0 : this.listingChanges[id]}`;
  }

  private listingsChanged(...wallets: number[]) {
    for (const id of wallets) if (id !== NONE) this.listingChanges[id] = this.listingChanges[id]! + 1;
  }

  /** A vault's version voids or restores its rows: their delegates' listings change too. */
  private vaultChanged(vault: number) {
    this.listingsChanged(vault);
    for (const row of this.v1Lists.rows(vault)) this.listingsChanged(...this.v1Lists.wallets(row));
  }

  /** The keys of every row changed after block `after`. */
  touchedAfter(after: number): Set<string> {
    const keys = new Set<string>();
    for (const [block, set] of this.touched) if (block > after) for (const key of set) keys.add(key);
    return keys;
  }

  /** Forgets which rows changed after block `after` (once they have been read again). */
  forgetTouchedAfter(after: number) {
    for (const block of this.touched.keys()) if (block > after) this.touched.delete(block);
  }

  /** Forgets the bookkeeping of blocks that are final: they cannot be reorganized away. */
  finalize(final: number) {
    for (const block of this.touched.keys()) if (block <= final) this.touched.delete(block);
    for (const block of this.fingerprints.keys()) if (block <= final) this.fingerprints.delete(block);
  }

  v2Enabled(hashes: readonly Hex[]): Map<Hex, V2State> {
    return this.v2EnabledUnless(hashes, () => AS_HELD)!;
  }

  /**
   * v2Enabled as at `block`, when it is at most the one this holds and none of the hashes' rows
   * changed after it (every change a check depends on rewrites a candidate row and its updated
   * block), but for those first enabled after it, which held nothing then. Undefined: one did, and
   * the answer is the history's.
   */
  v2EnabledAt(hashes: readonly Hex[], block: number): Map<Hex, V2State> | undefined {
    if (block > this.block) return undefined;
    return this.v2EnabledUnless(hashes, this.v2RowAt(block));
  }

  /** The enabled rows among `hashes` `at` a block, in one pass; undefined once a live row is untold. */
  private v2EnabledUnless(hashes: readonly Hex[], at: RowAt): Map<Hex, V2State> | undefined {
    const out = new Map<Hex, V2State>();
    for (const hash of hashes) {
      if (!this.v2Consult(this.v2Keys.find(this.hashBytes(hash)), hash, at, out)) return undefined;
    }
    return out;
  }

  /** v2Enabled of the delegations the checks consult, by their scope objects. */
  v2Consulted(checks: readonly V2Check[]): Told<V2Check, Map<V2Scope, V2State>> {
    return this.v2ConsultedUnless(checks, () => AS_HELD);
  }

  /**
   * v2Consulted as at `block`, as v2EnabledAt but check by check: `untold`, those a row they
   * consult changed after `block`, not first enabled after it (their answers are the history's).
   * Undefined past the block held.
   */
  v2ConsultedAt(checks: readonly V2Check[], block: number): Told<V2Check, Map<V2Scope, V2State>> | undefined {
    if (block > this.block) return undefined;
    return this.v2ConsultedUnless(checks, this.v2RowAt(block));
  }

  /**
   * The enabled rows the checks consult `at` a block; a check with a live one untold is untold. A
   * check's rows are found by their fields among its pair's rows, without hashing (most pairs a
   * snapshot asks about have none; a party the copy has never seen has none); by its hashes when
   * its pair has more than SCAN_ROWS rows.
   */
  private v2ConsultedUnless(checks: readonly V2Check[], at: RowAt): Told<V2Check, Map<V2Scope, V2State>> {
    const out = new Map<V2Scope, V2State>();
    const untold = new Set<V2Check>();
    for (const check of checks) {
      const { scopes } = check;
      if (scopes.length === 0) continue;
      const from = this.findAddress(check.from);
      const to = from === NONE ? NONE : this.findAddress(check.to);
      if (to === NONE) continue;
      const count = this.v2Pairs.count(from, to);
      if (count > SCAN_ROWS) {
        // Read here only: a check is hashed when its hashes are first read.
        const { hashes } = check;
        for (let i = 0; i < scopes.length; i++) {
          if (this.v2Consult(this.v2Keys.find(this.hashBytes(hashes[i]!)), scopes[i]!, at, out)) continue;
          untold.add(check);
          break;
        }
        continue;
      }
      // The scopes as this numbers fields, once the pair has a row.
      let wanted: readonly NumberedScope[] | undefined;
      // The next row read only when there is one: most pairs have one row, and each read misses the cache.
      for (let row = this.v2Pairs.first(from, to), left = count; left > 0; left--) {
        if (left < count) row = this.v2Pairs.next(row);
        wanted ??= this.numbered(scopes);
        const i = this.heldScope(row, wanted, scopes.length);
        if (i < 0 || this.v2Consult(row, scopes[i]!, at, out)) continue;
        untold.add(check);
        break;
      }
    }
    return { found: out, untold };
  }

  /** Puts row `row`'s state in `out` under `key` if it is enabled; false if it is live and untold `at`. */
  private v2Consult<K>(row: number, key: K, at: RowAt, out: Map<K, V2State>): boolean {
    if (row === NONE || (this.v2.flags[row]! & LIVE) === 0) return true;
    const then = at(row);
    if (then === UNTOLD) return false;
    if (then === AS_HELD && this.v2.flags[row] === (LIVE | ENABLED))
      out.set(key, { enabled: true, amount: this.v2Amount.get(row) ?? 0n });
    return true;
  }

  /** What each v2 row says of `block` (at most the one held). */
  private v2RowAt(block: number): RowAt {
    return (row) =>
      block < this.v2.firstBlock[row]! ? NOT_YET : changedAfter(this.v2.updatedBlock[row]!, block) ? UNTOLD : AS_HELD;
  }

  /**
   * Scopes' fields as rows hold them: numbers, and their tokens (null where a type has none, as in
   * rows), in `wanted`'s first scopes.length: one check's at a time, written over by the next (a
   * batch numbers 10,000). A check's scopes name one contract: it is looked up once.
   */
  private numbered(scopes: readonly V2Scope[]): readonly NumberedScope[] {
    let named: Address | undefined;
    let number = NONE;
    for (let i = 0; i < scopes.length; i++) {
      const scope = scopes[i]!;
      const out = this.wanted[i]!;
      if (scope.contract !== undefined && scope.contract !== named) {
        named = scope.contract;
        number = this.findAddress(named);
      }
      const contract = scope.contract === undefined ? NONE : number;
      // Most rights asked are the zero hash, which has no case: no lowercase copy made for them.
      const rights = this.rightsNumber.get(scope.rights) ?? this.rightsNumber.get(scope.rights.toLowerCase() as Hex);
      out.held = rights !== undefined && (contract !== NONE || scope.contract === undefined);
      if (!out.held) continue;
      out.type = V2_DELEGATION_TYPES.indexOf(scope.type);
      out.rights = rights!;
      out.contract = contract;
      out.tokenId = scope.tokenId ?? null;
      out.tokenCell = cellOf(out.tokenId);
    }
    return this.wanted;
  }

  /** Which of the first `count` of `scopes` v2 row `row` is the delegation of (v2Holds), or -1. */
  private heldScope(row: number, scopes: readonly NumberedScope[], count: number): number {
    for (let i = 0; i < count; i++) {
      const scope = scopes[i]!;
      if (scope.held && this.v2Holds(row, scope)) return i;
    }
    return -1;
  }

  /** Whether v2 row `row` is the delegation of `scope`, its parties aside: the fields its hash is of. */
  private v2Holds(row: number, scope: NumberedScope): boolean {
    return (
      this.v2.type[row] === scope.type &&
      this.v2.rights[row] === scope.rights &&
      this.v2.contract[row] === scope.contract &&
      this.v2TokenId.holds(row, scope.tokenId, scope.tokenCell)
    );
  }

  /**
   * The vaults check `q` lets its hot wallet `q.to` act for, as core's v2Vaults finds them among
   * the wallet's enabled incoming rows (the rows matched by their fields as v2ConsultedUnless
   * matches a check's), written to `out` as the JSON of their v2VaultRecords (api/routes/records.ts):
   * made as rows, scope strings and records, a wallet of 1,000 vaults took 2.5–3 ms
   * (docs/performance.md, "Vaults from the copy"). Returns how many incoming rows it read.
   */
  v2VaultsJson(q: Omit<V2CheckQuery, "from">, out: JsonBytes): number {
    const to = this.findAddress(q.to);
    // The check as any vault that may delegate asks it: its scopes do not depend on the vault.
    const check = v2Check({ ...q, from: MAY_DELEGATE });
    const wanted = this.numbered(check.scopes);
    const never = [...INVALID_FROM].map((address) => this.findAddress(address as Address));
    const held = new Map<number, (V2State | undefined)[]>();
    let incoming = 0;
    for (let row = this.v2Lists.first(to); row !== NONE; row = this.v2Lists.next(row, to)) {
      const [from, rowTo] = this.v2Lists.wallets(row);
      if (rowTo !== to || this.v2.flags[row] !== (LIVE | ENABLED)) continue;
      incoming++;
      const scope = never.includes(from) ? -1 : this.heldScope(row, wanted, check.scopes.length);
      if (scope < 0) continue;
      const states = held.get(from) ?? [];
      states[scope] = { enabled: true, amount: this.v2Amount.get(row) ?? 0n };
      held.set(from, states);
    }
    const vaults: { vault: number; answer: true | bigint }[] = [];
    for (const [vault, states] of held) {
      const answer = check.answerOf((scope) => states[scope]);
      if (answer !== false && answer !== 0n) vaults.push({ vault, answer });
    }
    vaults.sort((a, b) => this.addressOrder(a.vault, b.vault));
    out.byte(OPEN);
    for (let i = 0; i < vaults.length; i++) {
      const { vault, answer } = vaults[i]!;
      this.spell(vault, out.raw(i === 0 ? VAULT_JSON.first : VAULT_JSON.next)).byte(QUOTE);
      if (answer === true) out.byte(CLOSE_RECORD);
      else out.raw(VAULT_JSON.amount).ascii(answer.toString()).byte(CLOSE_RECORD);
    }
    out.byte(CLOSE);
    return incoming;
  }

  /** Addresses `a` and `b` by their bytes, as their lowercase hex sorts. */
  private addressOrder(a: number, b: number): number {
    const { bytes } = this.addresses;
    const [x, y] = [this.addresses.offset(a), this.addresses.offset(b)];
    for (let i = 0; i < 20; i++) {
      const d = bytes[x + i]! - bytes[y + i]!;
      if (d !== 0) return d;
    }
    return 0;
  }

  /** The enabled delegation with this hash, if any. */
  v2Delegation(hash: Hex): V2Row | undefined {
    const row = this.v2Keys.find(this.hashBytes(hash));
    return row !== NONE && this.v2.flags[row] === (LIVE | ENABLED) ? this.v2Row(row) : undefined;
  }

  /** The wallet's enabled rows; with `spelt`, the EIP-55 spelling of each address they name is kept there. */
  v2Wallet(wallet: Address, spelt?: Spellings): V2Row[] {
    return this.v2Lists
      .rows(this.findAddress(wallet))
      .filter((row) => this.v2.flags[row] === (LIVE | ENABLED))
      .map((row) => this.v2Row(row, spelt));
  }

  /**
   * v2Wallet as at `block` (at most the one held), when each of the wallet's rows is told then
   * (v2RowAt): those first enabled after it are not yet listed. Undefined: one changed after it.
   */
  v2WalletAt(wallet: Address, block: number, spelt?: Spellings): V2Row[] | undefined {
    if (block > this.block) return undefined;
    const at = this.v2RowAt(block);
    const listed: number[] = [];
    const listing = this.findAddress(wallet);
    for (let row = this.v2Lists.first(listing); row !== NONE; row = this.v2Lists.next(row, listing)) {
      const then = at(row);
      if (then === UNTOLD) return undefined;
      if (then === AS_HELD && this.v2.flags[row] === (LIVE | ENABLED)) listed.push(row);
    }
    return listed.map((row) => this.v2Row(row, spelt));
  }

  /**
   * A page of v2WalletAt's listing in `direction`, written to `out` as the JSON of a list of its
   * records (v2WalletsJson's): its rows after `page.after`, in first-enable order as the history
   * pages them (api/store/history-store.ts), `page.limit` at most (undefined: all the rest).
   * Undefined: a row the page reads changed after `block`; rows before the page, and past it, are
   * not read.
   */
  v2WalletPageJson(
    wallet: Address,
    block: number,
    direction: Direction,
    page: PageRequest,
    out: JsonBytes,
  ): WrittenPage | undefined {
    if (block > this.block) return undefined;
    const at = this.v2RowAt(block);
    const { after, limit = Number.POSITIVE_INFINITY } = page;
    const [afterBlock, afterLog] = after === undefined ? [-1, -1] : [Number(after.block), after.logIndex];
    const id = this.findAddress(wallet);
    const { firstBlock, firstLogIndex } = this.v2;
    const written = new PageWriter(out);
    for (let row = this.v2Lists.first(id); row !== NONE; row = this.v2Lists.next(row, id)) {
      const [rowBlock, rowLog] = [firstBlock[row]!, firstLogIndex[row]!];
      if (rowBlock < afterBlock || (rowBlock === afterBlock && rowLog <= afterLog)) continue;
      if (direction !== "both" && this.v2Lists.wallets(row)[direction === "incoming" ? 1 : 0] !== id) continue;
      const then = at(row);
      if (then === UNTOLD) return undefined;
      if (then !== AS_HELD || this.v2.flags[row] !== (LIVE | ENABLED)) continue;
      if (written.count >= limit) return written.end(true);
      this.v2RecordJson(row, written.next(rowBlock, rowLog));
    }
    return written.end(false);
  }

  /**
   * The v2 listings of `wallets` in `direction`, each as v2Wallet lists it (at `block`, v2WalletAt),
   * written to `out` as the JSON of a list of each one's records; how many records. Past `most` it
   * stops (more than `most`: the JSON is not whole). Undefined: a wallet is not told at `block`.
   */
  v2WalletsJson(
    wallets: readonly Address[],
    direction: Direction,
    block: number | undefined,
    most: number,
    out: JsonBytes,
  ): number | undefined {
    if (block !== undefined && block > this.block) return undefined;
    const at = block === undefined ? undefined : this.v2RowAt(block);
    let records = 0;
    out.byte(OPEN);
    for (let i = 0; i < wallets.length; i++) {
      out.ascii(i === 0 ? "[" : ",[");
      const wallet = this.findAddress(wallets[i]!);
      let listed = 0;
      for (let row = this.v2Lists.first(wallet); row !== NONE; row = this.v2Lists.next(row, wallet)) {
        const then = at === undefined ? AS_HELD : at(row);
        if (then === UNTOLD) return undefined;
        if (then !== AS_HELD || this.v2.flags[row] !== (LIVE | ENABLED)) continue;
        if (direction !== "both" && this.v2Lists.wallets(row)[direction === "incoming" ? 1 : 0] !== wallet) continue;
        if (++records > most) return records;
        if (listed++ > 0) out.byte(COMMA);
        this.v2RecordJson(row, out);
      }
      out.byte(CLOSE);
    }
    out.byte(CLOSE);
    return records;
  }

  /** The keys among `keys` in force, in creation order: the keys themselves, not rows rebuilt from bytes. */
  v1InForce(keys: readonly V1Key[]): V1Row[] {
    return this.v1InForceUnless(keys, HELD)!;
  }

  /**
   * v1InForce as at `block`, when it is at most the one this holds and each key's row tells it
   * (v1RowAt). Undefined: one does not.
   */
  v1InForceAt(keys: readonly V1Key[], block: number): V1Row[] | undefined {
    if (block > this.block) return undefined;
    return this.v1InForceUnless(keys, this.v1RowAt(block));
  }

  /** The keys in force among `keys`, in one pass; undefined once a live key row is untold `at`. */
  private v1InForceUnless(keys: readonly V1Key[], at: RowAt): V1Row[] | undefined {
    const found: { row: number; key: V1Key }[] = [];
    if (!this.v1EachInForce(keys, at, (row, key) => found.push({ row, key }))) return undefined;
    return this.sortV1(found, (f) => f.row).map((f) => f.key);
  }

  /** v1InForce as a set of the key objects given (a key asked twice is looked up twice), in no order. */
  v1Consulted(keys: readonly V1Key[]): Told<V1Key, Set<V1Key>> {
    const found = new Set<V1Key>();
    this.v1EachInForce(keys, HELD, (_, key) => found.add(key));
    return { found, untold: new Set() };
  }

  /** v1Consulted as at `block`, as v1InForceAt but key by key: `untold`, those whose rows do not tell it. */
  v1ConsultedAt(keys: readonly V1Key[], block: number): Told<V1Key, Set<V1Key>> | undefined {
    if (block > this.block) return undefined;
    const [found, untold] = [new Set<V1Key>(), new Set<V1Key>()];
    this.v1EachInForce(
      keys,
      this.v1RowAt(block),
      (_, key) => found.add(key),
      (key) => untold.add(key),
    );
    return { found, untold };
  }

  /**
   * What each v1 row says of `block` (at most the one held): nothing in force before its key was
   * first written; untold where its own row, its vault's version or its pair's changed since.
   */
  private v1RowAt(block: number): RowAt {
    return (row) =>
      block < this.v1.firstBlock[row]!
        ? NOT_YET
        : changedAfter(this.v1.updatedBlock[row]!, block) ||
            changedAfter(this.vaultUpdated[this.v1Lists.wallets(row)[0]]!, block) ||
            changedAfter(this.pairUpdated[this.v1.pair[row]!]!, block)
          ? UNTOLD
          : AS_HELD;
  }

  /**
   * Calls `found` for each key in force `at`, with its row. Once a live key row is untold: `untold`
   * of the key, or without it, false (stopping). A pair the copy never numbered has no key: most a
   * snapshot asks about. A check's keys come together with one pair (v1CheckKeys): it is read and
   * looked up once a check, not once a key.
   */
  private v1EachInForce(
    keys: readonly V1Key[],
    at: RowAt,
    found: (row: number, key: V1Key) => void,
    untold?: (key: V1Key) => void,
  ): boolean {
    let last: V1Key | undefined;
    let numbered = false;
    for (const key of keys) {
      if (key.vault !== last?.vault || key.delegate !== last.delegate) {
        numbered = this.pairs.find(this.pairBytes(key.vault, key.delegate)) !== NONE;
      }
      last = key;
      if (!numbered) continue;
      // The scratch still begins with the pair's bytes: only the key's rest is written after them.
      const row = this.v1Keys.find(this.withKeyRest(this.scratch.v1, key));
      if (row === NONE || (this.v1.flags[row]! & LIVE) === 0) continue;
      const then = at(row);
      if (then === UNTOLD) {
        if (untold === undefined) return false;
        untold(key);
      } else if (then === AS_HELD && this.inForce(row)) found(row, key);
    }
    return true;
  }

  /** The wallet's rows in force; with `spelt`, as v2Wallet (but their contracts, which this does not number). */
  v1Wallet(wallet: Address, spelt?: Spellings): V1Row[] {
    return this.v1Lists
      .rows(this.findAddress(wallet))
      .filter((row) => this.inForce(row))
      .map((row) => this.v1Row(row, spelt));
  }

  /**
   * A page of the wallet's v1 listing in `direction` as at `block` (at most the one held), written to
   * `out` as v2WalletPageJson's: its rows in force then after `page.after`, in creation order as the
   * history pages them (api/store/history-store.ts), `page.limit` at most (undefined: all the rest).
   * Undefined: a row of the wallet's in `direction` is untold then (v1RowAt).
   */
  v1WalletPageJson(
    wallet: Address,
    block: number,
    direction: Direction,
    page: PageRequest,
    out: JsonBytes,
  ): WrittenPage | undefined {
    if (block > this.block) return undefined;
    const at = this.v1RowAt(block);
    const id = this.findAddress(wallet);
    const [afterBlock, afterLog] =
      page.after === undefined ? [-1, -1] : [Number(page.after.block), page.after.logIndex];
    const { createdBlock, createdLogIndex } = this.v1;
    const { limit = Number.POSITIVE_INFINITY } = page;
    const written = new PageWriter(out);
    let more = false;
    // Every row is read, those past the page too: one made again after `block` may have been in
    // force then at an earlier place, which only its being untold says.
    for (let row = this.v1Lists.first(id); row !== NONE; row = this.v1Lists.next(row, id)) {
      if ((this.v1.flags[row]! & LIVE) === 0) continue;
      if (direction !== "both" && this.v1Lists.wallets(row)[direction === "incoming" ? 1 : 0] !== id) continue;
      const then = at(row);
      if (then === UNTOLD) return undefined;
      if (more || then !== AS_HELD) continue;
      const [rowBlock, rowLog] = [createdBlock[row]!, createdLogIndex[row]!];
      if (rowBlock < afterBlock || (rowBlock === afterBlock && rowLog <= afterLog) || !this.inForce(row)) continue;
      if (written.count >= limit) more = true;
      else this.v1RecordJson(row, written.next(rowBlock, rowLog));
    }
    return written.end(more);
  }

  private inForce(row: number): boolean {
    if ((this.v1.flags[row]! & LIVE) === 0) return false;
    const state = {
      enabled: (this.v1.flags[row]! & ENABLED) !== 0,
      vaultVersion: this.v1.vaultVersion[row]!,
      pairVersion: this.v1.pairVersion[row]!,
    };
    const [vault] = this.v1Lists.wallets(row);
    return v1InForce(state, { vault: this.vaultVersion[vault]!, pair: this.pairVersion[this.v1.pair[row]!]! });
  }

  private v2Before(x: number, y: number): boolean {
    const [bx, by] = [this.v2.firstBlock[x]!, this.v2.firstBlock[y]!];
    return bx < by || (bx === by && this.v2.firstLogIndex[x]! < this.v2.firstLogIndex[y]!);
  }

  private v1Before(x: number, y: number): boolean {
    const [bx, by] = [this.v1.createdBlock[x]!, this.v1.createdBlock[y]!];
    return bx < by || (bx === by && this.v1.createdLogIndex[x]! < this.v1.createdLogIndex[y]!);
  }

  /** `items` in their rows' creation order (`rowOf`: each item's row). */
  private sortV1<T>(items: T[], rowOf: (item: T) => number): T[] {
    const [block, logIndex] = [this.v1.createdBlock, this.v1.createdLogIndex];
    return items.sort((a, b) => {
      const [x, y] = [rowOf(a), rowOf(b)];
      return block[x]! - block[y]! || logIndex[x]! - logIndex[y]!;
    });
  }

  private v2Row(row: number, spelt?: Spellings): V2Row {
    const [from, to] = this.v2Lists.wallets(row);
    const contract = this.v2.contract[row]!;
    return {
      hash: this.v2Keys.hex(row) as Hex,
      delegationType: V2_DELEGATION_TYPES[this.v2.type[row]!] as V2DelegationType,
      from: this.addressText(from, spelt),
      to: this.addressText(to, spelt),
      contract: contract === NONE ? null : this.addressText(contract, spelt),
      tokenId: this.v2TokenId.get(row),
      rights: this.rights[this.v2.rights[row]!]!,
      amount: this.v2Amount.get(row),
    };
  }

  /**
   * Row `row` as JSON, as api/routes/records.ts's v2Record of its v2Row is written (api/http/json.ts):
   * the same fields in the same order, addresses spelt, integers as digits (held to it by
   * chain-state.test.ts).
   */
  private v2RecordJson(row: number, out: JsonBytes) {
    const [from, to] = this.v2Lists.wallets(row);
    const contract = this.v2.contract[row]!;
    const type = this.v2.type[row]!;
    const [tokenId, amount] = [this.v2TokenId.digits(row), this.v2Amount.digits(row)];
    this.spell(from, out.raw(V2_JSON.type[type]!)).raw(V2_JSON.to);
    this.spell(to, out).raw(V2_JSON.contract);
    if (contract === NONE) out.raw(V2_JSON.null);
    else this.spell(contract, out.byte(QUOTE)).byte(QUOTE);
    out.raw(V2_JSON.tokenId);
    if (tokenId === undefined) out.raw(V2_JSON.null);
    else out.ascii(tokenId);
    out.raw(V2_JSON.delegationType[type]!).ascii(this.rights[this.v2.rights[row]!]!).raw(V2_JSON.amount);
    if (amount === undefined) out.raw(V2_JSON.null);
    else out.ascii(amount);
    out.raw(V2_JSON.hash).hex(this.v2Keys.bytes, this.v2Keys.offset(row), 32).raw(V2_JSON.end);
  }

  /**
   * Row `row` as JSON, as api/routes/records.ts's v1Record of its v1Row is written (api/http/json.ts),
   * as v2RecordJson is v2Record's.
   */
  private v1RecordJson(row: number, out: JsonBytes) {
    const [vault, delegate] = this.v1Lists.wallets(row);
    const type = this.v1Keys.byte(row, V1_KEY.type);
    this.spell(vault, out.raw(V1_JSON.type[type]!)).raw(V1_JSON.delegate);
    this.spell(delegate, out).raw(V1_JSON.contract);
    if (V1_TYPES[type] === "ALL") out.raw(V2_JSON.null);
    else this.spellV1Contract(row, out.byte(QUOTE)).byte(QUOTE);
    out.raw(V1_JSON.tokenId);
    if (V1_TYPES[type] === "TOKEN") out.ascii(BigInt(this.v1Keys.hex(row, V1_KEY.tokenId, 32)).toString());
    else out.raw(V2_JSON.null);
    out.byte(CLOSE_RECORD);
  }

  /**
   * Writes `address` (0x and 40 hex digits, as the tables hold it) to `out` as a JSON string in its
   * EIP-55 case, where the copy holds it: a page of the history spelt without hashing (records.ts).
   * False, and nothing written, where it does not. Bound: a store hands it out (api/store/store.ts, AddressJson).
   */
  readonly addressJson = (address: string, out: JsonBytes): boolean => {
    if (address.length !== 42) return false;
    const id = this.findAddress(address as Address);
    if (id === NONE) return false;
    this.spell(id, out.byte(QUOTE)).byte(QUOTE);
    return true;
  };

  /** Writes address `id` to `out` in its EIP-55 case. */
  private spell(id: number, out: JsonBytes): JsonBytes {
    return out.address(this.addresses.bytes, this.addresses.offset(id), this.checksumCase, this.caseOf(id));
  }

  /**
   * Writes v1 row `row`'s contract in its EIP-55 case: by its number where the copy holds it (a v1
   * key's contract mostly is a v2 delegation's too), else as core spells it (which keeps a memo).
   */
  private spellV1Contract(row: number, out: JsonBytes): JsonBytes {
    const { address } = this.scratch;
    const at = this.v1Keys.offset(row) + V1_KEY.contract;
    address.set(this.v1Keys.bytes.subarray(at, at + 20));
    const id = this.addresses.find(address);
    return id === NONE ? out.ascii(checksumAddress(this.v1Keys.hex(row, V1_KEY.contract, 20))) : this.spell(id, out);
  }

  /** Where address `id`'s EIP-55 case lies in checksumCase, worked out the first time it is asked. */
  private caseOf(id: number): number {
    const at = id * CHECKSUM_CASE_BYTES;
    if (this.checksumCaseKnown[id] === 0) {
      writeChecksumCase(this.addresses.hex(id), this.checksumCase, at);
      this.checksumCaseKnown[id] = 1;
    }
    return at;
  }

  private v1Row(row: number, spelt?: Spellings): V1Row {
    const [vault, delegate] = this.v1Lists.wallets(row);
    return {
      type: V1_TYPES[this.v1Keys.byte(row, V1_KEY.type)]!,
      vault: this.addressText(vault, spelt),
      delegate: this.addressText(delegate, spelt),
      contract: this.v1Keys.hex(row, V1_KEY.contract, 20),
      tokenId: BigInt(this.v1Keys.hex(row, V1_KEY.tokenId, 32)),
    };
  }

  /** The address's number, numbering it if new. */
  private address(address: Address): number {
    writeHex(this.scratch.address, 0, address);
    const id = this.addresses.add(this.scratch.address);
    this.vaultVersion = withRoom(this.vaultVersion, id + 1);
    this.vaultUpdated = withRoom(this.vaultUpdated, id + 1);
    this.listingChanges = withRoom(this.listingChanges, id + 1);
    this.checksumCase = withRoom(this.checksumCase, (id + 1) * CHECKSUM_CASE_BYTES);
    this.checksumCaseKnown = withRoom(this.checksumCaseKnown, id + 1);
    return id;
  }

  /** Address `id` as lowercase text; with `spelt`, its EIP-55 spelling is kept there by that text. */
  private addressText(id: number, spelt: Spellings | undefined): Address {
    const text = this.addresses.hex(id);
    if (spelt !== undefined && !spelt.has(text))
      spelt.set(text, withChecksumCase(text, this.checksumCase, this.caseOf(id)));
    return text;
  }

  private findAddress(address: Address): number {
    writeHex(this.scratch.address, 0, address);
    return this.addresses.find(this.scratch.address);
  }

  /** The pair's number, numbering it if new. */
  private pair(vault: Address, delegate: Address): number {
    const id = this.pairs.add(this.pairBytes(vault, delegate));
    this.pairVersion = withRoom(this.pairVersion, id + 1);
    this.pairUpdated = withRoom(this.pairUpdated, id + 1);
    return id;
  }

  /** A pair's key: vault and delegate, as a v1 key begins. */
  private pairBytes(vault: Address, delegate: Address): Uint8Array {
    const key = this.scratch.v1;
    writeHex(key, 0, vault);
    writeHex(key, 20, delegate);
    return key;
  }

  private hashBytes(hash: Hex): Uint8Array {
    writeHex(this.scratch.hash, 0, hash);
    return this.scratch.hash;
  }

  private v1KeyBytes(k: V1Key): Uint8Array {
    return this.withKeyRest(this.pairBytes(k.vault, k.delegate), k);
  }

  /** `pair` (pairBytes of the key's vault and delegate) made the key's bytes: its type, contract and token after. */
  private withKeyRest(pair: Uint8Array, k: V1Key): Uint8Array {
    pair[V1_KEY.type] = V1_TYPES.indexOf(k.type);
    writeHex(pair, V1_KEY.contract, k.contract);
    writeUint256(pair, V1_KEY.tokenId, k.tokenId);
    return pair;
  }

  private rightsNumberOf(rights: Hex): number {
    // Lowercase, as a check's rights are looked up (numbered).
    rights = rights.toLowerCase() as Hex;
    let n = this.rightsNumber.get(rights);
    if (n === undefined) {
      n = this.rights.push(rights) - 1;
      this.rightsNumber.set(rights, n);
    }
    return n;
  }
}

/** What v2WalletPageJson tells of the page it wrote (its JSON aside). */
type WrittenPage = Omit<PageJson, "json">;

/** Writes a page's records as the JSON of a list, counting them and keeping the last one's position. */
class PageWriter {
  count = 0;
  private lastBlock = 0;
  private lastLog = 0;

  constructor(private readonly out: JsonBytes) {
    out.byte(OPEN);
  }

  /** Where the next record, at `block` and `logIndex`, is to be written. */
  next(block: number, logIndex: number): JsonBytes {
    if (this.count++ > 0) this.out.byte(COMMA);
    [this.lastBlock, this.lastLog] = [block, logIndex];
    return this.out;
  }

  end(more: boolean): WrittenPage {
    this.out.byte(CLOSE);
    const last = this.count === 0 ? undefined : { block: BigInt(this.lastBlock), logIndex: this.lastLog };
    return { count: this.count, last, more };
  }
}
