/**
 * Requests Node's HTTP parser refuses never reach the app: without a `clientError` listener Node
 * answers them with a bare status line. This answers them as problem+json, like every other error.
 */
import { maxHeaderSize, type Server, type ServerResponse, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import { problemBody } from "./problem";

/** The problems only Node's parser raises, and what to tell the client. */
const REFUSALS = {
  headers_too_large: `the request line and headers exceed ${maxHeaderSize} bytes; send a shorter URL or fewer headers`,
  content_too_large: "the chunk extensions exceed Node's limit",
  request_timeout: "the request was not received in time",
  malformed_request: "the request is not valid HTTP/1.1",
} as const;
export type ClientErrorCode = keyof typeof REFUSALS;

/** The problem code for an error of Node's HTTP parser (by its code, as Node's default answer maps them). */
export function clientErrorCode(error: { code?: string }): ClientErrorCode {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return "headers_too_large";
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return "content_too_large";
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return "request_timeout";
    default:
      return "malformed_request";
  }
}

/**
 * A whole HTTP/1.1 response, bytes for the socket: the body has Problem.response()'s shape. To a
 * HEAD request, the same head without the body (its client would read the body as a next answer).
 */
export function clientErrorResponse(code: ClientErrorCode, head = false): string {
  const problem = problemBody(code, REFUSALS[code]);
  const { status } = problem;
  const body = JSON.stringify(problem);
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
    "Content-Type: application/problem+json\r\n" +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    "Access-Control-Allow-Origin: *\r\n" +
    "Connection: close\r\n\r\n" +
    (head ? "" : body)
  );
}

/** After the answer, how long a client that keeps sending gets before its socket is destroyed. */
const LINGER_MS = 2_000;

/**
 * Answers what Node's parser refuses (or times out) with a problem, as Node's default would with a
 * bare status: only while no response has started on the socket; else the socket is destroyed.
 */
export function answerClientErrors(server: Server): void {
  const responses = new WeakMap<Socket, ServerResponse>();
  const answered = new WeakSet<Socket>();
  server.on("request", (req, res) => responses.set(req.socket, res));
  server.on("clientError", (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket) => {
    // The parser reports every later chunk of a refused request again: the answer is on its way.
    if (answered.has(socket)) return;
    const res = responses.get(socket);
    if (!socket.writable || error.code === "ECONNRESET" || (res?.headersSent && !res.writableEnded)) {
      socket.destroy();
      return;
    }
    answered.add(socket);
    // The chunk the parser failed in: a request's first bytes come in a chunk of their own, as a
    // client writes a request after reading the answer before, and the parser fails within 64 KiB.
    socket.end(
      clientErrorResponse(clientErrorCode(error), error.rawPacket?.subarray(0, 5).toString("latin1") === "HEAD "),
    );
    // Destroying it now would reset the connection if the client is still sending (a long header):
    // its TCP stack could then drop the answer unread. It goes when the client closes, or soon.
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  });
}
