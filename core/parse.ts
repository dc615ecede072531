import { type Address, type Hex, maxUint256, stringToHex } from "viem";
import { checksumAddress } from "./keccak";

/** Why a value was rejected; `expected` reads as the end of "expected …". */
export class ParseError extends Error {
  constructor(readonly expected: string) {
    super(`expected ${expected}`);
  }
}

/** An address's text (EIP-55's checksum, when the case is mixed, is checked beside). */
export const ADDRESS_PATTERN = "^0x[0-9a-fA-F]{40}$";

/** What addressCase finds: not ADDRESS_PATTERN's; no uppercase letter; no lowercase letter; both. */
const NOT_AN_ADDRESS = 0;
const LOWER = 1;
const UPPER = 2;
const MIXED = 3;

/** Per character code below 256: a hex digit's bit (4), and its case's (LOWER, UPPER) for a letter. */
const HEX_DIGIT = new Uint8Array(256);
for (const [from, to, kind] of [
  ["0", "9", 4],
  ["a", "f", 4 | LOWER],
  ["A", "F", 4 | UPPER],
] as const)
  for (let code = from.charCodeAt(0); code <= to.charCodeAt(0); code++) HEX_DIGIT[code] = kind;

/**
 * Whether `input` is ADDRESS_PATTERN's and which cases its letters are in, in one pass without a
 * branch per character: a batch parses addresses by the ten thousand, and random hex digits
 * mispredicted a branch so often that the pattern's test, or a loop that branched, took a tenth of
 * its time (docs/performance.md).
 */
function addressCase(input: string): number {
  if (input.length !== 42 || input.charCodeAt(0) !== 48 || input.charCodeAt(1) !== 120) return NOT_AN_ADDRESS;
  let every = 7;
  let some = 0;
  let wide = 0;
  for (let i = 2; i < 42; i++) {
    const code = input.charCodeAt(i);
    const kind = HEX_DIGIT[code & 255]!;
    every &= kind;
    some |= kind;
    // A code past 255 is no digit, whatever its low byte.
    wide |= code >> 8;
  }
  if (wide !== 0 || every === 0) return NOT_AN_ADDRESS;
  // Digits alone read as lowercase: the text is its own lowercase form.
  return some & MIXED || LOWER;
}

/**
 * Parses an address as the API contract accepts it: all-lower, all-upper, or mixed case that is a
 * valid EIP-55 checksum. Returns the lowercase form, which is how addresses are stored.
 */
export function parseAddress(input: string): Address {
  const expected = "an address: 0x and 40 hex digits, lowercase, uppercase or EIP-55 checksummed";
  const cases = addressCase(input);
  if (cases === NOT_AN_ADDRESS) throw new ParseError(expected);
  if (cases === LOWER) return input as Address;
  const lower = input.toLowerCase() as Address;
  if (cases === MIXED && checksumAddress(lower) !== input)
    throw new ParseError(`${expected} (the checksum does not match)`);
  return lower;
}

/** An unsigned integer's text: decimal or 0x-hex (its range is checked beside). */
export const UINT_PATTERN = "^(?:[0-9]+|0x[0-9a-fA-F]+)$";
const UINT = new RegExp(UINT_PATTERN);

/** A parser of unsigned integers in decimal or 0x-hex up to `max`; `expected` says what it takes. */
const uintUpTo =
  (max: bigint, expected: string) =>
  (input: string): bigint => {
    if (!UINT.test(input)) throw new ParseError(expected);
    const value = BigInt(input);
    if (value > max) throw new ParseError(expected);
    return value;
  };

/** Parses a uint256 given in decimal or 0x-hex; rejects signs, fractions, exponents and overflow. */
export const parseUint256 = uintUpTo(maxUint256, "an integer from 0 to 2^256-1, in decimal or 0x-hex");

/** A bytes32 value's text: 0x and 64 hex digits, in any case. */
export const BYTES32_PATTERN = "^0x[0-9a-fA-F]{64}$";
const BYTES32 = new RegExp(BYTES32_PATTERN);

/** Parses a bytes32 value (a delegation hash): 0x and 64 hex digits; the lowercase form. */
export function parseBytes32(input: string): Hex {
  if (!BYTES32.test(input)) throw new ParseError("0x and 64 hex digits");
  return input.toLowerCase() as Hex;
}
/** v2 `rights`' text: a bytes32 in hex, or up to 32 ASCII characters not starting with 0x. */
export const RIGHTS_PATTERN = "^(?:0x[0-9a-fA-F]{64}|(?!0x)[\\u0000-\\u007f]{0,32})$";
const RIGHTS = new RegExp(RIGHTS_PATTERN, "u");

