import type { ChainPosition } from "../store/store";

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
