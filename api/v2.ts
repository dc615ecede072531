import { Hono } from "hono";
import { getAddress } from "viem";
import { parseAddress } from "../core/parse";
import { V2_RECORD_TYPE, type V2CheckKind, type V2CheckQuery, v2Check } from "../core/v2";
import { answer } from "./answer";
import type { Env } from "./app";
import { type Params, parseParam } from "./params";
import { notFound } from "./problem";

/** Hot wallet and cold wallet: erc* checks take either name for each party (api-contract.md). */
const PARTIES: Record<V2CheckKind, { to: string[]; from: string[] }> = {
  all: { to: ["to"], from: ["from"] },
  contract: { to: ["to"], from: ["from"] },
  erc721: { to: ["to", "delegate"], from: ["from", "vault"] },
  erc1155: { to: ["to", "delegate"], from: ["from", "vault"] },
  erc20: { to: ["to", "delegate"], from: ["from", "vault"] },
};

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

export const v2 = new Hono<Env>();

for (const kind of Object.keys(PARTIES) as V2CheckKind[]) {
  v2.get(`/check/${kind}`, (c) =>
    answer(c, "v2", async (chainId, params) => {
      const check = v2Check(checkQuery(kind, params));
      const view = await c.var.store.v2Enabled(chainId, check.hashes);
      return view && { ...view, body: check.answer((hash) => view.data.get(hash)) };
    }),
  );
}

// "check" introduces the checks; it is not a wallet.
v2.all("/check", notFound);

v2.get("/:wallet", (c) =>
  answer(c, "v2", async (chainId) => {
    const wallet = parseParam("wallet", c.req.param("wallet"), parseAddress);
    const view = await c.var.store.v2Wallet(chainId, wallet);
    return (
      view && {
        ...view,
        body: view.data.map((d) => ({
          type: V2_RECORD_TYPE[d.delegationType],
          from: getAddress(d.from),
          to: getAddress(d.to),
          contract: d.contract && getAddress(d.contract),
          tokenId: d.tokenId,
          delegationType: d.delegationType,
          rights: d.rights,
          amount: d.amount,
        })),
      }
    );
  }),
);
