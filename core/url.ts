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

/** The least length of a URL's path and query to be hidden on its own: shorter ones hold no key. */
const SECRET_TAIL = 8;

/**
 * A filter for text another program writes about `urls` (Ponder's log): each URL, however it is
 * spelt there (as given, without its trailing slash, normalized), becomes its redactedUrl, and the
 * path and query of each, where they stand alone (an error quoting them), become "…".
 */
export function urlRedactor(urls: readonly string[]): (text: string) => string {
  const replacements = new Map<string, string>();
  for (const url of urls) {
    if (!URL.canParse(url)) continue;
    const parsed = new URL(url);
    for (const spelling of [url, url.replace(/\/+$/, ""), parsed.href]) replacements.set(spelling, redactedUrl(url));
    const tail = `${parsed.pathname}${parsed.search}`;
    if (tail.length >= SECRET_TAIL) replacements.set(tail, "…");
    if (parsed.password) replacements.set(parsed.password, "…");
  }
  // Longest first: a URL is replaced whole before its tail alone is looked for.
  const order = [...replacements].filter(([secret]) => secret !== "").sort(([a], [b]) => b.length - a.length);
  return (text) => order.reduce((out, [secret, shown]) => out.replaceAll(secret, shown), text);
}
