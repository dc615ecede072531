/**
 * Every route of the API under /registry and /admin, declared once: its method and path, the
 * parameters it reads, what it costs a client without a key, what it answers and which problems, and
 * whether the fast path answers it. The app mounts these routes and no other (api/app.ts), the fast
 * path matches those marked `fast` (api/routes/direct-answers.ts), CORS and the 405s allow each
 * path's methods (api/routes/cors.ts), and the OpenAPI document describes them
 * (api/openapi/document.ts, and from it the typed client in client/): a route added here is served,
 * allowed, documented and typed. table.test.ts holds the app and the fast path to the table.
 *
 * The order is the app's: of two routes that match a path, the earlier answers (a v2 delegation's
 * `delegation/{hash}` before `{wallet}/history`), and the document lists them in it.
 */
import type { Context, Hono } from "hono";
import { SEQ_PATTERN } from "../../core/parse";
import { V1_CHECK_KINDS, type V1CheckKind } from "../../core/v1";
import { V2_CHECK_KINDS, type V2CheckKind } from "../../core/v2";
import type { ProblemCode } from "../http/problem";
import { MAX_BULK_WALLETS, MAX_LABEL } from "../limits";
import { batchBody, WALLETS_BODY } from "../openapi/bodies";
import { PARAMETERS, type ParameterKey, V1_CHECK_PARAMETERS, V2_CHECK_PARAMETERS } from "../openapi/parameters";
import type { JsonSchema, schemas } from "../openapi/schemas";
import type { Env } from "./env";

export type Method = "get" | "post" | "patch" | "delete";

/**
 * What a request costs a client without an API key, in units of its budget (api/access/middleware.ts
 * spends one on arrival; a POST's, by its route once it has read the body).
 */
export type KeylessCost = {
  /** One unit per request, or one per item of its body. */
  per: "request" | "item";
  /** And one per KEYLESS_ROWS_PER_UNIT rows it reads beyond those paid for (a page: by its size, beforehand). */
  rows: boolean;
};

/** The functions that answer routes, by name: the app's (api/app.ts) and the fast path's. */
export type AnswerName =
  | "check"
  | "checks"
  | "history"
  | "walletHistory"
  | "contractListing"
  | "walletListing"
  | "vaults"
  | "walletListings"
  | "delegation"
  | "chains"
  | "feedEntries"
  | "feedStream"
  | "rpc"
  | "createKey"
  | "createWebhook"
  | "listWebhooks"
  | "getWebhook"
  | "updateWebhook"
  | "deleteWebhook"
  | "rotateWebhook"
  | "pauseWebhook"
  | "resumeWebhook"
  | "replayWebhook"
  | "webhookDeliveries"
  | "testWebhook"
  | "listKeys"
  | "revokeKey";

/** A route's handler in the app. */
export type RouteHandler = (c: Context<Env>) => Response | Promise<Response>;
/** Answers by name: each makes its route's handler, once, when the app is made. */
export type Answers = Partial<Record<AnswerName, (route: Route) => RouteHandler>>;

/** One route: where it is, what it reads, what it answers, who may ask and at what cost. */
export type Route = {
  method: Method;
  /** The OpenAPI path template (`{wallet}`); the app's route is the same with `:wallet`. */
  path: string;
  /** What answers it, among its version's answers (or the app's, for a route of no version). */
  answer: AnswerName;
  /** The registry version it reads; and a check's kind, the last segment of its path. */
  version?: "v1" | "v2";
  kind?: string;
  operationId: string;
  tag: string;
  summary: string;
  parameters: ParameterKey[];
  /** The query parameters that must be given (path parameters always are). */
  required?: ParameterKey[];
  /** The query parameters some values of another require (a vaults listing's check parameters, by `type`). */
  conditional?: ParameterKey[];
  requestBody?: JsonSchema;
  /** The 2xx answer: its status, body schema and the headers that come with it. */
  ok: {
    status: number;
    schema: JsonSchema;
    headers: string[];
    description: string;
    /** Its media type (default application/json). */
    mediaType?: "text/event-stream";
  };
  /** The problems it can answer with, beyond those every /registry (or /admin) request can. */
  problems: ProblemCode[];
  /** Answered on node:http itself, past Hono, when keyed (api/routes/direct-answers.ts). */
  fast?: true;
  /** Answered across chains too, with `chainId=all` or a list of chains (api/routes/across.ts). */
  across?: true;
} & (
  | { /** An API key is optional: keyless requests are limited. */ access: "keyed"; cost: KeylessCost }
  | { /** The admin token is required; no keyless budget is spent. */ access: "admin"; cost?: never }
  | { /** An API key is required: the route acts on what that key owns. */ access: "owner"; cost?: never }
);

