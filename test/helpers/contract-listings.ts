/**
 * Contract listings (docs/api.md, "Contract listings") by the registries' own views at a block:
 * the delegations in force scoped to a contract (v2: CONTRACT, ERC721, ERC20, ERC1155; v1: CONTRACT
 * and TOKEN), or only those of one token and the contract-wide ones (v2 CONTRACT, v1 CONTRACT),
 * in the documented order: v2 by where each delegation was first enabled, v1 by where the
 * delegation in force was created.
 *
 * v2: getDelegationsFromHashes of every delegation ever enabled, cross-checked against
 * getOutgoingDelegations of every wallet that ever delegated. v1: getContractLevelDelegations and
 * getTokenLevelDelegations of every vault that ever delegated.
 */
import type { Address, Hex } from "viem";
import type { Contract } from "../../devkit/rpc";
import { ethCalls } from "../../devkit/rpc";
import type { Key } from "../../devkit/v1/calls";
import type { ApiRecord } from "./compare-listings";
import { canonical } from "./json";
import { before, type Position } from "./position";
import { record as v1Record } from "./v1/listing";
import { expectedRecord as v2Record } from "./v2/listing";

/** A v2 delegation as the contract returns it. */
type V2Delegation = Parameters<typeof v2Record>[0];

/** What the views say: the delegations in force, each with where it is ordered, and what disagreed. */
export type InForce = { delegations: { record: ApiRecord; position: Position | undefined }[]; problems: string[] };

const lower = (a: string) => a.toLowerCase() as Address;

/**
 * Every v2 delegation enabled at `block`: `positions` names each ever enabled (by hash, where it was
 * first enabled), `froms` every wallet that ever delegated.
 */
export async function v2InForce(
  o: Contract,
  positions: ReadonlyMap<Hex, Position>,
  froms: readonly Address[],
  block: bigint,
): Promise<InForce> {
  const hashes = [...positions.keys()];
  const [byHash, ...outgoing] = (await ethCalls(o, [
    { functionName: "getDelegationsFromHashes", args: [hashes], block },
    ...froms.map((from) => ({ functionName: "getOutgoingDelegations", args: [from], block })),
  ])) as [V2Delegation[], ...V2Delegation[][]];
  // Each record with the hash the contract found it by.
  const delegations = byHash.flatMap((d, i) =>
    d.type_ === 0 ? [] : [{ record: { ...v2Record(d), hash: hashes[i]! }, position: positions.get(hashes[i]!) }],
  );
  const problems: string[] = [];
  const fromHashes = new Set(byHash.filter((d) => d.type_ !== 0).map((d) => canonical(v2Record(d))));
  const fromLists = new Set(outgoing.flat().map((d) => canonical(v2Record(d))));
  const differ = [...fromHashes]
    .filter((r) => !fromLists.has(r))
    .concat([...fromLists].filter((r) => !fromHashes.has(r)));
  if (differ.length)
    problems.push(
      `block ${block}: getDelegationsFromHashes and getOutgoingDelegations disagree on ${differ.length} delegations ` +
        `(the test's hashes, or wallets, are incomplete): ${differ.slice(0, 2).join(" ")}`,
    );
  return { delegations, problems };
}

/**
 * Every v1 CONTRACT and TOKEN delegation in force at `block`, by the views of each of `vaults`;
 * `position`: where the delegation in force for a key was created (the test's model at `block`).
 */
export async function v1InForce(
  o: Contract,
  vaults: readonly Address[],
  block: bigint,
  position: (key: Key) => Position | undefined,
): Promise<InForce> {
  const views = (await ethCalls(
    o,
    vaults.flatMap((vault) => [
      { functionName: "getContractLevelDelegations", args: [vault], block },
      { functionName: "getTokenLevelDelegations", args: [vault], block },
    ]),
  )) as { contract_: Address; delegate: Address; tokenId?: bigint }[][];
  const delegations = vaults.flatMap((vault, i) =>
    [...views[2 * i]!, ...views[2 * i + 1]!].map((d) => {
      const key: Key = {
        type: d.tokenId === undefined ? "CONTRACT" : "TOKEN",
        vault: lower(vault),
        delegate: lower(d.delegate),
        contract: lower(d.contract_),
        tokenId: d.tokenId ?? 0n,
      };
      return {
        record: v1Record(key.type, key.vault, key.delegate, key.contract, key.tokenId),
        position: position(key),
      };
    }),
  );
  return { delegations, problems: [] };
}

/**
 * The contract's listing, in order: `inForce`'s delegations scoped to `contract`, or with `tokenId`
 * that token's and the contract-wide ones. Records without a position are problems of the test.
 */
export function contractListing(
  inForce: InForce,
  contract: Address,
  tokenId: bigint | undefined,
): { records: ApiRecord[]; problems: string[] } {
  const scoped = inForce.delegations.filter(({ record: r }) => {
    if (r.contract === null || lower(String(r.contract)) !== lower(contract)) return false;
    // v1 records have no delegationType: their type is CONTRACT or TOKEN.
    const type = (r.delegationType ?? r.type) as string;
    if (type === "ALL") return false;
    if (tokenId === undefined) return true;
    return (
      type === "CONTRACT" || ((type === "ERC721" || type === "ERC1155" || type === "TOKEN") && r.tokenId === tokenId)
    );
  });
  const problems = scoped
    .filter((d) => d.position === undefined)
    .map((d) => `no position known for ${canonical(d.record)}`);
  const placed = scoped.filter((d) => d.position !== undefined) as { record: ApiRecord; position: Position }[];
  placed.sort((a, b) => (before(a.position, b.position) ? -1 : before(b.position, a.position) ? 1 : 0));
  return { records: placed.map((d) => d.record), problems };
}
