/** How long one RPC request of the launcher may take: a hung RPC is as unusable as a refusing one. */
const TIMEOUT_MS = 5_000;

/** One JSON-RPC request's result; throws with a few words on why there is none. */
export async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    const e = error as Error & { cause?: { code?: string; message?: string } };
    if (e.name === "TimeoutError") throw new Error(`no answer within ${TIMEOUT_MS / 1000} s`);
    throw new Error(e.cause?.code ?? e.cause?.message ?? e.message);
  }
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  const body = (await res.json().catch(() => undefined)) as { result?: unknown } | undefined;
  if (body === undefined || !("result" in body)) throw new Error(`not a JSON-RPC answer to ${method}`);
  return body.result;
}

/**
 * Why the RPC at `url` cannot serve chain `chainId`, in a few words (refused, not found, timed out,
 * an HTTP error, another chain); undefined when it answers `eth_chainId` with that chain.
 */
export async function whyRpcUnusable(url: string, chainId: number): Promise<string | undefined> {
  let result: unknown;
  try {
    result = await rpc(url, "eth_chainId", []);
  } catch (error) {
    return (error as Error).message;
  }
  if (typeof result !== "string") return "not a JSON-RPC answer to eth_chainId";
  const answered = Number(BigInt(result));
  return answered === chainId ? undefined : `it serves chain ${answered}, not ${chainId}`;
}
