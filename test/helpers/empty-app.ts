/**
 * The app in process over a chain indexed to block 100 with nothing in it but one delegation, found
 * by any hash asked, failing as asked: for the tests that hold its answers to the OpenAPI document
 * without a service.
 */
import { getRequestListener } from "@hono/node-server";
import type { Access } from "../../api/access/open";
import { createApp } from "../../api/app";
import { FeedHub } from "../../api/feed/hub";
import type { ChangeLog, FeedEntry } from "../../api/feed/log";
import { toJson } from "../../api/http/json";
import { KEYLESS_STREAMS, WEBHOOKS_PER_KEY } from "../../api/limits";
import { v2EventRecord } from "../../api/routes/records";
import type { HistoryStore } from "../../api/store/history-store";
import type { Store, V2Row } from "../../api/store/store";
import { NO_ALARMS } from "../../api/watch/chain-alarms";
import type { WebhookAdmin } from "../../api/webhooks/store";
import { listenOn } from "../../devkit/http";

export const CHAIN = 31337;

/** What @hono/node-server hands the app: the client's socket, whose address the keyless limit counts. */
export const SOCKET = {
  incoming: { socket: { remoteAddress: "127.0.0.1", remotePort: 50000, remoteFamily: "IPv4" } },
};

export const wallet = (n: number) => `0x${n.toString(16).padStart(40, "0")}`;

export type Failing = {
  /** The chain's backfill is not done. */
  syncing?: boolean;
  /** The store throws what a bug would. */
  broken?: boolean;
  /** The keyless limit is spent. */
  limited?: boolean;
  /** No delegation has the hash asked. */
  unknownHash?: boolean;
  /** A reorganization deeper than finality was found. */
  alarmed?: boolean;
  /** The change log's retention deleted the entries up to seq 10. */
  pruned?: boolean;
  /** The key FULL_KEY (valid) has the most webhook endpoints a key may. */
  full?: boolean;
};

/** The key that has all its webhook endpoints, when `full`. */
export const FULL_KEY = `dlk_${"f".repeat(12)}_${"F".repeat(43)}`;

/** What a test gives the app instead of its own: a change log and the feed's hub over it; a valid API key. */
export type Parts = { changes?: ChangeLog; feed?: FeedHub; key?: string; webhooks?: WebhookAdmin };

