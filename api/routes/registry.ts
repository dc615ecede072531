/**
 * The routes both registry versions have, built from what differs between them: the checks (their
 * kinds, parameters and how a set of them is answered at one block), which delegations a wallet
 * takes part in which way, the vaults a check lets a hot wallet act for, the delegation records and
 * the event records.
 */
import type { Context } from "hono";
import type { Address } from "viem";
import type { Moment } from "../../core/moment";
import { type Direction, parseAddress, parseDirection, parseOneOf, parseUint256 } from "../../core/parse";
import { rowCap, unitsBeyond } from "../access/middleware";
import { toJson } from "../http/json";
import { type Params, parseParam } from "../http/params";
import { Problem } from "../http/problem";
import { LISTING_DEFAULT_LIMIT, MAX_BULK_RECORDS } from "../limits";
import type { BlockRange, HistoryStore, Page, PageRequest, WalletsRead } from "../store/history-store";
import type {
  AddressJson,
  ChainView,
  Checksum,
  ListingsJson,
  PageJson,
  Spelt,
  Store,
  VaultsJson,
  WalletView,
} from "../store/store";
import { answerAt, type BlockRead, chainRequest, historyOf, pageAnswer, servedChainId } from "./answer";
import { readBatch, readWallets } from "./batch";
import type { Env, Reading } from "./env";
import { LISTING_CACHE_MIN_ROWS, type ListingCache } from "./listing-cache";
import { historyPage, listingPin } from "./pages";
import type { Answers, Route } from "./table";

/** How a set of checks is read: their answers, in order. */
export type CheckReads = {
  head: (store: Store, chainId: number) => Promise<ChainView<unknown[]> | undefined>;
  /**
   * At `block` from the store, where it can tell (see Store's v2EnabledAt): `data` undefined where it
   * cannot tell any, an answer undefined where it cannot tell that one (the history's to give).
   */
  heldAt: (store: Store, chainId: number, block: bigint) => Promise<ChainView<unknown[] | undefined> | undefined>;
  at: (history: HistoryStore, chainId: number, block: bigint) => Promise<unknown[]>;
};

/** What a registry version's routes are made of. */
export type RegistrySpec<K extends string, Q, VQ, Row, Event, Vault> = {
  version: "v1" | "v2";
  /** The check kinds: `/check/<kind>`, and a batch item's `type`. */
  kinds: readonly K[];
  /** Every parameter a check reads (a batch item's field that must be a string or a number). */
  checkParams: ReadonlySet<string>;
  checkQuery: (kind: K, params: Params) => Q;
  /** Reads checks together (one answer each), at the newest indexed block or at a block. */
  readChecks: (queries: Q[]) => CheckReads;
  /** The wallet's whole listing at the newest indexed block (no rows while `held` is its revision). */
  wallet: (
    store: Store,
    chainId: number,
    wallet: Address,
    held?: string,
    spell?: boolean,
  ) => Promise<WalletView<Row> | undefined>;
  /** Each wallet's whole listing at the newest indexed block, all from one view. */
  wallets: (
    store: Store,
    chainId: number,
    wallets: readonly Address[],
  ) => Promise<(ChainView<Row[][]> & Spelt) | undefined>;
  /** A page of the wallet's listing in `direction` at a block. */
  walletAt: (
    history: HistoryStore,
    chainId: number,
    wallet: Address,
    block: bigint,
    page: PageRequest,
    direction: Direction,
  ) => Promise<Page<Row>>;
  /** A page of walletAt's as JSON, where the store writes it (see Store's v2WalletPageJson); absent: never. */
  pageJsonAt?: (
    store: Store,
    chainId: number,
    wallet: Address,
    block: bigint,
    page: PageRequest,
    direction: Direction,
  ) => Promise<ChainView<PageJson | undefined> | undefined>;
  /** wallets as at a block, where the store can tell (see Store's v2WalletsAt); absent: never. */
  walletsHeldAt?: (
    store: Store,
    chainId: number,
    wallets: readonly Address[],
    block: bigint,
  ) => Promise<(ChainView<(Row[] | undefined)[]> & Spelt) | undefined>;
  /** wallets (at `block`, walletsHeldAt) in `direction` as JSON, where the store writes it (Store's v2WalletsJson). */
  walletsJson?: (
    store: Store,
    chainId: number,
    wallets: readonly Address[],
    direction: Direction,
    block: bigint | undefined,
    most: number,
  ) => Promise<ChainView<ListingsJson | undefined> | undefined>;
  /** Many wallets' whole listings in `direction` at a block, no more than `most` rows read in all. */
  walletsAt: (
    history: HistoryStore,
    chainId: number,
    wallets: readonly Address[],
    block: bigint,
    most: number,
    direction: Direction,
  ) => WalletsRead<Row>;
  /** Whether a row of the wallet's listing is in its listing in `direction`. */
  inDirection: (row: Row, wallet: Address, direction: Direction) => boolean;
  /** A vaults query: a check of `kind` for hot wallet `wallet`, from the check's parameters but the vault. */
  vaultQuery: (kind: K, params: Params, wallet: Address) => VQ;
  /** The vaults the query lets its hot wallet act for, by address, from the wallet's incoming delegations. */
  vaults: (query: VQ, incoming: Row[]) => Vault[];
  /** The vaults at the newest indexed block as JSON, where the store writes it (Store's v2VaultsJson). */
  vaultsJson?: (store: Store, chainId: number, query: VQ) => Promise<ChainView<VaultsJson> | undefined>;
  vaultAddress: (vault: Vault) => Address;
  vaultRecord: (vault: Vault) => unknown;
  /** A page of the contract's listing at a block. */
  contractAt: (
    history: HistoryStore,
    chainId: number,
    contract: Address,
    tokenId: bigint | undefined,
    block: bigint,
    page: PageRequest,
  ) => Promise<Page<Row>>;
  /** A page of the events in a range (of the wallet's, when given). */
  events: (
    history: HistoryStore,
    chainId: number,
    wallet: Address | undefined,
    range: BlockRange,
    page: PageRequest,
  ) => Promise<Page<Event>>;
  /** A row as listed, its addresses spelt by `checksum` when given (a store's: WalletView). */
  record: (row: Row, checksum?: Checksum) => unknown;
  /** A page of events as JSON, their records' (records.ts); `spell`: the store's spellings, where it keeps them. */
  eventsJson: (events: Event[], spell?: AddressJson) => Uint8Array<ArrayBuffer>;
};

