import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["core/**/*.test.ts", "api/**/*.test.ts", "test/**/*.test.ts"],
    setupFiles: ["test/setup/database.ts"],
    testTimeout: 600_000,
    hookTimeout: 600_000,
    // Each integration file starts its own chain and service; two at once fit this machine.
    maxWorkers: 2,
  },
});
