/**
 * The registries' fixtures (devkit/registries/) are what their README says: the addresses of the
 * chain table, the ABIs the indexer decodes with, and creation code built by the solc it names.
 */
import { describe, expect, it } from "vitest";
import { registryV1Abi } from "../core/abi/registryV1";
import { registryV2Abi } from "../core/abi/registryV2";
import { V1_ADDRESS, V2_ADDRESS, V2_ADDRESS_ZKSYNC } from "../core/chains";
import { abis, addresses, creationCode } from "./oracle";

/** The solc version in a contract's CBOR metadata: "solc" then three bytes, major, minor, patch. */
const solcOf = (code: string) => {
  const found = [...code.matchAll(/64736f6c6343([0-9a-f]{6})/g)].map((m) => m[1]!);
  return found.map((v) => [0, 2, 4].map((i) => Number.parseInt(v.slice(i, i + 2), 16)).join("."));
};

describe("the registries' fixtures", () => {
  it("sit at the chain table's addresses", () => {
    expect([addresses.v1.address, addresses.v2.address, addresses.v2.addressZkSyncChains]).toEqual([
      V1_ADDRESS,
      V2_ADDRESS,
      V2_ADDRESS_ZKSYNC,
    ]);
  });

  it("have the ABIs the indexer decodes the registries' events with", () => {
    expect(abis.v1).toEqual(registryV1Abi);
    expect(abis.v2).toEqual(registryV2Abi);
  });

  it("hold creation code alone, built by the solc each names", () => {
    expect(solcOf("a264697066735822beef64736f6c6343000815")).toEqual(["0.8.21"]);
    for (const version of ["v1", "v2"] as const) {
      const code = creationCode(version);
      expect(code, version).toMatch(/^0x6080604052(?:[0-9a-f]{2})+$/);
      expect(solcOf(code), version).toEqual([addresses[version].solc]);
    }
  });
});
