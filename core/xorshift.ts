/**
 * A seeded stream of unsigned 32-bit integers (xorshift32), for the unit tests of core/ and api/
 * (which may not import devkit's Rng): a failure replays with its SEED.
 */
export function xorshift32(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
}

/** `length` bytes of the stream `next`. */
export const streamBytes = (next: () => number, length: number): Uint8Array =>
  Uint8Array.from({ length }, () => next() & 0xff);
