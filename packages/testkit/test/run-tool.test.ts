import { afterEach, describe, expect, it, vi } from "vitest";
import { runTool } from "../src/http.ts";

/** A child that says which JOURNAL_STREAM it got. */
const sayJournal = ["-e", "process.stdout.write(process.env.JOURNAL_STREAM ?? 'unset')"];

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("runTool", () => {
  it("does not pass on the JOURNAL_STREAM the test runner inherited from a systemd unit", async () => {
    vi.stubEnv("JOURNAL_STREAM", "8:4242");
    const run = await runTool(process.execPath, sayJournal, { env: { ...process.env } });
    expect(run.stdout).toBe("unset");
  });

  it("passes on a JOURNAL_STREAM the test set itself", async () => {
    vi.stubEnv("JOURNAL_STREAM", "8:4242");
    const run = await runTool(process.execPath, sayJournal, { env: { ...process.env, JOURNAL_STREAM: "9:17" } });
    expect(run.stdout).toBe("9:17");
    vi.stubEnv("JOURNAL_STREAM", undefined);
    const unstarted = await runTool(process.execPath, sayJournal, { env: { JOURNAL_STREAM: "9:17" } });
    expect(unstarted.stdout).toBe("9:17");
  });
});
