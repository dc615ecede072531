import { readFileSync } from "node:fs";
import { Hono } from "hono";

// Read once, at startup: the page is static; it talks to /admin and /developer/webhooks from the browser.
const page = readFileSync(new URL("./portal.html", import.meta.url), "utf8");

const HEADERS = {
  "Cache-Control": "no-store",
  // The page's own inline script and style only; it fetches this origin's API and nothing else.
  "Content-Security-Policy":
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "Referrer-Policy": "no-referrer",
  "X-Content-Type-Options": "nosniff",
};

/**
 * The developer portal: the operator signs in with ADMIN_TOKEN, creates, lists and revokes keys; a
 * key's holder signs in with the key and manages its webhook endpoints.
 */
export const portal = new Hono();

portal.get("/", (c) => c.html(page, 200, HEADERS));