/** What GET /registry/feed's events are. */
const FEED_STREAM_TEXT =
  "Server-Sent Events (WHATWG): each event's `id` is an entry's `seq` and its `data` one FeedEntry as JSON " +
  "(components/schemas/FeedEntry); `retry` is set; comments (`:`) keep the connection alive.";

const ref = (name: keyof typeof schemas) => ({ $ref: `#/components/schemas/${name}` });

const PARAMETER_PROBLEMS: ProblemCode[] = ["missing_parameter", "invalid_parameter", "block_not_indexed"];
/** What a POST of a batch or bulk listing may answer: its parameters', and its body's. */
const BODY_PROBLEMS: ProblemCode[] = [
  ...PARAMETER_PROBLEMS,
  "conflicting_parameter",
  "invalid_body",
  "unsupported_media_type",
  "content_too_large",
];
/** Below `check/` are the checks only: `check/history` is no path (404), not a bad wallet's history. */
const NOT_A_WALLET: ProblemCode[] = ["not_found"];

/** A check's parameters that must be given: all but rights, and but a party's two names (either will do). */
const requiredOf = (parameters: readonly ParameterKey[]) => {
  const either = parameters.includes("to") && parameters.includes("delegate");
  const optional: ParameterKey[] = either ? ["rights", "to", "delegate", "from", "vault"] : ["rights"];
  return parameters.filter((key) => !optional.includes(key));
};

const V2_CHECK_SUMMARY: Record<V2CheckKind, string> = {
  all: "May `to` act for `from` on everything? (checkDelegateForAll)",
  contract: "May `to` act for `from` on this contract? (checkDelegateForContract)",
  erc721: "May the delegate act for the vault on this token? (checkDelegateForERC721)",
  erc1155: "The ERC1155 balance of this token the delegate may use for the vault (checkDelegateForERC1155)",
  erc20: "The ERC20 balance the delegate may use for the vault (checkDelegateForERC20)",
};
const V1_CHECK_SUMMARY: Record<V1CheckKind, string> = {
  all: "May the delegate act for the whole vault? (checkDelegateForAll)",
  contract: "May the delegate act for the vault on this contract? (checkDelegateForContract)",
  token: "May the delegate act for the vault on this token? (checkDelegateForToken)",
};

const READ_HEADERS = ["X-Indexed-Block"];
const PAGE_HEADERS = ["X-Indexed-Block", "Link"];
/** Keyless costs: a unit a request; and the rows read beyond; a unit an item of the body, and the rows beyond. */
const ONE: KeylessCost = { per: "request", rows: false };
const ROWS: KeylessCost = { per: "request", rows: true };
const ITEMS: KeylessCost = { per: "item", rows: false };
const ITEMS_AND_ROWS: KeylessCost = { per: "item", rows: true };

/** What differs between the registry versions' routes: their checks and the schemas of their answers. */
type RegistryAnswers<K extends string> = {
  kinds: readonly K[];
  checkParameters: Record<K, readonly ParameterKey[]>;
  checkSummary: Record<K, string>;
  check: (kind: K) => JsonSchema;
  batch: JsonSchema;
  delegations: JsonSchema;
  listings: JsonSchema;
  events: JsonSchema;
  vaults: JsonSchema;
  /** The vaults listing's `type`, and the check parameters it takes beside. */
  vaultType: ParameterKey;
  vaultParameters: ParameterKey[];
};

