import type { Hex } from "viem";
import { parseBytes32 } from "../../core/parse";
import {
  V2_CHECK_KINDS,
  type V2Check,
  type V2CheckKind,
  type V2CheckQuery,
  type V2Scope,
  type V2State,
  type V2Vault,
  v2Check,
  v2Vaults,
} from "../../core/v2";
import { type Params, parseParam } from "../http/params";
import { Problem } from "../http/problem";
import { V2_CHECK_PARAMETERS } from "../openapi/parameters";
import type { V2EventRow } from "../store/history-store";
import type { Told, V2Row } from "../store/store";
import { answerAt, chainRequest } from "./answer";
import { v2EventsJson, v2Record, v2VaultRecord } from "./records";
import { type CheckReads, type RegistrySpec, registryAnswers } from "./registry";
import type { Answers } from "./table";

/** Hot wallet and cold wallet: erc* checks take either name for each party (docs/api.md). */
const PARTIES: Record<V2CheckKind, { to: readonly string[]; from: readonly string[] }> = {
  all: { to: ["to"], from: ["from"] },
  contract: { to: ["to"], from: ["from"] },
  erc721: { to: ["to", "delegate"], from: ["from", "vault"] },
  erc1155: { to: ["to", "delegate"], from: ["from", "vault"] },
  erc20: { to: ["to", "delegate"], from: ["from", "vault"] },
};

/**
 * `query` (a check's kind and the parties it names) with what the check asks about but its parties:
 * rights, and the contract and token it names. Added in place: spread into a new object, the
 * 10,000 queries of a batch took three times as long to make (api/routes/batch.ts).
 */
function scoped<T extends { kind: V2CheckKind }>(query: T, params: Params): T & Omit<V2CheckQuery, "to" | "from"> {
  const scope = query as T & Omit<V2CheckQuery, "to" | "from">;
  scope.rights = params.rights();
  if (query.kind !== "all") scope.contract = params.address("contract");
  if (query.kind === "erc721" || query.kind === "erc1155") scope.tokenId = params.tokenId();
  return scope;
}

function checkQuery(kind: V2CheckKind, params: Params): V2CheckQuery {
  // The parties first: their problems are reported before the scope's.
  const to = params.address(PARTIES[kind].to);
  const from = params.address(PARTIES[kind].from);
  return scoped({ kind, to, from }, params);
}

/** A row as v2Vaults takes it. */
const held = (row: V2Row) => ({
  type: row.delegationType,
  from: row.from,
  rights: row.rights,
  contract: row.contract ?? undefined,
  tokenId: row.tokenId ?? undefined,
  amount: row.amount,
});

/**
 * Reads v2 checks together: from a store that finds what they consult by its fields, or by the
 * delegation hashes they need, each looked up once (hashed only then).
 */
function readChecks(queries: V2CheckQuery[]): CheckReads {
  const checks = queries.map(v2Check);
  const hashes = () => [...new Set(checks.flatMap((check) => check.hashes))];
  const byHash = (enabled: (hash: Hex) => V2State | undefined) => checks.map((check) => check.answer(enabled));
  /** Each check's answer from what the store found; undefined for one it cannot tell. */
  const byScope = ({ found, untold }: Told<V2Check, Map<V2Scope, V2State>>) =>
    checks.map((check) => (untold.has(check) ? undefined : check.answerOf((i) => found.get(check.scopes[i]!))));
  return {
    head: async (store, chainId) => {
      if (store.v2Consulted !== undefined) {
        const view = await store.v2Consulted(chainId, checks);
        return view && { ...view, data: byScope(view.data!) };
      }
      const view = await store.v2Enabled(chainId, hashes());
      return view && { ...view, data: byHash((hash) => view.data.get(hash)) };
    },
    heldAt: async (store, chainId, block) => {
      if (store.v2Consulted !== undefined) {
        const view = await store.v2Consulted(chainId, checks, block);
        const found = view?.data;
        return view && { ...view, data: found && byScope(found) };
      }
      const view = await store.v2EnabledAt(chainId, hashes(), block);
      const held = view?.data;
      return view && { ...view, data: held && byHash((hash) => held.get(hash)) };
    },
    at: async (history, chainId, block) => {
      const enabled = await history.v2Enabled(chainId, hashes(), block);
      return byHash((hash) => enabled.get(hash));
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
  wallets: (store, ...args) => store.v2Wallets(...args),
  walletAt: (history, ...args) => history.v2Wallet(...args),
  walletsAt: (history, ...args) => history.v2Wallets(...args),
  pageJsonAt: async (store, ...args) => store.v2WalletPageJson?.(...args),
  walletsHeldAt: async (store, ...args) => store.v2WalletsAt?.(...args),
  walletsJson: async (store, ...args) => store.v2WalletsJson?.(...args),
  inDirection: (row, wallet, direction) => (direction === "incoming" ? row.to : row.from) === wallet,
  vaultQuery: (kind, params, wallet) => scoped({ kind, to: wallet }, params),
  vaults: (query, incoming) => v2Vaults(query, incoming.map(held)),
  vaultsJson: async (store, ...args) => store.v2VaultsJson?.(...args),
  vaultAddress: (vault) => vault.vault,
  vaultRecord: v2VaultRecord,
  contractAt: (history, ...args) => history.v2Contract(...args),
  events: (history, ...args) => history.v2Events(...args),
  record: v2Record,
  eventsJson: v2EventsJson,
} satisfies RegistrySpec<V2CheckKind, V2CheckQuery, Omit<V2CheckQuery, "from">, V2Row, V2EventRow, V2Vault>;

/** The 404 of a hash with no delegation enabled at `block`. */
const noDelegation = (hash: Hex, block: bigint) =>
  new Problem("delegation_not_found", `no delegation with hash ${hash} is enabled at block ${block}`, {
    headers: { "X-Indexed-Block": block.toString() },
  });

/** What answers the v2 registry's routes: a delegation by its hash, and what both versions have. */
export const V2_ANSWERS: Answers = {
  ...registryAnswers(V2_SPEC),
  delegation: () => (c) => {
    const { chainId, params } = chainRequest(c, "v2");
    const hash = parseParam("hash", c.req.param("hash") ?? "", parseBytes32);
    return answerAt(c, chainId, params.at(), {
      head: async () => {
        const view = await c.var.store.v2Delegation(chainId, hash);
        if (view?.ready && view.data === undefined) throw noDelegation(hash, view.indexedBlock);
        return view && { ...view, body: view.data && v2Record(view.data) };
      },
      at: async (history, block) => {
        const row = await history.v2Delegation(chainId, hash, block);
        if (row === undefined) throw noDelegation(hash, block);
        return v2Record(row);
      },
    });
  },
};
