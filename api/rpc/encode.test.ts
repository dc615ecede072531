import { type Abi, type AbiFunction, type AbiParameter, encodeFunctionResult, getAddress, toHex } from "viem";
import { describe, expect, it } from "vitest";
import { multicall3Abi } from "../../core/abi/multicall3";
import { registryV1Abi } from "../../core/abi/registryV1";
import { registryV2Abi } from "../../core/abi/registryV2";
import { encodedByHand, encodeResult } from "./encode";

/** A seeded generator (the API's tests import nothing of devkit/): Park–Miller, its state in 1..2^31-2. */
let state = 20261129;
const next = () => {
  state = (state * 48271) % 2147483647;
  return state;
};
const rng = {
  int: (n: number) => next() % n,
  chance: (p: number) => next() / 2147483647 < p,
  pick: <T>(items: readonly T[]) => items[next() % items.length]!,
  bigint: (bits: number) => {
    let value = 0n;
    for (let b = 0; b < bits; b += 24) value = (value << 24n) | BigInt(next() & 0xffffff);
    return value & ((1n << BigInt(bits)) - 1n);
  },
};

/** A random value of `param`'s type (small arrays; addresses lowercase or checksummed, as rows hold them). */
function randomValue(param: AbiParameter): unknown {
  const { type } = param;
  if (type.endsWith("[]")) {
    const element = { ...param, type: type.slice(0, -2) } as AbiParameter;
    return Array.from({ length: rng.int(4) }, () => randomValue(element));
  }
  if (type === "tuple")
    return Object.fromEntries(
      (param as { components: readonly AbiParameter[] }).components.map((c) => [c.name!, randomValue(c)]),
    );
  if (type === "address") {
    const address = toHex(rng.bigint(160), { size: 20 });
    return rng.chance(0.5) ? getAddress(address) : address;
  }
  if (type === "bool") return rng.chance(0.5);
  if (type === "uint8") return rng.int(6);
  if (type.startsWith("uint")) return rng.pick([0n, 1n, rng.bigint(64), rng.bigint(256)]);
  if (type === "bytes32") return toHex(rng.bigint(256), { size: 32 });
  if (type === "bytes4") return toHex(rng.bigint(32), { size: 4 });
  if (type === "bytes") {
    // Whole bytes, as calldata and return data are; sometimes none.
    const size = rng.int(70);
    return size === 0 ? "0x" : toHex(rng.bigint(8 * size), { size });
  }
  throw new Error(`no values of ${type} here`);
}

describe("encodeResult", () => {
  // Each registry's views, and Multicall3's functions whose results /rpc answers.
  const views = [...(registryV2Abi as Abi), ...(registryV1Abi as Abi), ...(multicall3Abi as Abi)].filter(
    (item): item is AbiFunction => item.type === "function" && item.outputs.length > 0,
  );

  it("encodes every view's return value exactly as viem does", () => {
    expect(
      views.filter((fn) => !encodedByHand(fn)).map((fn) => fn.name),
      "left to viem",
    ).toEqual([]);
    for (const fn of views)
      for (let i = 0; i < 30; i++) {
        const values = fn.outputs.map(randomValue);
        const value = values.length === 1 ? values[0] : values;
        const expected = encodeFunctionResult({ abi: [fn], functionName: fn.name, result: value as never });
        expect(encodeResult(fn, value), `${fn.name} ${i}`).toBe(expected);
      }
  });
});
