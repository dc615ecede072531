import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PGlite } from "@electric-sql/pglite";
import { Webhook as Verifier } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pgliteDb } from "../database/pglite";
import { type ChangeLog, type FeedEvent, openChangeLog } from "../feed/log";
import { BATCH, deliverWebhooks } from "./deliverer";
import { openWebhookStore, type WebhookStore } from "./store";

const CHAIN = 31337;
type Received = { path: string; headers: Record<string, string>; body: string };

let db: PGlite;
let log: ChangeLog;
let store: WebhookStore;
let server: Server;
let base: string;
const received: Received[] = [];
/** Each path's answers, in turn (the last one repeats); "hang": none. */
const script = new Map<string, (number | "hang" | "slow")[]>();

beforeAll(async () => {
  db = new PGlite();
  log = await openChangeLog(pgliteDb(db), "hooks_test");
  store = await openWebhookStore(pgliteDb(db), "hooks_test");
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push({ path: req.url!, headers: req.headers as Record<string, string>, body });
      const answers = script.get(req.url!) ?? [200];
      const answer = answers.length > 1 ? answers.shift()! : answers[0]!;
      if (answer === "slow") setTimeout(() => res.writeHead(200).end(), 150);
      else if (answer !== "hang") res.writeHead(answer).end();
    });
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  server.close();
  await db.close();
});

let block = 0;
/** Appends `count` events of `from` (a wallet's last digit) to the log, a block each. */
async function logEvents(count: number, from = 1): Promise<void> {
  const events: FeedEvent[] = (await log.entries(0n, 100_000))
    .filter((e) => e.retracts === null)
    .map((e) => ({ block: e.block, blockHash: e.blockHash, logIndex: e.logIndex, record: e.record }));
  for (let i = 0; i < count; i++) {
    block++;
    events.push({
      block: BigInt(block),
      blockHash: `0x${block.toString(16).padStart(64, "0")}`,
      logIndex: 0,
      record: JSON.stringify({ event: "DelegateAll", from: `0x${String(from).padStart(40, "0")}`, to: "0x", block }),
    });
  }
  expect(await log.write(CHAIN, "v2", (await log.floor(CHAIN, "v2")) ?? undefined, events, 0n)).toBe(true);
}

const deliverer = (holder = "test", extra: { allowPrivate?: boolean; timeoutMs?: number } = {}) =>
  deliverWebhooks({
    store,
    log,
    served: [CHAIN],
    holder,
    everyMs: 20,
    timeoutMs: extra.timeoutMs ?? 2_000,
    allowPrivate: extra.allowPrivate ?? true,
    // Retries at once, and three at most: the schedule's own waits are tested in send.test.ts.
    retryAfter: (attempt) => (attempt <= 3 ? 0 : undefined),
  });

/** Waits until `done` holds (checked every 20 ms), for at most 5 s. */
async function until(what: string, done: () => boolean | Promise<boolean>) {
  for (const deadline = Date.now() + 5_000; !(await done()); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((ok) => setTimeout(ok, 20));
  }
}

const seqsOf = (r: Received) => (JSON.parse(r.body) as { entries: { seq: number }[] }).entries.map((e) => e.seq);
const at = (path: string) => received.filter((r) => r.path === path);

