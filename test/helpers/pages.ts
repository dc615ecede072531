/**
 * Pages followed through their `Link: <…>; rel="next"` headers (docs/api.md, "Pages"), with
 * what every page must be: a 200 JSON array answered at the first page's block (X-Indexed-Block),
 * each page but the last holding exactly its `limit` items (100 when none is given), none after the
 * first empty. The items of all pages, in order, are what the pages add up to.
 */
import { type Answer, ask } from "../../devkit/ask";
import { parseJsonExact } from "./json";

/** The page size of history and contract listings without `limit` (docs/api.md, "Pages"). */
export const DEFAULT_LIMIT = 100;

export type Paged = {
  /** The first page's X-Indexed-Block: the block every page must report. */
  block: bigint | undefined;
  /** The items of every page, in order. */
  items: unknown[];
  /** Every page's answer, in order. */
  pages: Answer[];
  /** What a page did wrong, each naming the page's path. */
  problems: string[];
};

const LINK = /^<(\/[^>]*)>; rel="next"$/;

/** A path's query parameter, or undefined. */
export function queryParam(path: string, name: string): string | undefined {
  return new URL(path, "http://x").searchParams.get(name) ?? undefined;
}

/** `path` with its parameter `name` set to `value` (the others kept, in order). */
export function withParam(path: string, name: string, value: string): string {
  const url = new URL(path, "http://x");
  url.searchParams.set(name, value);
  return `${url.pathname}${url.search}`;
}

export type FollowOptions = {
  headers?: Record<string, string>;
  /** A limit to put in page i's link (a cursor continues its request whatever the limit); undefined: keep it. */
  limit?: (page: number) => number | undefined;
  /** Awaited before asking page i (from 1), with the first page's block: to let the chain move on meanwhile. */
  beforePage?: (page: number, block: bigint | undefined) => Promise<void>;
  maxPages?: number;
};

/**
 * Follows the pages from `first`: asks each page of `base(i)` (page i, from 0: the pages may come
 * from different processes) and the next one where its Link says. Stops after `maxPages`.
 */
export async function followPages(
  base: (page: number) => string,
  first: string,
  options: FollowOptions = {},
): Promise<Paged> {
  const { headers, maxPages = 2000 } = options;
  const paged: Paged = { block: undefined, items: [], pages: [], problems: [] };
  const problem = (path: string, text: string) => paged.problems.push(`${path}: ${text}`);
  let path: string | undefined = first;
  for (let i = 0; path !== undefined; i++) {
    if (i === maxPages) {
      problem(path, `more than ${maxPages} pages`);
      return paged;
    }
    if (i > 0) await options.beforePage?.(i, paged.block);
    const a = await ask(base(i), path, { headers });
    paged.pages.push(a);
    const type = a.headers.get("content-type") ?? "";
    if (a.status !== 200 || !type.startsWith("application/json")) {
      problem(path, `expected 200 application/json, got ${a.status} ${type} ${a.text.slice(0, 300)}`);
      return paged;
    }
    if (i === 0) paged.block = a.block;
    if (a.block === undefined || a.block !== paged.block)
      problem(path, `X-Indexed-Block ${a.block}, not the first page's ${paged.block}`);
    let items: unknown;
    try {
      items = parseJsonExact(a.text);
    } catch {
      items = undefined;
    }
    if (!Array.isArray(items)) {
      problem(path, `expected a JSON array, got ${a.text.slice(0, 300)}`);
      return paged;
    }
    paged.items.push(...items);
    const link = a.headers.get("link");
    const next = link === null ? undefined : LINK.exec(link)?.[1];
    if (link !== null && next === undefined) problem(path, `a Link header that is not <path>; rel="next": ${link}`);
    const limit = Number(queryParam(path, "limit") ?? DEFAULT_LIMIT);
    if (next !== undefined && items.length !== limit)
      problem(path, `a page followed by another holds ${items.length} items, not its limit ${limit}`);
    if (items.length > limit) problem(path, `${items.length} items, over the limit ${limit}`);
    if (i > 0 && items.length === 0) problem(path, "an empty page after the first");
    const nextLimit = next === undefined ? undefined : options.limit?.(i + 1);
    path = next === undefined || nextLimit === undefined ? next : withParam(next, "limit", String(nextLimit));
  }
  return paged;
}
