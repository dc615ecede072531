/**
 * The launcher's RPC requests against a local HTTP server that fails each way an RPC does: the
 * few words said for each, none of them the URL's path or query (where API keys go).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpc, whyRpcUnusable } from "./rpc";

const KEY = "SECRETKEY";
/** Answers by path: how a misbehaving RPC answers. */
const ANSWERS: Record<string, [status: number, type: string, body: string] | "hang"> = {
  "/chain": [200, "application/json", '{"jsonrpc":"2.0","id":1,"result":"0x7a69"}'],
  "/missing": [404, "text/plain", "not here"],
  "/html": [200, "text/html", "<html>a login page</html>"],
  "/error": [200, "application/json", '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no such method"}}'],
  "/no-result": [200, "application/json", '{"jsonrpc":"2.0","id":1}'],
  "/null": [200, "application/json", '{"jsonrpc":"2.0","id":1,"result":null}'],
  "/hang": "hang",
};

let server: Server;
let base: string;
/** An RPC URL on the server, with a key in its path and query as providers' URLs have. */
const url = (path: string) => `${base}${path}/${KEY}?apikey=${KEY}`;

beforeAll(async () => {
  server = createServer((req, res) => {
    const answer = ANSWERS[`/${req.url!.split("/")[1]}`];
    if (answer === undefined || answer === "hang") return;
    res.writeHead(answer[0], { "Content-Type": answer[1] }).end(answer[2]);
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe("whyRpcUnusable", () => {
  it("nothing when the RPC serves the chain; the chain it serves when another", async () => {
    expect(await whyRpcUnusable(url("/chain"), 31337)).toBeUndefined();
    expect(await whyRpcUnusable(url("/chain"), 1)).toBe("it serves chain 31337, not 1");
  });

  it("refused, an HTTP status, not JSON-RPC, the RPC's error: in a few words, without the URL", async () => {
    const closed = createServer();
    await new Promise<void>((listening) => closed.listen(0, "127.0.0.1", listening));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((closing) => closed.close(closing));
    const reasons = [
      await whyRpcUnusable(`http://127.0.0.1:${port}/${KEY}?apikey=${KEY}`, 31337),
      await whyRpcUnusable(url("/missing"), 31337),
      await whyRpcUnusable(url("/html"), 31337),
      await whyRpcUnusable(url("/error"), 31337),
      await whyRpcUnusable(url("/no-result"), 31337),
    ];
    expect(reasons).toEqual([
      "ECONNREFUSED",
      "HTTP 404",
      "not a JSON-RPC answer to eth_chainId",
      "eth_chainId failed: no such method",
      "not a JSON-RPC answer to eth_chainId",
    ]);
  });

  it("an RPC that does not answer: timed out after 5 s", { timeout: 10_000 }, async () => {
    const started = Date.now();
    expect(await whyRpcUnusable(url("/hang"), 31337)).toBe("no answer within 5 s");
    expect(Date.now() - started).toBeGreaterThanOrEqual(4_900);
  });
});

describe("rpc", () => {
  it("the result, null included; an answer without one is an error", async () => {
    expect(await rpc(url("/chain"), "eth_chainId", [])).toBe("0x7a69");
    expect(await rpc(url("/null"), "eth_getBlockByNumber", ["0x1", false])).toBeNull();
    await expect(rpc(url("/no-result"), "eth_getBlockByNumber", ["0x1", false])).rejects.toThrow(
      /^not a JSON-RPC answer to eth_getBlockByNumber$/,
    );
    await expect(rpc(url("/missing"), "eth_blockNumber", [])).rejects.toThrow(/^HTTP 404$/);
  });
});
