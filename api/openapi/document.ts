/**
 * The OpenAPI 3.1 document (`GET /openapi.json`), built from what the routes use: the parameters'
 * patterns and parsers (parameters.ts), the check kinds and batch fields of each registry version,
 * the problem codes and their statuses (api/http/problem.ts) and the bodies' schemas (schemas.ts). Tests
 * hold it to the routes both ways: every answer the test suite gets validates against it, and every
 * parameter an operation lists is read and checked by its route, and no other.
 */
import { V1_CHECK_KINDS, type V1CheckKind } from "../../core/v1";
import { V2_CHECK_KINDS, type V2CheckKind } from "../../core/v2";
import { PROBLEM_STATUS, type ProblemCode } from "../http/problem";
import { MAX_BATCH_ITEMS, MAX_BULK_WALLETS, MAX_LABEL } from "../limits";
import { PARAMETERS, type ParameterKey, V1_CHECK_PARAMETERS, V2_CHECK_PARAMETERS } from "./parameters";
import { type JsonSchema, schemas } from "./schemas";

/** One operation: where it is, what it reads, what it answers. */
export type Operation = {
  method: "get" | "post" | "delete";
  /** The OpenAPI path template (`{wallet}`). */
  path: string;
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
  ok: { status: number; schema: JsonSchema; headers: string[]; description: string };
  /** The problems it can answer with, beyond those every /registry request can. */
  problems: ProblemCode[];
  /** An API key is optional (keyless requests are limited); the admin token is required. */
  access: "keyed" | "admin";
};

const ref = (name: keyof typeof schemas) => ({ $ref: `#/components/schemas/${name}` });

/**
 * Problems any /registry request can get: from Node's parser (content_too_large: its chunk
 * extensions' limit), access, and the chain's state.
 */
const REGISTRY_PROBLEMS: ProblemCode[] = [
  "malformed_request",
  "headers_too_large",
  "request_timeout",
  "content_too_large",
  "unsupported_chain",
  "invalid_api_key",
  "method_not_allowed",
  "rate_limited",
  "chain_syncing",
  "chain_reorganized",
  "internal",
];
const PARAMETER_PROBLEMS: ProblemCode[] = ["missing_parameter", "invalid_parameter", "block_not_indexed"];
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

/** A batch's body: the chain, the block, and the checks, each a GET check's parameters and its `type`. */
function batchBody<K extends string>(kinds: readonly K[], parameters: Record<K, readonly ParameterKey[]>): JsonSchema {
  const names = [...new Set(kinds.flatMap((kind) => parameters[kind]))];
  const field = (key: ParameterKey) => ({
    description: PARAMETERS[key].description,
    anyOf: [PARAMETERS[key].schema, { type: "integer", minimum: 0 }],
  });
  return {
    type: "object",
    required: ["checks"],
    properties: {
      chainId: { description: PARAMETERS.chainId.description, anyOf: [{ type: "integer" }, { type: "string" }] },
      blockNumber: field("blockNumber"),
      checks: {
        type: "array",
        minItems: 1,
        maxItems: MAX_BATCH_ITEMS,
        items: {
          type: "object",
          required: ["type"],
          properties: {
            type: { enum: [...kinds], description: "The check: the last segment of its GET path." },
            ...Object.fromEntries(names.map((name) => [PARAMETERS[name].name, field(name)])),
          },
        },
      },
    },
  };
}

/** A bulk listing's body: the chain, the block, the direction and the wallets. */
const WALLETS_BODY: JsonSchema = {
  type: "object",
  required: ["wallets"],
  properties: {
    chainId: { description: PARAMETERS.chainId.description, anyOf: [{ type: "integer" }, { type: "string" }] },
    blockNumber: {
      description: PARAMETERS.blockNumber.description,
      anyOf: [PARAMETERS.blockNumber.schema, { type: "integer", minimum: 0 }],
    },
    direction: { description: PARAMETERS.direction.description, ...PARAMETERS.direction.schema },
    wallets: {
      type: "array",
      minItems: 1,
      maxItems: MAX_BULK_WALLETS,
      items: { ...PARAMETERS.wallet.schema, description: "A wallet whose listing is asked." },
    },
  },
};

