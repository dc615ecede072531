/**
 * Calls to a registry (api/rpc/plan.ts): the calldata read as the contract reads it
 * (core/calldata.ts), each view's question asked of the registry's spec (api/routes/v2.ts,
 * api/routes/v1.ts), its answer ABI-encoded as the contract returns it.
 */
import {
  type Abi,
  type AbiFunction,
  type Address,
  encodeErrorResult,
  type Hex,
  toFunctionSelector,
  zeroAddress,
  zeroHash,
} from "viem";
import { registryV1Abi } from "../../core/abi/registryV1";
import { registryV2Abi } from "../../core/abi/registryV2";
import { bytesElement, type CallParam, type DynamicArray, decodeCalldata } from "../../core/calldata";
import type { Direction } from "../../core/parse";
import type { V1CheckQuery } from "../../core/v1";
import { V2_DELEGATION_TYPES, type V2CheckQuery } from "../../core/v2";
import type { BlockRead } from "../routes/answer";
import { type ListingForm, listingRead } from "../routes/registry";
import { V2_SPEC } from "../routes/v2";
import type { V2Row } from "../store/store";
import { encodeResult } from "./encode";
import {
  Encoded,
  hexOf,
  MAX_DEPTH,
  type Plan,
  type Planning,
  REVERTS,
  type RpcVars,
  type Served,
  TOO_DEEP,
  type Version,
} from "./plan";
import { V1_LISTINGS } from "./v1-listings";

/**
 * A check of `kind` whose arguments are the query's fields `names`, in order: the decoder has read
 * them as the contract does (lowercase addresses and bytes32, a bigint tokenId), the form the GET
 * routes parse their parameters into (api/routes/v2.ts, api/routes/v1.ts).
 */
const check =
  <Query extends { kind: string }>(version: Version) =>
  (kind: Query["kind"], names: readonly (keyof Query & string)[]): Served =>
  ({ reads }, args) => {
    const query: Record<string, unknown> = { kind };
    for (const [i, name] of names.entries()) query[name] = args[i];
    return reads.check(version, query);
  };
const v2Check = check<V2CheckQuery>("v2");
const v1Check = check<V1CheckQuery>("v1");

/** The contract's Delegation struct of a row; of none, the struct it returns for an unknown hash. */
const delegationOf = (row: V2Row | undefined) => ({
  type_: row === undefined ? 0 : V2_DELEGATION_TYPES.indexOf(row.delegationType),
  to: row?.to ?? zeroAddress,
  from: row?.from ?? zeroAddress,
  rights: row?.rights ?? zeroHash,
  contract_: row?.contract ?? zeroAddress,
  tokenId: row?.tokenId ?? 0n,
  amount: row?.amount ?? 0n,
});

const v2Function = (name: string) =>
  (registryV2Abi as Abi).find((item): item is AbiFunction => item.type === "function" && item.name === name)!;

/**
 * A v2 listing of the wallet in `direction` (view `name`): the delegations, or their hashes. At the
 * newest indexed block it is ABI-encoded once per revision of the wallet's rows and held, as the
 * route's JSON is (wholeListing); at a past block, read from the history.
 */
function listing(name: string, direction: Direction, form: "delegations" | "hashes"): Served {
  const fn = v2Function(name);
  const encoded = (rows: V2Row[]) =>
    encodeResult(
      fn,
      rows.map((row) => (form === "hashes" ? row.hash : delegationOf(row))),
    );
  const rendered: ListingForm<V2Row> = { name, render: (rows) => new Uint8Array(Buffer.from(encoded(rows), "latin1")) };
  return ({ vars, chainId, reads }, [wallet]) => {
    const rows = reads.read(listingRead(V2_SPEC, vars, chainId, wallet as Address, direction, rendered));
    return () => {
      const value = rows();
      return new Encoded(value instanceof Uint8Array ? value : encoded(value as V2Row[]));
    };
  };
}

/** The delegation enabled under `hash`, if any (as GET /registry/v2/delegation/:hash reads it). */
const delegationRead = (vars: Pick<RpcVars, "store">, chainId: number, hash: Hex): BlockRead => ({
  head: async () => {
    const view = await vars.store.v2Delegation(chainId, hash);
    return view && { ...view, body: view.data };
  },
  at: (history, block) => history.v2Delegation(chainId, hash, block),
});

const fromHashes: Served = ({ vars, chainId, reads }, [hashes]) => {
  const rows = (hashes as Hex[]).map((hash) => reads.read(delegationRead(vars, chainId, hash)));
  return () => rows.map((row) => delegationOf(row() as V2Row | undefined));
};

const MULTICALL_FAILED = encodeErrorResult({ abi: registryV2Abi as Abi, errorName: "MulticallFailed" });

/**
 * v2's `multicall`: each element delegate-called in turn (value kept); the first that reverts
 * reverts the whole with MulticallFailed, an element the code cannot read reverts it with nothing.
 */