const encoder = new TextEncoder();

/** The 413 of a bulk listing whose answer would hold more than MAX_BULK_RECORDS records. */
const tooManyRecords = () =>
  new Problem(
    "content_too_large",
    `the listings would hold more than ${MAX_BULK_RECORDS} delegations together; split the list of wallets`,
  );

/** A path parameter that is an address. */
const addressParam = (c: Context<Env>, name: string): Address =>
  parseParam(name, c.req.param(name) ?? "", parseAddress);

/** A whole listing's `direction`: both (the default), incoming or outgoing. */
export const directionOf = (params: Params): Direction => params.optional("direction", parseDirection) ?? "both";

/** The rows of a wallet's listing that are in its listing in `direction`. */
const rowsInDirection = <Row>(
  spec: Pick<RegistrySpec<string, unknown, unknown, Row, unknown, unknown>, "inDirection">,
  rows: Row[],
  wallet: Address,
  direction: Direction,
) => (direction === "both" ? rows : rows.filter((row) => spec.inDirection(row, wallet, direction)));

/** A wallet's whole listing at the newest indexed block: its view, its JSON and how many records it holds. */
export type WholeListing = Omit<ChainView<unknown>, "data"> & { json: Uint8Array<ArrayBuffer>; records: number };

/** A listing's form other than the route's JSON (api/rpc/calls.ts): its name, and its bytes from the rows. */
export type ListingForm<Row> = { name: string; render: (rows: Row[]) => Uint8Array<ArrayBuffer> };

/**
 * The wallet's whole listing in `direction` at the newest indexed block, as JSON (or in `form`):
 * written once per revision of the wallet's rows where the store numbers them, and then held in
 * `listings`.
 */
