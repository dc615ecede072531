/**
 * The seeded dataset of the API measurements: a registry history made at random from a seed — the
 * events themselves and every row the indexer derives from them — and the state it amounts to at
 * the end of every block (what each check, listing and page must answer).
 *
 * Each growth step spreads its new delegations over blocks mined for it (each block's share drawn at
 * random: many hold a few, some none, a few a burst), and makes every event in block and log order,
 * with the rows the indexer writes for it (core/v2-rows.ts, core/v1-rows.ts; chain_head aside: the
 * indexer's own, see api/store/store.ts's INDEXED_BLOCK_SQL):
 * - v2: a delegation's first enable at its first_block/first_log_index; some are revoked later, some
 *   of those enabled again, some amounts changed. Its whole fate is drawn when it is made (its later
 *   events queued for their blocks); its v2_delegation row is written with its last event.
 * - v1: delegateFor* events; some keys set false later, some of those true again; before some new
 *   delegations the vault calls revokeAllDelegates, or the pair is revoked (the vault's
 *   revokeDelegate, logged as RevokeDelegate(vault, vault), or the delegate's revokeSelf).
 *   v1_delegation and the counters are written after the step, at their final values.
 * Every event carries its block's hash and time as the chain has them. Hot wallets (listings, wallet
 * histories, pages) get all their delegations in the first part of the step, each in force from its
 * one event, with one-off counterparts: their lists and histories hold exactly their own. So do the
 * v2 hot wallets that are only delegated to, each delegation from a vault of its own (the vaults a
 * hot wallet may act for), and the small v2 wallets of bulk listings.
 */
import { type Address, type Hex, zeroAddress, zeroHash } from "viem";
import type { V1EventRow as HistoryV1EventRow, V2EventRow as HistoryV2EventRow } from "../api/store/history-store";
import type { V1Row, V2Row } from "../api/store/store";
import type { EventPlace } from "../core/rows";
import { type V1CheckQuery, type V1Key, type V1Type, v1InForce, v1KeyString } from "../core/v1";
import { v1DelegateWrites, v1RevokeWrites } from "../core/v1-rows";
import { isAmountType, type V2CheckQuery, type V2DelegationType, type V2State, v2DelegationHash } from "../core/v2";
import { v2Writes } from "../core/v2-rows";
import { Rng } from "../devkit/random";
import { WRITE_RIGHTS } from "../devkit/v2/generate";
import { LOG_EVENT_TYPE, ponderCheckpoint } from "../ponder/ponder-0.16.10";
import type {
  v1Delegation,
  v1DelegationChange,
  v1Event,
  v1PairVersion,
  v1VaultVersion,
  v1VersionChange,
  v2Delegation,
  v2Event,
} from "../ponder.schema";

/** Rows as written, with the types the API reads them as (api/store/store.ts, api/store/history-store.ts). */
export type V2DelegationRow = typeof v2Delegation.$inferInsert & V2Row;
export type V2EventRow = typeof v2Event.$inferInsert & HistoryV2EventRow;
export type V1DelegationRow = typeof v1Delegation.$inferInsert & V1Row;
export type V1EventRow = typeof v1Event.$inferInsert & HistoryV1EventRow;
export type V1ChangeRow = typeof v1DelegationChange.$inferInsert;
export type V1VersionChangeRow = typeof v1VersionChange.$inferInsert;
export type VaultVersionRow = typeof v1VaultVersion.$inferInsert;
export type PairVersionRow = typeof v1PairVersion.$inferInsert;

/** A block the history is spread over: its number, and its hash and time as the chain has them. */
export type SeedBlock = { number: bigint; hash: Hex; timestamp: bigint };

/** Rows of one growth step, a batch at a time, in the order they were made. */
export type RowBatch = {
  v2Delegations: V2DelegationRow[];
  v2Events: V2EventRow[];
  v1Events: V1EventRow[];
  v1Changes: V1ChangeRow[];
  v1VersionChanges: V1VersionChangeRow[];
};

/** What one growth step writes: its batches, then the state rows only the whole step settles. */
export type Growth = {
  batches: Iterable<RowBatch>;
  /** After the batches: the v1 delegations this step created and the counters it moved, at their final values. */
  final(): { v1Delegations: V1DelegationRow[]; vaults: VaultVersionRow[]; pairs: PairVersionRow[] };
};

