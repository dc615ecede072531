/**
 * Every request parameter the API reads, once: its JSON Schema (from the pattern its parser checks,
 * core/parse.ts), what the schema cannot say, and the parser itself, so that tests hold the
 * document to what the routes accept (parameters.test.ts, api/routes/table.test.ts).
 */

import { FEED_TYPES, parseFeedTypes, ROLES } from "../../core/feed";
import {
  ADDRESS_PATTERN,
  BYTES32_PATTERN,
  CHAIN_ID_PATTERN,
  CHAIN_IDS_PATTERN,
  DIRECTIONS,
  LIMIT_PATTERN,
  MAX_PAGE_LIMIT,
  parseAddress,
  parseBlockNumber,
  parseBytes32,
  parseChainId,
  parseChainIds,
  parseDirection,
  parseLimit,
  parseOneOf,
  parseRights,
  parseSeq,
  parseTimestamp,
  parseUint256,
  RIGHTS_PATTERN,
  SEQ_PATTERN,
  UINT_PATTERN,
} from "../../core/parse";
import { V1_CHECK_KINDS, type V1CheckKind } from "../../core/v1";
import { V2_CHECK_KINDS, type V2CheckKind } from "../../core/v2";
import type { JsonSchema } from "./schemas";

export type ParameterSpec = {
  name: string;
  in: "query" | "path" | "header";
  description: string;
  schema: JsonSchema;
  /** The route's parser: it accepts no text the schema refuses. */
  parse: (text: string) => unknown;
};

const ADDRESS_TEXT = "0x and 40 hex digits: lowercase, uppercase, or mixed case that is a valid EIP-55 checksum";

const address = (name: string, what: string, where: "query" | "path" = "query"): ParameterSpec => ({
  name,
  in: where,
  description: `${what}: ${ADDRESS_TEXT}.`,
  schema: { type: "string", pattern: ADDRESS_PATTERN },
  parse: parseAddress,
});

const block = (name: string, what: string): ParameterSpec => ({
  name,
  in: "query",
  description: `${what}: a block number from 0 to 2^63-1, in decimal or 0x-hex.`,
  schema: { type: "string", pattern: UINT_PATTERN },
  parse: parseBlockNumber,
});

const tokenId = (what: string): ParameterSpec => ({
  name: "tokenId",
  in: "query",
  description: `${what}: an integer from 0 to 2^256-1, in decimal or 0x-hex.`,
  schema: { type: "string", pattern: UINT_PATTERN },
  parse: parseUint256,
});

/** The check a vaults listing asks, by its kind. */
const vaultType = (kinds: readonly string[]): ParameterSpec => ({
  name: "type",
  in: "query",
  description:
    "The check to answer for every vault, by the last segment of its GET path; its other parameters as that " +
    "check takes them (`contract` for all but `all`, `tokenId` for token checks).",
  schema: { type: "string", enum: [...kinds] },
  parse: parseOneOf(kinds),
});

/** A parameter taken as it is given (a route checks it further itself). */
const text = (name: string, where: "query" | "path", description: string): ParameterSpec => ({
  name,
  in: where,
  description,
  schema: { type: "string" },
  parse: (value: string) => value,
});

