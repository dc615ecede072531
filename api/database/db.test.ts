/**
 * The access tables' migration: run by a connection that may create them, skipped without an error
 * by one that may not (an API replica's access role, a read-only server), which uses them as made.
 */
import { PGlite } from "@electric-sql/pglite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type AccessDb, migrate } from "./db";
import { pgliteDb } from "./pglite";

const TABLE = `CREATE TABLE IF NOT EXISTS access.t (id integer PRIMARY KEY)`;

describe("migrate", () => {
  let pglite: PGlite;
  let db: AccessDb;
  beforeEach(async () => {
    pglite = await PGlite.create();
    db = pgliteDb(pglite);
  });
  afterEach(() => db.close());

  /** Whether access.t exists. */
  const made = async () =>
    (await db.query("SELECT to_regclass('access.t') IS NOT NULL AS made")).rows[0]!.made as boolean;

  it("creates the schema and its tables, and runs again without an error", async () => {
    await migrate(db, "access", [TABLE]);
    await migrate(db, "access", [TABLE]);
    expect(await made()).toBe(true);
  });

  it("does nothing in a read-only session (a hot standby, a read-only role)", async () => {
    await db.query("SET default_transaction_read_only = on");
    await migrate(db, "access", [TABLE]);
    await db.query("SET default_transaction_read_only = off");
    expect(await made()).toBe(false);
  });

  it("does nothing as a role that may use the schema but not create in it, whose tables stay usable", async () => {
    await migrate(db, "access", [TABLE]);
    await db.query("CREATE ROLE user_only");
    await db.query("GRANT USAGE ON SCHEMA access TO user_only");
    await db.query("GRANT SELECT, INSERT ON access.t TO user_only");
    await db.query("SET ROLE user_only");
    await migrate(db, "access", [TABLE, "CREATE TABLE IF NOT EXISTS access.u (id integer)"]);
    await db.query("INSERT INTO access.t VALUES (1)");
    await db.query("RESET ROLE");
    expect((await db.query("SELECT to_regclass('access.u') IS NULL AS absent")).rows[0]!.absent).toBe(true);
    expect((await db.query("SELECT count(*)::int AS n FROM access.t")).rows[0]!.n).toBe(1);
  });
});
