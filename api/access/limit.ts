/**
 * The keyless budget (docs/api.md, "Access"): at most `limit` units in any window of `windowMs`.
 * An ordinary request costs one unit; a costly one (a batch's items, a bulk listing's wallets, the
 * rows a read at a past block or a page reads) costs what it reads. What a request will cost is
 * spent before its work, all or none; what it turned out to cost beyond is charged after, whatever
 * the budget, so that the client's next requests pay for it.
 */
export type Policy = { limit: number; windowMs: number };
export const KEYLESS: Policy = { limit: 25, windowMs: 10_000 };

/** A request's fate, and what the RateLimit headers tell the client. */
export type Verdict = Policy & {
  allowed: boolean;
  /** Units left in the window after this request (0 while in debt). */
  remaining: number;
  /** Milliseconds until one more unit may be spent: when the oldest spend leaves, or enough of them to cover a debt. */
  resetMs: number;
};

/** Units spent at a time (ms). */
export type Spend = { at: number; units: number };

/** Counts a client's (an address's) spending against the keyless budget. */
export interface RateLimiter {
  /** Spends `units` (a batch's items) at once: all of them are let through, or none. */
  take(client: string, units?: number): Promise<Verdict>;
  /** Charges `units` after the work, whatever the budget (negative: gives back what was overestimated). */
  charge(client: string, units: number): Promise<Verdict>;
  close(): Promise<void>;
}

const sum = (spends: readonly Spend[]) => spends.reduce((total, s) => total + s.units, 0);

/**
 * The sliding window, exact to the request: `spends` are the client's spends that may still be in
 * the window; refused requests spend nothing. With `force` the spend is made whatever the budget
 * (a charge after the work). Returns the spends to keep and the verdict.
 */
export function slide(
  spends: readonly Spend[],
  now: number,
  policy: Policy,
  units = 1,
  force = false,
): { verdict: Verdict; spends: Spend[] } {
  const kept = spends.filter((s) => s.at > now - policy.windowMs).map((s) => ({ ...s }));
  const allowed = force || sum(kept) + units <= policy.limit;
  if (allowed && units > 0) kept.push({ at: now, units });
  // What is given back comes off the latest spends: it never outlives the spends it corrects.
  for (let back = -units, i = kept.length - 1; back > 0 && i >= 0; i--) {
    const taken = Math.min(back, kept[i]!.units);
    kept[i]!.units -= taken;
    back -= taken;
  }
  const left = kept.filter((s) => s.units > 0);
  const spent = sum(left);
  // One more unit may be spent once the oldest spend leaves, or, in debt, once enough of them have.
  let i = 0;
  for (let after = spent - (left[0]?.units ?? 0); after >= policy.limit && i < left.length - 1; )
    after -= left[++i]!.units;
  const resetMs = left.length === 0 ? 0 : Math.max(0, left[i]!.at + policy.windowMs - now);
  return { spends: left, verdict: { allowed, ...policy, remaining: Math.max(0, policy.limit - spent), resetMs } };
}
