/**
 * The JSON Schemas (2020-12, as OpenAPI 3.1 takes them) of every JSON body the API answers with, as
 * the document's named components. They describe what the code writes (api/routes/records.ts, api/routes/chains.ts,
 * api/http/problem.ts, api/routes/admin.ts), and api/openapi/schemas.test.ts holds them to its real output.
 *
 * Every field is required: the API writes `null` where a field does not apply, never leaves it out
 * (api/http/json.ts writes even an undefined field as `null`). Integers are exact JSON numbers, up to
 * 2^256-1: a client must parse them without rounding (they are not strings).
 */
import { ADDRESS_PATTERN } from "../../core/parse";
import { V1_EVENT_NAME, type V1Type } from "../../core/v1";
import { V2_DELEGATION_TYPES, V2_EVENT_NAME, V2_RECORD_TYPE } from "../../core/v2";
import { KEY_FORMAT } from "../access/key";
import { PROBLEM_STATUS } from "../http/problem";
import { MAX_BATCH_ITEMS, MAX_BULK_WALLETS, MAX_LABEL } from "../limits";
import { INDEXER_STATES } from "../watch/chain-indexers";

/** A JSON Schema as a plain object: no schema library, the document is written as it is. */
export type JsonSchema = { [key: string]: unknown };

/** A component's `$ref`: components refer to each other only this way. */
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

// The enums come from the rules in core/, which the records are written from: they cannot drift apart.
const V2_DELEGATION_TYPE = V2_DELEGATION_TYPES.filter((type) => type !== "NONE");
const V2_TYPE = [...new Set(Object.values(V2_RECORD_TYPE))];
const V1_TYPE = Object.keys(V1_EVENT_NAME) as V1Type[];
// The two revokes have no delegation type; their names are the indexer's (src/RegistryV1.ts).
const V1_EVENT = [...Object.values(V1_EVENT_NAME), "RevokeAllDelegates", "RevokeDelegate"];

// The API writes addresses in EIP-55 case; the pattern takes any case, as the inputs do (docs/api.md).
const address = (description: string) => ({ type: "string", pattern: ADDRESS_PATTERN, description });
const addressOrNull = (description: string) => ({ ...address(description), type: ["string", "null"] });
// bytes32 values are stored lowercase (Ponder's hex columns, the indexer's rights) and written as stored.
const bytes32 = (description: string) => ({ type: "string", pattern: "^0x[0-9a-f]{64}$", description });
const uint = (description: string) => ({ type: "integer", minimum: 0, description });
// Token ids and amounts go past 2^53: the format tells a client's generator to type them as exact integers.
const uint256 = (description: string) => ({ ...uint(description), format: "uint256" });
const uint256OrNull = (description: string) => ({ ...uint256(description), type: ["integer", "null"] });
const uintOrNull = (description: string) => ({ ...uint(description), type: ["integer", "null"] });
/** The formats the schemas use beyond JSON Schema's types, as a validator (ajv's `formats`) checks them. */
export const FORMATS = {
  "date-time": /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/,
  uint256: { type: "number", validate: (n: number) => Number.isInteger(n) && n >= 0 },
} as const;
/** Timestamps of the admin answers: Date.toISOString(), UTC. */
const isoTime = (description: string) => ({ type: "string", format: "date-time", description });

/** An object schema: closed, every field required (nullable ones are typed with "null"). */
const record = (description: string, properties: Record<string, JsonSchema>) => ({
  type: "object",
  description,
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});

/** A webhook endpoint's fields as its owner sees them (api/webhooks/store.ts). */
const WEBHOOK_FIELDS: Record<string, JsonSchema> = {
  id: { type: "string", pattern: "^wh_[0-9a-f]{16}$", description: "The endpoint's id." },
  owner: { type: ["string", "null"], description: "The API key's id that owns it; null: the operator's." },
  url: { type: "string", description: "Where deliveries are POSTed." },
  filter: { type: "string", description: "Its filters, as GET /registry/feed takes them (a query string)." },
  cursor: { type: "integer", minimum: 0, description: "The seq of the last entry delivered or skipped." },
  pending: {
    type: ["integer", "null"],
    minimum: 0,
    description: "While a delivery is retried: the seq it reads through.",
  },
  paused: { type: "boolean", description: "Deliveries wait while paused." },
  disabled: { type: ["string", "null"], description: "Why deliveries stopped for good (a 410; retries exhausted)." },
  attempt: { type: "integer", minimum: 0, description: "Failed attempts of the delivery now due." },
  nextAt: { type: "string", format: "date-time", description: "When the next attempt is due." },
  createdAt: { type: "string", format: "date-time", description: "When it was made." },
};