/** A registry version's checks, one GET route each (answered on the fast path too) and the batch of them. */
function checkRoutes<K extends string>(version: "v1" | "v2", answers: RegistryAnswers<K>): Route[] {
  const base = `/registry/${version}`;
  const tag = `${version} registry`;
  const checks = answers.kinds.map(
    (kind): Route => ({
      method: "get",
      path: `${base}/check/${kind}`,
      answer: "check",
      version,
      kind,
      operationId: `${version}Check${kind[0]!.toUpperCase()}${kind.slice(1)}`,
      tag,
      summary: answers.checkSummary[kind],
      parameters: ["chainId", "blockNumber", "timestamp", ...answers.checkParameters[kind]],
      required: requiredOf(answers.checkParameters[kind]),
      ok: {
        status: 200,
        schema: answers.check(kind),
        headers: READ_HEADERS,
        description: "What the contract answers.",
      },
      problems: [...PARAMETER_PROBLEMS, "conflicting_parameter"],
      access: "keyed",
      cost: ONE,
      fast: true,
      across: true,
    }),
  );
  const batch: Route = {
    method: "post",
    path: `${base}/check`,
    answer: "checks",
    version,
    operationId: `${version}CheckBatch`,
    tag,
    summary: `Many ${version.toUpperCase()} checks at one block, answered in the order asked`,
    parameters: [],
    requestBody: batchBody(answers.kinds, answers.checkParameters),
    ok: { status: 200, schema: answers.batch, headers: READ_HEADERS, description: "The answers, in order." },
    problems: BODY_PROBLEMS,
    access: "keyed",
    cost: ITEMS,
  };
  return [...checks, batch];
}

/** The routes of one registry version: its checks, history, listings and vaults. */
function registryRoutes<K extends string>(version: "v1" | "v2", answers: RegistryAnswers<K>): Route[] {
  const base = `/registry/${version}`;
  const common = { version, tag: `${version} registry`, access: "keyed" as const };
  const upper = version.toUpperCase();
  const listing = (description: string) => ({
    status: 200,
    schema: answers.delegations,
    headers: PAGE_HEADERS,
    description,
  });
  const history = {
    status: 200,
    schema: answers.events,
    headers: PAGE_HEADERS,
    description: "The events, oldest first by (block, log index); a Link header names the next page.",
  };
  const page: ParameterKey[] = ["chainId", "limit", "cursor"];
  return [
    ...checkRoutes(version, answers),
    {
      ...common,
      method: "get",
      path: `${base}/history`,
      answer: "history",
      operationId: `${version}History`,
      summary: `Every event of the chain's ${upper} registry, a page at a time`,
      parameters: [...page, "fromBlock", "toBlock"],
      ok: history,
      problems: PARAMETER_PROBLEMS,
      cost: ROWS,
    },
    {
      ...common,
      method: "get",
      path: `${base}/{wallet}/history`,
      answer: "walletHistory",
      operationId: `${version}WalletHistory`,
      summary: "Every event the wallet takes part in, a page at a time",
      parameters: ["wallet", ...page, "fromBlock", "toBlock"],
      ok: history,
      problems: [...PARAMETER_PROBLEMS, ...NOT_A_WALLET],
      cost: ROWS,
    },
    {
      ...common,
      method: "get",
      path: `${base}/contract/{contract}`,
      answer: "contractListing",
      operationId: `${version}ContractListing`,
      summary: "The delegations in force scoped to a contract (not ALL), a page at a time",
      parameters: ["contractPath", "listingTokenId", "blockNumber", "timestamp", ...page],
      ok: listing("The delegations, in the order they were made; a Link header names the next page."),
      problems: PARAMETER_PROBLEMS,
      cost: ROWS,
      across: true,
    },
    {
      ...common,
      method: "get",
      path: `${base}/{wallet}`,
      answer: "walletListing",
      operationId: `${version}WalletListing`,
      summary: "The wallet's delegations in force, incoming and outgoing: whole, or a page with `limit`",
      parameters: ["wallet", "direction", "blockNumber", "timestamp", ...page],
      ok: listing("The delegations, in the order they were made; with `limit`, a Link header names the next page."),
      problems: PARAMETER_PROBLEMS,
      cost: ROWS,
      fast: true,
      across: true,
    },
    {
      ...common,
      method: "get",
      path: `${base}/{wallet}/vaults`,
      answer: "vaults",
      operationId: `${version}Vaults`,
      summary: "Every vault the check (`type`) lets the hot wallet act for: whole, or a page with `limit`",
      parameters: ["hotWallet", answers.vaultType, ...answers.vaultParameters, "blockNumber", "timestamp", ...page],
      required: [answers.vaultType],
      conditional: answers.vaultParameters.filter((key) => key !== "rights"),
      ok: {
        status: 200,
        schema: answers.vaults,
        headers: PAGE_HEADERS,
        description: "The vaults, by address; with `limit`, a Link header names the next page.",
      },
      problems: [...PARAMETER_PROBLEMS, ...NOT_A_WALLET],
      cost: ROWS,
      across: true,
    },
    {
      ...common,
      method: "post",
      path: `${base}/wallets`,
      answer: "walletListings",
      operationId: `${version}WalletListings`,
      summary: `Up to ${MAX_BULK_WALLETS} wallets' whole ${upper} listings at one block, in the order asked`,
      parameters: [],
      requestBody: WALLETS_BODY,
      ok: { status: 200, schema: answers.listings, headers: READ_HEADERS, description: "The listings, in order." },
      problems: BODY_PROBLEMS,
      cost: ITEMS_AND_ROWS,
    },
  ];
}

