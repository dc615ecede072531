import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessBackends } from "../database/backends";
import type { AccessDb } from "../database/db";
import { hashKey } from "./key";
import { type KeyStore, openKeyStore } from "./keys";
import { FRESH_MS, REFRESH_MS } from "./valid-keys";

const SCHEMA = `access_unit_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;

/** The key store on PGlite, and on Postgres too when DATABASE_URL is set (in a schema of its own). */
const backends = accessBackends("access-keys-", SCHEMA);

describe.each(backends)("API keys on %s", (_, open) => {
  let db: AccessDb;
  let keys: KeyStore;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ db, dispose } = await open());
    keys = await openKeyStore(db, SCHEMA);
  });

  afterAll(async () => {
    await keys?.close();
    await dispose?.();
  });

  it("creates a random key, shown once, stored only as its hash", async () => {
    const a = await keys.create("app a");
    const b = await keys.create("app b");
    expect(a.key).toMatch(/^dlk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    expect(a.key).not.toBe(b.key);
    expect(a.key.startsWith(`dlk_${a.id}_`)).toBe(true);
    expect(Date.parse(a.createdAt)).toBeGreaterThan(Date.now() - 60_000);
    const { rows } = await db.query(`SELECT k::text AS row FROM "${SCHEMA}".api_key k WHERE id = $1`, [a.id]);
    const secret = a.key.split("_").slice(2).join("_");
    expect(rows[0]!.row).toContain(hashKey(a.key));
    expect(rows[0]!.row).not.toContain(secret);
    expect(JSON.stringify(await keys.list())).not.toContain(secret);
  });

  it("accepts a valid key, refuses anything else, and a revoked key from the next use on", async () => {
    const { id, key } = await keys.create("revoke me");
    expect(await keys.use(key)).toBe(true);
    const last = key.at(-1) === "A" ? "B" : "A";
    for (const bad of [
      "",
      "nonsense",
      key.slice(0, -1),
      key.slice(0, -1) + last,
      key.replace(id, "000000000000"),
      ` ${key}`,
    ]) {
      expect(await keys.use(bad), bad).toBe(false);
    }
    const revoked = await keys.revoke(id);
    expect(revoked).toMatchObject({ id, label: "revoke me" });
    expect(Date.parse(revoked!.revokedAt!)).toBeGreaterThan(0);
    expect(await keys.use(key)).toBe(false);
    // Revoking again changes nothing; an unknown id is not found.
    expect((await keys.revoke(id))!.revokedAt).toBe(revoked!.revokedAt);
    expect(await keys.revoke("ffffffffffff")).toBeUndefined();
  });

  it("checks a key without a database round trip; a revocation in another process holds within 1 s", async () => {
    const reads: string[] = [];
    const counted: AccessDb = {
      ...db,
      query: (text, params) => {
        reads.push(text);
        return db.query(text, params);
      },
    };
    const other = await openKeyStore(counted, SCHEMA);
    try {
      const { id, key } = await keys.create("two processes");
      expect(await other.use(key), "a key made in another process: read from the database").toBe(true);
      await new Promise((r) => setTimeout(r, 2 * REFRESH_MS));
      const before = reads.length;
      for (let i = 0; i < 50; i++) expect(await other.use(key)).toBe(true);
      expect(
        reads.slice(before).filter((q) => q.includes("ANY(")),
        "reads of single keys",
      ).toEqual([]);
      expect(reads.length - before, "at most the copy's own reads meanwhile").toBeLessThanOrEqual(2);

      await keys.revoke(id);
      const revokedAt = Date.now();
      while ((await other.use(key)) && Date.now() - revokedAt < FRESH_MS + 500)
        await new Promise((r) => setTimeout(r, 20));
      const took = Date.now() - revokedAt;
      expect(took, "the other process refuses the key within FRESH_MS").toBeLessThan(FRESH_MS);
      expect(await other.use(key)).toBe(false);
    } finally {
      await other.close();
    }
  });

  it("counts the requests made with each key", async () => {
    const { id, key } = await keys.create("counted");
    for (let i = 0; i < 7; i++) await keys.use(key);
    await keys.use(`${key}x`);
    const listed = (await keys.list()).find((k) => k.id === id);
    expect(listed).toMatchObject({ id, label: "counted", revokedAt: null, recentRequests: 7 });
    const all = await keys.list();
    expect(all.map((k) => k.label)).toEqual(["app a", "app b", "revoke me", "two processes", "counted"]);
  });

  it("vouchesFor tells from this process's copy what useHeld tells, and counts nothing", async () => {
    const { id, key } = await keys.create("vouched");
    const recent = async () => (await keys.list()).find((k) => k.id === id)!.recentRequests;
    for (let i = 0; i < 3; i++) expect(keys.vouchesFor(key)).toBe(true);
    for (const bad of [`${key}x`, "dlk_nope", `dlk_ffffffffffff_${"a".repeat(43)}`, ""])
      expect([keys.vouchesFor(bad), keys.useHeld(bad)], bad).toEqual([false, false]);
    expect(await recent()).toBe(0);
    expect(keys.useHeld(key)).toBe(true);
    expect(await recent()).toBe(1);
    await keys.revoke(id);
    expect([keys.vouchesFor(key), keys.useHeld(key)]).toEqual([false, false]);
  });
});
