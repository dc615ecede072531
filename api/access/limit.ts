/** The keyless limit: at most `limit` requests in any window of `windowMs` (api-contract.md, "Access"). */
export type Policy = { limit: number; windowMs: number };
export const KEYLESS: Policy = { limit: 25, windowMs: 10_000 };

/** A request's fate, and what the RateLimit headers tell the client. */
export type Verdict = Policy & {
  allowed: boolean;
  /** Requests left in the window after this one. */
  remaining: number;
  /** Milliseconds until the oldest request leaves the window: one more may then be made. */
  resetMs: number;
};

/** Counts a client's (an address's) requests against the keyless limit. */
export interface RateLimiter {
  /** Counts `count` requests (a batch's items) at once: all of them are let through, or none. */
  take(client: string, count?: number): Promise<Verdict>;
  close(): Promise<void>;
}

/**
 * The sliding window, exact to the request: `hits` are the times of the client's requests that
 * were let through and may still be in the window; refused requests do not count. Returns the
 * hits to keep (those in the window, plus `count` at `now` when allowed).
 */
export function slide(
  hits: readonly number[],
  now: number,
  policy: Policy,
  count = 1,
): { verdict: Verdict; hits: number[] } {
  const kept = hits.filter((t) => t > now - policy.windowMs);
  const allowed = kept.length + count <= policy.limit;
  if (allowed) for (let i = 0; i < count; i++) kept.push(now);
  return {
    hits: kept,
    verdict: {
      allowed,
      ...policy,
      remaining: policy.limit - kept.length,
      resetMs: kept.length === 0 ? 0 : Math.max(0, Math.min(...kept) + policy.windowMs - now),
    },
  };
}