/**
 * Parses v2 `rights`: 0x + 64 hex digits, or a plain ASCII string of at most 32 bytes taken as
 * Solidity's `bytes32("...")`. Empty means no rights (32 zero bytes).
 */
export function parseRights(input: string): Hex {
  if (BYTES32.test(input)) return input.toLowerCase() as Hex;
  if (!RIGHTS.test(input)) {
    throw new ParseError("rights: 0x and 64 hex digits, or an ASCII string of at most 32 characters");
  }
  return stringToHex(input, { size: 32 });
}

/** The largest block number asked about: 2^63-1, as Postgres's bigint holds it. */
export const MAX_BLOCK_NUMBER = (1n << 63n) - 1n;

/** Parses a block number given in decimal or 0x-hex, from 0 to 2^63-1. */
export const parseBlockNumber = uintUpTo(MAX_BLOCK_NUMBER, "a block number from 0 to 2^63-1, in decimal or 0x-hex");

/** Parses a moment in Unix seconds (`timestamp`), in decimal or 0x-hex, from 0 to 2^63-1. */
export const parseTimestamp = uintUpTo(
  MAX_BLOCK_NUMBER,
  "a moment in Unix seconds, from 0 to 2^63-1, in decimal or 0x-hex",
);

/** The most items one page holds (docs/api.md, "Pages"). */
export const MAX_PAGE_LIMIT = 1000;

/** A page's `limit`'s text: up to four decimal digits (its range is checked beside). */
export const LIMIT_PATTERN = "^[0-9]{1,4}$";
const LIMIT = new RegExp(LIMIT_PATTERN);

/** Parses a page's `limit`: a decimal integer from 1 to MAX_PAGE_LIMIT. */
export function parseLimit(input: string): number {
  const value = LIMIT.test(input) ? Number(input) : 0;
  if (value < 1 || value > MAX_PAGE_LIMIT) throw new ParseError(`an integer from 1 to ${MAX_PAGE_LIMIT}`);
  return value;
}

/** A change feed's position (`cursor`: the `seq` of the last entry read): up to 19 decimal digits. */
export const SEQ_PATTERN = "^[0-9]{1,19}$";
const SEQ = new RegExp(SEQ_PATTERN);

/** Parses a feed position: a decimal integer from 0 to 2^63-1 (Postgres's bigserial). */
export function parseSeq(input: string): bigint {
  const value = SEQ.test(input) ? BigInt(input) : -1n;
  if (value < 0n || value > 2n ** 63n - 1n) throw new ParseError("the seq of an entry: an integer from 0 to 2^63-1");
  return value;
}

/** A chain id's text: up to 16 decimal digits (positive and a safe integer, checked beside). */
export const CHAIN_ID_PATTERN = "^[0-9]{1,16}$";
const CHAIN_ID = new RegExp(CHAIN_ID_PATTERN);

/** Parses a chain id: a positive decimal integer. Whether it is served is decided elsewhere. */
export function parseChainId(input: string): number | undefined {
  const id = CHAIN_ID.test(input) ? Number(input) : 0;
  return id > 0 && Number.isSafeInteger(id) ? id : undefined;
}

/** Chains' ids' text: one chain id, a list of them (`1,8453,10`), or `all` (no repeats, checked beside). */
export const CHAIN_IDS_PATTERN = "^(all|[0-9]{1,16}(,[0-9]{1,16})*)$";

/** Parses the chains asked about: `all`, or chain ids, one or a list of them, without repeats, in order given. */
export function parseChainIds(input: string): "all" | number[] {
  if (input === "all") return "all";
  const ids: number[] = [];
  for (const text of input.split(",")) {
    if (text === "all") throw new ParseError("all cannot be part of a list; give all alone, or chain ids");
    const id = parseChainId(text);
    if (id === undefined) throw new ParseError(`${JSON.stringify(text)} is not a chain id (a positive integer)`);
    if (ids.includes(id)) throw new ParseError(`chain ${id} is given twice`);
    ids.push(id);
  }
  return ids;
}

/** A parser of one of `values`, named as they are. */
export const parseOneOf =
  <T extends string>(values: readonly T[]) =>
  (input: string): T => {
    if (!(values as readonly string[]).includes(input)) throw new ParseError(`one of ${values.join(", ")}`);
    return input as T;
  };

/** Which of a wallet's delegations a listing holds: both ways, those it receives, or those it gives. */
export const DIRECTIONS = ["both", "incoming", "outgoing"] as const;
export type Direction = (typeof DIRECTIONS)[number];
export const parseDirection = parseOneOf(DIRECTIONS);
