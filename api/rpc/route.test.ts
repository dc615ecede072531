import { describe, expect, it } from "vitest";
import { Encoded } from "./plan";
import { rpcReplyBody } from "./route";

const HEX = `0x${"ab".repeat(40)}` as const;
const held = () => new Encoded(new Uint8Array(Buffer.from(HEX, "latin1")));
const text = (body: string | Uint8Array[]) => (typeof body === "string" ? body : Buffer.concat(body).toString());

describe("rpcReplyBody", () => {
  it("writes a held result's bytes as they are, in the very text JSON.stringify gives", () => {
    for (const id of [1, 0, 'a "quoted" id\n', null, 2.5]) {
      const body = rpcReplyBody({ jsonrpc: "2.0", id, result: held() });
      expect(Array.isArray(body), String(id)).toBe(true);
      expect(text(body)).toBe(JSON.stringify({ jsonrpc: "2.0", id, result: HEX }));
    }
  });

  it("gives anything else as JSON text: a result held as a string, errors, batches", () => {
    const replies = [
      { jsonrpc: "2.0", id: 1, result: new Encoded(HEX) },
      { jsonrpc: "2.0", id: 1, error: { code: -32601, message: "no" } },
      [
        { jsonrpc: "2.0", id: 1, result: held() },
        { jsonrpc: "2.0", id: 2, result: "0x" },
      ],
    ];
    const expected = [
      { jsonrpc: "2.0", id: 1, result: HEX },
      replies[1],
      [
        { jsonrpc: "2.0", id: 1, result: HEX },
        { jsonrpc: "2.0", id: 2, result: "0x" },
      ],
    ];
    replies.forEach((reply, i) => {
      const body = rpcReplyBody(reply);
      expect(typeof body).toBe("string");
      expect(JSON.parse(text(body))).toEqual(expected[i]);
    });
  });
});
