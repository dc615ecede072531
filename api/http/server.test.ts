import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { drainServer, guardServer, MAX_CONNECTIONS_PER_CLIENT, STOP_GRACE_MS } from "./server";

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

/** A connection to `port` and everything it has read so far; `ended` once the server has closed it. */
async function client(port: number) {
  const socket = connect(port, "127.0.0.1");
  sockets.push(socket);
  const state = { socket, read: "", ended: undefined as Promise<string> | undefined };
  socket.setEncoding("utf8").on("data", (chunk: string) => (state.read += chunk));
  state.ended = new Promise<string>((ok) => {
    socket.on("error", (error: NodeJS.ErrnoException) => ok(error.code ?? error.message));
    socket.on("close", () => ok("closed"));
  });
  await new Promise((ok, fail) => socket.once("connect", ok).once("error", fail));
  return state;
}
const REQUEST = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
/** Waits until `state` has read `n` answers. */
async function answers(state: { read: string }, n: number) {
  while (state.read.split("HTTP/1.1 200").length - 1 < n) await new Promise((ok) => setTimeout(ok, 5));
}
/** A keep-alive connection that has had one answer and is idle. */
async function idleClient(port: number) {
  const state = await client(port);
  state.socket.write(REQUEST);
  await answers(state, 1);
  await new Promise((ok) => setTimeout(ok, 20));
  return state;
}

/**
 * A request sent from another process on a new connection while this process (the server's) is
 * busy: the kernel has taken the connection, the server has not accepted it. Then `stop` runs,
 * before this process's event loop turns again. What that client read, or its error.
 */
async function sentWhileBusy(port: number, stop: () => unknown): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "drain-test-"));
  const marker = join(dir, "sent");
  const script = `
    const socket = require("node:net").connect(${port}, "127.0.0.1", () => {
      socket.write(${JSON.stringify(REQUEST)});
      require("node:fs").writeFileSync(${JSON.stringify(marker)}, "");
    });
    let read = "";
    socket.setEncoding("utf8").on("data", (chunk) => (read += chunk));
    socket.on("error", (error) => { read = error.code; });
    socket.on("close", () => process.stdout.write(read));`;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  const exited = new Promise((ok) => child.once("exit", ok));
  try {
    // Busy, as a loaded server is: nothing of this process runs until the request is sent.
    const until = Date.now() + 10_000;
    while (!existsSync(marker) && Date.now() < until);
    expect(existsSync(marker), "the other process sent its request").toBe(true);
    stop();
    await exited;
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("drainServer", () => {
  it("answers a request sent on an idle connection just before the stop, where Node's close() resets it", async () => {
    const port = await serve({ trustProxy: false });
    // Node's own: the request is in the socket, unread, when the connection is closed as idle.
    const reset = await idleClient(port);
    reset.socket.write(REQUEST);
    const closed = new Promise((ok) => server!.close(ok));
    expect(await reset.ended).toMatch(/ECONNRESET|closed/);
    expect(reset.read.split("HTTP/1.1 200").length - 1).toBe(1);
    await closed;

    const again = await serve({ trustProxy: false });
    const kept = await idleClient(again);
    kept.socket.write(REQUEST);
    const drained = drainServer(server!, 5_000);
    await answers(kept, 2);
    expect(kept.read.slice(kept.read.lastIndexOf("HTTP/1.1"))).toMatch(/\r\nConnection: close\r\n[\s\S]*\r\n\r\nok$/i);
    // Closed by the server once answered, long before the grace is out.
    expect(await kept.ended).toBe("closed");
    await drained;
  });

  it("answers a request on a connection the server has not yet accepted, where Node's close() resets it", async () => {
    const port = await serve({ trustProxy: false });
    expect(await sentWhileBusy(port, () => server!.close())).toBe("ECONNRESET");
    await new Promise((ok) => setImmediate(ok));

    const again = await serve({ trustProxy: false });
    let drained: Promise<void> | undefined;
    const read = await sentWhileBusy(again, () => (drained = drainServer(server!, 5_000)));
    expect(read).toMatch(/^HTTP\/1\.1 200 OK\r\n(?:[^\r]*\r\n)*?Connection: close\r\n[\s\S]*\r\n\r\nok$/i);
    await drained;
  });

  it("takes connections for the grace, each answer closing its own; then refuses them, closes idle ones", async () => {
    const port = await serve({ trustProxy: false });
    const idle = await idleClient(port);
    const started = Date.now();
    const drained = drainServer(server!, 5_000);
    const during = await client(port);
    during.socket.write(REQUEST);
    await answers(during, 1);
    expect(during.read).toMatch(/\r\nConnection: close\r\n/i);
    expect(await during.ended).toBe("closed");
    expect(await idle.ended).toBe("closed");
    const closedAfter = Date.now() - started;
    expect(closedAfter).toBeGreaterThanOrEqual(STOP_GRACE_MS - 10);
    expect(closedAfter).toBeLessThan(3_000);
    const refused = await client(port).then(
      () => "connected",
      (error: NodeJS.ErrnoException) => error.code,
    );
    expect(refused).toBe("ECONNREFUSED");
    await drained;
  });

  it("closes a connection still answering once the drain is out", async () => {
    server = createServer(() => {});
    await new Promise<void>((ok) => server!.listen(0, "127.0.0.1", ok));
    const slow = await client((server.address() as AddressInfo).port);
    slow.socket.write(REQUEST);
    await new Promise((ok) => setTimeout(ok, 50));
    const started = Date.now();
    await drainServer(server, 300);
    expect(await slow.ended).toMatch(/closed|ECONNRESET/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(slow.read).toBe("");
  });
});
