import type { Clock, GameEvent, Notice } from "@mcops/core";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { BurstThrottle, ErrorDigest } from "./messages.ts";

let now = 0;
const clock: Clock = { now: () => now, sleep: async () => {} };
const sent: Notice[] = [];
const send = (n: Notice) => sent.push(n);
const ev = (type: GameEvent["type"], player?: string, message = ""): GameEvent => ({
  type,
  player,
  message,
  time: "12:00:00",
  line: 1,
});

beforeEach(() => {
  vi.useFakeTimers();
  now = 0;
  sent.length = 0;
});
afterEach(() => vi.useRealTimers());

describe("BurstThrottle", () => {
  it("sends up to 10 joins and leaves in 10 s one by one, then one summary for the rest of the window", () => {
    const bursts = new BurstThrottle({ clock, send });
    for (let i = 0; i < 14; i++) bursts.offer(ev(i % 2 ? "leave" : "join", `P${i}`));
    expect(sent).toHaveLength(10);
    vi.advanceTimersByTime(10_000);
    expect(sent).toHaveLength(11);
    expect(sent[10]).toMatchObject({ title: "2 joined, 2 left", description: "2 joined: P10, P12\n2 left: P11, P13" });
  });

  it("sends events one by one again once the storm is over", () => {
    const bursts = new BurstThrottle({ clock, send });
    for (let i = 0; i < 12; i++) bursts.offer(ev("join", `P${i}`));
    vi.advanceTimersByTime(10_000);
    now = 60_000;
    bursts.offer(ev("join", "Late"));
    expect(sent.at(-1)?.title).toBe("Late joined the game");
  });
});

describe("ErrorDigest", () => {
  it("sends at most one message per 10 minutes, summarising what came meanwhile", () => {
    const digest = new ErrorDigest(clock, send);
    digest.offer({
      ...ev("error", undefined, "Failed to handle packet"),
      exception: "java.lang.IllegalStateException: x",
    });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ title: "Server error", category: "crash", colour: 15548997 });
    now = 1000;
    digest.offer(ev("error", undefined, "second"));
    digest.offer(ev("error", undefined, "third"));
    expect(sent).toHaveLength(1);
    now = 600_000;
    vi.advanceTimersByTime(599_000);
    expect(sent).toHaveLength(2);
    expect(sent[1]).toMatchObject({ title: "2 server errors", description: "[12:00:00] second\n[12:00:00] third" });
  });
});
