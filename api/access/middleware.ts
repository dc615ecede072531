import { isIP } from "node:net";
import { getConnInfo } from "@hono/node-server/conninfo";
import type { Context, MiddlewareHandler } from "hono";
import { Problem } from "../http/problem";
import { databaseUnavailable, databaseUnreachable } from "../http/unavailable";
import type { KeyStore } from "./keys";
import type { RateLimiter, Verdict } from "./limit";

export type AccessOptions = {
  keys: KeyStore;
  limiter: RateLimiter;
  /** Behind a proxy the operator trusts: the client is the first address of X-Forwarded-For. */
  trustProxy: boolean;
};

/**
 * The client a keyless request is counted against. A forwarded value that is not an IP address is
 * not one the proxy wrote: it is ignored, so that clients cannot mint budgets (or fill the limiter's
 * memory) with made-up names.
 */
function client(c: Context, trustProxy: boolean): string {
  const forwarded = trustProxy ? c.req.header("X-Forwarded-For")?.split(",")[0]?.trim() : undefined;
  return (forwarded && isIP(forwarded) ? forwarded : undefined) || getConnInfo(c).remote.address || "unknown";
}

/** Counts a use of `key`, or throws 401 invalid_api_key (saying `otherwise`) when it is unknown or revoked. */
async function useKey(keys: KeyStore, key: string, otherwise: string): Promise<void> {
  if (!(await keys.use(key))) throw new Problem("invalid_api_key", `the X-API-KEY is unknown or revoked; ${otherwise}`);
}

const seconds = (ms: number) => String(Math.ceil(ms / 1000));

function rateLimitHeaders(verdict: Verdict) {
  return {
    "RateLimit-Limit": String(verdict.limit),
    "RateLimit-Remaining": String(verdict.remaining),
    "RateLimit-Reset": seconds(verdict.resetMs),
  };
}

/** What the access check leaves a route: how to count a batch's items against the keyless limit. */
export type AccessVariables = {
  /**
   * Counts `count` requests (a batch's items) against the keyless limit, or throws `rate_limited`
   * having counted none. A no-op for a keyed request, and for any but a POST (counted on arrival).
   */
  spendKeyless: (count: number) => Promise<void>;
};

/**
 * A request with X-API-KEY must carry a valid key (a bad one is refused, never served as keyless);
 * a request without one is counted against its client's keyless limit: on arrival, as one request,
 * or for a POST (a batch of checks) by the route, once it knows how many items the batch holds.
 */
export function requireAccess(options: AccessOptions): MiddlewareHandler<{ Variables: AccessVariables }> {
  return async (c, next) => {
    const key = c.req.header("X-API-KEY");
    if (key !== undefined) {
      await useKey(options.keys, key, "send a valid key, or no key to be served within the keyless limit");
      c.set("spendKeyless", async () => {});
      return next();
    }
    let headers: Record<string, string> | undefined;
    const spend = async (count: number) => {
      const verdict = await options.limiter.take(client(c, options.trustProxy), count);
      const these = rateLimitHeaders(verdict);
      headers = these;
      if (!verdict.allowed) {
        const retryAfter = these["RateLimit-Reset"];
        const limit = `at most ${verdict.limit} requests in ${verdict.windowMs / 1000} seconds without an API key`;
        throw new Problem(
          "rate_limited",
          count > verdict.limit
            ? `${limit}, and this batch counts ${count} (one per check): send an X-API-KEY, or smaller batches`
            : `${limit}${count === 1 ? "" : ` (this batch counts ${count})`}; ` +
                `retry in ${retryAfter} s, or send an X-API-KEY`,
          { headers: { ...these, "Retry-After": retryAfter } },
        );
      }
    };
    if (c.req.method === "POST") c.set("spendKeyless", spend);
    else {
      await spend(1);
      c.set("spendKeyless", async () => {});
    }
    await next();
    for (const [name, value] of Object.entries(headers ?? {})) c.res.headers.set(name, value);
  };
}

/**
 * Serves only requests with a valid X-API-KEY (counted as the key's use); any other is answered 401
 * invalid_api_key, keyless ones too: for what has no keyless budget (GraphQL). It answers refusals
 * itself, as it runs outside the API app (and its error handling): a database that cannot be
 * reached is a 503 chain_syncing, as the app answers it.
 */
export function requireKey(keys: KeyStore, what: string): MiddlewareHandler {
  return async (c, next) => {
    const key = c.req.header("X-API-KEY");
    try {
      if (key === undefined)
        throw new Problem("invalid_api_key", `${what} takes only requests with an X-API-KEY: send your API key`);
      await useKey(keys, key, `${what} takes only requests with a valid key`);
    } catch (error) {
      if (error instanceof Problem) return error.response();
      if (databaseUnavailable(error)) return databaseUnreachable().response();
      throw error;
    }
    await next();
  };
}
