import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pgliteAccessDb } from "../../api/database/pglite";
import { table } from "../../core/sql";
import { PONDER_STATE_TABLES } from "../../ponder/ponder-0.16.10";
import { ponderPidFile, processRuns, recordPonder, releaseDeadPonderLock } from "./dead-ponder";

/** The pid of a process that has ended and been reaped. */
async function endedPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""]);
  await new Promise((ok) => child.once("exit", ok));
  return child.pid!;
}

/** A zombie: its parent (sh, which then becomes `sleep`) never reaps it; ended by stopping the parent. */
async function zombie(): Promise<{ pid: number; end(): void }> {
  const parent = spawn("sh", ["-c", "sleep 0.05 & echo $!; exec sleep 30"]);
  const pid = Number(await new Promise<string>((ok) => parent.stdout.once("data", (d) => ok(String(d)))));
  await new Promise((ok) => setTimeout(ok, 500));
  return { pid, end: () => parent.kill("SIGKILL") };
}

describe("processRuns", () => {
  it("is true of a running process, false of one ended or a zombie", async () => {
    expect(processRuns(process.pid)).toBe(true);
    expect(processRuns(await endedPid())).toBe(false);
    const z = await zombie();
    try {
      expect(readFileSync(`/proc/${z.pid}/stat`, "utf8"), "a zombie indeed").toMatch(/\) Z /);
      expect(processRuns(z.pid)).toBe(false);
    } finally {
      z.end();
    }
  });
});

describe("releaseDeadPonderLock, on PGlite", () => {
  const dir = mkdtempSync(join(tmpdir(), "dead-ponder-"));
  const database = { url: undefined, pgliteDir: join(dir, "pglite") };
  const meta = table("app_schema", PONDER_STATE_TABLES.meta);
  /** Ponder's app row as a killed Ponder leaves it (the columns as Ponder makes them). */
  const lockedBy = async (locked: 0 | 1) => {
    const db = await pgliteAccessDb(database.pgliteDir);
    await db.query(`CREATE SCHEMA IF NOT EXISTS app_schema`);
    await db.query(`CREATE TABLE IF NOT EXISTS ${meta} (key text PRIMARY KEY, value jsonb)`);
    await db.query(`DELETE FROM ${meta}`);
    const value = { is_locked: locked, is_dev: 0, heartbeat_at: Date.now(), build_id: "b", is_ready: 1 };
    await db.query(`INSERT INTO ${meta} VALUES ('app', $1)`, [JSON.stringify(value)]);
    await db.close();
  };
  const app = async () => {
    const db = await pgliteAccessDb(database.pgliteDir);
    const { rows } = await db.query(`SELECT value FROM ${meta} WHERE key = 'app'`);
    await db.close();
    return rows[0]!.value as Record<string, unknown>;
  };
  beforeAll(() => lockedBy(1));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("does nothing without a file naming a Ponder, or while the one named runs", async () => {
    expect(await releaseDeadPonderLock(database, "app_schema")).toBe(false);
    const forget = recordPonder(database, process.pid);
    expect(readFileSync(ponderPidFile(database)!, "utf8").trim()).toBe(String(process.pid));
    expect(await releaseDeadPonderLock(database, "app_schema")).toBe(false);
    expect((await app()).is_locked).toBe(1);
    forget();
    expect(existsSync(ponderPidFile(database)!)).toBe(false);
  });

  it("records a Ponder in a directory not made yet (.ponder/ in a fresh clone)", () => {
    const fresh = { url: undefined, pgliteDir: join(dir, "not-yet", "pglite") };
    const forget = recordPonder(fresh, process.pid);
    expect(readFileSync(ponderPidFile(fresh)!, "utf8").trim()).toBe(String(process.pid));
    forget();
  });

  it("unlocks the schema of a Ponder that is gone, and only that schema's app row's lock", async () => {
    recordPonder(database, await endedPid());
    expect(await releaseDeadPonderLock(database, "another_schema"), "a schema never made").toBe(false);
    expect(existsSync(ponderPidFile(database)!), "the file is spent either way").toBe(false);
    expect((await app()).is_locked).toBe(1);

    recordPonder(database, await endedPid());
    expect(await releaseDeadPonderLock(database, "app_schema")).toBe(true);
    const after = await app();
    expect(after).toMatchObject({ is_locked: 0, is_dev: 0, build_id: "b", is_ready: 1 });
    expect(existsSync(ponderPidFile(database)!)).toBe(false);

    // An app already unlocked (Ponder stopped cleanly): nothing to release.
    writeFileSync(ponderPidFile(database)!, `${await endedPid()}\n`);
    expect(await releaseDeadPonderLock(database, "app_schema")).toBe(false);
  });

  it("leaves Postgres alone: another host may hold the schema", async () => {
    const postgres = { url: "postgres://nobody@127.0.0.1:1/none", pgliteDir: database.pgliteDir };
    expect(ponderPidFile(postgres)).toBeUndefined();
    recordPonder(postgres, await endedPid());
    expect(await releaseDeadPonderLock(postgres, "app_schema")).toBe(false);
  });
});
