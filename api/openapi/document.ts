/**
 * The OpenAPI 3.1 document (`GET /openapi.json`) of the routes the app serves, as their table declares
 * them (api/routes/table.ts), with the parameters' patterns (parameters.ts), the problem codes and
 * their statuses (api/http/problem.ts) and the bodies' schemas (schemas.ts). Tests hold it to the
 * routes both ways: every answer the test suite gets validates against it, and every parameter an
 * operation lists is read and checked by its route, and no other.
 */
import { PROBLEM_STATUS, type ProblemCode } from "../http/problem";
import { ROUTES, type Route } from "../routes/table";
import { PARAMETERS } from "./parameters";
import { type JsonSchema, schemas } from "./schemas";

/** One operation: a route of the table. */
export type Operation = Route;

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

/** Every operation the app serves under /registry. */
export const OPERATIONS: Operation[] = ROUTES.filter((route) => route.access === "keyed");

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
export const ADMIN_OPERATIONS: Operation[] = ROUTES.filter((route) => route.access === "admin");

/** Problems any request of a key's own endpoints can get (under /developer). */
const OWNER_PROBLEMS: ProblemCode[] = [
  ...ADMIN_PROBLEMS.filter((code) => code !== "invalid_admin_token"),
  "invalid_api_key",
];

/** A key's own webhook endpoints (api/routes/admin.ts), managed with that key. */
export const OWNER_OPERATIONS: Operation[] = ROUTES.filter((route) => route.access === "owner");

/** Each kind of access: the problems any of its requests can get, and its security requirement. */
const ACCESS = {
  keyed: { problems: REGISTRY_PROBLEMS, security: [{}, { apiKey: [] }] },
  admin: { problems: ADMIN_PROBLEMS, security: [{ adminToken: [] }] },
  owner: { problems: OWNER_PROBLEMS, security: [{ apiKey: [] }] },
} as const;

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

/** What a webhook delivery's Standard Webhooks headers carry. */
const WEBHOOK_HEADERS: Record<string, string> = {
  "webhook-id": "The delivery's id: the same on every attempt of it.",
  "webhook-timestamp": "When this attempt was signed, in Unix seconds.",
  "webhook-signature": "`v1,<base64 HMAC-SHA256 of id.timestamp.body>` under each secret in force, space-separated.",
};

/** The OpenAPI 3.1 document of the operations, served at `/openapi.json`. */
export function openApiDocument(operations: readonly Operation[] = ROUTES) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    const keyed = op.access === "keyed";
    const codes = [...new Set([...ACCESS[op.access].problems, ...op.problems])];
    paths[op.path] ??= {};
    paths[op.path]![op.method] = {
      operationId: op.operationId,
      tags: [op.tag],
      summary: op.summary,
      security: ACCESS[op.access].security,
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
          content: { [op.ok.mediaType ?? "application/json"]: { schema: op.ok.schema } },
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
      { name: "feed", description: "The change log: every event as indexed, paged or streamed." },
      { name: "admin", description: "The operator's API keys and webhook endpoints, behind ADMIN_TOKEN." },
      { name: "developer", description: "A key's own webhook endpoints, managed with that key (X-API-KEY)." },
    ],
    paths,
    webhooks: {
      changeLog: {
        post: {
          operationId: "changeLogDelivery",
          summary: "A batch of the change log's entries, POSTed to each endpoint (POST /admin/webhooks)",
          description:
            "At most one delivery in flight per endpoint, so entries arrive in seq order; retried on Standard " +
            "Webhooks' schedule (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h) until a 2xx, with the same " +
            "webhook-id and body; a 410 disables the endpoint. At least once: dedupe by webhook-id or seq.",
          parameters: ["webhook-id", "webhook-timestamp", "webhook-signature"].map((name) => ({
            name,
            in: "header",
            required: true,
            schema: { type: "string" },
            description: WEBHOOK_HEADERS[name],
          })),
          requestBody: {
            required: true,
            content: { "application/json": { schema: { $ref: "#/components/schemas/WebhookPayload" } } },
          },
          responses: { "200": { description: "Any 2xx takes the delivery; 410 disables the endpoint." } },
        },
      },
    },
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
