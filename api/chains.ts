import { Hono } from "hono";
import type { Env } from "./app";
import { toJson } from "./json";
import type { ChainPosition } from "./store";

export type ChainStatus = { status: "syncing" | "live" | "behind"; lagSeconds: number | null };

/**
 * A chain's sync state: `syncing` until its backfill is done; then `behind` while the newest block
 * indexed is older than `behindAfterSeconds` (the RPC fails, or the indexer stopped), else `live`.
 */
export function chainStatus(
  position: ChainPosition | undefined,
  nowSeconds: number,
  behindAfterSeconds: number,
): ChainStatus {
  if (position === undefined) return { status: "syncing", lagSeconds: null };
  const lagSeconds = Math.max(0, nowSeconds - position.indexedTimestamp);
  if (!position.ready) return { status: "syncing", lagSeconds };
  return { status: lagSeconds > behindAfterSeconds ? "behind" : "live", lagSeconds };
}

/** The chains this instance serves: registries, indexed block and sync state, for operators and clients. */
export const chains = new Hono<Env>();

chains.get("/", async (c) => {
  const states = await c.var.store.chainStates();
  const now = Math.floor(Date.now() / 1000);
  const body = c.var.chains.map((chain) => {
    const state = states.get(chain.id);
    return {
      chainId: chain.id,
      name: chain.name,
      title: chain.title,
      testnet: chain.testnet,
      registries: { v1: chain.v1 ?? null, v2: chain.v2 ?? null },
      indexedBlock: state?.indexedBlock ?? null,
      ...chainStatus(state, now, c.var.behindAfterSeconds),
    };
  });
  return c.body(toJson(body), 200, { "Content-Type": "application/json" });
});
