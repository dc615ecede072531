import { describe, expect, it } from "vitest";
import type { BenchOptions } from "./options";
import { TARGETS, twoHostsOverOne, wholeTableReport } from "./report";
import type { WholeTableFigures } from "./whole-table";

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

describe("wholeTableReport", () => {
  const figures: WholeTableFigures = {
    table: 41,
    chosen: 41,
    posed: [1, 10, 324],
    leftOut: [],
    groups: undefined,
    groupSize: 1,
    answeringMs: new Map([
      [1, 30_000],
      [10, 45_000],
      [324, 60_000],
    ]),
    liveMs: new Map([
      [1, 31_000],
      [10, 50_000],
      [324, 70_000],
    ]),
    memory: { processes: 6, totalMb: 1_000, roles: { Ponder: [200, 250, 300], API: [150], launcher: [100, 0.5] } },
    peakMb: 9_000,
    idle: { spanS: 60, service: 12, postgres: 3, backends: 9, anvils: 0.1, bench: 0.2 },
    rounds: 2,
    delays: [900, 1_100, 1_300, 2_500, 1_000, 1_200],
    roundsBenchCpu: 0.05,
    verified: { answers: 12, positive: 6 },
  };
  const report = wholeTableReport({ smoke: false, seed: 7 } as BenchOptions, 600, figures);

  it("says each figure: the chains, until every one answers, memory by role, idle CPU, delays, verified", () => {
    expect(report).toContain("3 of the table's 41 chains posed by anvil, none left out");
    expect(report).toContain("every chain answering 60.0 s after npm start");
    expect(report).toContain("every chain live (its /registry/chains entry: caught up) 70.0 s after");
    expect(report).toContain("Ponder 200 / 250 / 300 MB a process (min / median / max; 750 MB in all)");
    expect(report).toContain("the service 25% of one core (its processes 20%, its 9 Postgres backends 5%)");
    expect(report).toContain("1,100 ms (median), 2,500 ms (p95), 2,500 ms (max)");
    expect(report).toContain("verified 12 answers (6 true)");
  });

  it("holds the section's figures to its targets alone, and no others", () => {
    const lines = report.split("\n").filter((line) => /^ {2}(met {3}|MISSED) {2}/.test(line));
    const names = TARGETS.filter((t) => t.reads.startsWith("wholeTable")).map((t) => t.name);
    expect(lines.map((line) => names.find((name) => line.includes(name)))).toEqual(names);
    expect(lines.map((line) => line.slice(2, 8))).toEqual(["MISSED", "met   ", "MISSED"]);
    expect(report).not.toMatch(/NaN|Infinity/);
  });
});
