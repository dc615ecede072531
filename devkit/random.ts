/** Seeded randomness: the run's seed, a small portable random stream, and addresses spelled at random. */
import { type Address, getAddress } from "viem";

/** The run's seed: `SEED` from the environment (decimal), or a fresh random one. */
export function chooseSeed(env: NodeJS.ProcessEnv = process.env): number {
  const given = env.SEED?.trim();
  if (given) {
    if (!/^[0-9]+$/.test(given) || Number(given) > 0xffffffff)
      throw new Error(`SEED must be a decimal integer 0..2^32-1, got ${given}`);
    return Number(given);
  }
  return Math.floor(Math.random() * 0x1_0000_0000);
}

/** sfc32, seeded through splitmix32: small, fast, and the same stream on every platform. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    let s = seed >>> 0;
    const split = () => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = split();
    this.b = split();
    this.c = split();
    this.d = split();
    for (let i = 0; i < 16; i++) this.u32();
  }

  /** The next 32 bits of the stream, as an unsigned integer. */
  u32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** A float in [0, 1). */
  next(): number {
    return this.u32() / 0x1_0000_0000;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One of `items`, each as likely. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("pick from an empty list");
    return items[this.int(items.length)]!;
  }

  /** Picks by weight: [[weight, value], ...]. */
  weighted<T>(items: readonly (readonly [number, T])[]): T {
    const total = items.reduce((sum, [w]) => sum + w, 0);
    let x = this.next() * total;
    for (const [w, v] of items) {
      x -= w;
      if (x < 0) return v;
    }
    return items[items.length - 1]![1];
  }

  /** A bigint of `bits` random bits. */
  bigint(bits: number): bigint {
    let v = 0n;
    for (let i = 0; i < bits; i += 32) v = (v << 32n) | BigInt(this.u32());
    return v & ((1n << BigInt(bits)) - 1n);
  }

  /** Shuffles `items` in place (Fisher-Yates) and returns them. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [items[i], items[j]] = [items[j]!, items[i]!];
    }
    return items;
  }
}

/** An address spelled lowercase, EIP-55 or with uppercase hex digits: the API accepts all three. */
export function spellAddress(rng: Rng, a: Address): string {
  const lower = a.toLowerCase();
  return rng.weighted([
    [2, lower],
    [2, getAddress(lower)],
    [1, `0x${lower.slice(2).toUpperCase()}`],
  ]);
}
