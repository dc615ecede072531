import { describe, expect, it } from "vitest";
import { chainStatus } from "./chain-status";

const at = (indexedTimestamp: number, ready = true) => ({ indexedBlock: 7n, ready, indexedTimestamp });

describe("chainStatus", () => {
  it("is syncing before the backfill is done, or before anything is indexed", () => {
    expect(chainStatus(undefined, 1_000, 120)).toEqual({ status: "syncing", lagSeconds: null });
    expect(chainStatus(at(400, false), 1_000, 120)).toEqual({ status: "syncing", lagSeconds: 600 });
  });

  it("is live while the newest indexed block is at most the threshold old, behind after", () => {
    expect(chainStatus(at(880), 1_000, 120)).toEqual({ status: "live", lagSeconds: 120 });
    expect(chainStatus(at(879), 1_000, 120)).toEqual({ status: "behind", lagSeconds: 121 });
  });

  it("is reorganized once the chain is alarmed, whatever else holds", () => {
    expect(chainStatus(at(1_000), 1_000, 120, true)).toEqual({ status: "reorganized", lagSeconds: 0 });
    expect(chainStatus(at(400, false), 1_000, 120, true)).toEqual({ status: "reorganized", lagSeconds: 600 });
    expect(chainStatus(undefined, 1_000, 120, true)).toEqual({ status: "reorganized", lagSeconds: null });
  });

  it("on a hot standby, is behind while its replay trails the primary too far, or by how much is not known", () => {
    const on = (lagSeconds: number | undefined) => ({
      ...at(990),
      replication: { lagSeconds, behindAfterSeconds: 30 },
    });
    expect(chainStatus(on(0), 1_000, 120)).toEqual({ status: "live", lagSeconds: 10 });
    expect(chainStatus(on(30), 1_000, 120)).toEqual({ status: "live", lagSeconds: 10 });
    expect(chainStatus(on(31), 1_000, 120)).toEqual({ status: "behind", lagSeconds: 10 });
    expect(chainStatus(on(undefined), 1_000, 120)).toEqual({ status: "behind", lagSeconds: 10 });
    // The block's own age still counts, and a chain still syncing or alarmed is that first.
    expect(chainStatus({ ...on(0), indexedTimestamp: 879 }, 1_000, 120)).toEqual({ status: "behind", lagSeconds: 121 });
    expect(chainStatus({ ...on(31), ready: false }, 1_000, 120)).toEqual({ status: "syncing", lagSeconds: 10 });
    expect(chainStatus(on(31), 1_000, 120, true)).toEqual({ status: "reorganized", lagSeconds: 10 });
  });

  it("never reports a negative lag (a block stamped ahead of this clock)", () => {
    expect(chainStatus(at(1_005), 1_000, 120)).toEqual({ status: "live", lagSeconds: 0 });
  });
});
