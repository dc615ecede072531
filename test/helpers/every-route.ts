/**
 * Every route a user reads a chain's delegations by, asked of one process and judged against the
 * registries' own views (eth_call) at the block each answer reports: checks of every type (v1 and
 * v2), listings whole and by direction (some in pages), vaults (some in pages), bulk listings
 * (each entry also the wallet's own GET listing), v2 delegations by hash, and the chain-wide
 * histories against the chain's logs.
 *
 * Each question is asked first and judged later (a Judge): while writes arrive, an answer can only
 * be judged once every write up to its block is known to the test.
 *
 * Nothing here uses the service's code to decide what is right.
 */
import { type Address, getAddress, type Hex, toHex, zeroHash } from "viem";
import type { Direction } from "../../core/parse";
import { type Answer, ask } from "../../devkit/ask";
import { blockToCompare, type CompareAt, type Mismatch, type Oracle, pathAt } from "../../devkit/compare";
import { compareChecks } from "../../devkit/compare-checks";
import { abis } from "../../devkit/oracle";
import { pool } from "../../devkit/pool";
import { type Rng, spellAddress } from "../../devkit/random";
import { chainClient, ethCalls } from "../../devkit/rpc";
import type { Key } from "../../devkit/v1/calls";
import * as v1c from "../../devkit/v1/checks";
import * as v2c from "../../devkit/v2/checks";
import { batchHeaders } from "./batch";
import { type ApiRecord, type Bad, compareListing, type ListingKit } from "./compare-listings";
import { eventRecords, normalizeEvent, registryLogs } from "./event-records";
import { canonical, parseJsonExact } from "./json";
import { followPages, withParam } from "./pages";
import type { Position } from "./position";
import type { SeededWrites } from "./seeded-writes";
import { v1Listings } from "./v1/listing";
import { Model } from "./v1/model";
import { type ChainEvent, firstEnabled } from "./v2/events";
import { expectedRecord, normalize as normalizeV2, v2Listings } from "./v2/listing";
import { contractVaults, type VaultKit, vaultsPath } from "./vaults";

export type Version = "v1" | "v2";
const VERSIONS = ["v2", "v1"] as const;

/** What the contract answers about an answer already asked: judged once every write up to its block is known. */
export type Judge = () => Promise<Mismatch[]>;

/** How much one `askAll` asks, per version. */
export const SIZES = {
  /** Vaults queries, then some of those with several vaults, in pages. */
  vaultQueries: 14,
  vaultPaged: 4,
  /** Listings in pages. */
  listingsPaged: 3,
  /** v2 delegations by hash. */
  hashes: 10,
  /** Wallets of a bulk listing (before the repeats and the unused one). */
  bulkWallets: 10,
  /** Wallets listed when not `wide`. */
  someWallets: 5,
  /** Checks of each version. */
  checks: 60,
};

/** The chain, its writes and registries, and what a comparison may ask about. */
export type RouteWorld = {
  chainId: number;
  rpcUrl: string;
  writes: SeededWrites;
  /** The registries (their serviceUrl unused: each question names the process asked). */
  oracles: Record<Version, Oracle>;
  rng: Rng;
  /** Sent with every request (an API key: far more requests than the keyless budget). */
  headers: () => Record<string, string> | undefined;
  /** The wallets whose listings are asked, and the vaults a vaults answer may hold, per version. */
  listed: Record<Version, Address[]>;
  candidates: Record<Version, Address[]>;
  /** An address no write uses. */
  unused: Address;
  /** Where each v2 delegation was first enabled as of `block`; by default the writes' own events. */
  positions?: (block: bigint) => Promise<Map<Hex, Position>>;
  sizes?: Partial<typeof SIZES>;
};

const VAULT_KITS: Record<Version, VaultKit<unknown>> = {
  v2: {
    ...v2c.v2Checks,
    hot: (s: v2c.CheckSpec) => s.to,
    withVault: (s: v2c.CheckSpec, from: Address) => ({ ...s, from }),
  } as VaultKit<unknown>,
  v1: {
    ...v1c.v1Checks,
    hot: (s: v1c.CheckSpec) => s.delegate,
    withVault: (s: v1c.CheckSpec, vault: Address) => ({ ...s, vault }),
  } as VaultKit<unknown>,
};

