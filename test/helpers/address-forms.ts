import { type Address, getAddress } from "viem";

/** The spellings of an address that docs/api.md accepts and rejects, for every address input. */

/** The address with its hex digits lowercase. */
export const lowerHex = (a: string) => `0x${a.slice(2).toLowerCase()}`;
/** The address with its hex digits uppercase (the 0x prefix kept). */
export const upperHex = (a: string) => `0x${a.slice(2).toUpperCase()}`;

/** A mixed-case address whose checksum is wrong: the case of one letter flipped. */
export function badChecksum(a: Address): string {
  const i = [...a].findIndex((ch, k) => k >= 2 && /[a-fA-F]/.test(ch));
  const ch = a[i]!;
  const flipped = ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase();
  const bad = a.slice(0, i) + flipped + a.slice(i + 1);
  // Still mixed case, so it must be judged by its checksum.
  if (bad.slice(2) === bad.slice(2).toLowerCase() || bad.slice(2) === bad.slice(2).toUpperCase())
    throw new Error(`no mixed case: ${bad}`);
  return bad;
}

export const ACCEPTED_ADDRESS_FORMS: [string, (a: Address) => string][] = [
  ["lowercase", lowerHex],
  ["uppercase hex digits", upperHex],
  ["EIP-55", (a) => getAddress(a)],
];

/** "empty" cannot be a path segment: path tests leave it out. */
export const REJECTED_ADDRESS_FORMS: [string, (a: Address) => string][] = [
  ["mixed case with a bad checksum", badChecksum],
  ["an ENS name", () => "vitalik.eth"],
  ["a leading space", (a) => ` ${a}`],
  ["a trailing space", (a) => `${a} `],
  ["39 hex digits", (a) => a.slice(0, -1)],
  ["41 hex digits", (a) => `${a}0`],
  ["no 0x prefix", (a) => a.slice(2)],
  ["0X prefix", (a) => `0X${a.slice(2)}`],
  ["non-hex digits", () => `0x${"g".repeat(40)}`],
  ["0x alone", () => "0x"],
  ["empty", () => ""],
];
