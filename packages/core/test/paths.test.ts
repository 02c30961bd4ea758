import { describe, expect, it } from "vitest";
import { resolvePaths } from "../src/paths.ts";

describe("resolvePaths", () => {
  it("gives docs/contract.md's defaults, each overridden by its MCOPS_* variable", () => {
    expect(resolvePaths({})).toEqual({
      configDir: "/etc/mc-backup",
      logDir: "/var/log",
      stateDir: "/var/lib/mc-tools",
      runDir: "/run/mc-tools",
    });
    expect(resolvePaths({ MCOPS_RUN_DIR: "/run/mc-tools/alpha", MCOPS_RATE_DIR: "/run/mc-tools" })).toMatchObject({
      runDir: "/run/mc-tools/alpha",
      rateDir: "/run/mc-tools",
    });
  });

  it("refuses a relative override in one line", () => {
    expect(() => resolvePaths({ MCOPS_LOG_DIR: "log" })).toThrow(/^MCOPS_LOG_DIR must be an absolute path, got "log"$/);
    expect(() => resolvePaths({ MCOPS_RATE_DIR: "rate" })).toThrow(/^MCOPS_RATE_DIR must be an absolute path/);
  });
});
