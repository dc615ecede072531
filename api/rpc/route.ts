/**
 * `POST /rpc/{chainId}` (docs/contract.md, "A drop-in for the node"): JSON-RPC 2.0 over the chain's
 * registries. Each call is answered alone, from the state the REST routes answer from; whatever is
 * not served is an error object saying so (HTTP 200), never a value the node would not return.
 */
import { type Hex, toHex } from "viem";
import { V2_ADDRESS } from "../../core/chains";
import { Params } from "../http/params";
import { Problem } from "../http/problem";
import { indexedBlock, readyPosition, servedChainId } from "../routes/answer";
import { bodyText } from "../routes/batch";
import type { Answers, RouteHandler } from "../routes/table";
import type { ServedChain } from "../store/served-chains";
import { registryPlan } from "./calls";
import { answerOf, RPC_ERRORS, type RpcAnswer, type RpcCall, type RpcError, readRpcBody, rpcReply } from "./envelope";
import { MULTICALL3_ADDRESS, multicall3Plan } from "./multicall3";
import { Encoded, type Planning, Reads, type RpcVars } from "./plan";

/** What a call answers: a result, or an error object. */
type Outcome = { result: unknown } | { error: RpcError };

const CLIENT_VERSION = "delegation-registry-lookup/1";
/** A block tag a node takes, each the indexed head here (docs/contract.md). */
const HEAD_TAGS = new Set(["latest", "safe", "finalized", "pending"]);
const QUANTITY = /^0x(0|[1-9a-fA-F][0-9a-fA-F]*)$/;

const failure = (code: number, message: string, data?: unknown): Outcome => ({
  error: { code, message, ...(data === undefined ? {} : { data }) },
});
const notServed = (what: string) =>
  failure(RPC_ERRORS.server, `not served: ${what}; this endpoint answers the delegate.xyz registries' views`);

/** An eth_call's block: undefined for the head; a number; else the error to answer. */
function blockOf(value: unknown): bigint | undefined | Outcome {
  if (value === undefined || (typeof value === "string" && HEAD_TAGS.has(value))) return undefined;
  if (typeof value === "string" && QUANTITY.test(value)) return BigInt(value);
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const block = value as Record<string, unknown>;
    if ("blockHash" in block) return notServed("a block named by its hash");
    if ("blockNumber" in block) return blockOf(block.blockNumber);
  }
  return failure(RPC_ERRORS.invalidParams, "invalid params: a block is a tag, a hex quantity or {blockNumber}");
}

/** A Problem the REST routes would answer, as the JSON-RPC error a node gives in its place. */
function problemOutcome(problem: Problem): Outcome {
  if (problem.code === "block_not_indexed") return failure(RPC_ERRORS.server, "header not found");
  if (problem.status === 429) return failure(-32005, problem.detail);
  return failure(RPC_ERRORS.server, problem.detail);
}

/** A call's value: a hex quantity, else undefined. */
function valueSent(value: unknown): bigint | undefined {
  if (value === undefined || value === null || value === "0x") return 0n;
  return typeof value === "string" && QUANTITY.test(value) ? BigInt(value) : undefined;
}

/** Whether Multicall3 is at its address at `block`: see docs/contract.md, "A drop-in for the node". */
function multicall3At(chain: ServedChain, block: bigint | undefined): boolean {
  if (chain.v2?.address !== V2_ADDRESS) return false;
  const starts = [chain.v1, chain.v2].flatMap((registry) =>
    registry?.startBlock ? [BigInt(registry.startBlock)] : [],
  );
  return block === undefined || (starts.length > 0 && block >= starts.reduce((a, b) => (a < b ? a : b)));
}

/** What a call to `to` does on the chain at `planning.block`; an address not served is an error. */
function planCall(chain: ServedChain, planning: Planning, to: Hex, data: Hex, value: bigint, depth = 0) {
  const { block } = planning;
  const version = (["v2", "v1"] as const).find((v) => chain[v]?.address.toLowerCase() === to.toLowerCase());
  if (version !== undefined) {
    // Before the registry's deployment its address holds no code: a call returns nothing.
    const start = chain[version]?.startBlock;
    if (block !== undefined && start && block < BigInt(start)) return { result: () => "0x" as Hex };
    return registryPlan(planning, version, data, value, depth);
  }
  if (to.toLowerCase() === MULTICALL3_ADDRESS.toLowerCase() && multicall3At(chain, block))
    return multicall3Plan(planning, data, value, depth);
  return { notServed: `eth_call to ${to}` };
}

