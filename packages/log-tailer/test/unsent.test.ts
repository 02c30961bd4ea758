import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Clock } from "@mcops/core/clock";
import { resolvePaths } from "@mcops/core/paths";
import { type DiscordStandIn, startDiscordStandIn, toolEnv, waitUntil } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadSettings } from "../src/settings.ts";
import { runTailer } from "../src/tailer.ts";

/**
 * The tailer's stop against a Discord that does not answer, run in this process with a clock that moves only when the
 * test moves it: the time a stop takes is measured on that clock, whatever the machine's load.
 */
let root: string;
let log: string;
let env: NodeJS.ProcessEnv;
const stands: DiscordStandIn[] = [];

const START = Date.parse("2026-03-01T12:00:00Z");
const line = (message: string, level = "INFO") => `[12:00:00] [Server thread/${level}]: ${message}\n`;
const titles = (discord: DiscordStandIn) => discord.messages.map((m) => m.body.embeds[0].title as string);
const toolLog = () => {
  try {
    return readFileSync(join(root, "log", "mc-log-tailer.log"), "utf8");
  } catch {
    return "";
  }
};
const logLines = (level: string) =>
  toolLog()
    .split("\n")
    .filter((l) => l.includes(` ${level} `));
/** The file the README names: `log-tailer-<hash of the log's path>-unsent.json` in the state dir. */
const unsentFile = () =>
  join(root, "state", `log-tailer-${createHash("sha256").update(log).digest("hex").slice(0, 12)}-unsent.json`);
const savedNotices = () => JSON.parse(readFileSync(unsentFile(), "utf8")).notices as Record<string, unknown>[];

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mcops-tailer-unsent-"));
  mkdirSync(join(root, "etc"));
  mkdirSync(join(root, "logs"));
  mkdirSync(join(root, "state"));
  log = join(root, "logs", "latest.log");
  writeFileSync(log, "");
  env = toolEnv(root);
});

afterEach(async () => {
  await Promise.all(stands.splice(0).map((discord) => discord.close()));
  rmSync(root, { recursive: true, force: true });
});

/** A Discord stand-in that webhook.env points at; `unreachable`: it drops every post (the connection cut). */
async function discordAt(options: { unreachable?: boolean } = {}): Promise<DiscordStandIn> {
  const discord = await startDiscordStandIn();
  stands.push(discord);
  if (options.unreachable) discord.inject({ kind: "drop", times: 10_000 });
  writeFileSync(join(root, "etc", "webhook.env"), `WEBHOOK_URL=${discord.webhookUrl()}\n`, { mode: 0o600 });
  return discord;
}

/** Time that moves only when the test moves it: to the next time the tailer (or its notifier) waits for. */
function steppedClock(start: number) {
  let now = start;
  const timers: Array<{ at: number; fire: () => void }> = [];
  const clock: Clock = {
    now: () => now,
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const timer = { at: now + Math.max(0, ms), fire: resolve };
        timers.push(timer);
        signal?.addEventListener(
          "abort",
          () => {
            const index = timers.indexOf(timer);
            if (index >= 0) timers.splice(index, 1);
            reject(signal.reason);
          },
          { once: true },
        );
      }),
  };
  return {
    clock,
    get waiting() {
      return timers.length;
    },
    /** On to the next timer, firing every timer due by then. */
    next() {
      now = Math.max(now, Math.min(...timers.map((t) => t.at)));
      for (const timer of timers.filter((t) => t.at <= now)) {
        timers.splice(timers.indexOf(timer), 1);
        timer.fire();
      }
    },
  };
}

/** The service in this process, as runTool runs it; `stop` sends it SIGTERM and moves its clock until it is done. */
function startTailer() {
  const stepped = steppedClock(START);
  const abort = new AbortController();
  const ctx = {
    paths: resolvePaths(env),
    env,
    clock: stepped.clock,
    stderr: { write: () => true },
    signal: abort.signal,
  };
  let endedAt: number | undefined;
  const running = runTailer(ctx, { file: log }, loadSettings(ctx, { file: log })).finally(() => {
    endedAt = stepped.clock.now();
  });
  return {
    async stop(): Promise<{ code: number; tookMs: number }> {
      const from = stepped.clock.now();
      abort.abort("SIGTERM");
      for (;;) {
        // What the signal or the last timer set going (promise callbacks, never real time) runs before the clock
        // moves again.
        await new Promise((resolve) => setImmediate(resolve));
        await waitUntil(
          () => endedAt !== undefined || stepped.waiting > 0,
          "the tailer to stop or to wait for its clock",
        );
        if (endedAt !== undefined) break;
        stepped.next();
      }
      return { code: await running, tookMs: endedAt - from };
    },
  };
}

