import { describe, expect, test } from "vitest";
import { utf8 } from "./utf8";

describe("utf8", () => {
  test("reads ASCII and UTF-8 alike, as TextDecoder does", () => {
    for (const text of ['{"to":"0xab"}', "", "rights: café ✓", "\u{1f600}", "\ufeff{}"]) {
      const bytes = new TextEncoder().encode(text);
      expect(utf8(bytes)).toBe(new TextDecoder().decode(bytes));
    }
  });

  test("replaces invalid bytes as TextDecoder does", () => {
    const bytes = Uint8Array.from([0x7b, 0xff, 0xc3, 0x7d]);
    expect(utf8(bytes)).toBe("{\ufffd\ufffd}");
  });

  test("reads a view into a larger buffer from its own start", () => {
    const whole = Buffer.from("xx{}yy");
    expect(utf8(whole.subarray(2, 4))).toBe("{}");
  });
});
