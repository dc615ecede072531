import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { REFUSAL_DELAY_MS, refusalPace } from "./pace";

/** When (ms after now) each of `waits` resolves, under fake timers. */
async function resolvedAt(waits: Promise<void>[]): Promise<number[]> {
  const started = Date.now();
  const at: number[] = [];
  waits.forEach((w, i) => void w.then(() => (at[i] = Date.now() - started)));
  await vi.runAllTimersAsync();
  return at;
}

describe("refusalPace", () => {
  beforeEach(() => vi.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => vi.useRealTimers());

  it("lets a client's refusal go the delay after it came", async () => {
    const pace = refusalPace(10);
    expect(await resolvedAt([pace.wait("a")])).toEqual([REFUSAL_DELAY_MS]);
  });

  it("answers one client's refusals at most perSecond a second, however many come at once", async () => {
    const pace = refusalPace(10);
    const at = await resolvedAt(Array.from({ length: 5 }, () => pace.wait("a")));
    expect(at).toEqual([250, 350, 450, 550, 650]);
  });

  it("paces each client apart: another client's refusals do not wait for the first's", async () => {
    const pace = refusalPace(10);
    expect(await resolvedAt([pace.wait("a"), pace.wait("a"), pace.wait("b")])).toEqual([250, 350, 250]);
  });

  it("gives a client its delay alone again once its turn has passed", async () => {
    const pace = refusalPace(10);
    await resolvedAt([pace.wait("a"), pace.wait("a")]);
    vi.advanceTimersByTime(1_000);
    expect(await resolvedAt([pace.wait("a")])).toEqual([REFUSAL_DELAY_MS]);
  });

  it("keeps at most maxClients: past them, the client refused longest ago is forgotten", async () => {
    const pace = refusalPace(1, 2);
    const queued = [pace.wait("a"), pace.wait("a"), pace.wait("a")];
    // "a" now waits 3 s for its next turn; two more clients push it out of memory.
    const others = [pace.wait("b"), pace.wait("c")];
    expect(await resolvedAt([...queued, ...others, pace.wait("a")])).toEqual([250, 1250, 2250, 250, 250, 250]);
  });
});
