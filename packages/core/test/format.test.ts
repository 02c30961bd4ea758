import { describe, expect, it } from "vitest";
import { durationMs, formatBytes, formatDuration, formatSpan } from "../src/format.ts";

describe("format", () => {
  it("says durations the way an operator reads them", () => {
    expect(formatDuration(450)).toBe("450 ms");
    expect(formatDuration(1234)).toBe("1.2 s");
    expect(formatDuration(90_000)).toBe("1 min 30 s");
    expect(formatDuration(2 * 3_600_000 + 5 * 60_000)).toBe("2 h 5 min");
  });

  it("says a message's spans in round words, without a trailing zero unit", () => {
    expect(formatSpan(400)).toBe("1 s");
    expect(formatSpan(3000)).toBe("3 s");
    expect(formatSpan(10 * 60_000)).toBe("10 min");
    expect(formatSpan(10 * 60_000 + 30_000)).toBe("10 min 30 s");
    expect(formatSpan(3_600_000)).toBe("1 h");
    expect(formatSpan(90 * 60_000)).toBe("1 h 30 min");
  });

  it("reads durations and says sizes", () => {
    expect(durationMs("1m30s")).toBe(90_000);
    expect(durationMs("14d")).toBe(14 * 86_400_000);
    expect(durationMs("1d12h")).toBe(36 * 3_600_000);
    expect(durationMs("ten")).toBeUndefined();
    expect(formatBytes(1536)).toBe("1.50 KiB");
  });
});