/** Where each kind of caller manages its webhook endpoints, and the prefix of those operations' ids. */
const WEBHOOK_SCOPES = {
  admin: { base: "/admin/webhooks", operation: "", tag: "admin" },
  owner: { base: "/developer/webhooks", operation: "key", tag: "developer" },
} as const;

/** The routes of the operator's key management (api/routes/admin.ts); all 404 while no ADMIN_TOKEN is set. */
const ADMIN_ROUTES: Route[] = [
  {
    method: "post",
    path: "/admin/keys",
    answer: "createKey",
    operationId: "createKey",
    tag: "admin",
    summary: "Create an API key; the answer is the only time its text is shown",
    parameters: [],
    requestBody: {
      type: "object",
      required: ["label"],
      properties: {
        label: { type: "string", minLength: 1, maxLength: MAX_LABEL, description: "What the key is for." },
      },
    },
    ok: { status: 201, schema: ref("ApiKeyCreated"), headers: [], description: "The key, with its text." },
    problems: ["missing_parameter", "invalid_parameter"],
    access: "admin",
  },
  {
    method: "get",
    path: "/admin/keys",
    answer: "listKeys",
    operationId: "listKeys",
    tag: "admin",
    summary: "List the API keys, revoked ones too, with their recent use",
    parameters: [],
    ok: { status: 200, schema: ref("ApiKeys"), headers: [], description: "The keys, oldest first." },
    problems: [],
    access: "admin",
  },
  {
    method: "delete",
    path: "/admin/keys/{id}",
    answer: "revokeKey",
    operationId: "revokeKey",
    tag: "admin",
    summary: "Revoke an API key (again: the same answer)",
    parameters: ["keyId"],
    ok: { status: 200, schema: ref("ApiKeyRevoked"), headers: [], description: "The key, revoked." },
    problems: [],
    access: "admin",
  },
  ...webhookRoutes("admin"),
];

/**
 * The webhook endpoints (api/webhooks/admin.ts): the operator's, every one, at /admin/webhooks; a
 * key's own, at /developer/webhooks.
 */
