import { describe, expect, test } from "vitest";
import { utf8 } from "./utf8";

/** `bytes` cut into chunks at `cuts`. */
const chunked = (bytes: Uint8Array, cuts: number[]) =>
  [0, ...cuts].map((from, i) => bytes.subarray(from, [...cuts, bytes.length][i]));

describe("utf8", () => {
  test("reads ASCII and UTF-8 alike, as TextDecoder does, whole or in chunks", () => {
    for (const text of ['{"to":"0xab"}', "", "rights: café ✓", "\u{1f600}", "\ufeff{}"]) {
      const bytes = new TextEncoder().encode(text);
      const expected = new TextDecoder().decode(bytes);
      expect(utf8([bytes])).toBe(expected);
      // A character's bytes split between two chunks are one character still.
      for (let cut = 0; cut <= bytes.length; cut++) expect(utf8(chunked(bytes, [cut]))).toBe(expected);
    }
    expect(utf8([])).toBe("");
  });

  test("replaces invalid bytes as TextDecoder does", () => {
    const bytes = Uint8Array.from([0x7b, 0xff, 0xc3, 0x7d]);
    expect(utf8(chunked(bytes, [1, 2]))).toBe("{\ufffd\ufffd}");
  });

  test("reads views into a larger buffer from their own start", () => {
    const whole = Buffer.from("xx{}yy");
    expect(utf8([whole.subarray(2, 3), whole.subarray(3, 4)])).toBe("{}");
  });
});
