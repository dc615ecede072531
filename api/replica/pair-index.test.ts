import { describe, expect, it } from "vitest";
import { xorshift32 } from "../../core/xorshift";
import { PairIndex } from "./pair-index";

const SEED = Number(process.env.SEED ?? Date.now() % 2 ** 31);

describe(`PairIndex against a map of pairs (SEED=${SEED})`, () => {
  it("finds each pair's rows newest first, counts them, and finds no row of a pair never added", () => {
    const next = xorshift32(SEED ^ 0x68e31da4);
    const index = new PairIndex();
    const model = new Map<string, number[]>();
    // Pairs from a few numbers (many rows each) and from many (one or two each): the table grows
    // past its first size many times over.
    const number = () => (next() % 4 === 0 ? next() % 8 : next() % 50_000);
    for (let row = 0; row < 30_000; row++) {
      const [a, b] = [number(), number()];
      index.add(row, a, b);
      // Added again, a row is left as it is.
      if (row % 7 === 0) index.add(row, b, a);
      model.set(`${a},${b}`, [row, ...(model.get(`${a},${b}`) ?? [])]);
    }
    for (const [pair, rows] of model) {
      const [a, b] = pair.split(",").map(Number) as [number, number];
      const found: number[] = [];
      for (let row = index.first(a, b); row !== -1; row = index.next(row)) found.push(row);
      expect(found, pair).toEqual(rows);
      expect(index.count(a, b), pair).toBe(rows.length);
    }
    for (let i = 0; i < 10_000; i++) {
      const [a, b] = [number(), number()];
      if (model.has(`${a},${b}`)) continue;
      expect(index.first(a, b), `${a},${b}`).toBe(-1);
      expect(index.count(a, b), `${a},${b}`).toBe(0);
    }
  });

  it("refuses a row out of order", () => {
    const index = new PairIndex();
    index.add(0, 1, 2);
    expect(() => index.add(2, 1, 2)).toThrow(/row 2 added before row 1/);
  });
});
