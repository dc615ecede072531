/**
 * The change feed through crashes. Seeded random writes of every event kind of both registries,
 * and reorganizations 1 to 5 blocks deep, arrive while the processes that write, serve and deliver
 * the log are killed (kill -9) at random moments and started again: npm start (the indexer, its
 * API and its webhook deliverer) and, on Postgres, an API replica (npm run serve) streaming the log
 * and a deliverer apart (npm run deliver), which shares the deliveries through its lease.
 *
 * Its consumers each end with the log: streams resuming with Last-Event-ID on every server, the
 * pull pages, and a webhook endpoint verifying each delivery's signature with the Standard Webhooks
 * library (at least once: a delivery repeated after a crash is the same). No seq missing, none out
 * of order, each retraction once and after what it retracts; the finalized stream holds the live
 * entries and no retraction. The live entries are the registries' events on the chain; the
 * delegations of both versions rebuilt from them are the REST listings at the head and the
 * contract's views.
 *
 * Reproduce a failure with the seed it prints: SEED=<n> npx vitest run test/feed-crash.test.ts
 */
import { type Address, getAddress, type Hex, toHex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Anvil, revertChain, snapshotChain, startAnvil } from "../devkit/anvil";
import { ask, indexedBlock } from "../devkit/ask";
import { abis, installRegistries } from "../devkit/oracle";
import { Child, waitFor } from "../devkit/processes";
import { chooseSeed, Rng } from "../devkit/random";
import { chainClient, ethCalls, rpc } from "../devkit/rpc";
import { ONE_AT_A_TIME } from "../devkit/send";
import { plainOutput, type Replica, type Service, startReplica, startService } from "../devkit/service";
import type { V1Type } from "../devkit/v1/calls";
import { ponderFinalityDepth } from "../ponder/ponder-0.16.10";
import type { ApiRecord } from "./helpers/compare-listings";
import { eventRecords, normalizeEvent, registryLogs } from "./helpers/event-records";
import {
  type FeedEntry,
  type Follower,
  followFeed,
  liveEntries,
  pullFeed,
  type Receiver,
  subscribeReceiver,
  webhookReceiver,
} from "./helpers/feed";
import { canonical, parseJsonExact } from "./helpers/json";
import { SeededWrites } from "./helpers/seeded-writes";
import { contractRecords, record as v1Record } from "./helpers/v1/listing";
import { Model } from "./helpers/v1/model";
import { type ContractDelegation, expectedRecord } from "./helpers/v2/listing";

const SEED = chooseSeed();
console.log(`[feed-crash] SEED=${SEED} (rerun with SEED=${SEED} npx vitest run test/feed-crash.test.ts)`);
const tag = (text: string) => `[SEED=${SEED}] ${text}`;
const CHAIN_ID = 31337;
const FINALITY = BigInt(ponderFinalityDepth(CHAIN_ID));
const ON_POSTGRES = !!process.env.DATABASE_URL;
/** Rounds of writes, each with a crash at a random moment, most with a reorganization. */
const ROUNDS = 5;
const LIVE = { v2: 12, v1: 8, walletRevokes: 1 };

const rng = {
  writes: new Rng(SEED),
  crash: new Rng((SEED ^ 0x9e3779b9) >>> 0),
  read: new Rng((SEED ^ 0x7f4a7c15) >>> 0),
};
let anvil: Anvil;
let registries: { v1: Address; v2: Address };
let writes: SeededWrites;
let service: Service;
let replica: Replica | undefined;
let deliverer: Child | undefined;
let receiver: Receiver & { secret?: string };
const followers: { what: string; follower: Follower }[] = [];
/** What was killed and when, and each reorganization's depth: the test's story, printed on failure. */
const story: string[] = [];

/** npm run deliver beside npm start, on the service's schemas. */
const startDeliverer = () =>
  new Child("npm", ["run", "--silent", "deliver"], {
    DATABASE_SCHEMA: service.schema,
    ACCESS_SCHEMA: service.accessSchema,
    WEBHOOK_ALLOW_PRIVATE: "true",
  });

/** kill -9 of one process that writes, serves or delivers the log, started again at once. */
async function crash(): Promise<void> {
  const targets = ON_POSTGRES ? (["npm start", "npm run serve", "npm run deliver"] as const) : (["npm start"] as const);
  const target = rng.crash.pick([...targets]);
  story.push(`kill -9 ${target}`);
  if (target === "npm start") {
    await service.kill();
    await service.restart();
  } else if (target === "npm run serve") {
    await replica!.child.stop("SIGKILL");
    replica = await startReplica(service);
  } else {
    await deliverer!.stop("SIGKILL");
    deliverer = startDeliverer();
  }
}