/** The operations of one registry version. */
function registryOperations<K extends string>(
  version: "v1" | "v2",
  kinds: readonly K[],
  checkParameters: Record<K, readonly ParameterKey[]>,
  checkSummary: Record<K, string>,
  answers: {
    check: (kind: K) => JsonSchema;
    batch: JsonSchema;
    delegations: JsonSchema;
    listings: JsonSchema;
    events: JsonSchema;
    vaults: JsonSchema;
    /** The vaults listing's `type`, and the check parameters it takes beside. */
    vaultType: ParameterKey;
    vaultParameters: ParameterKey[];
  },
): Operation[] {
  const base = `/registry/${version}`;
  const tag = `${version} registry`;
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
    ...kinds.map(
      (kind): Operation => ({
        method: "get",
        path: `${base}/check/${kind}`,
        operationId: `${version}Check${kind[0]!.toUpperCase()}${kind.slice(1)}`,
        tag,
        summary: checkSummary[kind],
        parameters: ["chainId", "blockNumber", ...checkParameters[kind]],
        required: requiredOf(checkParameters[kind]),
        ok: {
          status: 200,
          schema: answers.check(kind),
          headers: READ_HEADERS,
          description: "What the contract answers.",
        },
        problems: [...PARAMETER_PROBLEMS, "conflicting_parameter"],
        access: "keyed",
      }),
    ),
    {
      method: "post",
      path: `${base}/check`,
      operationId: `${version}CheckBatch`,
      tag,
      summary: `Many ${upper} checks at one block, answered in the order asked`,
      parameters: [],
      requestBody: batchBody(kinds, checkParameters),
      ok: { status: 200, schema: answers.batch, headers: READ_HEADERS, description: "The answers, in order." },
      problems: [
        ...PARAMETER_PROBLEMS,
        "conflicting_parameter",
        "invalid_body",
        "unsupported_media_type",
        "content_too_large",
      ],
      access: "keyed",
    },
    {
      method: "get",
      path: `${base}/history`,
      operationId: `${version}History`,
      tag,
      summary: `Every event of the chain's ${upper} registry, a page at a time`,
      parameters: [...page, "fromBlock", "toBlock"],
      ok: history,
      problems: PARAMETER_PROBLEMS,
      access: "keyed",
    },
    {
      method: "get",
      path: `${base}/{wallet}/history`,
      operationId: `${version}WalletHistory`,
      tag,
      summary: "Every event the wallet takes part in, a page at a time",
      parameters: ["wallet", ...page, "fromBlock", "toBlock"],
      ok: history,
      problems: [...PARAMETER_PROBLEMS, ...NOT_A_WALLET],
      access: "keyed",
    },
    {
      method: "get",
      path: `${base}/contract/{contract}`,
      operationId: `${version}ContractListing`,
      tag,
      summary: "The delegations in force scoped to a contract (not ALL), a page at a time",
      parameters: ["contractPath", "listingTokenId", "blockNumber", ...page],
      ok: listing("The delegations, in the order they were made; a Link header names the next page."),
      problems: PARAMETER_PROBLEMS,
      access: "keyed",
    },
    {
      method: "get",
      path: `${base}/{wallet}`,
      operationId: `${version}WalletListing`,
      tag,
      summary: "The wallet's delegations in force, incoming and outgoing: whole, or a page with `limit`",
      parameters: ["wallet", "direction", "blockNumber", ...page],
      ok: listing("The delegations, in the order they were made; with `limit`, a Link header names the next page."),
      problems: PARAMETER_PROBLEMS,
      access: "keyed",
    },
    {
      method: "get",
      path: `${base}/{wallet}/vaults`,
      operationId: `${version}Vaults`,
      tag,
      summary: "Every vault the check (`type`) lets the hot wallet act for: whole, or a page with `limit`",
      parameters: ["hotWallet", answers.vaultType, ...answers.vaultParameters, "blockNumber", ...page],
      required: [answers.vaultType],
      conditional: answers.vaultParameters.filter((key) => key !== "rights"),
      ok: {
        status: 200,
        schema: answers.vaults,
        headers: PAGE_HEADERS,
        description: "The vaults, by address; with `limit`, a Link header names the next page.",
      },
      problems: [...PARAMETER_PROBLEMS, ...NOT_A_WALLET],
      access: "keyed",
    },
    {
      method: "post",
      path: `${base}/wallets`,
      operationId: `${version}WalletListings`,
      tag,
      summary: `Up to ${MAX_BULK_WALLETS} wallets' whole ${upper} listings at one block, in the order asked`,
      parameters: [],
      requestBody: WALLETS_BODY,
      ok: { status: 200, schema: answers.listings, headers: READ_HEADERS, description: "The listings, in order." },
      problems: [...PARAMETER_PROBLEMS, "invalid_body", "unsupported_media_type", "content_too_large"],
      access: "keyed",
    },
  ];
}

