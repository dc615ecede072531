import { createServer, type RequestListener, type Server } from "node:http";
import { Server as NetServer } from "node:net";
import { budgetHolder } from "./address";
import { answerClientErrors } from "./client-error";

/**
 * The API on node:http, where it runs outside Ponder (`npm run serve`, the launcher's waiting
 * room): what Node's parser refuses (headers over its limit, bad bytes, timeouts) is answered as
 * problem+json like every other error, and idle connections are kept open for KEEP_ALIVE_MS, since
 * clients and load balancers keep theirs open for a while and closing first would race them; a
 * request must come whole within seconds, and a client's connections are bounded (guardServer).
 */

/** How long an idle connection stays open. */
const KEEP_ALIVE_MS = 65_000;
/** How long a client may take to send a request's headers, and its whole request (Node's: 1 and 5 minutes). */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * The most connections one client (an IPv4 address, an IPv6 /64) may hold open: one more is closed
 * as it comes, before any of its bytes is read. Behind a trusted proxy every client is the proxy:
 * there is no such bound, and the proxy must bound each client's connections itself
 * (deploy/nginx.conf). Nor is there for this machine's own clients (loopback: a gateway beside the
 * service, the operator's tools), which are not the internet's.
 */
export const MAX_CONNECTIONS_PER_CLIENT = 64;

/**
 * The limits every server of the service keeps, Ponder's too: a connection that sends its request
 * slowly (to hold the server's sockets) is answered 408 and closed within seconds, and no client
 * holds more than MAX_CONNECTIONS_PER_CLIENT connections.
 */
/** Whether a client is this machine itself: 127.0.0.0/8, or ::1's /64. */
const isLoopback = (holder: string) => holder.startsWith("127.") || holder === "0:0:0:0::/64";

export function guardServer(
  server: Server,
  options: { trustProxy: boolean; exempt?: (client: string) => boolean },
): void {
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  if (options.trustProxy) return;
  const open = new Map<string, number>();
  server.on("connection", (socket) => {
    const holder = budgetHolder(socket.remoteAddress ?? "") ?? "unknown";
    if ((options.exempt ?? isLoopback)(holder)) return;
    const count = (open.get(holder) ?? 0) + 1;
    if (count > MAX_CONNECTIONS_PER_CLIENT) return void socket.destroy();
    open.set(holder, count);
    socket.once("close", () => {
      const left = open.get(holder)! - 1;
      if (left === 0) open.delete(holder);
      else open.set(holder, left);
    });
  });
}

export type HttpServer = {
  server: Server;
  /** Stops serving (drainServer; `drainMs` 0: every connection at once); resolves when all are closed. */
  close(drainMs?: number): Promise<void>;
};

/** Serves `listener` on `port` (and `hostname`, default all); resolves once listening, rejects if it cannot listen. */
export async function startHttpServer(options: {
  listener: RequestListener;
  port: number;
  hostname?: string;
  /** Behind a proxy the operator trusts (TRUSTED_PROXY): see guardServer. */
  trustProxy: boolean;
}): Promise<HttpServer> {
  const server = createServer(options.listener);
  await new Promise<void>((listening, fail) => {
    server.once("error", fail);
    server.listen(options.port, options.hostname, () => listening());
  });
  guardServer(server, options);
  answerClientErrors(server);
  return { server, close: (drainMs = 0) => drainServer(server, drainMs) };
}

/** How long a stopping server still takes connections and reads idle ones (at most the drain). */
export const STOP_GRACE_MS = 1_000;
/** How often, after STOP_GRACE_MS, the connections that have since gone idle are closed. */
const IDLE_SWEEP_MS = 50;

/**
 * Stops `server` without resetting a request a client has sent: every answer from now on closes
 * its connection; after STOP_GRACE_MS the server stops listening and closes each connection once
 * it is idle, and every one still open after `drainMs`. Node's own close() stops listening and
 * ends idle keep-alive connections at once, and a request already sent is reset unanswered: on an
 * idle connection (in the socket, not yet read), or on a new one the kernel has taken but the
 * server has not yet accepted (under load, for a while). Resolves when every connection is closed.
 */
export function drainServer(server: Server, drainMs: number): Promise<void> {
  return new Promise<void>((closed) => {
    server.prependListener("request", (_, res) => res.setHeader("Connection", "close"));
    let sweeping: NodeJS.Timeout | undefined;
    const stop = () => {
      // net's close: it stops listening and leaves open connections be (http's also closes idle ones).
      NetServer.prototype.close.call(server, () => {
        clearInterval(sweeping);
        closed();
      });
      server.closeIdleConnections();
      sweeping = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS).unref();
    };
    // After the poll phase: connections and bytes that came while the timer waited are taken and read first.
    setTimeout(() => setImmediate(stop), Math.min(STOP_GRACE_MS, drainMs)).unref();
    setTimeout(() => server.closeAllConnections(), drainMs).unref();
  });
}
