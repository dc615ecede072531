import type { Context } from "hono";
import type { Env } from "./app";
import { toJson } from "./json";
import { Params } from "./params";
import { Problem } from "./problem";
import type { ChainView } from "./store";

/** Seconds a client should wait before asking again about a chain that is still syncing. */
const SYNC_RETRY_AFTER = "5";

/**
 * The common shape of every read: parse the query and chain, read one consistent view of the
 * chain, and answer with its body and the block it reflects. A chain still backfilling answers
 * 503, because a `false`, `0` or `[]` from a partial history could be wrong.
 */
export async function answer(
  c: Context<Env>,
  version: "v1" | "v2",
  read: (
    chainId: number,
    params: Params,
  ) => Promise<(Omit<ChainView<unknown>, "data"> & { body: unknown }) | undefined>,
): Promise<Response> {
  const params = new Params(c.req.url);
  const chainId = params.chainId(c.var.chains.filter((chain) => chain[version] !== undefined).map((chain) => chain.id));
  const view = await read(chainId, params);
  if (view === undefined || !view.ready) {
    throw new Problem("chain_syncing", `chain ${chainId} is still being indexed; its answers would be incomplete`, {
      headers: {
        "Retry-After": SYNC_RETRY_AFTER,
        ...(view ? { "X-Indexed-Block": view.indexedBlock.toString() } : {}),
      },
    });
  }
  return c.body(toJson(view.body), 200, {
    "Content-Type": "application/json",
    "X-Indexed-Block": view.indexedBlock.toString(),
  });
}
