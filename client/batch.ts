import type { createLookupClient } from "./index";
import type { operations } from "./openapi";

type Client = ReturnType<typeof createLookupClient>;
type Body<Op extends "v2CheckBatch" | "v1CheckBatch"> = operations[Op]["requestBody"]["content"]["application/json"];
export type V2BatchCheck = Body<"v2CheckBatch">["checks"][number];
export type V1BatchCheck = Body<"v1CheckBatch">["checks"][number];
/** One check's answer: a boolean, or an ERC20/ERC1155 amount (a bigint past 2^53). */
export type CheckAnswer = boolean | number | bigint;

/** The most checks one batch request may carry (the service refuses more with 413). */
export const MAX_BATCH = 10_000;

export type CheckManyOptions = {
  chainId?: number | string;
  /** The block to answer at; default the newest indexed when the first batch is answered, for every batch. */
  blockNumber?: number | string;
  /** Or the moment (Unix seconds): the first batch answers at its block, which every later batch asks. */
  timestamp?: number | string;
  /** Checks per request, at most MAX_BATCH (default). */
  batchSize?: number;
  /** Requests in flight at once (default 4). */
  concurrency?: number;
};

/**
 * Any number of checks of one version (an airdrop's snapshot, say), answered in the order given, all
 * at one block: they go in batches of `batchSize`, at most `concurrency` at once. Without
 * `blockNumber`, the first batch's block (X-Indexed-Block) is asked of every later batch, so that the
 * answers are one snapshot even while blocks are indexed. A problem throws, naming the check by its
 * place in `checks` (`checks[12345].to`).
 */
export async function checkMany(
  api: Client,
  version: "v1" | "v2",
  checks: readonly (V2BatchCheck | V1BatchCheck)[],
  options: CheckManyOptions = {},
): Promise<{ block: bigint | undefined; answers: CheckAnswer[] }> {
  const size = options.batchSize ?? MAX_BATCH;
  if (!Number.isInteger(size) || size < 1 || size > MAX_BATCH) throw new RangeError(`batchSize: 1 to ${MAX_BATCH}`);
  const answers: CheckAnswer[] = new Array(checks.length);
  let block = options.blockNumber === undefined ? undefined : BigInt(options.blockNumber);

  const send = async (start: number) => {
    const body = {
      ...(options.chainId === undefined ? {} : { chainId: options.chainId }),
      ...(block === undefined ? {} : { blockNumber: block.toString() }),
      ...(block === undefined && options.timestamp !== undefined ? { timestamp: String(options.timestamp) } : {}),
      checks: checks.slice(start, start + size),
    };
    const { data, error, response } =
      version === "v2"
        ? await api.POST("/registry/v2/check", { body: body as Body<"v2CheckBatch"> })
        : await api.POST("/registry/v1/check", { body: body as Body<"v1CheckBatch"> });
    if (error !== undefined || data === undefined) {
      const problem = error as { code?: string; param?: string; detail?: string } | undefined;
      const param = problem?.param?.replace(/^checks\[(\d+)\]/, (_, i: string) => `checks[${start + Number(i)}]`);
      throw new Error(
        `${response.status} ${problem?.code ?? "error"}${param ? ` (${param})` : ""}: ${problem?.detail}`,
      );
    }
    for (const [i, answer] of (data as CheckAnswer[]).entries()) answers[start + i] = answer;
    return BigInt(response.headers.get("X-Indexed-Block")!);
  };

  const starts = Array.from({ length: Math.ceil(checks.length / size) }, (_, i) => i * size);
  if (block === undefined && starts.length > 0) block = await send(starts.shift()!);
  let next = 0;
  const worker = async () => {
    while (next < starts.length) await send(starts[next++]!);
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 4) }, worker));
  // No checks and no blockNumber: nothing was asked, so no block was named.
  return { block, answers };
}
