import { encodeFunctionData, type Hex, parseAbi } from "viem";
import { describe, expect, it } from "vitest";
import { bytesElement, type DynamicArray, decodeCalldata } from "./calldata";

const abi = parseAbi([
  "function checkDelegateForAll(address to, address from, bytes32 rights) view returns (bool)",
  "function getDelegationsFromHashes(bytes32[] hashes) view returns (bytes32[])",
  "function supportsInterface(bytes4 id) pure returns (bool)",
  "function multicall(bytes[] data) returns (bytes[])",
]);
const TO = "0x00000000000000000000000000000000000000aa";
const FROM = "0x00000000000000000000000000000000000000bb";
const RIGHTS = `0x${"11".repeat(32)}` as Hex;
const check = encodeFunctionData({ abi, functionName: "checkDelegateForAll", args: [TO, FROM, RIGHTS] });
const types = ["address", "address", "bytes32"] as const;
/** `data` with its `n`th argument word replaced by `word` (64 hex digits). */
const withWord = (data: Hex, n: number, word: string) =>
  `${data.slice(0, 10 + 64 * n)}${word}${data.slice(10 + 64 * (n + 1))}` as Hex;

describe("decodeCalldata", () => {
  it("reads static arguments, ignoring bytes past them", () => {
    expect(decodeCalldata(types, check)).toEqual([TO, FROM, RIGHTS]);
    expect(decodeCalldata(types, `${check}ff00`)).toEqual([TO, FROM, RIGHTS]);
  });

  it("refuses a head cut short, odd hex, a character not hex, no selector", () => {
    expect(decodeCalldata(types, check.slice(0, -2) as Hex)).toBeUndefined();
    expect(decodeCalldata(types, `${check}f` as Hex)).toBeUndefined();
    expect(decodeCalldata(types, `${check.slice(0, 40)}zz${check.slice(42)}` as Hex)).toBeUndefined();
    expect(decodeCalldata(types, `${check}0g` as Hex)).toBeUndefined();
    expect(decodeCalldata(types, check.replace("0x", "") as Hex)).toBeUndefined();
    expect(decodeCalldata([], "0x01ffc9")).toBeUndefined();
  });

  it("reads uppercase hex as the same bytes", () => {
    expect(decodeCalldata(types, `0x${check.slice(2).toUpperCase()}` as Hex)).toEqual([TO, FROM, RIGHTS]);
  });

  it("refuses an address with high bytes, a bool past 1, a bytes4 with low bytes", () => {
    expect(decodeCalldata(types, withWord(check, 0, `01${"0".repeat(62)}`))).toBeUndefined();
    expect(decodeCalldata(["bool"], withWord(check, 0, `${"0".repeat(63)}2`))).toBeUndefined();
    expect(decodeCalldata(["bool"], withWord(check, 0, `${"0".repeat(63)}1`))).toEqual([true]);
    const id = encodeFunctionData({ abi, functionName: "supportsInterface", args: ["0x01ffc9a7"] });
    expect(decodeCalldata(["bytes4"], id)).toEqual(["0x01ffc9a7"]);
    expect(decodeCalldata(["bytes4"], withWord(id, 0, `01ffc9a7${"0".repeat(55)}1`))).toBeUndefined();
  });

  it("reads a bytes32[] whose elements end by the calldata's end, and refuses one past it", () => {
    const hashes = [RIGHTS, `0x${"22".repeat(32)}` as Hex];
    const data = encodeFunctionData({ abi, functionName: "getDelegationsFromHashes", args: [hashes] });
    expect(decodeCalldata(["bytes32[]"], data)).toEqual([hashes]);
    expect(decodeCalldata(["bytes32[]"], data.slice(0, -2) as Hex)).toBeUndefined();
    // A length of 3 where 2 elements follow; an offset of 2^64.
    expect(decodeCalldata(["bytes32[]"], withWord(data, 1, `${"0".repeat(63)}3`))).toBeUndefined();
    expect(decodeCalldata(["bytes32[]"], withWord(data, 0, `${"0".repeat(47)}1${"0".repeat(16)}`))).toBeUndefined();
  });

  it("reads a bytes[] element only when asked, following its offset as the code does", () => {
    const data = encodeFunctionData({ abi, functionName: "multicall", args: [[check, "0x"]] });
    const [array] = decodeCalldata(["dynamic[]"], data) as [DynamicArray];
    expect(array.length).toBe(2n);
    expect([bytesElement(array, 0n), bytesElement(array, 1n)]).toEqual([check, "0x"]);
    // Element 1's offset (word 3) replaced: past the end reverts; "negative" (-32) points back at
    // the array's length word (2), read as a length: the 2 bytes after it; 0 points at element
    // 0's offset word (0x40) read as a length: the two words after it (the spoilt one, and more).
    const spoilt = (word: string) => decodeCalldata(["dynamic[]"], withWord(data, 3, word)) as [DynamicArray];
    expect(bytesElement(spoilt("f".repeat(8).padStart(64, "0"))[0], 1n)).toBeUndefined();
    expect(bytesElement(spoilt(`${"f".repeat(62)}e0`)[0], 1n)).toBe("0x0000");
    expect(bytesElement(spoilt("0".repeat(64))[0], 1n)).toBe(
      `0x${"0".repeat(64)}${data.slice(10 + 64 * 4, 10 + 64 * 5)}`,
    );
    // Element 0 still reads alike.
    expect(bytesElement(spoilt("0".repeat(64))[0], 0n)).toBe(check);
  });
});
