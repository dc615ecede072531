/**
 * Who a hot wallet may act for (`GET /registry/v{1,2}/:wallet/vaults`, docs/api.md), the long
 * way: the contract's check of every candidate vault at the block, so that a vault missing from an
 * answer, or one too many, shows. A query is a GET check's URL (devkit/v{1,2}/checks.ts, with every
 * spelling of its parameters) without its parties: the hot wallet goes in the path.
 */
import { type Address, getAddress } from "viem";
import type { CheckKit } from "../../devkit/compare-checks";
import { type Rng, spellAddress } from "../../devkit/random";
import { type Contract, ethCalls } from "../../devkit/rpc";
import type { ApiRecord } from "./compare-listings";

/** What a version's vaults queries need: its checks, and a check's hot wallet and vault. */
export type VaultKit<Spec> = CheckKit<Spec> & {
  hot(spec: Spec): Address;
  /** The check of `spec` for another vault. */
  withVault(spec: Spec, vault: Address): Spec;
};

/** The names a check's parties go by: a vaults query names neither. */
const PARTIES = new Set(["to", "from", "delegate", "vault"]);

/**
 * The vaults path of a GET check's URL (`/registry/v2/check/erc721?…`) for its hot wallet
 * `hot`: `type` its kind, among its other parameters (spelled as they are) at a random place.
 */
export function vaultsPath(rng: Rng, checkUrl: string, hot: Address): string {
  const [path, query] = checkUrl.split("?") as [string, string];
  const [, , version, , kind] = path.split("/");
  const params = query.split("&").filter((p) => !PARTIES.has(p.slice(0, p.indexOf("="))));
  params.splice(rng.int(params.length + 1), 0, `type=${kind}`);
  return `/registry/${version}/${spellAddress(rng, hot)}/vaults?${params.join("&")}`;
}

/**
 * The vaults query's answer by the contract at `block`: every vault among `candidates` whose
 * check answers true or a non-zero amount, by address as a number, with the amount where the
 * check answers one.
 */
export async function contractVaults<Spec>(
  o: Contract,
  kit: VaultKit<Spec>,
  spec: Spec,
  candidates: readonly Address[],
  block: bigint,
): Promise<ApiRecord[]> {
  const vaults = [...new Set(candidates.map((c) => c.toLowerCase() as Address))];
  const answers = await ethCalls(
    o,
    vaults.map((vault) => ({ ...kit.call(kit.withVault(spec, vault)), block })),
  );
  return vaults
    .map((vault, i) => ({ vault, answer: answers[i] }))
    .filter(({ answer }) => answer === true || (typeof answer === "bigint" && answer > 0n))
    .sort((a, b) => (BigInt(a.vault) < BigInt(b.vault) ? -1 : 1))
    .map(({ vault, answer }) =>
      typeof answer === "bigint" ? { vault: getAddress(vault), amount: answer } : { vault: getAddress(vault) },
    );
}
