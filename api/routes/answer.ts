/**
 * The common shape of every read: parse the query and the chain, pick the block to answer at, read
 * one consistent view of the chain there, and answer with its body and that block
 * (`X-Indexed-Block`). A chain still backfilling answers 503, because a `false`, `0` or `[]` from a
 * partial history could be wrong.
 *
 * At the newest indexed block (no `blockNumber`), a read goes to the Store: the replica's copy in
 * memory, or the indexer's current-state tables. At a block asked for, and for every page, it goes
 * to the HistoryStore, which answers at any indexed block: a page's cursor pins the block of the
 * first page, so that the pages together are the whole answer at that block.
 */
import type { Context } from "hono";
import type { Address } from "viem";
import type { Moment } from "../../core/moment";
import { rowCap, unitsBeyond } from "../access/middleware";
import { toJson } from "../http/json";
import { Params } from "../http/params";
import { Problem } from "../http/problem";
import type { HistoryStore, Page, PageRequest, Position } from "../store/history-store";
import type { ServedChain } from "../store/served-chains";
import type { ChainPosition, ChainView, Checksum, PageJson, Spelt } from "../store/store";
import { type ChainAlarms, replacedHead } from "../watch/chain-alarms";
import { type Cursor, decodeCursor, encodeCursor, requestDigest } from "./cursor";
import type { Env, Reading } from "./env";
import { blockAtMoment } from "./moment";

/** Seconds a client should wait before asking again about a chain that is still syncing. */
const SYNC_RETRY_AFTER = "5";

/** The 503 of a chain whose history is not fully indexed yet. */
function syncing(chainId: number, indexedBlock?: bigint): Problem {
  return new Problem("chain_syncing", `chain ${chainId} is still being indexed; its answers would be incomplete`, {
    headers: {
      "Retry-After": SYNC_RETRY_AFTER,
      ...(indexedBlock === undefined ? {} : { "X-Indexed-Block": indexedBlock.toString() }),
    },
  });
}

/** A request's parameters and the chain it asks about (see servedChainId). */
export function chainRequest(c: Context<Env>, version: "v1" | "v2"): { chainId: number; params: Params } {
  const params = Params.ofUrl(c.req.url);
  return { params, chainId: servedChainId(c.var, version, params) };
}

/**
 * The chain `params` ask about: one where `version` is served, and whose indexed history can be
 * trusted (else 503 chain_reorganized: it mixes two branches, see api/watch/deep-reorg.ts).
 */
export function servedChainId(
  served: { chains: readonly ServedChain[]; alarms: ChainAlarms },
  version: "v1" | "v2",
  params: Params,
): number {
  const chainId = params.chainId(
    served.chains.filter((chain) => chain[version] !== undefined).map((chain) => chain.id),
  );
  return trustedChain(served, chainId);
}

/** `chainId`, unless its indexed history cannot be trusted (see servedChainId). */
export function trustedChain(served: { alarms: ChainAlarms }, chainId: number): number {
  const alarm = served.alarms.current().get(chainId);
  if (alarm !== undefined) throw new Problem("chain_reorganized", alarm);
  const replaced = served.alarms.replaced().get(chainId);
  if (replaced !== undefined) throw replacedHead(replaced);
  return chainId;
}

/** The chain's newest indexed block, once it is backfilled (else 503). */
export async function readyPosition(vars: Pick<Reading, "store">, chainId: number): Promise<ChainPosition> {
  const position = (await vars.store.chainStates()).get(chainId);
  if (position === undefined || !position.ready) throw syncing(chainId, position?.indexedBlock);
  return position;
}

/**
 * The block a read answers at: `asked` (or the newest indexed), which must be indexed already; a
 * block past it is a 400 naming `param`. A block asked for is read from the history tables: where
 * this process's copy is a sync behind them (another process, or replica worker, answered at that
 * block a moment ago), their newest block bounds it. A moment asked is its block (api/routes/moment.ts).
 */
export async function indexedBlock(
  vars: Reading,
  chainId: number,
  asked?: bigint | Moment,
  param = "blockNumber",
): Promise<bigint> {
  const position = await readyPosition(vars, chainId);
  if (typeof asked === "object") return blockAtMoment(vars, chainId, position, asked);
  const { indexedBlock } = position;
  if (asked === undefined || asked <= indexedBlock) return asked ?? indexedBlock;
  const newest = (await vars.history?.indexedBlock(chainId)) ?? indexedBlock;
  if (asked <= newest) return asked;
  throw new Problem(
    "block_not_indexed",
    `block ${asked} of chain ${chainId} is not indexed yet; the newest indexed block is ${newest}`,
    { param, indexedBlock: Number(newest) },
  );
}

/** The HistoryStore, or a 503 where there is none (nothing is indexed yet). */
export function historyOf(vars: Pick<Reading, "history">, chainId: number): HistoryStore {
  if (vars.history === undefined) throw syncing(chainId);
  return vars.history;
}

/** The headers of a JSON answer at `block`. */
export const jsonHeaders = (block: bigint) => ({
  "Content-Type": "application/json",
  "X-Indexed-Block": block.toString(),
});

/** A 200 JSON answer at `block` (a Uint8Array `body` is JSON already written). */
export function jsonAnswer(c: Context<Env>, body: unknown, block: bigint, headers: Record<string, string> = {}) {
  return c.body(body instanceof Uint8Array ? (body as Uint8Array<ArrayBuffer>) : toJson(body), 200, {
    ...headers,
    ...jsonHeaders(block),
  });
}