const list = (description: string, item: string) => ({ type: "array", description, items: ref(item) });

/** Where a registry is on a chain (api/app.ts, ServedRegistry); `null` where it is not indexed there. */
const servedRegistry = (version: string) => ({
  ...record(`The ${version} registry on this chain; null when this instance does not index it there.`, {
    address: address("The registry contract, as the chain table names it (EIP-55 case)."),
    startBlock: uintOrNull("The block its indexing starts from; null until it is known."),
  }),
  type: ["object", "null"],
});

/** Fields of the problem body that only some problems carry: not required, but nothing else is allowed. */
const PROBLEM_EXTRAS = {
  param: {
    type: "string",
    description: "The parameter at fault, by name or path in a batch's body (`checks[17].to`).",
  },
  chains: {
    type: "array",
    items: { type: "integer", minimum: 1 },
    description: "unsupported_chain: the chain ids this instance serves the asked registry version on.",
  },
  indexedBlock: uint("block_not_indexed: the newest block that can be asked about now."),
};

export const schemas = {
  V2Delegation: record("A v2 delegation in force, as listings answer it.", {
    type: { enum: V2_TYPE, description: "The spec's type: ERC721 and ERC1155 are TOKEN, ERC20 is CONTRACT." },
    from: address("The delegating (cold) wallet."),
    to: address("The delegate (hot) wallet."),
    contract: addressOrNull("The contract the delegation is scoped to; null for ALL."),
    tokenId: uint256OrNull("The token (exact uint256); null unless ERC721 or ERC1155."),
    delegationType: { enum: V2_DELEGATION_TYPE, description: "The registry's own DelegationType." },
    rights: bytes32("The rights (bytes32, lowercase hex); all zeros when the delegation grants every right."),
    amount: uint256OrNull("The amount delegated (exact uint256) for ERC20 and ERC1155; null otherwise."),
    hash: bytes32("The contract's delegation hash, as getIncomingDelegationHashes gives it (lowercase hex)."),
  }),
  V2Delegations: list(
    "A v2 listing: delegations in the order they were first enabled on chain (the contract's own order).",
    "V2Delegation",
  ),
  V2WalletListings: {
    type: "array",
    description: "A bulk listing: one v2 listing per wallet asked, in the order asked, all at one block.",
    items: ref("V2Delegations"),
    minItems: 1,
    maxItems: MAX_BULK_WALLETS,
  },
  Vault: record("A vault the check lets the hot wallet act for.", {
    vault: address("The vault (cold wallet), EIP-55 case."),
  }),
  Vaults: list("The vaults a boolean check lets the hot wallet act for, by address (as a 160-bit number).", "Vault"),
  VaultAmount: record("A vault the check lets the hot wallet act for, with the amount it answers.", {
    vault: address("The vault (cold wallet), EIP-55 case."),
    amount: uint256("What the v2 erc20 or erc1155 check answers for this vault (exact, > 0)."),
  }),
  VaultAmounts: list(
    "The vaults a v2 erc20 or erc1155 check gives the hot wallet an amount of, by address (as a 160-bit number).",
    "VaultAmount",
  ),
  V1Delegation: record("A v1 delegation in force, as listings answer it.", {
    type: { enum: V1_TYPE, description: "What the delegation covers." },
    vault: address("The delegating (cold) wallet."),
    delegate: address("The delegate (hot) wallet."),
    contract: addressOrNull("The contract the delegation is scoped to; null for ALL."),
    tokenId: uint256OrNull("The token (exact uint256); null unless TOKEN."),
  }),
  V1Delegations: list(
    "A v1 listing: delegations in the order the ones in force were created on chain.",
    "V1Delegation",
  ),
  V1WalletListings: {
    type: "array",
    description: "A bulk listing: one v1 listing per wallet asked, in the order asked, all at one block.",
    items: ref("V1Delegations"),
    minItems: 1,
    maxItems: MAX_BULK_WALLETS,
  },

  V2Event: record("A v2 registry event, as the history lists it.", {
    blockNumber: uint("The block the event is in."),
    blockTimestamp: uint("That block's timestamp, unix seconds."),
    transactionHash: bytes32("The transaction that emitted it (lowercase hex)."),
    logIndex: uint("The log's index in its block."),
    event: { enum: Object.values(V2_EVENT_NAME), description: "The event's name." },
    delegationType: { enum: V2_DELEGATION_TYPE, description: "The delegation type the event writes." },
    from: address("The delegating (cold) wallet."),
    to: address("The delegate (hot) wallet."),
    contract: addressOrNull("The contract; null for DelegateAll."),
    tokenId: uint256OrNull("The token (exact uint256); null unless DelegateERC721 or DelegateERC1155."),
    rights: bytes32("The rights (bytes32, lowercase hex)."),
    enable: {
      type: "boolean",
      description: "Whether the event enables the delegation; for ERC20/ERC1155, amount > 0.",
    },
    amount: uint256OrNull("The amount set (exact uint256; 0 revokes) for ERC20 and ERC1155; null otherwise."),
    hash: bytes32("The hash of the delegation the event writes (lowercase hex)."),
  }),
  V2Events: list("A page of v2 events, oldest first by (block, log index); `Link` names the next page.", "V2Event"),
  V1Event: record("A v1 registry event, as the history lists it.", {
    blockNumber: uint("The block the event is in."),
    blockTimestamp: uint("That block's timestamp, unix seconds."),
    transactionHash: bytes32("The transaction that emitted it (lowercase hex)."),
    logIndex: uint("The log's index in its block."),
    event: { enum: V1_EVENT, description: "The event's name." },
    vault: address("The vault the event names."),
    delegate: addressOrNull("The delegate as the event names it; null for RevokeAllDelegates."),
    contract: addressOrNull("The contract; null unless DelegateForContract or DelegateForToken."),
    tokenId: uint256OrNull("The token (exact uint256); null unless DelegateForToken."),
    value: { type: ["boolean", "null"], description: "Whether a DelegateFor* event enables; null for revokes." },
    revokedDelegate: addressOrNull("RevokeDelegate: the delegate whose delegations were revoked; null otherwise."),
  }),
  V1Events: list("A page of v1 events, oldest first by (block, log index); `Link` names the next page.", "V1Event"),

  FeedEntry: record("An entry of the change log: an event as indexed, or the retraction of an earlier entry.", {
    seq: uint("The entry's place in the log: every entry after it has a larger one."),
    chainId: uint("The chain of the event."),
    version: { enum: ["v1", "v2"], description: "The registry of the event." },
    blockNumber: uint("The block of the event."),
    blockHash: bytes32("The hash of that block (lowercase hex): a block that left the chain has another."),
    logIndex: uint("The log's index in its block."),
    retracts: uintOrNull(
      "For a retraction, the `seq` of the entry it takes back (its event left the chain); else null.",
    ),
    event: {
      description: "The event, as the history lists it (the retracted entry's, for a retraction).",
      anyOf: [ref("V2Event"), ref("V1Event")],
    },
  }),
  FeedPage: record("A page of the change log, oldest first.", {
    entries: list("The entries after the cursor, at most `limit`.", "FeedEntry"),
    cursor: uint("The `seq` to resume after: the last entry's, or the cursor given when there is none."),
  }),
  CheckBoolean: {
    type: "boolean",
    description: "A check's answer (v2 all/contract/erc721, every v1 check): the bare literal true or false.",
  },
  CheckAmount: uint256(
    "A v2 erc20/erc1155 check's answer: the amount delegated, exact (2^256-1 when ALL or CONTRACT covers it).",
  ),
  V2BatchAnswer: {
    type: "array",
    description: "One answer per check asked, in the order asked, all at the block of X-Indexed-Block.",
    items: { oneOf: [ref("CheckBoolean"), ref("CheckAmount")] },
    minItems: 1,
    maxItems: MAX_BATCH_ITEMS,
  },
  V1BatchAnswer: {
    type: "array",
    description: "One answer per check asked, in the order asked, all at the block of X-Indexed-Block.",
    items: ref("CheckBoolean"),
    minItems: 1,
    maxItems: MAX_BATCH_ITEMS,
  },

  Chain: record("A chain this instance serves, and how far it is indexed.", {
    chainId: { type: "integer", minimum: 1, description: "The chain's id: the `chainId` to ask with." },
    name: { type: "string", description: "The chain's short name." },
    title: { type: "string", description: "The chain's name for people." },
    testnet: { type: "boolean", description: "Whether it is a test network." },
    registries: record("The registries indexed on this chain.", {
      v1: servedRegistry("v1"),
      v2: servedRegistry("v2"),
    }),
    indexedBlock: uintOrNull("The newest block indexed; null before anything is."),
    status: {
      enum: ["syncing", "live", "behind", "reorganized"],
      description:
        "syncing: backfilling (answers are 503); live; behind: newest block indexed is old, or the replica's standby " +
        "trails its primary; reorganized: refused.",
    },
    lagSeconds: uintOrNull("Age of the newest block indexed, in seconds; null before anything is indexed."),
    alarm: {
      type: ["string", "null"],
      description: "Why the chain is refused (a reorganization deeper than finality) and what to do; else null.",
    },
    indexer: {
      ...record("The chain's own indexer, where each chain is indexed apart; null where one indexes every chain.", {
        state: {
          enum: [...INDEXER_STATES],
          description:
            "running; reindexing: running, indexing the chain afresh after its alarm; waiting: for its RPC; " +
            "restarting: its indexer exited and runs again shortly; not indexed: neither registry is on the chain.",
        },
        since: isoTime("Since when it is in this state."),
        rpcFailingSince: {
          ...isoTime("Since when none of its RPC URLs answers; null while one does."),
          type: ["string", "null"],
        },
        detail: { type: ["string", "null"], description: "Why it waits or restarts; else null." },
        backfill: {
          ...record("While it backfills the chain: blocks done of all; null once live, or before they are counted.", {
            blocks: { type: "integer", minimum: 0, description: "Blocks of the backfill done (fetched or cached)." },
            ofBlocks: { type: "integer", minimum: 0, description: "Blocks the backfill has to do." },
          }),
          type: ["object", "null"],
        },
      }),
      type: ["object", "null"],
    },
  }),
  Chains: list("Every chain this instance serves.", "Chain"),

  RpcRequest: {
    type: "object",
    description:
      "A JSON-RPC 2.0 request: eth_call (to a registry), eth_chainId, net_version, eth_blockNumber, " +
      "web3_clientVersion; without `id`, a notification (not answered).",
    properties: {
      jsonrpc: { const: "2.0", description: "The protocol's version." },
      id: { type: ["string", "number", "null"], description: "What its answer is named by." },
      method: { type: "string", description: "The method called." },
      params: { type: "array", description: "The method's parameters, in order." },
    },
    required: ["jsonrpc", "method"],
    additionalProperties: false,
  },
  RpcBody: {
    description: "One JSON-RPC request, or a batch of at most 1,000.",
    anyOf: [
      ref("RpcRequest"),
      { type: "array", description: "A batch.", items: ref("RpcRequest"), minItems: 1, maxItems: 1000 },
    ],
  },
  RpcResult: {
    type: "object",
    description: "A call answered: what the chain's node returns for it at the block.",
    properties: {
      jsonrpc: { const: "2.0", description: "The protocol's version." },
      id: { type: ["string", "number", "null"], description: "The request's id." },
      result: { description: "The method's result: for eth_call, the ABI-encoded return data." },
    },
    required: ["jsonrpc", "id", "result"],
    additionalProperties: false,
  },
  RpcFailure: {
    type: "object",
    description: "A call refused, as a node refuses it (a revert is code 3 with its data).",
    properties: {
      jsonrpc: { const: "2.0", description: "The protocol's version." },
      id: { type: ["string", "number", "null"], description: "The request's id; null where it could not be read." },
      error: {
        type: "object",
        description: "The error.",
        properties: {
          code: { type: "integer", description: "JSON-RPC's code (-32700 to -32000), or 3 for a revert." },
          message: { type: "string", description: "What went wrong." },
          data: { description: "A revert's data (hex)." },
        },
        required: ["code", "message"],
        additionalProperties: false,
      },
    },
    required: ["jsonrpc", "id", "error"],
    additionalProperties: false,
  },
  RpcAnswer: { description: "One call's answer.", anyOf: [ref("RpcResult"), ref("RpcFailure")] },
  RpcReply: {
    description: "One answer for one request; for a batch, the answers in its order (notifications have none).",
    anyOf: [ref("RpcAnswer"), { type: "array", description: "A batch's answers.", items: ref("RpcAnswer") }],
  },

  Problem: {
    type: "object",
    description: "An error (RFC 9457 problem details, application/problem+json); `code` is the stable key.",
    properties: {
      type: {
        type: "string",
        pattern: "^urn:delegation-lookup:problem:[a-z_]+$",
        description: "A URN naming the problem: `urn:delegation-lookup:problem:<code>`.",
      },
      title: { type: "string", description: "The problem's short, fixed summary." },
      status: { type: "integer", minimum: 400, maximum: 599, description: "The HTTP status, as the response's." },
      detail: { type: "string", description: "What went wrong in this request, and what to do instead." },
      code: { enum: Object.keys(PROBLEM_STATUS), description: "The problem's stable code (docs/api.md, Errors)." },
      ...PROBLEM_EXTRAS,
    },
    required: ["type", "title", "status", "detail", "code"],
    additionalProperties: false,
  },

  ApiKeyCreated: record("A new API key: the only answer that ever shows its text.", {
    id: { type: "string", pattern: "^[0-9a-f]{12}$", description: "The key's public id, for listing and revoking." },
    label: { type: "string", minLength: 1, maxLength: MAX_LABEL, description: "What the key is for, as given." },
    createdAt: isoTime("When the key was made."),
    key: {
      type: "string",
      pattern: KEY_FORMAT.source,
      description: "SECRET: the key to send as X-API-KEY. Shown once; only its hash is stored.",
    },
  }),
  ApiKey: record("An API key as listed (never its secret text).", {
    id: { type: "string", pattern: "^[0-9a-f]{12}$", description: "The key's public id." },
    // Unbounded here: only the admin endpoint checks labels, and the table holds whatever was stored.
    label: { type: "string", description: "What the key is for." },
    createdAt: isoTime("When the key was made."),
    revokedAt: { ...isoTime("When the key was revoked; null while it is valid."), type: ["string", "null"] },
    recentRequests: uint("Requests made with the key in the last 24 hours."),
  }),
  ApiKeys: list("Every API key, revoked ones too, oldest first.", "ApiKey"),
  ApiKeyRevoked: record("The key revoked (revoking it again answers the same, with its first revocation's time).", {
    id: { type: "string", pattern: "^[0-9a-f]{12}$", description: "The key's public id." },
    label: { type: "string", description: "What the key was for." },
    createdAt: isoTime("When the key was made."),
    revokedAt: isoTime("When the key was revoked; from then on it is refused (401 invalid_api_key)."),
  }),

  Webhook: record("A webhook endpoint (never its secret).", WEBHOOK_FIELDS),
  WebhookCreated: record("A webhook endpoint with its signing secret: shown when made or rotated, never again.", {
    ...WEBHOOK_FIELDS,
    secret: {
      type: "string",
      pattern: "^whsec_[A-Za-z0-9+/]+={0,2}$",
      description: "SECRET: the Standard Webhooks signing secret (whsec_ and the base64 of its key).",
    },
  }),
  Webhooks: list("Every webhook endpoint, oldest first.", "Webhook"),
  WebhookDelivery: record("One delivery attempt.", {
    id: { type: "string", description: "The delivery's webhook-id: the same for every attempt of it." },
    webhookId: { type: "string", description: "The endpoint." },
    firstSeq: uint("The seq of its first entry."),
    lastSeq: uint("The seq of its last entry."),
    entries: uint("How many entries it carried (at most 100)."),
    attempt: uint("Which attempt this was (1: the first)."),
    status: uintOrNull("The endpoint's HTTP status; null when it did not answer."),
    error: { type: ["string", "null"], description: "Why there was no answer (a timeout, a refused address)." },
    ms: uint("How long the attempt took, in milliseconds."),
    at: isoTime("When it was made."),
  }),
  WebhookDeliveries: list("The endpoint's last 100 attempts, newest first.", "WebhookDelivery"),
  WebhookPayload: {
    type: "object",
    description:
      "A webhook delivery's body: up to 100 entries of the change log, in seq order, signed per Standard Webhooks " +
      "1.0 (headers webhook-id, webhook-timestamp, webhook-signature). A test delivery has none, and `test: true`.",
    properties: {
      entries: { type: "array", maxItems: 100, items: ref("FeedEntry"), description: "The entries, by seq." },
      test: { const: true, description: "Only in a test delivery (POST /admin/webhooks/{id}/test)." },
    },
    required: ["entries"],
    additionalProperties: false,
  },
  WebhookAttempt: record("A test delivery's outcome.", {
    id: { type: "string", description: "Its webhook-id." },
    status: uintOrNull("The endpoint's HTTP status; null when it did not answer."),
    error: { type: ["string", "null"], description: "Why there was no answer." },
    ms: uint("How long it took, in milliseconds."),
  }),
} as const satisfies Record<string, JsonSchema>;
