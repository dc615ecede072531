import { Hono } from "hono";
import { getAddress } from "viem";
import { parseAddress } from "../core/parse";
import { type V1CheckKind, type V1CheckQuery, v1CheckKeys } from "../core/v1";
import { answer } from "./answer";
import type { Env } from "./app";
import { type Params, parseParam } from "./params";
import { notFound } from "./problem";

function checkQuery(kind: V1CheckKind, params: Params): V1CheckQuery {
  const query: V1CheckQuery = { kind, delegate: params.address("delegate"), vault: params.address("vault") };
  if (kind !== "all") query.contract = params.address("contract");
  if (kind === "token") query.tokenId = params.tokenId();
  return query;
}

export const v1 = new Hono<Env>();

for (const kind of ["all", "contract", "token"] as const) {
  v1.get(`/check/${kind}`, (c) =>
    answer(c, "v1", async (chainId, params) => {
      const view = await c.var.store.v1InForce(chainId, v1CheckKeys(checkQuery(kind, params)));
      return view && { ...view, body: view.data.length > 0 };
    }),
  );
}

// "check" introduces the checks; it is not a wallet.
v1.all("/check", notFound);

v1.get("/:wallet", (c) =>
  answer(c, "v1", async (chainId) => {
    const wallet = parseParam("wallet", c.req.param("wallet"), parseAddress);
    const view = await c.var.store.v1Wallet(chainId, wallet);
    return (
      view && {
        ...view,
        body: view.data.map((d) => ({
          type: d.type,
          vault: getAddress(d.vault),
          delegate: getAddress(d.delegate),
          contract: d.type === "ALL" ? null : getAddress(d.contract),
          tokenId: d.type === "TOKEN" ? d.tokenId : null,
        })),
      }
    );
  }),
);