/** What a read answers at the newest indexed block (a Store read): its body, and the view's block. */
export type HeadRead = () => Promise<(Omit<ChainView<unknown>, "data"> & { body: unknown }) | undefined>;

/**
 * A check, a batch or a whole listing: at the newest indexed block by `head` (a Store read), or at
 * the block `asked` by `heldAt` where the Store can tell (its body; undefined where not), else by
 * `at` (a HistoryStore read).
 */
export async function answerAt(
  c: Context<Env>,
  chainId: number,
  asked: bigint | Moment | undefined,
  read: BlockRead,
): Promise<Response> {
  const { body, block } = await readAt(c.var, chainId, asked, read);
  return jsonAnswer(c, body, block);
}

/** How answerAt reads: at the head, from the Store where it can tell, else from the history. */
export type BlockRead = {
  head: HeadRead;
  heldAt?: (block: bigint) => Promise<unknown>;
  at: (history: HistoryStore, block: bigint) => Promise<unknown>;
};

/** What answerAt answers, as its body and block (for answers in another form: api/rpc/). */
export async function readAt(
  vars: Reading,
  chainId: number,
  asked: bigint | Moment | undefined,
  read: BlockRead,
): Promise<{ body: unknown; block: bigint }> {
  if (asked !== undefined) {
    const block = await indexedBlock(vars, chainId, asked);
    const held = await read.heldAt?.(block);
    return { body: held ?? (await read.at(historyOf(vars, chainId), block)), block };
  }
  const view = await read.head();
  if (view === undefined || !view.ready) throw syncing(chainId, view?.indexedBlock);
  return { body: view.body, block: view.indexedBlock };
}

/**
 * One page of a listing or of the history. The first page pins its block (`pin`, from the
 * parameters and the newest indexed block); the cursor in its `Link` carries that block and where
 * the page ended (a position on the chain, or for lists ordered by address an address), so the next
 * page continues there, at the same block.
 */
export async function pageAnswer<T, A extends Position | Address = Position>(
  c: Context<Env>,
  version: "v1" | "v2",
  options: {
    /** The limit when none is given (undefined: the whole list). */
    defaultLimit: number | undefined;
    /** The block the first page answers at (undefined: the newest indexed), and the parameter naming it. */
    pin: (params: Params) => { asked: bigint | Moment | undefined; param: string };
    /** What the list is ordered by: positions (the default) or addresses. */
    orderedBy?: A extends Address ? "address" : "position";
    /** The page's items, or the page its store wrote as JSON (where it did, the records are not made). */
    read: (
      chainId: number,
      params: Params,
      history: HistoryStore,
      block: bigint,
      page: PageRequest<A>,
    ) => Promise<(Page<T, A> & Spelt) | PageJson<A>>;
  } & (
    | {
        /** An item's record; `checksum`, the page's spellings where its store kept them. */
        record: (item: T, checksum?: Checksum) => unknown;
      }
    | {
        /** The items' records as JSON, written without them. */
        json: (items: T[], chainId: number) => Uint8Array<ArrayBuffer>;
      }
  ),
): Promise<Response> {
  const { chainId, params } = chainRequest(c, version);
  const digest = requestDigest(c.req.path, params.entries());
  const text = params.get("cursor");
  const kind = options.orderedBy ?? "position";
  const cursor =
    text === undefined ? undefined : (decodeCursor(text, digest, kind as "position") as Cursor<Position | Address>);
  const asked = params.limit(options.defaultLimit);
  // A keyless page is paid before it is read, by its size; the rest of a list (no limit), up to what the budget pays.
  const cap = rowCap(c.var.budget);
  const paid = cap === undefined || asked === undefined ? 0 : unitsBeyond(asked + 1);
  await c.var.budget.spend(paid, `a page of up to ${asked} items`);
  const limit = asked ?? cap;
  // Read even beside a cursor, which pins the block: a parameter given is a parameter checked.
  const asPinned = options.pin(params);
  const pin = cursor === undefined ? asPinned : { asked: cursor.block, param: "cursor" };
  const block = await indexedBlock(c.var, chainId, pin.asked, pin.param);
  const after = cursor?.after as A | undefined;
  const page = await options.read(chainId, params, historyOf(c.var, chainId), block, { after, limit });
  if (cap !== undefined && asked === undefined && page.more) throw c.var.budget.tooMuch("the rest of this list", cap);
  const [count, last] = "json" in page ? [page.count, page.last] : [page.items.length, page.items.at(-1)?.position];
  await c.var.budget.charge(unitsBeyond(count + (page.more ? 1 : 0)) - paid);
  const headers: Record<string, string> = {};
  if (page.more && last !== undefined) {
    const next = new URLSearchParams(params.entries().filter(([name]) => name !== "cursor"));
    next.set("cursor", encodeCursor(digest, { block, after: last }));
    headers.Link = `<${c.req.path}?${next}>; rel="next"`;
  }
  const body =
    "json" in page
      ? page.json
      : "json" in options
        ? options.json(page.items, chainId)
        : page.items.map((item) => options.record(item, page.checksum));
  return jsonAnswer(c, body, block, headers);
}
