/**
 * JSON with exact integers: bigints are written as their full decimal literal, never rounded or
 * in exponent form (JSON.stringify refuses bigints, and numbers lose digits past 2^53). Written by
 * concatenation, not through arrays of parts: listings are a record per delegation, and this
 * was an eighth of a small wallet's listing (docs/performance.md).
 */
export function toJson(value: unknown): string {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "bigint":
      return value.toString();
    case "object":
      if (value === null) return "null";
      break;
    default:
      return JSON.stringify(value) ?? "null";
  }
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) out += i === 0 ? toJson(value[i]) : `,${toJson(value[i])}`;
    return `${out}]`;
  }
  let out = "{";
  for (const key of Object.keys(value)) {
    out += `${out.length === 1 ? "" : ","}${quoted(key)}:${toJson((value as Record<string, unknown>)[key])}`;
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
