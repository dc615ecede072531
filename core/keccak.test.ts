import { type Address, bytesToHex, getAddress, keccak256 } from "viem";
import { describe, expect, it } from "vitest";
import {
  CHECKSUM_CASE_BYTES,
  CHECKSUMS_HELD,
  checksumAddress,
  keccak256Hex,
  withChecksumCase,
  writeChecksumCase,
} from "./keccak";
import { streamBytes, xorshift32 } from "./xorshift";

const SEED = Number(process.env.SEED ?? Date.now() % 2 ** 31);
/** Seeded bytes, as hex: a failure can be replayed with SEED. */
const randomHex = (next: () => number, bytes: number) => bytesToHex(streamBytes(next, bytes));

describe(`keccak256Hex (SEED=${SEED})`, () => {
  it("is keccak256 of the empty input", () => {
    expect(keccak256Hex(new Uint8Array(0))).toBe("0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
  });

  it("equals viem's keccak256 on 2,000 seeded inputs of 0 to 300 bytes", () => {
    const next = xorshift32(SEED);
    for (let i = 0; i < 2_000; i++) {
      const hex = randomHex(next, i % 301);
      expect(keccak256Hex(Buffer.from(hex.slice(2), "hex")), hex).toBe(keccak256(hex));
    }
  });
});

describe(`checksumAddress (SEED=${SEED})`, () => {
  it("writes EIP-55's own examples as the EIP does", () => {
    for (const address of [
      "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
      "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
      "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
      "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
    ] as Address[]) {
      expect(checksumAddress(address.toLowerCase() as Address)).toBe(address);
      expect(checksumAddress(`0x${address.slice(2).toUpperCase()}`)).toBe(address);
    }
  });

  it("equals viem's getAddress on 5,000 seeded addresses, whatever their case", () => {
    const next = xorshift32(SEED ^ 0x5bd1e995);
    for (let i = 0; i < 5_000; i++) {
      const address = randomHex(next, 20) as Address;
      expect(checksumAddress(address), address).toBe(getAddress(address));
      expect(checksumAddress(getAddress(address))).toBe(getAddress(address));
    }
  });

  it("answers the same when asked again, for more addresses than it keeps checksums of", () => {
    const next = xorshift32(SEED ^ 0x2545f491);
    const addresses = Array.from({ length: 2 * CHECKSUMS_HELD + 1_000 }, () => randomHex(next, 20) as Address);
    const first = addresses.map(checksumAddress);
    // Well past what is kept, the first were let go: asked again, each is hashed anew.
    for (const [i, address] of addresses.entries()) {
      if (i % 97 !== 0 && i >= 1_000) continue;
      expect(checksumAddress(address), address).toBe(first[i]);
      expect(first[i], address).toBe(getAddress(address));
    }
  });
});

describe(`writeChecksumCase and withChecksumCase (SEED=${SEED})`, () => {
  it("spell 3,000 seeded addresses as viem's getAddress, their cases kept side by side", () => {
    const next = xorshift32(SEED ^ 0x68e31da4);
    const addresses = Array.from({ length: 3_000 }, () => randomHex(next, 20) as Address);
    const cases = new Uint8Array(CHECKSUM_CASE_BYTES * addresses.length);
    // Written in any case, each into its own bytes; spelt once all are written, from lowercase.
    for (const [i, address] of addresses.entries())
      writeChecksumCase(i % 2 === 0 ? address : getAddress(address), cases, CHECKSUM_CASE_BYTES * i);
    for (const [i, address] of addresses.entries())
      expect(withChecksumCase(address, cases, CHECKSUM_CASE_BYTES * i), address).toBe(getAddress(address));
  });
});