function webhookRoutes(access: keyof typeof WEBHOOK_SCOPES): Route[] {
  const { base, operation, tag } = WEBHOOK_SCOPES[access];
  const hook = ref("Webhook");
  const body = (required: string[], properties: Record<string, JsonSchema>): JsonSchema => ({
    type: "object",
    required,
    properties,
  });
  const url = { type: "string", maxLength: 2048, description: "Where deliveries are POSTed: http(s)." };
  const filter = {
    type: "string",
    description:
      "GET /registry/feed's filters as a query string: chainId, version, wallet, role, contract, rights, type.",
  };
  const cursor = { type: "string", pattern: SEQ_PATTERN, description: "The seq after which deliveries start." };
  const route = (
    method: Route["method"],
    path: string,
    answer: AnswerName,
    summary: string,
    ok: Route["ok"],
    extra: Partial<Route> = {},
  ): Route =>
    ({
      method,
      path: `${base}${path}`,
      answer,
      operationId: operation ? `${operation}${answer[0]!.toUpperCase()}${answer.slice(1)}` : answer,
      tag,
      summary,
      parameters: path.includes("{id}") ? ["webhookId"] : [],
      ok,
      problems: path.includes("{id}") ? ["not_found"] : [],
      access,
      ...extra,
    }) as Route;
  const ok = (schema: JsonSchema, description: string, status = 200): Route["ok"] => ({
    status,
    schema,
    headers: [],
    description,
  });
  const one = (description: string) => ok(hook, description);
  return [
    route(
      "post",
      "",
      "createWebhook",
      "Create a webhook endpoint; the answer is the only time its secret is shown",
      ok(ref("WebhookCreated"), "The endpoint, with its signing secret.", 201),
      {
        requestBody: body(["url"], {
          url,
          filter,
          cursor: { ...cursor, description: "Deliver after this seq (default: from what is logged next)." },
        }),
        problems: [
          ...["invalid_body", "invalid_parameter", "unsupported_chain", "missing_parameter", "chain_syncing"],
          ...(access === "owner" ? ["limit_reached"] : []),
        ] as ProblemCode[],
      },
    ),
    route(
      "get",
      "",
      "listWebhooks",
      "List the webhook endpoints",
      ok(ref("Webhooks"), "Every endpoint, oldest first."),
    ),
    route("get", "/{id}", "getWebhook", "A webhook endpoint", one("The endpoint.")),
    route(
      "patch",
      "/{id}",
      "updateWebhook",
      "Change an endpoint's URL or filters (a disabled one is enabled again)",
      one("The endpoint, changed."),
      {
        requestBody: body([], { url, filter }),
        problems: ["not_found", "invalid_body", "invalid_parameter", "unsupported_chain", "missing_parameter"],
      },
    ),
    route("delete", "/{id}", "deleteWebhook", "Delete a webhook endpoint", one("The endpoint deleted.")),
    route(
      "post",
      "/{id}/rotate",
      "rotateWebhook",
      "A new signing secret; the old one also signs for 24 hours",
      ok(ref("WebhookCreated"), "The endpoint, with its new secret."),
    ),
    route("post", "/{id}/pause", "pauseWebhook", "Pause deliveries (entries wait for the endpoint)", one("Paused.")),
    route("post", "/{id}/resume", "resumeWebhook", "Resume deliveries", one("Resumed.")),
    route("post", "/{id}/replay", "replayWebhook", "Deliver again everything after a seq", one("Replaying."), {
      requestBody: body(["cursor"], { cursor }),
      problems: ["not_found", "invalid_body", "invalid_parameter"],
    }),
    route(
      "get",
      "/{id}/deliveries",
      "webhookDeliveries",
      "The endpoint's recent delivery attempts",
      ok(ref("WebhookDeliveries"), "The last 100 attempts, newest first."),
    ),
    route(
      "post",
      "/{id}/test",
      "testWebhook",
      "Send a signed test delivery now, and tell how it went",
      ok(ref("WebhookAttempt"), "The endpoint's answer to a delivery with no entries and `test: true`."),
    ),
  ];
}

/**
 * An answer across chains (api/routes/across.ts): per chain asked, its answer (`answer`'s schema) at
 * its block, with its next page's cursor where one has more; or the problem it answers with now.
 */
const acrossSchema = (answer: JsonSchema): JsonSchema => {
  const chainId = { type: "integer", minimum: 1, description: "The chain." };
  return {
    type: "object",
    description: "Every chain asked, by chain id: its answer at its block, or the problem it answers with now.",
    required: ["chains"],
    additionalProperties: false,
    properties: {
      chains: {
        type: "array",
        items: {
          oneOf: [
            {
              type: "object",
              required: ["chainId", "block", "answer"],
              additionalProperties: false,
              properties: {
                chainId,
                block: { type: "integer", minimum: 0, description: "The block the chain's answer is as at." },
                answer,
                next: { type: "string", description: "More remain: ask this chain alone with this cursor." },
              },
            },
            {
              type: "object",
              required: ["chainId", "problem"],
              additionalProperties: false,
              properties: { chainId, problem: ref("Problem") },
            },
          ],
        },
      },
    },
  };
};

