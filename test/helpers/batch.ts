/**
 * Batch checks (`POST /registry/v{1,2}/check`): their bodies, built from the GET checks' URLs (so
 * every accepted spelling of every parameter appears in them too, and a `tokenId` is now and then an
 * exact JSON integer), and a batch's answer compared with the contract's views: one result per
 * check, in order, each exactly the view's result at the one block the answer reports.
 */
import { stringify } from "lossless-json";
import { ask } from "../../devkit/ask";
import { blockToCompare, type CompareAt, type Mismatch, type Oracle } from "../../devkit/compare";
import type { CheckKit, CheckResult } from "../../devkit/compare-checks";
import type { Rng } from "../../devkit/random";
import { chainClient, ethCalls } from "../../devkit/rpc";
import { parseJsonExact } from "./json";

/** A batch item's fields as JSON values: strings, or exact integers. */
export type BatchItem = Record<string, string | bigint>;

/**
 * The batch item of a GET check's URL (`/registry/v2/check/erc721?chainId=…&to=…`): its kind as
 * `type` and its parameters but the chain, a decimal `tokenId` as a JSON integer half the time.
 */
export function itemOfUrl(rng: Rng, url: string): BatchItem {
  const [path, query] = url.split("?") as [string, string];
  const item: BatchItem = { type: path.slice(path.lastIndexOf("/") + 1) };
  for (const [name, value] of new URLSearchParams(query)) {
    if (name === "chainId") continue;
    item[name] = name === "tokenId" && /^\d+$/.test(value) && rng.chance(0.5) ? BigInt(value) : value;
  }
  return item;
}

/**
 * A batch's body: the items, the chain (a JSON number or a string) and, when given, the block (a
 * JSON number, or a decimal or 0x-hex string).
 */
export function batchBody(rng: Rng, chainId: number, items: BatchItem[], block?: bigint): string {
  const body: Record<string, unknown> = { chainId: rng.chance(0.5) ? BigInt(chainId) : String(chainId) };
  if (block !== undefined) body.blockNumber = rng.pick([block, block.toString(), `0x${block.toString(16)}`]);
  body.checks = items;
  return stringify(body)!;
}

/** The headers of a batch request: JSON, and the extra ones given (an API key). */
export const batchHeaders = (headers: Record<string, string> = {}) => ({
  "Content-Type": "application/json",
  ...headers,
});

/**
 * Asks the service a batch of `specs` (`items[i]` is `specs[i]`), at `at`'s block when it names
 * one, and compares each result with the contract's view at the block the answer reports.
 */
export async function compareBatch<Spec>(
  o: Oracle,
  kit: CheckKit<Spec>,
  version: "v1" | "v2",
  specs: Spec[],
  items: BatchItem[],
  at: CompareAt,
  rng: Rng,
): Promise<CheckResult & { block: bigint | undefined; body: string }> {
  const body = batchBody(rng, o.chainId, items, "block" in at ? at.block : undefined);
  const path = `/registry/${version}/check`;
  const a = await ask(o.serviceUrl, path, { method: "POST", headers: batchHeaders(o.headers), body, timeoutMs: 0 });
  const head = await chainClient(o.rpcUrl).getBlockNumber();
  const what = `${version} batch of ${specs.length}${"block" in at ? ` at block ${at.block}` : ""}`;
  const fail = (expected: string, got: string): CheckResult & { block: undefined; body: string } => ({
    compared: 0,
    positive: 0,
    mismatches: [{ what, query: `POST ${path}`, expected, got }],
    block: undefined,
    body,
  });
  const fit = blockToCompare(a, at, head);
  if (!("block" in fit)) return fail(fit.expected, fit.got);
  let results: unknown;
  try {
    results = parseJsonExact(a.text);
  } catch (error) {
    return fail("a JSON array", `${(error as Error).message}: ${a.text.slice(0, 200)}`);
  }
  if (!Array.isArray(results) || results.length !== specs.length)
    return fail(`a JSON array of ${specs.length} results`, a.text.slice(0, 200));
  const expected = await ethCalls(
    o,
    specs.map((s) => ({ ...kit.call(s), block: fit.block })),
  );
  const mismatches: Mismatch[] = [];
  let positive = 0;
  expected.forEach((want, i) => {
    const got = results[i];
    if (want === true || (typeof want === "bigint" && want > 0n)) positive++;
    // Exactly the GET's answer: a bare boolean or an exact integer, never a string.
    if (typeof got !== typeof want || String(got) !== String(want)) {
      mismatches.push({
        what: `${what}, checks[${i}]: ${kit.describe(specs[i]!)} at block ${fit.block}`,
        query: `POST ${path} ${stringify(items[i])}`,
        expected: String(want),
        got: `${typeof got} ${String(got)}`,
      });
    }
  });
  return { compared: specs.length, positive, mismatches, block: fit.block, body };
}
