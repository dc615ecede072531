import { describe, expect, it } from "vitest";
import type { Budget } from "../access/middleware";
import { Problem } from "../http/problem";
import { assembleParts, chainsAsked, chainUrl, nextCursor, sharedBudgets } from "./across";

const problemOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    if (error instanceof Problem) return { code: error.code, param: error.extra.param };
    throw error;
  }
  throw new Error("no problem");
};

describe("chainsAsked", () => {
  const served = [8453, 1, 10];
  it("leaves one chain, or none, to the route itself", () => {
    expect(chainsAsked(undefined, served)).toBeUndefined();
    expect(chainsAsked("8453", served)).toBeUndefined();
    expect(chainsAsked("7", served)).toBeUndefined();
  });
  it("takes all (every chain served) and lists, by chain id", () => {
    expect(chainsAsked("all", served)).toEqual([1, 10, 8453]);
    expect(chainsAsked("8453,1", served)).toEqual([1, 8453]);
    expect(chainsAsked("10,8453,1", served)).toEqual([1, 10, 8453]);
  });
  it("refuses all in a list, repeats, empty items and unknown chains, naming chainId", () => {
    for (const raw of ["all,1", "1,all", "1,1", "1,", ",1", ",", "1,x", "1,0", "1,-2"]) {
      expect(
        problemOf(() => chainsAsked(raw, served)),
        raw,
      ).toEqual({ code: "invalid_parameter", param: "chainId" });
    }
    expect(problemOf(() => chainsAsked("1,7", served))).toEqual({ code: "unsupported_chain", param: "chainId" });
  });
});

describe("assembleParts", () => {
  const json = (text: string) => new TextEncoder().encode(text);
  it("writes each chain's answer as it was written, its block, its next cursor, and problems", () => {
    const big = "115792089237316195423570985008687907853269984665640564039457584007913129639935";
    const out = assembleParts([
      { chainId: 1, block: 12n, answer: json(big) },
      { chainId: 10, block: 9_007_199_254_740_993n, answer: json('[{"a":1}]'), next: "abc" },
      { chainId: 8453, problem: { code: "chain_syncing", status: 503 } },
    ]);
    expect(new TextDecoder().decode(out)).toBe(
      `{"chains":[{"chainId":1,"block":12,"answer":${big}},` +
        '{"chainId":10,"block":9007199254740993,"answer":[{"a":1}],"next":"abc"},' +
        '{"chainId":8453,"problem":{"code":"chain_syncing","status":503}}]}',
    );
  });
  it("writes no chains as an empty list", () => {
    expect(new TextDecoder().decode(assembleParts([]))).toBe('{"chains":[]}');
  });
});

describe("chainUrl and nextCursor", () => {
  it("asks one chain, every other pair as it was", () => {
    expect(chainUrl("http://h/registry/v2/0xab?limit=2&chainId=1,10&x=%20a+b", 10)).toBe(
      "http://h/registry/v2/0xab?limit=2&x=%20a+b&chainId=10",
    );
  });
  it("reads the cursor of a Link header", () => {
    expect(nextCursor('</registry/v2/0xab?chainId=10&limit=2&cursor=eyJ9>; rel="next"')).toBe("eyJ9");
    expect(nextCursor(null)).toBeUndefined();
  });
});

describe("sharedBudgets", () => {
  const recording = (refuse = false) => {
    const spent: number[] = [];
    const budget: Budget = {
      spend: async (units) => {
        spent.push(units);
        if (refuse) throw new Problem("rate_limited", "no");
      },
      charge: async () => {},
      rows: () => 100,
      tooMuch: () => new Problem("rate_limited", "no"),
      headers: () => ({}),
    };
    return { budget, spent };
  };
  it("spends what every chain spends before reading at once, once each has spent or finished", async () => {
    const { budget, spent } = recording();
    const [a, b, c] = sharedBudgets(budget, 3);
    const first = a!.spend(2);
    const second = b!.spend(3);
    await Promise.resolve();
    expect(spent).toEqual([]);
    c!.done();
    await Promise.all([first, second]);
    expect(spent).toEqual([5]);
    // Later spends are the chain's own.
    await a!.spend(1);
    expect(spent).toEqual([5, 1]);
  });
  it("refuses every chain's spend when the one spend is refused", async () => {
    const { budget } = recording(true);
    const [a, b] = sharedBudgets(budget, 2);
    const results = await Promise.allSettled([a!.spend(1), b!.spend(1)]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  });
});