/** Every operation the app serves under /registry. */
export const OPERATIONS: Operation[] = [
  ...registryOperations("v2", V2_CHECK_KINDS, V2_CHECK_PARAMETERS, V2_CHECK_SUMMARY, {
    check: (kind) => (kind === "erc20" || kind === "erc1155" ? ref("CheckAmount") : ref("CheckBoolean")),
    batch: ref("V2BatchAnswer"),
    delegations: ref("V2Delegations"),
    listings: ref("V2WalletListings"),
    events: ref("V2Events"),
    vaults: { anyOf: [ref("Vaults"), ref("VaultAmounts")] },
    vaultType: "v2VaultType",
    vaultParameters: ["contract", "tokenId", "rights"],
  }),
  {
    method: "get",
    path: "/registry/v2/delegation/{hash}",
    operationId: "v2Delegation",
    tag: "v2 registry",
    summary: "The delegation with this hash, as getDelegationsFromHashes describes it, if enabled at the block",
    parameters: ["hash", "chainId", "blockNumber"],
    ok: { status: 200, schema: ref("V2Delegation"), headers: READ_HEADERS, description: "The delegation." },
    problems: [...PARAMETER_PROBLEMS, "delegation_not_found"],
    access: "keyed",
  },
  ...registryOperations("v1", V1_CHECK_KINDS, V1_CHECK_PARAMETERS, V1_CHECK_SUMMARY, {
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
    operationId: "chains",
    tag: "chains",
    summary: "The chains served: registries, the newest indexed block, and the sync state",
    parameters: [],
    ok: { status: 200, schema: ref("Chains"), headers: [], description: "One entry per chain served." },
    problems: [],
    access: "keyed",
  },
];

/** Problems any /admin request can get. */
const ADMIN_PROBLEMS: ProblemCode[] = [
  "malformed_request",
  "headers_too_large",
  "request_timeout",
  "content_too_large",
  "invalid_admin_token",
  "not_found",
  "method_not_allowed",
  "rate_limited",
  "chain_syncing",
  "internal",
];

/** The operator's key management (api/routes/admin.ts); all of it is 404 while no ADMIN_TOKEN is set. */
export const ADMIN_OPERATIONS: Operation[] = [
  {
    method: "post",
    path: "/admin/keys",
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
    operationId: "revokeKey",
    tag: "admin",
    summary: "Revoke an API key (again: the same answer)",
    parameters: ["keyId"],
    ok: { status: 200, schema: ref("ApiKeyRevoked"), headers: [], description: "The key, revoked." },
    problems: [],
    access: "admin",
  },
];

/** A header whose value is a decimal number. */
const decimal = (description: string) => ({ description, schema: { type: "string", pattern: "^[0-9]+$" } });

/** The response headers the document describes. */
const HEADERS: Record<string, { description: string; schema: JsonSchema }> = {
  "X-Indexed-Block": decimal("The block the answer is as at: the newest indexed, or the one asked for."),
  Link: {
    description: 'The next page, as `<path?query>; rel="next"`; absent on the last page.',
    schema: { type: "string" },
  },
  "RateLimit-Limit": decimal("Keyless requests only: the requests allowed per window."),
  "RateLimit-Remaining": decimal("Keyless requests only: the requests left in this window."),
  "RateLimit-Reset": decimal("Keyless requests only: seconds until the window resets."),
  "Retry-After": decimal("Seconds to wait before asking again."),
  Allow: { description: "The methods the path allows.", schema: { type: "string" } },
};

/** Which statuses carry which extra headers. */
const STATUS_HEADERS: Record<number, string[]> = { 405: ["Allow"], 429: ["Retry-After"], 503: ["Retry-After"] };
const RATE_HEADERS = ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"];

const headerRefs = (names: string[]) =>
  Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));

