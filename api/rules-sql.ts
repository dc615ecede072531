/**
 * The registries' rules that SQL must apply itself (to filter inside an index scan that stops at a
 * page's limit), written once here beside their JavaScript originals in `core/`. The differential
 * tests hold both to the contracts.
 */
import { type SQL, sql } from "drizzle-orm";

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
