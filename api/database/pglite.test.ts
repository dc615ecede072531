import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { afterAll, describe, expect, it } from "vitest";
import { pgliteMayHoldTables } from "./pglite";

describe("pgliteMayHoldTables", () => {
  const root = mkdtempSync(join(tmpdir(), "pglite-tables-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("is false for a directory PGlite made and nobody wrote, true once a table is made", async () => {
    const dir = join(root, "db");
    await (await PGlite.create(dir)).close();
    expect(pgliteMayHoldTables(dir)).toBe(false);
    const db = await PGlite.create(dir);
    await db.exec("CREATE SCHEMA other; CREATE TABLE other.t (n int)");
    await db.close();
    expect(pgliteMayHoldTables(dir)).toBe(true);
  });

  it("is false where nothing is, and true for a directory it cannot read as a database", () => {
    expect(pgliteMayHoldTables(join(root, "missing"))).toBe(false);
    const odd = join(root, "odd");
    mkdirSync(odd);
    expect(pgliteMayHoldTables(odd)).toBe(true);
  });
});
