import type { Floor } from "../../core/feed";
import { type Subject, subjectOf } from "./filter";
import type { ChangeLog, FeedEntry } from "./log";

/** An entry as streams read it: with what the filters read, and its chain's floor key (`chainId:version`). */
export type HubEntry = FeedEntry & { subject: Subject; chain: string };

/** One stream reading the log: it takes every entry after `cursor`, in seq order, and the floors with them. */
export interface Reader {
  /** The seq of the last entry it took. */
  readonly cursor: bigint;
  take(entries: readonly HubEntry[], floors: ReadonlyMap<string, Floor>): void;
  /** A heartbeat: nothing new, the connection is alive. */
  beat(): void;
}

/** Entries read per statement. */
export const HUB_PAGE = 500;

/**
 * Streams handed entries before the process turns to other work: each a socket write, and with
 * thousands of streams a fan-out in one go held every answer back for its whole length.
 */
const FAN_OUT_SLICE = 500;

/** How often a heartbeat goes to every stream: the feed promises one at least every 15 s. */
const HEARTBEAT_MS = 10_000;

const hubEntry = (e: FeedEntry): HubEntry => ({
  ...e,
  subject: subjectOf(e.version, e.record),
  chain: `${e.chainId}:${e.version}`,
});

/**
 * The process's reader of the change log for its streams: while any stream is open it reads the
 * new entries every `everyMs` once (and the floors, before them: an entry read is then never below
 * a floor raised after its retraction was read, core/feed.ts's FinalQueue), parses each once, and
 * hands them to every stream. A stream catches up from its own cursor with `read`, then joins.
 */
export class FeedHub {
  /** The seq of the last entry read; undefined while no stream is open. */
  private head: bigint | undefined;
  private floors: ReadonlyMap<string, Floor> = new Map();
  private readonly readers = new Set<Reader>();
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private lastBeat = Date.now();
  /** Streams open, by who holds them (api/feed/stream.ts bounds them). */
  readonly held = new Map<string, number>();

  private readonly everyMs: number;
  private readonly heartbeatMs: number;
  private readonly onError: (error: Error) => void;

  constructor(
    private readonly log: () => ChangeLog | undefined,
    options: { everyMs: number; heartbeatMs?: number; onError?: (error: Error) => void },
  ) {
    this.everyMs = options.everyMs;
    this.heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
    this.onError = options.onError ?? (() => {});
  }

  private open(): ChangeLog {
    const log = this.log();
    if (!log) throw new Error("the change log is not open yet");
    return log;
  }

  /** Up to `limit` entries after `after`, parsed: a stream's catch-up. */
  async read(after: bigint, limit = HUB_PAGE): Promise<HubEntry[]> {
    return (await this.open().entries(after, limit)).map(hubEntry);
  }

  /** The floors now (a stream's catch-up reads them before its entries). */
  readFloors(): Promise<Map<string, Floor>> {
    return this.open().floors();
  }

  /** Where a stream asking for what comes next starts. */
  newest(): Promise<bigint> {
    return this.open().newest();
  }

  /**
   * Joins `reader` when it has read the log `through` as far as the hub has (true); else it catches
   * up further first. The first reader starts the hub there. Not at the reader's cursor, which may
   * lie past the log's end: a reader takes only entries after its cursor, however far the hub is.
   */
  join(reader: Reader, through: bigint): boolean {
    if (this.head === undefined) {
      this.head = through;
      this.timer = setInterval(() => this.tick(), this.everyMs);
      this.timer.unref();
    } else if (through < this.head) return false;
    this.readers.add(reader);
    return true;
  }

  leave(reader: Reader): void {
    if (!this.readers.delete(reader) || this.readers.size > 0) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.head = undefined;
  }

  /** How many streams are joined. */
  get size(): number {
    return this.readers.size;
  }

  /** One read of what is new, for every stream; a tick while one runs is skipped. */
  tick(): Promise<void> {
    this.polling ??= this.poll()
      .catch(this.onError)
      .finally(() => {
        this.polling = undefined;
      });
    return this.polling;
  }

  private async poll(): Promise<void> {
    // The streams' reading this poll is for: when they all left meanwhile, it is over.
    const run = this.timer;
    if (run === undefined) return;
    this.floors = await this.readFloors();
    for (;;) {
      if (this.timer !== run) return;
      const entries = await this.read(this.head!);
      if (this.timer !== run) return;
      if (entries.length > 0) this.head = entries[entries.length - 1]!.seq;
      const floors = this.floors;
      await this.fanOut((reader) => reader.take(entries, floors));
      if (entries.length < HUB_PAGE) break;
    }
    if (Date.now() - this.lastBeat >= this.heartbeatMs) {
      this.lastBeat = Date.now();
      await this.fanOut((reader) => reader.beat());
    }
  }

  /**
   * `give` to every stream joined now, a slice at a time, other work let in between. A stream that
   * joins meanwhile has read as far as the hub (join), so what is given here is no news to it.
   */
  private async fanOut(give: (reader: Reader) => void): Promise<void> {
    const readers = [...this.readers];
    for (let i = 0; i < readers.length; i += FAN_OUT_SLICE) {
      if (i > 0) await new Promise((ok) => setImmediate(ok));
      for (const reader of readers.slice(i, i + FAN_OUT_SLICE)) give(reader);
    }
  }
}
