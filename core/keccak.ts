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

/** `address`, 0x and 40 hex digits in any case, in its EIP-55 checksum case (as viem's `getAddress`, unchecked). */
export function checksumAddress(address: string): Address {
  const lower = address.slice(2).toLowerCase();
  hasher.init();
  hasher.update(lower);
  const hash = hasher.digest("hex");
  let out = "0x";
  for (let i = 0; i < 40; i++) out += hash.charCodeAt(i) >= 56 /* "8" */ ? lower[i]!.toUpperCase() : lower[i];
  return out as Address;
}
