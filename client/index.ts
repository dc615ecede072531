/**
 * A typed client for the delegation registry lookup API: openapi-fetch over the types of the
 * service's OpenAPI document (client/openapi.ts). Every path, parameter, answer and problem is
 * typed; answers' integers are exact (JSON numbers past 2^53, such as amounts and token ids, come as
 * bigints, which `JSON.parse` would round).
 */
import { isSafeNumber, parse } from "lossless-json";
import createClient from "openapi-fetch";
import type { paths } from "./openapi";

export type { components, operations, paths } from "./openapi";

/** JSON with exact integers: numbers past 2^53 as bigints. */
const exactJson = (text: string): unknown =>
  parse(text, undefined, (value) => (isSafeNumber(value) ? Number(value) : BigInt(value)));

/** The response, its `json()` parsing exactly. */
async function exactResponse(res: Response): Promise<Response> {
  const text = await res.text();
  const init = { status: res.status, statusText: res.statusText, headers: res.headers };
  const copy = new Response(text === "" ? null : text, init);
  return Object.assign(copy, { json: async () => exactJson(text) });
}

export type LookupClientOptions = {
  /** Sent as X-API-KEY; without one, requests count against the keyless limit. */
  apiKey?: string;
  /** The fetch to send with (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
};

/** A client of the service at `baseUrl`: `GET(path, { params })`, `POST(...)`, as openapi-fetch's. */
export function createLookupClient(baseUrl: string, options: LookupClientOptions = {}) {
  const send = options.fetch ?? ((request: Request) => fetch(request));
  return createClient<paths>({
    baseUrl,
    headers: options.apiKey === undefined ? {} : { "X-API-KEY": options.apiKey },
    fetch: async (request) => exactResponse(await send(request)),
  });
}

/** An answer across chains (`chainId=all` or a list of chains): each chain's answer, or its problem. */
type AcrossChains = { chains: unknown[] };

/**
 * The answer about one chain, typed as such: what a request with one `chainId` (or none) gets. The
 * routes that answer across chains are typed with both forms; an answer across chains throws here.
 */
export function oneChain<T>(data: T): Exclude<T, AcrossChains> {
  if (typeof data === "object" && data !== null && !Array.isArray(data) && "chains" in data) {
    throw new Error("an answer across chains: ask with one chainId, or read its `chains`");
  }
  return data as Exclude<T, AcrossChains>;
}
