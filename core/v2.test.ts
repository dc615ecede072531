import { type Address, bytesToHex, encodePacked, type Hex, keccak256, maxUint256, zeroAddress, zeroHash } from "viem";
import { describe, expect, it } from "vitest";
import { registryV2Abi } from "./abi/registryV2";
import {
  V2_EVENT_NAME,
  type V2Change,
  type V2CheckQuery,
  type V2DelegationType,
  type V2State,
  v2Check,
  v2DelegationHash,
  v2EnabledState,
  v2NextState,
  v2Vaults,
} from "./v2";
import { streamBytes, xorshift32 } from "./xorshift";

const from: Address = "0x1111111111111111111111111111111111111111";
const to: Address = "0x2222222222222222222222222222222222222222";
const token: Address = "0x3333333333333333333333333333333333333333";
const claim: Hex = `0x636c61696d${"0".repeat(54)}`;
const SEED = Number(process.env.SEED ?? Date.now() % 2 ** 31);

describe("V2_EVENT_NAME", () => {
  it("names each delegation type's event of the registry's ABI, every one of them", () => {
    const events = registryV2Abi.filter((item) => item.type === "event").map((item) => item.name);
    for (const [type, name] of Object.entries(V2_EVENT_NAME)) expect(name.toUpperCase().endsWith(type)).toBe(true);
    expect(Object.values(V2_EVENT_NAME).sort()).toEqual(events.filter((name) => /^Delegate[A-Z]/.test(name)).sort());
  });
});

describe("v2DelegationHash", () => {
  it("is keccak256 of the packed fields, shifted one byte left, with the type in the last byte", () => {
    const hash = v2DelegationHash({ type: "ALL", from, to, rights: zeroHash });
    const raw = keccak256(encodePacked(["bytes32", "address", "address"], [zeroHash, from, to]));
    expect(hash).toBe(`0x${raw.slice(4)}01`);
  });
  it("packs each type's fields as encodePacked does", () => {
    const key = { from, to, rights: claim, contract: token, tokenId: maxUint256 - 5n };
    const packed = encodePacked(
      ["bytes32", "address", "address", "address", "uint256"],
      [claim, from, to, token, key.tokenId],
    );
    expect(v2DelegationHash({ ...key, type: "ERC1155" })).toBe(`0x${keccak256(packed).slice(4)}05`);
    const contractPacked = encodePacked(["bytes32", "address", "address", "address"], [claim, from, to, token]);
    expect(v2DelegationHash({ ...key, type: "ERC20" })).toBe(`0x${keccak256(contractPacked).slice(4)}04`);
  });
  it("gives each type its last byte and keys every field", () => {
    const base = { from, to, rights: zeroHash, contract: token, tokenId: 7n };
    const types = ["ALL", "CONTRACT", "ERC721", "ERC20", "ERC1155"] as const;
    const hashes = types.map((type) => v2DelegationHash({ ...base, type }));
    expect(hashes.map((h) => h.slice(-2))).toEqual(["01", "02", "03", "04", "05"]);
    // CONTRACT and ERC20, ERC721 and ERC1155 pack the same fields: only the type byte tells them apart.
    expect(new Set(hashes.map((h) => h.slice(0, -2))).size).toBe(3);
    expect(v2DelegationHash({ ...base, type: "ERC721", tokenId: 8n })).not.toBe(hashes[2]);
    expect(v2DelegationHash({ ...base, type: "ALL", rights: claim })).not.toBe(hashes[0]);
    expect(v2DelegationHash({ ...base, type: "ALL", from: to, to: from })).not.toBe(hashes[0]);
    expect(v2DelegationHash({ ...base, type: "ERC1155", tokenId: maxUint256 })).toMatch(/^0x[0-9a-f]{62}05$/);
  });
  it(`equals encodePacked and viem's keccak256 on 1,000 seeded keys of every type (SEED=${SEED})`, () => {
    const next = xorshift32(SEED);
    const word = (bytes: number) => bytesToHex(streamBytes(next, bytes));
    const types = ["ALL", "CONTRACT", "ERC721", "ERC20", "ERC1155"] as const;
    for (let i = 0; i < 1_000; i++) {
      const type = types[i % types.length]!;
      const key = { type, rights: i % 3 === 0 ? zeroHash : word(32), from: word(20), to: word(20) };
      const contract = word(20);
      const tokenId = BigInt(i % 2 === 0 ? word(32) : word(1 + (i % 8)));
      const abiTypes = ["bytes32", "address", "address"];
      const values: unknown[] = [key.rights, key.from, key.to];
      if (type !== "ALL") abiTypes.push("address") && values.push(contract);
      if (type === "ERC721" || type === "ERC1155") abiTypes.push("uint256") && values.push(tokenId);
      const raw = keccak256(encodePacked(abiTypes, values));
      const expected = `0x${raw.slice(4)}0${types.indexOf(type) + 1}`;
      expect(v2DelegationHash({ ...key, contract, tokenId }), JSON.stringify({ i, type })).toBe(expected);
    }
  });
});

