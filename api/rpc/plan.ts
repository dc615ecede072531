/**
 * How an `eth_call` is answered (docs/architecture.md, "A drop-in for the node"): first planned from
 * its calldata alone, as the contracts would run it (what reverts, and with what data, is known
 * before anything is read), then the reads its answers need are done together at one block, then
 * the answers are encoded. A call this service cannot answer exactly is "not served", never guessed.
 */
import { encodeErrorResult, type Hex, parseAbi } from "viem";
import type { CallArg } from "../../core/calldata";
import { type BlockRead, readAt, readyPosition } from "../routes/answer";
import type { Env, Reading } from "../routes/env";
import { checksRead } from "../routes/registry";
import { V1_SPEC } from "../routes/v1";
import { V2_SPEC } from "../routes/v2";

/** What a call does: reverts with `data`, is not served, or has a result once the reads are done. */
export type Plan = { reverted: Hex; reason?: string } | { notServed: string } | { result: () => Hex | Encoded };

export type Version = "v1" | "v2";

/** What planning a call knows: the chain, the block asked (undefined: the head), how to plan an inner call. */
export type Planning = {
  vars: RpcVars;
  chainId: number;
  block: bigint | undefined;
  reads: Reads;
  /** Plans a call the contract makes to `to` (its `multicall`'s, Multicall3's). */
  call: (to: Hex, data: Hex, value: bigint, depth: number) => Plan;
};

/** A view's answer, planned: its reads asked of `planning.reads`, its value once they are done. */
export type Served = (planning: Planning, args: CallArg[], depth: number) => (() => unknown) | Plan;

/** What answering a call needs of a request's variables (the fast path has them without Hono). */
export type RpcVars = Reading & Pick<Env["Variables"], "chains" | "alarms" | "listings">;

/**
 * A result already ABI-encoded: its hex, or the hex's text as bytes (a listing held rendered:
 * api/rpc/calls.ts), made a string only when asked. A 1,000-delegation listing is 448 KB of hex;
 * on this project's 2-core machines making it a string, then its JSON, then that JSON's length took
 * about 7 ms a call, where writing the bytes held takes none (api/rpc/route.ts, rpcReplyBody).
 */
export class Encoded {
  #hex: Hex | undefined;
  constructor(readonly text: Hex | Uint8Array) {}

  get hex(): Hex {
    this.#hex ??=
      typeof this.text === "string"
        ? this.text
        : (Buffer.from(this.text.buffer, this.text.byteOffset, this.text.length).toString("latin1") as Hex);
    return this.#hex;
  }

  /** JSON.stringify's (and so Hono's c.json's) form: the hex. */
  toJSON(): Hex {
    return this.hex;
  }
}

/** A result's hex. */
export const hexOf = (result: Hex | Encoded): Hex => (result instanceof Encoded ? result.hex : result);

/** The deepest calls within calls planned: deeper is not served (the EVM stops at 1,024 frames). */
export const MAX_DEPTH = 16;
export const TOO_DEEP: Plan = { notServed: `calls nested over ${MAX_DEPTH} deep` };

const errorAbi = parseAbi(["error Error(string)"]);

/** A revert with Solidity's `Error(string)` data, as `require(condition, reason)` reverts. */
export const revertWith = (reason: string): Plan => ({
  reverted: encodeErrorResult({ abi: errorAbi, errorName: "Error", args: [reason] }),
  reason,
});

/** A revert with no data: calldata the code cannot read, a selector it lacks, value to a view. */
export const REVERTS: Plan = { reverted: "0x" };

const SPECS = { v2: V2_SPEC, v1: V1_SPEC } as const;

/**
 * The reads a call's answers need, done together at one block: the block asked, or the head's (the
 * first read pins it; later reads take the head again only while it has not moved).
 */
export class Reads {
  readonly #vars: Reading;
  readonly #chainId: number;
  readonly #checks: Record<Version, unknown[]> = { v2: [], v1: [] };
  #checkAnswers: Record<Version, unknown[]> = { v2: [], v1: [] };
  readonly #reads: { read: BlockRead; value?: unknown }[] = [];
  /** The block the answers are at, once read. */
  block: bigint | undefined;

  constructor(vars: Reading, chainId: number) {
    this.#vars = vars;
    this.#chainId = chainId;
  }

  /** How many reads are asked (each a unit of a keyless budget). */
  get count(): number {
    return this.#checks.v2.length + this.#checks.v1.length + this.#reads.length;
  }

  /** A check's answer (a boolean, or an amount), once read. */
  check(version: Version, query: unknown): () => unknown {
    const index = this.#checks[version].push(query) - 1;
    return () => this.#checkAnswers[version][index];
  }

  /** A read's body, once read. */
  read(read: BlockRead): () => unknown {
    const entry: { read: BlockRead; value?: unknown } = { read };
    this.#reads.push(entry);
    return () => entry.value;
  }

  /** Does every read at `asked` (undefined: the head), pinning the block. */
  async run(asked: bigint | undefined): Promise<void> {
    const vars = this.#vars;
    const chainId = this.#chainId;
    let fromHead = false;
    this.block = asked;
    const at = async (read: BlockRead) => {
      if (this.block === undefined || fromHead) {
        const { body, block } = await readAt(vars, chainId, undefined, read);
        if (this.block === undefined) [this.block, fromHead] = [block, true];
        if (block === this.block) return body;
      }
      return (await readAt(vars, chainId, this.block, read)).body;
    };
    for (const version of ["v2", "v1"] as const) {
      const queries = this.#checks[version];
      if (queries.length === 0) continue;
      const spec = SPECS[version] as Parameters<typeof checksRead>[0];
      this.#checkAnswers[version] = (await at(checksRead(spec, vars, chainId, queries, (all) => all))) as unknown[];
    }
    for (const entry of this.#reads) entry.value = await at(entry.read);
    this.block ??= (await readyPosition(vars, chainId)).indexedBlock;
  }
}
