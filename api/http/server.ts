import { createServer, type RequestListener, type Server } from "node:http";
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

/** Serves `listener` on `port` (and `hostname`, default all); resolves once listening, rejects if it cannot listen. */
export async function startHttpServer(options: {
  listener: RequestListener;
  port: number;
  hostname?: string;
}): Promise<HttpServer> {
  const server = createServer(options.listener);
  await new Promise<void>((listening, fail) => {
    server.once("error", fail);
    server.listen(options.port, options.hostname, () => listening());
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
