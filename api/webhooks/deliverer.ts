import { entryJson } from "../feed/entry";
import { type FeedFilter, feedFilterOf, passes, subjectOf } from "../feed/filter";
import type { ChangeLog, FeedEntry } from "../feed/log";
import { Params } from "../http/params";
import { Problem } from "../http/problem";
import { delivered, postWebhook, retryAfter } from "./send";
import { webhookHeaders } from "./signature";
import type { DueWebhook, WebhookStore } from "./store";

/** How often a deliverer looks for endpoints due a delivery. */
export const DELIVER_EVERY_MS = 200;
/** How long an endpoint has to answer a delivery. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

/** Entries a delivery carries at most. */
export const BATCH = 100;
/** Entries read from the log per statement while a batch is gathered. */
const READ = 1_000;
/** How long a deliverer's lease lasts without being renewed: another takes over after it. */
const LEASE_MS = 15_000;

/** A delivery's body (components/schemas/WebhookPayload): its entries as the feed writes them. */
export const deliveryBody = (entries: readonly FeedEntry[]): string =>
  `{"entries":[${entries.map(entryJson).join(",")}]}`;

/** An endpoint's filters, from the query string it was made with; a Problem when they no longer read. */
const filterOf = (hook: DueWebhook, served: readonly number[]): FeedFilter =>
  feedFilterOf(Params.ofUrl(`?${hook.filter}`), served);

/** The log from after a seq, read ahead a page at a time: one endpoint's batches in a row read it once. */
class LogReader {
  private page: FeedEntry[] = [];
  private next = 0;
  constructor(
    private readonly log: ChangeLog,
    private after: bigint,
  ) {}

  /** The next entry, without taking it; undefined at the log's end (for now). */
  async peek(): Promise<FeedEntry | undefined> {
    if (this.next === this.page.length) {
      this.page = await this.log.entries(this.after, READ);
      this.next = 0;
    }
    return this.page[this.next];
  }

  take(): void {
    this.after = this.page[this.next++]!.seq;
  }
}

/**
 * The next batch of an endpoint: up to BATCH entries its filters let through after its cursor, and
 * the last seq read (what the cursor moves to once they are taken). A retry reads through the seq
 * its first attempt read through, so that it sends the same entries under the same id.
 */
async function batchOf(reader: LogReader, hook: Pick<DueWebhook, "cursor" | "pending">, filter: FeedFilter) {
  const entries: FeedEntry[] = [];
  let read = hook.cursor;
  for (let e = await reader.peek(); e && (hook.pending === null || e.seq <= hook.pending); e = await reader.peek()) {
    reader.take();
    read = e.seq;
    if (passes(filter, e, subjectOf(e.version, e.record)) && entries.push(e) === BATCH) break;
  }
  return { entries, read };
}

/**
 * Delivers the change log to the webhook endpoints, in one process per deployment at a time (a
 * lease in the database): every `everyMs` each endpoint due gets its next batch, signed (Standard
 * Webhooks), at most one delivery in flight per endpoint, so it sees its entries in seq order. A
 * failure is retried on RETRY_SCHEDULE_MS; a 410 or the schedule's end disables the endpoint. An
 * endpoint that does not answer holds only its own deliveries up.
 */
