import { getConnInfo } from "@hono/node-server/conninfo";
import type { Context, MiddlewareHandler } from "hono";
import { FEED_STREAMS_PER_KEY_DEFAULT } from "../../core/settings";
import { budgetHolder } from "../http/address";
import { PROCESS_LOAD } from "../http/load";
import { Problem } from "../http/problem";
import { databaseUnavailable, databaseUnreachable } from "../http/unavailable";
import { KEYLESS_ROWS_PER_UNIT, KEYLESS_STREAMS } from "../limits";
import type { KeyStore } from "./keys";
import type { RateLimiter, Verdict } from "./limit";
import { refusalPace } from "./pace";

export type AccessOptions = {
  keys: KeyStore;
  limiter: RateLimiter;
  /** Behind a proxy the operator trusts: the client is the first address of X-Forwarded-For. */
  trustProxy: boolean;
  /** The change feed's streams a key may hold open at once (a keyless client: KEYLESS_STREAMS). */
  streamsPerKey?: number;
  /** Whether to refuse a keyless request because the process is saturated (default: this process's). */
  load?: { shed(): boolean };
  /**
   * Whether a request's route spends its units itself, one per item of its body (the route table's
   * costs: api/routes/table.ts, spentPerItem); by default none does.
   */
  perItem?: (method: string, path: string) => boolean;
};

/**
 * Whose budget a keyless request spends. A forwarded value that is not an IP address is not one
 * the proxy wrote: it is ignored, so that clients cannot mint budgets (or fill the limiter's
 * memory) with made-up names.
 */
function holderOf(c: Context, trustProxy: boolean): string {
  const forwarded = trustProxy ? c.req.header("X-Forwarded-For")?.split(",")[0]?.trim() : undefined;
  const socket = getConnInfo(c).remote.address;
  return (forwarded && budgetHolder(forwarded)) || (socket && budgetHolder(socket)) || "unknown";
}

const seconds = (ms: number) => String(Math.max(1, Math.ceil(ms / 1000)));

function rateLimitHeaders(verdict: Verdict) {
  return {
    "RateLimit-Limit": String(verdict.limit),
    "RateLimit-Remaining": String(verdict.remaining),
    "RateLimit-Reset": seconds(verdict.resetMs),
  };
}

/** What a request costs its client, when it has no key (api/access/limit.ts). */
export type Budget = {
  /** Spends `units` before the work, all or none: else 429 rate_limited, `why` saying what they are for. */
  spend(units: number, why?: string): Promise<void>;
  /** Charges `units` after the work, whatever is left (negative: gives back an overestimate). */
  charge(units: number): Promise<void>;
  /** The rows the budget left pays for, beyond what the request has spent; undefined: no bound (a key). */
  rows(): number | undefined;
  /** The 429 of a read (`what`) that would take more than the `cap` rows the request may read. */
  tooMuch(what: string, cap: number): Problem;
  /** What an answer says of the budget (RateLimit-*): none for a key. */
  headers(): Record<string, string>;
};

/** A keyed request's budget: none. */
export const UNBOUNDED: Budget = {
  spend: async () => {},
  charge: async () => {},
  rows: () => undefined,
  tooMuch: () => new Problem("internal", "a request with a key has no budget to exceed"),
  headers: () => ({}),
};

/** The units a read of `rows` rows costs beyond the `paid` units its request has spent (on arrival, one). */
export const unitsBeyond = (rows: number, paid = 1) => Math.max(0, Math.ceil(rows / KEYLESS_ROWS_PER_UNIT) - paid);

/** The rows a request that has spent `paid` units may read (undefined: no bound, a key). */
export const rowCap = (budget: Budget, paid = 1) => {
  const left = budget.rows();
  return left === undefined ? undefined : left + paid * KEYLESS_ROWS_PER_UNIT;
};

/**
 * Who a request is, for what it may hold open (the change feed's streams): its key, or its
 * keyless budget's holder, and how many.
 */
export type Client = { id: string; keyed: boolean; streams: number };

/** What the access check leaves a route: the request's keyless budget, and who it is. */
export type AccessVariables = { budget: Budget; client: Client };

/**
 * What a failed spend of the budget throws: a budget kept in a database that cannot be reached (an
 * API replica's ACCESS_DATABASE_URL, its primary, down or cut off) is a 503 with Retry-After, in
 * words that say a key is still served; any other failure as it is.
 */
function unreachableBudget(error: unknown): never {
  if (!databaseUnavailable(error)) throw error;
  throw new Problem(
    "chain_syncing",
    "the keyless budget cannot be checked now: its database does not answer; retry in 5 s, or send an X-API-KEY",
    { headers: { "Retry-After": "5" } },
  );
}

