/**
 * The v1 listing of a wallet by the contract's own views: the union of getDelegationsByDelegate
 * (the wallet as delegate) and getDelegatesForAll / getContractLevelDelegations /
 * getTokenLevelDelegations (the wallet as vault), as API records (docs/api.md, "Outputs"); for a listing
 * by direction, one side. The contract's sets keep no order: the order is checked against the
 * test's model, when there is one.
 */
import { type Address, getAddress, zeroAddress } from "viem";
import type { Direction } from "../../../core/parse";
import type { Mismatch } from "../../../devkit/compare";
import { type Contract, ethCalls } from "../../../devkit/rpc";
import type { Key, V1Type } from "../../../devkit/v1/calls";
import type { ApiRecord, Bad, ListingKit } from "../compare-listings";
import { canonical } from "../json";
import type { Model } from "./model";

const lower = (a: string) => a.toLowerCase() as Address;

type DelegationInfo = { type_: number; vault: Address; delegate: Address; contract_: Address; tokenId: bigint };

const TYPE_OF: Record<number, V1Type> = { 1: "ALL", 2: "CONTRACT", 3: "TOKEN" };

/** The API record (docs/api.md, "Outputs") of one delegation. */
export function record(
  type: V1Type,
  vault: Address,
  delegate: Address,
  contract: Address | null,
  tokenId: bigint | null,
): ApiRecord {
  return {
    type,
    vault: getAddress(vault),
    delegate: getAddress(delegate),
    contract: type === "ALL" ? null : getAddress(contract!),
    tokenId: type === "TOKEN" ? tokenId : null,
  };
}

/** The key an API record names, if it is well formed. */
function recordKey(r: ApiRecord): Key | undefined {
  try {
    const type = r.type as V1Type;
    if (!["ALL", "CONTRACT", "TOKEN"].includes(type)) return undefined;
    return {
      type,
      vault: lower(String(r.vault)),
      delegate: lower(String(r.delegate)),
      contract: type === "ALL" ? zeroAddress : lower(String(r.contract)),
      tokenId: type === "TOKEN" ? (r.tokenId as bigint) : 0n,
    };
  } catch {
    return undefined;
  }
}

/** The views that list a wallet's v1 delegations, by the side it takes in them. */
const VIEWS = {
  incoming: ["getDelegationsByDelegate"],
  outgoing: ["getDelegatesForAll", "getContractLevelDelegations", "getTokenLevelDelegations"],
} as const;

type VaultSide = [
  Address[],
  { contract_: Address; delegate: Address }[],
  { contract_: Address; tokenId: bigint; delegate: Address }[],
];

/**
 * The wallet's records by the contract's views at `block` (`paused`: mining is paused, see
 * ethCalls), in `direction` (by default both: the wallet as delegate and as vault); undefined,
 * with the problem reported, when a view answers what the contract cannot.
 */
export async function contractRecords(
  o: Contract,
  wallet: Address,
  block: bigint,
  bad: Bad,
  paused = false,
  direction: Direction = "both",
): Promise<ApiRecord[] | undefined> {
  const w = lower(wallet);
  const incoming = direction !== "outgoing";
  const outgoing = direction !== "incoming";
  const views = [...(incoming ? VIEWS.incoming : []), ...(outgoing ? VIEWS.outgoing : [])];
  const answers = await ethCalls(
    o,
    views.map((functionName) => ({ functionName, args: [w], block })),
    paused,
  );
  const byDelegate = (incoming ? answers[0] : []) as DelegationInfo[];
  const [forAll, contractLevel, tokenLevel] = (outgoing ? answers.slice(incoming ? 1 : 0) : [[], [], []]) as VaultSide;
  const records: ApiRecord[] = [];
  for (const d of byDelegate) {
    const type = TYPE_OF[d.type_];
    if (!type) return void bad("oracle", "type_ 1, 2 or 3", String(d.type_));
    if (lower(d.delegate) !== w) bad("oracle getDelegationsByDelegate", `delegate ${w}`, lower(d.delegate));
    records.push(record(type, d.vault, d.delegate, d.contract_, d.tokenId));
  }
  for (const d of forAll) records.push(record("ALL", w, d, null, null));
  for (const d of contractLevel) records.push(record("CONTRACT", w, d.delegate, d.contract_, null));
  for (const d of tokenLevel) records.push(record("TOKEN", w, d.delegate, d.contract_, d.tokenId));
  return records;
}

/**
 * v1 listings, for compareListings (`direction`: the listing asked; none: the whole listing,
 * without the parameter); with the test's model (only when no write is in flight), their order
 * too: by the position at which each delegation now in force was created.
 */
export function v1Listings(model?: Model, direction?: Direction): ListingKit {
  return {
    version: "v1",
    direction,
    parties: { incoming: ["delegate"], outgoing: ["vault"], both: ["vault", "delegate"] }[direction ?? "both"],
    expected: async (o, wallet, block, bad) => {
      const records = await contractRecords(o, wallet, block, bad, false, direction);
      return records && { records };
    },
    order: model && {
      position: (r) => {
        const key = recordKey(r);
        return key && model.position(key);
      },
      unplaced: { what: "is not in force by the model", expected: "a delegation in force" },
    },
  };
}

/** The test's model against the contract's records of each wallet compared: a check of the harness itself. */
export function modelMismatches(model: Model, expected: Map<string, Set<string>>): Mismatch[] {
  const inForce = model.inForce();
  const mismatches: Mismatch[] = [];
  for (const [w, want] of expected) {
    const modelled = new Set(
      inForce
        .filter(({ key }) => key.vault === w || key.delegate === w)
        .map(({ key }) => canonical(record(key.type, key.vault, key.delegate, key.contract, key.tokenId))),
    );
    const missing = [...want].filter((k) => !modelled.has(k));
    const extra = [...modelled].filter((k) => !want.has(k));
    if (missing.length || extra.length) {
      mismatches.push({
        what: `model of ${w}`,
        query: `/registry/v1/${w}`,
        expected: missing.slice(0, 3).join(" "),
        got: extra.slice(0, 3).join(" "),
      });
    }
  }
  return mismatches;
}
