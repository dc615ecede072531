import {
  V1_CHECK_KINDS,
  type V1CheckKind,
  type V1CheckQuery,
  type V1Key,
  v1CheckKeys,
  v1KeyString,
} from "../../core/v1";
import type { Params } from "../http/params";
import { V1_CHECK_PARAMETERS } from "../openapi/parameters";
import type { V1EventRow } from "../store/history-store";
import type { V1Row } from "../store/store";
import { v1EventRecord, v1Record } from "./records";
import { type CheckReads, type RegistrySpec, registryRoutes } from "./registry";

function checkQuery(kind: V1CheckKind, params: Params): V1CheckQuery {
  const query: V1CheckQuery = { kind, delegate: params.address("delegate"), vault: params.address("vault") };
  if (kind !== "all") query.contract = params.address("contract");
  if (kind === "token") query.tokenId = params.tokenId();
  return query;
}

/**
 * Reads v1 checks together: every key they need is looked up once; a check holds when any of its
 * keys is in force.
 */
function readChecks(queries: V1CheckQuery[]): CheckReads {
  const checks = queries.map(v1CheckKeys);
  const keys = [...new Map(checks.flat().map((k): [string, V1Key] => [v1KeyString(k), k])).values()];
  const answers = (inForce: V1Row[]) => {
    const found = new Set(inForce.map(v1KeyString));
    return checks.map((check) => check.some((k) => found.has(v1KeyString(k))));
  };
  return {
    head: async (store, chainId) => {
      const view = await store.v1InForce(chainId, keys);
      return view && { ...view, data: answers(view.data) };
    },
    at: async (history, chainId, block) => answers(await history.v1InForce(chainId, keys, block)),
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
  walletAt: (history, ...args) => history.v1Wallet(...args),
  contractAt: (history, ...args) => history.v1Contract(...args),
  events: (history, ...args) => history.v1Events(...args),
  record: v1Record,
  eventRecord: v1EventRecord,
} satisfies RegistrySpec<V1CheckKind, V1CheckQuery, V1Row, V1EventRow>;

/** The v1 registry's routes. */
export const v1 = registryRoutes(V1_SPEC);
