/** Answers at a moment (`timestamp`) held to the chain: its headers and its contract. */
import type { Answer } from "../../devkit/ask";
import { chainClient } from "../../devkit/rpc";

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
