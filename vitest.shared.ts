import { defineConfig } from "vitest/config";

/**
 * The settings every package's vitest.config.ts shares: tests live under test/, a JSON report for .ci/run, and one
 * limit for a test or hook that hangs. Tests wait for conditions, never for a time: the limit only ends a hang, so it
 * is far above what a test takes on a busy 2-core machine (turbo runs every package's tests at once; a test that takes
 * 2 s alone took 24 s there), and a test sets its own only to allow more.
 */
export const shared = defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
  },
});
