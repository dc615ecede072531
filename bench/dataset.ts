/**
 * The seeded dataset of the API measurements: rows of the indexer's state tables, made at random
 * from a seed, and the state they amount to (what each check and listing must answer).
 *
 * Rows are keyed as the indexer keys them, by core/'s own functions: a v2 row by
 * v2DelegationHash of its fields, a v1 row by its (vault, delegate, type, contract, tokenId) and the
 * versions current when it was written, so that v1InForce decides which count.
 */
import { type Address, type Hex, zeroAddress, zeroHash } from "viem";
import { type V1CheckQuery, type V1Key, type V1State, type V1Type, type V1Versions, v1InForce } from "../core/v1";
import { isAmountType, type V2CheckQuery, type V2DelegationType, type V2State, v2DelegationHash } from "../core/v2";
import { Rng } from "../devkit/random";
import { WRITE_RIGHTS } from "../devkit/v2/generate";
import type { v1Delegation, v1PairVersion, v1VaultVersion, v2Delegation } from "../ponder.schema";

export type V2DelegationRow = typeof v2Delegation.$inferInsert;
export type V1DelegationRow = typeof v1Delegation.$inferInsert;
export type VaultVersionRow = typeof v1VaultVersion.$inferInsert;
export type PairVersionRow = typeof v1PairVersion.$inferInsert;

/** The rows one growth step adds, in batches. */
export type Growth = {
  v2: Iterable<V2DelegationRow[]>;
  v1: Iterable<V1DelegationRow[]>;
  /** The version counters this step moved, at their values after it (written after `v1`). */
  versions(): { vaults: VaultVersionRow[]; pairs: PairVersionRow[] };
};

/** Where rows of one step were written: blocks the indexer's checkpoint has passed. */
export type BlockRange = { first: bigint; last: bigint };

const BATCH = 10_000;
const CONTRACTS = 1_000;
/** Token ids are drawn below this. */
export const TOKEN_IDS = 100_000;

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
const v1KeyString = (k: Pick<V1Key, "type" | "vault" | "delegate" | "contract" | "tokenId">) =>
  `${k.type}|${k.vault}|${k.delegate}|${k.contract}|${k.tokenId}`;
const pairString = (vault: Address, delegate: Address) => `${vault}|${delegate}`;

/** A uniform sample of a stream, kept at a fixed size (reservoir sampling). */
class Reservoir<T> {
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

/** The seeded rows, grown step by step, and what each check and listing must answer over them. */
export class Dataset {
  readonly chainId: number;
  readonly wallets: Address[];
  readonly contracts: Address[];
  /** Every v2 delegation hash seeded, with its state. */
  private readonly v2 = new Map<Hex, V2State>();
  private readonly v1 = new Map<string, V1State>();
  private readonly vaultVersions = new Map<Address, { version: number; updatedBlock: bigint }>();
  private readonly pairVersions = new Map<
    string,
    { vault: Address; delegate: Address; version: number; updatedBlock: bigint }
  >();
  /** Hot wallets (apart from `wallets`: only their own rows name them) and their delegations, per version. */
  readonly hot = { v2: new Map<Address, number>(), v1: new Map<Address, number>() };
  /** Checks built from seeded rows, a uniform sample of all rows so far, per route. */
  readonly v2Samples = new Map<V2CheckKind, Reservoir<V2CheckQuery>>();
  readonly v1Samples = new Map<V1CheckKind, Reservoir<V1CheckQuery>>();
  private readonly used: Uint8Array;
  private readonly rng: Rng;
  private logIndex = 0;

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
  }

  get counts() {
    let wallets = 0;
    for (const u of this.used) wallets += u;
    return { v2: this.v2.size, v1: this.v1.size, wallets: wallets + this.hot.v2.size + this.hot.v1.size };
  }

  private randomWallet(): Address {
    const i = this.rng.int(this.wallets.length);
    this.used[i] = 1;
    return this.wallets[i]!;
  }

