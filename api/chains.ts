import { Hono } from "hono";
import type { Env } from "./app";
import { toJson } from "./json";

/** The chains this instance serves: registries, indexed block and sync state, for operators and clients. */
export const chains = new Hono<Env>();

chains.get("/", async (c) => {
  const states = await c.var.store.chainStates();
  const body = c.var.chains.map((chain) => {
    const state = states.get(chain.id);
    return {
      chainId: chain.id,
      name: chain.name,
      title: chain.title,
      testnet: chain.testnet,
      registries: { v1: chain.v1 ?? null, v2: chain.v2 ?? null },
      indexedBlock: state?.indexedBlock ?? null,
      status: state?.ready ? "live" : "syncing",
    };
  });
  return c.body(toJson(body), 200, { "Content-Type": "application/json" });
});
