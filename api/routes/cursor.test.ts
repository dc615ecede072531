import { describe, expect, it } from "vitest";
import { Problem } from "../http/problem";
import { decodeCursor, encodeCursor, requestDigest } from "./cursor";

const digest = requestDigest("/registry/v2/history", [
  ["chainId", "1"],
  ["limit", "10"],
]);

describe("cursors", () => {
  it("round-trip the block and the position", () => {
    const cursor = { block: 18_000_000n, after: { block: 17_999_999n, logIndex: 42 } };
    expect(decodeCursor(encodeCursor(digest, cursor), digest)).toEqual(cursor);
    const last = { block: 2n ** 63n - 1n, after: { block: 2n ** 63n - 1n, logIndex: 2 ** 31 - 1 } };
    expect(decodeCursor(encodeCursor(digest, last), digest)).toEqual(last);
  });

  it("round-trip an address for lists ordered by address, and take only an address there", () => {
    const cursor = { block: 7n, after: "0x00000000000000000000000000000000000000ff" as const };
    expect(decodeCursor(encodeCursor(digest, cursor), digest, "address")).toEqual(cursor);
    const position = encodeCursor(digest, { block: 7n, after: { block: 5n, logIndex: 1 } });
    expect(() => decodeCursor(position, digest, "address")).toThrow(Problem);
    const upper = Buffer.from(JSON.stringify([1, digest, "7", `0x${"AB".repeat(20)}`])).toString("base64url");
    expect(() => decodeCursor(upper, digest, "address")).toThrow(Problem);
  });

  it("name the request they continue: the path and every parameter but cursor and limit, in any order", () => {
    const same = requestDigest("/registry/v2/history", [
      ["limit", "500"],
      ["cursor", "x"],
      ["chainId", "1"],
    ]);
    expect(same).toBe(digest);
    expect(requestDigest("/registry/v2/history", [["chainId", "10"]])).not.toBe(digest);
    expect(requestDigest("/registry/v1/history", [["chainId", "1"]])).not.toBe(digest);
  });

  it("refuse a cursor of another request, and anything that is not a cursor, as 400 naming cursor", () => {
    const other = requestDigest("/registry/v2/0x0000000000000000000000000000000000000001", []);
    const cursor = encodeCursor(other, { block: 5n, after: { block: 5n, logIndex: 0 } });
    const forged = (body: unknown) => Buffer.from(JSON.stringify(body)).toString("base64url");
    for (const text of [
      cursor,
      "",
      "abc",
      "%%%",
      forged([1, digest, "5", "5"]),
      forged([2, digest, "5", "5", 0]),
      forged([1, digest, "-5", "5", 0]),
      forged([1, digest, "5", "5", -1]),
      forged([1, digest, "5", "5", 1.5]),
      forged([1, digest, 5, "5", 0]),
      forged([1, digest, "05", "5", 0]),
      forged({ block: 5 }),
      // Past what the tables' columns hold: a block past 2^63-1, a log index past 2^31-1.
      forged([1, digest, "9999999999999999999", "5", 0]),
      forged([1, digest, "5", "9223372036854775808", 0]),
      forged([1, digest, "5", "5", 2 ** 31]),
      forged([1, digest, "5", "5", 2 ** 53]),
      // An address where a position belongs.
      forged([1, digest, "5", "0x0000000000000000000000000000000000000001"]),
    ]) {
      let thrown: unknown;
      try {
        decodeCursor(text, digest);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, text).toBeInstanceOf(Problem);
      expect((thrown as Problem).code).toBe("invalid_parameter");
      expect((thrown as Problem).extra.param).toBe("cursor");
    }
  });
});