  /**
   * The other party of a delegation: a hot wallet's is a one-off address, so that no other row (and
   * no version bump) touches its delegations, and its listing holds exactly its own.
   */
  private counterpart(hot: Address | undefined): Address {
    return hot === undefined ? this.randomWallet() : randomAddress(this.rng);
  }

  private randomContract(): Address {
    return this.rng.pick(this.contracts);
  }

  private randomTokenId(): bigint {
    return BigInt(this.rng.int(TOKEN_IDS));
  }

  /**
   * Adds `v2` and `v1` delegations at blocks in `blocks`, of which `hot` per version belong to new
   * hot wallets (each hot wallet half delegating, half delegated to; all in force). Lazy: rows are
   * made as the batches are taken, so a million rows need not be held at once.
   */
  grow(counts: { v2: number; v1: number }, hot: readonly number[], blocks: BlockRange): Growth {
    const total = counts.v2 + counts.v1;
    let made = 0;
    const position = () => {
      const span = blocks.last - blocks.first + 1n;
      const block = blocks.first + (BigInt(made++) * span) / BigInt(Math.max(total, 1));
      return { block, logIndex: this.logIndex++ % 2 ** 31 };
    };
    const hotWallets = (version: "v1" | "v2") =>
      hot.map((size) => {
        const wallet = randomAddress(this.rng);
        this.hot[version].set(wallet, size);
        return { wallet, size };
      });
    const moved = { vaults: new Set<Address>(), pairs: new Set<string>() };

    function* batches<R>(
      count: number,
      hotOnes: { wallet: Address; size: number }[],
      make: (hot: Address | undefined, outgoing: boolean) => R | undefined,
    ) {
      const plan = hotOnes.flatMap(({ wallet, size }) =>
        Array.from({ length: size }, (_, i) => [wallet, i % 2 === 0] as const),
      );
      if (plan.length > count)
        throw new Error(`hot wallets need ${plan.length} delegations, more than the ${count} of this step`);
      let batch: R[] = [];
      for (let i = 0; i < count; ) {
        const [wallet, outgoing] = plan[i] ?? [undefined, false];
        const row = make(wallet, outgoing);
        if (row === undefined) continue; // a key already seeded: draw again
        batch.push(row);
        i++;
        if (batch.length === BATCH) {
          yield batch;
          batch = [];
        }
      }
      if (batch.length > 0) yield batch;
    }

    return {
      v2: batches(counts.v2, hotWallets("v2"), (hotWallet, outgoing) => this.v2Row(hotWallet, outgoing, position)),
      v1: batches(counts.v1, hotWallets("v1"), (hotWallet, outgoing) =>
        this.v1Row(hotWallet, outgoing, position, moved),
      ),
      versions: () => ({
        vaults: [...moved.vaults].map((vault) => ({ chainId: this.chainId, vault, ...this.vaultVersions.get(vault)! })),
        pairs: [...moved.pairs].map((pair) => {
          const { vault, delegate, version, updatedBlock } = this.pairVersions.get(pair)!;
          return { chainId: this.chainId, vault, delegate, version, updatedBlock };
        }),
      }),
    };
  }

