import { createLookupClient, oneChain } from "./index";

/** Every vault `hot` may claim for on `collection` (v2): one request, the contract's rules applied by the service. */
export async function claimableVaults(baseUrl: string, hot: string, collection: string, chainId = "1") {
  const api = createLookupClient(baseUrl);
  const { data, error, response } = await api.GET("/registry/v2/{wallet}/vaults", {
    params: { path: { wallet: hot }, query: { type: "contract", contract: collection, chainId } },
  });
  if (error) throw new Error(`${error.code}: ${error.detail}`);
  // By address; ALL and CONTRACT delegations count, as checkDelegateForContract counts them.
  return { vaults: oneChain(data).map((v) => v.vault), block: response.headers.get("X-Indexed-Block") };
}
