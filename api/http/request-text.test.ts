import { createServer, type IncomingMessage, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { requestText } from "./request-text";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((ok) => server?.close(ok));
});

/** A server whose each request's body is read by requestText; its port and what the reads gave. */
async function serve(): Promise<{ port: number; read: Promise<string> }> {
  let settle!: (text: Promise<string>) => void;
  const read = new Promise<string>((ok) => {
    settle = ok;
  });
  server = createServer((req: IncomingMessage, res) => {
    const text = requestText(req);
    settle(text);
    text.then(
      (body) => res.end(body),
      () => res.destroy(),
    );
  });
  await new Promise<void>((ok) => server!.listen(0, "127.0.0.1", ok));
  return { port: (server.address() as AddressInfo).port, read };
}

/** Sends `head` and the parts of a body, a moment apart; with `close`, closes after them. */
function send(port: number, head: string, parts: Buffer[], close = false) {
  const socket = connect(port, "127.0.0.1", async () => {
    socket.write(head);
    for (const part of parts) {
      await new Promise((ok) => setTimeout(ok, 20));
      socket.write(part);
    }
    if (close) socket.destroy();
  });
  socket.on("error", () => {});
  return socket;
}

describe("requestText", () => {
  it("reads a body sent in pieces whole, UTF-8 split across them included", async () => {
    const { port, read } = await serve();
    const body = Buffer.from('{"a":"é€"}');
    const head = `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n`;
    send(port, head, [body.subarray(0, 7), body.subarray(7)]);
    await expect(read).resolves.toBe('{"a":"é€"}');
  });

  it("reads an empty body as empty text", async () => {
    const { port, read } = await serve();
    send(port, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", []);
    await expect(read).resolves.toBe("");
  });

  it("fails a body whose client closed before its end", async () => {
    const { port, read } = await serve();
    send(port, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n", [Buffer.from("{")], true);
    // Node says "aborted" first; the close after it would say so too.
    await expect(read).rejects.toBeInstanceOf(Error);
  });
});