/** Waits until `count` messages have gone out: Discord's answer read, so a stop has nothing left to post. */
const sent = (count: number) =>
  waitUntil(
    () => logLines("INFO").filter((l) => / notification ".*" sent$/.test(l)).length >= count,
    `${count} message(s) sent`,
    10_000,
  );

/** Waits until the tailer follows the log, so that what the test appends is read as new lines. */
const following = () => waitUntil(() => toolLog().includes("INFO following "), "the tailer to follow the log", 10_000);

/** Three events posted while Discord drops every post; the stop comes while the first is being tried again. */
async function stopWhileUnreachable() {
  const discord = await discordAt({ unreachable: true });
  const tailer = startTailer();
  await following();
  appendFileSync(
    log,
    line('Done (3.5s)! For help, type "help"') + line("Steve joined the game") + line("Alex joined the game"),
  );
  await waitUntil(() => discord.requests.length > 0, "the first post to be tried", 10_000);
  const stopped = await tailer.stop();
  // What the abandoned post still tries goes nowhere from here on.
  await discord.close();
  return { discord, stopped };
}

describe("log-tailer: a stop while Discord does not answer", () => {
  it("ends once its 10 s for posts are spent, saving each message left with one WARN line", async () => {
    const { discord, stopped } = await stopWhileUnreachable();
    expect(stopped.code).toBe(0);
    // The notifier alone would try each message for 15 s (1 + 2 + 4 + 8 s between its 5 tries).
    expect(stopped.tookMs).toBeLessThanOrEqual(10_000);
    expect(discord.messages).toHaveLength(0);
    expect(savedNotices()).toEqual([
      {
        title: "Server started",
        description: "Ready after 3.5 s",
        colour: 5763719,
        category: "start",
        fromGame: true,
        time: START,
      },
      { title: "Steve joined the game", colour: 5763719, category: "join", fromGame: true, time: START },
      { title: "Alex joined the game", colour: 5763719, category: "join", fromGame: true, time: START },
    ]);
    const notSent = logLines("WARN").filter((l) => l.includes(" not sent: "));
    expect(notSent).toHaveLength(3);
    expect(notSent.map((l) => /notification "(.*)" not sent: /.exec(l)?.[1])).toEqual([
      "Server started",
      "Steve joined the game",
      "Alex joined the game",
    ]);
    expect(notSent[0]).toContain(
      `WARN notification "Server started" not sent: the service stopped before Discord took it (a stop waits 10 s for its posts) — saved in ${unsentFile()}: it is posted at the next start`,
    );
    // (The abandoned post may still say something after it here; the real service has exited by then.)
    expect(toolLog()).toContain(" INFO stopped\n");
  });

  it("posts the messages a stop left at the next start, first, in order and once", async () => {
    await stopWhileUnreachable();
    appendFileSync(log, line("Steve left the game"));
    const discord = await discordAt();
    const tailer = startTailer();
    const messages = await discord.waitForMessages(4, 10_000);
    await sent(4);
    await waitUntil(() => !existsSync(unsentFile()), "the file of unsent messages to go", 10_000);
    expect((await tailer.stop()).code).toBe(0);
    expect(titles(discord)).toEqual([
      "Server started",
      "Steve joined the game",
      "Alex joined the game",
      "Steve left the game",
    ]);
    // Shown at the time they happened, not when they finally went out.
    expect(messages[0]?.body.embeds[0]).toMatchObject({ description: "Ready after 3.5 s", color: 5763719 });
    expect(messages[1]?.body.embeds[0].timestamp).toBe(new Date(START).toISOString());
    expect(logLines("INFO").filter((l) => / notification ".*" sent$/.test(l))).toHaveLength(4);
    expect(toolLog()).toContain("INFO posting the 3 message(s) the last stop left unsent");

    // Restarted again: nothing is posted twice.
    const again = startTailer();
    await following();
    appendFileSync(log, line("Alex left the game"));
    await discord.waitForMessages(5, 10_000);
    await sent(5);
    expect((await again.stop()).code).toBe(0);
    expect(titles(discord).slice(4)).toEqual(["Alex left the game"]);
  });

  it("keeps the newest 50 with a line saying how many were dropped, each cut as an embed is", async () => {
    // 50 left by an earlier stop, then a crash with an exception line far longer than an embed's description.
    const earlier = Array.from({ length: 50 }, (_, i) => ({ title: `Earlier ${i + 1}`, time: START - 1000 }));
    writeFileSync(unsentFile(), JSON.stringify({ notices: earlier }));
    const discord = await discordAt({ unreachable: true });
    const tailer = startTailer();
    await following();
    await waitUntil(() => discord.requests.length > 0, "the first post to be tried", 10_000);
    appendFileSync(
      log,
      line("Encountered an unexpected exception", "ERROR") +
        `java.lang.IllegalStateException: ${"x".repeat(10_000)}\n` +
        line("Steve joined the game"),
    );
    await waitUntil(() => toolLog().includes("INFO join Steve: "), "the lines to be read", 10_000);
    expect((await tailer.stop()).code).toBe(0);
    const saved = savedNotices();
    expect(saved.map((n) => n.title)).toEqual([
      ...earlier.slice(2).map((n) => n.title),
      "Server crashed",
      "Steve joined the game",
    ]);
    const crash = saved[48] as { description: string };
    expect(crash.description).toHaveLength(4096);
    expect(crash.description.endsWith("x…")).toBe(true);
    expect(logLines("WARN").filter((l) => l.includes(" not sent: "))).toHaveLength(52);
    for (const dropped of ["Earlier 1", "Earlier 2"]) {
      expect(toolLog()).toContain(
        `WARN notification "${dropped}" not sent: the service stopped before Discord took it (a stop waits 10 s for its posts) — more than 50 were left: the oldest are dropped`,
      );
    }
    expect(toolLog()).toContain("WARN 2 of the 52 messages the stop left are dropped: at most 50 are kept");
  });
});

