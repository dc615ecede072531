import type { AccessVariables } from "../access/middleware";
import type { Access } from "../access/open";
import type { FeedHub } from "../feed/hub";
import type { ChangeLog } from "../feed/log";
import type { HistoryStore } from "../store/history-store";
import type { ServedChain } from "../store/served-chains";
import type { Store } from "../store/store";
import type { ChainAlarms } from "../watch/chain-alarms";
import type { ChainIndexer } from "../watch/chain-indexers";
import type { WebhookAdmin } from "../webhooks/store";
import type { ListingCache } from "./listing-cache";
import type { MomentClock } from "./moment";

export type Env = {
  Variables: AccessVariables & {
    store: Store;
    /** Whole wallet listings kept rendered, this app's (api/routes/listing-cache.ts). */
    listings: ListingCache;
    history: HistoryStore | undefined;
    chains: readonly ServedChain[];
    alarms: ChainAlarms;
    indexers: AppOptions["indexers"];
    behindAfterSeconds: number;
    /** Finds the blocks of moments asked (`timestamp`); absent: from samples only (api/routes/moment.ts). */
    moments?: MomentClock;
    /** The change log the feed pages (api/feed/log.ts); absent: not open yet, the feed answers 503. */
    changes?: ChangeLog;
    /** The process's reader of the log for its streams (api/feed/hub.ts). */
    feed?: FeedHub;
  };
};

/** What a read needs of a request's variables (the fast path has them without Hono: api/routes/direct-answers.ts). */
export type Reading = Pick<Env["Variables"], "store" | "history" | "budget" | "moments">;

export type AppOptions = {
  store: Store;
  /** Answers at past blocks, pages and the events; undefined where nothing is indexed yet (503). */
  history: HistoryStore | undefined;
  chains: readonly ServedChain[];
  /** Chains refused for a reorganization deeper than the finality depth (api/watch/chain-alarms.ts). */
  alarms: ChainAlarms;
  /** Each chain's indexer, where chains are indexed apart (api/watch/chain-indexers.ts). */
  indexers?: () => ReadonlyMap<number, ChainIndexer>;
  /** Keys and the keyless limit on /registry; the admin endpoints' token. */
  access: Access;
  /** A chain whose newest indexed block is older is reported `behind` (BEHIND_AFTER_SECONDS). */
  behindAfterSeconds: number;
  /** Finds the blocks of moments asked, with the chains' RPCs where this process has them. */
  moments?: MomentClock;
  /** Whole wallet listings kept rendered: give withDirectAnswers the same (absent: the app makes its own). */
  listings?: ListingCache;
  /** The change log, once open (it is made beside the keys). */
  changes?: () => ChangeLog | undefined;
  /** The process's reader of the change log for the feed's streams; absent: GET /registry/feed answers 503. */
  feed?: FeedHub;
  /** The webhook endpoints the admin endpoints manage; absent: they answer 404. */
  webhooks?: WebhookAdmin;
};