/** A hot wallet: its delegations as listed and its events, in order (one event each). */
export type HotWallet<Row, Event> = { size: number; rows: Row[]; events: Event[] };

/**
 * The hot wallets a growth step adds, by their numbers of delegations: `both` per version, half
 * delegating and half delegated to; v2 only, `incoming` (only delegated to) and `bulk` (small
 * wallets, as `both`).
 */
export type HotSizes = { both: readonly number[]; incoming?: readonly number[]; bulk?: readonly number[] };

/** Hot wallets of `sizes`, kept `into` a map; `incomingOnly`: every delegation is to the wallet. */
type HotGroup<Row, Event> = {
  into: Map<Address, HotWallet<Row, Event>>;
  sizes: readonly number[];
  incomingOnly?: boolean;
};

/** One registry version's events, in order: each one's position, and a uniform sample with their index. */
export type EventLog<Event> = { positions: number[]; sample: Reservoir<{ index: number; row: Event }> };

/** Rows per batch written. */
const BATCH = 10_000;
const CONTRACTS = 1_000;
/** Token ids are drawn below this. */
export const TOKEN_IDS = 100_000;
/** Hot wallets' delegations are among this first share of each step's new delegations of their version. */
const HOT_SHARE = 0.6;
/** Listings at a past block ask at the block of this share of the step's new delegations: after every hot one. */
const SNAPSHOT_SHARE = 0.75;

const V2_TYPES: readonly (readonly [number, V2DelegationType])[] = [
  [20, "ALL"],
  [20, "CONTRACT"],
  [30, "ERC721"],
  [15, "ERC20"],
  [15, "ERC1155"],
];
const V1_TYPES: readonly (readonly [number, V1Type])[] = [
  [30, "ALL"],
  [30, "CONTRACT"],
  [40, "TOKEN"],
];

/** A random address (lowercase). */
export const randomAddress = (rng: Rng): Address => `0x${rng.bigint(160).toString(16).padStart(40, "0")}`;
const randomHash = (rng: Rng): Hex => `0x${rng.bigint(256).toString(16).padStart(64, "0")}`;
const pairString = (vault: Address, delegate: Address) => `${vault}|${delegate}`;

/** An event's place on the chain as one number, ordered as (block, log index). */
export const positionOf = (block: bigint | number, logIndex: number) => Number(block) * 2 ** 20 + logIndex;
/** The (block, log index) of a position. */
export const positionParts = (position: number) => ({
  block: BigInt(Math.floor(position / 2 ** 20)),
  logIndex: position % 2 ** 20,
});

/** An event's id as Ponder makes it (its checkpoint), with one transaction per log. */
const eventId = (chainId: number, block: SeedBlock, logIndex: number) =>
  ponderCheckpoint({
    blockTimestamp: block.timestamp,
    chainId,
    blockNumber: block.number,
    transactionIndex: logIndex,
    eventType: LOG_EVENT_TYPE,
    eventIndex: logIndex,
  });

/** A uniform sample of a stream, kept at a fixed size (reservoir sampling). */
export class Reservoir<T> {
  readonly items: T[] = [];
  private seen = 0;
  constructor(
    private readonly size: number,
    private readonly rng: Rng,
  ) {}
  offer(item: T): void {
    this.seen++;
    if (this.items.length < this.size) this.items.push(item);
    else {
      const j = this.rng.int(this.seen);
      if (j < this.size) this.items[j] = item;
    }
  }
}

/** A value over blocks: what it was at the end of each block. */
class Timeline<T> {
  private readonly blocks: number[] = [];
  private readonly values: T[] = [];

  /** Sets the value from `block` on (the last value set in a block holds at its end). */
  set(block: number, value: T): void {
    if (this.blocks.at(-1) === block) this.values[this.values.length - 1] = value;
    else {
      this.blocks.push(block);
      this.values.push(value);
    }
  }

