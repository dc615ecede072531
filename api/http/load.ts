import { type EventLoopUtilization, performance } from "node:perf_hooks";

/** How often the event loop's use is sampled. */
const SAMPLE_MS = 100;
/** Past this share of the time busy, the process is saturated. */
const BUSY = 0.85;
/** Under this, it has room again: keyless requests are shed less. */
const IDLE = 0.6;
/**
 * Keyless requests a second from which they are a load worth shedding: fewer cost too little to
 * matter (a busy machine's other work is no reason to turn them away).
 */
const KEYLESS_PRESSURE = 200;

/**
 * Whether this process is saturated by keyless traffic, from its event loop's utilization (the
 * share of time it ran code, sampled every SAMPLE_MS) and the keyless requests that came meanwhile:
 * while both are high, a growing share of keyless requests is refused on arrival, so that keyed
 * requests keep the process; as it frees up, the share shrinks. One per process: the event loop is
 * the process's.
 */
export class LoadShedder {
  /** The share of keyless requests refused now. */
  share = 0;
  private arrivals = 0;
  /** The event loop's use when last sampled: set when sampling starts. */
  private last: EventLoopUtilization | undefined;
  /** When the arrivals began to be counted: a busy loop runs the sampling timer late, not every SAMPLE_MS. */
  private since = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly utilization: () => number = () => this.sample()) {}

  /** Whether to refuse this keyless request (counted as one arriving); starts sampling on first use. */
  shed(): boolean {
    if (this.timer === undefined) {
      // The first sample covers the time from here, not the process's start.
      this.last = performance.eventLoopUtilization();
      this.since = performance.now();
      this.timer = setInterval(() => {
        const now = performance.now();
        this.adjust(this.utilization(), (this.arrivals * 1000) / Math.max(now - this.since, SAMPLE_MS));
        this.arrivals = 0;
        this.since = now;
      }, SAMPLE_MS).unref();
    }
    this.arrivals++;
    return this.share > 0 && Math.random() < this.share;
  }

  /** Moves the share after a sample: up fast while saturated under keyless pressure, down slowly. */
  adjust(utilization: number, keylessPerSecond: number): void {
    if (utilization > BUSY && keylessPerSecond >= KEYLESS_PRESSURE) this.share = Math.min(1, this.share + 0.25);
    else if (utilization < IDLE || keylessPerSecond < KEYLESS_PRESSURE) this.share = Math.max(0, this.share - 0.1);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private sample(): number {
    const now = performance.eventLoopUtilization();
    const delta = performance.eventLoopUtilization(now, this.last);
    this.last = now;
    return delta.utilization;
  }
}

/** This process's shedder. */
export const PROCESS_LOAD = new LoadShedder();
