/**
 * The problems api-contract.md's "Beyond the interface spec" adds (snapshots and batches), asserted
 * as `expectProblem` (./answers.ts) asserts the interface spec's: answers.ts accepts only the
 * interface spec's codes for each status, and is not this file's to change.
 */
import { expect } from "vitest";
import type { Answer } from "../../devkit/ask";
import type { ProblemBody } from "./answers";

/** The codes the snapshots and batches add, for each status. */
const BEYOND_SPEC_CODES: Record<number, string[]> = {
  400: ["block_not_indexed", "invalid_body"],
  413: ["content_too_large"],
  415: ["unsupported_media_type"],
};

/** Asserts an RFC 9457 problem with one of those codes (and `param`, when given); returns its body. */
export function expectBeyondSpecProblem(a: Answer, status: number, code: string, param?: string): ProblemBody {
  const where = `${a.path}: ${a.status} ${a.text.slice(0, 400)}`;
  expect(a.status, where).toBe(status);
  expect(BEYOND_SPEC_CODES[status], where).toContain(code);
  expect(a.headers.get("content-type"), where).toMatch(/^application\/problem\+json(;|$)/);
  expect(a.headers.get("access-control-allow-origin"), where).toBe("*");
  const body = JSON.parse(a.text) as ProblemBody;
  expect(body, where).toMatchObject({ type: `urn:delegation-lookup:problem:${code}`, status, code });
  expect(typeof body.title === "string" && body.title.length > 0, where).toBe(true);
  expect(typeof body.detail === "string" && body.detail.length > 0, where).toBe(true);
  expect(body.param, where).toBe(param);
  expect(a.text, where).not.toMatch(/\n\s+at |node_modules|SELECT |\.ts:\d+/);
  return body;
}
