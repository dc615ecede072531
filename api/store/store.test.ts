import { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { table } from "../../core/sql";
import { PONDER_STATE_TABLES, ponderCheckpoint } from "../../ponder/ponder-0.16.10";
import { type Execute, INDEXED_BLOCK_SQL, positionsSql, REVERTED_SQL, StoreBusy, waitingOutLocks } from "./store";

const lockTimeout = () =>
  new Error("query failed", {
    cause: Object.assign(new Error("canceling statement due to lock timeout"), { code: "55P03" }),
  });

/** An Execute failing with `failures` in turn, then answering; counts its calls. */
function flaky(failures: (() => Error)[]): Execute & { calls: number } {
  const execute = Object.assign(
    async () => {
      const failure = failures[execute.calls++];
      if (failure) throw failure();
      return { rows: [{ ok: 1 }] };
    },
    { calls: 0 },
  );
  return execute;
}

describe("waitingOutLocks", () => {
  it("takes a statement again after lock timeouts, however wrapped, until it is answered", async () => {
    const execute = flaky([lockTimeout, lockTimeout, lockTimeout]);
    await expect(waitingOutLocks(execute)(sql`SELECT 1`)).resolves.toEqual({ rows: [{ ok: 1 }] });
    expect(execute.calls).toBe(4);
  });

  it("gives up with StoreBusy (a 503) once the wait is over", async () => {
    const execute = flaky(Array.from({ length: 1_000_000 }, () => lockTimeout));
    await expect(waitingOutLocks(execute, 20)(sql`SELECT 1`)).rejects.toThrow(StoreBusy);
    expect(execute.calls).toBeGreaterThan(1);
  });

  it("passes any other error on at once", async () => {
    const execute = flaky([() => Object.assign(new Error('relation "nope" does not exist'), { code: "42P01" })]);
    await expect(waitingOutLocks(execute)(sql`SELECT 1`)).rejects.toThrow(/does not exist/);
    expect(execute.calls).toBe(1);
  });
});

describe("REVERTED_SQL and INDEXED_BLOCK_SQL", () => {
  const SCHEMA = "app";
  const checkpoint = (block: number) =>
    ponderCheckpoint({
      blockTimestamp: 1_700_000_000 + block,
      chainId: 1,
      blockNumber: block,
      transactionIndex: 0,
      eventType: 5,
      eventIndex: 0,
    });
  const [c, h] = [table(SCHEMA, PONDER_STATE_TABLES.checkpoint), table(SCHEMA, "chain_head")];
  const moveCheckpoint = (block: number) =>
    `UPDATE ${c} SET latest_checkpoint = '${checkpoint(block)}' WHERE chain_id = 1`;
  const position = async (db: PGlite) =>
    (
      await db.query<{ reverted: boolean; block: string; newer: boolean }>(
        `SELECT ${REVERTED_SQL} AS reverted, ${INDEXED_BLOCK_SQL}::text AS block, age(h.xmin) < age(c.xmin) AS newer
         FROM ${positionsSql(SCHEMA)}`,
      )
    ).rows[0];

  // PGlite boots a whole Postgres: seconds, more on a busy machine (its own timeout).
  it("tells a revert (h newer, below the checkpoint) from a block's rows written in a savepoint", async () => {
    const db = await PGlite.create();
    await db.exec(`CREATE SCHEMA ${SCHEMA};
      CREATE TABLE ${c} (chain_name text, chain_id bigint, safe_checkpoint varchar(75),
        latest_checkpoint varchar(75), finalized_checkpoint varchar(75));
      CREATE TABLE ${h} (chain_id integer PRIMARY KEY, last_event_block bigint NOT NULL);
      INSERT INTO ${c} VALUES ('mainnet', 1, '${checkpoint(0)}', '${checkpoint(10)}', '${checkpoint(0)}');
      INSERT INTO ${h} VALUES (1, 10);`);
    await db.exec(moveCheckpoint(11));
    expect(await position(db)).toEqual({ reverted: false, block: "11", newer: false });

    // Block 12 with an event, as Ponder writes it live on Postgres: the transaction's own xid first
    // (its temporary table), the rows in a savepoint, then the checkpoint.
    await db.exec(`BEGIN; CREATE TEMP TABLE live_query_tables (table_name text) ON COMMIT DROP;
      SAVEPOINT flush; UPDATE ${h} SET last_event_block = 12; RELEASE flush;
      ${moveCheckpoint(12)}; COMMIT;`);
    expect(await position(db)).toEqual({ reverted: false, block: "12", newer: true });

    // A reorganization: its revert takes block 12's event back; the checkpoint moves only later.
    await db.exec(`UPDATE ${h} SET last_event_block = 10`);
    expect(await position(db)).toEqual({ reverted: true, block: "10", newer: true });
    await db.exec(moveCheckpoint(11));
    expect(await position(db)).toEqual({ reverted: false, block: "11", newer: false });
    await db.close();
  }, 30_000);
});
