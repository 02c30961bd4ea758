import { defineConfig } from "vitest/config";

/** The settings every package's vitest.config.ts shares: tests live under test/, a JSON report for .ci/run, sane timeouts. */
export const shared = defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
  },
});
