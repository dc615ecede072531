/**
 * Writes the hex digits of `hex` (after its 0x, either case) into `target` from `offset`, two per
 * byte; where the bytes end. Unchecked: `hex` is what a parser or the registry's events gave.
 */
export function writeHex(target: Uint8Array, offset: number, hex: string): number {
  let at = offset;
  for (let i = 2; i < hex.length; i += 2, at++)
    target[at] = (nibble(hex.charCodeAt(i)) << 4) | nibble(hex.charCodeAt(i + 1));
  return at;
}

/**
 * A hex digit's value, without a branch: digits are 0x30–0x39, letters 0x41–0x46 and 0x61–0x66, so
 * the low four bits are the digit's (a letter's less 9) and bit 6 says letter. With a branch, random
 * hex mispredicted often enough to show in the copy's lookups (docs/performance.md).
 */
const nibble = (code: number) => (code & 15) + 9 * (code >> 6);

/**
 * Writes `value` (0 ≤ value < 2^256) into `target` from `offset` as 32 big-endian bytes, as
 * abi.encodePacked packs a uint256; where they end.
 */
export function writeUint256(target: Uint8Array, offset: number, value: bigint): number {
  // Most tokenIds written are a key's 0 (v1 ALL and CONTRACT): no text to make.
  if (value === 0n) {
    target.fill(0, offset, offset + 32);
    return offset + 32;
  }
  return writeHex(target, offset, `0x${value.toString(16).padStart(64, "0")}`);
}