/** A judge that found what went wrong when the answer was asked. */
const failed =
  (m: Mismatch): Judge =>
  async () => [m];

/** A mismatch collector for one answer. */
function collector(where: string, query: string): { mismatches: Mismatch[]; bad: Bad } {
  const mismatches: Mismatch[] = [];
  return {
    mismatches,
    bad: (what, expected, got) => mismatches.push({ what: `${where}: ${what}`, query, expected, got }),
  };
}

/** A vaults query: the check it is made of (but its vault), and its path. */
type VaultQuery = { spec: unknown; path: string };

/** Asks one process every route, and judges the answers; `tally` counts what was compared. */
export class EveryRoute {
  /** What the comparisons covered, for assertions that they covered something. */
  readonly tally: Record<string, number> = {};
  private readonly sizes: typeof SIZES;

  constructor(private readonly world: RouteWorld) {
    this.sizes = { ...SIZES, ...world.sizes };
  }

  count(name: string, n = 1) {
    this.tally[name] = (this.tally[name] ?? 0) + n;
  }

  private get rng() {
    return this.world.rng;
  }

  private head() {
    return chainClient(this.world.rpcUrl).getBlockNumber();
  }

  /** The v1 contract as the test's model has it at the end of `block`: the effects up to it, replayed. */
  modelAt(block: bigint): Model {
    const { writes } = this.world;
    const model = new Model(new Set(writes.pools.v1.wallets));
    for (const e of writes.effects) if (e.block <= block) model.apply(e);
    return model;
  }

  /** The listing kit of a version in `direction` (none: the parameter left out), judged at `block`. */
  async listingKit(version: Version, direction: Direction | undefined, block: bigint): Promise<ListingKit> {
    if (version === "v1") return v1Listings(this.modelAt(block), direction);
    const { positions, writes } = this.world;
    return v2Listings(positions ? await positions(block) : firstEnabled(writes.v2Events), direction);
  }

  /**
   * A list asked of `base` at `at`: whole (one answer, no Link) or, with `limit`, in pages followed by
   * Link; its items and the block they are at, or what went wrong.
   */
  private async askList(
    base: string,
    path: string,
    at: CompareAt,
    limit?: number,
  ): Promise<{ block: bigint; items: ApiRecord[]; pages: number } | Mismatch> {
    const first = pathAt(limit === undefined ? path : withParam(path, "limit", String(limit)), at);
    const answers: Answer[] = [];
    let items: unknown;
    if (limit === undefined) {
      const a = await ask(base, first, { headers: this.world.headers() });
      answers.push(a);
      if (a.headers.get("link") !== null)
        return { what: "a whole list", query: first, expected: "no Link", got: `${a.headers.get("link")}` };
      try {
        items = parseJsonExact(a.text);
      } catch {
        items = undefined;
      }
    } else {
      const paged = await followPages(() => base, first, { headers: this.world.headers() });
      if (paged.problems.length > 0)
        return { what: "pages", query: first, expected: "no problem", got: paged.problems.join("; ") };
      answers.push(...paged.pages);
      items = paged.items;
    }
    const fit = blockToCompare(answers[0]!, at, await this.head());
    if (!("block" in fit)) return { what: "answer", query: first, ...fit };
    if (!Array.isArray(items)) return { what: "answer", query: first, expected: "a JSON array", got: answers[0]!.text };
    return { block: fit.block, items: items as ApiRecord[], pages: answers.length };
  }

