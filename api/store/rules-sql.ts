/**
 * The registries' rules that SQL must apply itself (to filter inside an index scan that stops at a
 * page's limit), written once here beside their JavaScript originals in `core/`. The differential
 * tests hold both to the contracts.
 */
import { type SQL, sql } from "drizzle-orm";
import type { V1Key } from "../../core/v1";

/**
 * Whether v2 event row `e` leaves its delegation enabled: `enable`, or for ERC20/ERC1155 (whose
 * events carry an amount instead) a non-zero amount — `core/v2.ts`, `v2NextState`.
 */
export const v2EnablesSql = (e: SQL) => sql`coalesce(${e}.enable, ${e}.amount > 0)`;

/**
 * Whether v1 state row `d` is in force given the vault's and the pair's current versions: enabled,
 * and set at exactly those versions — `core/v1.ts`, `v1InForce`.
 */
export const v1InForceSql = (d: SQL, vaultVersion: SQL, pairVersion: SQL) =>
  sql`(${d}.enabled AND ${d}.vault_version = ${vaultVersion} AND ${d}.pair_version = ${pairVersion})`;

/**
 * v1 keys as a relation `k(type, vault, delegate, contract, "tokenId")`, in one parameter however
 * many (a batch asks up to 30,000).
 */
export const v1KeysSql = (keys: readonly V1Key[]) =>
  sql`jsonb_to_recordset(${JSON.stringify(keys.map((k) => ({ ...k, tokenId: k.tokenId.toString() })))}::jsonb)
    AS k(type text, vault text, delegate text, contract text, "tokenId" numeric)`;
