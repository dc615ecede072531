/**
 * The chain table: exactly the registries' deployment list, each entry's addresses, and its
 * names and public RPC as viem's chain definitions have them (the table writes them out). How the
 * RPC environment selects chains: core/settings.test.ts.
 */
import { type Chain, getAddress, isAddress } from "viem";
import * as viemChains from "viem/chains";
import { describe, expect, it } from "vitest";
import { CHAINS, chainById, V1_ADDRESS, V2_ADDRESS, V2_ADDRESS_ZKSYNC } from "./chains";

/** The registries' deployment list. */
const MAINNETS = [
  1, 10, 56, 100, 137, 250, 324, 360, 1101, 1284, 1285, 1329, 1996, 2020, 2741, 2911, 5000, 7000, 7700, 8453, 33139,
  42161, 42170, 42220, 43114, 59144, 61166, 69000, 81457, 98866, 167000, 534352, 7777777,
];
const TESTNETS = [11155111, 17000, 84532, 80084, 10143, 11124, 2021];
/** Listed chains viem defines not at all (Animechain) or under another chain for the id (2021: Edgeware). */
const NOT_VIEMS: Record<number, { name: string; title: string }> = {
  69000: { name: "animechain", title: "Animechain" },
  2021: { name: "roninSaigon", title: "Ronin Saigon Testnet" },
};
const DEV = 31337;
/** zkSync-type chains: CREATE2 differs, so v2 lives at another address and v1 is not there. */
const ZKSYNC = [324, 61166, 2741, 11124];

const CANONICAL_V1 = "0x00000000000076A84feF008CDAbe6409d2FE638B";
const CANONICAL_V2 = "0x00000000000000447e69651d841bD8D104Bed493";
const ZKSYNC_V2 = "0x0000000059A24EB229eED07Ac44229DB56C5d797";

const viem = viemChains as unknown as Record<string, Chain | undefined>;

describe("the chain table", () => {
  it("holds exactly the deployment list's chains: the mainnets, the testnets and the local development chain", () => {
    const ids = CHAINS.map((c) => c.id);
    expect([...ids].sort((a, b) => a - b)).toEqual([...MAINNETS, ...TESTNETS, DEV].sort((a, b) => a - b));
    expect(ids.length).toBe(MAINNETS.length + TESTNETS.length + 1);
  });

  it("ids are positive integers, ids and names are unique", () => {
    for (const c of CHAINS) {
      expect(Number.isSafeInteger(c.id) && c.id > 0, `id ${c.id}`).toBe(true);
      expect(c.name, `name of ${c.id}`).toMatch(/^[A-Za-z][A-Za-z0-9]*$/);
      expect(c.title.trim().length, `title of ${c.id}`).toBeGreaterThan(0);
    }
    expect(new Set(CHAINS.map((c) => c.id)).size).toBe(CHAINS.length);
    expect(new Set(CHAINS.map((c) => c.name)).size).toBe(CHAINS.length);
  });

  it("every address is valid and in EIP-55 checksum case", () => {
    for (const address of [V1_ADDRESS, V2_ADDRESS, V2_ADDRESS_ZKSYNC]) {
      expect(isAddress(address, { strict: true }), address).toBe(true);
      expect(getAddress(address)).toBe(address);
    }
    expect([V1_ADDRESS, V2_ADDRESS, V2_ADDRESS_ZKSYNC]).toEqual([CANONICAL_V1, CANONICAL_V2, ZKSYNC_V2]);
    for (const c of CHAINS) {
      for (const registry of [c.v1, c.v2]) {
        if (registry === false) continue;
        expect(isAddress(registry.address, { strict: true }), `chain ${c.id}: ${registry.address}`).toBe(true);
        expect(getAddress(registry.address), `chain ${c.id}: checksum case`).toBe(registry.address);
        if (registry.startBlock !== undefined) {
          expect(
            Number.isSafeInteger(registry.startBlock) && registry.startBlock >= 0,
            `chain ${c.id}: startBlock`,
          ).toBe(true);
        }
      }
    }
  });

  it("zkSync-type chains (324, 61166, 2741, 11124) use v2 at 0x0000000059A2…d797 and have no v1", () => {
    for (const id of ZKSYNC) {
      const c = chainById(id);
      expect(c, `chain ${id}`).toBeDefined();
      expect(c!.v2.address, `chain ${id}`).toBe(ZKSYNC_V2);
      expect(c!.v1, `chain ${id}`).toBe(false);
    }
  });

  it("every other chain uses the canonical v2 address, and looks for v1 at its canonical address", () => {
    const others = CHAINS.filter((c) => !ZKSYNC.includes(c.id));
    expect(others.length).toBe(CHAINS.length - ZKSYNC.length);
    for (const c of others) {
      expect(c.v2.address, `chain ${c.id}`).toBe(CANONICAL_V2);
      expect(c.v1 === false ? false : c.v1.address, `chain ${c.id}`).toBe(CANONICAL_V1);
    }
  });

  it("names, titles, the testnet flag and the public RPC are viem's chain definitions'", () => {
    for (const c of CHAINS.filter((c) => !(c.id in NOT_VIEMS))) {
      const def = viem[c.name];
      expect(def, `viem/chains has no export "${c.name}" (chain ${c.id})`).toBeDefined();
      expect(def!.id, `viem's ${c.name}`).toBe(c.id);
      // The dev chain keeps viem's name (anvil) but a title of its own: it stands for hardhat too.
      if (c.id !== DEV) expect(c.title, `title of ${c.id}`).toBe(def!.name);
      if (c.id !== DEV) expect(c.testnet, `testnet flag of ${c.id}`).toBe(def!.testnet ?? false);
      if (c.id !== DEV) expect(c.publicRpc, `public RPC of ${c.id}`).toBe(def!.rpcUrls.default.http[0]);
    }
    for (const id of MAINNETS) expect(chainById(id)!.testnet, `chain ${id} is a mainnet`).toBe(false);
    for (const id of [...TESTNETS, DEV]) expect(chainById(id)!.testnet, `chain ${id} is a testnet`).toBe(true);
    expect(chainById(DEV)!.name).toBe("anvil");
    expect(chainById(1)!.name).toBe("mainnet");
    expect(chainById(11155111)!.name).toBe("sepolia");
  });

  it("the chains viem lacks have names and titles of their own, and no public RPC", () => {
    for (const [id, { name, title }] of Object.entries(NOT_VIEMS)) {
      const c = chainById(Number(id));
      expect(c, `chain ${id}`).toMatchObject({ name, title });
      expect(c!.publicRpc, `chain ${id}: a public RPC`).toBeUndefined();
      const viems = Object.values(viem).filter((def) => def?.id === Number(id));
      expect(
        viems.every((def) => def!.name !== title),
        `viem defines chain ${id} as ${title}`,
      ).toBe(true);
    }
  });

  it("chainById finds table entries only", () => {
    for (const c of CHAINS) expect(chainById(c.id)).toBe(c);
    for (const id of [0, -1, 2, 5, 31338, 1.5, Number.NaN]) expect(chainById(id), String(id)).toBeUndefined();
  });
});