describe("webhook deliveries", () => {
  it("send every entry its filters let through once, in seq order, in signed batches of at most 100", async () => {
    await logEvents(3);
    const hook = await store.create({
      owner: null,
      url: `${base}/a`,
      filter: `wallet=0x${"0".repeat(39)}2`,
      cursor: 0n,
    });
    const other = await store.create({ owner: null, url: `${base}/all`, filter: "", cursor: 0n });
    const running = deliverer();
    await logEvents(150, 2);
    await logEvents(20, 3);
    const all = await log.entries(0n, 100_000);
    const want = all.filter((e) => e.record.includes(`"0x${"0".repeat(39)}2"`)).map((e) => Number(e.seq));
    await until(
      "the deliveries",
      () => at("/a").flatMap(seqsOf).length >= want.length && at("/all").flatMap(seqsOf).length >= all.length,
    );
    await running.stop();
    expect(at("/a").flatMap(seqsOf)).toEqual(want);
    expect(at("/all").flatMap(seqsOf)).toEqual(all.map((e) => Number(e.seq)));
    expect(Math.max(...received.map((r) => seqsOf(r).length))).toBe(BATCH);
    for (const r of at("/a")) new Verifier(hook.secret).verify(r.body, r.headers);
    for (const r of at("/all")) new Verifier(other.secret).verify(r.body, r.headers);
    expect(() => new Verifier(other.secret).verify(at("/a")[0]!.body, at("/a")[0]!.headers)).toThrow();
    expect((await store.get(hook.id))!.cursor).toBe(all.at(-1)!.seq);
    expect((await store.deliveries(hook.id)).every((d) => d.status === 200)).toBe(true);
    await store.remove(hook.id);
    await store.remove(other.id);
  });

  it("send a backlog batch after batch from one tick, reading on as the endpoint takes them", async () => {
    const cursor = await log.newest();
    await logEvents(1_050);
    const hook = await store.create({ owner: null, url: `${base}/backlog`, filter: "", cursor });
    // One tick, and no other for the next minute.
    const running = deliverWebhooks({ ...deliveryOptions(), holder: "backlog", everyMs: 60_000, allowPrivate: true });
    await running.tick();
    await running.idle();
    await running.stop();
    expect(at("/backlog").map((r) => seqsOf(r).length)).toEqual([...Array(10).fill(BATCH), 50]);
    expect((await store.get(hook.id))!.cursor).toBe(await log.newest());
    await store.remove(hook.id);
  });

  it("after a crash, the next deliverer sends the batch the first had pinned; a pause stops a backlog", async () => {
    const cursor = await log.newest();
    await logEvents(30);
    const hook = await store.create({ owner: null, url: `${base}/pinned`, filter: "", cursor });
    // A deliverer pinned its first 10 entries, then died before it sent them.
    expect(await store.pin(hook, cursor + 10n)).toBe(true);
    const running = deliverWebhooks({ ...deliveryOptions(), holder: "after-crash", allowPrivate: true });
    await until("both deliveries", () => at("/pinned").length >= 2);
    await running.stop();
    expect(at("/pinned").map((r) => seqsOf(r).length)).toEqual([10, 20]);
    expect(at("/pinned")[0]!.headers["webhook-id"]).toBe(`msg_${hook.id}_${cursor + 1n}_${cursor + 10n}`);
    // Paused while a backlog goes out batch after batch: the batch in flight settles, no other follows.
    await logEvents(500);
    script.set("/paused", ["slow"]);
    const paused = await store.create({
      owner: null,
      url: `${base}/paused`,
      filter: "",
      cursor: (await log.newest()) - 500n,
    });
    const again = deliverWebhooks({ ...deliveryOptions(), holder: "pausing", allowPrivate: true });
    await until("the first delivery", () => at("/paused").length >= 1);
    await store.pause(paused.id, true);
    await new Promise((ok) => setTimeout(ok, 600));
    await again.stop();
    expect(at("/paused").length, "of 5 batches, only the one in flight when paused").toBe(1);
    await store.remove(hook.id);
    await store.remove(paused.id);
  });

  it("send a pinned batch once, though a read of the endpoints due from before it was taken comes after", async () => {
    const cursor = await log.newest();
    await logEvents(10);
    const hook = await store.create({ owner: null, url: `${base}/stale`, filter: "", cursor });
    // Pinned, as after a failed attempt: its retry is due.
    expect(await store.pin(hook, cursor + 10n)).toBe(true);
    // A tick's read under the lease (a tick reads twice) answers only once the first tick's delivery
    // settled: on a busy database a read may take that long.
    let release = () => {};
    const held = new Promise<void>((ok) => {
      release = ok;
    });
    let reads = 0;
    const slow: WebhookStore = {
      ...store,
      due: async () => {
        const rows = await store.due();
        if (++reads === 4) await held;
        return rows;
      },
    };
    const running = deliverWebhooks({
      ...deliveryOptions(),
      store: slow,
      holder: "stale",
      everyMs: 60_000,
      allowPrivate: true,
    });
    await running.tick();
    const second = running.tick();
    await until("the second tick's read", () => reads === 4);
    await running.idle();
    release();
    await second;
    await running.idle();
    await running.stop();
    expect(at("/stale").map(seqsOf)).toHaveLength(1);
    expect((await store.get(hook.id))!.cursor).toBe(cursor + 10n);
    await store.remove(hook.id);
  });

  it("retry a failed delivery with the same id and entries; a 410 disables; an endpoint that hangs holds \
up only itself", async () => {
    script.set("/flaky", [500, 500, 200]);
    script.set("/gone", [410]);
    script.set("/hang", ["hang"]);
    const cursor = await log.newest();
    const flaky = await store.create({ owner: null, url: `${base}/flaky`, filter: "", cursor });
    const gone = await store.create({ owner: null, url: `${base}/gone`, filter: "", cursor });
    const hang = await store.create({ owner: null, url: `${base}/hang`, filter: "", cursor });
    const fine = await store.create({ owner: null, url: `${base}/fine`, filter: "", cursor });
    const running = deliverer("test", { timeoutMs: 500 });
    const started = Date.now();
    await logEvents(2);
    await until("the fine endpoint's entries", () => at("/fine").length >= 1);
    expect(Date.now() - started, "not held up by the endpoint that hangs").toBeLessThan(1_000);
    await until("the flaky endpoint to take its delivery", async () => (await store.get(flaky.id))!.cursor > cursor);
    await until("the endpoint gone to be disabled", async () => (await store.get(gone.id))!.disabled !== null);
    const flakyAttempts = at("/flaky");
    expect(flakyAttempts).toHaveLength(3);
    expect(new Set(flakyAttempts.map((r) => r.headers["webhook-id"])).size).toBe(1);
    expect(new Set(flakyAttempts.map((r) => r.body)).size).toBe(1);
    expect((await store.deliveries(flaky.id)).map((d) => d.status)).toEqual([200, 500, 500]);
    expect((await store.get(gone.id))!.disabled).toMatch(/410/);
    await until("the hanging endpoint to be given up", async () => (await store.get(hang.id))!.disabled !== null);
    expect((await store.deliveries(hang.id)).map((d) => d.error)).toEqual(Array(4).fill("no answer in 500 ms"));
    await running.stop();
    for (const h of [flaky, gone, hang, fine]) await store.remove(h.id);
  });

  it("sign with both secrets while one is rotated; one deliverer at a time; no private address unless \
allowed", async () => {
    const hook = await store.create({ owner: null, url: `${base}/rotated`, filter: "", cursor: await log.newest() });
    const rotated = (await store.rotate(hook.id))!;
    const [one, two] = [deliverer("one"), deliverer("two")];
    await logEvents(5);
    await until("the delivery", () => at("/rotated").flatMap(seqsOf).length >= 5);
    await new Promise((ok) => setTimeout(ok, 200));
    await Promise.all([one.stop(), two.stop()]);
    const deliveries = at("/rotated");
    expect(deliveries.flatMap(seqsOf), "each entry once").toHaveLength(5);
    for (const r of deliveries) {
      new Verifier(hook.secret).verify(r.body, r.headers);
      new Verifier(rotated.secret).verify(r.body, r.headers);
    }
    // Loopback refused by a deliverer that does not allow it: the attempt fails, and is retried.
    const guarded = deliverWebhooks({ ...deliveryOptions(), holder: "one", allowPrivate: false });
    const refused = await store.create({ owner: null, url: `${base}/refused`, filter: "", cursor: 0n });
    await until("the refusal", async () => (await store.deliveries(refused.id)).length > 0);
    await guarded.stop();
    expect((await store.deliveries(refused.id))[0]!.error).toMatch(/not a public address/);
    expect(at("/refused")).toHaveLength(0);
  });
});

function deliveryOptions() {
  return { store, log, served: [CHAIN], everyMs: 20, timeoutMs: 1_000, retryAfter: () => 60_000 };
}
