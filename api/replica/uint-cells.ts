import { trimmed, withRoom } from "./byte-keys";

/** A cell of no value (a row's type has no token id, or no amount). */
const NULL_CELL = -1;
/** A cell whose value is past 2^53, held aside as a bigint. */
const BIG_CELL = -2;

/** The largest value a cell holds as itself: a double is exact up to it. */
const MOST_EXACT = BigInt(Number.MAX_SAFE_INTEGER);

/** The cell `value` takes: itself as a double where that is exact (up to 2^53), else a mark. */
export const cellOf = (value: bigint | null): number =>
  value == null ? NULL_CELL : value <= MOST_EXACT ? Number(value) : BIG_CELL;

/**
 * One uint256 or null per row, for the copy's token ids and amounts (chain-state.ts): a double
 * each, the few values past 2^53 kept aside. As arrays of bigints, the two columns of 750,000 v2
 * rows were 16 MB of large objects a worker, and the bigints besides (docs/performance.md,
 * "Batches allocating half as much").
 */
export class UintCells {
  private cells = new Float64Array(0);
  private readonly big = new Map<number, bigint>();

  set(row: number, value: bigint | null) {
    this.cells = withRoom(this.cells, row + 1, NULL_CELL);
    const cell = cellOf(value);
    this.cells[row] = cell;
    if (cell === BIG_CELL) this.big.set(row, value as bigint);
    else this.big.delete(row);
  }

  /** The row's value (null where none was set). */
  get(row: number): bigint | null {
    const cell = this.cells[row] ?? NULL_CELL;
    if (cell === NULL_CELL) return null;
    return cell === BIG_CELL ? this.big.get(row)! : BigInt(cell);
  }

  /** Whether the row holds `value`, whose cell (cellOf) is `cell`: a double's compare for most. */
  holds(row: number, value: bigint | null, cell: number): boolean {
    const held = this.cells[row] ?? NULL_CELL;
    return held === cell && (cell !== BIG_CELL || this.big.get(row) === value);
  }

  /** The row's value as decimal digits, or undefined for none: a double's digits need no bigint. */
  digits(row: number): string | undefined {
    const cell = this.cells[row] ?? NULL_CELL;
    if (cell === NULL_CELL) return undefined;
    return cell === BIG_CELL ? this.big.get(row)!.toString() : String(cell);
  }

  /** Gives back the room past `rows` rows (byte-keys.ts, `trimmed`). */
  trim(rows: number) {
    this.cells = trimmed(this.cells, rows);
  }
}