  /** The value at the end of `block` (the newest without one); undefined before it was first set. */
  at(block?: number): T | undefined {
    if (block === undefined) return this.values.at(-1);
    let [low, high] = [0, this.blocks.length];
    while (low < high) {
      const middle = (low + high) >> 1;
      if (this.blocks[middle]! <= block) low = middle + 1;
      else high = middle;
    }
    return low === 0 ? undefined : this.values[low - 1];
  }

  get lastBlock(): number | undefined {
    return this.blocks.at(-1);
  }
}

export type V2CheckKind = V2CheckQuery["kind"];
export type V1CheckKind = V1CheckQuery["kind"];
const V2_KIND: Record<V2DelegationType, V2CheckKind> = {
  ALL: "all",
  CONTRACT: "contract",
  ERC721: "erc721",
  ERC20: "erc20",
  ERC1155: "erc1155",
};
const V1_KIND: Record<V1Type, V1CheckKind> = { ALL: "all", CONTRACT: "contract", TOKEN: "token" };

/** What a step's revocations moved: the counters' rows, by vault, and by pair (pairString). */
type Moved = { vaults: Map<Address, VaultVersionRow>; pairs: Map<string, PairVersionRow> };

/** A write's place: the block, and the next log index in it. */
type Slot = { block: SeedBlock; logIndex: number };
/** The events of one step that wait for a later block, by the block's index in the step. */
type Queue = Map<number, ((slot: () => Slot, out: RowBatch) => void)[]>;

const emptyBatch = (): RowBatch => ({
  v2Delegations: [],
  v2Events: [],
  v1Events: [],
  v1Changes: [],
  v1VersionChanges: [],
});
const batchSize = (b: RowBatch) =>
  b.v2Delegations.length + b.v2Events.length + b.v1Events.length + b.v1Changes.length + b.v1VersionChanges.length;

/** The seeded history, grown step by step, and what each check, listing and page must answer over it. */
export class Dataset {
  readonly chainId: number;
  readonly wallets: Address[];
  readonly contracts: Address[];
  /** Every v2 delegation hash seeded, with its state over blocks. */
  private readonly v2 = new Map<Hex, Timeline<V2State>>();
  /** Every v1 key seeded, with its v1_delegation row over blocks. */
  private readonly v1 = new Map<string, { key: V1Key; state: Timeline<V1DelegationRow> }>();
  /** The version counters: each vault's, and each pair's by its pairString. */
  private readonly vaultVersions = new Map<Address, Timeline<number>>();
  private readonly pairVersions = new Map<string, Timeline<number>>();
  /** Hot wallets (apart from `wallets`: only their own rows name them), per version. */
  readonly hot = {
    v2: new Map<Address, HotWallet<V2DelegationRow, V2EventRow>>(),
    v1: new Map<Address, HotWallet<V1DelegationRow, V1EventRow>>(),
  };
  /** v2 hot wallets only delegated to, and small v2 wallets (both apart from `hot` and `wallets`). */
  readonly hotIncoming = new Map<Address, HotWallet<V2DelegationRow, V2EventRow>>();
  readonly bulkWallets = new Map<Address, HotWallet<V2DelegationRow, V2EventRow>>();
  /** Checks built from seeded delegations, a uniform sample of all so far, per route. */
  readonly v2Samples = new Map<V2CheckKind, Reservoir<V2CheckQuery>>();
  readonly v1Samples = new Map<V1CheckKind, Reservoir<V1CheckQuery>>();
  /** Every event so far, per version. */
  readonly events: { v2: EventLog<V2EventRow>; v1: EventLog<V1EventRow> };
  /** The blocks seeded so far (first and last), and a block after every hot wallet's delegations but the head. */
  blocks: { first: bigint; last: bigint } | undefined;
  /** Each seeded block's timestamp (one second apart: a moment's block is the block stamped at it). */
  readonly stamps = new Map<bigint, bigint>();
  snapshotBlock: bigint | undefined;
  private readonly used: Uint8Array;
  private readonly rng: Rng;

