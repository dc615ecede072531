/**
 * Exact JSON: every number literal parsed to an exact bigint, as the API's integers (token ids,
 * amounts up to 2^256-1) must be read; and a canonical string of a value, to compare records.
 */

/** Marks a number literal while the JSON is parsed, to turn it into an exact bigint. */
const NUMBER_MARK = "\u0000#num:";

/** A JSON number that is not an integer in canonical form (the API must never send one): `1.5`, `1e3`, `-0`. */
export class NonInteger {
  constructor(readonly source: string) {}
}

/** JSON.parse, but every number becomes an exact bigint (or a NonInteger). */
export function parseJsonExact(text: string): unknown {
  const marked = text.replace(/"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g, (token) =>
    token.startsWith('"') ? token : JSON.stringify(NUMBER_MARK + token),
  );
  return JSON.parse(marked, (_key, value: unknown) => {
    if (typeof value !== "string" || !value.startsWith(NUMBER_MARK)) return value;
    const source = value.slice(NUMBER_MARK.length);
    return /^(0|-?[1-9]\d*)$/.test(source) ? BigInt(source) : new NonInteger(source);
  });
}

/** A canonical string of a value: sorted keys, bigints marked, for exact comparison. */
export function canonical(value: unknown): string {
  if (typeof value === "bigint") return `${value}n`;
  if (value instanceof NonInteger) return `NonInteger(${value.source})`;
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "undefined";
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
}
