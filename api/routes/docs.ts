/**
 * The API reference page (`/docs`): Swagger UI (swagger-ui-dist, its published files served as they
 * are) rendering `/openapi.json`, with "Try it out" sending requests to this service. Every asset
 * comes from this service, so the page works with no internet; its Content-Security-Policy allows
 * this origin only, so nothing on it can reach elsewhere either.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Hono } from "hono";

/** swagger-ui-dist's directory, found as Node finds the package. */
const SWAGGER_UI = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

/** The files the page loads, by the name it asks for: its bundle and its style sheet. */
const ASSETS: Record<string, string> = {
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "swagger-ui.css": "text/css; charset=utf-8",
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Delegation registry lookup: API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<main id="docs"></main>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

/** Swagger UI's settings: the document here, "Try it out" on, and no call to the public validator. */
const INIT = `window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#docs",
  deepLinking: true,
  tryItOutEnabled: true,
  validatorUrl: null,
  defaultModelsExpandDepth: 0,
});
`;

const HEADERS = {
  "Content-Security-Policy":
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; base-uri 'none'; " +
    "form-action 'none'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
};

/** The files read once, on first use: a replica that never serves the page never holds them. */
const read = new Map<string, Promise<string>>();

/** The reference page and its assets. */
export const docs = new Hono();

docs.get("/", (c) => c.html(PAGE, 200, HEADERS));
docs.get("/init.js", (c) => c.body(INIT, 200, { ...HEADERS, "Content-Type": "text/javascript; charset=utf-8" }));
docs.get("/:asset", async (c, next) => {
  const asset = c.req.param("asset");
  // Own names only: "constructor" or "__proto__" are not assets (they would name Object's own).
  if (!Object.hasOwn(ASSETS, asset)) return next();
  const type = ASSETS[asset]!;
  if (!read.has(asset)) read.set(asset, readFile(join(SWAGGER_UI, asset), "utf8"));
  const body = await read.get(asset)!;
  return c.body(body, 200, { ...HEADERS, "Content-Type": type, "Cache-Control": "public, max-age=86400" });
});
