import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AccessDb } from "../database/db";
import { pgAccessDb } from "../database/pg";
import type { RateLimiter } from "./limit";
import { sqlLimiter } from "./sql-limiter";

const url = process.env.DATABASE_URL;
const SCHEMA = `access_limit_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;

// Postgres only: on PGlite the limit is kept in memory (one process).
describe.runIf(url)("the keyless limit shared through Postgres", () => {
  /** Two pools and two limiters, as two API processes would have. */
  let dbs: AccessDb[] = [];
  let limiters: RateLimiter[] = [];

  beforeAll(async () => {
    dbs = [pgAccessDb(url!), pgAccessDb(url!)];
    limiters = await Promise.all(dbs.map((db) => sqlLimiter(db, SCHEMA)));
  });

  afterAll(async () => {
    for (const limiter of limiters) await limiter.close();
    await dbs[0]?.query(`DROP SCHEMA "${SCHEMA}" CASCADE`);
    for (const db of dbs) await db.close();
  });

  it("of 40 concurrent requests of one client through two processes, exactly 25 pass", async () => {
    const verdicts = await Promise.all(Array.from({ length: 40 }, (_, i) => limiters[i % 2]!.take("198.51.100.7")));
    expect(verdicts.filter((v) => v.allowed).length).toBe(25);
    // Each allowed request saw a different count of the ones before it.
    expect(new Set(verdicts.filter((v) => v.allowed).map((v) => v.remaining)).size).toBe(25);
    for (const v of verdicts.filter((v) => !v.allowed)) {
      expect(v.remaining).toBe(0);
      expect(v.resetMs).toBeGreaterThan(0);
      expect(v.resetMs).toBeLessThanOrEqual(10_000);
    }
  });

  it("refuses a client over its budget from memory, without asking the database again", async () => {
    let asked = 0;
    const counting: AccessDb = {
      ...dbs[0]!,
      transaction: (work) => {
        asked++;
        return dbs[0]!.transaction(work);
      },
    };
    const limiter = await sqlLimiter(counting, SCHEMA);
    const spent = await limiter.charge("198.51.100.9", 30);
    expect(spent).toMatchObject({ allowed: true, remaining: 0 });
    asked = 0;
    for (let i = 0; i < 50; i++) expect((await limiter.take("198.51.100.9")).allowed).toBe(false);
    expect(asked).toBe(0);
    // Another process has no such memory: it asks, and is refused by the shared row.
    expect((await limiters[1]!.take("198.51.100.9")).allowed).toBe(false);
    await limiter.close();
  });

  it("keeps clients apart", async () => {
    expect((await limiters[1]!.take("198.51.100.8")).remaining).toBe(24);
    expect((await limiters[0]!.take("198.51.100.7")).allowed).toBe(false);
  });
});
