import type { Hex } from "viem";
import { V2_CHECK_KINDS, type V2CheckKind, type V2CheckQuery, type V2State, v2Check } from "../../core/v2";
import type { Params } from "../http/params";
import { V2_CHECK_PARAMETERS } from "../openapi/parameters";
import type { V2EventRow } from "../store/history-store";
import type { V2Row } from "../store/store";
import { v2EventRecord, v2Record } from "./records";
import { type CheckReads, type RegistrySpec, registryRoutes } from "./registry";

/** Hot wallet and cold wallet: erc* checks take either name for each party (api-contract.md). */
const PARTIES: Record<V2CheckKind, { to: string[]; from: string[] }> = {
  all: { to: ["to"], from: ["from"] },
  contract: { to: ["to"], from: ["from"] },
  erc721: { to: ["to", "delegate"], from: ["from", "vault"] },
  erc1155: { to: ["to", "delegate"], from: ["from", "vault"] },
  erc20: { to: ["to", "delegate"], from: ["from", "vault"] },
};

function checkQuery(kind: V2CheckKind, params: Params): V2CheckQuery {
  const query: V2CheckQuery = {
    kind,
    to: params.address(...PARTIES[kind].to),
    from: params.address(...PARTIES[kind].from),
    rights: params.rights(),
  };
  if (kind !== "all") query.contract = params.address("contract");
  if (kind === "erc721" || kind === "erc1155") query.tokenId = params.tokenId();
  return query;
}

/** Reads v2 checks together: every delegation hash they need is looked up once. */
function readChecks(queries: V2CheckQuery[]): CheckReads {
  const checks = queries.map(v2Check);
  const hashes = [...new Set(checks.flatMap((check) => check.hashes))];
  const answers = (enabled: (hash: Hex) => V2State | undefined) => checks.map((check) => check.answer(enabled));
  return {
    head: async (store, chainId) => {
      const view = await store.v2Enabled(chainId, hashes);
      return view && { ...view, data: answers((hash) => view.data.get(hash)) };
    },
    at: async (history, chainId, block) => {
      const enabled = await history.v2Enabled(chainId, hashes, block);
      return answers((hash) => enabled.get(hash));
    },
  };
}

/** The v2 registry's routes' parts. */
export const V2_SPEC = {
  version: "v2",
  kinds: V2_CHECK_KINDS,
  checkParams: new Set(Object.values(V2_CHECK_PARAMETERS).flat()),
  checkQuery,
  readChecks,
  wallet: (store, ...args) => store.v2Wallet(...args),
  walletAt: (history, ...args) => history.v2Wallet(...args),
  contractAt: (history, ...args) => history.v2Contract(...args),
  events: (history, ...args) => history.v2Events(...args),
  record: v2Record,
  eventRecord: v2EventRecord,
} satisfies RegistrySpec<V2CheckKind, V2CheckQuery, V2Row, V2EventRow>;

/** The v2 registry's routes. */
export const v2 = registryRoutes(V2_SPEC);