export async function wholeListing<Row>(
  spec: Pick<
    RegistrySpec<string, unknown, unknown, Row, unknown, unknown>,
    "version" | "wallet" | "walletsJson" | "inDirection" | "record"
  >,
  store: Store,
  listings: ListingCache,
  chainId: number,
  wallet: Address,
  direction: Direction,
  form?: ListingForm<Row>,
): Promise<WholeListing | undefined> {
  const key = `${spec.version}/${chainId}/${wallet}/${direction}${form ? `/${form.name}` : ""}`;
  const held = listings.get(key);
  if (form === undefined && held === undefined) {
    // Written from the copy where it writes it, but stopped at a length that is held (below).
    const view = await spec.walletsJson?.(store, chainId, [wallet], direction, undefined, LISTING_CACHE_MIN_ROWS - 1);
    const written = view?.data;
    if (view !== undefined && written !== undefined && written.records < LISTING_CACHE_MIN_ROWS) {
      const { indexedBlock, ready } = view;
      // The wallet's list, out of the list of lists.
      return { indexedBlock, ready, json: written.json.subarray(1, -1), records: written.records };
    }
  }
  const view = await spec.wallet(store, chainId, wallet, held?.revision, true);
  if (view === undefined) return undefined;
  const { indexedBlock, ready } = view;
  if (view.data === undefined) return { indexedBlock, ready, json: held!.json, records: held!.records };
  const rows = rowsInDirection(spec, view.data, wallet, direction);
  const json = form ? form.render(rows) : encoder.encode(toJson(rows.map((row) => spec.record(row, view.checksum))));
  if (ready && view.revision !== undefined && rows.length >= LISTING_CACHE_MIN_ROWS)
    listings.set(key, { revision: view.revision, json, records: rows.length });
  return { indexedBlock, ready, json, records: rows.length };
}

/** How checks are read together at one block (answerAt's reads); `body` shapes their answers. */
export function checksRead<Q>(
  spec: Pick<RegistrySpec<string, Q, unknown, unknown, unknown, unknown>, "readChecks">,
  vars: Pick<Reading, "store" | "history">,
  chainId: number,
  queries: Q[],
  body: (answers: unknown[]) => unknown,
): BlockRead {
  const read = spec.readChecks(queries);
  return {
    head: async () => {
      const view = await read.head(vars.store, chainId);
      return view && { ...view, body: body(view.data) };
    },
    heldAt: async (block) => {
      const held = await read.heldAt(vars.store, chainId, block);
      if (!held?.ready || held.data === undefined) return undefined;
      const answers = held.data;
      const untold = answers.flatMap((answer, i) => (answer === undefined ? [i] : []));
      if (untold.length > 0) {
        // The checks a row changed after `block` for: the history's, asked for them alone.
        const history = historyOf(vars, chainId);
        const rest = await spec.readChecks(untold.map((i) => queries[i]!)).at(history, chainId, block);
        untold.forEach((i, k) => {
          answers[i] = rest[k];
        });
      }
      return body(answers);
    },
    at: async (history, block) => body(await read.at(history, chainId, block)),
  };
}

/** The checks of one registry version: one by GET (of its route's kind), many by POST. */
function checkAnswers<K extends string, Q>(
  spec: Pick<
    RegistrySpec<K, Q, unknown, unknown, unknown, unknown>,
    "version" | "kinds" | "checkParams" | "checkQuery" | "readChecks"
  >,
): Answers {
  const { version } = spec;
  /** Answers checks together at one block (the newest indexed, or `asked`); `body` shapes their answers. */
  const answerChecks = (
    c: Context<Env>,
    chainId: number,
    asked: bigint | Moment | undefined,
    queries: Q[],
    body: (answers: unknown[]) => unknown,
  ) => answerAt(c, chainId, asked, checksRead(spec, c.var, chainId, queries, body));
  return {
    checks: () => async (c) => {
      const batch = await readBatch(c, spec.kinds, spec.checkParams);
      const chainId = servedChainId(c.var, version, batch.params);
      const queries = batch.items.map(({ type, params }) => spec.checkQuery(type, params));
      return answerChecks(c, chainId, batch.params.at(), queries, (answers) => answers);
    },
    check: (route) => {
      const kind = checkKind(spec, route);
      return (c) => {
        const { chainId, params } = chainRequest(c, version);
        const query = spec.checkQuery(kind, params);
        return answerChecks(c, chainId, params.at(), [query], ([answer]) => answer);
      };
    },
  };
}

/** The check kind of `route`, one of the version's (else the table names a check no one answers). */
export function checkKind<K extends string>(spec: { version: string; kinds: readonly K[] }, route: Route): K {
  if (!(spec.kinds as readonly (string | undefined)[]).includes(route.kind)) {
    throw new Error(`${route.path}: the ${spec.version} registry has no check "${route.kind}"`);
  }
  return route.kind as K;
}

