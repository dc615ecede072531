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

/**
 * The calldata as bytes; undefined when it is not hex of whole bytes. Node's hex decoding stops at
 * the first pair that is not hex, so whole bytes decoded are whole hex read.
 */
function bytesOf(data: Hex): Uint8Array | undefined {
  if (!data.startsWith("0x") || data.length % 2 !== 0) return undefined;
  const bytes = Buffer.from(data.slice(2), "hex");
  if (bytes.length !== (data.length - 2) / 2) return undefined;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
}

/** The 32-byte word at `at` of `bytes` (zero past its end), as CALLDATALOAD reads it. */
function word(bytes: Uint8Array, at: bigint): bigint {
  if (at >= BigInt(bytes.length)) return 0n;
  const from = Number(at);
  const hex = Buffer.from(bytes.buffer, bytes.byteOffset + from, Math.min(32, bytes.length - from)).toString("hex");
  return BigInt(`0x${hex.padEnd(64, "0")}`);
}

/** The same word as its 32 bytes: a view where it lies whole in `bytes`, else a zero-padded copy. */
function wordBytes(bytes: Uint8Array, at: bigint): Uint8Array {
  if (at + 32n <= BigInt(bytes.length)) return bytes.subarray(Number(at), Number(at) + 32);
  const padded = new Uint8Array(32);
  if (at < BigInt(bytes.length)) padded.set(bytes.subarray(Number(at)));
  return padded;
}

const zeroIn = (w: Uint8Array, from: number, to: number) => {
  for (let i = from; i < to; i++) if (w[i] !== 0) return false;
  return true;
};
const hexIn = (w: Uint8Array, from: number, to: number): Hex =>
  `0x${Buffer.from(w.buffer, w.byteOffset + from, to - from).toString("hex")}`;

/**
 * One static argument's word (its 32 bytes) as its type reads it; undefined where the decoder's
 * validator reverts. Read from the bytes: a check's arguments are most of a call's decoding.
 */
function staticArg(type: Exclude<CallParam, "bytes32[]" | "dynamic[]">, w: Uint8Array): CallArg | undefined {
  switch (type) {
    case "address":
      return zeroIn(w, 0, 12) ? hexIn(w, 12, 32) : undefined;
    case "bool":
      return zeroIn(w, 0, 31) && w[31]! <= 1 ? w[31] === 1 : undefined;
    case "bytes4":
      return zeroIn(w, 4, 32) ? hexIn(w, 0, 4) : undefined;
    case "bytes32":
      return hexIn(w, 0, 32);
    case "uint256":
      return BigInt(hexIn(w, 0, 32));
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
  if (type !== "bytes32[]" && type !== "dynamic[]") return staticArg(type, wordBytes(bytes, at));
  const array = arrayAt(bytes, 4n, word(bytes, at), BigInt(bytes.length));
  if (array === undefined || type === "dynamic[]") return array;
  return Array.from({ length: Number(array.length) }, (_, i) =>
    hexIn(wordBytes(bytes, array.base + BigInt(i) * 32n), 0, 32),
  );
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
  staticArg(type, wordBytes(bytes, at));

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