/** The keyless budget of `holder`, for one request; `headers` are its last RateLimit headers. */
function keylessBudget(limiter: RateLimiter, holder: string) {
  let last: Verdict | undefined;
  const refuse = (verdict: Verdict, detail: string) => {
    const headers = rateLimitHeaders(verdict);
    return new Problem("rate_limited", detail, { headers: { ...headers, "Retry-After": headers["RateLimit-Reset"] } });
  };
  const budget: Budget = {
    async spend(units, why) {
      if (units === 0) return;
      const verdict = await limiter.take(holder, units).catch(unreachableBudget);
      last = verdict;
      if (verdict.allowed) return;
      const limit = `at most ${verdict.limit} units in ${verdict.windowMs / 1000} seconds without an API key`;
      throw refuse(
        verdict,
        units > verdict.limit
          ? `${limit}, and this request costs ${units}${why ? ` (${why})` : ""}: send an X-API-KEY, or ask for less`
          : `${limit}${why ? ` (this request costs ${units}: ${why})` : ""}; retry in ${seconds(verdict.resetMs)} s, ` +
              "or send an X-API-KEY",
      );
    },
    async charge(units) {
      if (units !== 0) last = await limiter.charge(holder, units).catch(unreachableBudget);
    },
    rows: () => (last?.remaining ?? 0) * KEYLESS_ROWS_PER_UNIT,
    tooMuch: (what, cap) =>
      refuse(
        last!,
        `${what} holds more than the ${cap} rows this client's keyless budget pays for now (a unit per ` +
          `${KEYLESS_ROWS_PER_UNIT}): ask for pages (limit), or send an X-API-KEY`,
      ),
    headers: () => (last === undefined ? {} : rateLimitHeaders(last)),
  };
  return budget;
}

/** Counts a use of `key`, or throws 401 invalid_api_key (saying `otherwise`) when it is unknown or revoked. */
async function useKey(keys: KeyStore, key: string, otherwise: string): Promise<void> {
  if (!(await keys.use(key))) throw new Problem("invalid_api_key", `the X-API-KEY is unknown or revoked; ${otherwise}`);
}

/**
 * A request with a valid X-API-KEY is served without a budget. Any other is refused while the
 * process is saturated (a growing share of them, api/http/load.ts), and spends its client's
 * keyless budget: one unit on arrival (a batch's items are spent by its route, once it has read how
 * many; on arrival it is only checked to have a unit left, so that a spent budget is refused before
 * its body is read), and what its route reads beyond. A key this process's copy cannot vouch for is
 * looked up only once that unit is spent (but one the copy held when last read: at no cost, see
 * below): unknown or revoked keys are 401 while the budget lasts, then 429 with no lookup. Its
 * refusals (429) are paced (api/access/pace.ts).
 */
export function requireAccess(options: AccessOptions): MiddlewareHandler<{ Variables: AccessVariables }> {
  const pace = refusalPace();
  return async (c, next) => {
    const key = c.req.header("X-API-KEY");
    // A CORS preflight carries no key, even for a keyed request: it is not counted (browsers keep its answer).
    // A key's own streams: counted by the key (in memory only), as the operator bounds them.
    const keyed = () => {
      c.set("budget", UNBOUNDED);
      const streams = options.streamsPerKey ?? FEED_STREAMS_PER_KEY_DEFAULT;
      c.set("client", { id: `key ${key}`, keyed: true, streams });
    };
    if (c.req.method === "OPTIONS" || (key !== undefined && options.keys.useHeld(key))) {
      keyed();
      return next();
    }
    // A key the copy held, too old now to vouch for it (its reads late behind a load, or the keys'
    // database slow: api/access/valid-keys.ts), is looked up at no keyless cost, and never shed.
    if (key !== undefined && options.keys.heldOnce(key)) {
      await useKey(options.keys, key, "send a valid key, or no key to be served within the keyless limit");
      keyed();
      return next();
    }
    const holder = holderOf(c, options.trustProxy);
    const budget = keylessBudget(options.limiter, holder);
    c.set("budget", budget);
    c.set("client", { id: holder, keyed: false, streams: KEYLESS_STREAMS });
    try {
      // Saturated: keyed requests first. The refusal costs next to nothing, and no budget.
      if ((options.load ?? PROCESS_LOAD).shed()) {
        throw new Problem(
          "rate_limited",
          "the service is busy: requests without an API key are turned away for now; " +
            "retry in 1 s, or send an X-API-KEY",
          { headers: { "Retry-After": "1" } },
        );
      }
      if (key !== undefined) {
        await budget.spend(1, "an API key this process cannot vouch for is looked up");
        await useKey(options.keys, key, "send a valid key, or no key to be served within the keyless limit");
        // A valid key (new since this process's last copy of the keys): its request is not keyless.
        await budget.charge(-1);
        keyed();
        return next();
      }
      await budget.spend(1);
      // Items are spent by their route: here the request was only checked to have a unit left.
      if (options.perItem?.(c.req.method, c.req.path)) await budget.charge(-1);
    } catch (error) {
      if (error instanceof Problem) {
        error.extra.headers = { ...budget.headers(), ...error.extra.headers };
        if (error.code === "rate_limited") await pace.wait(holder);
      }
      throw error;
    }
    await next();
    for (const [name, value] of Object.entries(budget.headers())) c.res.headers.set(name, value);
    if (c.res.status === 429) await pace.wait(holder);
  };
}

/**
 * The admin endpoints' guard against guessing: a request spends a unit of its client's budget of
 * admin attempts (one of its own, beside the keyless one) before its token is compared, refused
 * 429 once that is spent, given back when the token was right: a client may try 25 wrong tokens in
 * 10 seconds, each refusal (401 and 429) paced as the keyless ones are (api/access/pace.ts).
 */
export function throttleWrongTokens(options: AccessOptions): MiddlewareHandler {
  const pace = refusalPace();
  return async (c, next) => {
    const holder = `${holderOf(c, options.trustProxy)} admin`;
    const budget = keylessBudget(options.limiter, holder);
    try {
      await budget.spend(1, "a request with the operator's token, checked before it is compared");
    } catch (error) {
      await pace.wait(holder);
      throw error;
    }
    await next();
    if (c.res.status === 401) await pace.wait(holder);
    else await budget.charge(-1);
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