/** One eth_call: to a registry of the chain or Multicall3, else an error. */
async function ethCall(vars: RpcVars, chainId: number, params: unknown[]): Promise<Outcome> {
  const [tx, at] = params;
  if (typeof tx !== "object" || tx === null) return failure(RPC_ERRORS.invalidParams, "invalid params: no call");
  const { to, data, input, value: sent } = tx as Record<string, unknown>;
  const calldata = (input ?? data ?? "0x") as unknown;
  const value = valueSent(sent);
  if (typeof to !== "string" || typeof calldata !== "string" || !/^0x([0-9a-fA-F]{2})*$/.test(calldata))
    return failure(RPC_ERRORS.invalidParams, "invalid params: a call names `to` and `data` (hex of whole bytes)");
  if (value === undefined) return failure(RPC_ERRORS.invalidParams, "invalid params: `value` is a hex quantity");
  const block = blockOf(at);
  if (typeof block === "object") return block;
  const chain = vars.chains.find((served) => served.id === chainId)!;
  // Past the newest indexed block a node knows no such block, whatever is called.
  if (block !== undefined) await indexedBlock(vars, chainId, block);
  const reads = new Reads(vars, chainId);
  const planning: Planning = {
    vars,
    chainId,
    block,
    reads,
    call: (target, inner, sent, depth) => planCall(chain, planning, target, inner, sent, depth),
  };
  const plan = planning.call(to as Hex, calldata as Hex, value, 0);
  if ("notServed" in plan) return notServed(plan.notServed);
  if ("reverted" in plan)
    return failure(3, `execution reverted${plan.reason ? `: ${plan.reason}` : ""}`, plan.reverted);
  // The first read is the call's own unit; each further one costs a keyless client another.
  await vars.budget.spend(Math.max(0, reads.count - 1), "one per read of the calls within the call");
  await reads.run(block);
  return { result: plan.result() };
}

/** One call's outcome. */
async function outcomeOf(vars: RpcVars, chainId: number, call: RpcCall): Promise<Outcome> {
  if ("invalid" in call) return { error: call.invalid };
  try {
    switch (call.method) {
      case "eth_chainId":
        return { result: toHex(chainId) };
      case "net_version":
        return { result: String(chainId) };
      case "web3_clientVersion":
        return { result: CLIENT_VERSION };
      case "eth_blockNumber":
        return { result: toHex((await readyPosition(vars, chainId)).indexedBlock) };
      case "eth_call":
        return await ethCall(vars, chainId, call.params);
      default:
        return failure(RPC_ERRORS.methodNotFound, `the method ${call.method} does not exist/is not available`);
    }
  } catch (error) {
    if (error instanceof Problem) return problemOutcome(error);
    throw error;
  }
}

/**
 * The chain a request's `chainId` path parameter names, as the routes answer it: one this instance
 * serves and does not refuse (else the Problem they answer).
 */
export function rpcChainId(vars: Pick<RpcVars, "chains" | "alarms">, param: string): number {
  const params = new Params([["chainId", param]]);
  const chain = vars.chains.find((served) => served.id === params.chainId(vars.chains.map((ch) => ch.id)));
  return servedChainId(vars, chain?.v2 ? "v2" : "v1", params);
}

/** The reply to a body's text (undefined: none, for notifications only): its calls, one after another, each alone. */
export async function rpcReplyTo(vars: RpcVars, chainId: number, text: string) {
  const body = readRpcBody(text);
  const calls = "calls" in body ? body.calls : [];
  await vars.budget.spend(Math.max(1, calls.length), "one per call of the body");
  const answers = [];
  for (const call of calls) answers.push(answerOf(call, await outcomeOf(vars, chainId, call)));
  return rpcReply(body, answers);
}

/**
 * A reply's JSON text, or for one call whose result is held as bytes (a listing: api/rpc/plan.ts,
 * Encoded), its text in pieces around those bytes, written as they are: the same text either way.
 */
export function rpcReplyBody(reply: unknown): string | Uint8Array[] {
  const answer = reply as Partial<RpcAnswer> | undefined;
  if (answer && "result" in answer && answer.result instanceof Encoded && typeof answer.result.text !== "string") {
    const head = `{"jsonrpc":"2.0","id":${JSON.stringify(answer.id)},"result":"`;
    return [Buffer.from(head), answer.result.text, Buffer.from('"}')];
  }
  return JSON.stringify(reply);
}

/** The route's handler. */
const rpcAnswer = (): RouteHandler => async (c) => {
  const chainId = rpcChainId(c.var, c.req.param("chainId") ?? "");
  const reply = await rpcReplyTo(c.var, chainId, await bodyText(c.req.raw, c.var.budget.rows() !== undefined));
  return reply === undefined ? c.body(null, 204) : c.json(reply, 200);
};

/** What answers the JSON-RPC route (api/routes/table.ts). */
export const RPC_ANSWERS: Answers = { rpc: rpcAnswer };
