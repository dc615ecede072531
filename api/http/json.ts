/**
 * JSON with exact integers: bigints are written as their full decimal literal, never rounded or
 * in exponent form (JSON.stringify refuses bigints, and numbers lose digits past 2^53).
 */
export function toJson(value: unknown): string {
  if (typeof value === "bigint") return value.toString();
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(toJson).join(",")}]`;
  const fields = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`);
  return `{${fields.join(",")}}`;
}
