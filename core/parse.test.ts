import { getAddress, maxUint256, zeroHash } from "viem";
import { describe, expect, it } from "vitest";
import {
  ADDRESS_PATTERN,
  ParseError,
  parseAddress,
  parseBlockNumber,
  parseBytes32,
  parseChainId,
  parseChainIds,
  parseDirection,
  parseRights,
  parseTimestamp,
  parseUint256,
} from "./parse";
import { xorshift32 } from "./xorshift";

const SEED = Number(process.env.SEED ?? Date.now() % 2 ** 31);

describe("parseAddress", () => {
  const checksummed = "0x00000000000000447e69651d841bD8D104Bed493";
  it("accepts lowercase, uppercase and a valid checksum, returning lowercase", () => {
    expect(parseAddress(checksummed)).toBe(checksummed.toLowerCase());
    expect(parseAddress(checksummed.toLowerCase())).toBe(checksummed.toLowerCase());
    expect(parseAddress(`0x${checksummed.slice(2).toUpperCase()}`)).toBe(checksummed.toLowerCase());
  });
  it.each([
    ["bad checksum", "0x00000000000000447e69651d841bd8D104Bed493"],
    ["too short", "0x1234"],
    ["too long", `${checksummed}00`],
    ["no prefix", checksummed.slice(2)],
    ["uppercase prefix", `0X${checksummed.slice(2)}`],
    ["ENS name", "vitalik.eth"],
    ["whitespace", ` ${checksummed}`],
    ["non-hex", "0x00000000000000447e69651d841bD8D104Bed49g"],
    ["empty", ""],
  ])("rejects %s", (_, input) => {
    expect(() => parseAddress(input)).toThrow(ParseError);
  });

  it(`takes what the declared pattern and EIP-55 take, on seeded near-addresses (SEED=${SEED})`, () => {
    const next = xorshift32(SEED ^ 0x27d4eb2d);
    // Hex digits of both cases, the characters beside their ranges, and wide ones whose low byte is a digit's.
    const alphabet = "0123456789abcdefABCDEF/:@G`gxX\u00e9 \u0130\u0166";
    const pattern = new RegExp(ADDRESS_PATTERN);
    for (let i = 0; i < 20_000; i++) {
      const hex = Array.from({ length: 40 }, () => "0123456789abcdef"[next() % 16]).join("");
      const spellings = [`0x${hex}`, getAddress(`0x${hex}`), `0x${hex.toUpperCase()}`];
      let input = spellings[next() % 3]!;
      // Most inputs changed a little: a character swapped, one added or one taken away.
      const edit = next() % 5;
      const at = next() % (input.length + 1);
      const char = alphabet[next() % alphabet.length]!;
      if (edit === 1) input = input.slice(0, at) + char + input.slice(at + 1);
      if (edit === 2) input = input.slice(0, at) + char + input.slice(at);
      if (edit === 3) input = input.slice(0, at) + input.slice(at + 1);
      const lower = input.toLowerCase();
      const digits = input.slice(2);
      const takes =
        pattern.test(input) && (lower === input || digits === digits.toUpperCase() || getAddress(lower) === input);
      if (takes) expect(parseAddress(input), input).toBe(lower);
      else expect(() => parseAddress(input), input).toThrow(ParseError);
    }
  });
});

describe("parseUint256", () => {
  it.each([
    ["0", 0n],
    ["42", 42n],
    ["007", 7n],
    ["0x0", 0n],
    ["0xff", 255n],
    ["0xFF", 255n],
    [maxUint256.toString(), maxUint256],
    [`0x${"f".repeat(64)}`, maxUint256],
  ])("accepts %s", (input, value) => {
    expect(parseUint256(input)).toBe(value);
  });
  it.each(["", "-1", "1.5", "1e3", "+1", " 1", "0x", (maxUint256 + 1n).toString(), `0x1${"0".repeat(64)}`, "abc"])(
    "rejects %j",
    (input) => {
      expect(() => parseUint256(input)).toThrow(ParseError);
    },
  );
});