describe("v2EnabledState", () => {
  const before: (V2State | undefined)[] = [undefined, { enabled: true, amount: 7n }, { enabled: false, amount: 0n }];
  it("is the state an enabling event leaves, whatever the state before it (v2NextState's)", () => {
    const cases: [V2DelegationType, V2Change, V2State][] = [
      ["ALL", { enable: true }, { enabled: true, amount: 0n }],
      ["ERC721", { enable: true }, { enabled: true, amount: 0n }],
      ["ERC20", { amount: 5n }, { enabled: true, amount: 5n }],
      ["ERC1155", { amount: maxUint256 }, { enabled: true, amount: maxUint256 }],
    ];
    for (const [type, change, state] of cases) {
      expect(v2EnabledState(type, change)).toEqual(state);
      for (const prev of before) expect(v2NextState(type, prev, change)).toEqual(state);
    }
  });
  it("is undefined for a revoke, whose outcome depends on the state before it", () => {
    expect(v2EnabledState("CONTRACT", { enable: false })).toBeUndefined();
    expect(v2EnabledState("ERC20", { amount: 0n })).toBeUndefined();
    const outcomes = before.map((prev) => v2NextState("CONTRACT", prev, { enable: false }));
    expect(outcomes).toEqual([undefined, { enabled: false, amount: 0n }, { enabled: false, amount: 0n }]);
  });
});

describe("v2NextState", () => {
  it("enables, revokes and re-enables bool-typed delegations", () => {
    expect(v2NextState("ALL", undefined, { enable: false })).toBeUndefined();
    const on = v2NextState("ALL", undefined, { enable: true });
    expect(on).toEqual({ enabled: true, amount: 0n });
    const off = v2NextState("ALL", on, { enable: false });
    expect(off).toEqual({ enabled: false, amount: 0n });
    expect(v2NextState("ALL", off, { enable: false })).toEqual(off);
    expect(v2NextState("ERC721", off, { enable: true })).toEqual({ enabled: true, amount: 0n });
  });
  it("treats amount 0 as a revoke and any other amount as the new balance", () => {
    expect(v2NextState("ERC20", undefined, { amount: 0n })).toBeUndefined();
    const some = v2NextState("ERC20", undefined, { amount: 5n });
    expect(some).toEqual({ enabled: true, amount: 5n });
    expect(v2NextState("ERC20", some, { amount: 9n })).toEqual({ enabled: true, amount: 9n });
    const off = v2NextState("ERC1155", some, { amount: 0n });
    expect(off).toEqual({ enabled: false, amount: 0n });
    expect(v2NextState("ERC1155", off, { amount: 3n })).toEqual({ enabled: true, amount: 3n });
  });
});

describe("v2Check", () => {
  const answer = (q: Omit<V2CheckQuery, "from" | "to"> & { from?: Address }, enabled: Record<Hex, V2State>) => {
    const check = v2Check({ from, to, ...q });
    const hashes = new Set(check.hashes);
    return check.answer((hash) => {
      expect(hashes.has(hash)).toBe(true); // only the hashes announced are looked up
      return enabled[hash];
    });
  };
  const on = (amount = 0n): V2State => ({ enabled: true, amount });
  const all = (rights: Hex = zeroHash) => v2DelegationHash({ type: "ALL", from, to, rights });
  const contract = (rights: Hex = zeroHash) =>
    v2DelegationHash({ type: "CONTRACT", from, to, rights, contract: token });
  const erc20 = (rights: Hex = zeroHash) => v2DelegationHash({ type: "ERC20", from, to, rights, contract: token });
  const erc721 = (rights: Hex = zeroHash) =>
    v2DelegationHash({ type: "ERC721", from, to, rights, contract: token, tokenId: 1n });

  it("answers false or 0 when nothing is delegated", () => {
    expect(answer({ kind: "all", rights: zeroHash }, {})).toBe(false);
    expect(answer({ kind: "erc20", rights: claim, contract: token }, {})).toBe(0n);
  });
  it("lets ALL cover contract and token checks, and makes balances 2^256-1", () => {
    const state = { [all()]: on() };
    expect(answer({ kind: "contract", rights: zeroHash, contract: token }, state)).toBe(true);
    expect(answer({ kind: "erc721", rights: zeroHash, contract: token, tokenId: 1n }, state)).toBe(true);
    expect(answer({ kind: "erc1155", rights: zeroHash, contract: token, tokenId: 1n }, state)).toBe(maxUint256);
    expect(answer({ kind: "erc20", rights: zeroHash, contract: token }, { [contract()]: on() })).toBe(maxUint256);
  });
  it("accepts empty-rights delegations for a rights check, but not the reverse", () => {
    expect(answer({ kind: "erc721", rights: claim, contract: token, tokenId: 1n }, { [erc721()]: on() })).toBe(true);
    expect(answer({ kind: "erc721", rights: zeroHash, contract: token, tokenId: 1n }, { [erc721(claim)]: on() })).toBe(
      false,
    );
    expect(answer({ kind: "all", rights: claim }, { [all(claim)]: on() })).toBe(true);
  });
  it("takes the larger balance of the empty-rights and the rights delegation", () => {
    const state = { [erc20()]: on(5n), [erc20(claim)]: on(9n) };
    expect(answer({ kind: "erc20", rights: claim, contract: token }, state)).toBe(9n);
    expect(answer({ kind: "erc20", rights: zeroHash, contract: token }, state)).toBe(5n);
    expect(answer({ kind: "erc20", rights: claim, contract: token }, { ...state, [all(claim)]: on() })).toBe(
      maxUint256,
    );
  });
  it("never lets from = 0x0 or 0x1 delegate", () => {
    for (const bad of [zeroAddress, "0x0000000000000000000000000000000000000001"] as const) {
      const query = { kind: "erc20", to, from: bad, rights: zeroHash, contract: token } as const;
      expect(v2Check(query).hashes).toEqual([]);
      expect(v2Check(query).answer(() => on(1n))).toBe(0n);
      expect(v2Check({ ...query, kind: "all" }).answer(() => on())).toBe(false);
    }
  });
});

