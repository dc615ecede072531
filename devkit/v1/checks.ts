/** Seeded random v1 checks, their URLs (every accepted spelling) and the contract's view for each. */
import type { Address } from "viem";
import type { CheckKit } from "../compare-checks";
import { type Rng, spellAddress } from "../random";
import type { ViewCall } from "../rpc";
import { type Key, keyOf, type V1Type } from "./calls";
import type { Delegation, Pools } from "./generate";

export type CheckKind = "all" | "contract" | "token";
export type CheckSpec = { kind: CheckKind; delegate: Address; vault: Address; contract: Address; tokenId: bigint };

/**
 * About two thirds drawn from a delegation: some write named it, or (a share of those, when the
 * model's delegations in force are given) it is in force now, so true answers stay common however
 * much the stream revoked. Perturbed now and then; the rest from the pools.
 */
export function randomCheck(
  rng: Rng,
  pools: Pools,
  delegations: readonly Delegation[],
  inForce: readonly Key[] = [],
): CheckSpec {
  const vaults = [...pools.eoas, ...pools.wallets];
  if (delegations.length > 0 && rng.chance(0.68)) {
    const d = inForce.length > 0 && rng.chance(0.4) ? rng.pick(inForce) : namedKey(rng.pick(delegations));
    const fitting: Record<V1Type, readonly CheckKind[]> = {
      ALL: ["all", "contract", "token"],
      CONTRACT: ["contract", "token"],
      TOKEN: ["token"],
    };
    const spec: CheckSpec = {
      kind: rng.chance(0.9) ? rng.pick(fitting[d.type]) : rng.pick(["all", "contract", "token"] as const),
      delegate: d.delegate,
      vault: d.vault,
      contract: d.type === "ALL" ? rng.pick(pools.contracts) : d.contract,
      tokenId: d.type === "TOKEN" ? d.tokenId : rng.weighted(pools.tokenIds),
    };
    if (rng.chance(0.08)) spec.tokenId = rng.weighted(pools.tokenIds);
    if (rng.chance(0.08)) spec.contract = rng.pick(pools.contracts);
    if (rng.chance(0.04)) [spec.delegate, spec.vault] = [spec.vault, spec.delegate];
    if (rng.chance(0.04)) spec.delegate = rng.pick(pools.delegates);
    return spec;
  }
  return {
    kind: rng.pick(["all", "contract", "token"] as const),
    delegate: rng.pick(pools.delegates),
    vault: rng.chance(0.9) ? rng.pick(vaults) : rng.pick(pools.delegates),
    contract: rng.pick(pools.contracts),
    tokenId: rng.weighted(pools.tokenIds),
  };
}

const namedKey = (d: Delegation): Key => keyOf(d.vault, d);

/** The check's URL: parameters in random order, each address and the tokenId spelled at random. */
export function checkUrl(rng: Rng, chainId: number, spec: CheckSpec): string {
  const params: [string, string][] = [
    ["chainId", String(chainId)],
    ["delegate", spellAddress(rng, spec.delegate)],
    ["vault", spellAddress(rng, spec.vault)],
  ];
  if (spec.kind !== "all") params.push(["contract", spellAddress(rng, spec.contract)]);
  if (spec.kind === "token")
    params.push(["tokenId", rng.chance(0.6) ? spec.tokenId.toString() : `0x${spec.tokenId.toString(16)}`]);
  if (rng.chance(0.03)) params.push(["utm_source", "v1-differential"]);
  rng.shuffle(params);
  return `/registry/v1/check/${spec.kind}?${params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&")}`;
}

/** The registry view that answers the check. */
export function checkCall(spec: CheckSpec): ViewCall {
  switch (spec.kind) {
    case "all":
      return { functionName: "checkDelegateForAll", args: [spec.delegate, spec.vault] };
    case "contract":
      return { functionName: "checkDelegateForContract", args: [spec.delegate, spec.vault, spec.contract] };
    case "token":
      return { functionName: "checkDelegateForToken", args: [spec.delegate, spec.vault, spec.contract, spec.tokenId] };
  }
}

/** v1 checks, for compareChecks. */
export const v1Checks: CheckKit<CheckSpec> = {
  call: checkCall,
  describe: (s) =>
    `v1 check/${s.kind} (delegate ${s.delegate}, vault ${s.vault}` +
    `${s.kind !== "all" ? `, contract ${s.contract}` : ""}${s.kind === "token" ? `, tokenId ${s.tokenId}` : ""})`,
};
