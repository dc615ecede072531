import { describe, expect, it } from "vitest";
import { answerOf, MAX_RPC_CALLS, RPC_ERRORS, type RpcBody, readRpcBody, rpcReply } from "./envelope";

const call = (id: unknown, method = "eth_chainId", params: unknown = []) =>
  JSON.stringify({ jsonrpc: "2.0", id, method, params });
/** Every call answered with its method's name as the result. */
const reply = (body: RpcBody) =>
  rpcReply(
    body,
    "calls" in body ? body.calls.map((c) => answerOf(c, { result: "method" in c ? c.method : null })) : [],
  );

describe("readRpcBody and rpcReply", () => {
  it("answers one request with one object, a batch with an array in its order", () => {
    expect(reply(readRpcBody(call(1)))).toEqual({ jsonrpc: "2.0", id: 1, result: "eth_chainId" });
    expect(reply(readRpcBody(`[${call("a", "net_version")},${call(null)}]`))).toEqual([
      { jsonrpc: "2.0", id: "a", result: "net_version" },
      { jsonrpc: "2.0", id: null, result: "eth_chainId" },
    ]);
  });

  it("a body that is not JSON, an empty batch or one too large is one error with id null", () => {
    expect(reply(readRpcBody("{"))).toMatchObject({ id: null, error: { code: RPC_ERRORS.parse } });
    expect(reply(readRpcBody("[]"))).toMatchObject({ id: null, error: { code: RPC_ERRORS.invalidRequest } });
    const many = `[${Array.from({ length: MAX_RPC_CALLS + 1 }, (_, i) => call(i)).join(",")}]`;
    expect(reply(readRpcBody(many))).toMatchObject({ error: { code: RPC_ERRORS.invalidRequest } });
    expect("calls" in readRpcBody(`[${Array.from({ length: MAX_RPC_CALLS }, (_, i) => call(i)).join(",")}]`)).toBe(
      true,
    );
  });

  it("each malformed request of a batch is its own error; the others are answered", () => {
    const body = `[1, {"jsonrpc":"1.0","id":7,"method":"x"}, {"jsonrpc":"2.0","id":{},"method":"x"}, \
{"jsonrpc":"2.0","id":8}, {"jsonrpc":"2.0","id":9,"method":"x","params":{}}, ${call(10)}]`;
    expect(reply(readRpcBody(body))).toEqual([
      { jsonrpc: "2.0", id: null, error: expect.objectContaining({ code: RPC_ERRORS.invalidRequest }) },
      { jsonrpc: "2.0", id: 7, error: expect.objectContaining({ code: RPC_ERRORS.invalidRequest }) },
      { jsonrpc: "2.0", id: null, error: expect.objectContaining({ code: RPC_ERRORS.invalidRequest }) },
      { jsonrpc: "2.0", id: 8, error: expect.objectContaining({ code: RPC_ERRORS.invalidRequest }) },
      { jsonrpc: "2.0", id: 9, error: expect.objectContaining({ code: RPC_ERRORS.invalidParams }) },
      { jsonrpc: "2.0", id: 10, result: "eth_chainId" },
    ]);
  });

  it("notifications get no answer: a batch of them alone, no body", () => {
    const notification = JSON.stringify({ jsonrpc: "2.0", method: "eth_chainId" });
    expect(reply(readRpcBody(`[${notification},${call(2)}]`))).toEqual([
      { jsonrpc: "2.0", id: 2, result: "eth_chainId" },
    ]);
    expect(reply(readRpcBody(`[${notification},${notification}]`))).toBeUndefined();
  });
});
