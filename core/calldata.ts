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

/**
 * The parameter types of the registries' views, and of what calls them (their `multicall`, and
 * Multicall3's): "dynamic[]" is an array of dynamic elements (`bytes[]`, or structs holding `bytes`).
 */
export type CallParam = "address" | "bool" | "bytes4" | "bytes32" | "uint256" | "bytes32[]" | "dynamic[]";

/**
 * An array of dynamic elements: the code checks an element's offset only when it reads the element
 * (dynamicElement, bytesElement), so one spoilt element reverts only if the code gets to it.
 */
export type DynamicArray = { bytes: Uint8Array; base: bigint; length: bigint };

/** A decoded argument: an address or a bytes4/bytes32 as hex, a bool, a uint256, a bytes32[]. */
export type CallArg = Hex | boolean | bigint | Hex[] | DynamicArray;

/** The arguments, or undefined where the contract's decoder reverts. */
export type Decoded = CallArg[] | undefined;

const LIMIT_64 = 1n << 64n;
const ADDRESS_BITS = 160n;
const LOW_28_BYTES = (1n << 224n) - 1n;

/** The calldata after its 4-byte selector, as bytes; undefined when it is not hex of whole bytes. */
function bytesOf(data: Hex): Uint8Array | undefined {
  if (!/^0x([0-9a-fA-F]{2})*$/.test(data)) return undefined;
  const bytes = Buffer.from(data.slice(2), "hex");
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
}

/** The 32-byte word at `at` of `bytes` (zero past its end), as CALLDATALOAD reads it. */
function word(bytes: Uint8Array, at: bigint): bigint {
  if (at >= BigInt(bytes.length)) return 0n;
  const from = Number(at);
  const hex = Buffer.from(bytes.buffer, bytes.byteOffset + from, Math.min(32, bytes.length - from)).toString("hex");
  return BigInt(`0x${hex.padEnd(64, "0")}`);
}

const hex32 = (value: bigint): Hex => `0x${value.toString(16).padStart(64, "0")}`;

/** One static argument's word as its type reads it; undefined where the decoder's validator reverts. */
function staticArg(type: Exclude<CallParam, "bytes32[]" | "dynamic[]">, value: bigint): CallArg | undefined {
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
 * A `T[] calldata` (T a word, or dynamic) whose offset word is `offset` (from the arguments' start,
 * `start`), in calldata of `end` bytes: where its element words start, and how many; undefined where
 * the decoder reverts.
 */
function arrayAt(bytes: Uint8Array, start: bigint, offset: bigint, end: bigint): DynamicArray | undefined {
  if (offset >= LIMIT_64) return undefined;
  const at = start + offset;
  if (!(at + 31n < end)) return undefined;
  const length = word(bytes, at);
  if (length >= LIMIT_64) return undefined;
  const base = at + 32n;
  if (base + length * 32n > end) return undefined;
  return { bytes, base, length };
}

/** The argument at word `at` of type `type`; undefined where the decoder reverts. */
function argAt(bytes: Uint8Array, type: CallParam, at: bigint): CallArg | undefined {
  const value = word(bytes, at);
  const end = BigInt(bytes.length);
  if (type !== "bytes32[]" && type !== "dynamic[]") return staticArg(type, value);
  const array = arrayAt(bytes, 4n, value, end);
  if (array === undefined || type === "dynamic[]") return array;
  return Array.from({ length: Number(array.length) }, (_, i) => hex32(word(bytes, array.base + BigInt(i) * 32n)));
}

// The code's own arithmetic on calldata positions: words modulo 2^256, compared signed where it
// compares signed (a "negative" offset points back into the calldata, and the code accepts it).
const MOD = 1n << 256n;
const wrap = (value: bigint) => ((value % MOD) + MOD) % MOD;
const signed = (value: bigint) => (value >= MOD / 2n ? value - MOD : value);

/**
 * Where the tail whose offset (from `base`) is the word at `pointer` starts, for a tail whose head
 * takes `head` bytes; undefined where the code reverts (Solidity's access_calldata_tail).
 */
function tailAt(bytes: Uint8Array, base: bigint, pointer: bigint, head: bigint): bigint | undefined {
  const relative = word(bytes, pointer);
  const room = wrap(BigInt(bytes.length) - base - (head - 1n));
  return signed(relative) < signed(room) ? wrap(base + relative) : undefined;
}

/** The `bytes calldata` whose offset (from `base`) is the word at `pointer`; undefined where the code reverts. */
export function bytesAt(bytes: Uint8Array, base: bigint, pointer: bigint): Hex | undefined {
  const at = tailAt(bytes, base, pointer, 32n);
  if (at === undefined) return undefined;
  const length = word(bytes, at);
  if (length >= LIMIT_64) return undefined;
  const first = wrap(at + 32n);
  if (signed(first) > signed(wrap(BigInt(bytes.length) - length))) return undefined;
  // Past the check, bytes of any length end by the calldata's end ("negative" starts read none).
  if (length === 0n) return "0x";
  const from = Number(first);
  return `0x${Buffer.from(bytes.buffer, bytes.byteOffset + from, Number(length)).toString("hex")}`;
}

/** Element `index` of an array of `bytes`; undefined where the code reverts on reading it. */
export const bytesElement = (array: DynamicArray, index: bigint) =>
  bytesAt(array.bytes, array.base, array.base + index * 32n);

/** Where struct element `index` (a head of `head` bytes) starts; undefined where the code reverts on reading it. */
export const dynamicElement = (array: DynamicArray, index: bigint, head: bigint) =>
  tailAt(array.bytes, array.base, array.base + index * 32n, head);

/** The word at `at` read as `type` (a struct's member); undefined where the code's validator reverts. */
export const memberAt = (bytes: Uint8Array, type: Exclude<CallParam, "bytes32[]" | "dynamic[]">, at: bigint) =>
  staticArg(type, word(bytes, at));

/** The word at `at`, unvalidated (as the code reads it in assembly). */
export const wordAt = word;

/**
 * The arguments of `types` in `data` (the whole calldata, selector included), or undefined where
 * the registries' code reverts on it.
 */
export function decodeCalldata(types: readonly CallParam[], data: Hex): Decoded {
  const bytes = bytesOf(data);
  if (bytes === undefined || bytes.length < 4) return undefined;
  if (BigInt(bytes.length) - 4n < BigInt(types.length) * 32n) return undefined;
  const args: CallArg[] = [];
  for (const [i, type] of types.entries()) {
    const arg = argAt(bytes, type, 4n + BigInt(i) * 32n);
    if (arg === undefined) return undefined;
    args.push(arg);
  }
  return args;
}
