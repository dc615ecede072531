import { describe, expect, it } from "vitest";
import { LoadShedder } from "./load";

describe("LoadShedder", () => {
  it("sheds nothing while the loop has room, more while saturated by keyless requests, less as it frees up", () => {
    const load = new LoadShedder(() => 0);
    const flood = 5_000;
    const shares = [0.95, 0.95, 0.9, 0.7, 0.5, 0.5].map((utilization) => {
      load.adjust(utilization, flood);
      return load.share;
    });
    expect(shares.map((s) => Math.round(s * 100) / 100)).toEqual([0.25, 0.5, 0.75, 0.75, 0.65, 0.55]);
    for (let i = 0; i < 20; i++) load.adjust(0.99, flood);
    expect(load.share).toBe(1);
    expect(Array.from({ length: 100 }, () => load.shed()).every(Boolean)).toBe(true);
    for (let i = 0; i < 20; i++) load.adjust(0.1, flood);
    expect(load.share).toBe(0);
    expect(Array.from({ length: 100 }, () => load.shed()).some(Boolean)).toBe(false);
    load.stop();
  });

  it("sheds no keyless request where keyless requests are few, however busy the process", () => {
    const load = new LoadShedder(() => 0);
    for (let i = 0; i < 20; i++) load.adjust(0.99, 100);
    expect(load.share).toBe(0);
    load.adjust(0.99, 5_000);
    expect(load.share).toBe(0.25);
    // The flood stops: the share falls while the process stays busy with other work.
    load.adjust(0.99, 10);
    expect(Math.round(load.share * 100)).toBe(15);
    load.stop();
  });
});

describe("LoadShedder's sampling", () => {
  it("counts keyless requests over the time they came in, also when a busy loop runs its timer late", async () => {
    // 25 requests over 400 ms of a loop too busy to run timers: 62 a second, under the pressure
    // that sheds; counted per 100 ms, as if the timer had run on time, they were 250.
    const load = new LoadShedder();
    const start = performance.now();
    let next = start;
    while (performance.now() - start < 400) {
      if (performance.now() >= next) {
        load.shed();
        next += 16;
      }
    }
    await new Promise((ok) => setTimeout(ok, 150));
    expect(load.share).toBe(0);
    load.stop();
  });

  it("sheds under a flood of keyless requests in a busy loop", async () => {
    const load = new LoadShedder();
    const start = performance.now();
    while (performance.now() - start < 400) load.shed();
    await new Promise((ok) => setTimeout(ok, 150));
    expect(load.share).toBeGreaterThan(0);
    load.stop();
  });
});
