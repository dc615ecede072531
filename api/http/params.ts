import { type Address, type Hex, zeroHash } from "viem";
import type { Moment } from "../../core/moment";
import {
  ParseError,
  parseAddress,
  parseBlockNumber,
  parseChainId,
  parseLimit,
  parseRights,
  parseTimestamp,
  parseUint256,
} from "../../core/parse";
import { Problem } from "./problem";

const TOKEN_ID = ["tokenId"] as const;

/**
 * A request's parameters, decoded strictly: a query string (malformed percent-encoding is an error,
 * not passed through), or one item of a batch of checks (its fields, named `checks[17].to` in
 * errors). A parameter the route reads may appear only once.
 */
export class Params {
  /** Made at the first value: a batch's items read their fields where they lie (api/routes/batch.ts). */
  private values: Map<string, string[]> | undefined;

  /** Parameters from name-value pairs; `prefix` names them in errors (`checks[3]` gives `checks[3].to`). */
  constructor(
    entries: Iterable<readonly [string, string]>,
    private readonly prefix = "",
  ) {
    for (const [name, value] of entries) {
      this.values ??= new Map();
      const list = this.values.get(name);
      if (list) list.push(value);
      else this.values.set(name, [value]);
    }
  }

  /** The parameters of a URL's query string. */
  static ofUrl(url: string): Params {
    const start = url.indexOf("?");
    if (start === -1) return new Params([]);
    const end = url.indexOf("#", start);
    const pairs = url
      .slice(start + 1, end === -1 ? undefined : end)
      .split("&")
      .filter((pair) => pair !== "")
      .map((pair): [string, string] => {
        const eq = pair.indexOf("=");
        return [decode(eq === -1 ? pair : pair.slice(0, eq)), eq === -1 ? "" : decode(pair.slice(eq + 1))];
      });
    return new Params(pairs);
  }

  /** Every name-value pair, in the order given. */
  entries(): [string, string][] {
    return [...(this.values ?? [])].flatMap(([name, list]) => list.map((value): [string, string] => [name, value]));
  }

  /** How errors name parameter `name`. */
  protected named(name: string): string {
    return this.prefix === "" ? name : `${this.prefix}.${name}`;
  }

  /** The parameter's value, or undefined when absent. */
  get(name: string): string | undefined {
    const list = this.values?.get(name);
    if (list === undefined) return undefined;
    if (list.length > 1) {
      const param = this.named(name);
      throw new Problem("invalid_parameter", `'${param}' is given ${list.length} times; give it once`, { param });
    }
    return list[0];
  }

  /** Parses an optional parameter; undefined when absent. */
  optional<T>(name: string, parse: (value: string) => T): T | undefined {
    const raw = this.get(name);
    if (raw === undefined) return undefined;
    // Named only on failure: a batch's items are parsed by the thousand.
    try {
      return parse(raw);
    } catch (error) {
      throw invalidParam(this.named(name), error);
    }
  }

  /** Parses a required parameter, or any of its alternative names (which must then agree). */
  required<T>(names: readonly string[], parse: (value: string) => T, same: (a: T, b: T) => boolean = Object.is): T {
    let found: string | undefined;
    let value: T | undefined;
    for (const name of names) {
      const given = this.optional(name, parse);
      if (given === undefined) continue;
      if (found === undefined) [found, value] = [name, given];
      else if (!same(value!, given)) {
        throw new Problem(
          "conflicting_parameter",
          `'${this.named(found)}' and '${this.named(name)}' name the same party with different values`,
          { param: this.named(name) },
        );
      }
    }
    if (found === undefined) {
      const expected = names.map((n) => `'${this.named(n)}'`).join(" or ");
      throw new Problem("missing_parameter", `${expected} is required`, { param: this.named(names[0]!) });
    }
    return value!;
  }

  /**
   * The address given under `name`, or any of `names` (alternatives that must agree), lowercase. A
   * list is taken as it is, not spread into one: a batch reads 30,000 addresses.
   */
  address(names: string | readonly string[]): Address {
    return this.required(typeof names === "string" ? [names] : names, parseAddress);
  }

  /** The required `tokenId`, a uint256. */
  tokenId(): bigint {
    return this.required(TOKEN_ID, parseUint256);
  }

  /** The v2 `rights`, as bytes32; absent: none (zero). */
  rights(): Hex {
    return this.optional("rights", parseRights) ?? zeroHash;
  }

  /** The block to answer at (`blockNumber`); undefined: the newest indexed. */
  blockNumber(): bigint | undefined {
    return this.optional("blockNumber", parseBlockNumber);
  }

  /**
   * When to answer: at a block (`blockNumber`), at a moment (`timestamp`: each chain's newest block
   * at or before it), or undefined: at the newest indexed block. Both at once is a 400.
   */
  at(): bigint | Moment | undefined {
    const block = this.blockNumber();
    const timestamp = this.optional("timestamp", parseTimestamp);
    if (timestamp === undefined) return block;
    if (block !== undefined)
      throw new Problem("conflicting_parameter", "'blockNumber' and 'timestamp' both say when to answer; give one", {
        param: this.named("timestamp"),
      });
    return { timestamp };
  }

  /** A page's `limit`, else `fallback` (undefined: the whole list). */
  limit(fallback?: number): number | undefined {
    return this.optional("limit", parseLimit) ?? fallback;
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
        { param: this.named("chainId"), chains: served },
      );
    }
    return id;
  }
}

/**
 * Refuses (400 unsupported_chain) the first of the chains `asked` (a `chainId` list) this instance
 * does not serve, listing those it serves, as one chain's refusal does (Params.chainId).
 */
export function refuseUnserved(asked: readonly number[], served: readonly number[]): void {
  const unknown = asked.find((id) => !served.includes(id));
  if (unknown === undefined) return;
  throw new Problem(
    "unsupported_chain",
    `chainId ${unknown} is not served here; this instance serves chainId ${served.join(", ") || "none"}`,
    { param: "chainId", chains: [...served] },
  );
}

/** Parses one parameter's raw value; a parse failure becomes a 400 naming the parameter. */
export function parseParam<T>(name: string, raw: string, parse: (value: string) => T): T {
  try {
    return parse(raw);
  } catch (error) {
    throw invalidParam(name, error);
  }
}

/** A parse failure of parameter `name` as a 400 naming it; any other error as it is. */
function invalidParam(name: string, error: unknown): unknown {
  if (!(error instanceof ParseError)) return error;
  return new Problem("invalid_parameter", `'${name}': ${error.message}`, { param: name });
}

function decode(component: string): string {
  // Most components have nothing to decode.
  if (!component.includes("%") && !component.includes("+")) return component;
  try {
    return decodeURIComponent(component.replaceAll("+", " "));
  } catch {
    throw new Problem("invalid_parameter", "the query string has malformed percent-encoding");
  }
}