/** The problem responses of an operation: per status, the Problem schema with the codes it can have there. */
function problemResponses(codes: ProblemCode[], keyed: boolean) {
  const byStatus = new Map<number, ProblemCode[]>();
  for (const code of codes) byStatus.set(PROBLEM_STATUS[code], [...(byStatus.get(PROBLEM_STATUS[code]) ?? []), code]);
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      String(status),
      {
        description: `A problem: ${list.map((code) => `\`${code}\``).join(", ")}.`,
        headers: headerRefs([...(keyed ? RATE_HEADERS : []), ...(STATUS_HEADERS[status] ?? [])]),
        content: {
          "application/problem+json": { schema: { ...ref("Problem"), properties: { code: { enum: list } } } },
        },
      },
    ]),
  );
}

/** The OpenAPI 3.1 document of the operations, served at `/openapi.json`. */
export function openApiDocument(operations: Operation[] = [...OPERATIONS, ...ADMIN_OPERATIONS]) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    const keyed = op.access === "keyed";
    const codes = [...new Set([...(keyed ? REGISTRY_PROBLEMS : ADMIN_PROBLEMS), ...op.problems])];
    paths[op.path] ??= {};
    paths[op.path]![op.method] = {
      operationId: op.operationId,
      tags: [op.tag],
      summary: op.summary,
      security: keyed ? [{}, { apiKey: [] }] : [{ adminToken: [] }],
      parameters: op.parameters.map((key) => {
        const { name, in: where, description, schema } = PARAMETERS[key];
        return { name, in: where, description, schema, required: where === "path" || !!op.required?.includes(key) };
      }),
      ...(op.requestBody && {
        requestBody: { required: true, content: { "application/json": { schema: op.requestBody } } },
      }),
      responses: {
        [String(op.ok.status)]: {
          description: op.ok.description,
          headers: headerRefs([...op.ok.headers, ...(keyed ? RATE_HEADERS : [])]),
          content: { "application/json": { schema: op.ok.schema } },
        },
        ...problemResponses(codes, keyed),
      },
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Delegation registry lookup",
      version: "1",
      description:
        "Answers about the delegate.xyz registries (v2 and v1), exactly as the contracts would give them, at " +
        "the newest indexed block or any past one. Errors are RFC 9457 problem+json with a stable `code`.",
    },
    tags: [
      { name: "v2 registry", description: "DelegateRegistry v2 (0x00000000000000447e69651d841bD8D104Bed493)." },
      { name: "v1 registry", description: "DelegationRegistry v1 (0x00000000000076A84feF008CDAbe6409d2FE638B)." },
      { name: "chains", description: "The chains this instance serves." },
      { name: "admin", description: "The operator's API keys, behind ADMIN_TOKEN." },
    ],
    paths,
    components: {
      schemas,
      headers: HEADERS,
      securitySchemes: {
        apiKey: {
          type: "apiKey",
          in: "header",
          name: "X-API-KEY",
          description: "Optional: without a key, requests are limited per client (RateLimit-* headers).",
        },
        adminToken: { type: "http", scheme: "bearer", description: "The operator's ADMIN_TOKEN." },
      },
    },
  };
}
