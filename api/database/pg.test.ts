import { describe, expect, it } from "vitest";
import { databaseUnavailable } from "../http/unavailable";
import { pgAccessDb } from "./pg";

describe.runIf(process.env.DATABASE_URL)("pgAccessDb on Postgres", () => {
  it("a connection lost inside a transaction fails the transaction, not the process; the pool goes on", async () => {
    const db = pgAccessDb(process.env.DATABASE_URL!);
    const admin = pgAccessDb(process.env.DATABASE_URL!);
    try {
      const lost = db.transaction(async (query) => {
        const { rows } = await query("SELECT pg_backend_pid() AS pid");
        await admin.query("SELECT pg_terminate_backend($1)", [rows[0]!.pid]);
        // The connection's end arrives while no query runs (as between a sync's statements).
        await new Promise((ok) => setTimeout(ok, 300));
        return query("SELECT 1");
      });
      // An error the API answers 503 for, as for any database it cannot reach.
      expect(
        databaseUnavailable(
          await lost.then(
            () => undefined,
            (error: unknown) => error,
          ),
        ),
      ).toBe(true);
      expect((await db.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    } finally {
      await Promise.all([db.close(), admin.close()]);
    }
  });
});
