import { createHash, timingSafeEqual } from "node:crypto";
import { Hono } from "hono";
import type { KeyStore } from "../access/keys";
import { Problem } from "../http/problem";
import { MAX_LABEL } from "../limits";

/** Whether the Authorization header is `Bearer <token>`, in time independent of where they differ. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer (.+)$/i.exec(header ?? "")?.[1] ?? "";
  // Hashed first: timingSafeEqual needs equal lengths, and the length must not leak either.
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(given), digest(token));
}

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
 * Key management for the operator, behind `Authorization: Bearer <ADMIN_TOKEN>`; off (404, saying
 * why) when no token is configured.
 */
export function admin(keys: KeyStore, token: string | undefined): Hono {
  const app = new Hono();

  app.use(async (c, next) => {
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
  });

  app.post("/keys", async (c) => c.json(await keys.create(label(await c.req.json().catch(() => undefined))), 201));
  app.get("/keys", async (c) => c.json(await keys.list()));
  app.delete("/keys/:id", async (c) => {
    const id = c.req.param("id");
    // No id holds NUL (Postgres's text cannot): no key, and no question the database would fail on.
    const revoked = id.includes("\u0000") ? undefined : await keys.revoke(id);
    if (!revoked) throw new Problem("not_found", `no key has the id ${JSON.stringify(id)}`);
    return c.json(revoked);
  });
  app.all("/keys", methodNotAllowed("GET, HEAD, POST"));
  app.all("/keys/:id", methodNotAllowed("DELETE"));

  return app;
}
