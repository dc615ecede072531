import { type Address, getAddress, type Hex } from "viem";
import { describe, expect, it } from "vitest";
import { streamBytes, xorshift32 } from "../../core/xorshift";
import { toJson } from "../http/json";
import type { JsonBytes } from "../http/json-bytes";
import type { V1EventRow, V2EventRow } from "../store/history-store";
import { v1EventRecord, v1EventsJson, v2EventRecord, v2EventsJson } from "./records";

const SEED = Number(process.env.SEED ?? Date.now() % 2 ** 31);

describe(`event pages as JSON (SEED=${SEED})`, () => {
  const next = xorshift32(SEED);
  const pick = <T>(xs: readonly T[]) => xs[next() % xs.length]!;
  const hex = (bytes: number) => `0x${Buffer.from(streamBytes(next, bytes)).toString("hex")}` as Hex;
  const maybe = <T>(value: () => T) => (next() % 3 === 0 ? null : value());
  const big = () => pick([0n, 1n, BigInt(next()), 2n ** 255n + BigInt(next()), 2n ** 256n - 1n]);
  // Text JSON.stringify escapes or that is not ASCII, where the tables could ever hold it.
  const odd = () => pick(['0x"a', "0x\\b", "0x\nc", "0xé", "0x\u2028", ""]);
  const text = (bytes: number) => (next() % 20 === 0 ? (odd() as Hex) : hex(bytes));
  const head = () => ({
    blockNumber: BigInt(next()),
    blockHash: hex(32),
    blockTimestamp: BigInt(next()),
    transactionHash: text(32),
    logIndex: next() % 1000,
  });
  const v2Event = (): V2EventRow => ({
    ...head(),
    hash: text(32),
    kind: pick(["DelegateAll", "DelegateContract", "DelegateERC721", "DelegateERC20", "DelegateERC1155", "Odd"]),
    from: hex(20) as Address,
    to: hex(20) as Address,
    contract: maybe(() => hex(20) as Address),
    tokenId: maybe(big),
    rights: text(32),
    amount: maybe(big),
    enable: maybe(() => next() % 2 === 0),
  });
  const v1Event = (): V1EventRow => ({
    ...head(),
    kind: pick(["DelegateForAll", "DelegateForContract", "DelegateForToken", "RevokeAllDelegates", "RevokeDelegate"]),
    vault: hex(20) as Address,
    delegate: maybe(() => hex(20) as Address),
    contract: maybe(() => hex(20) as Address),
    tokenId: maybe(big),
    value: maybe(() => next() % 2 === 0),
    revokedDelegate: maybe(() => hex(20) as Address),
  });
  // Either side of toJson's switch to JSON.stringify (64 records), and a page past what the writer keeps.
  const sizes = [0, 1, 2, 63, 64, 65, 300, 1000];
  const text8 = (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8");

  it("writes a page of v2 events as toJson writes their records", () => {
    for (const size of sizes) {
      const events = Array.from({ length: size }, v2Event);
      expect(text8(v2EventsJson(events))).toBe(toJson(events.map(v2EventRecord)));
    }
  });

  it("writes a page of v1 events as toJson writes their records", () => {
    for (const size of sizes) {
      const events = Array.from({ length: size }, v1Event);
      expect(text8(v1EventsJson(events))).toBe(toJson(events.map(v1EventRecord)));
    }
  });

  it("writes the same where a store spells some of the addresses, and checksums the rest", () => {
    // A store's writer, as the copy's (api/replica/chain-state.ts, addressJson): some addresses it holds.
    const spell = (address: string, out: JsonBytes) => {
      if (address.charCodeAt(41) % 2 === 0) return false;
      out.string(getAddress(address));
      return true;
    };
    const [v2, v1] = [Array.from({ length: 200 }, v2Event), Array.from({ length: 200 }, v1Event)];
    expect(text8(v2EventsJson(v2, spell))).toBe(toJson(v2.map(v2EventRecord)));
    expect(text8(v1EventsJson(v1, spell))).toBe(toJson(v1.map(v1EventRecord)));
  });

  it("gives each page a JSON of its own: the writer's next page does not change the last", () => {
    const [first, second] = [[v2Event()], [v2Event()]];
    const json = v2EventsJson(first);
    v2EventsJson(second);
    expect(text8(json)).toBe(toJson(first.map(v2EventRecord)));
  });
});
