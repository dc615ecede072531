import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessBackends } from "../database/backends";
import type { AccessDb } from "../database/db";
import { ChainSchemas } from "../store/chain-schemas";
import type { HistoryStore, Position, V2EventRow } from "../store/history-store";
import type { ServedChain } from "../store/served-chains";
import { type ChangeLog, type FeedEntry, openChangeLog } from "./log";
import { writeChangeLog } from "./writer";

const SCHEMA = `feed_writer_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
const CHAIN: ServedChain = { id: 1, name: "one", title: "One", testnet: true, v2: { address: "0x", startBlock: 0 } };

/** A DelegateAll event of block `block` on branch `branch` (its hash). */
const event = (block: number, logIndex: number, branch = "a"): V2EventRow => ({
  hash: `0x${"1".repeat(64)}`,
  blockNumber: BigInt(block),
  blockHash: `0x${branch}${block.toString(16).padStart(63, "0")}`,
  blockTimestamp: BigInt(block * 12),
  transactionHash: `0x${"2".repeat(64)}`,
  logIndex,
  kind: "DelegateAll",
  from: `0x${"3".repeat(40)}`,
  to: `0x${"4".repeat(40)}`,
  contract: null,
  tokenId: null,
  rights: `0x${"0".repeat(64)}`,
  amount: null,
  enable: true,
});

/** The entries' events as `block:logIndex:branch`, each live one once, and the retractions apart. */
function summary(entries: FeedEntry[]) {
  const retracted = new Set(entries.flatMap((e) => (e.retracts === null ? [] : [e.retracts])));
  const name = (e: FeedEntry) => `${e.block}:${e.logIndex}:${e.blockHash.slice(2, 3)}`;
  return {
    live: entries.filter((e) => e.retracts === null && !retracted.has(e.seq)).map(name),
    retracted: entries.filter((e) => e.retracts !== null).map(name),
  };
}

/**
 * The writer over an indexer played by the test: its position (the block its tables are at, the
 * final block) and its events, read as api/store/store.ts's positions and the history store read
 * Ponder's tables. Each change of state is a new `moved`, as a write of the chain_head row is.
 */
describe.each(accessBackends("feed-writer-", SCHEMA))("the change log's writer on %s", (_, open) => {
  let db: AccessDb;
  let dispose: () => Promise<void>;
  let log: ChangeLog;
  let writer: ReturnType<typeof writeChangeLog>;
  const indexer = { block: 0n, final: 0n, events: [] as V2EventRow[], moves: 0 };
  /** The indexer at `block`, with `events` (those of blocks above it are not in its tables). */
  const indexerAt = (block: number, final: number, events: V2EventRow[]) => {
    Object.assign(indexer, { block: BigInt(block), final: BigInt(final), moves: indexer.moves + 1 });
    indexer.events = events.filter((e) => e.blockNumber <= indexer.block);
  };
  const after = (e: V2EventRow, at: Position | undefined) =>
    at === undefined || e.blockNumber > at.block || (e.blockNumber === at.block && e.logIndex > at.logIndex);
  const history = {
    v2Events: async (
      chainId: number,
      _wallet: unknown,
      range: { from: bigint; to: bigint },
      page: { after?: Position },
    ) => ({
      items: indexer.events
        .filter((e) => chainId === CHAIN.id && e.blockNumber >= range.from && e.blockNumber <= range.to)
        .filter((e) => after(e, page.after))
        .map((e) => ({ ...e, position: { block: e.blockNumber, logIndex: e.logIndex } })),
      more: false,
    }),
  } as unknown as HistoryStore;
  const execute = async () => ({
    rows: [
      {
        chain_id: CHAIN.id,
        block: String(indexer.block),
        final: String(indexer.final),
        moved: String(indexer.moves),
        last_event: String(indexer.events.reduce((most, e) => (e.blockNumber > most ? e.blockNumber : most), 0n)),
      },
    ],
  });
  const logged = async () => summary(await log.entries(0n, 1_000));

  beforeAll(async () => {
    ({ db, dispose } = await open());
    log = await openChangeLog(db, SCHEMA);
    writer = writeChangeLog({
      log,
      schemas: ChainSchemas.one(SCHEMA),
      chains: [CHAIN],
      execute,
      history,
      everyMs: 3_600_000,
      retainMs: 3_600_000,
    });
  });
  afterAll(async () => {
    writer?.stop();
    await dispose?.();
  });

  const branchA = [event(6, 0), event(8, 0), event(8, 1), event(10, 0)];

  it("logs the events above the final block once", async () => {
    indexerAt(10, 5, branchA);
    await writer.tick();
    await writer.tick();
    expect(await logged()).toEqual({ live: ["6:0:a", "8:0:a", "8:1:a", "10:0:a"], retracted: [] });
  });

  it("keeps a block's entries while the indexer is below it to index it again unchanged", async () => {
    // Ponder takes its own block 10, seen again as the head, for a reorganization: it reverts it,
    // then indexes it again. Read in between, the tables are at block 9.
    indexerAt(9, 5, branchA);
    await writer.tick();
    expect(await logged()).toEqual({ live: ["6:0:a", "8:0:a", "8:1:a", "10:0:a"], retracted: [] });
    indexerAt(11, 5, [...branchA, event(11, 0)]);
    await writer.tick();
    expect(await logged()).toEqual({ live: ["6:0:a", "8:0:a", "8:1:a", "10:0:a", "11:0:a"], retracted: [] });
  });

  it("retracts them once the indexer has passed their blocks on another branch", async () => {
    const branchB = [event(6, 0), event(8, 0), event(8, 1), event(10, 0, "b")];
    indexerAt(9, 5, branchB);
    await writer.tick();
    expect((await logged()).retracted).toEqual([]);
    indexerAt(10, 5, branchB);
    await writer.tick();
    expect(await logged()).toEqual({ live: ["6:0:a", "8:0:a", "8:1:a", "10:0:b"], retracted: ["11:0:a", "10:0:a"] });
  });

  it("retracts the entries of blocks the indexer passed with none", async () => {
    indexerAt(12, 5, [event(6, 0)]);
    await writer.tick();
    expect(await logged()).toEqual({
      live: ["6:0:a"],
      retracted: ["11:0:a", "10:0:a", "10:0:b", "8:1:a", "8:0:a"],
    });
  });
});
