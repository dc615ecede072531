import { type Address, type Hex, zeroHash } from "viem";
import { ParseError, parseAddress, parseChainId, parseRights, parseUint256 } from "../core/parse";
import { Problem } from "./problem";

/**
 * The query string of one request, decoded strictly: malformed percent-encoding is an error (not
 * passed through), and a parameter the route reads may appear only once.
 */
export class Params {
  private readonly values = new Map<string, string[]>();

  constructor(url: string) {
    const start = url.indexOf("?");
    if (start === -1) return;
    const end = url.indexOf("#", start);
    for (const pair of url.slice(start + 1, end === -1 ? undefined : end).split("&")) {
      if (pair === "") continue;
      const eq = pair.indexOf("=");
      const name = decode(eq === -1 ? pair : pair.slice(0, eq));
      const value = eq === -1 ? "" : decode(pair.slice(eq + 1));
      const list = this.values.get(name);
      if (list) list.push(value);
      else this.values.set(name, [value]);
    }
  }

  /** The parameter's value, or undefined when absent. */
  get(name: string): string | undefined {
    const list = this.values.get(name);
    if (list === undefined) return undefined;
    if (list.length > 1)
      throw new Problem("invalid_parameter", `'${name}' is given ${list.length} times; give it once`, { param: name });
    return list[0];
  }

  /** Parses a required parameter, or any of its alternative names (which must then agree). */
  required<T>(names: readonly string[], parse: (value: string) => T, same: (a: T, b: T) => boolean = Object.is): T {
    let found: { name: string; value: T } | undefined;
    for (const name of names) {
      const raw = this.get(name);
      if (raw === undefined) continue;
      const value = parseParam(name, raw, parse);
      if (found && !same(found.value, value)) {
        throw new Problem(
          "conflicting_parameter",
          `'${found.name}' and '${name}' name the same party with different values`,
          {
            param: name,
          },
        );
      }
      found ??= { name, value };
    }
    if (!found) {
      const expected = names.map((n) => `'${n}'`).join(" or ");
      throw new Problem("missing_parameter", `${expected} is required`, { param: names[0] });
    }
    return found.value;
  }

  /** The address given under any of `names` (alternatives that must agree), lowercase. */
  address(...names: string[]): Address {
    return this.required(names, parseAddress);
  }

  /** The required `tokenId`, a uint256. */
  tokenId(): bigint {
    return this.required(["tokenId"], parseUint256);
  }

  /** The v2 `rights`, as bytes32; absent: none (zero). */
  rights(): Hex {
    const raw = this.get("rights");
    return raw === undefined ? zeroHash : parseParam("rights", raw, parseRights);
  }

  /** The chain asked for (default 1), which must be one this instance serves. */
  chainId(served: readonly number[]): number {
    const raw = this.get("chainId");
    const id = raw === undefined ? 1 : parseChainId(raw);
    if (id === undefined || !served.includes(id)) {
      const list = served.length ? served.join(", ") : "none";
      throw new Problem(
        "unsupported_chain",
        `chainId ${JSON.stringify(raw ?? "1")} is not served here; this instance serves chainId ${list}`,
        {
          param: "chainId",
          chains: served,
        },
      );
    }
    return id;
  }
}

/** Parses one parameter's raw value; a parse failure becomes a 400 naming the parameter. */
export function parseParam<T>(name: string, raw: string, parse: (value: string) => T): T {
  try {
    return parse(raw);
  } catch (error) {
    if (!(error instanceof ParseError)) throw error;
    throw new Problem("invalid_parameter", `'${name}': ${error.message}`, { param: name });
  }
}

function decode(component: string): string {
  try {
    return decodeURIComponent(component.replaceAll("+", " "));
  } catch {
    throw new Problem("invalid_parameter", "the query string has malformed percent-encoding");
  }
}
