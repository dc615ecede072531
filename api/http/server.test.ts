import { createServer, type Server } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { guardServer, MAX_CONNECTIONS_PER_CLIENT } from "./server";

let server: Server | undefined;
const sockets: Socket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await new Promise((ok) => server?.close(ok));
});

/** A server guarded as every server of the service is, `options` aside; its port. */
async function serve(options: Parameters<typeof guardServer>[1]): Promise<number> {
  server = createServer((_, res) => res.end("ok"));
  guardServer(server, options);
  await new Promise<void>((ok) => server!.listen(0, "127.0.0.1", ok));
  return (server.address() as AddressInfo).port;
}

/** Opens `n` connections; resolves with how many the server closed within a moment. */
async function closedOf(port: number, n: number): Promise<number> {
  let closed = 0;
  await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<void>((ok) => {
          const socket = connect(port, "127.0.0.1", () => ok());
          socket.on("close", () => closed++);
          socket.on("error", () => {});
          sockets.push(socket);
        }),
    ),
  );
  await new Promise((ok) => setTimeout(ok, 200));
  return closed;
}

describe("guardServer", () => {
  it("sets a request's time limits in seconds", async () => {
    await serve({ trustProxy: false });
    expect([server!.headersTimeout, server!.requestTimeout, server!.keepAliveTimeout]).toEqual([
      10_000, 30_000, 65_000,
    ]);
  });

  it(`closes a client's connections past ${MAX_CONNECTIONS_PER_CLIENT} as they come`, async () => {
    const port = await serve({ trustProxy: false, exempt: () => false });
    expect(await closedOf(port, MAX_CONNECTIONS_PER_CLIENT + 5)).toBe(5);
  });

  it("bounds no trusted proxy's connections: the proxy bounds its clients'", async () => {
    const port = await serve({ trustProxy: true, exempt: () => false });
    expect(await closedOf(port, MAX_CONNECTIONS_PER_CLIENT + 5)).toBe(0);
  });

  it("bounds no connections of this machine's own (loopback)", async () => {
    expect(await closedOf(await serve({ trustProxy: false }), MAX_CONNECTIONS_PER_CLIENT + 5)).toBe(0);
  });
});
