import { describe, expect, it } from "vitest";
import { picker } from "./pick";

/** Evenly spaced draws in [0, 1), each once per `n` calls: counts by weight come out exact. */
const evenly = (n: number) => {
  let k = 0;
  return () => ((k++ % n) + 0.5) / n;
};

const counts = (draw: () => number, times: number) => {
  const seen = new Map<number, number>();
  for (let i = 0; i < times; i++) {
    const index = draw();
    seen.set(index, (seen.get(index) ?? 0) + 1);
  }
  return Object.fromEntries([...seen].sort(([a], [b]) => a - b));
};

describe("picker", () => {
  it("draws requests without a group by weight", () => {
    expect(counts(picker([{}, { weight: 3 }, {}], evenly(10)), 50)).toEqual({ 0: 10, 1: 30, 2: 10 });
  });

  it("draws each group in turn, so that every group is measured within as many requests as groups", () => {
    const requests = ["page 1", "page 2", "page 3"].flatMap((group) => [{ group }, { group }]);
    const draw = picker(requests);
    const groups = Array.from({ length: 30 }, () => requests[draw()]!.group);
    for (let start = 0; start < 30; start += 3)
      expect(groups.slice(start, start + 3)).toEqual(["page 1", "page 2", "page 3"]);
  });

  it("draws at random, by weight, within a group", () => {
    const requests = [{ group: "a" }, { group: "b" }, { group: "a", weight: 2 }, { group: "b", weight: 2 }];
    // Draws go to a and b in turn; with 9 values (odd), each group sees all 9 twice in 36 draws.
    expect(counts(picker(requests, evenly(9)), 36)).toEqual({ 0: 6, 1: 6, 2: 12, 3: 12 });
  });
});