/** Writes of both versions, in the order the round's rng says, a crash at a random moment among them. */
async function round(): Promise<void> {
  const crashAt = rng.crash.int(3);
  const steps = [() => writes.v2(LIVE.v2), () => writes.v1(LIVE.v1, LIVE.walletRevokes), async () => {}];
  for (const [i, step] of steps.entries()) {
    const writing = step();
    if (i === crashAt) {
      await new Promise((ok) => setTimeout(ok, rng.crash.int(1_500)));
      await crash();
    }
    await writing;
  }
}

/**
 * Writes on a branch the chain then drops for another: 1 to 5 blocks deep, far above finality. No
 * block is mined but the branch's own until it is dropped (each write in a block of its own, then
 * empty ones to the depth wanted): however long the log takes to hold the branch, the depth stays.
 */
async function reorganization(): Promise<void> {
  const snapshot = await snapshotChain(anvil.url, { blockTime: 0 });
  const wanted = 1n + BigInt(rng.writes.int(5));
  await rpc(anvil.url, "evm_setAutomine", [true]);
  await writes.v2(1 + rng.writes.int(4), ONE_AT_A_TIME);
  await rpc(anvil.url, "evm_setAutomine", [false]);
  const head = await chainClient(anvil.url).getBlockNumber();
  if (head < snapshot.block + wanted) await rpc(anvil.url, "anvil_mine", [toHex(snapshot.block + wanted - head)]);
  const depth = (await chainClient(anvil.url).getBlockNumber()) - snapshot.block;
  story.push(`a branch of blocks ${snapshot.block + 1n} to ${snapshot.block + depth}`);
  // The branch logged before it is dropped, so that the log has entries to retract.
  await waitFor(
    "the dropped branch's writes to be logged",
    // Seq orders the log, not blocks: a tick logs v2's events, then v1's (older blocks, perhaps).
    async () =>
      liveEntries(await pullFeed(get, rng.read)).some((e) => e.version === "v2" && e.blockNumber > snapshot.block) ||
      undefined,
    120_000,
    lately,
  );
  // Mining goes on, every second, from the snapshot's block.
  await revertChain(anvil.url, snapshot);
  writes.forgetAfter(snapshot.block);
  story.push(`reorganization ${depth} deep at block ${snapshot.block}`);
  expect(depth, tag("the reorganization stays well above finality")).toBeLessThan(FINALITY / 2n);
}

/** What the test did and the indexer said lately: a wait's timeout shows them. */
const lately = () => {
  const said = plainOutput(service).split("\n");
  const notable = said.filter((l) => !/Indexed block|Finalized block/.test(l)).map((l) => l.slice(0, 600));
  return `${story.join("; ")}\n${notable.slice(-60).join("\n")}\n${said.slice(-10).join("\n")}`;
};

const get = (path: string) => ask(service.url, path, { headers: service.headers });

/** The registry's events on the chain up to `block`, as the history (and the log) records them. */
async function chainEvents(version: "v1" | "v2", block: bigint): Promise<ApiRecord[]> {
  const logs = await registryLogs(anvil.url, registries[version], 0n, block);
  return eventRecords(anvil.url, version, abis[version], logs, version === "v1" ? writes.revoked() : undefined);
}

/** Whether the entry is the chain's event `r` of `version`. */
const sameEvent = (e: FeedEntry, version: "v1" | "v2", r: ApiRecord) =>
  e.version === version && e.blockNumber === r.blockNumber && e.logIndex === Number(r.logIndex);

beforeAll(async () => {
  anvil = await startAnvil({ chainId: CHAIN_ID });
  registries = await installRegistries(anvil.url);
  writes = await SeededWrites.on(anvil.url, SEED, registries);
  // The log begins where the indexer starts: every write after it is logged. The receiver is on loopback.
  service = await startService({ rpc: { [CHAIN_ID]: anvil.url }, env: { WEBHOOK_ALLOW_PRIVATE: "true" } });
  receiver = await webhookReceiver(rng.read, 0.2);
  await subscribeReceiver(service, receiver);
  const follow = (what: string, base: () => string, query: string) =>
    followers.push({ what, follower: followFeed(base, query, { headers: service.headers, rng: rng.read }) });
  follow("npm start's stream", () => service.url, "?cursor=0");
  if (ON_POSTGRES) {
    replica = await startReplica(service);
    deliverer = startDeliverer();
    follow("npm run serve's stream", () => replica!.url, "?cursor=0");
  }
  follow("the finalized stream", () => replica?.url ?? service.url, `?cursor=0&chainId=${CHAIN_ID}&delivery=finalized`);
}, 300_000);

afterAll(async () => {
  await Promise.all(followers.map(({ follower }) => follower.stop()));
  await receiver?.close();
  await deliverer?.stop();
  await replica?.stop();
  await service?.stop();
  await anvil?.stop();
});

