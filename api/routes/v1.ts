import type { Address } from "viem";
import {
  V1_CHECK_KINDS,
  type V1CheckKind,
  type V1CheckQuery,
  type V1Key,
  v1CheckKeys,
  v1KeyString,
  v1Vaults,
} from "../../core/v1";
import type { Params } from "../http/params";
import { V1_CHECK_PARAMETERS } from "../openapi/parameters";
import type { V1EventRow } from "../store/history-store";
import type { Told, V1Row } from "../store/store";
import { v1EventsJson, v1Record, v1VaultRecord } from "./records";
import { type CheckReads, type RegistrySpec, registryAnswers } from "./registry";
import type { Answers } from "./table";

/** `query` with what the check asks about but its parties, added in place as v2's `scoped`. */
function scoped<T extends { kind: V1CheckKind }>(
  query: T,
  params: Params,
): T & Omit<V1CheckQuery, "delegate" | "vault"> {
  const scope = query as T & Omit<V1CheckQuery, "delegate" | "vault">;
  if (query.kind !== "all") scope.contract = params.address("contract");
  if (query.kind === "token") scope.tokenId = params.tokenId();
  return scope;
}

function checkQuery(kind: V1CheckKind, params: Params): V1CheckQuery {
  // The parties first: their problems are reported before the scope's.
  const delegate = params.address("delegate");
  const vault = params.address("vault");
  return scoped({ kind, delegate, vault }, params);
}

/**
 * Reads v1 checks together: a check holds when any of its keys is in force. From a store that tells
 * which of the keys given are, or else with every key looked up once.
 */
function readChecks(queries: V1CheckQuery[]): CheckReads {
  const checks = queries.map(v1CheckKeys);
  // A loop, not checks.flat(): flat took 2.1-2.5 ms of 10,000 checks' keys, the loop 0.4 ms.
  const asked: V1Key[] = [];
  for (const check of checks) for (const key of check) asked.push(key);
  const keys = () => [...new Map(asked.map((k): [string, V1Key] => [v1KeyString(k), k])).values()];
  const byString = (inForce: V1Row[]) => {
    const found = new Set(inForce.map(v1KeyString));
    return checks.map((check) => check.some((k) => found.has(v1KeyString(k))));
  };
  /** Each check's answer from what the store found: a key in force holds it; else undefined if one is untold. */
  const byKey = ({ found, untold }: Told<V1Key, Set<V1Key>>) =>
    checks.map((check) => check.some((k) => found.has(k)) || (check.some((k) => untold.has(k)) ? undefined : false));
  return {
    head: async (store, chainId) => {
      if (store.v1Consulted !== undefined) {
        const view = await store.v1Consulted(chainId, asked);
        return view && { ...view, data: byKey(view.data!) };
      }
      const view = await store.v1InForce(chainId, keys());
      return view && { ...view, data: byString(view.data) };
    },
    heldAt: async (store, chainId, block) => {
      if (store.v1Consulted !== undefined) {
        const view = await store.v1Consulted(chainId, asked, block);
        const found = view?.data;
        return view && { ...view, data: found && byKey(found) };
      }
      const view = await store.v1InForceAt(chainId, keys(), block);
      return view && { ...view, data: view.data && byString(view.data) };
    },
    at: async (history, chainId, block) => byString(await history.v1InForce(chainId, keys(), block)),
  };
}

/** The v1 registry's routes' parts. */
export const V1_SPEC = {
  version: "v1",
  kinds: V1_CHECK_KINDS,
  checkParams: new Set(Object.values(V1_CHECK_PARAMETERS).flat()),
  checkQuery,
  readChecks,
  wallet: (store, ...args) => store.v1Wallet(...args),
  wallets: (store, ...args) => store.v1Wallets(...args),
  walletAt: (history, ...args) => history.v1Wallet(...args),
  pageJsonAt: async (store, ...args) => store.v1WalletPageJson?.(...args),
  walletsAt: (history, ...args) => history.v1Wallets(...args),
  inDirection: (row, wallet, direction) => (direction === "incoming" ? row.delegate : row.vault) === wallet,
  vaultQuery: (kind, params, wallet) => scoped({ kind, delegate: wallet }, params),
  vaults: v1Vaults,
  vaultAddress: (vault) => vault,
  vaultRecord: v1VaultRecord,
  contractAt: (history, ...args) => history.v1Contract(...args),
  events: (history, ...args) => history.v1Events(...args),
  record: v1Record,
  eventsJson: v1EventsJson,
} satisfies RegistrySpec<V1CheckKind, V1CheckQuery, Omit<V1CheckQuery, "vault">, V1Row, V1EventRow, Address>;

/** What answers the v1 registry's routes. */
export const V1_ANSWERS: Answers = registryAnswers(V1_SPEC);
