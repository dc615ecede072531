import { describe, expect, it } from "vitest";
import { xorshift32 } from "../../core/xorshift";
import { cellOf, UintCells } from "./uint-cells";

const SEED = Number(process.env.SEED ?? Date.now() % 2 ** 31);

describe(`UintCells (SEED=${SEED})`, () => {
  it("gives back each row's value, on both sides of 2^53, and compares as bigints do", () => {
    const next = xorshift32(SEED);
    const edge = BigInt(Number.MAX_SAFE_INTEGER);
    const values = [null, 0n, 1n, 42n, edge - 1n, edge, edge + 1n, edge + 2n, 2n ** 64n, 2n ** 256n - 1n];
    const cells = new UintCells();
    const reference: (bigint | null)[] = [];
    for (let i = 0; i < 5_000; i++) {
      // Rows set out of order and again, trimmed now and then: set again after, they grow in place.
      if (next() % 500 === 0) cells.trim(reference.length);
      const row = next() % 300;
      const value = next() % 4 === 0 ? BigInt(next()) * BigInt(next()) : values[next() % values.length]!;
      cells.set(row, value);
      reference[row] = value;
    }
    reference.forEach((value, row) => {
      if (value === undefined) return;
      expect(cells.get(row), `row ${row}`).toBe(value);
      expect(cells.digits(row), `row ${row}`).toBe(value === null ? undefined : value.toString());
      for (const other of [...values, value])
        expect(cells.holds(row, other, cellOf(other)), `row ${row}: ${other}`).toBe(other === value);
    });
    // Rows never set hold nothing.
    expect(cells.get(10_000)).toBeNull();
    expect(cells.holds(10_000, null, cellOf(null))).toBe(true);
  });

  it("keeps a double only where it is exact", () => {
    const edge = BigInt(Number.MAX_SAFE_INTEGER);
    expect(cellOf(edge)).toBe(Number.MAX_SAFE_INTEGER);
    expect(cellOf(edge + 1n)).toBe(cellOf(2n ** 255n));
    expect(cellOf(edge + 1n)).not.toBe(cellOf(null));
    expect(cellOf(0n)).toBe(0);
  });
});