  /** A wallet's listing in `direction` (whole, or in pages of `limit`), to judge against the contract. */
  async askListing(
    base: string,
    version: Version,
    wallet: Address,
    direction: Direction | undefined,
    at: CompareAt,
    limit?: number,
  ): Promise<Judge> {
    const { chainId, oracles } = this.world;
    const path = `/registry/${version}/${spellAddress(this.rng, wallet)}?chainId=${chainId}${
      direction === undefined ? "" : `&direction=${direction}`
    }`;
    const got = await this.askList(base, path, at, limit);
    const name = `${version} ${direction ?? "whole"} listing of ${wallet}`;
    if (!("block" in got)) return failed({ ...got, what: `${name}: ${got.what}` });
    this.count("listing records", got.items.length);
    if (got.pages > 1) this.count("listings in several pages");
    return async () => {
      const where = `${version} ${direction ?? "whole"} listing of ${getAddress(wallet)} at block ${got.block}`;
      const { mismatches, bad } = collector(where, path);
      const kit = await this.listingKit(version, direction, got.block);
      await compareListing(oracles[version], kit, wallet, got.items, got.block, bad);
      return mismatches;
    };
  }

  /** Random vaults queries of a version: checks drawn from what the writes wrote, so that most find vaults. */
  private drawVaultQueries(version: Version, n: number): VaultQuery[] {
    const { writes, chainId } = this.world;
    const inForce = version === "v1" ? this.modelAt(writes.lastWriteBlock).inForce() : [];
    const crowded = this.crowdedQuery(
      version,
      inForce.map((d) => d.key),
    );
    return Array.from({ length: n }, (_, i) => {
      if (i === 0 && crowded) return crowded;
      if (version === "v2") {
        const spec = v2c.randomCheck(this.rng, writes.pools.v2, writes.generators.v2.history);
        return { spec, path: vaultsPath(this.rng, v2c.checkUrl(this.rng, chainId, spec), spec.to) };
      }
      const keys = inForce.map((d) => d.key);
      const spec = v1c.randomCheck(this.rng, writes.pools.v1, writes.generators.v1.delegations, keys);
      return { spec, path: vaultsPath(this.rng, v1c.checkUrl(this.rng, chainId, spec), spec.delegate) };
    });
  }

  /**
   * The `all` vaults query of the hot wallet most vaults delegate everything to (v2: with empty
   * rights), by the writes' own record: random queries seldom find more than two vaults, and pages
   * need several.
   */
  private crowdedQuery(version: Version, v1InForce: readonly Key[]): VaultQuery | undefined {
    const vaultsOf = new Map<Address, Set<Address>>();
    const add = (hot: Address, vault: Address) => {
      const key = getAddress(hot);
      vaultsOf.set(key, (vaultsOf.get(key) ?? new Set()).add(getAddress(vault)));
    };
    if (version === "v1") {
      for (const k of v1InForce) if (k.type === "ALL") add(k.delegate, k.vault);
    } else {
      const last = new Map<Hex, ChainEvent>();
      for (const e of this.world.writes.v2Events) last.set(e.hash, e);
      for (const e of last.values())
        if (e.type === "ALL" && e.enabling && BigInt(e.args.rights) === 0n) add(e.args.to, e.args.from);
    }
    const [hot] = [...vaultsOf].reduce<[Address | undefined, number]>(
      (best, [h, vaults]) => (vaults.size > best[1] ? [h, vaults.size] : best),
      [undefined, 0],
    );
    if (!hot) return undefined;
    const { rng, world } = this;
    const spec =
      version === "v2"
        ? { kind: "all" as const, to: hot, from: hot, contract: hot, tokenId: 0n, rights: zeroHash }
        : { kind: "all" as const, delegate: hot, vault: hot, contract: hot, tokenId: 0n };
    const url =
      version === "v2"
        ? v2c.checkUrl(rng, world.chainId, spec as v2c.CheckSpec)
        : v1c.checkUrl(rng, world.chainId, spec as v1c.CheckSpec);
    return { spec, path: vaultsPath(rng, url, hot) };
  }

