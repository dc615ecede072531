import { Hono } from "hono";
import type { Env } from "./app";
import { toJson } from "./json";
import type { ChainPosition } from "./store";

export type ChainStatus = { status: "syncing" | "live" | "behind" | "reorganized"; lagSeconds: number | null };

/**
 * A chain's sync state: `reorganized` once a reorganization deeper than the indexer's finality
 * depth was found (`alarmed`: nothing is answered for it until it is re-indexed); else `syncing`
 * until its backfill is done; then `behind` while the newest block indexed is older than
 * `behindAfterSeconds` (the RPC fails, or the indexer stopped), else `live`.
 */
export function chainStatus(
  position: ChainPosition | undefined,
  nowSeconds: number,
  behindAfterSeconds: number,
  alarmed = false,
): ChainStatus {
  const lagSeconds = position === undefined ? null : Math.max(0, nowSeconds - position.indexedTimestamp);
  if (alarmed) return { status: "reorganized", lagSeconds };
  if (position === undefined || lagSeconds === null) return { status: "syncing", lagSeconds: null };
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
      ...chainStatus(state, now, c.var.behindAfterSeconds, c.var.alarms.current().has(chain.id)),
      alarm: c.var.alarms.current().get(chain.id) ?? null,
    };
  });
  return c.body(toJson(body), 200, { "Content-Type": "application/json" });
});
