import type { Reporter, TestModule } from "vitest/node";

/** Seconds, one decimal. */
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * Prints every test file's duration at the end of a run, slowest first: CI must stay within its time
 * budget, and this shows where the time goes. A file's duration is its tests' and hooks' (a chain and a
 * service start in `beforeAll`); beside it, the CPU the file took (test/setup/cpu.ts), since files
 * share the cores and a file waiting on its neighbours takes long at little cost.
 */
export default class DurationsReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const rows = modules
      .map((m) => ({
        file: m.relativeModuleId,
        ms: m.diagnostic().duration,
        state: m.state(),
        cpu: m.meta().cpuSeconds,
      }))
      .sort((a, b) => b.ms - a.ms);
    const total = rows.reduce((sum, r) => sum + r.ms, 0);
    const cpu = rows.reduce((sum, r) => sum + (r.cpu ?? 0), 0);
    console.log(
      `\nTest file durations (${rows.length} files, ${seconds(total)} in all, slowest first), and the CPU ` +
        `each took with the processes it started (${cpu.toFixed(1)} CPU-s in all; test/setup/cpu.ts):`,
    );
    for (const r of rows) {
      const used = r.cpu === undefined ? "—" : `${r.cpu.toFixed(1)} CPU-s`;
      console.log(`${seconds(r.ms).padStart(9)}  ${used.padStart(12)}  ${r.state.padEnd(7)}  ${r.file}`);
    }
  }
}