  /**
   * A vaults query's answer (whole, or in pages of `limit`), to judge against every candidate vault's
   * check; `found` is told how many vaults it holds.
   */
  private async askVaults(
    base: string,
    version: Version,
    query: VaultQuery,
    at: CompareAt,
    limit?: number,
    found?: (n: number) => void,
  ): Promise<Judge> {
    const kit = VAULT_KITS[version];
    const got = await this.askList(base, query.path, at, limit);
    // The check, its vault any of them.
    const what = `vaults: ${kit.describe(kit.withVault(query.spec, "*" as Address))}`;
    if (!("block" in got)) return failed({ ...got, what: `${what}: ${got.what}` });
    found?.(got.items.length);
    this.count(`${version} vaults queries`);
    if (got.items.length > 0) this.count(`${version} vaults answers with vaults`);
    if (got.items.some((v) => "amount" in v)) this.count("vaults answers with amounts");
    if (got.pages > 1) this.count("vaults answers in several pages");
    return async () => {
      const { oracles, candidates } = this.world;
      const want = await contractVaults(oracles[version], kit, query.spec, candidates[version], got.block);
      if (canonical(got.items) === canonical(want)) return [];
      return [
        {
          what: `${what} at block ${got.block}${limit === undefined ? "" : ` (pages of ${limit})`}`,
          query: query.path,
          expected: canonical(want),
          got: canonical(got.items),
        },
      ];
    };
  }

  /**
   * A bulk listing of a few wallets (repeated ones, and one no write used) in a random direction:
   * each entry must be the wallet's own GET listing at the answer's block, and the contract's.
   */
  private async askBulk(base: string, version: Version, at: CompareAt): Promise<Judge> {
    const { rng } = this;
    const { chainId, listed, unused, oracles } = this.world;
    const headers = this.world.headers();
    const some = rng.shuffle([...listed[version]]).slice(0, this.sizes.bulkWallets);
    const wallets = rng.shuffle([...some, rng.pick(some), rng.pick(some), unused]);
    const direction = rng.pick([undefined, "both", "incoming", "outgoing"] as const);
    const body = JSON.stringify({
      chainId,
      ...("block" in at ? { blockNumber: rng.chance(0.5) ? Number(at.block) : `0x${at.block.toString(16)}` } : {}),
      ...(direction === undefined ? {} : { direction }),
      wallets: wallets.map((w) => spellAddress(rng, w)),
    });
    const path = `/registry/${version}/wallets`;
    const query = `POST ${path} ${body}`;
    const a = await ask(base, path, { method: "POST", headers: batchHeaders(headers), body });
    const fit = blockToCompare(a, at, await this.head());
    if (!("block" in fit)) return failed({ what: `${version} bulk listing`, query, ...fit });
    const block = fit.block;
    const entries = parseJsonExact(a.text) as ApiRecord[][];
    if (!Array.isArray(entries) || entries.length !== wallets.length || !entries.every(Array.isArray)) {
      const got = a.text.slice(0, 300);
      return failed({ what: `${version} bulk listing`, query, expected: `${wallets.length} lists`, got });
    }
    // Each wallet's own GET listing at that block, asked now.
    const own = new Map<Address, Answer>();
    await pool([...new Set(wallets)], 8, async (w) => {
      const get = `/registry/${version}/${w}?chainId=${chainId}&blockNumber=${block}`;
      own.set(w, await ask(base, direction ? `${get}&direction=${direction}` : get, { headers }));
    });
    this.count("bulk listing entries", entries.length);
    return async () => {
      const where = `${version} bulk listing (${direction ?? "no direction"}) at block ${block}`;
      const { mismatches, bad } = collector(where, query);
      for (const [i, w] of wallets.entries()) {
        const get = own.get(w)!;
        const mine = get.status === 200 ? canonical(parseJsonExact(get.text)) : `${get.status} ${get.text}`;
        if (get.block !== block || canonical(entries[i]) !== mine)
          bad(
            `wallets[${i}] (${w}) against GET ${get.path}`,
            `X-Indexed-Block ${block}: ${mine}`,
            canonical(entries[i]),
          );
      }
      const kit = await this.listingKit(version, direction, block);
      for (const w of new Set(wallets))
        await compareListing(oracles[version], kit, w, entries[wallets.indexOf(w)]!, block, bad);
      return mismatches;
    };
  }

  /** Hashes of delegations the writes touched (enabled, revoked, never enabled), `extra`, and an unknown one. */
  private drawHashes(n: number, extra: readonly Hex[]): Hex[] {
    const touched = [...new Set(this.world.writes.v2Events.map((e) => e.hash))];
    return [...this.rng.shuffle(touched).slice(0, n), ...extra, toHex(this.rng.bigint(256), { size: 32 })];
  }

