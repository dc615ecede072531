/**
 * JSON written straight into one growing buffer, for answers of many records whose pieces are
 * mostly ASCII the writer knows (field names, hex, digits): a bulk listing's ten thousand records
 * (ChainState's v2WalletsJson), a page of the history (api/routes/records.ts). Made as objects and
 * strings, then serialized, most of their time went to making them (docs/performance.md,
 * "Rendering listings").
 */

import { writeInChecksumCase } from "../../core/keccak";

export class JsonBytes {
  private buffer: Buffer;
  length = 0;

  constructor(capacity = 1 << 16) {
    this.buffer = Buffer.allocUnsafeSlow(capacity);
  }

  /** `text`, which must be ASCII (nothing in it needs escaping where it is written). */
  ascii(text: string): this {
    this.room(text.length);
    const { buffer } = this;
    for (let i = 0; i < text.length; i++) buffer[this.length++] = text.charCodeAt(i);
    return this;
  }

  /** `text` as a JSON string, as JSON.stringify writes it. */
  string(text: string): this {
    this.room(text.length + 2);
    const { buffer } = this;
    let at = this.length;
    buffer[at++] = QUOTE;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      // Anything JSON.stringify would escape, or not ASCII: the whole string by JSON.stringify.
      if (code < 0x20 || code > 0x7e || code === QUOTE || code === BACKSLASH) return this.utf8(JSON.stringify(text));
      buffer[at++] = code;
    }
    buffer[at++] = QUOTE;
    this.length = at;
    return this;
  }

  /** A value of a record's field as toJson writes it (api/http/json.ts): a bigint's digits, absent as null. */
  value(value: string | bigint | number | boolean | null | undefined): this {
    switch (typeof value) {
      case "string":
        return this.string(value);
      case "bigint":
        return this.ascii(value.toString());
      case "undefined":
        return this.raw(NULL);
      default:
        return this.ascii(JSON.stringify(value));
    }
  }

  /** Bytes written already (ascii's of a text written often, made once). */
  raw(bytes: Uint8Array): this {
    this.room(bytes.length);
    const { buffer } = this;
    // A loop: the pieces are a few bytes, where `set` costs more than it copies.
    for (let i = 0; i < bytes.length; i++) buffer[this.length++] = bytes[i]!;
    return this;
  }

  byte(code: number): this {
    this.room(1);
    this.buffer[this.length++] = code;
    return this;
  }

  /** Bytes `start`…`start + length` of `source`, as 0x and lowercase hex. */
  hex(source: Uint8Array, start: number, length: number): this {
    this.room(2 + 2 * length);
    const { buffer } = this;
    let at = this.length;
    buffer[at++] = ZERO;
    buffer[at++] = X;
    for (let i = start; i < start + length; i++) {
      const byte = source[i]!;
      buffer[at++] = DIGITS[byte >> 4]!;
      buffer[at++] = DIGITS[byte & 15]!;
    }
    this.length = at;
    return this;
  }

  /** The 20-byte address at `start` of `source`, as 0x and hex in the EIP-55 case at `caseAt` of `caseBits`. */
  address(source: Uint8Array, start: number, caseBits: Uint8Array, caseAt: number): this {
    this.room(42);
    this.buffer[this.length++] = ZERO;
    this.buffer[this.length++] = X;
    writeInChecksumCase(this.buffer, this.length, source, start, caseBits, caseAt);
    this.length += 40;
    return this;
  }

  /**
   * Empties the writer for another JSON, keeping its buffer (copy each JSON out) unless it grew past
   * `keep` bytes: one answer as large as a bulk listing's is not held for every small one after it.
   */
  reset(keep = KEEP_BYTES): this {
    if (this.buffer.length > keep) this.buffer = Buffer.allocUnsafeSlow(keep);
    this.length = 0;
    return this;
  }

  /**
   * The JSON written, which outlives the writer's next use (reset): a copy where the writer keeps
   * its buffer, else the buffer itself, the writer taking a new one (a large JSON is not copied).
   */
  take(keep = KEEP_BYTES): Uint8Array<ArrayBuffer> {
    if (this.buffer.length <= keep) return Buffer.from(this.buffer.subarray(0, this.length));
    const json = this.bytes();
    this.buffer = Buffer.allocUnsafeSlow(keep);
    this.length = 0;
    return json;
  }

  /** The JSON written: a view of the writer's buffer (allocUnsafeSlow's: not a shared pool's), for when it is done. */
  bytes(): Uint8Array<ArrayBuffer> {
    return new Uint8Array(this.buffer.buffer as ArrayBuffer, this.buffer.byteOffset, this.length);
  }

  private utf8(text: string): this {
    this.room(Buffer.byteLength(text));
    this.length += this.buffer.write(text, this.length, "utf8");
    return this;
  }

  private room(more: number) {
    if (this.length + more <= this.buffer.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.buffer.length * 2, this.length + more));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }
}

/** `text`'s bytes, for JsonBytes's `raw`: ASCII. */
export const asciiBytes = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));

/** What a reused writer keeps between uses (reset). */
const KEEP_BYTES = 1 << 16;

const DIGITS = asciiBytes("0123456789abcdef");
const [ZERO, X, QUOTE, BACKSLASH] = [...'0x"\\'].map((c) => c.charCodeAt(0)) as [number, number, number, number];
const NULL = asciiBytes("null");