/** A route as it is served: one marked `across` takes a list of chains too, and answers for each. */
function servedForm(route: Route): Route {
  if (!route.across) return route;
  return {
    ...route,
    parameters: route.parameters.map((key) => (key === "chainId" ? "chains" : key)),
    // `blockNumber` beside several chains, or beside `timestamp`.
    problems: [...new Set([...route.problems, "conflicting_parameter" as const])],
    ok: {
      ...route.ok,
      schema: { anyOf: [route.ok.schema, acrossSchema(route.ok.schema)] },
      description: `${route.ok.description} Across chains (\`chainId=all\` or a list): each chain's, by chain id.`,
    },
  };
}

/** Every route, in the order the app tries them. */
export const ROUTES: readonly Route[] = (
  [
    // Before the routes both versions have: `delegation/history` is no wallet's history.
    {
      method: "get",
      path: "/registry/v2/delegation/{hash}",
      answer: "delegation",
      version: "v2",
      operationId: "v2Delegation",
      tag: "v2 registry",
      summary: "The delegation with this hash, as getDelegationsFromHashes describes it, if enabled at the block",
      parameters: ["hash", "chainId", "blockNumber", "timestamp"],
      ok: { status: 200, schema: ref("V2Delegation"), headers: READ_HEADERS, description: "The delegation." },
      problems: [...PARAMETER_PROBLEMS, "conflicting_parameter", "delegation_not_found"],
      access: "keyed",
      cost: ONE,
    },
    ...registryRoutes("v2", {
      kinds: V2_CHECK_KINDS,
      checkParameters: V2_CHECK_PARAMETERS,
      checkSummary: V2_CHECK_SUMMARY,
      check: (kind) => (kind === "erc20" || kind === "erc1155" ? ref("CheckAmount") : ref("CheckBoolean")),
      batch: ref("V2BatchAnswer"),
      delegations: ref("V2Delegations"),
      listings: ref("V2WalletListings"),
      events: ref("V2Events"),
      vaults: { anyOf: [ref("Vaults"), ref("VaultAmounts")] },
      vaultType: "v2VaultType",
      vaultParameters: ["contract", "tokenId", "rights"],
    }),
    ...registryRoutes("v1", {
      kinds: V1_CHECK_KINDS,
      checkParameters: V1_CHECK_PARAMETERS,
      checkSummary: V1_CHECK_SUMMARY,
      check: () => ref("CheckBoolean"),
      batch: ref("V1BatchAnswer"),
      delegations: ref("V1Delegations"),
      listings: ref("V1WalletListings"),
      events: ref("V1Events"),
      vaults: ref("Vaults"),
      vaultType: "v1VaultType",
      vaultParameters: ["contract", "tokenId"],
    }),
    {
      method: "get",
      path: "/registry/chains",
      answer: "chains",
      operationId: "chains",
      tag: "chains",
      summary: "The chains served: registries, the newest indexed block, and the sync state",
      parameters: [],
      ok: { status: 200, schema: ref("Chains"), headers: [], description: "One entry per chain served." },
      problems: [],
      access: "keyed",
      cost: ONE,
    },
    {
      method: "get",
      path: "/registry/feed",
      answer: "feedStream",
      operationId: "feed",
      tag: "feed",
      summary: "The change log as Server-Sent Events: entries as they are logged, resumable with Last-Event-ID",
      parameters: [
        "lastEventId",
        "feedStart",
        "feedChains",
        "feedVersion",
        "feedWallet",
        "role",
        "contract",
        "rights",
        "feedType",
        "delivery",
      ],
      // Given with `role`, which says which side it is.
      conditional: ["feedWallet"],
      ok: {
        status: 200,
        schema: { type: "string", description: FEED_STREAM_TEXT },
        headers: [],
        description: "A stream of entries (text/event-stream) that stays open; a comment at least every 15 s.",
        mediaType: "text/event-stream",
      },
      problems: ["missing_parameter", "invalid_parameter", "unsupported_chain", "cursor_expired", "chain_syncing"],
      access: "keyed",
      cost: ONE,
    },
    {
      method: "get",
      path: "/registry/feed/events",
      answer: "feedEntries",
      operationId: "feedEvents",
      tag: "feed",
      summary: "The change log: every delegation event as indexed, and retractions of those a reorganization removed",
      parameters: ["feedCursor", "limit"],
      ok: {
        status: 200,
        schema: ref("FeedPage"),
        headers: ["Link"],
        description: "Up to `limit` entries after `cursor`, oldest first; `Link` names the next page.",
      },
      problems: ["invalid_parameter", "cursor_expired", "chain_syncing"],
      access: "keyed",
      cost: ONE,
    },
    {
      method: "post",
      path: "/rpc/{chainId}",
      answer: "rpc",
      fast: true,
      operationId: "rpc",
      tag: "json-rpc",
      summary: "JSON-RPC 2.0 for the chain's registries: eth_call of their views, as the chain's node answers",
      parameters: ["rpcChainId"],
      requestBody: ref("RpcBody"),
      ok: { status: 200, schema: ref("RpcReply"), headers: [], description: "The answers, by id." },
      problems: ["unsupported_chain", "content_too_large"],
      access: "keyed",
      cost: ITEMS_AND_ROWS,
    },
    ...ADMIN_ROUTES,
    ...webhookRoutes("owner"),
  ] satisfies Route[]
).map(servedForm);

