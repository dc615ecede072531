import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Cleanup } from "./cleanup";

/**
 * A webhook endpoint on loopback for the bench: each delivery is answered 204 as soon as its body is
 * read, then handed to `taken` with the moment it arrived; closed by `cleanup`. Its URL.
 */
export async function loopbackEndpoint(cleanup: Cleanup, taken: (body: string, at: number) => void): Promise<string> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const at = Date.now();
      res.writeHead(204).end();
      taken(Buffer.concat(chunks).toString(), at);
    });
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  cleanup.add("a webhook endpoint", () => new Promise<void>((ok) => server.close(() => ok()).closeAllConnections()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}
