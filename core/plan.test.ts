/** The plan handed from `npm start` to Ponder: what is encoded is decoded whole, and nothing else is taken. */
import { describe, expect, it } from "vitest";
import { chainById, V1_ADDRESS, V2_ADDRESS, V2_ADDRESS_ZKSYNC } from "./chains";
import { decodePlan, encodePlan, type IndexedChain } from "./plan";

const PLAN: IndexedChain[] = [
  {
    chain: chainById(1)!,
    rpc: ["https://a.example", "https://b.example"],
    v1: { address: V1_ADDRESS, startBlock: 15_546_782 },
    v2: { address: V2_ADDRESS, startBlock: 17_969_374 },
  },
  {
    chain: chainById(324)!,
    rpc: ["https://zk.example"],
    ws: "wss://zk.example/ws",
    v2: { address: V2_ADDRESS_ZKSYNC, startBlock: 0 },
  },
  { chain: chainById(31337)!, rpc: ["http://127.0.0.1:8545"], v1: { address: V1_ADDRESS, startBlock: 3 } },
];

describe("the plan", () => {
  it("decodes to what was encoded: chains from the table, RPC URLs, registries and start blocks", () => {
    expect(decodePlan(encodePlan(PLAN))).toEqual(PLAN);
  });

  it("refuses anything encodePlan would not write, saying what is wrong", () => {
    const encoded = JSON.parse(encodePlan(PLAN)) as Record<string, unknown>[];
    const variant = (change: Record<string, unknown>) => JSON.stringify([{ ...encoded[0], ...change }]);
    for (const [text, why] of [
      ["", /not JSON/],
      ["{}", /not a list of chains/],
      ["[]", /not a list of chains/],
      [variant({ id: 999999 }), /999999 is not a chain of the table/],
      [variant({ id: "1" }), /is not a chain of the table/],
      [variant({ rpc: [] }), /chain 1: no RPC URL/],
      [variant({ rpc: [""] }), /chain 1: no RPC URL/],
      [variant({ ws: "https://a.example" }), /chain 1: no WebSocket URL/],
      [variant({ ws: "" }), /chain 1: no WebSocket URL/],
      [variant({ ws: 8546 }), /chain 1: no WebSocket URL/],
      [variant({ v1: undefined, v2: undefined }), /chain 1: no registry/],
      [variant({ v1: { address: "0x1", startBlock: 1 } }), /chain 1, v1: no registry address/],
      [variant({ v2: { address: V2_ADDRESS, startBlock: -1 } }), /chain 1, v2: no start block/],
      [variant({ v2: { address: V2_ADDRESS, startBlock: 1.5 } }), /chain 1, v2: no start block/],
    ] as const) {
      expect(() => decodePlan(text), text).toThrow(why);
    }
  });
});