const multicall: Served = (planning, [array], depth) => {
  const calls = array as DynamicArray;
  const plans: Plan[] = [];
  for (let i = 0n; i < calls.length; i++) {
    const data = bytesElement(calls, i);
    if (data === undefined) return REVERTS;
    const plan = depth >= MAX_DEPTH ? TOO_DEEP : registryPlan(planning, "v2", data, 0n, depth + 1);
    if ("notServed" in plan) return plan;
    if ("reverted" in plan) return { reverted: MULTICALL_FAILED };
    plans.push(plan);
  }
  return () => plans.map((plan) => ("result" in plan ? hexOf(plan.result()) : "0x"));
};

/** Interface ids each registry says it supports: ERC-165's, and its interface's (all its functions but some). */
const ERC165_ID = "0x01ffc9a7";
const interfaceId = (abi: Abi, notInInterface: string[]) =>
  `0x${abi
    .filter((item): item is AbiFunction => item.type === "function" && !notInInterface.includes(item.name))
    .reduce((id, fn) => id ^ BigInt(toFunctionSelector(fn)), 0n)
    .toString(16)
    .padStart(8, "0")}`;
const SUPPORTED: Record<Version, Set<string>> = {
  v2: new Set([ERC165_ID, interfaceId(registryV2Abi as Abi, ["supportsInterface", "sweep"])]),
  v1: new Set([ERC165_ID, interfaceId(registryV1Abi as Abi, ["supportsInterface"])]),
};
const supportsInterface =
  (version: Version): Served =>
  (_, [id]) =>
  () =>
    SUPPORTED[version].has(id as string);

const V2_PARTIES = ["to", "from"] as const;
const V1_PARTIES = ["delegate", "vault"] as const;

/** The functions served, by version and name. */
const SERVED: Record<Version, Record<string, Served>> = {
  v2: {
    checkDelegateForAll: v2Check("all", [...V2_PARTIES, "rights"]),
    checkDelegateForContract: v2Check("contract", [...V2_PARTIES, "contract", "rights"]),
    checkDelegateForERC721: v2Check("erc721", [...V2_PARTIES, "contract", "tokenId", "rights"]),
    checkDelegateForERC20: v2Check("erc20", [...V2_PARTIES, "contract", "rights"]),
    checkDelegateForERC1155: v2Check("erc1155", [...V2_PARTIES, "contract", "tokenId", "rights"]),
    getIncomingDelegations: listing("getIncomingDelegations", "incoming", "delegations"),
    getOutgoingDelegations: listing("getOutgoingDelegations", "outgoing", "delegations"),
    getIncomingDelegationHashes: listing("getIncomingDelegationHashes", "incoming", "hashes"),
    getOutgoingDelegationHashes: listing("getOutgoingDelegationHashes", "outgoing", "hashes"),
    getDelegationsFromHashes: fromHashes,
    multicall,
    supportsInterface: supportsInterface("v2"),
  },
  v1: {
    checkDelegateForAll: v1Check("all", V1_PARTIES),
    checkDelegateForContract: v1Check("contract", [...V1_PARTIES, "contract"]),
    checkDelegateForToken: v1Check("token", [...V1_PARTIES, "contract", "tokenId"]),
    ...V1_LISTINGS,
    supportsInterface: supportsInterface("v1"),
  },
};

type Entry = { fn: AbiFunction; types: CallParam[]; served?: Served };

/** Each version's functions by selector, served or not. */
const BY_SELECTOR: Record<Version, Map<Hex, Entry>> = {
  v2: selectors(registryV2Abi as Abi, SERVED.v2),
  v1: selectors(registryV1Abi as Abi, SERVED.v1),
};

function selectors(abi: Abi, served: Record<string, Served>) {
  const functions = abi.filter((item): item is AbiFunction => item.type === "function");
  const paramOf = (type: string) => (type === "bytes[]" ? "dynamic[]" : type) as CallParam;
  return new Map(
    functions.map((fn) => [
      toFunctionSelector(fn),
      { fn, types: fn.inputs.map((input) => paramOf(input.type)), served: served[fn.name] },
    ]),
  );
}

/** What calldata `data` sent with `value` to registry `version` does. */
export function registryPlan(planning: Planning, version: Version, data: Hex, value: bigint, depth = 0): Plan {
  const entry = BY_SELECTOR[version].get(data.slice(0, 10).toLowerCase() as Hex);
  // Neither registry has a fallback: calldata naming no function reverts; so does value sent to a
  // view. Value sent to what takes it depends on the sender's balance, which this does not know.
  if (entry === undefined) return REVERTS;
  if (value !== 0n) return entry.fn.stateMutability === "payable" ? { notServed: "a call with value" } : REVERTS;
  if (entry.served === undefined) return { notServed: `${version} ${entry.fn.name}` };
  const args = decodeCalldata(entry.types, data);
  if (args === undefined) return REVERTS;
  const answer = entry.served(planning, args, depth);
  if (typeof answer !== "function") return answer;
  const { fn } = entry;
  return {
    result: () => {
      const value = answer();
      if (value instanceof Encoded) return value;
      const result = typeof value === "number" ? BigInt(value) : value;
      return encodeResult(fn, result);
    },
  };
}