/** The history of one registry version, chain-wide or a wallet's, and its contract listings: pages. */
function historyAnswers<Row, Event>(
  spec: Pick<RegistrySpec<string, unknown, unknown, Row, Event, unknown>, "version" | "events" | "eventsJson">,
): Answers {
  const { version } = spec;
  const history = (c: Context<Env>, wallet: Address | undefined) =>
    historyPage(
      c,
      version,
      (chainId, store, range, page) => spec.events(store, chainId, wallet, range, page),
      (events, chainId) => spec.eventsJson(events, c.var.store.addressJson?.(chainId)),
    );
  return {
    history: () => (c) => history(c, undefined),
    walletHistory: () => (c) => history(c, addressParam(c, "wallet")),
  };
}

/** A registry version's listings of a contract's delegations: pages. */
function contractAnswers<Row>(
  spec: Pick<RegistrySpec<string, unknown, unknown, Row, unknown, unknown>, "version" | "contractAt" | "record">,
): Answers {
  return {
    contractListing: () => (c) =>
      pageAnswer(c, spec.version, {
        defaultLimit: LISTING_DEFAULT_LIMIT,
        pin: listingPin,
        read: (chainId, params, store, block, page) =>
          spec.contractAt(
            store,
            chainId,
            addressParam(c, "contract"),
            params.optional("tokenId", parseUint256),
            block,
            page,
          ),
        record: spec.record,
      }),
  };
}

/**
 * The wallet's whole listing in `direction` at a past block, from the store where it can tell (with
 * its spellings, as its listings at the head), else from the history: for a keyless client, no more
 * rows than its budget pays for (more is a 429, the history's rows past them unread), charged.
 */
async function listAt<Row>(
  spec: Pick<
    RegistrySpec<string, unknown, unknown, Row, unknown, unknown>,
    "walletAt" | "walletsHeldAt" | "inDirection"
  >,
  vars: Reading,
  chainId: number,
  wallet: Address,
  block: bigint,
  direction: Direction,
): Promise<{ rows: Row[]; checksum?: Checksum }> {
  const cap = rowCap(vars.budget);
  const tooMuch = () => listingTooMuch(vars, direction, cap!);
  const held = await spec.walletsHeldAt?.(vars.store, chainId, [wallet], block);
  const told = held?.ready ? held.data[0] : undefined;
  if (told === undefined) {
    const page = await spec.walletAt(historyOf(vars, chainId), chainId, wallet, block, { limit: cap }, direction);
    if (page.more) throw tooMuch();
    await vars.budget.charge(unitsBeyond(page.items.length));
    return { rows: page.items };
  }
  const rows = rowsInDirection(spec, told, wallet, direction);
  if (cap !== undefined && rows.length > cap) throw tooMuch();
  await vars.budget.charge(unitsBeyond(rows.length));
  return { rows, checksum: held!.checksum };
}

/** A wallet's listing past what a keyless client's budget pays for (`cap` rows). */
const listingTooMuch = (vars: Reading, direction: Direction, cap: number) =>
  vars.budget.tooMuch(`the wallet's ${direction} listing`, cap);

/**
 * A wallet's whole listing in `direction` at `block` as JSON, where the store writes it (its page
 * of all, listAt's bounds applied); undefined where it cannot tell.
 */
async function writtenListAt(
  spec: Pick<RegistrySpec<string, unknown, unknown, unknown, unknown, unknown>, "pageJsonAt">,
  vars: Reading,
  chainId: number,
  wallet: Address,
  block: bigint,
  direction: Direction,
): Promise<Uint8Array<ArrayBuffer> | undefined> {
  const cap = rowCap(vars.budget);
  const view = await spec.pageJsonAt?.(vars.store, chainId, wallet, block, { limit: cap }, direction);
  if (!view?.ready || view.data === undefined) return undefined;
  if (view.data.more) throw listingTooMuch(vars, direction, cap!);
  await vars.budget.charge(unitsBeyond(view.data.count));
  return view.data.json;
}

