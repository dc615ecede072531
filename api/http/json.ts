import { parse } from "lossless-json";

/**
 * JSON with exact integers: bigints are written as their full decimal literal, never rounded or
 * in exponent form (JSON.stringify refuses bigints, and numbers lose digits past 2^53); an absent
 * field as null. A list of NATIVE_FROM items or more is written by V8's JSON.stringify
 * (`stringifyJson`), or by `join` if it holds only booleans and bigints; anything smaller is walked
 * (`walkJson`): the same text every way.
 */
export function toJson(value: unknown): string {
  if (!Array.isArray(value) || value.length < NATIVE_FROM) return walkJson(value);
  return answersOnly(value) ? `[${value.join(",")}]` : stringifyJson(value);
}

/**
 * Whether a list holds only booleans and bigints, as a batch's answers do: its JSON is what `join`
 * writes. JSON.stringify called its replacer on each of a batch's 10,000 answers.
 */
function answersOnly(list: readonly unknown[]): boolean {
  for (const item of list) if (typeof item !== "boolean" && typeof item !== "bigint") return false;
  return true;
}

/**
 * The list length from which toJson hands a value to JSON.stringify: the walk took 10,000 listed
 * records two and a half times as long (docs/performance.md, "Rendering listings"), but a check's
 * answer a quarter as long, JSON.stringify's calls of the replacer costing more than the walk.
 */
const NATIVE_FROM = 64;

/**
 * toJson's text by V8's own JSON.stringify, each bigint as a marked string unquoted after. Where
 * that text could be read otherwise (a string or a name holding the mark, anywhere: with a quote
 * before it, its end reads as a bigint) or JSON.stringify's value is not the walk's (an object of its
 * own toJSON but a Date's, a boxed primitive), the value is walked instead.
 */
export function stringifyJson(value: unknown): string {
  let walk = false;
  let marked = false;
  const text = JSON.stringify(value, function (this: Record<string, unknown>, key: string, v: unknown) {
    if (walk || key.includes(MARK)) {
      walk = true;
      return null;
    }
    switch (typeof v) {
      case "bigint":
        marked = true;
        return `${MARK}${v}`;
      case "string":
        // A Date's JSON is its toJSON's; any other object's, the walk's.
        walk = v.includes(MARK) || (this[key] !== v && !(this[key] instanceof Date));
        break;
      case "object":
        walk =
          this[key] !== v || v instanceof Number || v instanceof String || v instanceof Boolean || v instanceof BigInt;
        break;
      case "number":
      case "boolean":
        walk = !Object.is(this[key], v);
        break;
      default:
        // undefined, a function or a symbol: JSON.stringify would leave the field out. (What an
        // object's toJSON made undefined, the walk writes as the object.)
        walk = this[key] !== v;
        return null;
    }
    return walk ? null : v;
  });
  if (walk) return walkJson(value);
  return marked ? text.replace(MARKED, "$1") : text;
}

/** A bigint is written as a string of MARK and its digits, then MARKED unquotes it: in the text, `"\u0000…"`. */
const MARK = "\u0000";
const MARKED = /"\\u0000(-?\d+)"/g;

/**
 * The same JSON as toJson, written by walking the value, for small values and those stringifyJson
 * cannot give JSON.stringify: by concatenation, not through arrays of parts (those were an eighth of
 * a small wallet's listing, docs/performance.md).
 */
export function walkJson(value: unknown): string {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "bigint":
      return value.toString();
    case "object":
      if (value === null) return "null";
      // As JSON.stringify writes it (Date's toJSON).
      if (value instanceof Date) return JSON.stringify(value);
      break;
    default:
      return JSON.stringify(value) ?? "null";
  }
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) out += i === 0 ? walkJson(value[i]) : `,${walkJson(value[i])}`;
    return `${out}]`;
  }
  let out = "{";
  for (const key of Object.keys(value)) {
    out += `${out.length === 1 ? "" : ","}${quoted(key)}:${walkJson((value as Record<string, unknown>)[key])}`;
  }
  return `${out}}`;
}

/** Field names written so far, quoted: the records' few, asked for on every field written. */
const QUOTED = new Map<string, string>();
/** Bounds QUOTED, should an object with names of a client's making ever be written. */
const QUOTED_MOST = 1_024;

