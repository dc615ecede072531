import { Hono, type MiddlewareHandler } from "hono";
import { requireAccess, throttleWrongTokens } from "./access/middleware";
import { FEED_ANSWERS } from "./feed/route";
import { drainBody } from "./http/drain-body";
import { notFound, Problem } from "./http/problem";
import { KEYLESS_MAX_BODY_BYTES, MAX_BATCH_BYTES } from "./limits";
import { openApiDocument } from "./openapi/document";
import { acrossChains, answeredProblem } from "./routes/across";
import { admin, ownerWebhooks } from "./routes/admin";
import { CHAINS_ANSWERS } from "./routes/chains";
import { allowCors, CORS, methodsOf } from "./routes/cors";
import { docs } from "./routes/docs";
import type { AppOptions, Env } from "./routes/env";
import { LISTING_CACHE_BYTES, ListingCache } from "./routes/listing-cache";
import { portal } from "./routes/portal";
import { mountRoutes, ROUTES, type Route, spentPerItem } from "./routes/table";
import { V1_ANSWERS } from "./routes/v1";
import { V2_ANSWERS } from "./routes/v2";
import { RPC_ANSWERS } from "./rpc/route";

/** The OpenAPI document, written once: it changes only with the code. */
const OPENAPI_JSON = JSON.stringify(openApiDocument());

/** What answers a registry route: its version's answers, or the app's own (/registry/chains). */
const registryAnswers = (route: Route) =>
  route.answer === "rpc"
    ? RPC_ANSWERS
    : route.answer === "feedEntries" || route.answer === "feedStream"
      ? FEED_ANSWERS
      : route.version === undefined
        ? CHAINS_ANSWERS
        : route.version === "v1"
          ? V1_ANSWERS
          : V2_ANSWERS;

/**
 * Mounts the table's /registry routes (api/routes/table.ts) on `app`, in its order; below each
 * version's `check/` only its checks: `check/history` is no path, not the history of a wallet named
 * "check".
 */
function mountRegistry(app: Hono<Env>) {
  const routes = ROUTES.filter((route) => route.path.startsWith("/registry/") || route.path.startsWith("/rpc/"));
  const declared = new Set(routes.map((route) => route.path));
  const checks = routes.filter((route) => route.answer === "check").map((route) => route.path);
  for (const below of new Set(checks.map((path) => path.slice(0, path.lastIndexOf("/"))))) {
    app.all(`${below}/*`, (c, next) => (declared.has(c.req.path) ? next() : notFound(c)));
  }
  mountRoutes(app, "", routes, (route) => {
    const answers = registryAnswers(route);
    const make = answers[route.answer];
    return route.across && make ? { [route.answer]: () => acrossChains(route, make(route)) } : answers;
  });
}

/**
 * The read-only HTTP API under /registry, and the key management beside it (/admin, /developer).
 * It depends only on a Store and the access layer, so it runs inside Ponder (over Ponder's
 * read-only db) or standalone (over Postgres).
 */
export function createApp(options: AppOptions): Hono<Env> {
  const app = new Hono<Env>();
  const listings = options.listings ?? new ListingCache(LISTING_CACHE_BYTES);

  // A keyed client may have 4 MiB of a refused batch read for nothing; a keyless one, its largest body.
  app.use(drainBody((c) => (c.var.budget?.rows() === undefined ? MAX_BATCH_BYTES : KEYLESS_MAX_BODY_BYTES)));
  // Every request without a valid key spends its client's budget, whatever it asks for; the
  // operator's, with the admin token, only when the token is wrong.
  const access = requireAccess({ ...options.access, perItem: spentPerItem }) as MiddlewareHandler;
  const adminAccess = throttleWrongTokens(options.access);
  app.use((c, next) => (c.req.path === "/admin" || c.req.path.startsWith("/admin/") ? adminAccess : access)(c, next));
  const served: MiddlewareHandler<Env> = async (c, next) => {
    const method = c.req.method;
    const allowed = methodsOf(c.req.path);
    if (!allowed.includes(method)) {
      const why = allowed.includes("POST") ? "this path takes what it asks in a POST's body" : "this API is read-only";
      throw new Problem("method_not_allowed", `${method} is not allowed; ${why}`, {
        headers: { Allow: allowed.join(", ") },
      });
    }
    c.set("store", options.store);
    c.set("listings", listings);
    c.set("history", options.history);
    c.set("alarms", options.alarms);
    c.set("indexers", options.indexers);
    c.set("chains", options.chains);
    c.set("behindAfterSeconds", options.behindAfterSeconds);
    c.set("moments", options.moments);
    c.set("changes", options.changes?.());
    c.set("feed", options.feed);
    await next();
  };
  app.use("/registry/*", allowCors, served);
  app.use("/rpc/*", allowCors, served);

  mountRegistry(app);
  app.route("/admin", admin(options.access.keys, options.access.adminToken, options.webhooks));
  app.route("/developer", ownerWebhooks(options.webhooks));
  app.route("/developer", portal);
  app.get("/openapi.json", (c) => c.body(OPENAPI_JSON, 200, { ...CORS, "Content-Type": "application/json" }));
  app.route("/docs", docs);

  app.all("*", notFound);

  app.onError((error) => answeredProblem(error).response(CORS));

  return app;
}