  constructor(seed: number, options: { chainId: number; wallets: number; samplesPerRoute: number }) {
    this.chainId = options.chainId;
    this.rng = new Rng(seed);
    this.wallets = Array.from({ length: options.wallets }, () => randomAddress(this.rng));
    this.contracts = Array.from({ length: CONTRACTS }, () => randomAddress(this.rng));
    this.used = new Uint8Array(options.wallets);
    const sampling = new Rng(seed ^ 0x5bd1e995);
    for (const kind of Object.values(V2_KIND))
      this.v2Samples.set(kind, new Reservoir(options.samplesPerRoute, sampling));
    for (const kind of Object.values(V1_KIND))
      this.v1Samples.set(kind, new Reservoir(options.samplesPerRoute, sampling));
    this.events = {
      v2: { positions: [], sample: new Reservoir(options.samplesPerRoute, sampling) },
      v1: { positions: [], sample: new Reservoir(options.samplesPerRoute, sampling) },
    };
  }

  get counts() {
    let wallets = 0;
    for (const u of this.used) wallets += u;
    return {
      v2: this.v2.size,
      v1: this.v1.size,
      wallets: wallets + this.hot.v2.size + this.hot.v1.size + this.hotIncoming.size + this.bulkWallets.size,
      v2Events: this.events.v2.positions.length,
      v1Events: this.events.v1.positions.length,
    };
  }

  private randomWallet(): Address {
    const i = this.rng.int(this.wallets.length);
    this.used[i] = 1;
    return this.wallets[i]!;
  }

  /** The other party of a delegation: a hot wallet's is a one-off address (see the module's head). */
  private counterpart(hot: Address | undefined): Address {
    return hot === undefined ? this.randomWallet() : randomAddress(this.rng);
  }

  private randomTokenId(): bigint {
    return BigInt(this.rng.int(TOKEN_IDS));
  }

  /**
   * Adds `v2` and `v1` delegations, with their later events, over `blocks` (newer than any seeded
   * before); `hot` of them belong to new hot wallets. Lazy: rows are made as the batches are taken,
   * so a million need not be held at once.
   */
  grow(counts: { v2: number; v1: number }, hot: HotSizes, blocks: readonly SeedBlock[]): Growth {
    const last = blocks.at(-1);
    if (last === undefined) throw new Error("no blocks to seed");
    if (this.blocks && blocks[0]!.number <= this.blocks.last) throw new Error("a step's blocks follow the last step's");
    this.blocks = { first: this.blocks?.first ?? blocks[0]!.number, last: last.number };
    for (const block of blocks) this.stamps.set(block.number, block.timestamp);
    const plans = {
      v2: this.hotPlan(
        [
          { into: this.hot.v2, sizes: hot.both },
          { into: this.hotIncoming, sizes: hot.incoming ?? [], incomingOnly: true },
          { into: this.bulkWallets, sizes: hot.bulk ?? [] },
        ],
        counts.v2,
      ),
      v1: this.hotPlan([{ into: this.hot.v1, sizes: hot.both }], counts.v1),
    };
    const touched = new Set<string>();
    const moved: Moved = { vaults: new Map(), pairs: new Map() };
    return {
      batches: this.steps(counts, plans, blocks, touched, moved, plans.v2.length + plans.v1.length > 0),
      final: () => ({
        v1Delegations: [...touched].map((k) => this.v1Row(k)),
        vaults: [...moved.vaults.values()],
        pairs: [...moved.pairs.values()],
      }),
    };
  }

  /** New hot wallets of each group; their delegations' order: which wallet, and whether outgoing. */
  private hotPlan<R, E>(groups: readonly HotGroup<R, E>[], count: number) {
    const plan = groups.flatMap(({ into, sizes, incomingOnly }) =>
      sizes.flatMap((size) => {
        const wallet = randomAddress(this.rng);
        const hot: HotWallet<R, E> = { size, rows: [], events: [] };
        into.set(wallet, hot);
        return Array.from({ length: size }, (_, i) => ({ wallet, hot, outgoing: !incomingOnly && i % 2 === 0 }));
      }),
    );
    if (plan.length > HOT_SHARE * count)
      throw new Error(
        `hot wallets need ${plan.length} delegations, more than ${HOT_SHARE} of the ${count} of this step`,
      );
    return this.rng.shuffle(plan);
  }

