import { maxUint256 } from "viem";
import { describe, expect, it } from "vitest";
import { toJson } from "./json";

describe("toJson", () => {
  it("writes bigints as exact integer literals", () => {
    expect(toJson(maxUint256)).toBe("115792089237316195423570985008687907853269984665640564039457584007913129639935");
    expect(toJson({ a: [1n, null, "x", true] })).toBe('{"a":[1,null,"x",true]}');
    expect(JSON.parse(toJson({ a: [1n, null, "x"], b: { c: false } }))).toEqual({ a: [1, null, "x"], b: { c: false } });
  });

  it("writes what JSON.stringify writes for values without bigints, names needing escapes too", () => {
    const values: unknown[] = [
      { 'say "hi"': "a\nb", "\u2028": ["é", 0.5, -0, 1e21, false], "": { nested: [[], {}] } },
      [null, "\u0000", { a: null, b: [1, 2, { c: "d" }] }],
      "plain",
      12,
      true,
    ];
    for (const value of values) expect(toJson(value)).toBe(JSON.stringify(value));
  });

  it("writes every name of objects with more names than it keeps quoted", () => {
    const wide = Object.fromEntries(Array.from({ length: 3_000 }, (_, i) => [`name "${i}"`, i]));
    expect(toJson(wide)).toBe(JSON.stringify(wide));
    expect(toJson([wide, wide])).toBe(JSON.stringify([wide, wide]));
  });

  it("writes an absent field as null, in objects as in arrays", () => {
    expect(toJson({ a: undefined, b: [undefined] })).toBe('{"a":null,"b":[null]}');
  });
});
