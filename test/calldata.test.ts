/**
 * core/calldata.ts against the registries themselves: for every view of both registries, calldata
 * encoded from random arguments and then spoilt at random (cut short, padded, an address's high
 * bytes set, a bool past 1, a bytes4's low bytes set, an array's offset or length moved), sent to
 * the real contracts on anvil as eth_call. Where the contract reverts the decoder must refuse;
 * where it answers the decoder must read arguments, and those arguments, encoded cleanly, must get
 * the same answer from the contract (the decoder read what the contract read).
 *
 * Reproduce a failure with the seed it prints: SEED=<n> npx vitest run test/calldata.test.ts
 */
import { type Abi, type AbiFunction, type Address, encodeFunctionData, type Hex, toFunctionSelector } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CallParam, decodeCalldata } from "../core/calldata";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { abis, installRegistries } from "../devkit/oracle";
import { chooseSeed, Rng } from "../devkit/random";
import { rpc } from "../devkit/rpc";

const SEED = chooseSeed();
console.log(`[calldata] SEED=${SEED} (rerun with SEED=${SEED} npx vitest run test/calldata.test.ts)`);
const VARIANTS_PER_VIEW = 120;

let anvil: Anvil;
let registries: Record<"v1" | "v2", Address>;

beforeAll(async () => {
  anvil = await startAnvil();
  registries = await installRegistries(anvil.url);
}, 120_000);

afterAll(async () => {
  await anvil?.stop();
});

/** The views of `abi` whose parameters core/calldata.ts reads. */
function views(abi: Abi): AbiFunction[] {
  const readable = new Set<string>(["address", "bool", "bytes4", "bytes32", "uint256", "bytes32[]"]);
  return abi.filter(
    (item): item is AbiFunction =>
      item.type === "function" &&
      (item.stateMutability === "view" || item.stateMutability === "pure") &&
      item.inputs.every((input) => readable.has(input.type)),
  );
}

/** `bytes` random bytes as hex. */
const hexOf = (rng: Rng, bytes: number): Hex =>
  `0x${rng
    .bigint(bytes * 8)
    .toString(16)
    .padStart(bytes * 2, "0")}`;

/** A random argument of `type`: small and edge values, so that the contract's answers vary. */
function randomArg(rng: Rng, type: CallParam): unknown {
  switch (type) {
    case "address":
      return rng.pick(["0x0000000000000000000000000000000000000000", hexOf(rng, 20)]);
    case "bool":
      return rng.int(2) === 1;
    case "bytes4":
      return rng.pick(["0x01ffc9a7", "0x5f68bc5a", hexOf(rng, 4)]);
    case "bytes32":
      return rng.pick([`0x${"0".repeat(64)}`, hexOf(rng, 32)]);
    case "uint256":
      return rng.pick([0n, 1n, BigInt(hexOf(rng, 32))]);
    case "bytes32[]":
      return Array.from({ length: rng.int(4) }, () => hexOf(rng, 32));
  }
}

/** A word (32 bytes) of `data` from byte `at`, replaced by `value`. */
function setWord(data: Hex, at: number, value: bigint): Hex {
  const hex = data.slice(2);
  const start = at * 2;
  if (start + 64 > hex.length) return data;
  return `0x${hex.slice(0, start)}${value.toString(16).padStart(64, "0").slice(-64)}${hex.slice(start + 64)}`;
}

/** `data` spoilt one way, at random, in a way the decoder must judge as the contract does. */
function spoil(rng: Rng, types: CallParam[], data: Hex): Hex {
  const bytes = (data.length - 2) / 2;
  const slot = types.length === 0 ? 0 : rng.int(types.length);
  const head = 4 + slot * 32;
  switch (rng.int(9)) {
    case 0:
      return data.slice(0, 2 + 2 * (4 + rng.int(Math.max(1, bytes - 3)))) as Hex;
    case 1:
      return `${data}${hexOf(rng, 1 + rng.int(40)).slice(2)}` as Hex;
    case 2:
      return setWord(
        data,
        head,
        (BigInt(hexOf(rng, 12)) << 160n) | BigInt(`0x${data.slice(2 + 2 * head + 24, 2 + 2 * head + 64)}`),
      );
    case 3:
      return setWord(data, head, BigInt(rng.int(4)));
    case 4:
      return setWord(data, head, BigInt(hexOf(rng, 32)) & ((1n << 224n) - 1n));
    case 5:
      return setWord(data, head, BigInt(rng.pick([0, 32, 64, 96, bytes, bytes - 36, 1 << 20])));
    case 6:
      return setWord(data, head, (1n << 64n) - 1n + BigInt(rng.int(3)));
    case 7:
      // An array's length word (its offset's target), moved.
      return setWord(
        data,
        4 + Number(BigInt(`0x${data.slice(2 + 2 * head, 2 + 2 * head + 64)}`) % 4096n),
        BigInt(rng.pick([0, 1, 5, 1000, 2 ** 40])),
      );
    default:
      return data;
  }
}

type Outcome = { reverted: true } | { reverted: false; result: Hex };

async function call(to: Address, data: Hex): Promise<Outcome> {
  try {
    return { reverted: false, result: (await rpc(anvil.url, "eth_call", [{ to, data }, "latest"])) as Hex };
  } catch (error) {
    if (/revert/i.test(String((error as Error).message))) return { reverted: true };
    throw error;
  }
}

describe("calldata as the registries read it", () => {
  it("refuses where each view reverts, and reads what each view reads", async () => {
    const rng = new Rng(SEED);
    const wrong: string[] = [];
    let compared = 0;
    let reverted = 0;
    for (const version of ["v2", "v1"] as const) {
      for (const view of views(abis[version])) {
        const types = view.inputs.map((input) => input.type as CallParam);
        const selector = toFunctionSelector(view);
        for (let i = 0; i < VARIANTS_PER_VIEW; i++) {
          const args = types.map((type) => randomArg(rng, type));
          const clean = encodeFunctionData({ abi: [view], functionName: view.name, args });
          const data = i === 0 ? clean : spoil(rng, types, clean);
          const [outcome, decoded] = [await call(registries[version], data), decodeCalldata(types, data)];
          compared++;
          const where = `${version} ${view.name} ${data}`;
          if (outcome.reverted) {
            reverted++;
            if (decoded !== undefined) wrong.push(`${where}: the contract reverts, the decoder read ${decoded}`);
            continue;
          }
          if (decoded === undefined) {
            wrong.push(`${where}: the contract answers ${outcome.result}, the decoder refuses`);
            continue;
          }
          const again = encodeFunctionData({ abi: [view], functionName: view.name, args: decoded });
          const cleanly = await call(registries[version], again);
          if (cleanly.reverted || cleanly.result !== outcome.result)
            wrong.push(`${where}: read as ${again} the contract answers otherwise`);
          expect(again.slice(0, 10)).toBe(selector);
        }
      }
    }
    console.log(`[calldata] SEED=${SEED}: ${compared} calls, ${reverted} reverted, ${wrong.length} judged wrong`);
    expect(wrong.slice(0, 10), `SEED=${SEED}`).toEqual([]);
    expect(reverted, "spoilt calldata reverts sometimes").toBeGreaterThan(50);
    expect(compared - reverted, "and is answered sometimes").toBeGreaterThan(50);
  }, 600_000);
});
