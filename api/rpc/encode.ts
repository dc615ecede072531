/**
 * A view's return value ABI-encoded, by hand where viem's general encoder costs most: one static
 * value, or an array of static values or of static structs (a 1,000-delegation listing takes
 * viem's encoder ~10 ms; this, a small share of one). Anything else is viem's encodeFunctionResult,
 * whose output this matches byte for byte (api/rpc/encode.test.ts).
 */
import { type AbiFunction, type AbiParameter, encodeFunctionResult, type Hex } from "viem";

const word = (value: bigint) => value.toString(16).padStart(64, "0");

/** Whether a parameter is encoded in place (no offset): a value type, or a struct of them. */
function isStatic(param: AbiParameter): boolean {
  if (param.type === "tuple")
    return (param as { components: readonly AbiParameter[] }).components.every((c) => isStatic(c));
  return /^(address|bool|uint\d*|bytes([1-9]|[12]\d|3[0-2]))$/.test(param.type);
}

/** The words of a static value (unsigned integers only: a signed one goes to viem). */
function staticWords(param: AbiParameter, value: unknown): string {
  const { type } = param;
  if (type === "tuple") {
    const struct = value as Record<string, unknown>;
    return (param as { components: readonly AbiParameter[] }).components
      .map((c) => staticWords(c, struct[c.name!]))
      .join("");
  }
  if (type === "address") return (value as string).slice(2).toLowerCase().padStart(64, "0");
  if (type === "bool") return word(value ? 1n : 0n);
  if (type.startsWith("uint")) return word(BigInt(value as bigint | number));
  return (value as string).slice(2).toLowerCase().padEnd(64, "0");
}

/** `fn`'s return value `value` (its one output's), ABI-encoded as the contract returns it. */
export function encodeResult(fn: AbiFunction, value: unknown): Hex {
  const [output] = fn.outputs;
  if (fn.outputs.length === 1 && output !== undefined && !output.type.startsWith("int")) {
    if (isStatic(output)) return `0x${staticWords(output, value)}`;
    const element = { ...output, type: output.type.slice(0, -2) } as AbiParameter;
    if (output.type.endsWith("[]") && !element.type.endsWith("]") && isStatic(element)) {
      const items = value as unknown[];
      return `0x${word(32n)}${word(BigInt(items.length))}${items.map((item) => staticWords(element, item)).join("")}`;
    }
  }
  return encodeFunctionResult({ abi: [fn], functionName: fn.name, result: value as never });
}