describe("parseBlockNumber, parseTimestamp", () => {
  it("take decimal or 0x-hex from 0 to 2^63-1, and nothing past it", () => {
    for (const parse of [parseBlockNumber, parseTimestamp]) {
      expect(parse("0")).toBe(0n);
      expect(parse("1764547200")).toBe(1_764_547_200n);
      expect(parse("0x7fffffffffffffff")).toBe(2n ** 63n - 1n);
      for (const bad of ["0x8000000000000000", "9223372036854775808", "-1", "1.5", "1e9", "", " 1"])
        expect(() => parse(bad), bad).toThrow(ParseError);
    }
    expect(() => parseTimestamp("x")).toThrow(/Unix seconds/);
  });
});

describe("parseRights", () => {
  it("is zero when empty", () => {
    expect(parseRights("")).toBe(zeroHash);
  });
  it('takes a string as Solidity bytes32("...")', () => {
    expect(parseRights("claim")).toBe(`0x636c61696d${"0".repeat(54)}`);
    expect(parseRights("a".repeat(32))).toBe(`0x${"61".repeat(32)}`);
  });
  it("takes 0x + 64 hex digits as they are, lowercased", () => {
    expect(parseRights(`0x${"AB".repeat(32)}`)).toBe(`0x${"ab".repeat(32)}`);
  });
  it("takes any ASCII, control characters included", () => {
    expect(parseRights("a\tb")).toBe(`0x610962${"0".repeat(58)}`);
  });
  it.each(["a".repeat(33), "é", "0x1234", `0x${"g".repeat(64)}`])("rejects %j", (input) => {
    expect(() => parseRights(input)).toThrow(ParseError);
  });
});

describe("parseChainId", () => {
  it("accepts positive decimal integers only", () => {
    expect(parseChainId("1")).toBe(1);
    expect(parseChainId("31337")).toBe(31337);
    expect(parseChainId("031337")).toBe(31337);
    for (const bad of ["0", "00", "-1", "1.0", "0x1", "", "abc", "+1", "9999999999999999", "99999999999999999"]) {
      expect(parseChainId(bad)).toBeUndefined();
    }
  });
});

describe("parseBytes32", () => {
  it("takes 0x and 64 hex digits in any case, as lowercase", () => {
    expect(parseBytes32(`0x${"Ab".repeat(32)}`)).toBe(`0x${"ab".repeat(32)}`);
    for (const bad of [
      "",
      "0x",
      `0x${"a".repeat(63)}`,
      `0x${"a".repeat(65)}`,
      `${"a".repeat(64)}`,
      `0x${"g".repeat(64)}`,
    ])
      expect(() => parseBytes32(bad), bad).toThrow(ParseError);
  });
});

describe("parseDirection", () => {
  it("takes both, incoming and outgoing, exactly", () => {
    for (const direction of ["both", "incoming", "outgoing"]) expect(parseDirection(direction)).toBe(direction);
    for (const bad of ["", "Both", "in", "incoming ", "constructor", "__proto__"])
      expect(() => parseDirection(bad), bad).toThrow("expected one of both, incoming, outgoing");
  });
});

describe("parseChainIds", () => {
  it("takes all, one chain id, or a list of them in the order given", () => {
    expect(parseChainIds("all")).toBe("all");
    expect(parseChainIds("8453")).toEqual([8453]);
    expect(parseChainIds("8453,1,10")).toEqual([8453, 1, 10]);
  });
  it("refuses all in a list, repeats, empty items and what is not a chain id", () => {
    for (const input of ["", ",", "1,", ",1", "all,1", "1,all", "1,1", "1,0", "1,x", "1, 2", "ALL"]) {
      expect(() => parseChainIds(input), input).toThrow(ParseError);
    }
  });
});