  /**
   * `GET /registry/v2/delegation/:hash`: getDelegationsFromHashes([hash]) at the answer's block; a
   * hash with no delegation there is 404 delegation_not_found, with X-Indexed-Block that block.
   */
  private async askHash(base: string, hash: Hex, at: CompareAt): Promise<Judge> {
    const spelled = this.rng.chance(0.3) ? `0x${hash.slice(2).toUpperCase()}` : hash;
    const path = pathAt(`/registry/v2/delegation/${spelled}?chainId=${this.world.chainId}`, at);
    const a = await ask(base, path, { headers: this.world.headers() });
    const head = await this.head();
    const block = a.block;
    const fits = block !== undefined && ("block" in at ? block === at.block : block >= at.minBlock && block <= head);
    if (!fits) {
      const want = "block" in at ? `${at.block}` : `${at.minBlock}..${head}`;
      return failed({
        what: `delegation ${hash}: X-Indexed-Block`,
        query: path,
        expected: want,
        got: `${a.status} ${block}`,
      });
    }
    return async () => {
      const [found] = (await ethCalls(this.world.oracles.v2, [
        { functionName: "getDelegationsFromHashes", args: [[hash]], block },
      ])) as [Parameters<typeof expectedRecord>[0][]];
      const delegation = found[0]!;
      const type = a.headers.get("content-type") ?? "";
      let got: string;
      let want: string;
      if (delegation.type_ === 0) {
        this.count("hashes without a delegation (404)");
        const code = type.startsWith("application/problem+json")
          ? (JSON.parse(a.text) as { code?: string }).code
          : type;
        got = `${a.status} ${code}`;
        want = "404 delegation_not_found";
      } else {
        this.count("hashes of delegations (200)");
        got = a.status === 200 ? canonical(normalizeV2(parseJsonExact(a.text) as ApiRecord)) : `${a.status} ${a.text}`;
        want = canonical({ ...expectedRecord(delegation), hash });
      }
      return got === want ? [] : [{ what: `delegation ${hash} at block ${block}`, query: path, expected: want, got }];
    };
  }

  /** Checks of every type of `version`, drawn from what the writes wrote, each compared at the block it reports. */
  private async askChecks(base: string, version: Version, at: CompareAt): Promise<Judge> {
    const { writes, chainId, oracles } = this.world;
    const o = { ...oracles[version], serviceUrl: base, headers: this.world.headers() };
    const n = this.sizes.checks;
    let result: Awaited<ReturnType<typeof compareChecks>>;
    if (version === "v2") {
      const specs = Array.from({ length: n }, () =>
        v2c.randomCheck(this.rng, writes.pools.v2, writes.generators.v2.history),
      );
      const urls = specs.map((s) => v2c.checkUrl(this.rng, chainId, s));
      result = await compareChecks(o, v2c.v2Checks, specs, urls, at);
    } else {
      const keys = this.modelAt(writes.lastWriteBlock)
        .inForce()
        .map((d) => d.key);
      const specs = Array.from({ length: n }, () =>
        v1c.randomCheck(this.rng, writes.pools.v1, writes.generators.v1.delegations, keys),
      );
      const urls = specs.map((s) => v1c.checkUrl(this.rng, chainId, s));
      result = await compareChecks(o, v1c.v1Checks, specs, urls, at);
    }
    this.count(`${version} checks`, result.compared);
    this.count(`${version} checks true or non-zero`, result.positive);
    return async () => result.mismatches;
  }

