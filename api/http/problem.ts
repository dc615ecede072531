/** RFC 9457 problem details, the body of every error the API returns. */
export type ProblemCode =
  | "missing_parameter"
  | "invalid_parameter"
  | "conflicting_parameter"
  | "unsupported_chain"
  | "invalid_api_key"
  | "invalid_admin_token"
  | "not_found"
  | "delegation_not_found"
  | "method_not_allowed"
  | "rate_limited"
  | "chain_syncing"
  | "block_not_indexed"
  | "invalid_body"
  | "unsupported_media_type"
  | "chain_reorganized"
  | "cursor_expired"
  | "limit_reached"
  | "internal"
  // Raised by Node's HTTP parser, before the app (api/http/client-error.ts).
  | "malformed_request"
  | "request_timeout"
  | "content_too_large"
  | "headers_too_large";

const TITLES: Record<ProblemCode, [status: number, title: string]> = {
  missing_parameter: [400, "Missing parameter"],
  invalid_parameter: [400, "Invalid parameter"],
  conflicting_parameter: [400, "Conflicting parameters"],
  unsupported_chain: [400, "Unsupported chain"],
  invalid_api_key: [401, "Invalid API key"],
  invalid_admin_token: [401, "Invalid admin token"],
  not_found: [404, "Not found"],
  delegation_not_found: [404, "Delegation not found"],
  method_not_allowed: [405, "Method not allowed"],
  rate_limited: [429, "Too many requests"],
  chain_syncing: [503, "Chain still syncing"],
  block_not_indexed: [400, "Block not indexed"],
  invalid_body: [400, "Invalid body"],
  unsupported_media_type: [415, "Unsupported media type"],
  chain_reorganized: [503, "Chain reorganized beyond finality"],
  cursor_expired: [410, "Feed position no longer kept"],
  limit_reached: [409, "Limit reached"],
  internal: [500, "Internal error"],
  malformed_request: [400, "Malformed request"],
  request_timeout: [408, "Request timeout"],
  content_too_large: [413, "Content too large"],
  headers_too_large: [431, "Request header fields too large"],
};

/** The HTTP status of each problem code. */
export const PROBLEM_STATUS = Object.fromEntries(
  Object.entries(TITLES).map(([code, [status]]) => [code, status]),
) as Record<ProblemCode, number>;

/** The problem+json body of every error: RFC 9457 fields, the code, and any extra fields. */
export function problemBody(code: ProblemCode, detail: string, fields: Record<string, unknown> = {}) {
  // A URN, not a URL: the codes are documented in docs/api.md, not served as pages.
  return {
    type: `urn:delegation-lookup:problem:${code}`,
    title: TITLES[code][1],
    status: TITLES[code][0],
    detail,
    code,
    ...fields,
  };
}

/** An error the API answers with; thrown from anywhere in a request and turned into a response. */
export class Problem extends Error {
  readonly status: number;
  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    readonly extra: { param?: string; headers?: Record<string, string>; [field: string]: unknown } = {},
  ) {
    super(detail);
    this.status = TITLES[code][0];
  }

  /** The problem+json response, with `headers` and the problem's own. */
  response(headers: Record<string, string> = {}): Response {
    const { headers: own, ...fields } = this.extra;
    return new Response(JSON.stringify(problemBody(this.code, this.detail, fields)), {
      status: this.status,
      headers: { ...headers, ...own, "Content-Type": "application/problem+json" },
    });
  }
}

/** Throws the 404 problem for a path no route serves. */
export function notFound(c: { req: { path: string } }): never {
  throw new Problem("not_found", `no such path: ${c.req.path}; see /docs or /openapi.json for the endpoints`);
}
