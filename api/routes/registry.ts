/**
 * The routes both registry versions have, built from what differs between them: the checks (their
 * kinds, parameters and how a set of them is answered at one block), the delegation records and
 * the event records.
 */
import { type Context, Hono } from "hono";
import type { Address } from "viem";
import { parseAddress, parseUint256 } from "../../core/parse";
import { toJson } from "../http/json";
import { type Params, parseParam } from "../http/params";
import { notFound } from "../http/problem";
import { LISTING_DEFAULT_LIMIT } from "../limits";
import type { BlockRange, HistoryStore, Page, PageRequest } from "../store/history-store";
import type { ChainView, Store, WalletView } from "../store/store";
import { answerAt, chainRequest, pageAnswer, servedChainId } from "./answer";
import { readBatch } from "./batch";
import type { Env } from "./env";
import { LISTING_CACHE_MIN_ROWS } from "./listing-cache";
import { historyPage, listingPin } from "./pages";

/** How a set of checks is read: their answers, in order. */
export type CheckReads = {
  head: (store: Store, chainId: number) => Promise<ChainView<unknown[]> | undefined>;
  at: (history: HistoryStore, chainId: number, block: bigint) => Promise<unknown[]>;
};

/** What a registry version's routes are made of. */
export type RegistrySpec<K extends string, Q, Row, Event> = {
  version: "v1" | "v2";
  /** The check kinds: `/check/<kind>`, and a batch item's `type`. */
  kinds: readonly K[];
  /** Every parameter a check reads (a batch item's field that must be a string or a number). */
  checkParams: ReadonlySet<string>;
  checkQuery: (kind: K, params: Params) => Q;
  /** Reads checks together (one answer each), at the newest indexed block or at a block. */
  readChecks: (queries: Q[]) => CheckReads;
  /** The wallet's whole listing at the newest indexed block (no rows while `held` is its revision). */
  wallet: (store: Store, chainId: number, wallet: Address, held?: string) => Promise<WalletView<Row> | undefined>;
  /** A page of the wallet's listing at a block. */
  walletAt: (
    history: HistoryStore,
    chainId: number,
    wallet: Address,
    block: bigint,
    page: PageRequest,
  ) => Promise<Page<Row>>;
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
  record: (row: Row) => unknown;
  eventRecord: (event: Event) => unknown;
};

/** A path parameter that is an address. */
const encoder = new TextEncoder();

const addressParam = (c: Context<Env>, name: string): Address =>
  parseParam(name, c.req.param(name) ?? "", parseAddress);

/** The checks (one by GET, many by POST), listings, contract listings and history of one registry version. */
export function registryRoutes<K extends string, Q, Row, Event>(spec: RegistrySpec<K, Q, Row, Event>): Hono<Env> {
  const { version } = spec;
  const routes = new Hono<Env>();

  /** Answers checks together at one block (the newest indexed, or `asked`); `body` shapes their answers. */
  const answerChecks = (
    c: Context<Env>,
    chainId: number,
    asked: bigint | undefined,
    queries: Q[],
    body: (answers: unknown[]) => unknown,
  ) => {
    const read = spec.readChecks(queries);
    return answerAt(c, chainId, asked, {
      head: async () => {
        const view = await read.head(c.var.store, chainId);
        return view && { ...view, body: body(view.data) };
      },
      at: async (history, block) => body(await read.at(history, chainId, block)),
    });
  };

  routes.post("/check", async (c) => {
    const batch = await readBatch(c, spec.kinds, spec.checkParams);
    const chainId = servedChainId(c.var, version, batch.params);
    const queries = batch.items.map(({ type, params }) => spec.checkQuery(type, params));
    return answerChecks(c, chainId, batch.params.blockNumber(), queries, (answers) => answers);
  });

  for (const kind of spec.kinds) {
    routes.get(`/check/${kind}`, (c) => {
      const { chainId, params } = chainRequest(c, version);
      const query = spec.checkQuery(kind, params);
      return answerChecks(c, chainId, params.blockNumber(), [query], ([answer]) => answer);
    });
  }
  // Below "check" are the checks only: it is not a wallet.
  routes.all("/check/*", notFound);

  const history = (c: Context<Env>, wallet: Address | undefined) =>
    historyPage(
      c,
      version,
      (chainId, store, range, page) => spec.events(store, chainId, wallet, range, page),
      spec.eventRecord,
    );
  routes.get("/history", (c) => history(c, undefined));
  routes.get("/:wallet/history", (c) => history(c, addressParam(c, "wallet")));

  routes.get("/contract/:contract", (c) =>
    pageAnswer(c, version, {
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
  );

  routes.get("/:wallet", (c) => {
    const { chainId, params } = chainRequest(c, version);
    const wallet = addressParam(c, "wallet");
    // Pages come from the history; a whole listing from the Store, or from the history at a past block.
    if (params.get("limit") !== undefined || params.get("cursor") !== undefined) {
      return pageAnswer(c, version, {
        defaultLimit: undefined,
        pin: listingPin,
        read: (_, __, store, block, page) => spec.walletAt(store, chainId, wallet, block, page),
        record: spec.record,
      });
    }
    return answerAt(c, chainId, params.blockNumber(), {
      head: async () => {
        // Rendered once per revision of the wallet's rows, where the store numbers them.
        const key = `${version}/${chainId}/${wallet}`;
        const held = c.var.listings.get(key);
        const view = await spec.wallet(c.var.store, chainId, wallet, held?.revision);
        if (view === undefined) return undefined;
        if (view.data === undefined) return { ...view, body: held!.json };
        const json = encoder.encode(toJson(view.data.map(spec.record)));
        if (view.ready && view.revision !== undefined && view.data.length >= LISTING_CACHE_MIN_ROWS)
          c.var.listings.set(key, { revision: view.revision, json });
        return { ...view, body: json };
      },
      at: async (store, block) => (await spec.walletAt(store, chainId, wallet, block, {})).items.map(spec.record),
    });
  });

  return routes;
}