  /**
   * Every question asked of `base` at `at`, each as the judge of its answer: checks of every type;
   * every listed wallet's listings whole and by direction (`wide`; else a few), some in pages;
   * vaults queries, then some of those with several vaults in pages; a bulk listing per version;
   * and hashes (`extraHashes` among them).
   */
  async askAll(base: string, at: CompareAt, wide: boolean, extraHashes: readonly Hex[] = []): Promise<Judge[]> {
    const { rng, sizes } = this;
    const { listed } = this.world;
    const asks: (() => Promise<Judge>)[] = [];
    const found: { version: Version; query: VaultQuery; n: number }[] = [];
    for (const version of VERSIONS) {
      asks.push(() => this.askChecks(base, version, at));
      const wallets = wide ? listed[version] : rng.shuffle([...listed[version]]).slice(0, sizes.someWallets);
      for (const w of wallets)
        for (const direction of [undefined, "incoming", "outgoing"] as const)
          asks.push(() => this.askListing(base, version, w, direction, at));
      for (let i = 0; i < sizes.listingsPaged; i++) {
        const [w, direction, limit] = [
          rng.pick(listed[version]),
          rng.pick(["incoming", "outgoing"] as const),
          rng.pick([2, 3]),
        ];
        asks.push(() => this.askListing(base, version, w, direction, at, limit));
      }
      for (const query of this.drawVaultQueries(version, sizes.vaultQueries))
        asks.push(() => this.askVaults(base, version, query, at, undefined, (n) => found.push({ version, query, n })));
      asks.push(() => this.askBulk(base, version, at));
    }
    for (const hash of this.drawHashes(sizes.hashes, extraHashes)) asks.push(() => this.askHash(base, hash, at));
    const judges = await pool(asks, 8, (f) => f());
    // Vaults in pages: queries whose whole answer held 2 vaults or more, in pages of fewer.
    const several = rng.shuffle(found.filter((f) => f.n >= 2)).slice(0, sizes.vaultPaged);
    const limit = (n: number) => rng.pick([1, 2, 3].filter((l) => l < n));
    judges.push(...(await pool(several, 8, (f) => this.askVaults(base, f.version, f.query, at, limit(f.n)))));
    return judges;
  }

  /** Asks `base` everything at `at` and judges it at once (the writes up to `at` are known). */
  async compareAll(base: string, at: CompareAt, extraHashes: readonly Hex[] = []): Promise<Mismatch[]> {
    return judge(await this.askAll(base, at, true, extraHashes));
  }

  /**
   * Each registry's whole history (`/registry/vN/history`, in pages) against the chain's logs up to
   * the block its first page reports, record for record; and every v2 record's `hash` that of the
   * delegation its event wrote, as the test computes it from its own writes.
   */
  async compareHistory(base: string): Promise<Mismatch[]> {
    const { chainId, rpcUrl, oracles, writes } = this.world;
    const mismatches: Mismatch[] = [];
    for (const version of VERSIONS) {
      const first = `/registry/${version}/history?chainId=${chainId}&limit=1000`;
      const paged = await followPages(() => base, first, { headers: this.world.headers() });
      const bad = (what: string, expected: string, got: string) =>
        mismatches.push({ what: `${version} history: ${what}`, query: first, expected, got });
      for (const p of paged.problems) bad("pages", "no problem", p);
      if (paged.block === undefined) continue;
      const logs = await registryLogs(rpcUrl, oracles[version].registry, 0n, paged.block);
      const revoked = version === "v1" ? writes.revoked() : undefined;
      const want = (await eventRecords(rpcUrl, version, abis[version], logs, revoked)).map((r) =>
        canonical(normalizeEvent(r)),
      );
      const got = (paged.items as ApiRecord[]).map((r) => canonical(normalizeEvent(r)));
      const k = got.findIndex((g, i) => g !== want[i]);
      if (k !== -1 || got.length !== want.length) {
        const at = k === -1 ? Math.min(got.length, want.length) : k;
        bad(
          `records at block ${paged.block} (${want.length} expected, ${got.length} got; first difference at #${at})`,
          want[at] ?? "(end)",
          got[at] ?? "(end)",
        );
      }
      this.count(`${version} history records`, got.length);
      if (version === "v2") {
        const hashes = new Map(writes.v2Events.map((e) => [`${e.block}/${e.logIndex}`, e.hash]));
        for (const r of paged.items as ApiRecord[]) {
          const hash = hashes.get(`${r.blockNumber}/${r.logIndex}`);
          if (hash !== undefined && r.hash !== hash) bad("a record's hash", hash, canonical(r));
        }
      }
    }
    return mismatches;
  }
}

/** Judges the answers: every mismatch with the contract. */
export async function judge(judges: readonly Judge[]): Promise<Mismatch[]> {
  return (await pool(judges, 8, (j) => j())).flat();
}
