/**
 * An `eth_call` to a registry, answered from the state the REST routes answer from
 * (docs/architecture.md, "A drop-in for the node"): the calldata read as the contract reads it
 * (core/calldata.ts), the function's question asked of the registry's spec (api/routes/v2.ts,
 * api/routes/v1.ts) at the block, and its answer ABI-encoded as the contract returns it. A function
 * not served here is an error saying so, never a guess.
 */
import type { Context } from "hono";
import {
  type Abi,
  type AbiFunction,
  type Address,
  encodeFunctionResult,
  type Hex,
  toFunctionSelector,
  zeroAddress,
} from "viem";
import { registryV1Abi } from "../../core/abi/registryV1";
import { registryV2Abi } from "../../core/abi/registryV2";
import { type CallArg, type CallParam, decodeCalldata } from "../../core/calldata";
import type { Direction } from "../../core/parse";
import { V2_DELEGATION_TYPES } from "../../core/v2";
import { Params } from "../http/params";
import { readAt } from "../routes/answer";
import type { Env } from "../routes/env";
import { checksRead, listingRead } from "../routes/registry";
import { V1_SPEC } from "../routes/v1";
import { V2_SPEC } from "../routes/v2";
import type { V2Row } from "../store/store";

/** A call's answer: the ABI-encoded result, or that the contract reverts (no data). */
export type CallOutcome = { result: Hex } | { reverted: true } | { notServed: string };

type Version = "v1" | "v2";

/** What a function's arguments ask, answered at `block` (undefined: the newest indexed). */
type Served = {
  fn: AbiFunction;
  types: CallParam[];
  answer: (c: Context<Env>, chainId: number, block: bigint | undefined, args: CallArg[]) => Promise<unknown>;
};

/** Parameters of a check as its GET route names them, from the call's arguments. */
const paramsOf = (names: readonly string[], args: CallArg[]) =>
  new Params(names.map((name, i) => [name, String(args[i])] as const));

/** A check of `kind` whose arguments are the route's parameters `names`, in order. */
function check(version: Version, kind: string, names: readonly string[]): Served["answer"] {
  return async (c, chainId, block, args) => {
    const spec = version === "v2" ? V2_SPEC : V1_SPEC;
    const query = (spec.checkQuery as (kind: string, params: Params) => unknown)(kind, paramsOf(names, args));
    const read = checksRead(spec as Parameters<typeof checksRead>[0], c, chainId, [query], ([answer]) => answer);
    return (await readAt(c, chainId, block, read)).body;
  };
}

/** The contract's Delegation struct of a row. */
const delegationOf = (row: V2Row) => ({
  type_: V2_DELEGATION_TYPES.indexOf(row.delegationType),
  to: row.to,
  from: row.from,
  rights: row.rights,
  contract_: row.contract ?? zeroAddress,
  tokenId: row.tokenId ?? 0n,
  amount: row.amount ?? 0n,
});

/** A v2 listing of the wallet in `direction`: the delegations, or their hashes. */
function listing(direction: Direction, form: "delegations" | "hashes"): Served["answer"] {
  return async (c, chainId, block, [wallet]) => {
    const read = listingRead(V2_SPEC, c, chainId, wallet as Address, direction);
    const rows = (await readAt(c, chainId, block, read)).body as V2Row[];
    return form === "hashes" ? rows.map((row) => row.hash) : rows.map(delegationOf);
  };
}

const V2_PARTIES = ["to", "from"] as const;
const V1_PARTIES = ["delegate", "vault"] as const;

/** The functions served, by version and name. */
const SERVED: Record<Version, Record<string, Served["answer"]>> = {
  v2: {
    checkDelegateForAll: check("v2", "all", [...V2_PARTIES, "rights"]),
    checkDelegateForContract: check("v2", "contract", [...V2_PARTIES, "contract", "rights"]),
    checkDelegateForERC721: check("v2", "erc721", [...V2_PARTIES, "contract", "tokenId", "rights"]),
    checkDelegateForERC20: check("v2", "erc20", [...V2_PARTIES, "contract", "rights"]),
    checkDelegateForERC1155: check("v2", "erc1155", [...V2_PARTIES, "contract", "tokenId", "rights"]),
    getIncomingDelegations: listing("incoming", "delegations"),
    getOutgoingDelegations: listing("outgoing", "delegations"),
    getIncomingDelegationHashes: listing("incoming", "hashes"),
    getOutgoingDelegationHashes: listing("outgoing", "hashes"),
  },
  v1: {
    checkDelegateForAll: check("v1", "all", V1_PARTIES),
    checkDelegateForContract: check("v1", "contract", [...V1_PARTIES, "contract"]),
    checkDelegateForToken: check("v1", "token", [...V1_PARTIES, "contract", "tokenId"]),
  },
};

/** Each version's functions by selector, served or not. */
const BY_SELECTOR: Record<Version, Map<Hex, { fn: AbiFunction; answer?: Served["answer"] }>> = {
  v2: selectors(registryV2Abi as Abi, SERVED.v2),
  v1: selectors(registryV1Abi as Abi, SERVED.v1),
};

function selectors(abi: Abi, served: Record<string, Served["answer"]>) {
  const functions = abi.filter((item): item is AbiFunction => item.type === "function");
  return new Map(functions.map((fn) => [toFunctionSelector(fn), { fn, answer: served[fn.name] }]));
}

/** The outcome of calldata `data` sent to registry `version` on the chain, at `block`. */
export async function registryCall(
  c: Context<Env>,
  chainId: number,
  version: Version,
  data: Hex,
  block: bigint | undefined,
): Promise<CallOutcome> {
  const entry = BY_SELECTOR[version].get(data.slice(0, 10).toLowerCase() as Hex);
  // Neither registry has a fallback: calldata naming no function reverts.
  if (entry === undefined) return { reverted: true };
  if (entry.answer === undefined) return { notServed: `${version} ${entry.fn.name}` };
  const args = decodeCalldata(
    entry.fn.inputs.map((input) => input.type as CallParam),
    data,
  );
  if (args === undefined) return { reverted: true };
  const answer = await entry.answer(c, chainId, block, args);
  const value = typeof answer === "number" ? BigInt(answer) : answer;
  return { result: encodeFunctionResult({ abi: [entry.fn], functionName: entry.fn.name, result: value as never }) };
}
