import { parseFeedTypes, ROLES } from "../../core/feed";
import { parseAddress, parseChainIds, parseOneOf, parseRights } from "../../core/parse";
import { type Params, refuseUnserved } from "../http/params";
import { Problem } from "../http/problem";
import type { FeedEntry, FeedVersion } from "./log";

/** What an entry's event says, as the filters read it: parsed once per entry, however many streams read it. */
export type Subject = {
  /** The cold wallet: v2 `from`, v1 `vault`; lowercase. */
  from: string;
  /** The hot wallets: v2 `to`, v1 `delegate` and the `revokedDelegate` a RevokeDelegate names; lowercase. */
  to: string[];
  contract: string | null;
  rights: string | null;
  /** The event's name, and its delegation type where it has one (v2's `delegationType`, v1's from its event). */
  types: string[];
};

/** v1's delegation types, by the event that makes one. */
const V1_TYPE: Record<string, string> = {
  DelegateForAll: "ALL",
  DelegateForContract: "CONTRACT",
  DelegateForToken: "TOKEN",
};

const lower = (value: unknown) => (typeof value === "string" ? value.toLowerCase() : null);

/** What the filters read of an entry's record (the history's JSON, api/routes/records.ts). */
export function subjectOf(version: FeedVersion, record: string): Subject {
  const r = JSON.parse(record) as Record<string, unknown>;
  const event = String(r.event);
  if (version === "v2")
    return {
      from: lower(r.from)!,
      to: [lower(r.to)!],
      contract: lower(r.contract),
      rights: lower(r.rights),
      types: [event, String(r.delegationType)],
    };
  const to = [lower(r.delegate), lower(r.revokedDelegate)].filter((a): a is string => a !== null);
  return {
    from: lower(r.vault)!,
    to,
    contract: lower(r.contract),
    rights: null,
    types: V1_TYPE[event] ? [event, V1_TYPE[event]] : [event],
  };
}

/** A stream's filters; an absent one lets every entry through. */
export type FeedFilter = {
  chains: "all" | readonly number[];
  version?: FeedVersion;
  wallet?: { address: string; from: boolean; to: boolean };
  contract?: string;
  rights?: string;
  types?: ReadonlySet<string>;
};

/** The parameters feedFilterOf reads: a stream's filters, and a webhook endpoint's. */
export const FEED_FILTERS = ["chainId", "version", "wallet", "role", "contract", "rights", "type"] as const;

/** The filters a request's parameters ask for; `served`: the chains this instance serves. */
export function feedFilterOf(params: Params, served: readonly number[]): FeedFilter {
  const chains = params.optional("chainId", parseChainIds) ?? "all";
  if (chains !== "all") refuseUnserved(chains, served);
  const wallet = params.optional("wallet", parseAddress);
  const role = params.optional("role", parseOneOf(ROLES));
  if (role !== undefined && wallet === undefined)
    throw new Problem("missing_parameter", "'role' says which side 'wallet' is on: give 'wallet' too", {
      param: "wallet",
    });
  const side = role ?? "either";
  const types = params.optional("type", parseFeedTypes);
  return {
    chains,
    version: params.optional("version", parseOneOf(["v1", "v2"] as const)),
    wallet: wallet && {
      address: wallet.toLowerCase(),
      from: side === "from" || side === "vault" || side === "either",
      to: side === "to" || side === "delegate" || side === "either",
    },
    contract: params.optional("contract", parseAddress)?.toLowerCase(),
    rights: params.optional("rights", parseRights)?.toLowerCase(),
    types: types && new Set(types),
  };
}

/** Whether `filter` lets through an entry (a retraction as its event: it carries its record). */
export function passes(filter: FeedFilter, entry: Pick<FeedEntry, "chainId" | "version">, subject: Subject): boolean {
  if (filter.chains !== "all" && !filter.chains.includes(entry.chainId)) return false;
  if (filter.version !== undefined && filter.version !== entry.version) return false;
  const { wallet, contract, rights, types } = filter;
  if (
    wallet &&
    !((wallet.from && subject.from === wallet.address) || (wallet.to && subject.to.includes(wallet.address)))
  )
    return false;
  if (contract !== undefined && subject.contract !== contract) return false;
  if (rights !== undefined && subject.rights !== rights) return false;
  return types === undefined || subject.types.some((t) => types.has(t));
}
