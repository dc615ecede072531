import type { Context, MiddlewareHandler } from "hono";

/** How long a request's unread body is read before the answer goes (see drainBody). */
const DRAIN_MS = 2_000;

/**
 * Reads to its end, and drops, what the app left unread of a request's body (a refusal that comes
 * before the body is read, or stops reading it: 401, 405, 413, 415), for DRAIN_MS and `maxBytes(c)`
 * bytes at most, before the answer goes. @hono/node-server (Ponder's server too) destroys a
 * connection whose request body was left unread: while the client still sends, that resets the
 * connection, and the client can lose the answer (RFC 9112, 9.6: close in stages). A body still
 * coming after that gets the answer with `Connection: close`: what a client may make the service
 * read for nothing is bounded.
 */
export const drainBody =
  (maxBytes: (c: Context) => number): MiddlewareHandler =>
  async (c, next) => {
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
    let left = maxBytes(c);
    try {
      for (;;) {
        const read = await Promise.race([reader.read(), timeUp]);
        if (read?.done) return;
        if (read !== undefined) left -= read.value.length;
        if (read === undefined || left < 0) return void c.res.headers.set("Connection", "close");
      }
    } catch {
      // The client went away: there is no one left to answer.
    } finally {
      clearTimeout(timer);
    }
  };