  private v2Row(
    hot: Address | undefined,
    outgoing: boolean,
    position: () => { block: bigint; logIndex: number },
  ): V2DelegationRow | undefined {
    const rng = this.rng;
    const type = rng.weighted(V2_TYPES);
    const from = hot && outgoing ? hot : this.counterpart(hot);
    const to = hot && !outgoing ? hot : this.counterpart(hot);
    const rights = rng.chance(0.8) ? zeroHash : rng.pick(WRITE_RIGHTS);
    const contract = type === "ALL" ? undefined : this.randomContract();
    const tokenId = type === "ERC721" || type === "ERC1155" ? this.randomTokenId() : undefined;
    const hash = v2DelegationHash({ type, from, to, rights, contract, tokenId });
    if (this.v2.has(hash)) return undefined;
    // Some delegations were revoked since (they keep their row and list position).
    const enabled = hot !== undefined || rng.chance(0.9);
    const amount = enabled ? 1n + rng.bigint(64) : 0n;
    this.v2.set(hash, { enabled, amount: isAmountType(type) ? amount : 0n });
    if (hot === undefined)
      this.v2Samples.get(V2_KIND[type])!.offer({ kind: V2_KIND[type], from, to, rights, contract, tokenId });
    const { block, logIndex } = position();
    return {
      chainId: this.chainId,
      hash,
      delegationType: type,
      from,
      to,
      contract: contract ?? null,
      tokenId: tokenId ?? null,
      rights,
      amount: isAmountType(type) ? amount : null,
      enabled,
      firstBlock: block,
      firstLogIndex: logIndex,
      updatedBlock: block,
      eventCount: enabled ? 1 : 2,
    };
  }

  private v1Row(
    hot: Address | undefined,
    outgoing: boolean,
    position: () => { block: bigint; logIndex: number },
    moved: { vaults: Set<Address>; pairs: Set<string> },
  ): V1DelegationRow | undefined {
    const rng = this.rng;
    const type = rng.weighted(V1_TYPES);
    const vault = hot && outgoing ? hot : this.counterpart(hot);
    const delegate = hot && !outgoing ? hot : this.counterpart(hot);
    const contract = type === "ALL" ? zeroAddress : this.randomContract();
    const tokenId = type === "TOKEN" ? this.randomTokenId() : 0n;
    const key = v1KeyString({ type, vault, delegate, contract, tokenId });
    if (this.v1.has(key)) return undefined;
    const { block, logIndex } = position();
    // Before this delegation, some vaults revoked all their delegates and some pairs were revoked:
    // the rows written before it at the older versions are void from then on.
    const revokeAll = hot === undefined && rng.chance(0.04);
    if (revokeAll) {
      this.vaultVersions.set(vault, {
        version: (this.vaultVersions.get(vault)?.version ?? 0) + 1,
        updatedBlock: block,
      });
      moved.vaults.add(vault);
    } else if (hot === undefined && rng.chance(0.04)) {
      const pair = pairString(vault, delegate);
      this.pairVersions.set(pair, {
        vault,
        delegate,
        version: (this.pairVersions.get(pair)?.version ?? 0) + 1,
        updatedBlock: block,
      });
      moved.pairs.add(pair);
    }
    const current = this.v1Versions(vault, delegate);
    const enabled = hot !== undefined || rng.chance(0.93);
    this.v1.set(key, {
      enabled,
      vaultVersion: current.vault,
      pairVersion: current.pair,
      createdBlock: block,
      createdLogIndex: logIndex,
    });
    if (hot === undefined) {
      this.v1Samples.get(V1_KIND[type])!.offer({ kind: V1_KIND[type], vault, delegate, contract, tokenId });
    }
    return {
      chainId: this.chainId,
      vault,
      delegate,
      type,
      contract,
      tokenId,
      enabled,
      vaultVersion: current.vault,
      pairVersion: current.pair,
      createdBlock: block,
      createdLogIndex: logIndex,
      updatedBlock: block,
    };
  }

  private v1Versions(vault: Address, delegate: Address): V1Versions {
    return {
      vault: this.vaultVersions.get(vault)?.version ?? 0,
      pair: this.pairVersions.get(pairString(vault, delegate))?.version ?? 0,
    };
  }

  /** The v2 delegations in force among the seeded ones, as core/v2.ts's checks take them. */
  v2Enabled = (hash: Hex): V2State | undefined => {
    const state = this.v2.get(hash);
    return state?.enabled ? state : undefined;
  };

  /** Whether a v1 delegation key is in force in the seeded state. */
  v1InForce = (key: V1Key): boolean =>
    v1InForce(this.v1.get(v1KeyString(key)), this.v1Versions(key.vault, key.delegate));
}
