import { table } from "../../core/sql";
import type { AccessDb } from "../database/db";

const MINUTE_MS = 60_000;
/** "Recent" requests: those of the last 24 hours, by minute. */
const RECENT_MINUTES = 24 * 60;
const FLUSH_EVERY_MS = 5_000;

/** SQL: creates the table of requests per key and minute in `schema`, if it is not there. */
export const usageTable = (schema: string) => `
  CREATE TABLE IF NOT EXISTS ${table(schema, "api_key_usage")} (
    key_id text NOT NULL REFERENCES ${table(schema, "api_key")} (id),
    minute bigint NOT NULL,
    requests integer NOT NULL,
    PRIMARY KEY (key_id, minute)
  )`;

/**
 * Requests made with each key, per minute. Counted in memory (a write per request would double the
 * database's work for keyed traffic) and added to the database every few seconds, so counts from
 * several processes add up; each process's unwritten counts are lost if it dies.
 */
export class UsageCounter {
  private pending = new Map<string, { keyId: string; minute: number; requests: number }>();
  private written: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;
  private readonly usage: string;

  constructor(
    private readonly db: AccessDb,
    schema: string,
  ) {
    this.usage = table(schema, "api_key_usage");
    this.timer = setInterval(
      () => this.flush().catch((error: Error) => console.error("key usage:", error.message)),
      FLUSH_EVERY_MS,
    );
    this.timer.unref();
  }

  /** Counts `requests` of a key in `minute` (now), written at the next flush. */
  count(keyId: string, requests = 1, minute = Math.floor(Date.now() / MINUTE_MS)): void {
    const slot = `${keyId} ${minute}`;
    const entry = this.pending.get(slot);
    if (entry) entry.requests += requests;
    else this.pending.set(slot, { keyId, minute, requests });
  }

  /** Writes the counts so far; flushes run one after another, so awaiting one awaits all before it. */
  flush(): Promise<void> {
    this.written = this.written.catch(() => {}).then(() => this.write());
    return this.written;
  }

  /** The first minute that counts as recent now. */
  static since(): number {
    return Math.floor(Date.now() / MINUTE_MS) - RECENT_MINUTES + 1;
  }

  /** Stops flushing on a timer, after writing what is counted. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = [...this.pending.values()];
    this.pending = new Map();
    const values = batch.map((_, i) => `($${3 * i + 1}, $${3 * i + 2}::bigint, $${3 * i + 3}::integer)`).join(", ");
    try {
      await this.db.query(
        `INSERT INTO ${this.usage} (key_id, minute, requests) VALUES ${values}
         ON CONFLICT (key_id, minute) DO UPDATE SET requests = ${this.usage}.requests + excluded.requests`,
        batch.flatMap((e) => [e.keyId, e.minute, e.requests]),
      );
    } catch (error) {
      // Keep the counts for the next flush.
      for (const e of batch) this.count(e.keyId, e.requests, e.minute);
      throw error;
    }
    await this.db.query(`DELETE FROM ${this.usage} WHERE minute < $1`, [UsageCounter.since()]);
  }
}
