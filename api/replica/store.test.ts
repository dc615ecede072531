/**
 * A replica worker's chain positions: its copy's block, or the database's where the database is
 * further on (another worker, which synced a moment later, may have answered at that block); the
 * copy's when the database does not answer.
 */
import { describe, expect, it, vi } from "vitest";
import type { Query } from "../../core/sql";
import type { Snapshot } from "./feed";
import { createReplicaStore } from "./store";

const CHAIN = 31337;

/**
 * A database whose chain is indexed up to `db.block` with no delegations; every statement but
 * those reading the ready flag and the chain's position finds nothing. `db.down`: it fails;
 * `db.hung`: it never answers.
 */
function database() {
  const db = { block: 10, down: false, hung: false };
  const query: Query = async (text) => {
    if (db.down) throw new Error("connection refused");
    if (db.hung) return new Promise(() => {});
    if (text.includes("AS ready")) return { rows: [{ ready: 1 }] };
    if (text.includes("AS block"))
      return {
        rows: [
          { chain_id: CHAIN, checkpoint: `at ${db.block}`, block: String(db.block), block_timestamp: "0", final: "0" },
        ],
      };
    return { rows: [] };
  };
  const snapshot: Snapshot = (work) => work(query);
  return { db, snapshot };
}

describe("a replica worker's chain positions", () => {
  it("are the database's where further on than the copy; else, or when it fails or hangs, the copy's", async () => {
    const { db, snapshot } = database();
    const store = createReplicaStore(snapshot, "indexer", () => {});
    await store.started;
    // The copy holds block 10 and syncs no more: the database moves on to 12 meanwhile.
    store.stop();
    db.block = 12;
    expect((await store.v2Enabled(CHAIN, []))?.indexedBlock, "a head read is the copy's").toBe(10n);
    expect((await store.chainStates()).get(CHAIN)).toMatchObject({ indexedBlock: 12n, ready: true });
    db.down = true;
    expect((await store.chainStates()).get(CHAIN)).toMatchObject({ indexedBlock: 10n, ready: true });
    db.down = false;
    db.hung = true;
    vi.useFakeTimers();
    try {
      const states = store.chainStates();
      await vi.advanceTimersByTimeAsync(1_000);
      expect((await states).get(CHAIN)).toMatchObject({ indexedBlock: 10n, ready: true });
    } finally {
      vi.useRealTimers();
    }
  });
});