/** Many wallets' whole listings at one block (a POST's body names them). */
function walletListingsAnswer<K extends string, Q, VQ, Row, Event, Vault>(
  spec: RegistrySpec<K, Q, VQ, Row, Event, Vault>,
): Answers {
  return {
    walletListings: () => async (c) => {
      const { params, wallets } = await readWallets(c);
      const chainId = servedChainId(c.var, spec.version, params);
      const direction = directionOf(params);
      /** `asked` wallets' listings from the history, no more rows than the bounds let through after `told` others. */
      const listingsAt = async (history: HistoryStore, asked: Address[], block: bigint, told: number) => {
        const cap = rowCap(c.var.budget, wallets.length);
        const most = Math.min(MAX_BULK_RECORDS, cap ?? MAX_BULK_RECORDS);
        const tooMany = () => (most < MAX_BULK_RECORDS ? c.var.budget.tooMuch("the listings", most) : tooManyRecords());
        if (told > most) throw tooMany();
        // However large a wallet's list.
        const { lists, more } = await spec.walletsAt(history, chainId, asked, block, most - told, direction);
        if (more) throw tooMany();
        return lists;
      };
      /** Bounds the records (past the bound, split the list); charges rows beyond what the wallets paid for. */
      const charged = async (records: number) => {
        if (records > MAX_BULK_RECORDS) throw tooManyRecords();
        await c.var.budget.charge(unitsBeyond(records, wallets.length));
      };
      const answer = async (lists: Row[][], checksum?: Checksum) => {
        await charged(lists.reduce((sum, list) => sum + list.length, 0));
        return lists.map((list) => list.map((row) => spec.record(row, checksum)));
      };
      /** The listings as JSON where the store writes it (undefined where it does not, or cannot tell at `block`). */
      const written = async (block?: bigint) => {
        const view = await spec.walletsJson?.(c.var.store, chainId, wallets, direction, block, MAX_BULK_RECORDS);
        if (view?.data === undefined || (block !== undefined && !view.ready)) return undefined;
        await charged(view.data.records);
        return { ...view, body: view.data.json };
      };
      return answerAt(c, chainId, params.at(), {
        head: async () => {
          const json = await written();
          if (json !== undefined) return json;
          const view = await spec.wallets(c.var.store, chainId, wallets);
          if (view === undefined) return undefined;
          const lists = view.data.map((rows, i) => rowsInDirection(spec, rows, wallets[i]!, direction));
          return { ...view, body: await answer(lists, view.checksum) };
        },
        heldAt: async (block) => {
          const json = await written(block);
          if (json !== undefined) return json.body;
          const held = await spec.walletsHeldAt?.(c.var.store, chainId, wallets, block);
          if (!held?.ready) return undefined;
          const lists = held.data.map((rows, i) => rows && rowsInDirection(spec, rows, wallets[i]!, direction));
          const untold = lists.flatMap((list, i) => (list === undefined ? [i] : []));
          if (untold.length === wallets.length) return undefined;
          if (untold.length > 0) {
            // The wallets a row changed after `block` for: the history's, asked for them alone.
            const told = lists.reduce((sum, list) => sum + (list?.length ?? 0), 0);
            const rest = await listingsAt(
              historyOf(c.var, chainId),
              untold.map((i) => wallets[i]!),
              block,
              told,
            );
            untold.forEach((i, k) => {
              lists[i] = rest[k];
            });
          }
          return answer(lists as Row[][], held.checksum);
        },
        at: async (history, block) => answer(await listingsAt(history, wallets, block, 0)),
      });
    },
  };
}

/** The vaults a check lets a hot wallet act for: whole, or a page with `limit`. */
function vaultsAnswer<K extends string, Q, VQ, Row, Event, Vault>(
  spec: RegistrySpec<K, Q, VQ, Row, Event, Vault>,
): Answers {
  const { version } = spec;
  const parseKind = parseOneOf(spec.kinds);
  return {
    vaults: () => (c) => {
      const { chainId, params } = chainRequest(c, version);
      const wallet = addressParam(c, "wallet");
      const kind = params.required(["type"], parseKind);
      const query = spec.vaultQuery(kind, params, wallet);
      if (params.get("limit") !== undefined || params.get("cursor") !== undefined) {
        // Each vault held beside its address: a vault may be the bare address (v1), which takes no fields.
        return pageAnswer<{ vault: Vault }, Address>(c, version, {
          defaultLimit: undefined,
          pin: listingPin,
          orderedBy: "address",
          read: async (_, __, ___, block, page) => {
            const all = spec.vaults(query, (await listAt(spec, c.var, chainId, wallet, block, "incoming")).rows);
            const from = page.after === undefined ? 0 : all.findIndex((v) => spec.vaultAddress(v) > page.after!);
            const rest = from < 0 ? [] : all.slice(from);
            const items = rest.slice(0, page.limit).map((vault) => ({ vault, position: spec.vaultAddress(vault) }));
            return { items, more: rest.length > items.length };
          },
          record: ({ vault }) => spec.vaultRecord(vault),
        });
      }
      return answerAt(c, chainId, params.at(), {
        head: async () => {
          const written = await spec.vaultsJson?.(c.var.store, chainId, query);
          if (written !== undefined) {
            await c.var.budget.charge(unitsBeyond(written.data.incoming));
            return { ...written, body: written.data.json };
          }
          const view = await spec.wallet(c.var.store, chainId, wallet);
          if (view === undefined) return undefined;
          const incoming = rowsInDirection(spec, view.data ?? [], wallet, "incoming");
          await c.var.budget.charge(unitsBeyond(incoming.length));
          return { ...view, body: spec.vaults(query, incoming).map(spec.vaultRecord) };
        },
        at: async (_, block) =>
          spec
            .vaults(query, (await listAt(spec, c.var, chainId, wallet, block, "incoming")).rows)
            .map(spec.vaultRecord),
      });
    },
  };
}

