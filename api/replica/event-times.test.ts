import { describe, expect, it } from "vitest";
import type { Sample } from "../../core/moment";
import { xorshift32 } from "../../core/xorshift";
import { EventTimes } from "./event-times";

const SEED = Number(process.env.SEED ?? Date.now() % 2 ** 31);

/** The nearest samples by reading every one: what `around` must say. */
function nearest(samples: readonly Sample[], timestamp: bigint, head: bigint) {
  const upTo = samples.filter((s) => s.block <= head);
  return {
    before: upTo.filter((s) => s.timestamp <= timestamp).at(-1),
    after: upTo.find((s) => s.timestamp > timestamp),
  };
}

describe(`EventTimes (SEED=${SEED})`, () => {
  it("tells the nearest event blocks of every moment as a scan of them all does, as blocks become final", () => {
    const next = xorshift32(SEED);
    const int = (n: number) => next() % n;
    const times = new EventTimes();
    const samples: Sample[] = [];
    let [block, timestamp, final] = [0n, 1_000n, 0n];
    for (let round = 0; round < 200; round++) {
      // A few new event blocks: some share their timestamp with the one before (sub-second blocks).
      for (let n = int(5); n > 0; n--) {
        block += 1n + BigInt(int(3));
        timestamp += BigInt(int(3));
        samples.push({ block, timestamp });
      }
      // A sync: the blocks past the final one read whole, in any order; then finality moves on
      // (never back: the feed's final is the greatest it has read), and those before it are final.
      times.replaceRecent(samples.filter((s) => s.block > final).reverse());
      const newer = block - BigInt(int(6));
      if (int(3) === 0 && newer > final) final = newer;
      times.finalize(Number(final));
      const head = block - BigInt(int(4));
      for (let ask = 0; ask < 20; ask++) {
        const moment = 990n + BigInt(int(Number(timestamp - 990n) + 12));
        expect(times.around(moment, head), `[SEED=${SEED}] round ${round}, moment ${moment}, head ${head}`).toEqual(
          nearest(samples, moment, head),
        );
      }
    }
    expect(samples.length, `[SEED=${SEED}] samples`).toBeGreaterThan(200);
  });
});
