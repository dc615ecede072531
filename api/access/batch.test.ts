import { describe, expect, it } from "vitest";
import { batchedLookup } from "./batch";

/** A lookup over a mutable table that records each call's keys; its first call stays open until released. */
function table(rows: Record<string, number>) {
  const calls: string[][] = [];
  let release = () => {};
  const firstHeld = new Promise<void>((ok) => (release = ok));
  const lookup = async (keys: string[]) => {
    calls.push([...keys].sort());
    // The rows as they are when the lookup starts.
    const found = new Map(keys.filter((k) => k in rows).map((k) => [k, rows[k]!]));
    if (calls.length === 1) await firstHeld;
    return found;
  };
  return { calls, lookup, release: () => release() };
}

describe("batchedLookup", () => {
  it("answers calls made together with one lookup of their distinct keys", async () => {
    const t = table({ a: 1, b: 2 });
    const find = batchedLookup(t.lookup);
    const first = find("a");
    const later = [find("a"), find("b"), find("c"), find("b")];
    t.release();
    expect(await first).toBe(1);
    expect(await Promise.all(later)).toEqual([1, 2, undefined, 2]);
    expect(t.calls).toEqual([["a"], ["a", "b", "c"]]);
  });

  it("never answers a call from a lookup that began before it: a change made meanwhile is seen", async () => {
    const rows: Record<string, number> = { key: 1 };
    const t = table(rows);
    const find = batchedLookup(t.lookup);
    const before = find("key");
    // Revoked while the first lookup is in flight; the call after it must see the revocation.
    delete rows.key;
    const after = find("key");
    t.release();
    expect(await before).toBe(1);
    expect(await after).toBeUndefined();
    expect(t.calls).toEqual([["key"], ["key"]]);
  });

  it("a failed lookup fails its own calls only; the next calls get a fresh lookup", async () => {
    let fail = true;
    const find = batchedLookup(async (keys: string[]) => {
      if (fail) throw new Error("database down");
      return new Map(keys.map((k) => [k, k.length]));
    });
    await expect(Promise.all([find("x"), find("yy")])).rejects.toThrow("database down");
    fail = false;
    expect(await Promise.all([find("x"), find("yy")])).toEqual([1, 2]);
  });
});
