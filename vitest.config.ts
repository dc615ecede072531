import { defineConfig } from "vitest/config";

/**
 * Two projects: `unit` (pure rules and the HTTP layer, beside their modules, and test/app/, the app
 * in process over the tests' own stores: seconds, no chain) and `integration` (the rest of test/:
 * each file starts anvil chains and the service). `npm run test:unit` runs the
 * first alone; `npm test` runs both.
 */
export default defineConfig({
  test: {
    // On Postgres (DATABASE_URL) every file gets a scratch database of its own.
    setupFiles: ["test/setup/database.ts"],
    reporters: ["default", "./test/reporters/durations.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          // The unit tests first (seconds), then the integration tests.
          sequence: { groupOrder: 0 },
          include: [
            "*.test.ts",
            "core/**/*.test.ts",
            "ponder/**/*.test.ts",
            "api/**/*.test.ts",
            "scripts/**/*.test.ts",
            "devkit/**/*.test.ts",
            // The app in process over stores of the tests' own: no chain.
            "test/app/**/*.test.ts",
          ],
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          sequence: { groupOrder: 1 },
          include: ["test/**/*.test.ts"],
          exclude: ["test/app/**"],
          // Chains and services start here: minutes, not seconds.
          testTimeout: 600_000,
          hookTimeout: 600_000,
          // Each file starts its own chain and service; two at once fit this 2-core machine.
          maxWorkers: 2,
        },
      },
    ],
  },
});
