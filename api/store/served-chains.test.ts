import { describe, expect, it } from "vitest";
import { learnRegistries, type ServedChain, startUnknown } from "./served-chains";

const chain = (id: number, v1: ServedChain["v1"], v2: ServedChain["v2"]): ServedChain => ({
  id,
  name: `c${id}`,
  title: `C${id}`,
  testnet: false,
  ...(v1 && { v1 }),
  ...(v2 && { v2 }),
  schema: `s_${id}`,
});

describe("learnRegistries", () => {
  it("takes the registries of a chain published unplanned from a publication that knows them, in place", () => {
    const known = chain(1, { address: "0x1", startBlock: 5 }, { address: "0x2", startBlock: 7 });
    const late = chain(2, { address: "0x1", startBlock: null }, { address: "0x2", startBlock: null });
    const chains = [known, late];
    expect(chains.some(startUnknown)).toBe(true);
    // Published again with only one chain planned: the other stays unknown.
    expect(learnRegistries(chains, [known, late])).toBe(true);
    expect(late.v2?.startBlock).toBeNull();
    // Planned: v1 found absent, v2's start block known.
    const planned = chain(2, undefined, { address: "0x2", startBlock: 9 });
    expect(learnRegistries(chains, [known, planned])).toBe(false);
    expect(chains[1]).toBe(late);
    expect(late).toEqual({ ...planned });
    expect("v1" in late).toBe(false);
  });

  it("leaves a known chain as it is, whatever a publication says", () => {
    const known = chain(1, undefined, { address: "0x2", startBlock: 7 });
    expect(learnRegistries([known], [chain(1, undefined, { address: "0x2", startBlock: null })])).toBe(false);
    expect(learnRegistries([known], [chain(1, undefined, { address: "0x2", startBlock: 3 })])).toBe(false);
    expect(known.v2?.startBlock).toBe(7);
  });
});
