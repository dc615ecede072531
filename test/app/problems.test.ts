/**
 * Every problem code the service can answer with, each provoked once and held to the OpenAPI
 * document (devkit/openapi-check.ts) for the operation asked: the app's own, in process, over
 * stores that fail as needed, and the four Node's parser raises, as api/http/client-error.ts writes them.
 * The rest of the suite validates what it happens to meet; this makes sure no code goes unchecked.
 */
import { describe, expect, it } from "vitest";
import { type ClientErrorCode, clientErrorResponse } from "../../api/http/client-error";
import { PROBLEM_STATUS, type ProblemCode } from "../../api/http/problem";
import { answerMismatches } from "../../devkit/openapi-check";
import { CHAIN, emptyApp, type Failing, FULL_KEY, SOCKET, wallet } from "../helpers/empty-app";

const CHECK = `/registry/v2/check/all?chainId=${CHAIN}&to=${wallet(1)}&from=${wallet(2)}`;
const batch = (body: string, type = "application/json") => ({
  method: "POST",
  headers: { "Content-Type": type },
  body,
});

/** The problems only Node's parser raises (content_too_large is the app's too: a batch too big). */
const PARSER_ONLY = ["malformed_request", "headers_too_large", "request_timeout"] as const;

/**
 * A request that gets each problem the app raises itself: the app's setting, the path and the
 * request. Keyed by every other code: tsc fails here when api/http/problem.ts gains one.
 */
const PROVOKED: Record<Exclude<ProblemCode, (typeof PARSER_ONLY)[number]>, [Failing, string, RequestInit?]> = {
  missing_parameter: [{}, `/registry/v2/check/all?chainId=${CHAIN}&to=${wallet(1)}`],
  invalid_parameter: [{}, `${CHECK}&rights=0x12`],
  // to and delegate name the hot wallet both, differently.
  conflicting_parameter: [{}, `${CHECK.replace("all", "erc20")}&delegate=${wallet(3)}&contract=${wallet(4)}`],
  unsupported_chain: [{}, `/registry/v1/check/all?chainId=5&delegate=${wallet(1)}&vault=${wallet(2)}`],
  invalid_api_key: [{}, CHECK, { headers: { "X-API-KEY": "dlk_not_a_key" } }],
  invalid_admin_token: [{}, "/admin/keys", { headers: { Authorization: "Bearer not the token" } }],
  not_found: [{}, "/registry/v3/check/all"],
  delegation_not_found: [{ unknownHash: true }, `/registry/v2/delegation/0x${"ab".repeat(32)}?chainId=${CHAIN}`],
  method_not_allowed: [{}, CHECK, { method: "DELETE" }],
  rate_limited: [{ limited: true }, CHECK],
  chain_syncing: [{ syncing: true }, `/registry/v1/${wallet(5)}?chainId=${CHAIN}`],
  block_not_indexed: [{}, `/registry/v2/history?chainId=${CHAIN}&toBlock=101`],
  invalid_body: [{}, "/registry/v2/check", batch("{not json")],
  unsupported_media_type: [{}, "/registry/v1/check", batch("{}", "text/plain")],
  chain_reorganized: [{ alarmed: true }, `/registry/v2/contract/${wallet(6)}?chainId=${CHAIN}`],
  cursor_expired: [{ pruned: true }, "/registry/feed/events?cursor=9"],
  limit_reached: [
    { full: true },
    "/developer/webhooks",
    {
      method: "POST",
      headers: { "X-API-KEY": FULL_KEY, "Content-Type": "application/json" },
      body: JSON.stringify({ url: "https://example.com/hook" }),
    },
  ],
  internal: [{ broken: true }, CHECK],
  content_too_large: [
    {},
    "/registry/v2/check",
    batch(JSON.stringify({ checks: Array(10_001).fill({ type: "all", to: wallet(1), from: wallet(2) }) })),
  ],
};

describe("every problem code, held to /openapi.json", () => {
  it.each(Object.entries(PROVOKED))("%s, as the app answers it", async (code, [setting, path, init = {}]) => {
    const res = await emptyApp(setting).request(path, init, SOCKET);
    const text = await res.text();
    expect(res.status, text).toBe(PROBLEM_STATUS[code as ProblemCode]);
    expect((JSON.parse(text) as { code: string }).code).toBe(code);
    const method = init.method ?? "GET";
    expect(answerMismatches({ method, path, status: res.status, headers: res.headers, text })).toEqual([]);
  });

  it.each([...PARSER_ONLY, "content_too_large"] as const satisfies ClientErrorCode[])(
    "%s, as Node's parser refusal is answered, on any operation",
    (code) => {
      const raw = clientErrorResponse(code);
      const [head, text] = raw.split("\r\n\r\n") as [string, string];
      const [statusLine, ...fields] = head.split("\r\n");
      const status = Number(statusLine!.split(" ")[1]);
      const headers = new Headers(fields.map((f) => f.split(": ", 2) as [string, string]));
      expect(status).toBe(PROBLEM_STATUS[code]);
      for (const [method, path] of [
        ["GET", CHECK],
        ["POST", "/registry/v1/check"],
        ["GET", `/registry/v2/${wallet(7)}/history`],
        ["DELETE", "/admin/keys/k1"],
      ] as const) {
        expect(answerMismatches({ method, path, status, headers, text }), `${method} ${path}`).toEqual([]);
      }
    },
  );

  it("the checker refuses an answer the document does not allow", () => {
    const text = JSON.stringify({ type: "x", title: "t", status: 418, detail: "d", code: "teapot" });
    const answer = { method: "GET", path: CHECK, status: 400, headers: new Headers(), text };
    expect(
      answerMismatches({ ...answer, headers: new Headers({ "Content-Type": "application/problem+json" }) }),
    ).not.toEqual([]);
    expect(answerMismatches({ ...answer, status: 418 })).not.toEqual([]);
    expect(answerMismatches({ ...answer, status: 200, text: "1" })).not.toEqual([]);
  });
});
