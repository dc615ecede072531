import { describe, expect, it } from "vitest";
import { LoadShedder } from "./load";

describe("LoadShedder", () => {
  it("sheds nothing while the loop has room, more while it is saturated, less as it frees up", () => {
    const load = new LoadShedder(() => 0);
    const shares = [0.95, 0.95, 0.9, 0.7, 0.5, 0.5].map((utilization) => {
      load.adjust(utilization);
      return load.share;
    });
    expect(shares.map((s) => Math.round(s * 100) / 100)).toEqual([0.25, 0.5, 0.75, 0.75, 0.65, 0.55]);
    for (let i = 0; i < 20; i++) load.adjust(0.99);
    expect(load.share).toBe(1);
    expect(Array.from({ length: 100 }, () => load.shed()).every(Boolean)).toBe(true);
    for (let i = 0; i < 20; i++) load.adjust(0.1);
    expect(load.share).toBe(0);
    expect(Array.from({ length: 100 }, () => load.shed()).some(Boolean)).toBe(false);
    load.stop();
  });
});
