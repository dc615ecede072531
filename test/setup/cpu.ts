/**
 * Each test file's CPU time, for test/reporters/durations.ts: its worker's and that of the processes
 * it started and waited for (anvil, Ponder, replicas, their children). Files run three at once on
 * two cores, so a file's duration is partly its neighbours'; its CPU is what it cost them all.
 * Postgres's backends are the server's children, not the file's: their work is not in it.
 */
import { afterAll, beforeAll } from "vitest";
import { ownTicks, reapedTicks, ticksPerSecond } from "../../bench/procs";

declare module "vitest" {
  interface TaskMeta {
    /** The file's CPU seconds, set once its own hooks are done (this file's afterAll runs last). */
    cpuSeconds?: number;
  }
}

const ticks = () => (ownTicks(process.pid) ?? 0) + (reapedTicks(process.pid) ?? 0);

let before = 0;
beforeAll(() => {
  before = ticks();
});
// biome-ignore lint/correctness/noEmptyPattern: Vitest reads the first parameter's pattern for fixtures (none here)
afterAll(({}, file) => {
  file.meta.cpuSeconds = (ticks() - before) / ticksPerSecond();
});
