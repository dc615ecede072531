import type { ChainPosition } from "../store/store";

export type ChainStatus = { status: "syncing" | "live" | "behind" | "reorganized"; lagSeconds: number | null };

/** How far the hot standby an API replica reads (`npm run serve` on a standby) trails its primary. */
export type Replication = {
  /** Seconds the standby's replay trails its primary; undefined: not known (no stream from the primary). */
  lagSeconds: number | undefined;
  /** REPLICA_BEHIND_SECONDS: a standby trailing by more is behind. */
  behindAfterSeconds: number;
};

/**
 * A chain's position as its status is told from it: an API replica on a hot standby
 * (api/watch/replication.ts) adds its standby's replication to the positions its store reports.
 */
export type StatusPosition = ChainPosition & { replication?: Replication };

/** Whether a standby trails its primary by more than it may, or cannot tell by how much. */
export const replicationBehind = (replication: Replication | undefined) =>
  replication !== undefined &&
  (replication.lagSeconds === undefined || replication.lagSeconds > replication.behindAfterSeconds);

/**
 * A chain's sync state: `reorganized` once a reorganization deeper than the indexer's finality
 * depth was found (`alarmed`: nothing is answered for it until it is re-indexed); else `syncing`
 * until its backfill is done; then `behind` while the newest block indexed is older than
 * `behindAfterSeconds` (the RPC fails, or the indexer stopped), or while the hot standby it is read
 * from trails its primary too far (see Replication), else `live`.
 *
 * The newest block's age grows with a standby's lag too, but it cannot be held to the standby's
 * tighter bound: it also holds the chain's own block time and the indexer's delay, which the
 * standby's replay does not.
 */
export function chainStatus(
  position: StatusPosition | undefined,
  nowSeconds: number,
  behindAfterSeconds: number,
  alarmed = false,
): ChainStatus {
  const lagSeconds = position === undefined ? null : Math.max(0, nowSeconds - position.indexedTimestamp);
  if (alarmed) return { status: "reorganized", lagSeconds };
  if (position === undefined || lagSeconds === null) return { status: "syncing", lagSeconds: null };
  if (!position.ready) return { status: "syncing", lagSeconds };
  const behind = lagSeconds > behindAfterSeconds || replicationBehind(position.replication);
  return { status: behind ? "behind" : "live", lagSeconds };
}
