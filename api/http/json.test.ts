import { maxUint256 } from "viem";
import { describe, expect, it } from "vitest";
import { toJson } from "./json";

describe("toJson", () => {
  it("writes bigints as exact integer literals", () => {
    expect(toJson(maxUint256)).toBe("115792089237316195423570985008687907853269984665640564039457584007913129639935");
    expect(toJson({ a: [1n, null, "x", true] })).toBe('{"a":[1,null,"x",true]}');
    expect(JSON.parse(toJson({ a: [1n, null, "x"], b: { c: false } }))).toEqual({ a: [1, null, "x"], b: { c: false } });
  });
});
