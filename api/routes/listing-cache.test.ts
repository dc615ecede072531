import { describe, expect, it } from "vitest";
import { ListingCache } from "./listing-cache";

const listing = (revision: string, bytes: number) => ({ revision, json: new Uint8Array(bytes), records: 1 });

describe("ListingCache", () => {
  it("gives back what it holds, replaced whole by a newer revision", () => {
    const cache = new ListingCache(100);
    expect(cache.get("a")).toBeUndefined();
    cache.set("a", listing("1.1", 10));
    expect(cache.get("a")?.revision).toBe("1.1");
    cache.set("a", listing("1.2", 30));
    expect(cache.get("a")?.revision).toBe("1.2");
    expect(cache.size).toBe(30);
  });

  it("stays within its budget, dropping the least recently used first", () => {
    const cache = new ListingCache(100);
    cache.set("a", listing("1", 40));
    cache.set("b", listing("1", 40));
    cache.get("a"); // now b is the least recently used
    cache.set("c", listing("1", 40));
    expect(cache.get("b")).toBeUndefined();
    expect(cache.get("a")?.json.byteLength).toBe(40);
    expect(cache.get("c")?.json.byteLength).toBe(40);
    expect(cache.size).toBe(80);
  });

  it("does not hold a listing larger than the whole budget, nor drop others for it", () => {
    const cache = new ListingCache(100);
    cache.set("a", listing("1", 60));
    cache.set("big", listing("1", 101));
    expect(cache.get("big")).toBeUndefined();
    expect(cache.get("a")?.json.byteLength).toBe(60);
    expect(cache.size).toBe(60);
  });
});
