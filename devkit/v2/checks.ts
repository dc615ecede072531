/** Seeded random v2 checks, their URLs (every accepted spelling) and the contract's view for each. */
import { type Address, type Hex, hexToBytes, zeroAddress, zeroHash } from "viem";
import type { CheckKit } from "../compare-checks";
import { type Rng, spellAddress } from "../random";
import type { ViewCall } from "../rpc";
import {
  ADDRESS_1,
  CONTRACTS,
  type Pools,
  QUERY_ONLY_RIGHTS,
  type SentWrite,
  TOKEN_IDS,
  WRITE_RIGHTS,
  type Write,
} from "./generate";

const CHECK_KINDS = ["all", "contract", "erc721", "erc1155", "erc20"] as const;
export type CheckKind = (typeof CHECK_KINDS)[number];
export type CheckSpec = {
  kind: CheckKind;
  to: Address;
  from: Address;
  contract: Address;
  tokenId: bigint;
  rights: Hex;
};

/**
 * A random check: about half built from a delegation some write touched (so many answers are
 * true or non-zero), perturbed now and then; the rest drawn from the pools.
 */
export function randomCheck(rng: Rng, pools: Pools, history: readonly SentWrite[]): CheckSpec {
  const anyRights = () =>
    rng.weighted<Hex>([
      [4, zeroHash],
      [5, rng.pick(WRITE_RIGHTS)],
      [2, rng.pick(QUERY_ONLY_RIGHTS)],
    ]);
  let spec: CheckSpec;
  if (history.length > 0 && rng.chance(0.6)) {
    const w = rng.pick(history);
    const fitting: Record<Write["fn"], readonly CheckKind[]> = {
      delegateAll: CHECK_KINDS,
      delegateContract: ["contract", "erc721", "erc1155", "erc20"],
      delegateERC721: ["erc721"],
      delegateERC20: ["erc20"],
      delegateERC1155: ["erc1155"],
    };
    spec = {
      kind: rng.chance(0.85) ? rng.pick(fitting[w.fn]) : rng.pick(CHECK_KINDS),
      to: w.to,
      from: w.from,
      contract: "contract" in w ? w.contract : rng.pick(CONTRACTS),
      tokenId: "tokenId" in w ? w.tokenId : rng.weighted(TOKEN_IDS),
      // Matching rights, or a check with rights that also sees the empty-rights delegation.
      rights: rng.chance(0.75) ? w.rights : anyRights(),
    };
    if (rng.chance(0.1)) spec.tokenId = rng.weighted(TOKEN_IDS);
    if (rng.chance(0.1)) spec.contract = rng.pick(CONTRACTS);
    if (rng.chance(0.05)) [spec.to, spec.from] = [spec.from, spec.to];
    if (rng.chance(0.05)) spec.to = rng.pick(pools.delegates);
  } else {
    spec = {
      kind: rng.pick(CHECK_KINDS),
      to: rng.pick([...pools.delegates, ...pools.senders]),
      from: rng.pick(pools.senders),
      contract: rng.pick(CONTRACTS),
      tokenId: rng.weighted(TOKEN_IDS),
      rights: anyRights(),
    };
  }
  // The contract's empty and revoked markers never delegate, even to themselves.
  const odd = rng.next();
  if (odd < 0.03) spec.from = zeroAddress;
  else if (odd < 0.06) spec.from = ADDRESS_1;
  return spec;
}

/** The string spelling of a rights value, when it has one (bytes32("...") of printable ASCII). */
function rightsString(rights: Hex): string | undefined {
  const bytes = hexToBytes(rights);
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end--;
  let s = "";
  for (let i = 0; i < end; i++) {
    const b = bytes[i]!;
    if (b < 0x20 || b > 0x7e) return undefined;
    s += String.fromCharCode(b);
  }
  return s.startsWith("0x") ? undefined : s;
}

/** The query string of a check, with every accepted spelling of each parameter used at random. */
export function checkUrl(rng: Rng, chainId: number, spec: CheckSpec): string {
  const params: [string, string][] = [["chainId", String(chainId)]];
  const twoNames = spec.kind !== "all" && spec.kind !== "contract";
  for (const [party, names] of [
    [spec.to, ["to", "delegate"]],
    [spec.from, ["from", "vault"]],
  ] as const) {
    if (!twoNames) params.push([names[0], spellAddress(rng, party)]);
    else if (rng.chance(0.06)) params.push([names[0], spellAddress(rng, party)], [names[1], spellAddress(rng, party)]);
    else params.push([rng.pick(names), spellAddress(rng, party)]);
  }
  if (spec.kind !== "all") params.push(["contract", spellAddress(rng, spec.contract)]);
  if (spec.kind === "erc721" || spec.kind === "erc1155") {
    params.push(["tokenId", rng.chance(0.5) ? spec.tokenId.toString() : `0x${spec.tokenId.toString(16)}`]);
  }
  if (spec.rights === zeroHash) {
    const how = rng.int(3);
    if (how === 1) params.push(["rights", ""]);
    if (how === 2) params.push(["rights", zeroHash]);
  } else {
    const text = rightsString(spec.rights);
    if (text !== undefined && rng.chance(0.5)) params.push(["rights", text]);
    else params.push(["rights", rng.chance(0.7) ? spec.rights : `0x${spec.rights.slice(2).toUpperCase()}`]);
  }
  if (rng.chance(0.03)) params.push(["utm_source", "differential"]);
  rng.shuffle(params);
  const query = params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&");
  return `/registry/v2/check/${spec.kind}?${query}`;
}

const CHECK_FUNCTION: Record<CheckKind, string> = {
  all: "checkDelegateForAll",
  contract: "checkDelegateForContract",
  erc721: "checkDelegateForERC721",
  erc1155: "checkDelegateForERC1155",
  erc20: "checkDelegateForERC20",
};

/** The registry view that answers the check. */
export function checkCall(spec: CheckSpec): ViewCall {
  const { to, from, contract, tokenId, rights } = spec;
  switch (spec.kind) {
    case "all":
      return { functionName: CHECK_FUNCTION.all, args: [to, from, rights] };
    case "contract":
    case "erc20":
      return { functionName: CHECK_FUNCTION[spec.kind], args: [to, from, contract, rights] };
    case "erc721":
    case "erc1155":
      return { functionName: CHECK_FUNCTION[spec.kind], args: [to, from, contract, tokenId, rights] };
  }
}

/** v2 checks, for compareChecks. */
export const v2Checks: CheckKit<CheckSpec> = {
  call: checkCall,
  describe: (s) =>
    `v2 check/${s.kind} (to ${s.to}, from ${s.from}${s.kind !== "all" ? `, contract ${s.contract}` : ""}` +
    `${s.kind === "erc721" || s.kind === "erc1155" ? `, tokenId ${s.tokenId}` : ""}, rights ${s.rights})`,
};
