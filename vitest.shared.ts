import { defineConfig } from "vitest/config";

/** The settings every package's vitest.config.ts shares: a JSON report for .ci/run and sane timeouts. */
export const shared = defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
  },
});
