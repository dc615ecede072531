import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import { answerClientErrors } from "./client-error";

/**
 * The API on node:http, where it runs outside Ponder (`npm run serve`, the launcher's waiting
 * room): what Node's parser refuses (headers over its limit, bad bytes, timeouts) is answered as
 * problem+json like every other error, and idle connections are kept open for KEEP_ALIVE_MS, since
 * clients and load balancers keep theirs open for a while and closing first would race them.
 */

/** How long an idle connection stays open. */
const KEEP_ALIVE_MS = 65_000;

export type HttpServer = {
  server: Server;
  /**
   * Stops listening and closes idle connections; requests in flight get `drainMs` to finish, then
   * their connections are closed too. Resolves when every connection is closed.
   */
  close(drainMs?: number): Promise<void>;
};

/** Serves `fetch` on `port` (and `hostname`, default all); resolves once listening, rejects when it cannot listen. */
export async function startHttpServer(options: {
  fetch: (request: Request) => Response | Promise<Response>;
  port: number;
  hostname?: string;
}): Promise<HttpServer> {
  const server = await new Promise<Server>((listening, fail) => {
    const s = serve(options, () => listening(s as Server)) as Server;
    s.once("error", fail);
  });
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  answerClientErrors(server);
  return {
    server,
    close: (drainMs = 0) =>
      new Promise<void>((closed) => {
        server.close(() => closed());
        server.closeIdleConnections();
        if (drainMs > 0) setTimeout(() => server.closeAllConnections(), drainMs).unref();
        else server.closeAllConnections();
      }),
  };
}
