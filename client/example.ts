import { createLookupClient, oneChain } from "./index";

/** May `hot` act for `cold` on everything, and how much of `token` may it use for it (v2)? */
export async function delegationOf(baseUrl: string, hot: string, cold: string, token: string, chainId = "1") {
  const api = createLookupClient(baseUrl);
  const all = await api.GET("/registry/v2/check/all", { params: { query: { to: hot, from: cold, chainId } } });
  if (all.error) throw new Error(`${all.error.code}: ${all.error.detail}`);
  const erc20 = await api.GET("/registry/v2/check/erc20", {
    params: { query: { delegate: hot, vault: cold, contract: token, chainId } },
  });
  if (erc20.error) throw new Error(`${erc20.error.code}: ${erc20.error.detail}`);
  // all.data: boolean; erc20.data: number | bigint, exact; the block they are as at: X-Indexed-Block.
  return {
    mayAct: oneChain(all.data),
    amount: oneChain(erc20.data),
    block: all.response.headers.get("X-Indexed-Block"),
  };
}
