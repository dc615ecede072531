/**
 * Calldata read as the registries' compiled code reads it (Solidity's ABI decoder, version 2, for
 * an external function's calldata parameters): where that code reverts, so does this, and what it
 * accepts is read as it reads it. A node answers such a revert with `execution reverted` and no
 * data; the service must answer it alike, never with a value.
 *
 * What the decoder checks: the head is all there (calldata after the selector at least 32 bytes
 * per parameter); an address's 12 high bytes are zero, a bool is 0 or 1, a bytes4's low 28 bytes
 * are zero; a dynamic array's offset is below 2^64, its length word lies before the calldata's end,
 * its length is below 2^64 and its elements end by the calldata's end. Bytes past the arguments
 * are ignored, as Solidity ignores them. Words past the end read as zero (CALLDATALOAD's padding).
 */
import type { Hex } from "viem";

/** The parameter types of the registries' views. */
export type CallParam = "address" | "bool" | "bytes4" | "bytes32" | "uint256" | "bytes32[]";

/** A decoded argument: an address or a bytes4/bytes32 as hex, a bool, a uint256, a bytes32[]. */
export type CallArg = Hex | boolean | bigint | Hex[];

/** The arguments, or undefined where the contract's decoder reverts. */
export type Decoded = CallArg[] | undefined;

const LIMIT_64 = 1n << 64n;
const ADDRESS_BITS = 160n;
const LOW_28_BYTES = (1n << 224n) - 1n;

/** The calldata after its 4-byte selector, as bytes; undefined when it is not hex of whole bytes. */
function bytesOf(data: Hex): Uint8Array | undefined {
  if (!/^0x([0-9a-fA-F]{2})*$/.test(data)) return undefined;
  return Uint8Array.from(Buffer.from(data.slice(2), "hex"));
}

/** The 32-byte word at `at` of `bytes` (zero past its end), as CALLDATALOAD reads it. */
function word(bytes: Uint8Array, at: bigint): bigint {
  let value = 0n;
  for (let i = 0n; i < 32n; i++) {
    const index = at + i;
    const byte = index < BigInt(bytes.length) ? bytes[Number(index)]! : 0;
    value = (value << 8n) | BigInt(byte);
  }
  return value;
}

const hex32 = (value: bigint): Hex => `0x${value.toString(16).padStart(64, "0")}`;

/** One static argument's word as its type reads it; undefined where the decoder's validator reverts. */
function staticArg(type: Exclude<CallParam, "bytes32[]">, value: bigint): CallArg | undefined {
  switch (type) {
    case "address":
      return value >> ADDRESS_BITS === 0n ? (`0x${value.toString(16).padStart(40, "0")}` as Hex) : undefined;
    case "bool":
      return value <= 1n ? value === 1n : undefined;
    case "bytes4":
      return (value & LOW_28_BYTES) === 0n ? (`0x${(value >> 224n).toString(16).padStart(8, "0")}` as Hex) : undefined;
    case "bytes32":
      return hex32(value);
    case "uint256":
      return value;
  }
}

/**
 * A `bytes32[] calldata` whose offset word is `offset` (from the arguments' start, `start`), in
 * calldata of `end` bytes; undefined where the decoder reverts.
 */
function bytes32Array(bytes: Uint8Array, start: bigint, offset: bigint, end: bigint): Hex[] | undefined {
  if (offset >= LIMIT_64) return undefined;
  const at = start + offset;
  if (!(at + 31n < end)) return undefined;
  const length = word(bytes, at);
  if (length >= LIMIT_64) return undefined;
  const first = at + 32n;
  if (first + length * 32n > end) return undefined;
  return Array.from({ length: Number(length) }, (_, i) => hex32(word(bytes, first + BigInt(i) * 32n)));
}

/**
 * The arguments of `types` in `data` (the whole calldata, selector included), or undefined where
 * the registries' code reverts on it.
 */
export function decodeCalldata(types: readonly CallParam[], data: Hex): Decoded {
  const bytes = bytesOf(data);
  if (bytes === undefined || bytes.length < 4) return undefined;
  const start = 4n;
  const end = BigInt(bytes.length);
  if (end - start < BigInt(types.length) * 32n) return undefined;
  const args: CallArg[] = [];
  for (const [i, type] of types.entries()) {
    const value = word(bytes, start + BigInt(i) * 32n);
    const arg = type === "bytes32[]" ? bytes32Array(bytes, start, value, end) : staticArg(type, value);
    if (arg === undefined) return undefined;
    args.push(arg);
  }
  return args;
}
