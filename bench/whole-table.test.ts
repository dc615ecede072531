import { describe, expect, it } from "vitest";
import { CHAINS } from "../core/chains";
import { chainGroupsValue, quantile, roleOf, tableChains } from "./whole-table";

describe("tableChains", () => {
  it("takes every chain of the table when asked for as many or more", () => {
    expect(tableChains(CHAINS.length)).toEqual(CHAINS);
    expect(tableChains(100)).toHaveLength(CHAINS.length);
  });

  it("takes a zkSync-type chain first, then chains spread over the rest, each once", () => {
    const three = tableChains(3);
    expect(three).toHaveLength(3);
    expect(three[0]!.v1).toBe(false);
    expect(new Set(three.map((c) => c.id)).size).toBe(3);
    expect(tableChains(1)).toHaveLength(1);
  });
});

describe("chainGroupsValue", () => {
  it("names consecutive chunks of the ids, a last chunk of one left alone", () => {
    expect(chainGroupsValue([1, 10, 56, 100, 137], 2)).toBe("1+10,56+100");
    expect(chainGroupsValue([1, 10, 56, 100, 137], 5)).toBe("1+10+56+100+137");
    expect(chainGroupsValue([1, 10, 56], 1)).toBeUndefined();
    expect(chainGroupsValue([1], 5)).toBeUndefined();
  });
});

describe("quantile", () => {
  it("is the nearest rank", () => {
    const xs = Array.from({ length: 20 }, (_, i) => 20 - i);
    expect(quantile(xs, 0.95)).toBe(19);
    expect(quantile(xs, 1)).toBe(20);
    expect(quantile([7], 0.95)).toBe(7);
  });
});

describe("roleOf", () => {
  it("tells the service's processes by their command lines", () => {
    expect(roleOf("node /r/node_modules/.bin/ponder start --schema s_1 --views-schema v_1")).toBe("Ponder");
    expect(roleOf("node .build/serve/serve.js")).toBe("API");
    expect(roleOf("sh -c node scripts/bundle.mjs serve && exec node .build/serve/serve.js")).toBe("API");
    expect(roleOf("node scripts/bundle.mjs start --run --schema s --port 1")).toBe("launcher");
    expect(roleOf("npm start --silent -- --schema s")).toBe("npm and shells");
    expect(roleOf(undefined)).toBe("other");
  });
});
