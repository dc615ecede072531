/**
 * The rules of docs/api.md as assertions on an answer (a problem, a 200 chain answer), and
 * queries built parameter by parameter, for the tests that go through the contract row by row.
 */
import { expect } from "vitest";
import type { Answer } from "../../devkit/ask";

/** A query: names and values in order, each percent-encoded once by `qs`. */
export type Query = [name: string, value: string][];

/** A query string with each name and value percent-encoded exactly once ("" for none). */
export function qs(query: Query): string {
  if (query.length === 0) return "";
  return `?${query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&")}`;
}

/** The query with the value of `name` replaced. */
export const replace = (query: Query, name: string, value: string): Query =>
  query.map(([k, v]) => [k, k === name ? value : v]);

/** The query without `name`. */
export const without = (query: Query, name: string): Query => query.filter(([k]) => k !== name);

/** The query with the parameter `from` named `to`. */
export const rename = (query: Query, from: string, to: string): Query =>
  query.map(([k, v]) => [k === from ? to : k, v]);

/** The problem codes docs/api.md allows for each status ("Errors"). */
const PROBLEM_CODES: Record<number, string[]> = {
  400: [
    "missing_parameter",
    "invalid_parameter",
    "conflicting_parameter",
    "unsupported_chain",
    "block_not_indexed",
    "invalid_body",
  ],
  401: ["invalid_api_key"],
  404: ["not_found", "delegation_not_found"],
  405: ["method_not_allowed"],
  413: ["content_too_large"],
  415: ["unsupported_media_type"],
  429: ["rate_limited"],
  503: ["chain_syncing", "chain_reorganized"],
  500: ["internal"],
};

export type ProblemBody = {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  param?: string;
  [k: string]: unknown;
};

/**
 * Asserts an RFC 9457 problem with the contract's fields (`param`: its name or names; null: none),
 * and returns its body.
 */
export function expectProblem(a: Answer, status: number, code?: string, param?: string | string[] | null): ProblemBody {
  const where = `${a.status} ${a.text}`;
  expect(a.status, where).toBe(status);
  expect(a.headers.get("content-type"), where).toMatch(/^application\/problem\+json(;|$)/);
  expect(a.headers.get("access-control-allow-origin"), where).toBe("*");
  const body = JSON.parse(a.text) as ProblemBody;
  expect(typeof body.type, where).toBe("string");
  expect(body.type.length, where).toBeGreaterThan(0);
  expect(typeof body.title, where).toBe("string");
  expect(body.title.length, where).toBeGreaterThan(0);
  expect(body.status, where).toBe(status);
  expect(typeof body.detail, where).toBe("string");
  expect(body.detail.length, where).toBeGreaterThan(0);
  expect(PROBLEM_CODES[status], where).toContain(body.code);
  if (code !== undefined) expect(body.code, where).toBe(code);
  expect(body.type, where).toBe(`urn:delegation-lookup:problem:${body.code}`);
  if (param === null) expect(body.param, where).toBeUndefined();
  else if (param !== undefined) expect(Array.isArray(param) ? param : [param], where).toContain(body.param);
  // "no stack trace or SQL in the body"
  expect(a.text, where).not.toMatch(/\n\s+at |node_modules|SELECT |\.ts:\d+/);
  return body;
}

/** Asserts a 200 chain answer: JSON, CORS, an X-Indexed-Block of at least `minBlock`; and its body, if given. */
export function expectOk(a: Answer, minBlock: bigint, body?: string): void {
  const where = `${a.status} ${a.text}`;
  expect(a.status, where).toBe(200);
  expect(a.headers.get("content-type"), where).toMatch(/^application\/json(;|$)/);
  expect(a.headers.get("access-control-allow-origin"), where).toBe("*");
  const block = a.headers.get("x-indexed-block");
  expect(block, where).toMatch(/^\d+$/);
  expect(BigInt(block!) >= minBlock, `X-Indexed-Block ${block} < ${minBlock}`).toBe(true);
  if (body !== undefined) expect(a.text, where).toBe(body);
}
