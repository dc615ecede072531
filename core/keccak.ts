/**
 * Keccak-256 in WebAssembly (hash-wasm), for what the API hashes on every request: a v2 check's
 * candidate delegation hashes (up to six) and the EIP-55 checksum of every address it lists. On
 * these short inputs it takes about a tenth of the time of viem's (noble-hashes, in JavaScript),
 * which was a third of the server's time in batches and history reads (docs/performance.md).
 */
import { createKeccak } from "hash-wasm";
import type { Address, Hex } from "viem";

// One hasher, used start to finish within each synchronous call, so calls cannot interleave.
const hasher = await createKeccak(256);

/** keccak256 of `bytes`, as 0x and 64 hex digits (as viem's `keccak256`). */
export function keccak256Hex(bytes: Uint8Array): Hex {
  hasher.init();
  hasher.update(bytes);
  return `0x${hasher.digest("hex")}`;
}

/**
 * How many addresses' checksums are kept, at least: the addresses a listing names come back in the
 * next (its wallet, popular contracts), and a checksum costs a hash (viem keeps 8,192 for getAddress).
 */
export const CHECKSUMS_HELD = 65_536;
/**
 * Checksums by the address as asked, in two generations: the newest takes what is asked, and once
 * full becomes the older, whose hits move back to the newest. Dropping the oldest entry of one Map
 * instead (its first key) made each drop walk past the holes earlier drops left: 44% of a small
 * listing's time over many wallets (bench/profile.ts).
 */
let checksums = new Map<string, Address>();
let older = new Map<string, Address>();

/** `address`, 0x and 40 hex digits in any case, in its EIP-55 checksum case (as viem's `getAddress`, unchecked). */
export function checksumAddress(address: string): Address {
  const held = checksums.get(address);
  if (held !== undefined) return held;
  const checksummed = older.get(address) ?? computeChecksum(address);
  if (checksums.size >= CHECKSUMS_HELD) [older, checksums] = [checksums, new Map()];
  checksums.set(address, checksummed);
  return checksummed;
}

/** The address being checksummed, as bytes: its case is set in place, then read once as a string. */
const spelled = Buffer.from("0x".padEnd(42, "0"), "latin1");

function computeChecksum(address: string): Address {
  spelled.write(address.slice(2).toLowerCase(), 2, "latin1");
  hasher.init();
  hasher.update(spelled.subarray(2));
  const hash = hasher.digest("binary");
  // A letter whose nibble of the hash (the i-th, high first) is 8 or more is uppercase.
  for (let i = 0; i < 40; i++) {
    const char = spelled[i + 2]!;
    if (char >= 97 /* a */ && ((i & 1) === 0 ? hash[i >> 1]! >> 4 : hash[i >> 1]! & 15) >= 8)
      spelled[i + 2] = char - 32;
  }
  return spelled.toString("latin1", 0, 42) as Address;
}
