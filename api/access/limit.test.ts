import { afterEach, describe, expect, it, vi } from "vitest";
import { KEYLESS, type Spend, slide } from "./limit";
import { memoryLimiter } from "./memory-limiter";

/** One unit spent at each of `times`. */
const ones = (...times: number[]): Spend[] => times.map((at) => ({ at, units: 1 }));

describe("the sliding window", () => {
  const policy = { limit: 3, windowMs: 10_000 };

  it("lets `limit` requests through in any window, exact to the millisecond", () => {
    let spends: Spend[] = [];
    for (const t of [0, 1_000, 2_000]) {
      const step = slide(spends, t, policy);
      expect(step.verdict.allowed).toBe(true);
      spends = step.spends;
    }
    const refused = slide(spends, 9_999, policy);
    expect(refused.verdict).toMatchObject({ allowed: false, remaining: 0, resetMs: 1 });
    // The refused request does not count: at 10 000 the first request has left the window.
    expect(refused.spends).toEqual(ones(0, 1_000, 2_000));
    const next = slide(refused.spends, 10_000, policy);
    expect(next.verdict).toMatchObject({ allowed: true, remaining: 0, resetMs: 1_000 });
    expect(next.spends).toEqual(ones(1_000, 2_000, 10_000));
  });

  it("reports the requests remaining, and when the oldest leaves the window", () => {
    expect(slide(ones(0, 4_000), 5_000, policy).verdict).toMatchObject({
      allowed: true,
      limit: 3,
      remaining: 0,
      resetMs: 5_000,
    });
    expect(slide(ones(-6_000, 1_000), 5_000, policy).verdict).toMatchObject({
      allowed: true,
      remaining: 1,
      resetMs: 6_000,
    });
    expect(slide([], 0, KEYLESS).verdict).toMatchObject({
      allowed: true,
      limit: 25,
      windowMs: 10_000,
      remaining: 24,
      resetMs: 10_000,
    });
  });
});

describe("a batch's items", () => {
  const policy = { limit: 3, windowMs: 10_000 };

  it("count one request each, all let through or none, and a refused batch spends nothing", () => {
    const two = slide(ones(0), 1_000, policy, 2);
    expect(two.verdict).toMatchObject({ allowed: true, remaining: 0 });
    expect(two.spends).toEqual([...ones(0), { at: 1_000, units: 2 }]);
    const refused = slide(ones(0), 1_000, policy, 3);
    expect(refused.verdict).toMatchObject({ allowed: false, remaining: 2, resetMs: 9_000 });
    expect(refused.spends).toEqual(ones(0));
    // More items than the limit ever allows, in an empty window: refused, nothing to wait for.
    expect(slide([], 0, policy, 4).verdict).toMatchObject({ allowed: false, remaining: 3, resetMs: 0 });
  });
});

describe("what a request turned out to cost", () => {
  const policy = { limit: 10, windowMs: 10_000 };

  it("is charged whatever the budget: a debt refuses every request until enough spends leave", () => {
    const debt = slide(ones(0), 1_000, policy, 15, true);
    expect(debt.verdict).toMatchObject({ allowed: true, remaining: 0 });
    // 16 units spent: one more may be spent once both spends have left (at 11 000), not the first alone.
    expect(debt.verdict.resetMs).toBe(10_000);
    expect(slide(debt.spends, 10_500, policy).verdict).toMatchObject({ allowed: false, resetMs: 500 });
    expect(slide(debt.spends, 11_000, policy).verdict.allowed).toBe(true);
  });

  it("gives back an overestimate from the latest spends, never past what they spent", () => {
    const estimated = slide(ones(0), 1_000, policy, 9);
    expect(estimated.verdict.remaining).toBe(0);
    const settled = slide(estimated.spends, 2_000, policy, -7, true);
    expect(settled.spends).toEqual([...ones(0), { at: 1_000, units: 2 }]);
    expect(settled.verdict.remaining).toBe(7);
    // Giving back more than was spent empties the window; it earns nothing beyond.
    const all = slide(settled.spends, 3_000, policy, -50, true);
    expect(all.spends).toEqual([]);
    expect(all.verdict).toMatchObject({ remaining: 10, resetMs: 0 });
  });
});

describe("the in-memory limiter", () => {
  afterEach(() => vi.useRealTimers());

  it("keeps one window per client", async () => {
    const limiter = memoryLimiter({ limit: 2, windowMs: 1_000 });
    expect((await limiter.take("a")).allowed).toBe(true);
    expect((await limiter.take("a")).allowed).toBe(true);
    expect((await limiter.take("a")).allowed).toBe(false);
    expect((await limiter.take("b")).allowed).toBe(true);
  });

  it("forgets clients whose window emptied, and never holds more than maxClients", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const limiter = memoryLimiter({ limit: 1, windowMs: 1_000 }, 3);
    for (const client of ["a", "b", "c"]) expect((await limiter.take(client)).allowed).toBe(true);
    // Full: a new client pushes out the one seen longest ago, whose window starts afresh.
    expect((await limiter.take("d")).allowed).toBe(true);
    expect((await limiter.take("a")).allowed).toBe(true);
    expect((await limiter.take("c")).allowed).toBe(false);
    // Once the windows have passed, nobody is held back.
    vi.advanceTimersByTime(1_000);
    for (const client of ["a", "b", "c", "d"]) expect((await limiter.take(client)).allowed).toBe(true);
  });
});
