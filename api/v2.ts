import { Hono } from "hono";
import type { Address, Hex } from "viem";
import { parseAddress, parseUint256 } from "../core/parse";
import { type V2CheckKind, type V2CheckQuery, type V2State, v2Check } from "../core/v2";
import { answerAt, chainRequest, pageAnswer, servedChainId } from "./answer";
import type { Env } from "./app";
import { batchBodyLimit, readBatch } from "./batch";
import { historyPage, LISTING_DEFAULT_LIMIT, listingPin } from "./pages";
import { type Params, parseParam } from "./params";
import { notFound } from "./problem";
import { v2EventRecord, v2Record } from "./records";

/** Hot wallet and cold wallet: erc* checks take either name for each party (api-contract.md). */
const PARTIES: Record<V2CheckKind, { to: string[]; from: string[] }> = {
  all: { to: ["to"], from: ["from"] },
  contract: { to: ["to"], from: ["from"] },
  erc721: { to: ["to", "delegate"], from: ["from", "vault"] },
  erc1155: { to: ["to", "delegate"], from: ["from", "vault"] },
  erc20: { to: ["to", "delegate"], from: ["from", "vault"] },
};
const KINDS = Object.keys(PARTIES) as V2CheckKind[];
/** Every parameter a check reads. */
const CHECK_PARAMS = new Set(["to", "from", "delegate", "vault", "contract", "tokenId", "rights"]);

function checkQuery(kind: V2CheckKind, params: Params): V2CheckQuery {
  const query: V2CheckQuery = {
    kind,
    to: params.address(...PARTIES[kind].to),
    from: params.address(...PARTIES[kind].from),
    rights: params.rights(),
  };
  if (kind !== "all") query.contract = params.address("contract");
  if (kind === "erc721" || kind === "erc1155") query.tokenId = params.tokenId();
  return query;
}

/**
 * Answers checks together, at one block: every hash they need is looked up once, at the newest
 * indexed block or at `asked`.
 */
function answerChecks(
  c: Parameters<typeof answerAt>[0],
  chainId: number,
  asked: bigint | undefined,
  queries: V2CheckQuery[],
  body: (answers: (boolean | bigint)[]) => unknown,
) {
  const checks = queries.map(v2Check);
  const hashes = [...new Set(checks.flatMap((check) => check.hashes))];
  const answers = (enabled: (hash: Hex) => V2State | undefined) => body(checks.map((check) => check.answer(enabled)));
  return answerAt(c, chainId, asked, {
    head: async () => {
      const view = await c.var.store.v2Enabled(chainId, hashes);
      return view && { ...view, body: answers((hash) => view.data.get(hash)) };
    },
    at: async (history, block) => {
      const enabled = await history.v2Enabled(chainId, hashes, block);
      return answers((hash) => enabled.get(hash));
    },
  });
}

const walletParam = (c: { req: { param(name: "wallet"): string } }): Address =>
  parseParam("wallet", c.req.param("wallet"), parseAddress);

export const v2 = new Hono<Env>();

v2.post("/check", batchBodyLimit, async (c) => {
  const batch = await readBatch(c, KINDS, CHECK_PARAMS);
  const chainId = servedChainId(c, "v2", batch.params);
  const queries = batch.items.map(({ type, params }) => checkQuery(type, params));
  return answerChecks(c, chainId, batch.params.blockNumber(), queries, (answers) => answers);
});

for (const kind of KINDS) {
  v2.get(`/check/${kind}`, (c) => {
    const { chainId, params } = chainRequest(c, "v2");
    return answerChecks(c, chainId, params.blockNumber(), [checkQuery(kind, params)], ([answer]) => answer);
  });
}
// Below "check" are the checks only: it is not a wallet.
v2.all("/check/*", notFound);

v2.get("/history", (c) =>
  historyPage(
    c,
    "v2",
    (chainId, history, range, page) => history.v2Events(chainId, undefined, range, page),
    v2EventRecord,
  ),
);

v2.get("/contract/:contract", (c) =>
  pageAnswer(c, "v2", {
    defaultLimit: LISTING_DEFAULT_LIMIT,
    pin: listingPin,
    read: (chainId, params, history, block, page) => {
      const contract = parseParam("contract", c.req.param("contract"), parseAddress);
      return history.v2Contract(chainId, contract, params.optional("tokenId", parseUint256), block, page);
    },
    record: v2Record,
  }),
);

v2.get("/:wallet/history", (c) =>
  historyPage(
    c,
    "v2",
    (chainId, history, range, page) => history.v2Events(chainId, walletParam(c), range, page),
    v2EventRecord,
  ),
);

v2.get("/:wallet", (c) => {
  const { chainId, params } = chainRequest(c, "v2");
  const wallet = walletParam(c);
  // Pages, and whole listings at a past block, come from the history; the whole newest one from the Store.
  if (params.get("limit") !== undefined || params.get("cursor") !== undefined) {
    return pageAnswer(c, "v2", {
      defaultLimit: undefined,
      pin: listingPin,
      read: (_, __, history, block, page) => history.v2Wallet(chainId, wallet, block, page),
      record: v2Record,
    });
  }
  return answerAt(c, chainId, params.blockNumber(), {
    head: async () => {
      const view = await c.var.store.v2Wallet(chainId, wallet);
      return view && { ...view, body: view.data.map(v2Record) };
    },
    at: async (history, block) => (await history.v2Wallet(chainId, wallet, block, {})).items.map(v2Record),
  });
});