  private *steps(
    counts: { v2: number; v1: number },
    plans: {
      v2: { wallet: Address; hot: HotWallet<V2DelegationRow, V2EventRow>; outgoing: boolean }[];
      v1: { wallet: Address; hot: HotWallet<V1DelegationRow, V1EventRow>; outgoing: boolean }[];
    },
    blocks: readonly SeedBlock[],
    touched: Set<string>,
    moved: Moved,
    snapshot: boolean,
  ): Generator<RowBatch> {
    const rng = this.rng;
    // Each block's share of the new delegations: none in some, a burst in a few.
    const weights = blocks.map(() => (rng.chance(0.3) ? 0 : -Math.log(1 - rng.next()) * (rng.chance(0.02) ? 10 : 1)));
    const total = counts.v2 + counts.v1;
    const weight = weights.reduce((a, b) => a + b, 0) || 1;
    const left = { ...counts };
    const madeOf = { v2: 0, v1: 0 };
    const queue: Queue = new Map();
    // A later write of this step: at a block after `after`, drawn at random; none after the last.
    const later = (after: number) => {
      const remaining = blocks.length - 1 - after;
      return remaining < 1 ? undefined : after + 1 + rng.int(remaining);
    };
    const schedule = (at: number, write: (slot: () => Slot, out: RowBatch) => void) => {
      const due = queue.get(at);
      if (due) due.push(write);
      else queue.set(at, [write]);
    };
    let out = emptyBatch();
    let made = 0;
    let cumulative = 0;
    for (let b = 0; b < blocks.length; b++) {
      const block = blocks[b]!;
      let logIndex = 0;
      const slot = (): Slot => ({ block, logIndex: logIndex++ });
      for (const write of queue.get(b) ?? []) write(slot, out);
      queue.delete(b);

      cumulative += weights[b]!;
      const until = b === blocks.length - 1 ? total : Math.min(total, Math.round((cumulative / weight) * total));
      for (; made < until; made++) {
        const version = rng.next() * (left.v2 + left.v1) < left.v2 ? "v2" : "v1";
        left[version]--;
        // The hot ones among the first HOT_SHARE of the version's new delegations.
        const plan = plans[version];
        const window = Math.max(1, Math.floor(HOT_SHARE * counts[version]) - madeOf[version]);
        const hotOne = plan.length > 0 && rng.next() * window < plan.length ? plan.pop() : undefined;
        madeOf[version]++;
        if (version === "v2")
          this.newV2(hotOne as (typeof plans.v2)[number] | undefined, b, slot, out, later, schedule);
        else this.newV1(hotOne as (typeof plans.v1)[number] | undefined, b, slot, out, later, schedule, touched, moved);
        if (snapshot && made + 1 === Math.ceil(SNAPSHOT_SHARE * total)) this.snapshotBlock = block.number;
      }
      if (batchSize(out) >= BATCH) {
        yield out;
        out = emptyBatch();
      }
    }
    if (plans.v2.length + plans.v1.length > 0) throw new Error("hot wallets' delegations left over");
    yield out;
  }

