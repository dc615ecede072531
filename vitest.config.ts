import { relative } from "node:path";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The integration files that take longest (two minutes and more on either database, the CI's
 * durations), longest first: where vitest has no durations yet (a fresh clone, as CI's first
 * pass), it starts the largest files first, and these are not the largest: the last of them
 * started late and ran minutes alone beside an idle worker.
 */
const LONGEST = [
  "test/feed-crash.test.ts",
  "test/crash.test.ts",
  "test/snapshots.test.ts",
  "test/history.test.ts",
  "test/rpc-outage.test.ts",
  "test/fuzz.test.ts",
  "test/v1.differential.test.ts",
  "test/replaced-branch.test.ts",
  "test/start.test.ts",
  "test/deep-reorg.test.ts",
  "test/integrators.test.ts",
];

/**
 * Vitest's order (failed first, then the slowest by the last run's durations, unknown files and
 * then the largest first), but an integration file that took under a second last time counts as
 * unknown: the last run skipped it whole (a Postgres-only file after the PGlite pass), and it
 * takes minutes; and with no durations at all, LONGEST first. The workers finish together only if
 * the longest files start first.
 */
class SkippedLastTimeFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const path = (file: TestSpecification) => relative(this.ctx.config.root, file.moduleId);
    const duration = (file: TestSpecification) =>
      this.ctx.cache.getFileTestResults(`${file.project.name}:${path(file)}`)?.duration;
    const skipped = (file: TestSpecification) =>
      file.project.name === "integration" && (duration(file) ?? Number.POSITIVE_INFINITY) < 1_000;
    const sorted = await super.sort(files);
    const first = sorted.findIndex((file) => file.project.name === "integration");
    if (first < 0) return sorted;
    let rest = sorted.slice(first);
    if (rest.every((file) => duration(file) === undefined)) {
      const rank = (file: TestSpecification) => {
        const at = LONGEST.indexOf(path(file));
        return at < 0 ? LONGEST.length : at;
      };
      // A stable sort: the files not listed keep vitest's order.
      rest = [...rest].sort((a, b) => rank(a) - rank(b));
    }
    return [...sorted.slice(0, first), ...rest.filter(skipped), ...rest.filter((file) => !skipped(file))];
  }
}

/**
 * Integration files whose figures are the service's only with the machine to themselves: answers
 * timed against a bound (a dozen chains' indexers on two cores), and the soak (its rate is a share
 * of the maximum it measures; beside another file that maximum fell tenfold, and so few requests
 * left a worker's full collections too far apart for its memory windows). They run alone, last.
 */
const ALONE = ["test/chains-apart.test.ts", "test/soak.test.ts"];

/**
 * The unit test files whose outcome can depend on the database (they open one, on Postgres where
 * DATABASE_URL is set): .ci/run's Postgres pass runs these of the unit tests, and layout.test.ts
 * holds the list to the files that read DATABASE_URL.
 */
export const UNIT_DATABASE = [
  "api/database/pg.test.ts",
  "api/access/keys.test.ts",
  "api/access/sql-limiter.test.ts",
  "api/feed/log.test.ts",
  "api/feed/writer.test.ts",
];

/** The unit project's files: pure rules and the HTTP layer, beside their modules, and test/app/. */
const UNIT = [
  "*.test.ts",
  "core/**/*.test.ts",
  "ponder/**/*.test.ts",
  "api/**/*.test.ts",
  "scripts/**/*.test.ts",
  "devkit/**/*.test.ts",
  "bench/**/*.test.ts",
  // The app in process over stores of the tests' own: no chain.
  "test/app/**/*.test.ts",
];

/** What the unit projects share: seconds each file, beside no chain. */
const UNIT_TEST = {
  // The unit tests first (seconds), then the integration tests.
  sequence: { groupOrder: 0 },
  // Seconds alone, but seeded rounds by the hundred and a PGlite opened in a hook each took over
  // twice vitest's default bounds (5 s, 10 s) beside an integration file's indexer.
  testTimeout: 30_000,
  hookTimeout: 30_000,
  // Vitest's default on two cores is one worker: 173 s for the unit project here, 92 s with three
  // (103 s with two); its files are CPU and module loading, which a second core shares.
  maxWorkers: 3,
  // A worker keeps the modules it loaded for its next file (the time saved: docs/performance.md,
  // "The suite"). What a file leaves behind: fake timers are put back; @hono/node-server's
  // Response stays global once a file has served HTTP (api/access/middleware.test.ts says why
  // that matters).
  isolate: false,
};

/**
 * Four projects: `unit` (UNIT but UNIT_DATABASE: seconds, no chain), `unit-database`
 * (UNIT_DATABASE), `integration` (the rest of test/: each file starts anvil chains and the service)
 * and `alone` (ALONE, one file at a time, last). `npm run test:unit` runs the first two; `npm test`
 * runs all four.
 */
export default defineConfig({
  test: {
    // On Postgres (DATABASE_URL) every file gets a scratch database of its own.
    // And each file's CPU time, beside its duration in the reporter's table.
    setupFiles: ["test/setup/database.ts", "test/setup/leftovers.ts", "test/setup/cpu.ts"],
    reporters: ["default", "./test/reporters/durations.ts"],
    sequence: { sequencer: SkippedLastTimeFirst },
    projects: [
      {
        extends: true,
        test: { name: "unit", ...UNIT_TEST, include: [...UNIT, ...UNIT_DATABASE.map((file) => `!${file}`)] },
      },
      { extends: true, test: { name: "unit-database", ...UNIT_TEST, include: UNIT_DATABASE } },
      {
        extends: true,
        test: {
          name: "integration",
          sequence: { groupOrder: 1 },
          // test/ itself: its subfolders hold the unit project's app tests and the helpers.
          // ALONE by negated globs, not `exclude`: a project's own `exclude` would replace the
          // files `--exclude` leaves out (.ci/run's Postgres pass) rather than add to them.
          include: ["test/*.test.ts", ...ALONE.map((file) => `!${file}`)],
          // Chains and services start here: minutes, not seconds.
          testTimeout: 600_000,
          hookTimeout: 600_000,
          // On PGlite, one empty database directory for every service the run starts, copied for each.
          globalSetup: ["test/setup/pglite-template.ts"],
          // Each file starts its own chain and service and waits on them as much as it works: three
          // at once keep this 2-core machine busiest without starving a file (docs/performance.md,
          // "The suite", has the runs with two, three and four, and four on Postgres).
          maxWorkers: 3,
          // As the unit files' (UNIT_TEST).
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: "alone",
          // After every other file, one at a time: what these time is the service's, not a
          // neighbour's share of the cores.
          sequence: { groupOrder: 2 },
          include: ALONE,
          globalSetup: ["test/setup/pglite-template.ts"],
          testTimeout: 900_000,
          hookTimeout: 600_000,
          maxWorkers: 1,
        },
      },
    ],
  },
});
