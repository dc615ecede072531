/**
 * A Ponder killed with kill -9 (an OOM kill, a crash of the host's process group) leaves its schema
 * locked, and the next `ponder start` on it waits until the lock's heartbeat is 25 s old: 15 to 25 s
 * before it even looks at the chain (ponder/ponder-0.16.10.ts, unlockAppSql). On PGlite the
 * database directory is this machine's alone, and a file beside it names the Ponder process that has
 * it open: when that process is gone, its lock is released before the next Ponder starts. On Postgres
 * the schema may be used from another host, which only Ponder's heartbeat can tell: its wait stays.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { noRowsIfMissing } from "../../api/database/db";
import { pgliteAccessDb } from "../../api/database/pglite";
import type { DatabaseSettings } from "../../core/settings";
import { unlockAppSql } from "../../ponder/ponder-0.16.10";

/** The file naming the Ponder process that has the PGlite directory open; undefined on Postgres. */
export const ponderPidFile = (database: DatabaseSettings): string | undefined =>
  database.url ? undefined : `${database.pgliteDir}.ponder-pid`;

/**
 * Whether a process with this id runs (one of another user's too: it is not known to be gone). A
 * zombie does not: a Ponder killed with its launcher waits as one until whoever adopted it reaps it,
 * and in a container whose first process reaps nothing, that is never.
 */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    // /proc/<pid>/stat: "pid (command) state ...", and the command may hold spaces and parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    // Without /proc (not Linux) kill's answer stands; with it, the process ended meanwhile.
    return !existsSync("/proc/self");
  }
}

/** Records `pid` as the Ponder that has the directory open; the returned function forgets it (it exited). */
export function recordPonder(database: DatabaseSettings, pid: number | undefined): () => void {
  const file = ponderPidFile(database);
  if (file === undefined || pid === undefined) return () => {};
  try {
    // Ponder makes the directory (.ponder/ in a fresh clone) only once it opens it.
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${pid}\n`);
  } catch (error) {
    // Unrecorded, a killed Ponder's lock is only waited for, as Ponder itself does.
    console.warn(`Cannot record the indexer's pid in ${file} (${(error as Error).message}).`);
  }
  return () => rmSync(file, { force: true });
}

/**
 * Unlocks `schema` when the Ponder recorded on its PGlite directory is gone without having exited
 * under the launcher's eyes (the launcher died with it); whether it did.
 */
export async function releaseDeadPonderLock(database: DatabaseSettings, schema: string): Promise<boolean> {
  const file = ponderPidFile(database);
  if (file === undefined) return false;
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(file, "utf8"), 10);
  } catch {
    return false;
  }
  // A pid taken by another process since: it looks alive, and Ponder's own wait applies.
  if (!(pid > 0) || processRuns(pid)) return false;
  const db = await pgliteAccessDb(database.pgliteDir);
  try {
    // A schema Ponder never made has no lock to release.
    const { rows } = await db.query(`${unlockAppSql(schema)} RETURNING key`).catch(noRowsIfMissing);
    rmSync(file, { force: true });
    return rows.length > 0;
  } finally {
    await db.close();
  }
}
