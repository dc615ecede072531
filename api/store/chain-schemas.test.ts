import { describe, expect, it } from "vitest";
import { ChainSchemas, perChainSchema } from "./chain-schemas";

type Reads = {
  schemaOf(chainId: number, extra: string): string;
  every(): string[];
  optional?(chainId: number): string;
};
const reads = (schema: string): Reads => ({
  schemaOf: (chainId, extra) => `${schema}:${chainId}:${extra}`,
  every: () => [schema],
});

describe("ChainSchemas", () => {
  it("names each chain's schema, the fallback's for a chain named nowhere", () => {
    const schemas = ChainSchemas.served(
      [{ id: 1, schema: "chain_1" }, { id: 2 }, { id: 3, schema: "chain_1" }],
      "main",
    );
    expect([schemas.of(1), schemas.of(2), schemas.of(3), schemas.of(4)]).toEqual([
      "chain_1",
      "main",
      "chain_1",
      "main",
    ]);
    expect(schemas.all).toEqual(["chain_1", "main"]);
    expect(ChainSchemas.one("main").all).toEqual(["main"]);
  });
});

describe("perChainSchema", () => {
  it("is the schema's own with a single schema", () => {
    let made = 0;
    const one = perChainSchema(ChainSchemas.one("main"), (schema) => {
      made++;
      return reads(schema);
    });
    expect(one.schemaOf(7, "x")).toBe("main:7:x");
    expect(made).toBe(1);
  });

  it("sends each call to its chain's schema, with every argument; `whole` answers the rest", () => {
    const schemas = ChainSchemas.served(
      [
        { id: 1, schema: "a" },
        { id: 2, schema: "b" },
      ],
      "none",
    );
    const all = perChainSchema(schemas, reads, (each) => ({ every: () => each.flatMap((r) => r.every()) }));
    expect([all.schemaOf(1, "x"), all.schemaOf(2, "y")]).toEqual(["a:1:x", "b:2:y"]);
    // A chain no schema holds: the first schema's, which holds nothing of it.
    expect(all.schemaOf(9, "z")).toBe("a:9:z");
    expect(all.every()).toEqual(["a", "b"]);
    expect(all.optional).toBeUndefined();
    expect("schemaOf" in all && !("optional" in all)).toBe(true);
  });
});
