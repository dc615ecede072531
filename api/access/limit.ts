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

/** Counts one request of a client (an address) against the keyless limit. */
export interface RateLimiter {
  take(client: string): Promise<Verdict>;
  close(): Promise<void>;
}

/**
 * The sliding window, exact to the request: `hits` are the times of the client's requests that
 * were let through and may still be in the window; refused requests do not count. Returns the
 * hits to keep (those in the window, plus `now` when allowed).
 */
export function slide(hits: readonly number[], now: number, policy: Policy): { verdict: Verdict; hits: number[] } {
  const kept = hits.filter((t) => t > now - policy.windowMs);
  const allowed = kept.length < policy.limit;
  if (allowed) kept.push(now);
  return {
    hits: kept,
    verdict: {
      allowed,
      ...policy,
      remaining: policy.limit - kept.length,
      resetMs: Math.max(0, Math.min(...kept) + policy.windowMs - now),
    },
  };
}
