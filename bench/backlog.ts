/**
 * A change log's backlog replayed to a webhook endpoint: `o.backlogEntries` entries written to a
 * fresh log on the run's Postgres (v2 events of the shape the indexer logs), an endpoint made with
 * cursor 0, and the deliverer (npm run deliver's and npm start's code, here in process) sending it
 * batch after batch to a receiver on loopback, which answers each as soon as it has read it. The
 * figure: entries per second from the endpoint's creation to the last entry taken.
 */
import { pgAccessDb } from "../api/database/pg";
import { openChangeLog } from "../api/feed/log";
import { DELIVER_EVERY_MS, deliverWebhooks, WEBHOOK_TIMEOUT_MS } from "../api/webhooks/deliverer";
import { openWebhookStore } from "../api/webhooks/store";
import type { Cleanup } from "./cleanup";
import type { BenchOptions } from "./options";
import { loopbackEndpoint } from "./receiver";

export type BacklogFigures = { entries: number; ms: number; deliveries: number; cpuMs: number };

/** A v2 DelegateAll event's record per row `n`, as the history serves it (SQL over generate_series). */
const RECORD_SQL = `format(
  '{"blockNumber":%s,"blockTimestamp":%s,"transactionHash":"0x%s","logIndex":0,"event":"DelegateAll",'
  '"delegationType":"ALL","from":"0x%s","to":"0x%s","contract":null,"tokenId":null,"rights":"0x%s",'
  '"enable":true,"amount":null,"hash":"0x%s"}',
  n, 1700000000 + n, md5(n::text) || md5('t' || n), left(md5('f' || n), 40), left(md5('o' || n), 40),
  repeat('0', 64), md5('h' || n) || md5('k' || n))`;

export async function measureBacklog(
  o: BenchOptions,
  cleanup: Cleanup,
  log: (line: string) => void,
): Promise<BacklogFigures> {
  const db = pgAccessDb(process.env.DATABASE_URL!, { applicationName: "bench backlog", max: 4 });
  cleanup.add("the backlog's pool", () => db.close());
  const schema = `bench_backlog_${process.pid}`;
  const changes = await openChangeLog(db, schema);
  cleanup.add("the backlog's schema", () => db.query(`DROP SCHEMA "${schema}" CASCADE`));
  const t0 = Date.now();
  // In parts: a statement on the pool may take 15 s at most (api/database/pg.ts).
  for (let first = 1; first <= o.backlogEntries; first += 100_000) {
    await db.query(
      `INSERT INTO "${schema}".feed_entry (chain_id, version, block, block_hash, log_index, record)
       SELECT 1, 'v2', n, '0x' || md5(n::text) || md5('b' || n), 0, ${RECORD_SQL}
       FROM generate_series($1::bigint, $2::bigint) n`,
      [first, Math.min(first + 99_999, o.backlogEntries)],
    );
  }
  log(`backlog: ${o.backlogEntries.toLocaleString("en")} entries logged in ${Date.now() - t0} ms`);

  let taken = 0;
  let deliveries = 0;
  let done: () => void = () => {};
  const finished = new Promise<void>((ok) => (done = ok));
  // Counted, not parsed: the receiver's work is not the figure.
  const url = await loopbackEndpoint(cleanup, (body) => {
    taken += body.split('"seq":').length - 1;
    deliveries++;
    if (taken >= o.backlogEntries) done();
  });
  const store = await openWebhookStore(db, schema);
  const cpu = process.cpuUsage();
  const started = Date.now();
  await store.create({ owner: null, url, filter: "", cursor: 0n });
  const deliverer = deliverWebhooks({
    store,
    log: changes,
    served: [1],
    holder: "bench",
    everyMs: DELIVER_EVERY_MS,
    timeoutMs: WEBHOOK_TIMEOUT_MS,
    allowPrivate: true,
    onError: (error) => log(`backlog: ${error.message}`),
  });
  cleanup.add("the backlog's deliverer", () => deliverer.stop());
  await finished;
  const ms = Date.now() - started;
  const used = process.cpuUsage(cpu);
  await deliverer.stop();
  const rate = Math.round(o.backlogEntries / (ms / 1000));
  log(`backlog: ${taken.toLocaleString("en")} entries in ${deliveries} deliveries, ${ms} ms (${rate} entries/s)`);
  return { entries: taken, ms, deliveries, cpuMs: (used.user + used.system) / 1000 };
}