/** Parameters by the key the operations name them with (a name can be a query and a path parameter). */
export const PARAMETERS = {
  chainId: {
    name: "chainId",
    in: "query",
    description: "The chain to answer about: a positive decimal chain id this instance serves (default 1).",
    schema: { type: "string", pattern: CHAIN_ID_PATTERN },
    parse: parseChainId,
  },
  /** `chainId` in the path: the chain a JSON-RPC endpoint answers for (api/rpc/). */
  rpcChainId: {
    name: "chainId",
    in: "path",
    description: "The chain whose registries the calls read: a positive decimal chain id this instance serves.",
    schema: { type: "string", pattern: CHAIN_ID_PATTERN },
    parse: parseChainId,
  },
  /** `chainId` where the route answers across chains too (api/routes/across.ts). */
  chains: {
    name: "chainId",
    in: "query",
    description:
      "The chain to answer about: a positive decimal chain id this instance serves (default 1); or several at " +
      "once: `all` (every chain served for this registry version) or a list without repeats (`1,8453,10`), " +
      "answered as `{chains: [...]}`, one entry per chain, by chain id (no `blockNumber` nor `cursor` then).",
    schema: { type: "string", pattern: CHAIN_IDS_PATTERN },
    parse: parseChainIds,
  },
  blockNumber: block(
    "blockNumber",
    "Answer as at this block (default: the newest indexed); past the newest indexed is block_not_indexed",
  ),
  timestamp: {
    name: "timestamp",
    in: "query",
    description:
      "Answer as at this moment, in Unix seconds, from 0 to 2^63-1 (decimal or 0x-hex): at each chain's newest " +
      "block stamped at or before it, which the answer reports as its block. Not with `blockNumber`; at or past " +
      "the newest indexed block's timestamp is block_not_indexed.",
    schema: { type: "string", pattern: UINT_PATTERN },
    parse: parseTimestamp,
  },
  fromBlock: block("fromBlock", "The history's first block (default 0)"),
  toBlock: block("toBlock", "The history's last block (default: the newest indexed, pinned by the first page)"),
  to: address("to", "The hot wallet (the delegate)"),
  from: address("from", "The cold wallet (the vault)"),
  delegate: address("delegate", "The hot wallet (v1's name; for v2 ERC checks, the same as `to`)"),
  vault: address("vault", "The cold wallet (v1's name; for v2 ERC checks, the same as `from`)"),
  contract: address("contract", "The token contract"),
  tokenId: tokenId("The token id"),
  listingTokenId: tokenId("Only the delegations that apply to this token id"),
  rights: {
    name: "rights",
    in: "query",
    description:
      'v2 rights: 0x and 64 hex digits, or up to 32 ASCII characters taken as Solidity\'s bytes32("..."); ' +
      "absent or empty: none.",
    schema: { type: "string", pattern: RIGHTS_PATTERN },
    parse: parseRights,
  },
  limit: {
    name: "limit",
    in: "query",
    description: `The page's size: an integer from 1 to ${MAX_PAGE_LIMIT}.`,
    schema: { type: "string", pattern: LIMIT_PATTERN },
    parse: parseLimit,
  },
  cursor: text("cursor", "query", "The next page: copy it from the previous page's Link header; it pins its block."),
  lastEventId: {
    name: "Last-Event-ID",
    in: "header",
    description:
      "The `id` of the last event received, which EventSource sends when it reconnects: the stream resumes " +
      "right after it (before `cursor`, which a reconnecting EventSource repeats).",
    schema: { type: "string", pattern: SEQ_PATTERN },
    parse: parseSeq,
  },
  feedStart: {
    name: "cursor",
    in: "query",
    description:
      "The `seq` after which the stream starts (0: from the oldest entry kept); absent: with the entries logged next.",
    schema: { type: "string", pattern: SEQ_PATTERN },
    parse: parseSeq,
  },
  feedChains: {
    name: "chainId",
    in: "query",
    description: "Only these chains' entries: a chain id, a list without repeats (`1,8453`), or `all` (default).",
    schema: { type: "string", pattern: CHAIN_IDS_PATTERN },
    parse: parseChainIds,
  },
  feedVersion: {
    name: "version",
    in: "query",
    description: "Only this registry's entries: `v2` or `v1` (default: both).",
    schema: { type: "string", enum: ["v1", "v2"] },
    parse: parseOneOf(["v1", "v2"]),
  },
  feedWallet: address("wallet", "Only the entries of events this wallet is a side of (which side: `role`)"),
  role: {
    name: "role",
    in: "query",
    description:
      "Which side `wallet` is on: `from` or `vault` (the cold wallet), `to` or `delegate` (the hot wallet, and a " +
      "RevokeDelegate's revoked delegate), or `either` (default).",
    schema: { type: "string", enum: [...ROLES] },
    parse: parseOneOf(ROLES),
  },
  feedType: {
    name: "type",
    in: "query",
    description:
      "Only these kinds, a comma-separated list: event names (`DelegateERC721`, `RevokeDelegate`, ...) or " +
      "delegation types (`ALL`, `CONTRACT`, `ERC721`, `ERC20`, `ERC1155`, v1's `TOKEN`).",
    schema: { type: "string", pattern: `^(${FEED_TYPES.join("|")})(,(${FEED_TYPES.join("|")}))*$` },
    parse: parseFeedTypes,
  },
  delivery: {
    name: "delivery",
    in: "query",
    description:
      "`instant` (default): entries as soon as indexed, retractions possible. `finalized`: only entries past their " +
      "chain's finality, never one later retracted, and no retractions; in seq order, so a chain slow to finalize " +
      "holds back the others' entries.",
    schema: { type: "string", enum: ["instant", "finalized"] },
    parse: parseOneOf(["instant", "finalized"]),
  },
  feedCursor: {
    name: "cursor",
    in: "query",
    description: "The `seq` of the last entry read: the entries after it follow (absent or 0: from the oldest kept).",
    schema: { type: "string", pattern: SEQ_PATTERN },
    parse: parseSeq,
  },
  direction: {
    name: "direction",
    in: "query",
    description:
      "Which of the wallet's delegations: `both` (default), `incoming` (the wallet is the hot wallet: v2 `to`, " +
      "v1 `delegate`) or `outgoing` (the cold wallet: v2 `from`, v1 `vault`).",
    schema: { type: "string", enum: [...DIRECTIONS] },
    parse: parseDirection,
  },
  v2VaultType: vaultType(V2_CHECK_KINDS),
  v1VaultType: vaultType(V1_CHECK_KINDS),
  hash: {
    name: "hash",
    in: "path",
    description: "The delegation's hash, as the contract computes it: 0x and 64 hex digits.",
    schema: { type: "string", pattern: BYTES32_PATTERN },
    parse: parseBytes32,
  },
  wallet: address("wallet", "The wallet whose delegations are listed (as delegate or vault)", "path"),
  hotWallet: address("wallet", "The hot wallet (the delegate) whose vaults are listed", "path"),
  contractPath: address("contract", "The token contract whose delegations are listed", "path"),
  keyId: text("id", "path", "The key's id, as POST /admin/keys and GET /admin/keys give it."),
  webhookId: text("id", "path", "The endpoint's id, as POST /admin/webhooks and GET /admin/webhooks give it."),
} satisfies Record<string, ParameterSpec>;

export type ParameterKey = keyof typeof PARAMETERS;

/** Each check's parameters, as a GET check and a batch's item take them (the OpenAPI document lists them). */
export const V2_CHECK_PARAMETERS = {
  all: ["to", "from", "rights"],
  contract: ["to", "from", "contract", "rights"],
  erc721: ["to", "delegate", "from", "vault", "contract", "tokenId", "rights"],
  erc1155: ["to", "delegate", "from", "vault", "contract", "tokenId", "rights"],
  erc20: ["to", "delegate", "from", "vault", "contract", "rights"],
} as const satisfies Record<V2CheckKind, readonly ParameterKey[]>;

/** Each check's parameters, as a GET check and a batch's item take them (the OpenAPI document lists them). */
export const V1_CHECK_PARAMETERS = {
  all: ["delegate", "vault"],
  contract: ["delegate", "vault", "contract"],
  token: ["delegate", "vault", "contract", "tokenId"],
} as const satisfies Record<V1CheckKind, readonly ParameterKey[]>;
