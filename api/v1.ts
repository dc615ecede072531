import { Hono } from "hono";
import type { Address } from "viem";
import { parseAddress, parseUint256 } from "../core/parse";
import { type V1CheckKind, type V1CheckQuery, type V1Key, v1CheckKeys, v1KeyString } from "../core/v1";
import { answerAt, chainRequest, pageAnswer, servedChainId } from "./answer";
import type { Env } from "./app";
import { batchBodyLimit, readBatch } from "./batch";
import { historyPage, LISTING_DEFAULT_LIMIT, listingPin } from "./pages";
import { type Params, parseParam } from "./params";
import { notFound } from "./problem";
import { v1EventRecord, v1Record } from "./records";
import type { V1Row } from "./store";

const KINDS: V1CheckKind[] = ["all", "contract", "token"];
/** Every parameter a check reads. */
const CHECK_PARAMS = new Set(["delegate", "vault", "contract", "tokenId"]);

function checkQuery(kind: V1CheckKind, params: Params): V1CheckQuery {
  const query: V1CheckQuery = { kind, delegate: params.address("delegate"), vault: params.address("vault") };
  if (kind !== "all") query.contract = params.address("contract");
  if (kind === "token") query.tokenId = params.tokenId();
  return query;
}

/**
 * Answers checks together, at one block: every key they need is looked up once, at the newest
 * indexed block or at `asked`. A check holds when any of its keys is in force.
 */
function answerChecks(
  c: Parameters<typeof answerAt>[0],
  chainId: number,
  asked: bigint | undefined,
  queries: V1CheckQuery[],
  body: (answers: boolean[]) => unknown,
) {
  const checks = queries.map(v1CheckKeys);
  const keys = [...new Map(checks.flat().map((k): [string, V1Key] => [v1KeyString(k), k])).values()];
  const answers = (inForce: V1Row[]) => {
    const found = new Set(inForce.map(v1KeyString));
    return body(checks.map((check) => check.some((k) => found.has(v1KeyString(k)))));
  };
  return answerAt(c, chainId, asked, {
    head: async () => {
      const view = await c.var.store.v1InForce(chainId, keys);
      return view && { ...view, body: answers(view.data) };
    },
    at: async (history, block) => answers(await history.v1InForce(chainId, keys, block)),
  });
}

const walletParam = (c: { req: { param(name: "wallet"): string } }): Address =>
  parseParam("wallet", c.req.param("wallet"), parseAddress);

export const v1 = new Hono<Env>();

v1.post("/check", batchBodyLimit, async (c) => {
  const batch = await readBatch(c, KINDS, CHECK_PARAMS);
  const chainId = servedChainId(c, "v1", batch.params);
  const queries = batch.items.map(({ type, params }) => checkQuery(type, params));
  return answerChecks(c, chainId, batch.params.blockNumber(), queries, (answers) => answers);
});

for (const kind of KINDS) {
  v1.get(`/check/${kind}`, (c) => {
    const { chainId, params } = chainRequest(c, "v1");
    return answerChecks(c, chainId, params.blockNumber(), [checkQuery(kind, params)], ([answer]) => answer);
  });
}
// Below "check" are the checks only: it is not a wallet.
v1.all("/check/*", notFound);

v1.get("/history", (c) =>
  historyPage(
    c,
    "v1",
    (chainId, history, range, page) => history.v1Events(chainId, undefined, range, page),
    v1EventRecord,
  ),
);

v1.get("/contract/:contract", (c) =>
  pageAnswer(c, "v1", {
    defaultLimit: LISTING_DEFAULT_LIMIT,
    pin: listingPin,
    read: (chainId, params, history, block, page) => {
      const contract = parseParam("contract", c.req.param("contract"), parseAddress);
      return history.v1Contract(chainId, contract, params.optional("tokenId", parseUint256), block, page);
    },
    record: v1Record,
  }),
);

v1.get("/:wallet/history", (c) =>
  historyPage(
    c,
    "v1",
    (chainId, history, range, page) => history.v1Events(chainId, walletParam(c), range, page),
    v1EventRecord,
  ),
);

v1.get("/:wallet", (c) => {
  const { chainId, params } = chainRequest(c, "v1");
  const wallet = walletParam(c);
  // Pages, and whole listings at a past block, come from the history; the whole newest one from the Store.
  if (params.get("limit") !== undefined || params.get("cursor") !== undefined) {
    return pageAnswer(c, "v1", {
      defaultLimit: undefined,
      pin: listingPin,
      read: (_, __, history, block, page) => history.v1Wallet(chainId, wallet, block, page),
      record: v1Record,
    });
  }
  return answerAt(c, chainId, params.blockNumber(), {
    head: async () => {
      const view = await c.var.store.v1Wallet(chainId, wallet);
      return view && { ...view, body: view.data.map(v1Record) };
    },
    at: async (history, block) => (await history.v1Wallet(chainId, wallet, block, {})).items.map(v1Record),
  });
});
