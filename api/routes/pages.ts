/**
 * What listings and the history share about pages (docs/api.md, "Pages", "History"): the
 * default page size, the block a first page pins, and the history's block range.
 */
import type { Context } from "hono";
import { parseBlockNumber } from "../../core/parse";
import type { Params } from "../http/params";
import { Problem } from "../http/problem";
import { LISTING_DEFAULT_LIMIT } from "../limits";
import type { BlockRange, HistoryStore, Page, PageRequest } from "../store/history-store";
import { pageAnswer } from "./answer";
import type { Env } from "./env";

/** A listing's first page answers at `blockNumber` or `timestamp`, or at the newest indexed block. */
export const listingPin = (params: Params) => {
  const asked = params.at();
  return { asked, param: typeof asked === "object" ? "timestamp" : "blockNumber" };
};

/**
 * A page of events in `fromBlock … toBlock` (both included; by default from 0 to the newest
 * indexed block, which the first page pins as the range's end).
 */
export function historyPage<T>(
  c: Context<Env>,
  version: "v1" | "v2",
  read: (chainId: number, history: HistoryStore, range: BlockRange, page: PageRequest) => Promise<Page<T>>,
  json: (events: T[], chainId: number) => Uint8Array<ArrayBuffer>,
): Promise<Response> {
  return pageAnswer(c, version, {
    defaultLimit: LISTING_DEFAULT_LIMIT,
    pin: (params) => ({ asked: params.optional("toBlock", parseBlockNumber), param: "toBlock" }),
    read: (chainId, params, history, to, page) => {
      const from = params.optional("fromBlock", parseBlockNumber) ?? 0n;
      if (from > to) {
        const given = params.get("toBlock") !== undefined;
        throw new Problem(
          given ? "invalid_parameter" : "block_not_indexed",
          given
            ? `'fromBlock' (${from}) is after 'toBlock' (${to})`
            : `'fromBlock' (${from}) is after the newest indexed block, ${to}`,
          given ? { param: "fromBlock" } : { param: "fromBlock", indexedBlock: Number(to) },
        );
      }
      return read(chainId, history, { from, to }, page);
    },
    json,
  });
}