  private newV2(
    hot: { wallet: Address; hot: HotWallet<V2DelegationRow, V2EventRow>; outgoing: boolean } | undefined,
    b: number,
    slot: () => Slot,
    out: RowBatch,
    later: (after: number) => number | undefined,
    schedule: (at: number, write: (slot: () => Slot, out: RowBatch) => void) => void,
  ): void {
    const rng = this.rng;
    let key: { type: V2DelegationType; from: Address; to: Address; rights: Hex; contract?: Address; tokenId?: bigint };
    let hash: Hex;
    do {
      const type = rng.weighted(V2_TYPES);
      key = {
        type,
        from: hot?.outgoing ? hot.wallet : this.counterpart(hot?.wallet),
        to: hot && !hot.outgoing ? hot.wallet : this.counterpart(hot?.wallet),
        rights: rng.chance(0.8) ? zeroHash : rng.pick(WRITE_RIGHTS),
        contract: type === "ALL" ? undefined : rng.pick(this.contracts),
        tokenId: type === "ERC721" || type === "ERC1155" ? this.randomTokenId() : undefined,
      };
      hash = v2DelegationHash(key);
    } while (this.v2.has(hash));
    const { type } = key;
    const amounts = isAmountType(type);
    const on = () => (amounts ? { amount: 1n + rng.bigint(64) } : { enable: true });
    const off = amounts ? { amount: 0n } : { enable: false };
    // Its fate: the first enable, then (hot wallets' aside) perhaps a revoke, a re-enable, a new amount.
    const writes: ({ enable: boolean } | { amount: bigint })[] = [on()];
    if (hot === undefined) {
      const roll = rng.next();
      if (roll < 0.08) writes.push(off);
      else if (roll < 0.12) writes.push(off, on());
      else if (roll < 0.15 && amounts) writes.push(on());
    }
    const at = [b];
    for (let i = 1; i < writes.length; i++) {
      const next = later(at.at(-1)!);
      if (next === undefined) break;
      at.push(next);
    }
    const timeline = new Timeline<V2State>();
    this.v2.set(hash, timeline);
    let prev: V2DelegationRow | undefined;
    /** Its i-th event, at `s`: the rows the indexer writes for it; the delegation's once it is the last. */
    const emit = (s: Slot, i: number, into: RowBatch) => {
      const { insert, put } = v2Writes(this.place(s), { key, hash, change: writes[i]! }, prev);
      const row = put.v2Delegation!;
      prev = row;
      timeline.set(Number(s.block.number), { enabled: row.enabled, amount: row.amount ?? 0n });
      into.v2Events.push(insert.v2Event);
      const log = this.events.v2;
      log.sample.offer({ index: log.positions.length, row: insert.v2Event });
      log.positions.push(positionOf(s.block.number, s.logIndex));
      if (i === at.length - 1) into.v2Delegations.push(row);
      return { event: insert.v2Event, row };
    };
    const first = emit(slot(), 0, out);
    for (let i = 1; i < at.length; i++) schedule(at[i]!, (s, into) => void emit(s(), i, into));
    if (hot) {
      hot.hot.rows.push(first.row);
      hot.hot.events.push(first.event);
    } else {
      const kind = V2_KIND[type];
      const { from, to, rights, contract, tokenId } = key;
      this.v2Samples.get(kind)!.offer({ kind, from, to, rights, contract, tokenId });
    }
  }

  private newV1(
    hot: { wallet: Address; hot: HotWallet<V1DelegationRow, V1EventRow>; outgoing: boolean } | undefined,
    b: number,
    slot: () => Slot,
    out: RowBatch,
    later: (after: number) => number | undefined,
    schedule: (at: number, write: (slot: () => Slot, out: RowBatch) => void) => void,
    touched: Set<string>,
    moved: Moved,
  ): void {
    const rng = this.rng;
    let key: V1Key;
    do {
      const type = rng.weighted(V1_TYPES);
      key = {
        type,
        vault: hot?.outgoing ? hot.wallet : this.counterpart(hot?.wallet),
        delegate: hot && !hot.outgoing ? hot.wallet : this.counterpart(hot?.wallet),
        contract: type === "ALL" ? zeroAddress : rng.pick(this.contracts),
        tokenId: type === "TOKEN" ? this.randomTokenId() : 0n,
      };
    } while (this.v1.has(v1KeyString(key)));
    const k = v1KeyString(key);
    this.v1.set(k, { key, state: new Timeline() });
    touched.add(k);
    // Before some new delegations, the vault revoked all its delegates or this pair: older rows are void from then.
    if (hot === undefined) {
      const roll = rng.next();
      if (roll < 0.04) this.revokeV1(key.vault, undefined, slot(), out, moved);
      else if (roll < 0.08) this.revokeV1(key.vault, key.delegate, slot(), out, moved);
    }
    const row = this.writeV1(k, true, slot(), out);
    if (hot) {
      hot.hot.rows.push(this.v1Row(k));
      hot.hot.events.push(row);
      return;
    }
    const { type, vault, delegate, contract, tokenId } = key;
    this.v1Samples.get(V1_KIND[type])!.offer({
      kind: V1_KIND[type],
      vault,
      delegate,
      contract: type === "ALL" ? undefined : contract,
      tokenId: type === "TOKEN" ? tokenId : undefined,
    });
    // Some are set false later, and some of those true again.
    if (rng.chance(0.07)) {
      const unset = later(b);
      if (unset === undefined) return;
      schedule(unset, (s, into) => void this.writeV1(k, false, s(), into));
      const reset = rng.chance(0.3) ? later(unset) : undefined;
      if (reset !== undefined) schedule(reset, (s, into) => void this.writeV1(k, true, s(), into));
    }
  }