function quoted(key: string): string {
  let json = QUOTED.get(key);
  if (json === undefined) {
    json = JSON.stringify(key);
    if (QUOTED.size < QUOTED_MOST) QUOTED.set(key, json);
  }
  return json;
}

/**
 * JSON text parsed as lossless-json parses it — each number's exact text kept (a LosslessNumber),
 * a key repeated with another value refused — but at JSON.parse's speed where that changes nothing:
 * a 10,000-check batch body took lossless-json 320 ms, JSON.parse 18 ms. When every number is written
 * as JavaScript writes it back (`String(Number(text)) === text`: not 1e3, 1.0, -0 or past 2^53) and
 * no object repeats a key, JSON.parse's value is the same, with plain numbers. Anything else,
 * invalid text included (so that errors read the same), goes to lossless-json.
 */
export function parseExactJson(text: string): unknown {
  if (plainJson(text)) {
    try {
      return JSON.parse(text);
    } catch {
      // Invalid: lossless-json says why, below.
    }
  }
  return parse(text);
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;
const NUMBER = /-?[0-9][0-9.eE+-]*/y;
const SPACE = /[ \t\n\r]*/y;
/** The most keys of one object plainJson compares each new key with (a check has a handful). */
const MOST_KEYS_COMPARED = 32;

/**
 * Whether valid JSON `text` would parse to the same value with JSON.parse: its numbers written as
 * String(Number) writes them, no object with a key twice. Invalid text may answer either way. Keys
 * are compared where they lie in the text, not copied out: a batch's 10,000 items have 40,000.
 */
function plainJson(text: string): boolean {
  // The keys of the objects open around position i, as start and end offsets in `text`, one
  // object's after its parent's; `opened`, where each open object's keys begin (-1: an array).
  const keys: number[] = [];
  const opened: number[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let end = text.indexOf('"', i + 1);
      while (end > 0 && escaped(text, end)) end = text.indexOf('"', end + 1);
      if (end < 0) return false;
      const from = opened.length === 0 ? -1 : opened[opened.length - 1]!;
      if (from >= 0) {
        let after = end + 1;
        // Most strings are followed at once by a colon (a key) or a comma (a value).
        if (isSpace(text.charCodeAt(after))) {
          SPACE.lastIndex = after;
          SPACE.test(text);
          after = SPACE.lastIndex;
        }
        if (text.charCodeAt(after) === COLON) {
          // A key with an escape may spell another otherwise, and an object of many keys would
          // take each key's compare with all before it: lossless-json tells, by a lookup.
          if (keys.length - from >= 2 * MOST_KEYS_COMPARED || hasEscape(text, i + 1, end)) return false;
          if (repeated(text, keys, from, i + 1, end)) return false;
          keys.push(i + 1, end);
        }
      }
      i = end + 1;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      opened.push(c === OPEN_OBJECT ? keys.length : -1);
      i++;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      const from = opened.pop();
      if (from !== undefined && from >= 0) keys.length = from;
      i++;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      NUMBER.lastIndex = i;
      if (!NUMBER.test(text)) return false;
      const number = text.slice(i, NUMBER.lastIndex);
      if (String(Number(number)) !== number) return false;
      i = NUMBER.lastIndex;
    } else i++;
  }
  return true;
}

/** Whether text[start, end) holds a backslash. */
function hasEscape(text: string, start: number, end: number): boolean {
  for (let k = start; k < end; k++) if (text.charCodeAt(k) === BACKSLASH) return true;
  return false;
}

/** Whether text[start, end) is one of the keys `keys` holds from index `from` on. */
function repeated(text: string, keys: readonly number[], from: number, start: number, end: number): boolean {
  for (let k = from; k < keys.length; k += 2) {
    const a = keys[k]!;
    if (keys[k + 1]! - a !== end - start) continue;
    let same = true;
    for (let j = 0; j < end - start && same; j++) same = text.charCodeAt(a + j) === text.charCodeAt(start + j);
    if (same) return true;
  }
  return false;
}

/** Whether a character is JSON's whitespace. */
const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** Whether the quote at `at` is escaped: an odd run of backslashes before it. */
function escaped(text: string, at: number): boolean {
  let run = 0;
  while (text.charCodeAt(at - 1 - run) === BACKSLASH) run++;
  return run % 2 === 1;
}
