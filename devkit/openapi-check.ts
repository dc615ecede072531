/**
 * Holds every answer the tests get to the OpenAPI document: `checkAnswer` runs in the
 * shared client (devkit/ask.ts) on each answer to a documented path. The operation is found as the
 * app's router finds it (the document lists operations in the routes' order, first match wins);
 * the status must be one the operation documents, with its content type, its body valid against
 * the schema for that status, and each documented header present valid against its own.
 */
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import { createParser } from "eventsource-parser";
import { openApiDocument } from "../api/openapi/document";
import { FORMATS } from "../api/openapi/schemas";

const DOCUMENT = openApiDocument();
const DOCUMENT_ID = "openapi.json";
/** The prefixes the document covers; answers elsewhere (Ponder's own endpoints, probes, pages) are not checked. */
const COVERED = ["/registry/", "/admin/"];

type Response = {
  description: string;
  headers?: Record<string, { $ref: string }>;
  content: Record<string, { schema: unknown }>;
};
type PathItem = Record<string, { responses: Record<string, Response> }>;

const ajv = new Ajv2020({ strict: false, allErrors: true, formats: FORMATS });
ajv.addSchema(DOCUMENT, DOCUMENT_ID);

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");
const validators = new Map<string, ValidateFunction>();
/** The validator of the schema at a JSON pointer of the document, compiled once. */
function validator(...parts: string[]): ValidateFunction {
  const at = `${DOCUMENT_ID}#/${pointer(...parts)}`;
  let validate = validators.get(at);
  if (!validate) {
    validate = ajv.getSchema(at);
    if (!validate) throw new Error(`the document has no schema at ${at}`);
    validators.set(at, validate);
  }
  return validate;
}

/** The paths' templates as patterns, in the document's order. */
const TEMPLATES = Object.keys(DOCUMENT.paths).map((template) => ({
  template,
  pattern: new RegExp(`^${template.replaceAll(/\{[^}]+\}/g, "[^/]+")}$`),
}));

/** The path as the app routes it: resolved as a URL (dot segments gone), as @hono/node-server does. */
function routedPath(target: string): string {
  try {
    return new URL(target, "http://localhost").pathname;
  } catch {
    return target.split("?")[0]!;
  }
}

export type CheckedAnswer = { method: string; path: string; status: number; headers: Headers; text: string };

/** Why the answer does not match the document (a list of reasons), or an empty list. */
export function answerMismatches(answer: CheckedAnswer): string[] {
  const method = answer.method.toLowerCase();
  const path = routedPath(answer.path);
  if (!COVERED.some((prefix) => path.startsWith(prefix)) || method === "options") return [];
  const template = TEMPLATES.find(
    (t) => t.pattern.test(path) && (DOCUMENT.paths[t.template] as PathItem)[method === "head" ? "get" : method],
  )?.template;
  if (template === undefined) {
    // No operation: the router's 404, or a 405 for a method the path does not allow, both problems.
    return problemMismatches(answer, ["components", "schemas", "Problem"]);
  }
  const operation = (DOCUMENT.paths[template] as PathItem)[method === "head" ? "get" : method]!;
  const documented = operation.responses[String(answer.status)];
  const where = `${answer.method} ${template}`;
  if (documented === undefined) {
    return [`${where} answered ${answer.status}, which the document does not list (${answer.text.slice(0, 300)})`];
  }
  const reasons: string[] = [];
  for (const [name, header] of Object.entries(documented.headers ?? {})) {
    const value = answer.headers.get(name);
    const validate = validator(...header.$ref.slice(2).split("/"), "schema");
    if (value !== null && !validate(value)) reasons.push(`${where} ${answer.status}: header ${name}: ${value}`);
  }
  if (method === "head") return reasons;
  const type = answer.headers.get("content-type")?.split(";")[0]?.trim() ?? "";
  if (!(type in documented.content)) {
    return [...reasons, `${where} ${answer.status}: content type ${type}, not ${Object.keys(documented.content)}`];
  }
  if (type === "text/event-stream") return [...reasons, ...streamMismatches(answer, where)];
  const schema = ["paths", template, method, "responses", String(answer.status), "content", type, "schema"];
  return [...reasons, ...bodyMismatches(answer, where, schema)];
}

/** A stream's events (as much of it as was read): each event's data a FeedEntry, its id the entry's seq. */
function streamMismatches(answer: CheckedAnswer, where: string): string[] {
  const reasons: string[] = [];
  const parser = createParser({
    onEvent: (event) => {
      const bad = bodyMismatches({ ...answer, text: event.data }, where, ["components", "schemas", "FeedEntry"]);
      reasons.push(...bad);
      const seq = /"seq":(\d+)/.exec(event.data)?.[1];
      if (bad.length === 0 && event.id !== seq) reasons.push(`${where}: event id ${event.id}, but seq ${seq}`);
    },
  });
  parser.feed(answer.text);
  return reasons;
}

function problemMismatches(answer: CheckedAnswer, schema: string[]): string[] {
  const where = `${answer.method} ${routedPath(answer.path)}`;
  if (answer.status < 400) return [`${where} answered ${answer.status}, but no operation of the document matches`];
  if (answer.method === "HEAD") return [];
  return bodyMismatches(answer, where, schema);
}

function bodyMismatches(answer: CheckedAnswer, where: string, schema: string[]): string[] {
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return [`${where} ${answer.status}: the body is not JSON: ${answer.text.slice(0, 200)}`];
  }
  const validate = validator(...schema);
  if (validate(body)) return [];
  const errors = ajv.errorsText(validate.errors, { dataVar: "body" });
  return [`${where} ${answer.status}: ${errors} (${answer.text.slice(0, 300)})`];
}

/** Throws when the answer does not match the document. */
export function checkAnswer(answer: CheckedAnswer): void {
  const reasons = answerMismatches(answer);
  if (reasons.length > 0) throw new Error(`the answer does not match /openapi.json:\n${reasons.join("\n")}`);
}
