/**
 * Differential comparison of the service's answers with the registries' own views (eth_call), the
 * parts every comparison shares: where to ask, at which block to compare, which answers can be
 * compared at all, and the report of what differs.
 *
 * Nothing here uses the service's code to decide what is right.
 */
import type { Dispatcher } from "undici";
import type { Answer } from "./ask";
import type { Contract } from "./rpc";

/** A registry on a chain, and the service to ask about it. */
export type Oracle = Contract & {
  serviceUrl: string;
  chainId: number;
  /** Sent with every request to the service (an X-API-KEY: tens of thousands of requests). */
  headers?: Record<string, string>;
  /** The connections the service is asked over (default: fetch's shared pool). */
  dispatcher?: Dispatcher;
  /** Ask again after a 429 or a 503 (devkit/ask.ts; default true); false where the first answer is the one held. */
  reask?: boolean;
};

/** One answer that is not the contract's. */
export type Mismatch = { what: string; query: string; expected: string; got: string };

/**
 * The block answers are compared at: each answer's own X-Indexed-Block, which must be at least
 * `minBlock` (the last write's, say); or `block`, at which every question is asked (`blockNumber`)
 * and which every answer must report.
 */
export type CompareAt = { minBlock: bigint } | { block: bigint };

/** The path to ask for an answer to compare at `at`: with `blockNumber` when `at` names a block. */
export const pathAt = (path: string, at: CompareAt) =>
  "block" in at ? `${path}${path.includes("?") ? "&" : "?"}blockNumber=${at.block}` : path;

/**
 * The block to compare an answer at, when it can be compared: a 200, JSON, with an X-Indexed-Block
 * as `at` wants, and not past the chain's `head` (read after the answer: a block of another chain,
 * say). Otherwise what was expected of the answer and what it is.
 */
export function blockToCompare(
  a: Answer,
  at: CompareAt,
  head: bigint,
): { block: bigint } | { expected: string; got: string } {
  const expected = "200 application/json with X-Indexed-Block";
  const type = a.headers.get("content-type") ?? "";
  if (a.status !== 200) return { expected, got: `${a.status} ${type} ${a.text.slice(0, 300)}` };
  if (!type.startsWith("application/json")) return { expected, got: `Content-Type ${type}` };
  if (a.block === undefined) return { expected, got: "no X-Indexed-Block" };
  if ("block" in at && a.block !== at.block) return { expected: `X-Indexed-Block ${at.block}`, got: String(a.block) };
  if ("minBlock" in at && a.block < at.minBlock)
    return { expected: `X-Indexed-Block >= ${at.minBlock}, the last write's block`, got: String(a.block) };
  if (a.block > head) return { expected: `X-Indexed-Block <= ${head}, the chain's head`, got: String(a.block) };
  return { block: a.block };
}

/** The failure message of a comparison: how many answers differed, the first ten, and how to run it again. */
export function report(seed: number, label: string, mismatches: Mismatch[]): string {
  const first = mismatches
    .slice(0, 10)
    .map(
      (m, i) =>
        `  ${i + 1}. ${m.what}\n     query:    ${m.query}\n     expected: ${m.expected}\n     got:      ${m.got}`,
    )
    .join("\n");
  const rerun = `rerun with SEED=${seed}`;
  return `[SEED=${seed}] ${label}: ${mismatches.length} mismatches with the contract (${rerun}):\n${first}`;
}
