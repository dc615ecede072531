import { afterEach, describe, expect, it, vi } from "vitest";
import { KEYLESS, slide } from "./limit";
import { memoryLimiter } from "./memory-limiter";

describe("the sliding window", () => {
  const policy = { limit: 3, windowMs: 10_000 };

  it("lets `limit` requests through in any window, exact to the millisecond", () => {
    let hits: number[] = [];
    for (const t of [0, 1_000, 2_000]) {
      const step = slide(hits, t, policy);
      expect(step.verdict.allowed).toBe(true);
      hits = step.hits;
    }
    const refused = slide(hits, 9_999, policy);
    expect(refused.verdict).toMatchObject({ allowed: false, remaining: 0, resetMs: 1 });
    // The refused request does not count: at 10 000 the first request has left the window.
    expect(refused.hits).toEqual([0, 1_000, 2_000]);
    const next = slide(refused.hits, 10_000, policy);
    expect(next.verdict).toMatchObject({ allowed: true, remaining: 0, resetMs: 1_000 });
    expect(next.hits).toEqual([1_000, 2_000, 10_000]);
  });

  it("reports the requests remaining, and when the oldest leaves the window", () => {
    expect(slide([0, 4_000], 5_000, policy).verdict).toMatchObject({
      allowed: true,
      limit: 3,
      remaining: 0,
      resetMs: 5_000,
    });
    expect(slide([-6_000, 1_000], 5_000, policy).verdict).toMatchObject({
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
    const two = slide([0], 1_000, policy, 2);
    expect(two.verdict).toMatchObject({ allowed: true, remaining: 0 });
    expect(two.hits).toEqual([0, 1_000, 1_000]);
    const refused = slide([0], 1_000, policy, 3);
    expect(refused.verdict).toMatchObject({ allowed: false, remaining: 2, resetMs: 9_000 });
    expect(refused.hits).toEqual([0]);
    // More items than the limit ever allows, in an empty window: refused, nothing to wait for.
    expect(slide([], 0, policy, 4).verdict).toMatchObject({ allowed: false, remaining: 3, resetMs: 0 });
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
