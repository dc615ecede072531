/**
 * The launcher's own RPC requests, through viem: each gives up after TIMEOUT_MS and is not retried
 * (the launcher retries with its own backoff), and a failure is told in a few words without the
 * URL, which viem's messages carry and which may hold an API key.
 */
import { BaseError, createPublicClient, type EIP1193RequestFn, http, RpcError, TimeoutError } from "viem";
import type { ConfiguredChain } from "../../core/settings";
import { redactedUrl } from "../../core/url";

/** How long one RPC request of the launcher may take: a hung RPC is as unusable as a refusing one. */
const TIMEOUT_MS = 5_000;

const client = (url: string) => createPublicClient({ transport: http(url, { timeout: TIMEOUT_MS, retryCount: 0 }) });

/** `error` and the errors it was caused by, outermost first. */
function causes(error: unknown): Error[] {
  const chain: Error[] = [];
  for (let e = error; e instanceof Error; e = e.cause) chain.push(e);
  return chain;
}

/**
 * Why viem's request for `method`, with a timeout of `timeoutMs`, failed, in a few words: timed out,
 * an HTTP status, the system's code (ECONNREFUSED, ENOTFOUND), an answer that is not JSON-RPC, or
 * the RPC's own error.
 */
export function rpcFailure(error: unknown, method: string, timeoutMs: number): string {
  const chain = causes(error);
  if (chain.some((e) => e instanceof TimeoutError)) return `no answer within ${timeoutMs / 1000} s`;
  const status = chain.map((e) => (e as { status?: unknown }).status).find((s) => typeof s === "number");
  if (status !== undefined) return `HTTP ${status}`;
  const code = chain.map((e) => (e as { code?: unknown }).code).find((c) => typeof c === "string");
  if (code !== undefined) return code as string;
  const answered = chain.find((e) => e instanceof RpcError);
  if (answered) return `${method} failed: ${answered.details}`;
  // Not viem's error: the answer came but its result could not be read.
  if (!(error instanceof BaseError) || chain.some((e) => e instanceof SyntaxError))
    return `not a JSON-RPC answer to ${method}`;
  const last = chain.at(-1)!;
  return last instanceof BaseError ? last.shortMessage : last.message;
}

/** One JSON-RPC request's result; throws with a few words on why there is none. */
export async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  let result: unknown;
  try {
    result = await (client(url).request as EIP1193RequestFn)({ method, params });
  } catch (error) {
    throw new Error(rpcFailure(error, method, TIMEOUT_MS));
  }
  if (result === undefined) throw new Error(`not a JSON-RPC answer to ${method}`);
  return result;
}

/**
 * Why the RPC at `url` cannot serve chain `chainId`, in a few words (refused, not found, timed out,
 * an HTTP error, another chain); undefined when it answers `eth_chainId` with that chain.
 */
export async function whyRpcUnusable(url: string, chainId: number): Promise<string | undefined> {
  let answered: number;
  try {
    answered = await client(url).getChainId();
  } catch (error) {
    return rpcFailure(error, "eth_chainId", TIMEOUT_MS);
  }
  return answered === chainId ? undefined : `it serves chain ${answered}, not ${chainId}`;
}

/** Why none of the chain's RPC URLs serves it, one reason per URL (redacted); none when one does. */
export async function whyChainUnreachable({ chain, rpc }: ConfiguredChain): Promise<string[]> {
  const reasons = await Promise.all(
    rpc.map(async (url) => {
      const why = await whyRpcUnusable(url, chain.id);
      return why === undefined ? undefined : `${redactedUrl(url)}: ${why}`;
    }),
  );
  return reasons.some((r) => r === undefined) ? [] : (reasons as string[]);
}
