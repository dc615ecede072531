import { databaseUnavailable } from "../http/unavailable";

/** How often a process reads the valid keys again. */
export const REFRESH_MS = 250;
/**
 * The copy answers only while its read began less than this long ago: a revocation made in any
 * process holds in every process within 1 s (docs/keys-and-limits.md), whatever the reads' delays.
 */
export const FRESH_MS = 1_000;

/**
 * The hashes of the valid keys (id → hash), held in memory and read again every REFRESH_MS, so that
 * a key check costs no database round trip. What the copy cannot vouch for — a key it does not
 * hold (made in another process since, or no key at all), or any key once the copy is older than
 * FRESH_MS (the database slow to answer) — the caller reads from the database itself. While the
 * database cannot be reached at all, the last copy read stays the best knowledge there is, and
 * vouches on (a replica cut off from its access database keeps serving keyed requests);
 * a revocation made elsewhere meanwhile holds here within FRESH_MS of the database answering again.
 */
export class ValidKeys {
  private hashes = new Map<string, string>();
  private readAt = Number.NEGATIVE_INFINITY;
  /** Whether the last read failed because the database could not be reached. */
  private unreachable = false;
  /** Revocations made here: a read begun before one may still hold the key, and is not taken. */
  private revocations = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly read: () => Promise<Map<string, string>>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Reads the keys now, then every REFRESH_MS until stop(); a failed read leaves the copy to age. */
  async start(): Promise<void> {
    const loop = async () => {
      await this.refresh().catch(() => undefined);
      if (!this.stopped) this.timer = setTimeout(loop, REFRESH_MS).unref();
    };
    await loop();
  }

  async refresh(): Promise<void> {
    const began = this.now();
    const revocations = this.revocations;
    let hashes: Map<string, string>;
    try {
      hashes = await this.read();
    } catch (error) {
      this.unreachable = databaseUnavailable(error);
      throw error;
    }
    this.unreachable = false;
    if (revocations !== this.revocations) return;
    this.hashes = hashes;
    this.readAt = began;
  }

  /** The key's hash, if the copy holds it and is fresh (or the database unreachable); undefined: read it. */
  hashOf(id: string): string | undefined {
    return this.unreachable || this.now() - this.readAt < FRESH_MS ? this.hashes.get(id) : undefined;
  }

  /** The key's hash as the copy last read it, however old: undefined where it held none. */
  heldHashOf(id: string): string | undefined {
    return this.hashes.get(id);
  }

  /** A key this process made: valid here at once. */
  added(id: string, hash: string): void {
    this.hashes.set(id, hash);
  }

  /** A key this process revoked: refused here from the next request on. */
  revoked(id: string): void {
    this.revocations++;
    this.hashes.delete(id);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
