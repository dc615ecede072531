import type { IncomingMessage } from "node:http";
import { utf8 } from "./utf8";

/**
 * A node:http request's body as text (as `utf8` reads it), by the stream's events: its async
 * iterator cost a check through /rpc more than its calldata's decoding. A request closed before its
 * end is an error, as the iterator's; the error is made only then: every request closes once read,
 * and an Error's stack made for each one took 7.5% of a worker's time under /rpc checks
 * (docs/performance.md).
 */
export function requestText(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let ended = false;
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.once("end", () => {
      ended = true;
      resolve(utf8(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    });
    req.once("error", reject);
    req.once("close", () => ended || reject(new Error("the request closed before its body's end")));
  });
}