/** The app; its admin endpoints take the token "the operator's token", and no API key is valid but `parts.key`. */
export function emptyApp(fail: Failing = {}, parts: Parts = {}) {
  const ready = { ready: !fail.syncing, indexedBlock: 100n, indexedTimestamp: Math.floor(Date.now() / 1000) };
  const head = async <T>(data: T) => {
    if (fail.broken) throw new Error("a bug, as the app meets one");
    return { ...ready, data };
  };
  const delegation = (hash: V2Row["hash"]): V2Row | undefined =>
    fail.unknownHash
      ? undefined
      : {
          hash,
          delegationType: "ALL",
          from: wallet(1) as V2Row["from"],
          to: wallet(2) as V2Row["to"],
          contract: null,
          tokenId: null,
          rights: `0x${"0".repeat(64)}`,
          amount: null,
        };
  const store: Store = {
    v2Enabled: () => head(new Map()),
    v2Wallet: () => head([]),
    v2Wallets: (_, wallets) => head(wallets.map(() => [])),
    v2Delegation: (_, hash) => head(delegation(hash)),
    v1InForce: () => head([]),
    // No copy: answers at past blocks are the history's.
    v2EnabledAt: async () => undefined,
    v1InForceAt: async () => undefined,
    v1Wallet: () => head([]),
    v1Wallets: (_, wallets) => head(wallets.map(() => [])),
    chainStates: async () => new Map([[CHAIN, ready]]),
  };
  const history = new Proxy({} as HistoryStore, {
    get: (_, name) => async (_chainId: number, hash: V2Row["hash"]) =>
      name === "indexedBlock"
        ? ready.indexedBlock
        : name === "v2Enabled"
          ? new Map()
          : name === "v1InForce"
            ? []
            : name === "v2Delegation"
              ? delegation(hash)
              : { items: [], more: false },
  });
  const access = {
    keys: {
      use: async () => false,
      useHeld: (key: string) => key === parts.key || (fail.full && key === FULL_KEY),
      heldOnce: () => false,
      list: async () => [],
    },
    limiter: {
      take: async () => ({ allowed: !fail.limited, limit: 25, windowMs: 10_000, remaining: 0, resetMs: 4_000 }),
      charge: async () => ({ allowed: !fail.limited, limit: 25, windowMs: 10_000, remaining: 0, resetMs: 4_000 }),
      close: async () => {},
    },
    // Never shed: how loaded the test process is must not change an answer.
    load: { shed: () => false },
    trustProxy: false,
    // As many as a keyless client: the feed's refusal must still say which limit it is.
    streamsPerKey: KEYLESS_STREAMS,
    adminToken: "the operator's token",
  } as unknown as Access;
  // The change log: an event at block 99 and its retraction.
  const event: Omit<FeedEntry, "seq" | "retracts"> = {
    chainId: CHAIN,
    version: "v2",
    block: 99n,
    blockHash: `0x${"cd".repeat(32)}`,
    logIndex: 0,
    createdAt: new Date(),
    record: toJson(
      v2EventRecord({
        hash: `0x${"ef".repeat(32)}`,
        contract: null,
        tokenId: null,
        rights: `0x${"0".repeat(64)}`,
        amount: null,
        blockNumber: 99n,
        blockHash: `0x${"cd".repeat(32)}`,
        blockTimestamp: 1_700_000_000n,
        transactionHash: `0x${"12".repeat(32)}`,
        logIndex: 0,
        kind: "DelegateAll",
        enable: true,
        from: wallet(1) as V2Row["from"],
        to: wallet(2) as V2Row["to"],
      }),
    ),
  };
  const entries: FeedEntry[] = [
    { ...event, seq: 11n, retracts: null },
    { ...event, seq: 12n, retracts: 11n },
  ];
  const changes =
    parts.changes ??
    ({
      entries: async (after: bigint, limit: number) => entries.filter((e) => e.seq > after).slice(0, limit),
      pruned: async () => (fail.pruned ? 10n : 0n),
      newest: async () => 12n,
      floors: async () => new Map([[`${CHAIN}:v2`, { floor: 100n, through: 12n }]]),
    } as unknown as ChangeLog);
  return createApp({
    changes: () => changes,
    feed: parts.feed ?? new FeedHub(() => changes, { everyMs: 1_000 }),
    webhooks:
      parts.webhooks ??
      (fail.full
        ? ({
            store: { list: async () => Array(WEBHOOKS_PER_KEY).fill({}) },
            log: () => changes,
            served: [CHAIN],
            allowPrivate: false,
            timeoutMs: 1_000,
          } as unknown as WebhookAdmin)
        : undefined),
    store,
    history,
    alarms: {
      ...NO_ALARMS,
      current: () => new Map(fail.alarmed ? [[CHAIN, "a reorganization deeper than finality at block 90"]] : []),
    },
    chains: [
      {
        id: CHAIN,
        name: "anvil",
        title: "anvil",
        testnet: true,
        v1: { address: "0x00000000000076A84feF008CDAbe6409d2FE638B", startBlock: 0 },
        v2: { address: "0x00000000000000447e69651d841bD8D104Bed493", startBlock: 0 },
      },
    ],
    access,
    behindAfterSeconds: 120,
  });
}

/**
 * `app` on node:http, as the service serves it (@hono/node-server): what must be answered over a
 * socket (the feed's streams, written to Node's response) is asked here. From 127.0.0.1, as SOCKET.
 */
export async function servedApp(app: { fetch: (request: Request, env: unknown) => Response | Promise<Response> }) {
  const served = await listenOn(getRequestListener(app.fetch));
  return {
    request: (path: string, init: RequestInit = {}) => fetch(`${served.url}${path}`, init),
    close: served.close,
  };
}
