import { isIP } from "node:net";
import { getConnInfo } from "@hono/node-server/conninfo";
import type { Context, MiddlewareHandler } from "hono";
import { Problem } from "../problem";
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

const seconds = (ms: number) => String(Math.ceil(ms / 1000));

function rateLimitHeaders(verdict: Verdict) {
  return {
    "RateLimit-Limit": String(verdict.limit),
    "RateLimit-Remaining": String(verdict.remaining),
    "RateLimit-Reset": seconds(verdict.resetMs),
  };
}

/**
 * A request with X-API-KEY must carry a valid key (a bad one is refused, never served as keyless);
 * a request without one is counted against its client's keyless limit.
 */
export function requireAccess(options: AccessOptions): MiddlewareHandler {
  return async (c, next) => {
    const key = c.req.header("X-API-KEY");
    if (key !== undefined) {
      if (!(await options.keys.use(key))) {
        throw new Problem(
          "invalid_api_key",
          "the X-API-KEY is unknown or revoked; send a valid key, or no key to be served within the keyless limit",
        );
      }
      return next();
    }
    const verdict = await options.limiter.take(client(c, options.trustProxy));
    const headers = rateLimitHeaders(verdict);
    if (!verdict.allowed) {
      const retryAfter = headers["RateLimit-Reset"];
      throw new Problem(
        "rate_limited",
        `at most ${verdict.limit} requests in ${verdict.windowMs / 1000} seconds without an API key; ` +
          `retry in ${retryAfter} s, or send an X-API-KEY`,
        { headers: { ...headers, "Retry-After": retryAfter } },
      );
    }
    await next();
    for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
  };
}
