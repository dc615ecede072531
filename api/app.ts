import { Hono, type MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { type AccessVariables, requireAccess } from "./access/middleware";
import type { Access } from "./access/open";
import { admin } from "./admin";
import type { ChainAlarms } from "./chain-alarms";
import { chains } from "./chains";
import { docs } from "./docs";
import type { HistoryStore } from "./history-store";
import { LISTING_CACHE_BYTES, ListingCache } from "./listing-cache";
import { openApiDocument } from "./openapi/document";
import { portal } from "./portal";
import { notFound, Problem } from "./problem";
import { type Store, StoreBusy } from "./store";
import { databaseUnavailable, databaseUnreachable } from "./unavailable";
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

export type Env = {
  Variables: AccessVariables & {
    store: Store;
    /** Whole wallet listings kept rendered, this app's (api/listing-cache.ts). */
    listings: ListingCache;
    history: HistoryStore | undefined;
    chains: readonly ServedChain[];
    alarms: ChainAlarms;
    behindAfterSeconds: number;
  };
};

/** The batch checks' paths: the only ones that take a POST. */
const BATCH_PATH = /^\/registry\/v[12]\/check$/;
/**
 * What a /registry path allows (OPTIONS answers CORS preflights): the API is read-only, so GET and
 * HEAD, but for the batch checks, which take their checks in a POST's body.
 */
const methodsOf = (path: string) => (BATCH_PATH.test(path) ? ["POST", "OPTIONS"] : ["GET", "HEAD", "OPTIONS"]);
/** The response headers a browser may read across origins. */
const EXPOSED = ["X-Indexed-Block", "Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"];
/** The CORS headers of every answer but a preflight's (errors' too, so that a browser can read the problem). */
export const CORS = { "Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": EXPOSED.join(",") };
/** A preflight's answer, by hono/cors. */
const preflight = cors({
  origin: "*",
  allowMethods: (_, c) => methodsOf(c.req.path),
  allowHeaders: ["X-API-KEY", "Content-Type"],
  exposeHeaders: EXPOSED,
  maxAge: 86400,
});

/**
 * CORS: hono/cors answers preflights; every other request gets CORS's headers before its answer is
 * made. (hono/cors sets them on a response made beforehand, which Hono then merges with the
 * route's, and on @hono/node-server that builds a full Response per request: its allocations outlived
 * the young generation and made the heap grow for a minute under load.)
 */
const allowCors: MiddlewareHandler = (c, next) => {
  if (c.req.method === "OPTIONS") {
    // A preflight's answer lists what the path allows, as the 405 of any other method does.
    c.header("Allow", methodsOf(c.req.path).join(", "));
    return preflight(c, next);
  }
  for (const [name, value] of Object.entries(CORS)) c.header(name, value);
  return next();
};

/** The OpenAPI document, written once: it changes only with the code. */
const OPENAPI_JSON = JSON.stringify(openApiDocument());

/** How long a request's unread body is read before the answer goes (see drainBody). */
const DRAIN_MS = 2_000;

/**
 * Reads to its end, and drops, what the app left unread of a request's body (a refusal that comes
 * before the body is read, or stops reading it: 401, 405, 413, 415), for DRAIN_MS at most, before
 * the answer goes. @hono/node-server (Ponder's server too) destroys a connection whose request
 * body was left unread: while the client still sends, that resets the connection, and the client
 * can lose the answer (RFC 9112, 9.6: close in stages). A body still coming after DRAIN_MS gets
 * the answer with `Connection: close`.
 */
const drainBody: MiddlewareHandler = async (c, next) => {
  await next();
  // A GET or HEAD has no body; asking for it would build a full Request (@hono/node-server's is lazy).
  if (c.req.method === "GET" || c.req.method === "HEAD") return;
  const body = c.req.raw.body;
  if (body === null || body.locked) return;
  const reader = body.getReader();
  let timer: NodeJS.Timeout | undefined;
  const timeUp = new Promise<undefined>((ok) => {
    timer = setTimeout(() => ok(undefined), DRAIN_MS);
  });
  try {
    for (;;) {
      const read = await Promise.race([reader.read(), timeUp]);
      if (read === undefined) return void c.res.headers.set("Connection", "close");
      if (read.done) return;
    }
  } catch {
    // The client went away: there is no one left to answer.
  } finally {
    clearTimeout(timer);
  }
};

export type AppOptions = {
  store: Store;
  /** Answers at past blocks, pages and the events; undefined where nothing is indexed yet (503). */
  history: HistoryStore | undefined;
  chains: readonly ServedChain[];
  /** Chains refused for a reorganization deeper than the finality depth (api/chain-alarms.ts). */
  alarms: ChainAlarms;
  /** Keys and the keyless limit on /registry; the admin endpoints' token. */
  access: Access;
  /** A chain whose newest indexed block is older is reported `behind` (BEHIND_AFTER_SECONDS). */
  behindAfterSeconds: number;
};

/**
 * The read-only HTTP API under /registry, and the key management beside it (/admin, /developer).
 * It depends only on a Store and the access layer, so it runs inside Ponder (over Ponder's
 * read-only db) or standalone (over Postgres).
 */
export function createApp(options: AppOptions): Hono<Env> {
  const app = new Hono<Env>();
  const listings = new ListingCache(LISTING_CACHE_BYTES);

  app.use(drainBody);
  app.use("/registry/*", allowCors, async (c, next) => {
    const method = c.req.method;
    const allowed = methodsOf(c.req.path);
    if (!allowed.includes(method)) {
      const why = allowed.includes("POST") ? "this path takes a batch of checks in a POST" : "this API is read-only";
      throw new Problem("method_not_allowed", `${method} is not allowed; ${why}`, {
        headers: { Allow: allowed.join(", ") },
      });
    }
    c.set("store", options.store);
    c.set("listings", listings);
    c.set("history", options.history);
    c.set("alarms", options.alarms);
    c.set("chains", options.chains);
    c.set("behindAfterSeconds", options.behindAfterSeconds);
    await next();
  });
  app.use("/registry/*", requireAccess(options.access));

  app.route("/registry/v2", v2);
  app.route("/registry/v1", v1);
  app.route("/registry/chains", chains);

  app.route("/admin", admin(options.access.keys, options.access.adminToken));
  app.route("/developer", portal);
  app.get("/openapi.json", (c) => c.body(OPENAPI_JSON, 200, { ...CORS, "Content-Type": "application/json" }));
  app.route("/docs", docs);

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
      return databaseUnreachable().response(CORS);
    }
    console.error(error);
    return new Problem("internal", "the service failed to answer; the error is logged").response(CORS);
  });

  return app;
}
