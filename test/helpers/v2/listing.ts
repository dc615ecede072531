/**
 * The v2 listing of a wallet by the contract's own views: getOutgoingDelegations and
 * getIncomingDelegations (or one of them, for a listing by direction), as API records
 * (docs/api.md, "Outputs"), each list in the contract's order, each record's `hash` the contract's hash
 * at its place in getOutgoingDelegationHashes / getIncomingDelegationHashes; and the whole listing
 * in the order each delegation was first enabled on chain.
 *
 * Nothing here uses the service's code to decide what is right, except `v2DelegationHash`, whose
 * results are themselves checked against the contract's hash lists.
 */
import { type Address, getAddress, type Hex } from "viem";
import type { Direction } from "../../../core/parse";
import { type V2DelegationType, v2DelegationHash } from "../../../core/v2";
import { ethCalls } from "../../../devkit/rpc";
import type { ApiRecord, ListingKit } from "../compare-listings";
import { canonical } from "../json";
import type { Position } from "../position";

export type ContractDelegation = {
  type_: number;
  to: Address;
  from: Address;
  rights: Hex;
  contract_: Address;
  tokenId: bigint;
  amount: bigint;
};

const DELEGATION_TYPES = ["NONE", "ALL", "CONTRACT", "ERC721", "ERC20", "ERC1155"] as const;
const RECORD_TYPE: Record<string, string> = {
  ALL: "ALL",
  CONTRACT: "CONTRACT",
  ERC721: "TOKEN",
  ERC20: "CONTRACT",
  ERC1155: "TOKEN",
};

/** The API record (docs/api.md, "Outputs") of one delegation as the contract returns it. */
export function expectedRecord(d: ContractDelegation): ApiRecord {
  const delegationType = DELEGATION_TYPES[d.type_] ?? `unknown ${d.type_}`;
  const token = delegationType === "ERC721" || delegationType === "ERC1155";
  return {
    type: RECORD_TYPE[delegationType],
    delegationType,
    from: getAddress(d.from),
    to: getAddress(d.to),
    contract: delegationType === "ALL" ? null : getAddress(d.contract_),
    tokenId: token ? d.tokenId : null,
    rights: d.rights.toLowerCase(),
    amount: delegationType === "ERC20" || delegationType === "ERC1155" ? d.amount : null,
  };
}

/** The contract's hash of an API record (its fields name the delegation). */
function recordHash(r: ApiRecord): Hex | undefined {
  try {
    return v2DelegationHash({
      type: r.delegationType as V2DelegationType,
      from: String(r.from).toLowerCase() as Address,
      to: String(r.to).toLowerCase() as Address,
      rights: String(r.rights).toLowerCase() as Hex,
      contract: r.contract === null ? undefined : (String(r.contract).toLowerCase() as Address),
      tokenId: typeof r.tokenId === "bigint" ? r.tokenId : undefined,
    });
  } catch {
    return undefined;
  }
}

/** A record as compared: only rights' case is free ("bytes32 hex"); every other field must be exact. */
export const normalize = (r: ApiRecord): ApiRecord => ({
  ...r,
  rights: typeof r.rights === "string" ? r.rights.toLowerCase() : r.rights,
});

/** The two sides of a v2 listing: the contract's view of each, and the field naming the wallet. */
const SIDES = [
  { direction: "outgoing", party: "from", view: "getOutgoingDelegations", hashes: "getOutgoingDelegationHashes" },
  { direction: "incoming", party: "to", view: "getIncomingDelegations", hashes: "getIncomingDelegationHashes" },
] as const;

/**
 * v2 listings, for compareListings; `positions`: where each delegation (by hash) was first enabled;
 * `direction`: the listing asked (none: the whole listing, without the parameter).
 */
export function v2Listings(positions: Map<Hex, Position>, direction?: Direction): ListingKit {
  const sides = SIDES.filter((s) => direction === undefined || direction === "both" || s.direction === direction);
  return {
    version: "v2",
    direction,
    parties: sides.map((s) => s.party),
    normalize,
    expected: async (o, wallet, block, bad) => {
      const views = (await ethCalls(
        o,
        sides.flatMap((s) => [
          { functionName: s.view, args: [wallet], block },
          { functionName: s.hashes, args: [wallet], block },
        ]),
      )) as (ContractDelegation[] | Hex[])[];
      // Each record with its hash: the contract lists both in the same order.
      const listed = sides.map((s, k) => {
        const delegations = views[2 * k] as ContractDelegation[];
        const hashes = views[2 * k + 1] as Hex[];
        if (hashes.length !== delegations.length)
          bad(`${s.direction} oracle hash list length`, String(delegations.length), String(hashes.length));
        return { ...s, hashes, records: delegations.map((d, i) => ({ ...expectedRecord(d), hash: hashes[i] })) };
      });
      return {
        records: listed.flatMap((s) => s.records),
        check(list) {
          for (const { direction: name, party, records, hashes } of listed) {
            // Each side in the contract's own order.
            const apiSide = list.filter((r) => String(r[party]).toLowerCase() === wallet);
            const gotList = apiSide.map((r) => canonical(normalize(r)));
            const wantList = records.map((r) => canonical(r));
            if (gotList.join("\n") !== wantList.join("\n")) {
              const k = gotList.findIndex((g, i) => g !== wantList[i]);
              const at = k === -1 ? Math.min(gotList.length, wantList.length) : k;
              bad(
                `${name} records (${wantList.length} expected, ${gotList.length} got; first difference at #${at})`,
                wantList[at] ?? "(end of list)",
                gotList[at] ?? "(end of list)",
              );
            }
            // The hash the test computes from a record's fields (it orders the records) is the contract's.
            apiSide.forEach((r, i) => {
              const hash = recordHash(r);
              if (hashes[i] !== undefined && hash !== hashes[i])
                bad(`${name} hash of record #${i}`, hashes[i]!, `${hash} for ${canonical(r)}`);
            });
          }
          for (const r of list) {
            if (!/^0x[0-9a-fA-F]{64}$/.test(String(r.rights)))
              bad("rights format", "0x + 64 hex digits", String(r.rights));
          }
        },
      };
    },
    order: {
      position: (r) => {
        const hash = recordHash(r);
        return hash && positions.get(hash);
      },
      unplaced: { what: "was never enabled on chain", expected: "a delegation enabled by some write" },
    },
  };
}
