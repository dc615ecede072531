/**
 * An RPC URL as it may be printed: providers put API keys in the path, the query or the user info
 * (https://eth-mainnet.example/v2/<key>), and logs travel further than the configuration.
 */

/** `url`'s scheme, host and port (`https://rpc.example:8545`), nothing else; a stand-in when it is not a URL. */
export function redactedUrl(url: string): string {
  if (!URL.canParse(url)) return "(not a URL)";
  const { protocol, host } = new URL(url);
  return `${protocol}//${host}`;
}