describe("v2Vaults", () => {
  const TYPES = ["ALL", "CONTRACT", "ERC721", "ERC20", "ERC1155"] as const;
  const KINDS = ["all", "contract", "erc721", "erc1155", "erc20"] as const;
  const vaults: Address[] = [
    zeroAddress,
    "0x0000000000000000000000000000000000000001",
    ...Array.from({ length: 12 }, (_, i) => `0x${(0xa0 + i).toString(16).repeat(20)}` as Address),
  ];
  const contracts: Address[] = [token, "0x4444444444444444444444444444444444444444"];
  const rightsValues: Hex[] = [zeroHash, claim, `0x6f74686572${"0".repeat(54)}`];

  it(`answers exactly the vaults v2Check answers true or non-zero for, in address order (SEED=${SEED})`, () => {
    const next = xorshift32(SEED);
    const pick = <T>(list: readonly T[]) => list[next() % list.length]!;
    for (let round = 0; round < 200; round++) {
      // The hot wallet's enabled incoming delegations, and each one's state by its hash.
      const incoming = Array.from({ length: next() % 30 }, () => {
        const type = pick(TYPES);
        const amount = type === "ERC20" || type === "ERC1155" ? BigInt(1 + (next() % 5)) : null;
        return {
          type,
          from: pick(vaults),
          rights: pick(rightsValues),
          contract: type === "ALL" ? undefined : pick(contracts),
          tokenId: type === "ERC721" || type === "ERC1155" ? BigInt(next() % 3) : undefined,
          amount,
        };
      });
      const enabled = new Map(
        incoming.map((d) => [v2DelegationHash({ ...d, to }), { enabled: true, amount: d.amount ?? 0n }]),
      );
      const query = {
        kind: pick(KINDS),
        to,
        rights: pick(rightsValues),
        contract: pick(contracts),
        tokenId: BigInt(next() % 3),
      };
      const expected = vaults
        .map((vault) => ({ vault, answer: v2Check({ ...query, from: vault }).answer((hash) => enabled.get(hash)) }))
        .filter(({ answer }) => answer !== false && answer !== 0n)
        .sort((a, b) => (BigInt(a.vault) < BigInt(b.vault) ? -1 : 1));
      expect(
        v2Vaults(query, incoming),
        `round ${round}: ${JSON.stringify(query, (_, v) => (typeof v === "bigint" ? `${v}` : v))}`,
      ).toEqual(expected);
    }
  });

  it("lists a vault covered by an ALL delegation for every check, with 2^256-1 for balances", () => {
    const vault = vaults[5]!;
    const incoming = [{ type: "ALL" as const, from: vault, rights: zeroHash, amount: null }];
    expect(v2Vaults({ kind: "erc20", to, rights: claim, contract: token }, incoming)).toEqual([
      { vault, answer: maxUint256 },
    ]);
    expect(v2Vaults({ kind: "erc721", to, rights: zeroHash, contract: token, tokenId: 9n }, incoming)).toEqual([
      { vault, answer: true },
    ]);
    // A rights delegation does not answer a check asked with empty rights.
    const rightsOnly = [{ ...incoming[0]!, rights: claim }];
    expect(v2Vaults({ kind: "all", to, rights: zeroHash }, rightsOnly)).toEqual([]);
  });
});
