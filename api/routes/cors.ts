import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { allowed, ROUTES, RouteMatcher } from "./table";

/** The routes under /registry and /rpc, by their paths: compiled once. */
const REGISTRY = new RouteMatcher(
  ROUTES.filter((route) => route.path.startsWith("/registry/") || route.path.startsWith("/rpc/")),
);
/**
 * What a /registry (or /rpc) path allows (OPTIONS answers CORS preflights): its routes' methods (GET and HEAD,
 * but for batch checks and bulk listings, which take what they ask in a POST's body); a path no
 * route has, GET and HEAD, as the API is read-only (and answers it 404).
 */
export const methodsOf = (path: string) => {
  const routes = REGISTRY.all(path);
  return [...(routes.length > 0 ? allowed(routes) : ["GET", "HEAD"]), "OPTIONS"];
};
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
export const allowCors: MiddlewareHandler = (c, next) => {
  if (c.req.method === "OPTIONS") {
    // A preflight's answer lists what the path allows, as the 405 of any other method does.
    c.header("Allow", methodsOf(c.req.path).join(", "));
    return preflight(c, next);
  }
  for (const [name, value] of Object.entries(CORS)) c.header(name, value);
  return next();
};
