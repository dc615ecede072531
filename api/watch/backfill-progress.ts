import { type Gauge, ponderProgressGauges } from "../../ponder/ponder-0.16.10";

/**
 * A backfill progress line per chain, every few seconds until the chain is live: blocks done of
 * total, events indexed, and an estimate of the time left. Ponder's own progress line is one
 * figure for all chains; an operator backfilling several wants each. It reads the metrics Ponder
 * keeps in its process (ponder/ponder-0.16.10.ts).
 */

const byChain = async (gauge: Gauge) => {
  const sums = new Map<string, number>();
  for (const { value, labels } of (await gauge.get()).values) {
    const chain = String(labels.chain ?? "");
    sums.set(chain, (sums.get(chain) ?? 0) + value);
  }
  return sums;
};

const duration = (seconds: number) =>
  seconds >= 3600
    ? `${Math.round(seconds / 360) / 10}h`
    : seconds >= 60
      ? `${Math.round(seconds / 60)}m`
      : `${Math.ceil(seconds)}s`;

/** Logs each of `chains`' backfill progress every `everyMs` until it is live; nothing outside Ponder. */
export function logBackfillProgress(chains: readonly string[], everyMs = 10_000): void {
  const gauges = ponderProgressGauges();
  if (gauges === undefined) return;
  const started = Date.now();
  const first = new Map<string, number>();
  const timer = setInterval(async () => {
    const [total, cached, done, events, realtime, complete] = await Promise.all([
      byChain(gauges.totalBlocks),
      byChain(gauges.cachedBlocks),
      byChain(gauges.completedBlocks),
      byChain(gauges.indexedEvents),
      byChain(gauges.realtime),
      byChain(gauges.complete),
    ]);
    const pending = chains.filter((chain) => !realtime.get(chain) && !complete.get(chain));
    if (pending.length === 0) return clearInterval(timer);
    for (const chain of pending) {
      const all = total.get(chain) ?? 0;
      const finished = (cached.get(chain) ?? 0) + (done.get(chain) ?? 0);
      if (!first.has(chain)) first.set(chain, finished);
      const rate = (finished - first.get(chain)!) / ((Date.now() - started) / 1000);
      const eta = rate > 0 && all > finished ? `, about ${duration((all - finished) / rate)} left` : "";
      const share = all > 0 ? ` (${((100 * finished) / all).toFixed(1)}%)` : "";
      console.log(
        `backfill ${chain}: ${finished.toLocaleString("en")} of ${all.toLocaleString("en")} blocks${share}, ` +
          `${(events.get(chain) ?? 0).toLocaleString("en")} events indexed${eta}`,
      );
    }
  }, everyMs);
  timer.unref();
}
