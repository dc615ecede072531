/**
 * A view's return values ABI-encoded, by hand where viem's general encoder costs most (a
 * 1,000-delegation listing takes viem's encoder ~10 ms; this, a small share of one; an aggregate3 of
 * 100 checks, an eighth of its time): value types, `bytes`, dynamic arrays and structs of them.
 * Anything else (signed integers, strings, fixed-size arrays) is viem's encodeFunctionResult, whose
 * output this matches byte for byte (api/rpc/encode.test.ts).
 */
import { type AbiFunction, type AbiParameter, encodeFunctionResult, type Hex } from "viem";

const word = (value: bigint) => value.toString(16).padStart(64, "0");
const componentsOf = (param: AbiParameter) => (param as { components: readonly AbiParameter[] }).components;
const elementOf = (param: AbiParameter) => ({ ...param, type: param.type.slice(0, -2) }) as AbiParameter;

/** Whether this encodes `param`'s type: unsigned value types, bytes, dynamic arrays and structs of them. */
function handled(param: AbiParameter): boolean {
  const { type } = param;
  if (type === "tuple") return componentsOf(param).every(handled);
  if (type.endsWith("[]")) return handled(elementOf(param));
  return /^(address|bool|bytes|uint\d*|bytes([1-9]|[12]\d|3[0-2]))$/.test(type);
}

/** Whether a value of `param` is encoded apart from its head (behind an offset). */
const isDynamic = (param: AbiParameter): boolean =>
  param.type === "bytes" ||
  param.type.endsWith("[]") ||
  (param.type === "tuple" && componentsOf(param).some(isDynamic));

/** The bytes a static value takes in its head. */
const staticSize = (param: AbiParameter): number =>
  param.type === "tuple" ? componentsOf(param).reduce((size, c) => size + staticSize(c), 0) : 32;

/** The words of a static value. */
function staticWords(param: AbiParameter, value: unknown): string {
  const { type } = param;
  if (type === "tuple") {
    const components = componentsOf(param);
    const values = Array.isArray(value) ? value : components.map((c) => (value as Record<string, unknown>)[c.name!]);
    return components.map((c, i) => staticWords(c, values[i])).join("");
  }
  if (type === "address") return (value as string).slice(2).toLowerCase().padStart(64, "0");
  if (type === "bool") return word(value ? 1n : 0n);
  if (type.startsWith("uint")) return word(BigInt(value as bigint | number));
  return (value as string).slice(2).toLowerCase().padEnd(64, "0");
}

/** A struct's members (an object by name, or an array in order) as a tuple's encoding. */
function tupleWords(params: readonly AbiParameter[], value: unknown): string {
  const values = Array.isArray(value) ? value : params.map((p) => (value as Record<string, unknown>)[p.name!]);
  return encodeTuple(params, values);
}

/** `values` of `params`, as a tuple: the heads (static values, or offsets), then the dynamic values. */
function encodeTuple(params: readonly AbiParameter[], values: readonly unknown[]): string {
  let size = 0;
  for (const param of params) size += isDynamic(param) ? 32 : staticSize(param);
  let head = "";
  let tail = "";
  for (const [i, param] of params.entries()) {
    if (!isDynamic(param)) {
      head += staticWords(param, values[i]);
      continue;
    }
    head += word(BigInt(size + tail.length / 2));
    tail += dynamicWords(param, values[i]);
  }
  return head + tail;
}

/** The words of a dynamic value: bytes (length, then padded), an array (length, then a tuple), a struct. */
function dynamicWords(param: AbiParameter, value: unknown): string {
  if (param.type === "bytes") {
    const hex = (value as string).slice(2).toLowerCase();
    return word(BigInt(hex.length / 2)) + hex.padEnd(Math.ceil(hex.length / 64) * 64, "0");
  }
  if (param.type === "tuple") return tupleWords(componentsOf(param), value);
  const items = value as unknown[];
  const element = elementOf(param);
  // Static elements (a listing's structs, its hashes) lie in place, one after another.
  const body = isDynamic(element)
    ? encodeTuple(
        items.map(() => element),
        items,
      )
    : items.map((item) => staticWords(element, item)).join("");
  return word(BigInt(items.length)) + body;
}

const byHand = new WeakMap<AbiFunction, boolean>();
/** Whether encodeResult encodes `fn`'s return values by hand (asked once per function). */
export function encodedByHand(fn: AbiFunction): boolean {
  const held = byHand.get(fn);
  if (held !== undefined) return held;
  const handles = fn.outputs.every(handled);
  byHand.set(fn, handles);
  return handles;
}

/** `fn`'s return value `value` (its one output's, or an array of its outputs'), ABI-encoded as returned. */
export function encodeResult(fn: AbiFunction, value: unknown): Hex {
  if (encodedByHand(fn))
    return `0x${encodeTuple(fn.outputs, fn.outputs.length === 1 ? [value] : (value as unknown[]))}`;
  return encodeFunctionResult({ abi: [fn], functionName: fn.name, result: value as never });
}
