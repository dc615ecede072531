import { describe, expect, it } from "vitest";
import { isReplaced } from "./replaced-head";

const A = `0x${"a".repeat(64)}` as const;
const B = `0x${"b".repeat(64)}` as const;

describe("isReplaced", () => {
  it("is the chain no longer reaching the indexed block, and not an RPC that lags behind it", () => {
    expect(isReplaced(100n, { hash: null, head: 90n }, { number: 100n, hash: A })).toBe(true);
    expect(isReplaced(100n, { hash: null, head: 90n }, undefined)).toBe(true);
    expect(isReplaced(100n, { hash: null, head: 120n }, { number: 100n, hash: A })).toBe(false);
  });

  it("is the indexed block given another hash than when it became the indexed one", () => {
    expect(isReplaced(100n, { hash: B, head: 110n }, { number: 100n, hash: A })).toBe(true);
    expect(isReplaced(100n, { hash: A.toUpperCase() as typeof A, head: 110n }, { number: 100n, hash: A })).toBe(false);
    // A hash noted for another block says nothing of this one.
    expect(isReplaced(100n, { hash: B, head: 110n }, { number: 99n, hash: A })).toBe(false);
  });

  it("is the newest block with indexed events given another hash than the indexer indexed", () => {
    const at = { hash: A, head: 110n };
    expect(isReplaced(100n, at, undefined, { indexed: { number: 95n, hash: A }, at: { hash: B, head: 110n } })).toBe(
      true,
    );
    expect(isReplaced(100n, at, undefined, { indexed: { number: 95n, hash: A }, at: { hash: A, head: 110n } })).toBe(
      false,
    );
    expect(isReplaced(100n, at, undefined, { indexed: { number: 95n, hash: A }, at: { hash: null, head: 110n } })).toBe(
      false,
    );
  });
});
