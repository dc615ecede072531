import { isLosslessNumber, parse } from "lossless-json";
import { maxUint256 } from "viem";
import { describe, expect, it } from "vitest";
import { xorshift32 } from "../../core/xorshift";
import { parseExactJson, stringifyJson, toJson, walkJson } from "./json";

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
      { at: new Date(Date.UTC(2026, 11, 1, 10, 0, 0, 5)), list: [new Date(0)] },
    ];
    for (const value of values) expect(toJson(value)).toBe(JSON.stringify(value));
  });

  it("writes every name of objects with more names than it keeps quoted", () => {
    const wide = Object.fromEntries(Array.from({ length: 3_000 }, (_, i) => [`name "${i}"`, i]));
    expect(toJson(wide)).toBe(JSON.stringify(wide));
    expect(toJson([wide, wide])).toBe(JSON.stringify([wide, wide]));
  });

  it("writes a long list of booleans and bigints (a batch's answers) as the walk does", () => {
    const answers = Array.from({ length: 1_000 }, (_, i) => (i % 3 === 0 ? i % 2 === 0 : BigInt(i) * maxUint256));
    expect(toJson(answers)).toBe(walkJson(answers));
    // Anything else among them: as JSON.stringify writes the list.
    for (const other of [null, undefined, 1, "1", [true], { a: 1n }]) {
      const mixed = [...answers, other];
      expect(toJson(mixed)).toBe(walkJson(mixed));
    }
  });

  it("writes an absent field as null, in objects as in arrays", () => {
    expect(toJson({ a: undefined, b: [undefined] })).toBe('{"a":null,"b":[null]}');
  });

  it("writes by JSON.stringify what the walk writes, for values it could mistake too", () => {
    const values: unknown[] = [
      // Strings and names holding the mark a bigint is written with.
      "\u0000123",
      ["\u0000-5", 5n, "\u0000"],
      { "\u00001": 1n },
      { a: "x\u00001", b: -12n },
      // Objects of their own toJSON, and boxed primitives, which JSON.stringify unwraps.
      { a: { toJSON: () => 7 } },
      [{ toJSON: () => "text" }, { toJSON: () => undefined }, { toJSON: () => Number.NaN }],
      { a: { toJSON: () => ({ b: 1n }) } },
      [new Number(1), new String("s"), new Boolean(false), Object(2n)],
      { at: new Date(5), f: () => 1, s: Symbol("s"), n: Number.NaN, i: Number.POSITIVE_INFINITY },
      undefined,
      -(2n ** 255n),
    ];
    for (const value of values) expect(stringifyJson(value)).toBe(walkJson(value));
  });

  it("writes by JSON.stringify what the walk writes, for random values (SEED printed on failure)", () => {
    const seed = Number(process.env.SEED ?? Date.now() % 2 ** 31);
    const next = xorshift32(seed);
    const pick = <T>(items: readonly T[]) => items[next() % items.length]!;
    const text = () =>
      Array.from({ length: next() % 6 }, () => pick(["a", "0", "\u0000", '"', "\\", "é", "\n", "1"])).join("");
    const value = (depth: number): unknown => {
      switch (next() % (depth > 3 ? 6 : 8)) {
        case 0:
          return BigInt(next()) * BigInt(next()) * (next() % 2 ? 1n : -1n);
        case 1:
          return text();
        case 2:
          return pick([null, undefined, true, false, 0, -0, 1.5, 2 ** 60, Number.NaN]);
        case 3:
          return new Date(next());
        case 4:
          return next() % 2 ? `\u0000${next()}` : next();
        case 5:
          return pick([() => 1, Symbol("s"), { toJSON: () => next() % 3 }]);
        case 6:
          return Array.from({ length: next() % 5 }, () => value(depth + 1));
        default:
          return Object.fromEntries(Array.from({ length: next() % 5 }, () => [text(), value(depth + 1)]));
      }
    };
    for (let i = 0; i < 2_000; i++) {
      const v = value(0);
      expect(stringifyJson(v), `SEED=${seed}, value ${i}`).toBe(walkJson(v));
      // A long list of it, as toJson hands to JSON.stringify.
      if (i % 100 === 0)
        expect(toJson(Array(100).fill(v)), `SEED=${seed}, value ${i}`).toBe(walkJson(Array(100).fill(v)));
    }
  });
});