  /** A seeded event's place: one transaction per log, its hash drawn at random. */
  private place(s: Slot): EventPlace {
    const { block, logIndex } = s;
    return {
      chainId: this.chainId,
      id: eventId(this.chainId, block, logIndex),
      block,
      transactionHash: randomHash(this.rng),
      logIndex,
    };
  }

  private logV1(row: V1EventRow, out: RowBatch): V1EventRow {
    out.v1Events.push(row);
    const log = this.events.v1;
    log.sample.offer({ index: log.positions.length, row });
    log.positions.push(positionOf(row.blockNumber, row.logIndex));
    return row;
  }

  /** delegateFor*(…, value) of a seeded key, with the rows the indexer writes for it; its event's row. */
  private writeV1(k: string, value: boolean, s: Slot, out: RowBatch): V1EventRow {
    const { key, state } = this.v1.get(k)!;
    const current = this.v1Versions(key.vault, key.delegate);
    const { insert, put } = v1DelegateWrites(this.place(s), { key, value }, state.at(), current);
    if (put.v1Delegation) state.set(Number(s.block.number), put.v1Delegation);
    if (insert.v1DelegationChange) out.v1Changes.push(insert.v1DelegationChange);
    return this.logV1(insert.v1Event, out);
  }

  /** revokeAllDelegates (no `delegate`) or a pair's revocation, with the rows the indexer writes for it. */
  private revokeV1(vault: Address, delegate: Address | undefined, s: Slot, out: RowBatch, moved: Moved): void {
    const pair = delegate && pairString(vault, delegate);
    const counter = (pair ? this.pairVersions.get(pair) : this.vaultVersions.get(vault)) ?? new Timeline<number>();
    // A pair is revoked by the vault's revokeDelegate(delegate), logged as (vault, vault), or the
    // delegate's revokeSelf.
    const sender = delegate && (this.rng.chance(0.5) ? vault : delegate);
    const { insert, put } = v1RevokeWrites(
      this.place(s),
      delegate && sender
        ? { kind: "RevokeDelegate", vault, sender, pair: { vault, delegate } }
        : { kind: "RevokeAllDelegates", vault },
      counter.at() ?? 0,
    );
    if (pair && put.v1PairVersion) {
      this.pairVersions.set(pair, counter);
      moved.pairs.set(pair, put.v1PairVersion);
    } else if (put.v1VaultVersion) {
      this.vaultVersions.set(vault, counter);
      moved.vaults.set(vault, put.v1VaultVersion);
    }
    counter.set(Number(s.block.number), insert.v1VersionChange.version);
    this.logV1(insert.v1Event, out);
    out.v1VersionChanges.push(insert.v1VersionChange);
  }

  /** A seeded v1 key's v1_delegation row, at its newest state. */
  private v1Row(k: string): V1DelegationRow {
    return this.v1.get(k)!.state.at()!;
  }

  private v1Versions(vault: Address, delegate: Address, block?: number) {
    return {
      vault: this.vaultVersions.get(vault)?.at(block) ?? 0,
      pair: this.pairVersions.get(pairString(vault, delegate))?.at(block) ?? 0,
    };
  }

  /**
   * The v2 delegations in force at the end of `block` (the newest seeded without one), as
   * core/v2.ts's checks take them.
   */
  v2EnabledAt(block?: bigint): (hash: Hex) => V2State | undefined {
    const at = block === undefined ? undefined : Number(block);
    return (hash) => {
      const state = this.v2.get(hash)?.at(at);
      return state?.enabled ? state : undefined;
    };
  }

  /** Whether a v1 delegation key is in force at the end of `block` (the newest seeded without one). */
  v1InForceAt(block?: bigint): (key: V1Key) => boolean {
    const at = block === undefined ? undefined : Number(block);
    return (key) =>
      v1InForce(this.v1.get(v1KeyString(key))?.state.at(at), this.v1Versions(key.vault, key.delegate, at));
  }
}
