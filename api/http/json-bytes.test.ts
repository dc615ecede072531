import { getAddress } from "viem";
import { describe, expect, it } from "vitest";
import { CHECKSUM_CASE_BYTES, writeChecksumCase } from "../../core/keccak";
import { streamBytes, xorshift32 } from "../../core/xorshift";
import { JsonBytes } from "./json-bytes";

const SEED = Number(process.env.SEED ?? Date.now() % 2 ** 31);

describe(`JsonBytes (SEED=${SEED})`, () => {
  it("writes text, hex and EIP-55 addresses as viem spells them, growing from a buffer of one byte", () => {
    const next = xorshift32(SEED);
    const out = new JsonBytes(1);
    let expected = "";
    for (let i = 0; i < 500; i++) {
      const bytes = streamBytes(next, 20);
      const hex = `0x${Buffer.from(bytes).toString("hex")}`;
      const caseBits = new Uint8Array(CHECKSUM_CASE_BYTES + 3);
      writeChecksumCase(hex, caseBits, 3);
      // At an offset in both, as ChainState reads them from its arrays.
      const source = new Uint8Array([...streamBytes(next, 7), ...bytes]);
      out
        .ascii(`{"a":"`)
        .address(source, 7, caseBits, 3)
        .ascii('","h":"')
        .hex(source, 7, 20 - (i % 20))
        .byte(0x22);
      expected += `{"a":"${getAddress(hex)}","h":"${hex.slice(0, 42 - 2 * (i % 20))}"`;
    }
    expect(Buffer.from(out.bytes()).toString("latin1")).toBe(expected);
    expect(out.bytes().byteLength).toBe(expected.length);
  });

  it("reused after reset: each JSON taken keeps its own, and a buffer grown past what it keeps is let go", () => {
    const out = new JsonBytes(8);
    const first = out.ascii('{"a":1}').take(16);
    const second = out.reset(16).ascii("[]").take(16);
    expect(Buffer.from(first).toString("latin1")).toBe('{"a":1}');
    expect(Buffer.from(second).toString("latin1")).toBe("[]");
    // Grown past what it keeps: the buffer itself is taken, and the writer starts another.
    const big = "x".repeat(100);
    const taken = out.reset(16).ascii(big).take(16);
    expect(out.bytes().buffer.byteLength).toBe(16);
    out.ascii("y".repeat(100));
    expect(Buffer.from(taken).toString("latin1")).toBe(big);
    // Grown and reset without being taken: let go too.
    out.reset(16).ascii(big);
    expect(out.reset(16).bytes().buffer.byteLength).toBe(16);
  });
});
