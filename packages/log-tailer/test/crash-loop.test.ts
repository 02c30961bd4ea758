import { type Clock, systemClock } from "@mcops/core/clock";
import type { Notice } from "@mcops/core/http";
import type { Logger } from "@mcops/core/log";
import type { GameEvent } from "@mcops/game-log/game-log";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CrashLoop } from "../src/crash-loop.ts";
import { crashLoopSchema } from "../src/settings.ts";

let now = 0;
// The quiet time is waited with the clock's sleep: the real one's setTimeout, which vi's fake timers run.
const clock: Clock = { now: () => now, sleep: systemClock.sleep };
const sent: Notice[] = [];
const lines: string[] = [];
const logger = {
  info: (l: string) => lines.push(`INFO ${l}`),
  warn: (l: string) => lines.push(`WARN ${l}`),
  error: (l: string) => lines.push(`ERROR ${l}`),
} as unknown as Logger;
const crash = (exception: string): GameEvent => ({
  type: "crash",
  message: "Encountered an unexpected exception",
  exception,
  time: "12:00:00",
  line: 1,
});
const minutes = (n: number) => n * 60_000;

beforeEach(() => {
  vi.useFakeTimers();
  now = 0;
  sent.length = 0;
  lines.length = 0;
});
afterEach(() => vi.useRealTimers());

function watch(stop?: () => Promise<void>) {
  return new CrashLoop({
    clock,
    rule: { count: 3, windowMs: minutes(10) },
    logger,
    send: (n) => void Promise.resolve(n).then((x) => sent.push(x)),
    stop,
  });
}

describe("CrashLoop", () => {
  it("lets two crashes post, makes the third one loop message with each exception, and drops the fourth", async () => {
    const loop = watch();
    expect(loop.crashed(crash("java.lang.NullPointerException: a"))).toBe(false);
    now += minutes(4);
    loop.started();
    expect(loop.crashed(crash("java.lang.IllegalStateException: b"))).toBe(false);
    now += minutes(4);
    expect(loop.crashed(crash("java.lang.OutOfMemoryError: Java heap space"))).toBe(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      title: "Crash loop: the server crashed 3 times in 8 min",
      category: "health",
      colour: 15548997,
      description:
        "1. java.lang.NullPointerException: a\n2. java.lang.IllegalStateException: b\n3. java.lang.OutOfMemoryError: Java heap space\nFurther crashes are not posted until it has run for 30 min.",
    });
    now += minutes(1);
    expect(loop.crashed(crash("java.lang.NullPointerException: d"))).toBe(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toHaveLength(1);
    expect(lines).toContain("WARN crash 4 of the crash loop: not posted (java.lang.NullPointerException: d)");
  });

  it("counts only the crashes within the window", () => {
    const loop = watch();
    expect(loop.crashed(crash("a"))).toBe(false);
    now += minutes(6);
    expect(loop.crashed(crash("b"))).toBe(false);
    now += minutes(6); // the first is 12 min old now
    expect(loop.crashed(crash("c"))).toBe(false);
    expect(sent).toEqual([]);
  });

  it("ends the loop once the server has run 30 min after a start: one green message; a crash first keeps it going", async () => {
    const loop = watch();
    for (const e of ["a", "b", "c"]) loop.crashed(crash(e));
    await vi.advanceTimersByTimeAsync(0);
    loop.started();
    await vi.advanceTimersByTimeAsync(minutes(20));
    expect(loop.crashed(crash("d"))).toBe(true); // the quiet time begins again at the next start
    await vi.advanceTimersByTimeAsync(minutes(40));
    expect(sent).toHaveLength(1);
    loop.started();
    loop.stopped(); // a clean stop is not running again
    await vi.advanceTimersByTimeAsync(minutes(40));
    expect(sent).toHaveLength(1);
    loop.started();
    await vi.advanceTimersByTimeAsync(minutes(30));
    expect(sent.map((n) => n.title)).toEqual(["Crash loop: the server crashed 3 times in 1 s", "Crash loop over"]);
    expect(sent[1]).toMatchObject({
      description: "The server has been running again for 30 min, after 4 crashes in the loop.",
      category: "health",
      colour: 5763719,
    });
    await vi.advanceTimersByTimeAsync(minutes(60));
    expect(sent).toHaveLength(2);
    // A new loop needs three new crashes.
    expect(loop.crashed(crash("e"))).toBe(false);
  });

  it("with CRASH_LOOP_STOP stops the server once and says so; a failed stop is said too", async () => {
    const stop = vi.fn(async () => {});
    const loop = watch(stop);
    for (const e of ["a", "b", "c", "d", "e"]) loop.crashed(crash(e));
    await vi.advanceTimersByTimeAsync(0);
    expect(stop).toHaveBeenCalledTimes(1);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.description).toMatch(
      /\nThe server was stopped through the panel so it does not keep corrupting chunks/,
    );

    sent.length = 0;
    const failing = watch(async () => {
      throw new Error("the panel answered 502");
    });
    for (const e of ["a", "b", "c"]) failing.crashed(crash(e));
    await vi.advanceTimersByTimeAsync(0);
    expect(sent[0]?.description).toMatch(
      /\nStopping it through the panel failed \(the panel answered 502\)\. Further crashes/,
    );
  });
});

describe("CRASH_LOOP", () => {
  it("is a count and a window, or off; anything else is refused", () => {
    expect(crashLoopSchema.parse("3/10m")).toEqual({ count: 3, windowMs: minutes(10) });
    expect(crashLoopSchema.parse("5/1h")).toEqual({ count: 5, windowMs: minutes(60) });
    expect(crashLoopSchema.parse("off")).toBeUndefined();
    for (const bad of ["3", "1/10m", "3/0", "3/ten", "101/1h", "3/10m/2", "-3/10m"]) {
      expect(crashLoopSchema.safeParse(bad).success, bad).toBe(false);
    }
  });
});
