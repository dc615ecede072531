import { Hono } from "hono";
import { requireAccess } from "./access/middleware";
import type { Access } from "./access/open";
import { admin } from "./admin";
import { behindAfterSeconds, chains } from "./chains";
import { portal } from "./portal";
import { notFound, Problem } from "./problem";
import { type Store, StoreBusy } from "./store";
import { databaseUnavailable } from "./unavailable";
import { v1 } from "./v1";
import { v2 } from "./v2";

/** Where a registry is, and the block its indexing starts from (null: not known yet). */
export type ServedRegistry = { address: string; startBlock: number | null };

/** A chain this instance serves, and the registries it indexes there. */
export type ServedChain = {
  id: number;
  name: string;
  title: string;
  testnet: boolean;
  v1?: ServedRegistry;
  v2?: ServedRegistry;
};

export type Env = { Variables: { store: Store; chains: readonly ServedChain[]; behindAfterSeconds: number } };

const ALLOWED_METHODS = "GET, HEAD, OPTIONS";
const CORS = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Expose-Headers":
    "X-Indexed-Block, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset",
};

export type AppOptions = {
  store: Store;
  chains: readonly ServedChain[];
  /** Keys and the keyless limit on /registry; the admin endpoints' token. */
  access: Access;
  /** A chain whose newest indexed block is older is reported `behind` (default: see behindAfterSeconds). */
  behindAfterSeconds?: number;
};

/**
 * The read-only HTTP API under /registry, and the key management beside it (/admin, /developer).
 * It depends only on a Store and the access layer, so it runs inside Ponder (over Ponder's
 * read-only db) or standalone (over Postgres).
 */
export function createApp(options: AppOptions): Hono<Env> {
  const app = new Hono<Env>();
  const behindAfter = options.behindAfterSeconds ?? behindAfterSeconds(process.env);

  // The registry API is read-only: GET and HEAD, and OPTIONS for CORS preflights.
  app.use("/registry/*", async (c, next) => {
    const method = c.req.method;
    if (method === "OPTIONS") {
      return c.body(null, 204, {
        ...CORS,
        "Access-Control-Allow-Methods": ALLOWED_METHODS,
        "Access-Control-Allow-Headers": "X-API-KEY, Content-Type",
        "Access-Control-Max-Age": "86400",
        Allow: ALLOWED_METHODS,
      });
    }
    if (method !== "GET" && method !== "HEAD") {
      throw new Problem("method_not_allowed", `${method} is not allowed; this API is read-only`, {
        headers: { Allow: ALLOWED_METHODS },
      });
    }
    c.set("store", options.store);
    c.set("chains", options.chains);
    c.set("behindAfterSeconds", behindAfter);
    await next();
    for (const [name, value] of Object.entries(CORS)) c.res.headers.set(name, value);
  });
  app.use("/registry/*", requireAccess(options.access));

  app.route("/registry/v2", v2);
  app.route("/registry/v1", v1);
  app.route("/registry/chains", chains);

  app.route("/admin", admin(options.access.keys, options.access.adminToken));
  app.route("/developer", portal);

  app.all("*", notFound);

  app.onError((error) => {
    if (error instanceof Problem) return error.response(CORS);
    if (error instanceof StoreBusy) {
      return new Problem("chain_syncing", `${error.message}; ask again in a moment`, {
        headers: { "Retry-After": "1" },
      }).response(CORS);
    }
    if (databaseUnavailable(error)) {
      // Not a bug, and not a reason to guess: the answer needs the database.
      return new Problem("chain_syncing", "the service's database cannot be reached; ask again in a moment", {
        headers: { "Retry-After": "5" },
      }).response(CORS);
    }
    console.error(error);
    return new Problem("internal", "the service failed to answer; the error is logged").response(CORS);
  });

  return app;
}
