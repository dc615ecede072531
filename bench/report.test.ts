import { describe, expect, it } from "vitest";
import { twoHostsOverOne } from "./report";

describe("twoHostsOverOne", () => {
  it("doubles while the primary does nothing per answer", () => {
    const m = twoHostsOverOne({ host: 0.0002, primary: 0, primaryIdle: 0.01, cores: 2 });
    expect(m.one).toBeCloseTo(10_000);
    expect(m.two).toBeCloseTo(20_000);
    expect(m.ratio).toBeCloseTo(2);
  });

  it("is bounded by the primary once two hosts' answers need more of it than it has", () => {
    // The primary's 2 cores, less 2 × 0.1 idle, at 150 µs an answer: 12,000 a second.
    const m = twoHostsOverOne({ host: 0.0002, primary: 0.00015, primaryIdle: 0.1, cores: 2 });
    expect(m.one).toBeCloseTo(10_000);
    expect(m.two).toBeCloseTo(12_000);
    expect(m.ratio).toBeCloseTo(1.2);
  });
});
