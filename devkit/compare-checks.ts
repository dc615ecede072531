/**
 * Checks asked of the service and of the contract: each answer's body must be exactly the view's
 * result (`true`, `false` or the decimal integer) at the block compared (see CompareAt). The
 * versions differ only in how a check becomes a view call and how it is named (CheckKit).
 */
import { ask } from "./ask";
import { blockToCompare, type CompareAt, type Mismatch, type Oracle, pathAt } from "./compare";
import { pool } from "./pool";
import { chainClient, ethCalls, type ViewCall } from "./rpc";

/** What a version's checks need for the comparison. */
export type CheckKit<Spec> = {
  /** The registry view that answers the check. */
  call(spec: Spec): ViewCall;
  /** The check, named in a mismatch. */
  describe(spec: Spec): string;
};

export type CheckResult = { compared: number; positive: number; mismatches: Mismatch[] };

/** Asks the service each check (`urls[i]` asks `specs[i]`; at `at`'s block if it names one), then the contract. */
export async function compareChecks<Spec>(
  o: Oracle,
  kit: CheckKit<Spec>,
  specs: Spec[],
  urls: string[],
  at: CompareAt,
  concurrency = 32,
): Promise<CheckResult> {
  const answers = await pool(urls, concurrency, (url) =>
    ask(o.serviceUrl, pathAt(url, at), { headers: o.headers, dispatcher: o.dispatcher, reask: o.reask }),
  );
  const head = await chainClient(o.rpcUrl).getBlockNumber();
  const mismatches: Mismatch[] = [];
  const toCall: { i: number; block: bigint }[] = [];
  for (const [i, a] of answers.entries()) {
    const fit = blockToCompare(a, at, head);
    if ("block" in fit) toCall.push({ i, block: fit.block });
    else mismatches.push({ what: `${kit.describe(specs[i]!)}: answer`, query: a.path, ...fit });
  }
  const expected = await ethCalls(
    o,
    toCall.map(({ i, block }) => ({ ...kit.call(specs[i]!), block })),
  );
  let positive = 0;
  const wrong: { i: number; block: bigint; want: unknown }[] = [];
  toCall.forEach(({ i, block }, j) => {
    const want = expected[j];
    if (want === true || (typeof want === "bigint" && want > 0n)) positive++;
    if (answers[i]!.text !== String(want)) wrong.push({ i, block, want });
  });
  // A clue for the first few: the blocks near the one compared at whose contract gives the
  // service's answer, to tell an answer that reflects another block from a wrong one.
  for (const [k, { i, block, want }] of wrong.entries()) {
    const a = answers[i]!;
    let clue = "";
    if (k < 12) {
      const blocks: bigint[] = [];
      for (let b = block - 6n; b <= block + 6n; b++) if (b >= 0n && b <= head) blocks.push(b);
      const near = await ethCalls(
        o,
        blocks.map((b) => ({ ...kit.call(specs[i]!), block: b })),
      );
      const agree = blocks.filter((_, n) => String(near[n]) === a.text);
      clue =
        ` (the contract answers that at blocks ${agree.length ? agree.join(", ") : "none"} of ` +
        `${blocks[0]}..${blocks[blocks.length - 1]})`;
    }
    mismatches.push({
      what: `${kit.describe(specs[i]!)} at block ${block}`,
      query: a.path,
      expected: String(want),
      got: `${JSON.stringify(a.text.slice(0, 200))}${clue}`,
    });
  }
  return { compared: toCall.length, positive, mismatches };
}
