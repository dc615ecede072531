/**
 * npm run deliver: the webhook deliverer in a process of its own, beside `npm start` on Postgres
 * (say, on a host whose network may reach the endpoints). The indexer's process delivers too: a
 * lease in the database lets one of them deliver at a time, the other waits for it to lapse.
 *
 * It reads what `npm run serve` reads: DATABASE_URL (ACCESS_DATABASE_URL, where the keys, the change
 * log and the endpoints are), DATABASE_SCHEMA, ACCESS_SCHEMA, WEBHOOK_ALLOW_PRIVATE.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { pgAccessDb } from "../api/database/pg";
import { openChangeLog } from "../api/feed/log";
import { publishedChains } from "../api/store/served-chains";
import { DELIVER_EVERY_MS, deliverWebhooks, WEBHOOK_TIMEOUT_MS } from "../api/webhooks/deliverer";
import { openWebhookStore } from "../api/webhooks/store";
import { serveSettings, settingsOrExit } from "../core/settings";

const settings = settingsOrExit(() => serveSettings(process.env));
const { accessUrl } = settings.database;
const { schema } = settings.access;
const chains = await publishedChains(accessUrl, schema, settings.schema);
const db = pgAccessDb(accessUrl, { applicationName: "delegation-lookup deliver", max: 4 });
const log = await openChangeLog(db, schema);
let reported = "";
const deliverer = deliverWebhooks({
  store: await openWebhookStore(db, schema),
  log,
  served: chains.map((c) => c.id),
  holder: `${hostname()} ${process.pid} ${randomUUID()}`,
  everyMs: DELIVER_EVERY_MS,
  timeoutMs: WEBHOOK_TIMEOUT_MS,
  allowPrivate: settings.access.webhookAllowPrivate,
  onError: (error) => {
    if (error.message !== reported) console.error(`Webhooks could not be delivered: ${error.message}`);
    reported = error.message;
  },
});
console.log(`Delivering webhooks for chains ${chains.map((c) => c.id).join(", ")} (one deliverer at a time)`);

// The deliverer's timer does not hold the process up (it is the indexer's in npm start): this does.
const alive = setInterval(() => {}, 60_000);
const stop = async () => {
  clearInterval(alive);
  await deliverer.stop();
  await db.close();
  process.exit(0);
};
process.once("SIGINT", stop).once("SIGTERM", stop);
