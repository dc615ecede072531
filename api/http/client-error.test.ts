import { createServer, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerClientErrors, clientErrorCode, clientErrorResponse } from "./client-error";
import { Problem } from "./problem";

/** Writes `bytes` on a new connection and reads until the server closes it. */
function exchange(port: number, bytes: string | Buffer, end = true): Promise<string> {
  return new Promise((ok, fail) => {
    const socket = connect(port, "127.0.0.1");
    let data = "";
    socket.setTimeout(5_000, () =>
      socket.destroy(new Error(`no close in 5 s; got ${JSON.stringify(data.slice(0, 200))}`)),
    );
    socket.on("data", (chunk) => (data += chunk.toString("latin1")));
    socket.on("error", fail);
    socket.on("close", () => ok(data));
    if (end) socket.end(bytes);
    else socket.write(bytes);
  });
}

/** The problem a raw answer carries: its status line, Content-Type and body. */
function parse(answer: string) {
  const [head = "", body = ""] = answer.split("\r\n\r\n");
  return {
    status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]),
    type: /\r\ncontent-type: ([^\r]*)/i.exec(head)?.[1],
    close: /\r\nconnection: close\r?$/im.test(head),
    length: Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1]),
    body,
    problem: JSON.parse(body) as Record<string, unknown>,
  };
}

describe("clientErrorResponse", () => {
  it("maps Node's parser errors to statuses as Node's default does", () => {
    expect(clientErrorCode({ code: "HPE_HEADER_OVERFLOW" })).toBe("headers_too_large");
    expect(clientErrorCode({ code: "HPE_CHUNK_EXTENSIONS_OVERFLOW" })).toBe("content_too_large");
    expect(clientErrorCode({ code: "ERR_HTTP_REQUEST_TIMEOUT" })).toBe("request_timeout");
    expect(clientErrorCode({ code: "HPE_INVALID_METHOD" })).toBe("malformed_request");
    expect(clientErrorCode({})).toBe("malformed_request");
  });

  it("is a whole response whose body has the shape of every other problem", async () => {
    const shape = (await new Problem("not_found", "x").response().json()) as Record<string, unknown>;
    for (const [code, status] of [
      ["headers_too_large", 431],
      ["content_too_large", 413],
      ["request_timeout", 408],
      ["malformed_request", 400],
    ] as const) {
      const answer = parse(clientErrorResponse(code));
      expect(answer.status).toBe(status);
      expect(answer.type).toBe("application/problem+json");
      expect(answer.close).toBe(true);
      expect(answer.length).toBe(Buffer.byteLength(answer.body));
      expect(Object.keys(answer.problem)).toEqual(Object.keys(shape));
      expect(answer.problem).toMatchObject({ status, code, type: String(shape.type).replace("not_found", code) });
    }
  });
});

describe("answerClientErrors", () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer(
      { headersTimeout: 500, requestTimeout: 1_000, connectionsCheckingInterval: 100 },
      (req, res) => {
        if (req.url === "/slow") {
          res.writeHead(200, { "Content-Type": "text/plain" });
          res.write("partial");
          setTimeout(() => res.end(), 1_000);
        } else res.end("ok");
      },
    );
    answerClientErrors(server);
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

  it("answers oversized request lines and headers with 431, even while the client still sends", async () => {
    for (const request of [
      `GET /x HTTP/1.1\r\nHost: x\r\nX-Filler: ${"h".repeat(20 * 1024)}\r\n\r\n`,
      `GET /x HTTP/1.1\r\nHost: x\r\nX-Filler: ${"h".repeat(4 * 1024 * 1024)}\r\n\r\n`,
      `GET /${"a".repeat(70 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    ]) {
      const answer = parse(await exchange(port, request));
      expect(answer.status, request.slice(0, 40)).toBe(431);
      expect(answer.type).toBe("application/problem+json");
      expect(answer.problem).toMatchObject({ status: 431, code: "headers_too_large" });
    }
  });

  it("answers a HEAD request with the problem's head and no body", async () => {
    for (const request of [
      `HEAD /x HTTP/1.1\r\nHost: x\r\nX-Filler: ${"h".repeat(20 * 1024)}\r\n\r\n`,
      "HEAD /x HTTP/1.1\r\nHost x\r\n\r\n",
    ]) {
      const answer = await exchange(port, request);
      const [head, body] = answer.split("\r\n\r\n");
      expect(head, request.slice(0, 40)).toMatch(
        /^HTTP\/1\.1 4\d\d .*\r\nContent-Type: application\/problem\+json\r\n/,
      );
      expect(body, request.slice(0, 40)).toBe("");
    }
  });

  it("drops the connection of a client that keeps it open after the answer, soon", async () => {
    const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    let data = "";
    socket.on("data", (chunk) => (data += chunk.toString("latin1")));
    socket.write(`GET /x HTTP/1.1\r\nHost: x\r\nX-Filler: ${"h".repeat(20 * 1024)}`);
    await new Promise((ok) => socket.once("end", ok));
    const answered = Date.now();
    const open = () =>
      new Promise<number>((ok, fail) => server.getConnections((error, count) => (error ? fail(error) : ok(count))));
    while ((await open()) > 0 && Date.now() - answered < 4_000) await new Promise((ok) => setTimeout(ok, 50));
    socket.destroy();
    expect(parse(data).status).toBe(431);
    expect(await open(), "the server's side of the connection is gone").toBe(0);
    expect(Date.now() - answered).toBeGreaterThan(1_500);
  });

  it("answers malformed bytes with 400", async () => {
    for (const request of [
      Buffer.from("GET /\u0001 HTTP/1.1\r\nHost: x\r\n\r\n"),
      Buffer.from("GARBAGE\r\n\r\n"),
      Buffer.from([0xff, 0xfe, 0x0d, 0x0a, 0x0d, 0x0a]),
    ]) {
      const answer = parse(await exchange(port, request));
      expect(answer.status, JSON.stringify(request.toString("latin1"))).toBe(400);
      expect(answer.problem).toMatchObject({ status: 400, code: "malformed_request" });
    }
  });

  it("answers a request whose headers never finish with 408", async () => {
    const answer = parse(await exchange(port, "GET / HTTP/1.1\r\nHost: x\r\n", false));
    expect(answer.status).toBe(408);
    expect(answer.problem).toMatchObject({ status: 408, code: "request_timeout" });
  });

  it("answers after a finished response on the same connection", async () => {
    const answer = await exchange(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /\u0001 HTTP/1.1\r\n\r\n");
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nokHTTP\/1\.1 400 Bad Request\r\n/);
    expect(parse(answer.slice(answer.indexOf("okHTTP") + 2)).problem).toMatchObject({ status: 400 });
  });

  it("only closes the connection when a response has started: nothing is written into it", async () => {
    const answer = await new Promise<string>((ok, fail) => {
      const socket = connect(port, "127.0.0.1");
      let data = "";
      socket.setTimeout(5_000, () => socket.destroy(new Error("no close in 5 s")));
      socket.on("error", fail);
      socket.on("close", () => ok(data));
      socket.on("data", (chunk) => {
        // The bad request goes once the first response has begun.
        if (!data) socket.end("GET /\u0001 HTTP/1.1\r\n\r\n");
        data += chunk.toString("latin1");
      });
      socket.write("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
    });
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answer).toContain("partial");
    expect(answer).not.toContain("problem");
  });
});
