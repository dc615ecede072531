/** A printed RPC URL keeps what tells the operator which one it is, and none of what may be a key. */
import { describe, expect, it } from "vitest";
import { redactedUrl, urlRedactor } from "./url";

describe("redactedUrl", () => {
  it("keeps the scheme, the host and a port", () => {
    expect(redactedUrl("http://127.0.0.1:8545")).toBe("http://127.0.0.1:8545");
    expect(redactedUrl("http://[::1]:8545/")).toBe("http://[::1]:8545");
    expect(redactedUrl("wss://rpc.example:8546/ws")).toBe("wss://rpc.example:8546");
    expect(redactedUrl("https://rpc.example:443/x")).toBe("https://rpc.example");
  });

  it("drops the path, the query, the fragment and the user info, where keys go", () => {
    expect(redactedUrl("https://eth-mainnet.g.example/v2/SECRETKEY")).toBe("https://eth-mainnet.g.example");
    expect(redactedUrl("https://rpc.example/?apikey=SECRETKEY#SECRETKEY")).toBe("https://rpc.example");
    expect(redactedUrl("https://user:SECRETKEY@rpc.example/rpc")).toBe("https://rpc.example");
  });

  it("echoes nothing of what is not a URL", () => {
    expect(redactedUrl("rpc.example/SECRETKEY")).toBe("(not a URL)");
    expect(redactedUrl("")).toBe("(not a URL)");
  });
});

describe("urlRedactor", () => {
  const redact = urlRedactor([
    "https://eth-mainnet.g.example/v2/SECRETKEY1234",
    "https://user:PASSWORD99@rpc.example:8443/rpc?apikey=QUERYKEY",
    "http://127.0.0.1:8545",
  ]);

  it("hides every spelling of each URL, and its path and query quoted alone", () => {
    const line =
      'HTTP request failed. URL: https://eth-mainnet.g.example/v2/SECRETKEY1234 body {"path":"/v2/SECRETKEY1234"} ' +
      "https://user:PASSWORD99@rpc.example:8443/rpc?apikey=QUERYKEY and PASSWORD99";
    const shown = redact(line);
    for (const secret of ["SECRETKEY1234", "PASSWORD99", "QUERYKEY"]) expect(shown).not.toContain(secret);
    expect(shown).toContain("URL: https://eth-mainnet.g.example body");
    expect(shown).toContain("https://rpc.example:8443 and …");
  });

  it("leaves other text, and a URL that holds no key, as it is", () => {
    expect(redact("Started backfill indexing at http://127.0.0.1:8545/ for chain 1 (/v2 short)")).toBe(
      "Started backfill indexing at http://127.0.0.1:8545 for chain 1 (/v2 short)",
    );
    expect(urlRedactor(["not a url"])("not a url")).toBe("not a url");
  });
});
