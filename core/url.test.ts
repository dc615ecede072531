/** A printed RPC URL keeps what tells the operator which one it is, and none of what may be a key. */
import { describe, expect, it } from "vitest";
import { redactedUrl } from "./url";

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
