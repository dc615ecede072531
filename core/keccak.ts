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
 * How many addresses' checksums are kept: the addresses a listing names come back in the next
 * (its wallet, popular contracts), and a checksum costs a hash (viem keeps 8,192 for getAddress).
 */
export const CHECKSUMS_HELD = 65_536;
/** Checksums by the address as asked, oldest first out once CHECKSUMS_HELD are held. */
const checksums = new Map<string, Address>();

/** `address`, 0x and 40 hex digits in any case, in its EIP-55 checksum case (as viem's `getAddress`, unchecked). */
export function checksumAddress(address: string): Address {
  const held = checksums.get(address);
  if (held !== undefined) return held;
  const lower = address.slice(2).toLowerCase();
  hasher.init();
  hasher.update(lower);
  const hash = hasher.digest("hex");
  let out = "0x";
  for (let i = 0; i < 40; i++) out += hash.charCodeAt(i) >= 56 /* "8" */ ? lower[i]!.toUpperCase() : lower[i];
  if (checksums.size >= CHECKSUMS_HELD) checksums.delete(checksums.keys().next().value!);
  checksums.set(address, out as Address);
  return out as Address;
}
