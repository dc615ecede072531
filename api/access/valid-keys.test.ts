import { afterEach, describe, expect, it } from "vitest";
import { FRESH_MS, ValidKeys } from "./valid-keys";

/** A copy over reads answered by hand, on a clock moved by hand. */
function harness() {
  let now = 1_000_000;
  const pending: { resolve(hashes: Map<string, string>): void; reject(error: Error): void }[] = [];
  const valid = new ValidKeys(
    () => new Promise((resolve, reject) => pending.push({ resolve, reject })),
    () => now,
  );
  return {
    valid,
    tick: (ms: number) => {
      now += ms;
    },
    /** Answers the oldest read pending. */
    answer: async (entries: [string, string][]) => {
      pending.shift()!.resolve(new Map(entries));
      await new Promise((r) => setImmediate(r));
    },
    /** Fails the oldest read pending: with `error`, or a failure that is not the database's absence. */
    fail: async (error = new Error("the database is down")) => {
      pending.shift()!.reject(error);
      await new Promise((r) => setImmediate(r));
    },
  };
}

describe("ValidKeys", () => {
  let stop: (() => void) | undefined;
  afterEach(() => stop?.());

  it("answers from the keys it read, and nothing for a key it does not hold", async () => {
    const h = harness();
    const read = h.valid.refresh();
    expect(h.valid.hashOf("a"), "before any read").toBeUndefined();
    await h.answer([["a", "hash a"]]);
    await read;
    expect(h.valid.hashOf("a")).toBe("hash a");
    expect(h.valid.hashOf("b")).toBeUndefined();
  });

  it("vouches for nothing once its last read began FRESH_MS ago", async () => {
    const h = harness();
    const read = h.valid.refresh();
    h.tick(100);
    await h.answer([["a", "hash a"]]);
    await read;
    h.tick(FRESH_MS - 101);
    expect(h.valid.hashOf("a")).toBe("hash a");
    h.tick(1);
    expect(h.valid.hashOf("a"), "FRESH_MS after the read began, not after it ended").toBeUndefined();
    expect(h.valid.heldHashOf("a"), "what it last read, however old").toBe("hash a");
    expect(h.valid.heldHashOf("b")).toBeUndefined();
    const failed = expect(h.valid.refresh()).rejects.toThrow("down");
    await h.fail();
    await failed;
    expect(h.valid.hashOf("a"), "a failed read leaves the copy stale").toBeUndefined();
  });

  it("takes a revocation elsewhere at its next read", async () => {
    const h = harness();
    const first = h.valid.refresh();
    await h.answer([
      ["a", "hash a"],
      ["b", "hash b"],
    ]);
    await first;
    const second = h.valid.refresh();
    await h.answer([["b", "hash b"]]);
    await second;
    expect(h.valid.hashOf("a")).toBeUndefined();
    expect(h.valid.hashOf("b")).toBe("hash b");
  });

  it("vouches on from its last copy while the database cannot be reached, fresh once it answers", async () => {
    const h = harness();
    const read = h.valid.refresh();
    await h.answer([
      ["a", "hash a"],
      ["b", "hash b"],
    ]);
    await read;
    h.tick(FRESH_MS * 10);
    const failed = expect(h.valid.refresh()).rejects.toThrow("ECONNREFUSED");
    await h.fail(Object.assign(new Error("connect ECONNREFUSED 10.0.0.1:5432"), { code: "ECONNREFUSED" }));
    await failed;
    expect(h.valid.hashOf("a"), "cut off: the last copy vouches").toBe("hash a");
    h.valid.revoked("b");
    expect(h.valid.hashOf("b"), "a revocation made here holds even so").toBeUndefined();
    const again = h.valid.refresh();
    await h.answer([]);
    await again;
    expect(h.valid.hashOf("a"), "the database answered: a revoked elsewhere meanwhile").toBeUndefined();
    h.tick(FRESH_MS);
    const other = expect(h.valid.refresh()).rejects.toThrow("down");
    await h.fail();
    await other;
    h.valid.added("c", "hash c");
    expect(h.valid.hashOf("c"), "another failure: the copy ages as before").toBeUndefined();
  });

  it("refuses a key revoked here at once, even when a read begun before the revocation ends after it", async () => {
    const h = harness();
    const first = h.valid.refresh();
    await h.answer([["a", "hash a"]]);
    await first;
    const inFlight = h.valid.refresh();
    h.valid.revoked("a");
    expect(h.valid.hashOf("a")).toBeUndefined();
    await h.answer([["a", "hash a"]]);
    await inFlight;
    expect(h.valid.hashOf("a"), "the read begun before the revocation is not taken").toBeUndefined();
  });

  it("accepts a key made here at once", async () => {
    const h = harness();
    const read = h.valid.refresh();
    await h.answer([]);
    await read;
    h.valid.added("c", "hash c");
    expect(h.valid.hashOf("c")).toBe("hash c");
  });

  it("reads again every REFRESH_MS once started, until stopped", async () => {
    let reads = 0;
    const valid = new ValidKeys(async () => new Map([["a", `read ${++reads}`]]));
    stop = () => valid.stop();
    await valid.start();
    expect(valid.hashOf("a")).toBe("read 1");
    await new Promise((r) => setTimeout(r, 600));
    valid.stop();
    const seen = reads;
    expect(seen, "a read at start, then again every 250 ms").toBeGreaterThanOrEqual(2);
    expect(valid.hashOf("a")).toBe(`read ${seen}`);
    await new Promise((r) => setTimeout(r, 400));
    expect(reads, "no read after stop()").toBe(seen);
  });
});