/** The app's (Hono's) path of a route: `{wallet}` is `:wallet`. */
export const honoPath = (path: string) => path.replaceAll(/\{(\w+)\}/g, ":$1");

/** HTTP's methods in the order an Allow header lists them. */
const METHOD_ORDER = ["GET", "HEAD", "POST", "DELETE", "OPTIONS"];

/** The methods `routes` allow, as an Allow header lists them: a GET allows HEAD too. */
export function allowed(routes: readonly Route[]): string[] {
  const methods = new Set(
    routes.flatMap((route) => (route.method === "get" ? ["GET", "HEAD"] : [route.method.toUpperCase()])),
  );
  return METHOD_ORDER.filter((method) => methods.has(method));
}

/** A path segment's pattern: a literal as it is; a parameter as its schema's pattern when `strict`, else any. */
function segmentPattern(route: Route, segment: string, strict: boolean): { source: string; literal: boolean } {
  const name = /^\{(\w+)\}$/.exec(segment)?.[1];
  if (name === undefined) return { source: segment.replaceAll(/[.*+?^$()|[\]\\/{}]/g, "\\$&"), literal: true };
  const key = route.parameters.find((k) => PARAMETERS[k].in === "path" && PARAMETERS[k].name === name);
  const pattern = key === undefined ? undefined : (PARAMETERS[key].schema as { pattern?: string }).pattern;
  // Anchors off, and its own groups not captured: the path's groups are numbered here.
  const own = pattern
    ?.replace(/^\^/, "")
    .replace(/\$$/, "")
    .replaceAll(/(?<!\\)\((?!\?)/g, "(?:");
  return { source: strict && own !== undefined ? own : "[^/?]+", literal: false };
}

/** A route that a path names, and its path parameters' values, in the order the path gives them. */
export type Match = { route: Route; values: string[] };

/** Routes by their paths' segments. */
type Node = { literal: boolean; children: Map<string, Node>; route?: Route };
/** Where a route's path ends in the pattern (its empty group) and its parameters' groups. */
type Mark = { group: number; route: Route; params: number[] };

/**
 * The pattern of every path below `node`, a literal segment tried before a parameter (as OpenAPI
 * matches paths), each path's end an empty group. `state` numbers the groups as their parentheses
 * open, left to right, which is the order this writes them in.
 */
function treePattern(node: Node, params: number[], state: { groups: number; marks: Mark[] }): string {
  const alternatives: string[] = [];
  const children = [...node.children].sort(([, a], [, b]) => Number(b.literal) - Number(a.literal));
  for (const [source, child] of children) {
    if (child.literal) alternatives.push(`\\/${source}${treePattern(child, params, state)}`);
    else {
      const group = ++state.groups;
      alternatives.push(`\\/(${source})${treePattern(child, [...params, group], state)}`);
    }
  }
  if (node.route !== undefined) {
    state.marks.push({ group: ++state.groups, route: node.route, params });
    alternatives.push("()(?=\\?|$)");
  }
  return alternatives.length === 1 ? alternatives[0]! : `(?:${alternatives.join("|")})`;
}

/**
 * Finds the routes a request names, compiled once from `routes`. `strict`: a path parameter matches
 * only what its schema's pattern takes (an address: 0x and 40 hex digits).
 */
export class RouteMatcher {
  /** Every path in one pattern, tried on a request's URL (its query after `?`) with one exec. */
  private readonly pattern: RegExp;
  private readonly marks: Mark[];
  /** Each route's own pattern, for all(). */
  private readonly each: { route: Route; literal: boolean; pattern: RegExp }[];

  constructor(routes: readonly Route[], strict = false) {
    const root: Node = { literal: true, children: new Map() };
    this.each = routes.map((route) => {
      let node = root;
      const segments = route.path
        .split("/")
        .slice(1)
        .map((segment) => segmentPattern(route, segment, strict));
      for (const { source, literal } of segments) {
        if (!node.children.has(source)) node.children.set(source, { literal, children: new Map() });
        node = node.children.get(source)!;
      }
      node.route ??= route;
      const path = segments.map(({ source, literal }) => `\\/${literal ? source : `(?:${source})`}`).join("");
      return { route, literal: segments.every((s) => s.literal), pattern: new RegExp(`^${path}$`) };
    });
    const state = { groups: 0, marks: [] as Mark[] };
    this.pattern = new RegExp(`^${treePattern(root, [], state)}`);
    this.marks = state.marks;
  }

  /** The route a request's URL names (its query aside), and its path parameters' values. */
  first(url: string): Match | undefined {
    const match = this.pattern.exec(url);
    if (match === null) return undefined;
    const mark = this.marks.find(({ group }) => match[group] !== undefined)!;
    return { route: mark.route, values: mark.params.map((group) => match[group]!) };
  }

  /** Every route a path (no query) names: those whose path it is, else every template it matches. */
  all(path: string): Route[] {
    const literal = this.each.filter((each) => each.literal && each.pattern.test(path));
    return (literal.length > 0 ? literal : this.each.filter((each) => each.pattern.test(path))).map((e) => e.route);
  }
}

/**
 * Every route by its path, and the methods of those spent per item: made once, when first asked.
 * Most requests (every GET) are of a method none is, and are told so without matching their path.
 */
let perItem: { routes: RouteMatcher; methods: Set<Method> } | undefined;

/**
 * Whether a request's units are spent by its route, one per item of its body, once it has read
 * them (KeylessCost `per: "item"`): the access check (api/access/middleware.ts) then spends none on
 * arrival. Any other request, a path no route has too, spends one there.
 */
export function spentPerItem(method: string, path: string): boolean {
  perItem ??= {
    routes: new RouteMatcher(ROUTES),
    methods: new Set(ROUTES.filter((route) => route.cost?.per === "item").map((route) => route.method)),
  };
  const wanted = method.toLowerCase() as Method;
  if (!perItem.methods.has(wanted)) return false;
  return perItem.routes.all(path).some((route) => route.method === wanted && route.cost?.per === "item");
}

/**
 * Mounts `routes` on `app`, whose paths start at `base` (their paths below it), in their order: each
 * handled by its answer among `answersOf(route)`, made once here.
 */
export function mountRoutes(
  app: Hono<Env>,
  base: string,
  routes: readonly Route[],
  answersOf: (route: Route) => Answers,
) {
  for (const route of routes) {
    const answer = answersOf(route)[route.answer];
    if (answer === undefined || !route.path.startsWith(`${base}/`)) {
      throw new Error(`${route.method.toUpperCase()} ${route.path} is declared, but nothing answers it here`);
    }
    app.on(route.method.toUpperCase(), honoPath(route.path.slice(base.length)), answer(route));
  }
}
