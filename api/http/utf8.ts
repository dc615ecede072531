import { isAscii } from "node:buffer";

const decoder = new TextDecoder();

/**
 * A body's UTF-8 bytes, as the chunks it arrived in, as text, as TextDecoder reads them. A body all
 * ASCII, as JSON of addresses and numbers is, is read as ASCII chunk by chunk: the same text, without
 * TextDecoder (five times as long over a 10,000-check batch) or a copy of the whole body first (a
 * fresh buffer of megabytes, which a replica worker's malloc maps anew: scripts/serve.ts).
 */
export function utf8(chunks: readonly Uint8Array[]): string {
  if (!chunks.every((chunk) => isAscii(chunk))) return decoder.decode(Buffer.concat(chunks));
  let text = "";
  for (const chunk of chunks) text += Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString("ascii");
  return text;
}
