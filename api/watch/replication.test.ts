import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { NOTHING_INDEXED } from "../store/store";
import { REPLICATION_SQL, trailing, watchReplication, withReplication } from "./replication";

/** A database answering REPLICATION_SQL with `answers` in turn (an Error: the query fails), then the last one. */
function database(answers: ({ standby: boolean; lag: number | null } | Error)[]) {
  const asked: string[] = [];
  return {
    asked,
    query: async (sql: string) => {
      asked.push(sql);
      const answer = answers.length > 1 ? answers.shift()! : answers[0]!;
      if (answer instanceof Error) throw answer;
      return { rows: [answer] };
    },
  };
}

const EVERY_MS = 1_000;

describe("watchReplication", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  /** Watches `db` with REPLICA_BEHIND_SECONDS 30, keeping what it logs. */
  const watch = (db: ReturnType<typeof database>) => {
    const logged: string[] = [];
    const watched = watchReplication(db, 30, { everyMs: EVERY_MS, log: (line) => logged.push(line) });
    return { watched, logged, next: () => vi.advanceTimersByTimeAsync(EVERY_MS) };
  };

  it("holds nothing on a primary, and logs nothing", async () => {
    const db = database([{ standby: false, lag: null }]);
    const { watched, logged, next } = watch(db);
    await next();
    await next();
    expect(db.asked).toEqual([REPLICATION_SQL, REPLICATION_SQL, REPLICATION_SQL]);
    expect(watched.current()).toBeUndefined();
    expect(logged).toEqual([]);
    watched.stop();
  });

  it("holds the lower of a standby's last two readings, and logs going behind and back", async () => {
    const db = database([5, 50, 2, 40, 45, 0].map((lag) => ({ standby: true, lag })));
    const { watched, logged, next } = watch(db);
    const held: (number | undefined)[] = [];
    await vi.advanceTimersByTimeAsync(0);
    for (let reading = 0; reading < 4; reading++) {
      held.push(watched.current()?.lagSeconds);
      if (reading < 3) await next();
    }
    // One reading of 50 s (a write after a quiet spell) is not a standby behind.
    expect(held).toEqual([5, 5, 2, 2]);
    expect(logged).toEqual([]);
    await next();
    expect(watched.current()).toEqual({ lagSeconds: 40, behindAfterSeconds: 30 });
    expect(logged).toEqual(["replica: the standby it reads trails its primary by 40 s (more than 30 s)"]);
    await next();
    expect(watched.current()).toEqual({ lagSeconds: 0, behindAfterSeconds: 30 });
    expect(logged.at(-1)).toBe("replica: the standby has caught up");
    watched.stop();
  });

  it("cannot tell how far a standby that does not answer trails, after two readings", async () => {
    const db = database([{ standby: true, lag: 3 }, new Error("the database is down")]);
    const { watched, logged, next } = watch(db);
    await vi.advanceTimersByTimeAsync(0);
    await next();
    expect(watched.current()).toEqual({ lagSeconds: 3, behindAfterSeconds: 30 });
    await next();
    expect(watched.current()).toEqual({ lagSeconds: undefined, behindAfterSeconds: 30 });
    expect(logged).toEqual([`replica: ${trailing({ lagSeconds: undefined, behindAfterSeconds: 30 })}`]);
    watched.stop();
  });

  it("never holds a negative lag (the primary's clock ahead of this one), and stops asking when stopped", async () => {
    const db = database([{ standby: true, lag: -2 }]);
    const { watched, next } = watch(db);
    await vi.advanceTimersByTimeAsync(0);
    expect(watched.current()).toEqual({ lagSeconds: 0, behindAfterSeconds: 30 });
    watched.stop();
    const asked = db.asked.length;
    await next();
    await next();
    expect(db.asked.length).toBe(asked);
  });
});

describe("trailing", () => {
  it("says by how much a standby trails, or that it cannot tell", () => {
    expect(trailing({ lagSeconds: 41.6, behindAfterSeconds: 30 })).toBe(
      "the standby it reads trails its primary by 42 s (more than 30 s)",
    );
    expect(trailing({ lagSeconds: undefined, behindAfterSeconds: 30 })).toMatch(/cannot tell/);
  });
});

describe("withReplication", () => {
  const position = { indexedBlock: 7n, indexedTimestamp: 100, ready: true };
  const store = {
    ...NOTHING_INDEXED,
    chainStates: async () =>
      new Map([
        [1, position],
        [10, position],
      ]),
  };

  it("adds the standby's replication to every chain's position while one is held", async () => {
    const replication = { lagSeconds: 4, behindAfterSeconds: 30 };
    const watched = withReplication(store, { current: () => replication, stop() {} });
    expect(await watched.chainStates()).toEqual(
      new Map([
        [1, { ...position, replication }],
        [10, { ...position, replication }],
      ]),
    );
  });

  it("leaves the positions as they are on a primary", async () => {
    const watched = withReplication(store, { current: () => undefined, stop() {} });
    expect(await watched.chainStates()).toEqual(
      new Map([
        [1, position],
        [10, position],
      ]),
    );
  });
});
