import { type Clock, systemClock } from "@mcops/core/clock";
import type { Notice } from "@mcops/core/http";
import type { GameEvent } from "@mcops/game-log/game-log";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { BurstThrottle, ErrorDigest } from "../src/messages.ts";

let now = 0;
// The throttles wait with the clock's sleep: the real one's setTimeout, which vi's fake timers run.
const clock: Clock = { now: () => now, sleep: systemClock.sleep };
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

describe("crash messages", () => {
  it("say out of memory in the title when the crash's exception is an OutOfMemoryError", () => {
    const bursts = new BurstThrottle({ clock, send });
    const crash = (exception: string): GameEvent => ({
      ...ev("crash", undefined, "Encountered an unexpected exception"),
      exception,
    });
    bursts.offer(crash("java.lang.OutOfMemoryError: Java heap space"));
    bursts.offer(crash("java.lang.NullPointerException: OutOfMemoryError is not this"));
    expect(sent.map((n) => n.title)).toEqual(["Server crashed: out of memory", "Server crashed"]);
    expect(sent[0]).toMatchObject({ category: "crash", colour: 15548997 });
  });
});

describe("BurstThrottle", () => {
  it("sends up to 10 joins and leaves in 10 s one by one, then one summary per category for the rest of the window", async () => {
    const bursts = new BurstThrottle({ clock, send });
    for (let i = 0; i < 14; i++) bursts.offer(ev(i % 2 ? "leave" : "join", `P${i}`));
    expect(sent).toHaveLength(10);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(sent).toHaveLength(12);
    expect(sent[10]).toMatchObject({ title: "2 joined", description: "2 joined: P10, P12", category: "join" });
    expect(sent[11]).toMatchObject({ title: "2 left", description: "2 left: P11, P13", category: "leave" });
  });

  it("files the joins and the leaves of a burst under their own categories, each with only its own names", async () => {
    const bursts = new BurstThrottle({ clock, send });
    // 12 joins and 3 leaves: 10 go one by one, then 2 joins and 3 leaves are held. More leaves than joins must not
    // carry the joins under `leave` (where webhook.json's `"join": false` would not stop them), nor the reverse.
    for (let i = 1; i <= 10; i++) bursts.offer(ev("join", `Player${i}`));
    for (let i = 1; i <= 3; i++) bursts.offer(ev("leave", `Gone${i}`));
    for (let i = 11; i <= 12; i++) bursts.offer(ev("join", `Player${i}`));
    expect(sent).toHaveLength(10);
    await vi.advanceTimersByTimeAsync(10_000);
    const summaries = sent.slice(10);
    expect(summaries).toHaveLength(2);
    const leave = summaries.find((n) => n.category === "leave");
    const join = summaries.find((n) => n.category === "join");
    expect(leave).toMatchObject({ title: "3 left", description: "3 left: Gone1, Gone2, Gone3" });
    expect(join).toMatchObject({ title: "2 joined", description: "2 joined: Player11, Player12" });
    expect(`${leave?.title} ${leave?.description}`).not.toMatch(/Player|joined/);
    expect(`${join?.title} ${join?.description}`).not.toMatch(/Gone|left/);
  });

  it("sends only the category that has held events, and the death summary under death", async () => {
    const bursts = new BurstThrottle({ clock, send });
    for (let i = 0; i < 12; i++) bursts.offer(ev("join", `P${i}`));
    for (let i = 0; i < 5; i++) bursts.offer(ev("death", `P${i}`, `P${i} drowned`));
    await vi.advanceTimersByTimeAsync(10_000);
    const summaries = sent.filter((n) => !n.title.endsWith(" the game") && !n.title.endsWith(" drowned"));
    expect(summaries).toEqual([
      expect.objectContaining({ title: "2 joined", description: "2 joined: P10, P11", category: "join" }),
      expect.objectContaining({ title: "2 deaths", description: "P3 drowned\nP4 drowned", category: "death" }),
    ]);
  });

  it("sends events one by one again once the storm is over", async () => {
    const bursts = new BurstThrottle({ clock, send });
    for (let i = 0; i < 12; i++) bursts.offer(ev("join", `P${i}`));
    await vi.advanceTimersByTimeAsync(10_000);
    now = 60_000;
    bursts.offer(ev("join", "Late"));
    expect(sent.at(-1)?.title).toBe("Late joined the game");
  });
});

describe("ErrorDigest", () => {
  it("sends at most one message per 10 minutes, summarising what came meanwhile", async () => {
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
    await vi.advanceTimersByTimeAsync(599_000);
    expect(sent).toHaveLength(2);
    expect(sent[1]).toMatchObject({ title: "2 server errors", description: "[12:00:00] second\n[12:00:00] third" });
  });
});
