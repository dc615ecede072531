/** How long one reachability probe may take: a hung RPC is as unusable as a refusing one. */
const PROBE_TIMEOUT_MS = 5_000;

/**
 * Why the RPC at `url` cannot serve chain `chainId`, in a few words (refused, not found, timed out,
 * an HTTP error, another chain); undefined when it answers `eth_chainId` with that chain.
 */
export async function whyRpcUnusable(url: string, chainId: number): Promise<string | undefined> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
  } catch (error) {
    const e = error as Error & { cause?: { code?: string; message?: string } };
    if (e.name === "TimeoutError") return `no answer within ${PROBE_TIMEOUT_MS / 1000} s`;
    return e.cause?.code ?? e.cause?.message ?? e.message;
  }
  if (!res.ok) return `HTTP ${res.status}`;
  const body = (await res.json().catch(() => undefined)) as { result?: unknown } | undefined;
  if (typeof body?.result !== "string") return "not a JSON-RPC answer to eth_chainId";
  const answered = Number(BigInt(body.result));
  return answered === chainId ? undefined : `it serves chain ${answered}, not ${chainId}`;
}
