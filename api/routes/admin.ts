import { createHash, timingSafeEqual } from "node:crypto";
import { Hono, type MiddlewareHandler } from "hono";
import { keyId } from "../access/key";
import type { KeyStore } from "../access/keys";
import { UNBOUNDED } from "../access/middleware";
import { Problem } from "../http/problem";
import { MAX_LABEL } from "../limits";
import { type WebhookOwner, webhookAnswers } from "../webhooks/admin";
import type { WebhookAdmin } from "../webhooks/store";
import type { Env } from "./env";
import { type Answers, allowed, honoPath, mountRoutes, ROUTES, type Route } from "./table";

/** Whether the Authorization header is `Bearer <token>`, in time independent of where they differ. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer (.+)$/i.exec(header ?? "")?.[1] ?? "";
  // Hashed first: timingSafeEqual needs equal lengths, and the length must not leak either.
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(given), digest(token));
}

/** The 405 of a method a path does not allow: `allow` lists those it does. */
function methodNotAllowed(allow: string) {
  return (c: { req: { method: string } }): never => {
    throw new Problem("method_not_allowed", `${c.req.method} is not allowed here`, { headers: { Allow: allow } });
  };
}

/** The new key's label, from a JSON body `{"label": "..."}` (a body that is not JSON has none). */
function label(body: unknown): string {
  const value = (body as { label?: unknown } | null | undefined)?.label;
  if (value === undefined)
    throw new Problem("missing_parameter", `'label' is required: send JSON {"label": "<what the key is for>"}`, {
      param: "label",
    });
  // Postgres's text cannot hold NUL: refused here, not failed in the database.
  if (typeof value !== "string" || value.trim() === "" || value.length > MAX_LABEL || value.includes("\u0000")) {
    throw new Problem(
      "invalid_parameter",
      `'label' must be a non-blank string of at most ${MAX_LABEL} characters, without NUL`,
      { param: "label" },
    );
  }
  return value.trim();
}

/**
 * The guard of the operator's key management: `Authorization: Bearer <ADMIN_TOKEN>`; off (404, saying
 * why) when no token is configured.
 */
function adminGuard(token: string | undefined): MiddlewareHandler {
  return async (c, next) => {
    if (token === undefined)
      throw new Problem("not_found", "the admin endpoints are off: the operator has not set ADMIN_TOKEN");
    if (!bearerMatches(c.req.header("Authorization"), token)) {
      throw new Problem("invalid_admin_token", "send the operator's token as Authorization: Bearer <ADMIN_TOKEN>", {
        headers: { "WWW-Authenticate": 'Bearer realm="admin"' },
      });
    }
    await next();
    // Answers name keys, and one carries a key's text.
    c.res.headers.set("Cache-Control", "no-store");
  };
}

/** The webhooks' routes where this app has no endpoints' store (an app made for a test). */
const WEBHOOKS_OFF: Answers = Object.fromEntries(
  ROUTES.filter((route) => route.path.startsWith("/admin/webhooks")).map((route) => [
    route.answer,
    () => () => {
      throw new Problem("not_found", "webhooks are off in this process");
    },
  ]),
);

/** The key a /developer request came with (the access middleware has found it valid), by its id. */
const keyOwner: WebhookOwner = (c) => {
  const key = c.req.header("X-API-KEY");
  const id = key !== undefined && c.var.budget === UNBOUNDED ? keyId(key) : undefined;
  if (id === undefined)
    throw new Problem("invalid_api_key", "a key's webhook endpoints are managed with that key: send its X-API-KEY");
  return id;
};

/** What answers the key management's routes (api/routes/table.ts), over `keys`. */
function adminAnswers(keys: KeyStore): Answers {
  return {
    createKey: () => async (c) => c.json(await keys.create(label(await c.req.json().catch(() => undefined))), 201),
    listKeys: () => async (c) => c.json(await keys.list()),
    revokeKey: () => async (c) => {
      const id = c.req.param("id") ?? "";
      // No id holds NUL (Postgres's text cannot): no key, and no question the database would fail on.
      const revoked = id.includes("\u0000") ? undefined : await keys.revoke(id);
      if (!revoked) throw new Problem("not_found", `no key has the id ${JSON.stringify(id)}`);
      return c.json(revoked);
    },
  };
}

/**
 * `routes` on `app` under `prefix`, each answered by `answers`; any other method of their paths is a
 * 405 naming those they allow.
 */
function mountScope(app: Hono<Env>, prefix: string, routes: readonly Route[], answers: Answers): Hono<Env> {
  mountRoutes(app, prefix, routes, () => answers);
  for (const path of new Set(routes.map((route) => route.path))) {
    const allow = allowed(routes.filter((route) => route.path === path)).join(", ");
    app.all(honoPath(path.slice(prefix.length)), methodNotAllowed(allow));
  }
  return app;
}

/**
 * Key management for the operator, at /admin: the table's admin routes, behind `Authorization:
 * Bearer <ADMIN_TOKEN>`; off (404, saying why) when no token is configured.
 */
export function admin(keys: KeyStore, token: string | undefined, webhooks?: WebhookAdmin): Hono<Env> {
  const answers = { ...adminAnswers(keys), ...(webhooks ? webhookAnswers(webhooks) : WEBHOOKS_OFF) };
  const routes = ROUTES.filter((route) => route.access === "admin");
  return mountScope(new Hono<Env>().use(adminGuard(token)), "/admin", routes, answers);
}

/** A key's own webhook endpoints, at /developer/webhooks: only with that key (X-API-KEY). */
export function ownerWebhooks(webhooks?: WebhookAdmin): Hono<Env> {
  // "/webhooks/*" guards "/webhooks" too; the portal's page, /developer, is not behind it.
  const app = new Hono<Env>().use("/webhooks/*", async (c, next) => {
    keyOwner(c);
    await next();
    c.res.headers.set("Cache-Control", "no-store");
  });
  const answers = webhooks ? webhookAnswers(webhooks, keyOwner) : WEBHOOKS_OFF;
  return mountScope(
    app,
    "/developer",
    ROUTES.filter((route) => route.access === "owner"),
    answers,
  );
}
