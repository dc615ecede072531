/** Answers at a moment (`timestamp`) held to the chain: its headers and its contract. */
import type { Address } from "viem";
import { type Answer, ask } from "../../devkit/ask";
import { abis } from "../../devkit/oracle";
import type { Rng } from "../../devkit/random";
import { callView, chainClient } from "../../devkit/rpc";
import { checkUrl, randomCheck, v2Checks } from "../../devkit/v2/checks";
import type { Pools, SentWrite } from "../../devkit/v2/generate";

/** The timestamp of a block of the chain at `rpcUrl`, as it is now. */
export function blockStamps(rpcUrl: string): (block: bigint) => Promise<bigint> {
  const client = chainClient(rpcUrl);
  return async (blockNumber) => (await client.getBlock({ blockNumber })).timestamp;
}

/**
 * What is wrong with `answer` to a question at `timestamp`, or undefined: it must be a 200 naming
 * (X-Indexed-Block) the newest block stamped at or before the moment, with `contract`'s answer there.
 */
export async function momentProblem(
  stamp: (block: bigint) => Promise<bigint>,
  answer: Answer,
  timestamp: bigint,
  contract: (block: bigint) => Promise<string>,
): Promise<string | undefined> {
  const { block, status, text, path } = answer;
  if (status !== 200 || block === undefined) return `${path}: ${status} ${text.slice(0, 300)}`;
  const [own, next] = await Promise.all([stamp(block), stamp(block + 1n)]);
  if (!(own <= timestamp && next > timestamp)) return `${path}: block ${block} is stamped ${own}, the next ${next}`;
  const want = await contract(block);
  return text === want ? undefined : `${path}: ${text}, the contract at ${block} ${want}`;
}

/**
 * `count` random v2 checks, each at a random moment in [`from`, `to`), asked of `base` and held to
 * the chain (momentProblem); what is wrong, one line each.
 */
export async function v2MomentProblems(o: {
  base: string;
  headers: Record<string, string>;
  rpcUrl: string;
  registry: Address;
  chainId: number;
  rng: Rng;
  pools: Pools;
  history: readonly SentWrite[];
  from: bigint;
  to: bigint;
  count: number;
}): Promise<string[]> {
  const stamp = blockStamps(o.rpcUrl);
  const problems: string[] = [];
  for (let i = 0; i < o.count; i++) {
    const timestamp = o.from + BigInt(o.rng.int(Number(o.to - o.from)));
    const spec = randomCheck(o.rng, o.pools, o.history);
    const answer = await ask(o.base, `${checkUrl(o.rng, o.chainId, spec)}&timestamp=${timestamp}`, {
      headers: o.headers,
    });
    const { functionName, args } = v2Checks.call(spec);
    const problem = await momentProblem(stamp, answer, timestamp, async (block) =>
      String(await callView(o.rpcUrl, abis.v2, o.registry, functionName, args, block)),
    );
    if (problem !== undefined) problems.push(problem);
  }
  return problems;
}