export function deliverWebhooks(options: {
  store: WebhookStore;
  log: ChangeLog;
  served: readonly number[];
  holder: string;
  everyMs: number;
  timeoutMs: number;
  allowPrivate: boolean;
  /** After a failed attempt, how long until the next (default: Standard Webhooks' schedule). */
  retryAfter?: (attempt: number) => number | undefined;
  onError?: (error: Error) => void;
}): { tick(): Promise<void>; stop(): Promise<void>; idle(): Promise<void> } {
  const { store, log } = options;
  const inFlight = new Map<string, Promise<void>>();

  async function deliver(hook: DueWebhook): Promise<unknown> {
    let filter: FeedFilter;
    try {
      filter = filterOf(hook, options.served);
    } catch (error) {
      if (!(error instanceof Problem)) throw error;
      return store.settle(hook, { disabled: `its filters no longer read: ${error.detail}` });
    }
    // Batch after batch while the endpoint takes them and more are logged: a backlog goes out at the
    // speed the endpoint answers, not a batch per tick.
    const reader = new LogReader(log, hook.cursor);
    for (let due = hook; ; ) {
      const { entries, read } = await batchOf(reader, due, filter);
      if (entries.length === 0) {
        if (read > due.cursor) await store.settle(due, { cursor: read });
        return;
      }
      // Pinned again when already pinned: a read of the endpoints due from before another delivery
      // of this batch settled still names it, and the pin's cursor check then sends it no second time.
      if (!(await store.pin(due, due.pending ?? read))) return;
      const outcome = await attempt(due, entries);
      if (!outcome.delivered) return store.settle(due, { ...outcome.failed, pending: read });
      if (!(await store.settle(due, { cursor: read, delivery: outcome.delivery })) || entries.length < BATCH) return;
      due = { ...due, cursor: read, pending: null, attempt: 0 };
    }
  }

  /** Sends `entries` to the endpoint once: delivered, or how the failure settles (a retry, or disabled). */
  async function attempt(hook: DueWebhook, entries: FeedEntry[]) {
    const [first, last] = [entries[0]!.seq, entries[entries.length - 1]!.seq];
    const id = `msg_${hook.id}_${first}_${last}`;
    const body = deliveryBody(entries);
    const headers = webhookHeaders(hook.secrets, id, Math.floor(Date.now() / 1000), body);
    const { timeoutMs, allowPrivate } = options;
    const sent = await postWebhook({ url: hook.url, headers, body, timeoutMs, allowPrivate });
    const delivery = {
      id,
      webhookId: hook.id,
      firstSeq: first,
      lastSeq: last,
      entries: entries.length,
      attempt: hook.attempt + 1,
      status: sent.status ?? null,
      error: sent.error ?? null,
      ms: sent.ms,
    };
    if (delivered(sent)) return { delivered: true as const, delivery };
    if (sent.status === 410)
      return { delivered: false as const, failed: { disabled: "the endpoint answered 410 Gone", delivery } };
    const wait = (options.retryAfter ?? retryAfter)(hook.attempt + 1);
    if (wait === undefined)
      return {
        delivered: false as const,
        failed: { disabled: `no delivery taken in ${hook.attempt + 1} attempts`, delivery },
      };
    return { delivered: false as const, failed: { retryAt: new Date(Date.now() + wait), delivery } };
  }

  const failed = (error: Error) => options.onError?.(error);
  async function tick() {
    // Nothing due is the common case, told by a read: the lease is a write, a commit every tick
    // (on PGlite a WAL flush through the filesystem) for nothing. An endpoint stays due while its
    // delivery is in flight, so the lease is renewed as long as one is.
    if ((await store.due()).length === 0) return;
    if (!(await store.lease(options.holder, LEASE_MS))) return;
    // Read again under the lease: what another deliverer settled before it is not sent twice.
    for (const hook of await store.due()) {
      if (inFlight.has(hook.id)) continue;
      const running = deliver(hook)
        .then(() => {}, failed)
        .finally(() => inFlight.delete(hook.id));
      inFlight.set(hook.id, running);
    }
  }
  let ticking: Promise<void> | undefined;
  const timer = setInterval(() => {
    ticking ??= tick()
      .catch(failed)
      .finally(() => {
        ticking = undefined;
      });
  }, options.everyMs);
  timer.unref();
  return {
    tick,
    /** Stops, lets the deliveries in flight settle, and gives the lease up. */
    stop: async () => {
      clearInterval(timer);
      await ticking;
      await Promise.all(inFlight.values());
      await store.unlease(options.holder);
    },
    /** Settles once every delivery in flight has. */
    idle: async () => {
      await Promise.all(inFlight.values());
    },
  };
}