/**
 * How a wallet's whole listing in `direction` is read for an answer in `form` (answerAt's reads;
 * api/rpc/): at the newest indexed block, rendered in that form and held (wholeListing); at a past
 * block, its rows, from the history. A keyless client pays for the rows beyond the first hundred,
 * as for the listing's route.
 */
export function listingRead<Row>(
  spec: Pick<
    RegistrySpec<string, unknown, unknown, Row, unknown, unknown>,
    "version" | "wallet" | "walletAt" | "walletsHeldAt" | "inDirection" | "record"
  >,
  vars: Reading & Pick<Env["Variables"], "listings">,
  chainId: number,
  wallet: Address,
  direction: Direction,
  form: ListingForm<Row>,
): BlockRead {
  return {
    head: async () => {
      const whole = await wholeListing(spec, vars.store, vars.listings, chainId, wallet, direction, form);
      if (whole === undefined) return undefined;
      await vars.budget.charge(unitsBeyond(whole.records));
      return { ...whole, body: whole.json };
    },
    at: async (_, block) => (await listAt(spec, vars, chainId, wallet, block, direction)).rows,
  };
}

/** A wallet's listing: whole, or a page with `limit`. */
function walletListingAnswer<K extends string, Q, VQ, Row, Event, Vault>(
  spec: RegistrySpec<K, Q, VQ, Row, Event, Vault>,
): Answers {
  const { version } = spec;
  return {
    walletListing: () => (c) => {
      const { chainId, params } = chainRequest(c, version);
      const wallet = addressParam(c, "wallet");
      const direction = directionOf(params);
      // Pages from the Store where it can tell, else the history; a whole listing from the Store,
      // or from the history at a past block.
      if (params.get("limit") !== undefined || params.get("cursor") !== undefined) {
        return pageAnswer(c, version, {
          defaultLimit: undefined,
          pin: listingPin,
          read: async (_, __, history, block, page) => {
            const held = await spec.pageJsonAt?.(c.var.store, chainId, wallet, block, page, direction);
            if (held?.ready && held.data !== undefined) return held.data;
            return spec.walletAt(history, chainId, wallet, block, page, direction);
          },
          record: spec.record,
        });
      }
      return answerAt(c, chainId, params.at(), {
        head: async () => {
          const listing = await wholeListing(spec, c.var.store, c.var.listings, chainId, wallet, direction);
          if (listing === undefined) return undefined;
          await c.var.budget.charge(unitsBeyond(listing.records));
          return { ...listing, body: listing.json };
        },
        heldAt: (block) => writtenListAt(spec, c.var, chainId, wallet, block, direction),
        at: async (_, block) => {
          const { rows, checksum } = await listAt(spec, c.var, chainId, wallet, block, direction);
          return rows.map((row) => spec.record(row, checksum));
        },
      });
    },
  };
}

/**
 * What answers the routes both registry versions have (api/routes/table.ts): their checks (one by
 * GET, many by POST), history, contract listings, listings and vaults.
 */
export function registryAnswers<K extends string, Q, VQ, Row, Event, Vault>(
  spec: RegistrySpec<K, Q, VQ, Row, Event, Vault>,
): Answers {
  return {
    ...checkAnswers(spec),
    ...historyAnswers(spec),
    ...contractAnswers(spec),
    ...walletListingsAnswer(spec),
    ...vaultsAnswer(spec),
    ...walletListingAnswer(spec),
  };
}
