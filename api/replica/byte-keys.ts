/**
 * Fixed-width byte keys (addresses, hashes, composite keys) numbered 0, 1, 2… in the order they are
 * first added, held in two typed arrays: the keys side by side, and an open-addressing table of
 * their numbers. A million keys cost their bytes and a few bytes more, with no object per key for
 * the garbage collector to walk (a Map of hex strings costs ten times that).
 */
export class ByteKeys {
  /**
   * The keys, each at a multiple of 4 bytes (`stride`): read by `hex` in place as a Buffer (a Buffer
   * made for each read cost as much again), and compared and hashed 4 bytes at a time (`words`).
   */
  private keys: Buffer;
  private words: Int32Array;
  /** Bytes from one key to the next: its width, rounded up to a multiple of 4 (the rest zero). */
  private readonly stride: number;
  /** The key looked up, copied in: its words are compared and hashed as the held keys' are. */
  private readonly probe: Uint8Array;
  private readonly probeWords: Int32Array;
  /**
   * Per slot, a key's number + 1 in the bits the mask (length - 1) keeps, 0 if empty; above them,
   * the same bits of the key's hash, so that a probe compares a key only where those agree: each
   * compare is a cache miss among a million keys, and most keys a snapshot asks about are absent.
   * At most half full, so probes stay short and a number always fits under the mask.
   */
  private slots: Int32Array;
  size = 0;

  constructor(
    readonly width: number,
    capacity = 64,
  ) {
    this.stride = Math.ceil(width / 4) * 4;
    [this.keys, this.words] = aligned(this.stride * capacity);
    [this.probe, this.probeWords] = aligned(this.stride);
    this.slots = new Int32Array(capacity * 2);
  }

  /** The number of the key in `key`'s first `width` bytes, or -1 if it was never added. */
  find(key: Uint8Array): number {
    for (let i = 0; i < this.width; i++) this.probe[i] = key[i]!;
    return this.findProbe(this.hash(this.probeWords, 0));
  }

  /** The number of the key in `key`'s first `width` bytes, added if new. */
  add(key: Uint8Array): number {
    const found = this.find(key);
    if (found >= 0) return found;
    const id = this.size++;
    if (this.keys.length < this.size * this.stride) {
      const [keys, words] = aligned(this.keys.length * 2);
      keys.set(this.keys);
      [this.keys, this.words] = [keys, words];
    }
    this.keys.set(this.probe, id * this.stride);
    if (this.size * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    else this.place(id);
    return id;
  }

  /** Gives back the room for keys not added (see `trimmed`): the table's slots stay as they are. */
  trim() {
    const length = Math.max(64, roomFor(this.size)) * this.stride;
    if (this.keys.length <= length) return;
    const [keys, words] = aligned(length);
    keys.set(this.keys.subarray(0, length));
    [this.keys, this.words] = [keys, words];
  }

  /** Bytes `from`…`from + length` of key `id`, as lowercase hex with 0x. */
  hex(id: number, from = 0, length = this.width): `0x${string}` {
    const start = this.offset(id) + from;
    return `0x${this.keys.toString("hex", start, start + length)}`;
  }

  /** The keys' bytes, key `id` from `offset(id)`: to read in place now, not to keep (growing replaces them). */
  get bytes(): Buffer {
    return this.keys;
  }

  /** Where key `id` begins in `bytes`. */
  offset(id: number): number {
    return id * this.stride;
  }

  /** Byte `at` of key `id`. */
  byte(id: number, at: number): number {
    return this.keys[this.offset(id) + at]!;
  }

  /** The number of the key in `probe`, whose hash is `hash`, or -1. */
  private findProbe(hash: number): number {
    const mask = this.slots.length - 1;
    const high = hash & ~mask;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot]!;
      if (entry === 0) return -1;
      if ((entry & ~mask) === high && this.holdsProbe((entry & mask) - 1)) return (entry & mask) - 1;
    }
  }

  private place(id: number) {
    const mask = this.slots.length - 1;
    const hash = this.hash(this.words, id * (this.stride >> 2));
    let slot = hash & mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    this.slots[slot] = (hash & ~mask) | (id + 1);
  }

  private rehash(slots: number) {
    this.slots = new Int32Array(slots);
    for (let id = 0; id < this.size; id++) this.place(id);
  }

  private holdsProbe(id: number): boolean {
    const count = this.stride >> 2;
    const at = id * count;
    for (let i = 0; i < count; i++) if (this.words[at + i] !== this.probeWords[i]) return false;
    return true;
  }

  /**
   * FNV-1a over the key's 4-byte words, then murmur3's finalizer: keys need not be random (test
   * wallets are 0x…0a), and the slot is the hash's low bits. A word at a time: byte by byte, the
   * hash was two fifths of a batch of v1 checks' lookups (docs/performance.md).
   */
  private hash(words: Int32Array, at: number): number {
    let h = 0x811c9dc5;
    for (let i = at; i < at + (this.stride >> 2); i++) h = Math.imul(h ^ words[i]!, 0x01000193);
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    return (h ^ (h >>> 16)) >>> 0;
  }
}

/** `length` zeroed bytes (a multiple of 4), and the same memory as 32-bit words. */
function aligned(length: number): [Buffer, Int32Array] {
  const memory = new ArrayBuffer(length);
  return [Buffer.from(memory), new Int32Array(memory)];
}

/** Items kept for `length` when a copy is trimmed: an eighth more, so that the next few grow in place. */
const roomFor = (length: number) => length + (length >> 3);

/**
 * `array` cut to `length` items and `roomFor`'s few more. Growing by doubling leaves up to half an
 * array unused; a copy loaded whole (api/replica/feed.ts) gives it back, as two workers each hold
 * one (docs/performance.md, "The replicas' memory, trimmed").
 */
export function trimmed<T extends Int32Array | Uint32Array | Uint8Array | Float64Array>(array: T, length: number): T {
  const room = roomFor(length);
  return array.length <= room ? array : (array.slice(0, room) as T);
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
