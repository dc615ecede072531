/**
 * Keccak-256 in WebAssembly (hash-wasm), for what the API hashes on every request: a v2 check's
 * candidate delegation hashes (up to six) and the EIP-55 checksum of every address it lists. On
 * these short inputs it takes about a tenth of the time of viem's (noble-hashes, in JavaScript),
 * which was a third of the server's time in batches and history reads (docs/performance.md).
 */
import { createKeccak } from "hash-wasm";
import type { Address, Hex } from "viem";
import { writeHex } from "./hex";

// One hasher, used start to finish within each synchronous call, so calls cannot interleave.
const hasher = await createKeccak(256);

/** keccak256 of `bytes`, as 0x and 64 hex digits (as viem's `keccak256`). */
export function keccak256Hex(bytes: Uint8Array): Hex {
  hasher.init();
  hasher.update(bytes);
  return `0x${hasher.digest("hex")}`;
}

/**
 * How many addresses' checksums are kept, at least: those a history page, a listing at a past block
 * or a hot wallet's vaults name come back in the next (a wallet's pages, popular contracts), and a
 * checksum costs a hash (viem keeps 8,192 for getAddress; with as few, a 10,000-delegation wallet's
 * pages of 1,000 took 19.2 ms rather than 16.0). Whole listings at the head are spelt by the
 * replica's copy instead.
 */
export const CHECKSUMS_HELD = 65_536;
/** The bytes an address's EIP-55 case takes: a bit per hex digit. */
export const CHECKSUM_CASE_BYTES = 5;
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

/** The address being checksummed, as text: hashed, then spelt in place and read once as a string. */
const spelled = Buffer.from("0x".padEnd(42, "0"), "latin1");
/** The address being spelt, as bytes. */
const addressBytes = new Uint8Array(20);
/** An address's EIP-55 case, as `writeChecksumCase` writes it. */
const caseBits = new Uint8Array(CHECKSUM_CASE_BYTES);

function computeChecksum(address: string): Address {
  writeChecksumCase(address, caseBits, 0);
  return withChecksumCase(address, caseBits, 0);
}

/**
 * Writes the EIP-55 case of `address` (0x and 40 hex digits, any case) into the
 * CHECKSUM_CASE_BYTES bytes of `into` at `at`: bit i (high bit first) set when its i-th digit, if a
 * letter, is uppercase. What holds many addresses can keep their case in 5 bytes each and spell
 * each without hashing it again.
 */
export function writeChecksumCase(address: string, into: Uint8Array, at: number): void {
  spelled.write(address.slice(2).toLowerCase(), 2, "latin1");
  hasher.init();
  hasher.update(spelled.subarray(2));
  const hash = hasher.digest("binary");
  // The i-th digit's case is the hash's i-th nibble (high first): 8 or more is uppercase.
  for (let byte = 0; byte < CHECKSUM_CASE_BYTES; byte++) {
    let bits = 0;
    for (let i = 8 * byte; i < 8 * byte + 8; i++)
      bits = (bits << 1) | (((i & 1) === 0 ? hash[i >> 1]! >> 4 : hash[i >> 1]! & 15) >= 8 ? 1 : 0);
    into[at + byte] = bits;
  }
}

/** `address` (0x and 40 hex digits) in the case written at `at` of `bits` by writeChecksumCase. */
export function withChecksumCase(address: string, bits: Uint8Array, at: number): Address {
  writeHex(addressBytes, 0, address);
  writeInChecksumCase(spelled, 2, addressBytes, 0, bits, at);
  return spelled.toString("latin1", 0, 42) as Address;
}

/**
 * Writes the 20-byte address at `start` of `source` into `target` at `at` as 40 hex digits, in the
 * case written at `bitsAt` of `bits` by writeChecksumCase.
 */
export function writeInChecksumCase(
  target: Uint8Array,
  at: number,
  source: Uint8Array,
  start: number,
  bits: Uint8Array,
  bitsAt: number,
): void {
  for (let i = 0; i < 20; i++) {
    const byte = source[start + i]!;
    // This byte's two digits' bits, shifted to 0x80 and 0x40.
    const pair = bits[bitsAt + (i >> 2)]! << (2 * (i & 3));
    target[at++] = ((pair & 0x80) === 0 ? LOWER : UPPER)[byte >> 4]!;
    target[at++] = ((pair & 0x40) === 0 ? LOWER : UPPER)[byte & 15]!;
  }
}

const LOWER = Uint8Array.from("0123456789abcdef", (c) => c.charCodeAt(0));
const UPPER = Uint8Array.from("0123456789ABCDEF", (c) => c.charCodeAt(0));
