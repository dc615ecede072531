import type { Reporter, TestModule } from "vitest/node";

/** Seconds, one decimal. */
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * Prints every test file's duration at the end of a run, slowest first: CI must stay within its time
 * budget, and this shows where the time goes. A file's duration is its tests' and hooks' (a chain and a
 * service start in `beforeAll`).
 */
export default class DurationsReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const rows = modules
      .map((m) => ({ file: m.relativeModuleId, ms: m.diagnostic().duration, state: m.state() }))
      .sort((a, b) => b.ms - a.ms);
    const total = rows.reduce((sum, r) => sum + r.ms, 0);
    console.log(`\nTest file durations (${rows.length} files, ${seconds(total)} in all, slowest first):`);
    for (const r of rows) console.log(`${seconds(r.ms).padStart(9)}  ${r.state.padEnd(7)}  ${r.file}`);
  }
}