describe("log-tailer: a broken file of unsent messages", () => {
  const BROKEN: Array<[string, () => void, RegExp]> = [
    ["not JSON", () => writeFileSync(unsentFile(), '{"notices": [{"title": "Ste'), /\(not JSON\)/],
    [
      "a title longer than an embed's",
      () => writeFileSync(unsentFile(), JSON.stringify({ notices: [{ title: "x".repeat(257), time: START }] })),
      /\(notices\.0\.title: /,
    ],
    [
      "larger than 50 messages can take",
      // Valid JSON with a valid list: only its size gives it away, and it is never read whole.
      () => writeFileSync(unsentFile(), JSON.stringify({ notices: [], pad: "x".repeat(2 * 1024 * 1024) })),
      /\(2\.00 MiB, more than 50 messages take\)/,
    ],
    ["a FIFO", () => execFileSync("mkfifo", [unsentFile()]), /\(not a regular file\)/],
  ];

  it.each(BROKEN)("%s: one WARN line, set aside, and the tailer runs on", async (_what, make, why) => {
    make();
    const discord = await discordAt();
    const tailer = startTailer();
    await following();
    appendFileSync(log, line("Steve joined the game"));
    await sent(1);
    expect((await tailer.stop()).code).toBe(0);
    expect(titles(discord)).toEqual(["Steve joined the game"]);
    expect(logLines("WARN")).toEqual([expect.stringMatching(why)]);
    expect(logLines("WARN")[0]).toContain(`${unsentFile()} is not a list of unsent messages (`);
    expect(logLines("WARN")[0]).toContain(`: set aside as ${unsentFile()}.broken; nothing in it is posted`);
    expect(existsSync(unsentFile())).toBe(false);
    expect(existsSync(`${unsentFile()}.broken`)).toBe(true);
  });
});
