/**
 * Calls to Multicall3 (api/rpc/plan.ts) whose every inner call is one this route answers: run as
 * its code runs them, in order, each element read only when the loop reaches it (an element it
 * cannot read reverts the whole with no data; a failed call reverts it with the `require` reason).
 */
import { type Abi, type AbiFunction, type Hex, toFunctionSelector, zeroHash } from "viem";
import { MULTICALL3_ADDRESS, multicall3Abi } from "../../core/abi/multicall3";
import {
  bytesAt,
  type CallArg,
  type CallParam,
  type DynamicArray,
  decodeCalldata,
  dynamicElement,
  memberAt,
  wordAt,
} from "../../core/calldata";
import { encodeResult } from "./encode";
import { hexOf, MAX_DEPTH, type Plan, type Planning, REVERTS, revertWith, TOO_DEEP } from "./plan";

export { MULTICALL3_ADDRESS };

/** One inner call as the loop ran it. */
type Ran = Exclude<Plan, { notServed: string }>;

/**
 * The inner calls of `array` (structs of `head` bytes: target, [allowFailure,] callData), planned in
 * order as the loop runs them: an element the code cannot read reverts the whole with no data; a
 * failed call not allowed to fail (`require` set; aggregate3: its allowFailure clear) reverts it with
 * `Multicall3: <require>`; one not served makes the whole not served.
 */
function innerCalls(planning: Planning, array: DynamicArray, head: bigint, depth: number, require?: string) {
  const ran: Ran[] = [];
  for (let i = 0n; i < array.length; i++) {
    const at = dynamicElement(array, i, head);
    if (at === undefined) return REVERTS;
    const target = memberAt(array.bytes, "address", at);
    const data = bytesAt(array.bytes, at, at + head - 32n);
    if (target === undefined || data === undefined) return REVERTS;
    const plan = depth >= MAX_DEPTH ? TOO_DEEP : planning.call(target as Hex, data, 0n, depth + 1);
    if ("notServed" in plan) return plan;
    // aggregate3 reads allowFailure in assembly: any non-zero word allows.
    const allowed = head === CALL3_HEAD && wordAt(array.bytes, at + 32n) !== 0n;
    if ("reverted" in plan && require !== undefined && !allowed) return revertWith(`Multicall3: ${require}`);
    ran.push(plan);
  }
  return ran;
}

const CALL_HEAD = 64n;
const CALL3_HEAD = 96n;

/** An inner call's return data, once the reads are done. */
const returnData = (plan: Ran) => ("result" in plan ? hexOf(plan.result()) : plan.reverted);
/** An inner call's Result struct, once the reads are done. */
const resultOf = (plan: Ran) => ({ success: "result" in plan, returnData: returnData(plan) });

/**
 * An aggregate function `name` over `calls` (structs of `head` bytes), answering `answer` of the
 * inner calls once the reads are done.
 */
function aggregated(
  planning: Planning,
  name: string,
  [calls, head, require]: [CallArg | undefined, bigint, string | undefined],
  depth: number,
  answer: (ran: Ran[]) => unknown,
): Plan {
  const ran = innerCalls(planning, calls as DynamicArray, head, depth, require);
  if (!Array.isArray(ran)) return ran;
  return { result: () => encode(name, answer(ran)) };
}

type Answer = (planning: Planning, args: CallArg[], depth: number) => Plan;

// The block's own hash is not known while it runs: blockhash(block.number) is zero.
const withBlock = (planning: Planning, name: string, require: boolean, calls: CallArg | undefined, depth: number) =>
  aggregated(planning, name, [calls, CALL_HEAD, require ? "call failed" : undefined], depth, (ran) => [
    planning.reads.block!,
    zeroHash,
    ran.map(resultOf),
  ]);

/** What each function served answers from its arguments. */
const ANSWERS: Record<string, Answer> = {
  aggregate: (planning, [calls], depth) =>
    aggregated(planning, "aggregate", [calls, CALL_HEAD, "call failed"], depth, (ran) => [
      planning.reads.block!,
      ran.map(returnData),
    ]),
  aggregate3: (planning, [calls], depth) =>
    aggregated(planning, "aggregate3", [calls, CALL3_HEAD, "call failed"], depth, (ran) => ran.map(resultOf)),
  tryAggregate: (planning, [require, calls], depth) =>
    aggregated(planning, "tryAggregate", [calls, CALL_HEAD, require ? "call failed" : undefined], depth, (ran) =>
      ran.map(resultOf),
    ),
  tryBlockAndAggregate: (planning, [require, calls], depth) =>
    withBlock(planning, "tryBlockAndAggregate", require as boolean, calls, depth),
  blockAndAggregate: (planning, [calls], depth) => withBlock(planning, "blockAndAggregate", true, calls, depth),
  getBlockNumber: (planning) => ({ result: () => encode("getBlockNumber", planning.reads.block!) }),
  getChainId: (planning) => ({ result: () => encode("getChainId", BigInt(planning.chainId)) }),
};

const FUNCTIONS = (multicall3Abi as Abi).filter((item): item is AbiFunction => item.type === "function");
const BY_NAME = new Map(FUNCTIONS.map((fn) => [fn.name, fn]));
const BY_SELECTOR = new Map(FUNCTIONS.map((fn) => [toFunctionSelector(fn), fn]));

const encode = (name: string, result: unknown) => encodeResult(BY_NAME.get(name)!, result);

/** The parameter types the decoder takes for `fn`: structs holding `bytes` are dynamic. */
const paramsOf = (fn: AbiFunction) =>
  fn.inputs.map((input) => (input.type.endsWith("[]") ? "dynamic[]" : input.type) as CallParam);

/** What calldata `data` sent to Multicall3 does (no value: what takes it depends on the sender's balance). */
export function multicall3Plan(planning: Planning, data: Hex, value: bigint, depth = 0): Plan {
  const fn = BY_SELECTOR.get(data.slice(0, 10).toLowerCase() as Hex);
  // Multicall3 has no fallback: calldata naming no function reverts.
  if (fn === undefined) return REVERTS;
  if (value !== 0n) return fn.stateMutability === "payable" ? { notServed: "a call with value" } : REVERTS;
  const answer = ANSWERS[fn.name];
  if (answer === undefined) return { notServed: `Multicall3 ${fn.name}` };
  const args = decodeCalldata(paramsOf(fn), data);
  return args === undefined ? REVERTS : answer(planning, args, depth);
}