describe("parseExactJson", () => {
  /** A parse's outcome, numbers as their text whichever way they were parsed, or its error's message. */
  const outcome = (parser: (text: string) => unknown, text: string): unknown => {
    const plain = (v: unknown): unknown => {
      if (isLosslessNumber(v)) return { number: v.value };
      if (typeof v === "number") return { number: String(v) };
      if (Array.isArray(v)) return v.map(plain);
      if (typeof v === "object" && v !== null) return Object.entries(v).map(([k, x]) => [k, plain(x)]);
      return v;
    };
    try {
      return plain(parser(text));
    } catch (error) {
      return { error: (error as Error).message };
    }
  };

  const NUMBERS = [
    "0",
    "1",
    "31337",
    "-5",
    "0.5",
    "1e3",
    "1E3",
    "1.0",
    "-0",
    "2e-7",
    "9007199254740993",
    "123456789012345678901234567890",
  ];
  const STRINGS = ['"to"', '"0xAbC"', '"a\\"b"', '"\\\\"', '"t\\u006f"', '"{[:,]}"', '"1e3"', '""', '"\\n"'];
  const KEYS = ['"to"', '"t\\u006f"', '"from"', '"a\\"b"', '"tokenId"', '"__proto__"', '"0"'];

  type Rng = { int(n: number): number; pick<T>(items: readonly T[]): T; chance(p: number): boolean };
  const rngOf = (seed: number): Rng => {
    const next = xorshift32(seed);
    const int = (n: number) => next() % n;
    return { int, pick: (items) => items[int(items.length)]!, chance: (p) => next() / 2 ** 32 < p };
  };

  /** Random JSON text, with number spellings, repeated keys and escapes of every kind, sometimes broken. */
  function text(rng: Rng, depth = 0): string {
    const space = () => rng.pick(["", "", " ", "\n "]);
    const kind = depth > 2 ? rng.int(3) : rng.int(5);
    if (kind === 0) return rng.pick(NUMBERS);
    if (kind === 1) return rng.pick(STRINGS);
    if (kind === 2) return rng.pick(["true", "false", "null"]);
    const n = rng.int(4);
    if (kind === 3) return `[${Array.from({ length: n }, () => space() + text(rng, depth + 1)).join(",")}]`;
    const members = Array.from({ length: n }, () => `${rng.pick(KEYS)}${space()}:${space()}${text(rng, depth + 1)}`);
    return `{${members.join(`,${space()}`)}}`;
  }

  it("parses as lossless-json does, numbers' text and errors alike, on 20,000 seeded texts", () => {
    const rng = rngOf(0x5eed);
    for (let i = 0; i < 20_000; i++) {
      let t = text(rng);
      // Broken now and then: cut short, or a character dropped or doubled.
      if (rng.chance(0.1)) t = t.slice(0, rng.int(t.length + 1));
      else if (rng.chance(0.05)) {
        const at = rng.int(t.length);
        t = rng.chance(0.5) ? t.slice(0, at) + t.slice(at + 1) : t.slice(0, at) + t[at] + t.slice(at);
      }
      expect(outcome(parseExactJson, t), t).toEqual(outcome(parse, t));
    }
  });

  it("takes JSON.parse's plain numbers when they are exact, and lossless-json's otherwise", () => {
    const fast = parseExactJson('{"chainId": 1, "checks": [{"type": "all", "tokenId": 42}]}') as {
      chainId: unknown;
      checks: { tokenId: unknown }[];
    };
    expect(typeof fast.chainId).toBe("number");
    expect(typeof fast.checks[0]!.tokenId).toBe("number");
    for (const t of ['{"tokenId": 123456789012345678901234567890}', '{"chainId": 1e0}', '{"a": -0}']) {
      const value = Object.values(parseExactJson(t) as object)[0];
      expect(isLosslessNumber(value), t).toBe(true);
    }
    expect(() => parseExactJson('{"to": "0x1", "to": "0x2"}')).toThrow(/Duplicate key 'to'/);
    expect(() => parseExactJson('{"to": "0x1", "t\\u006f": "0x2"}')).toThrow(/Duplicate key/);
  });
});
