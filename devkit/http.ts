/**
 * A request listener on node:http at 127.0.0.1, on a free port: an app served as the service serves
 * it (@hono/node-server's listener, or the fast path before it), for tests that ask it over a socket.
 */
import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";

export type Listening = { url: string; close(): Promise<void> };

export async function listenOn(listener: RequestListener): Promise<Listening> {
  const server = createServer(listener);
  // Idle connections kept until close: fetch reuses them, and one the server ended while reused
  // would reset that request (a race of HTTP/1.1 keep-alive, nothing of the app's).
  server.keepAliveTimeout = 0;
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