describe("the change feed through kill -9 and reorganizations", () => {
  it("every consumer ends with the log: the chain's events, which rebuild the delegations", async () => {
    const t0 = Date.now();
    for (let r = 0; r < ROUNDS; r++) {
      await round();
      if (rng.writes.chance(0.7)) await reorganization();
    }
    // Past finality: Ponder's final block moves in steps of the depth, so twice it, and every entry is final.
    await rpc(anvil.url, "anvil_mine", [toHex(2n * FINALITY + 2n)]);
    const head = await chainClient(anvil.url).getBlockNumber();
    console.log(`[feed-crash] ${ROUNDS} rounds in ${Date.now() - t0} ms: ${story.join("; ")}`);
    const told = tag(story.join("; "));
    await waitFor(
      "the indexer at the head",
      async () =>
        ((await indexedBlock({ serviceUrl: service.url, chainId: CHAIN_ID, headers: service.headers })) ?? 0n) >=
          head || undefined,
      120_000,
      lately,
    );
    const events = { v2: await chainEvents("v2", head), v1: await chainEvents("v1", head) };
    expect(events.v2.length + events.v1.length, told).toBeGreaterThan(0);
    let entries: FeedEntry[] = [];
    await waitFor(
      "the change log to hold the chain's last events",
      async () => {
        entries = await pullFeed(get, rng.read);
        const live = liveEntries(entries);
        const caughtUp = (["v2", "v1"] as const).every((v) => live.some((e) => sameEvent(e, v, events[v].at(-1)!)));
        return caughtUp || undefined;
      },
      120_000,
      lately,
    );
    const newest = entries.at(-1)!.seq;
    const live = liveEntries(entries);

    // The pull pages: seq grows; each retraction once, after what it retracts, with its event.
    const seqs = entries.map((e) => e.seq);
    expect(seqs, told).toEqual([...seqs].sort((a, b) => (a < b ? -1 : 1)));
    expect(new Set(seqs).size, told).toBe(seqs.length);
    const bySeq = new Map(entries.map((e) => [e.seq, e]));
    const retractions = entries.filter((e) => e.retracts !== null);
    expect(new Set(retractions.map((e) => e.retracts)).size, tag("each entry retracted once")).toBe(retractions.length);
    for (const r of retractions) {
      const original = bySeq.get(r.retracts!);
      expect(original && original.seq < r.seq && canonical(original.event) === canonical(r.event), told).toBe(true);
    }
    if (story.some((s) => s.startsWith("reorganization")))
      expect(retractions.length, tag("the reorganizations retracted entries")).toBeGreaterThan(0);

    // The live entries are the chain's events, in order: none lost, none twice, none of a dropped branch.
    for (const version of ["v2", "v1"] as const) {
      const got = live.filter((e) => e.version === version).map((e) => canonical(normalizeEvent(e.event)));
      const want = events[version].map((r) => canonical(normalizeEvent(r)));
      expect(got, tag(`${version}: the live entries are the chain's events (${story.join("; ")})`)).toEqual(want);
    }

    // Every stream: the pages' entries exactly (instant), or the live ones and no retraction (finalized).
    await waitFor(
      "every consumer to reach the log's newest entry",
      async () =>
        (followers.every(({ what, follower }) =>
          what.includes("finalized")
            ? follower.entries.length >= live.length
            : (follower.entries.at(-1)?.seq ?? -1n) >= newest,
        ) &&
          receiver.entries.some((e) => e.seq === newest)) ||
        undefined,
      120_000,
      lately,
    );
    for (const { what, follower } of followers) {
      const got = await follower.stop();
      expect(follower.faults, tag(`${what}: faults`)).toEqual([]);
      expect(got.ids, tag(`${what}: ids are seqs`)).toEqual(got.entries.map((e) => String(e.seq)));
      if (what.includes("finalized")) {
        expect(
          got.entries.some((e) => e.retracts !== null),
          tag(`${what}: no retraction`),
        ).toBe(false);
        expect(got.entries.slice(0, live.length).map(canonical), tag(what)).toEqual(live.map(canonical));
      } else {
        const upTo = got.entries.filter((e) => e.seq <= newest);
        expect(upTo.map(canonical), tag(`${what}: the pages' entries`)).toEqual(entries.map(canonical));
      }
      console.log(`[feed-crash] ${what}: ${got.entries.length} entries over ${got.connections} connections`);
    }

    // The webhook: every delivery signed; at least once, so a repeat is the same entry; else the pages'.
    expect(receiver.faults, told).toEqual([]);
    const firstOf = new Map<bigint, FeedEntry>();
    const delivered: FeedEntry[] = [];
    for (const e of receiver.entries) {
      const seen = firstOf.get(e.seq);
      if (seen) expect(canonical(e), tag(`a repeated delivery of seq ${e.seq}`)).toBe(canonical(seen));
      else {
        firstOf.set(e.seq, e);
        delivered.push(e);
      }
    }
    const upTo = delivered.filter((e) => e.seq <= newest);
    expect(upTo.map(canonical), tag("the webhook's entries, in seq order, are the pages'")).toEqual(
      entries.map(canonical),
    );
    const again = receiver.entries.length - delivered.length;
    console.log(
      `[feed-crash] webhook: ${receiver.entries.length} entries delivered (${again} again), ` +
        `${receiver.refused.size} deliveries refused once`,
    );

    // The v2 delegations rebuilt from the live entries: the REST listing at the head, and the contract's views.
    const rebuilt = new Map<string, ApiRecord>();
    for (const e of live.filter((x) => x.version === "v2")) {
      const r = e.event;
      if (r.enable) rebuilt.set(String(r.hash), delegationOf(r));
      else rebuilt.delete(String(r.hash));
    }
    const at = (await indexedBlock({ serviceUrl: service.url, chainId: CHAIN_ID, headers: service.headers }))!;
    const o = { rpcUrl: anvil.url, registry: registries.v2, abi: abis.v2 };
    for (const wallet of writes.wallets().v2) {
      const want = [...rebuilt.values()].filter((d) => lower(d.from) === wallet || lower(d.to) === wallet);
      const answer = await get(`/registry/v2/${wallet}?chainId=${CHAIN_ID}&blockNumber=${at}`);
      expect(answer.status, answer.text).toBe(200);
      const listed = (parseJsonExact(answer.text) as ApiRecord[]).map(delegationOf);
      const views = (await ethCalls(o, [
        { functionName: "getOutgoingDelegations", args: [wallet], block: at },
        { functionName: "getIncomingDelegations", args: [wallet], block: at },
      ])) as ContractDelegation[][];
      const contract = views.flat().map((d) => delegationOf(expectedRecord(d)));
      const set = (list: ApiRecord[]) => [...new Set(list.map(canonical))].sort();
      expect(set(listed), tag(`v2 listing of ${wallet} at ${at}`)).toEqual(set(want));
      expect(set(contract), tag(`the contract's delegations of ${wallet} at ${at}`)).toEqual(set(want));
    }

    // The v1 delegations likewise, rebuilt by the contract's rule (the test's model of it) from the live v1 entries.
    const v1Events = live.filter((x) => x.version === "v1").map((e) => e.event);
    const model = new Model(new Set());
    for (const e of v1Events) model.applyRecord(e);
    const inForce = model.inForce().map(({ key: k }) => v1Record(k.type, k.vault, k.delegate, k.contract, k.tokenId));
    const revokes = v1Events.filter((e) => String(e.event).startsWith("Revoke")).length;
    console.log(
      `[feed-crash] v1: ${inForce.length} delegations in force after ${v1Events.length} events (${revokes} revokes)`,
    );
    const o1 = { rpcUrl: anvil.url, registry: registries.v1, abi: abis.v1 };
    const failed = (what: string, expected: string, got: string) => expect.fail(tag(`${what}: ${expected}, ${got}`));
    for (const wallet of writes.wallets().v1) {
      const want = inForce.filter((d) => lower(d.vault) === wallet || lower(d.delegate) === wallet);
      const answer = await get(`/registry/v1/${wallet}?chainId=${CHAIN_ID}&blockNumber=${at}`);
      expect(answer.status, answer.text).toBe(200);
      const listed = (parseJsonExact(answer.text) as ApiRecord[]).map(v1DelegationOf);
      const contract = (await contractRecords(o1, wallet, at, failed))!;
      const set = (list: ApiRecord[]) => [...new Set(list.map(canonical))].sort();
      expect(set(listed), tag(`v1 listing of ${wallet} at ${at}`)).toEqual(set(want));
      expect(set(contract), tag(`the v1 contract's delegations of ${wallet} at ${at}`)).toEqual(set(want));
    }
  }, 900_000);
});

const lower = (a: unknown) => String(a).toLowerCase();

/** A v2 delegation's fields, as a listing, an event and the contract name them alike. */
const delegationOf = (r: ApiRecord): ApiRecord => ({
  delegationType: r.delegationType,
  from: getAddress(String(r.from)),
  to: getAddress(String(r.to)),
  contract: r.contract === null ? null : getAddress(String(r.contract)),
  tokenId: r.tokenId === null ? null : BigInt(r.tokenId as bigint),
  rights: String(r.rights).toLowerCase() as Hex,
  amount: r.amount === null ? null : BigInt(r.amount as bigint),
});

/** A v1 listing's record as the contract's views give it (helpers/v1/listing.ts, record). */
const v1DelegationOf = (r: ApiRecord): ApiRecord =>
  v1Record(
    r.type as V1Type,
    r.vault as Address,
    r.delegate as Address,
    r.contract as Address | null,
    r.tokenId === null ? null : BigInt(r.tokenId as bigint),
  );
