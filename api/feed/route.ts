import { parseLimit, parseSeq } from "../../core/parse";
import { Params } from "../http/params";
import { Problem } from "../http/problem";
import type { Answers } from "../routes/table";
import { entryJson } from "./entry";
import { feedStream } from "./stream";

/** A page's entries when `limit` is not given. */
const DEFAULT_LIMIT = 100;

/**
 * GET /registry/feed/events: the change log's entries after `cursor`, a page at a time; GET
 * /registry/feed streams them.
 */
export const FEED_ANSWERS: Answers = {
  feedStream: () => async (c) => {
    const hub = c.var.feed;
    if (!hub) throw new Problem("chain_syncing", "the change log is not open yet", { headers: { "Retry-After": "5" } });
    return feedStream(c, hub);
  },
  feedEntries: () => async (c) => {
    const params = Params.ofUrl(c.req.url);
    const cursor = params.optional("cursor", parseSeq) ?? 0n;
    const limit = params.optional("limit", parseLimit) ?? DEFAULT_LIMIT;
    const log = c.var.changes;
    if (!log) throw new Problem("chain_syncing", "the change log is not open yet", { headers: { "Retry-After": "5" } });
    // Before the page: an entry pruned between the two reads is then refused, not skipped.
    const pruned = cursor > 0n ? await log.pruned() : 0n;
    if (cursor < pruned)
      throw new Problem(
        "cursor_expired",
        `entries after ${cursor} are no longer kept: resume after ${pruned} at the earliest`,
      );
    const entries = await log.entries(cursor, limit);
    const last = entries.length > 0 ? entries[entries.length - 1]!.seq : cursor;
    const body = `{"entries":[${entries.map(entryJson).join(",")}],"cursor":${last}}`;
    const next = new URLSearchParams({ cursor: String(last), limit: String(limit) });
    return c.body(body, 200, { "Content-Type": "application/json", Link: `<${c.req.path}?${next}>; rel="next"` });
  },
};
