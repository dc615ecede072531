/**
 * Fixed-width byte keys (addresses, hashes, composite keys) numbered 0, 1, 2… in the order they are
 * first added, held in two typed arrays: the keys side by side, and an open-addressing table of
 * their numbers. A million keys cost their bytes and a few bytes more, with no object per key for
 * the garbage collector to walk (a Map of hex strings costs ten times that).
 */
export class ByteKeys {
  /** A Buffer, so that `hex` reads its keys in place (a Buffer made for each read cost as much again). */
  private keys: Buffer;
  /** Per slot, a key's number + 1 (0: empty); at most half full, so probes stay short. */
  private slots: Int32Array;
  size = 0;

  constructor(
    readonly width: number,
    capacity = 64,
  ) {
    this.keys = Buffer.alloc(width * capacity);
    this.slots = new Int32Array(capacity * 2);
  }

  /** The number of the key in `key`'s first `width` bytes, or -1 if it was never added. */
  find(key: Uint8Array): number {
    const mask = this.slots.length - 1;
    for (let slot = this.hash(key, 0) & mask; ; slot = (slot + 1) & mask) {
      const id = this.slots[slot]! - 1;
      if (id < 0 || this.equals(id, key)) return id;
    }
  }

  /** The number of the key in `key`'s first `width` bytes, added if new. */
  add(key: Uint8Array): number {
    const found = this.find(key);
    if (found >= 0) return found;
    const id = this.size++;
    if (this.keys.length < this.size * this.width) {
      const keys = Buffer.alloc(this.keys.length * 2);
      keys.set(this.keys);
      this.keys = keys;
    }
    this.keys.set(key.subarray(0, this.width), id * this.width);
    if (this.size * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    else this.place(id);
    return id;
  }

  /** Bytes `from`…`from + length` of key `id`, as lowercase hex with 0x. */
  hex(id: number, from = 0, length = this.width): `0x${string}` {
    const start = id * this.width + from;
    return `0x${this.keys.toString("hex", start, start + length)}`;
  }

  /** The keys' bytes, key `id` from `id * width`: to read in place now, not to keep (growing replaces them). */
  get bytes(): Buffer {
    return this.keys;
  }

  /** Byte `at` of key `id`. */
  byte(id: number, at: number): number {
    return this.keys[id * this.width + at]!;
  }

  private place(id: number) {
    const mask = this.slots.length - 1;
    let slot = this.hash(this.keys, id * this.width) & mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    this.slots[slot] = id + 1;
  }

  private rehash(slots: number) {
    this.slots = new Int32Array(slots);
    for (let id = 0; id < this.size; id++) this.place(id);
  }

  private equals(id: number, key: Uint8Array): boolean {
    const at = id * this.width;
    for (let i = 0; i < this.width; i++) if (this.keys[at + i] !== key[i]) return false;
    return true;
  }

  /** FNV-1a over the key's bytes: keys need not be random (test wallets are 0x…0a). */
  private hash(bytes: Uint8Array, at: number): number {
    let h = 0x811c9dc5;
    for (let i = at; i < at + this.width; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
    return h >>> 0;
  }
}

/** `array` with room for `length` items (doubled when it grows), new items set to `fill`. */
export function withRoom<T extends Int32Array | Uint32Array | Uint8Array | Float64Array>(
  array: T,
  length: number,
  fill = 0,
): T {
  if (length <= array.length) return array;
  const grown = new (array.constructor as new (n: number) => T)(Math.max(length, array.length * 2));
  grown.set(array);
  if (fill !== 0) grown.fill(fill, array.length);
  return grown;
}
