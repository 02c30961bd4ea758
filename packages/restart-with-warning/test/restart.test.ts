import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseDuration } from "@mcops/core/format";
import { acquireLock, type Lock } from "@mcops/core/lock";
import { resolvePaths } from "@mcops/core/paths";
import {
  type DiscordStandIn,
  type GameServer,
  type PanelStandIn,
  type PanelStandInOptions,
  startDiscordStandIn,
  startGameServer,
  startPanelStandIn,
  toolEnv,
  type VirtualClock,
  virtualClock,
} from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runRestart, schedule, tellraw } from "../src/restart.ts";
import { loadSettings, type RestartPlan } from "../src/settings.ts";

const T0 = Date.UTC(2026, 10, 21, 4, 55, 0);

let root: string;
let panel: PanelStandIn;
let discord: DiscordStandIn;
let game: GameServer;
let clock: VirtualClock;
/** The panel's transitions are slow on purpose: the virtual clock does not wait for them. */
let slowPanel = false;
let ctx: Parameters<typeof runRestart>[0];
let stderr: string;

/** A run as the command makes it: backup.env's fields read and checked first, then handed to it. */
function restartNow(timing: Omit<RestartPlan, "dryRun" | "settings"> = {}): Promise<number> {
  return runRestart(ctx, { ...timing, settings: loadSettings(ctx) });
}

function writeConfig(name: string, text: string): void {
  const etc = toolEnv(root).MCOPS_CONFIG_DIR as string;
  mkdirSync(etc, { recursive: true });
  writeFileSync(join(etc, name), text);
  chmodSync(join(etc, name), 0o600);
}

/** (Re)starts the panel stand-in with these options and points backup.env at it. */
async function usePanel(options: PanelStandInOptions): Promise<void> {
  await panel?.close();
  // A transition of a second or more is the test's point (a server that does not come back in time): not waited for.
  slowPanel = Math.max(options.timings?.startMs ?? 0, options.timings?.stopMs ?? 0, options.powerDelayMs ?? 0) >= 1000;
  // The tool runs on the virtual clock: the panel's uptimes and resources cache age on the same clock, and its restart
  // takes virtual time too (a process started after the signal is younger than it, however fast the machine).
  panel = await startPanelStandIn({ now: () => clock.now(), advance: (ms) => clock.advance(ms), ...options });
  writeConfig(
    "backup.env",
    `CONTROL_URL=${panel.url}\nCONTROL_KEY=${panel.apiKey}\nSERVER_ID=${panel.server.identifier}\nGAME_ADDRESS=${game.address}\n`,
  );
}

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "mcops-restart-"));
  discord = await startDiscordStandIn();
  game = await startGameServer();
  // Virtual minutes wait for the panel's real 30 ms transitions: the tool's 5-minute wait for the new process never
  // passes before the stand-in restarted, however busy the machine (not for a panel made slow on purpose).
  clock = virtualClock(T0, { settled: () => slowPanel || !panel?.busy() });
  await usePanel({ servers: [{ state: "running" }], timings: { startMs: 30, stopMs: 30 } });
  writeConfig("webhook.env", `WEBHOOK_URL=${discord.webhookUrl()}\n`);
  stderr = "";
  ctx = {
    paths: resolvePaths(toolEnv(root)),
    env: {},
    clock,
    stdout: { write: () => true },
    stderr: { write: (text: string) => (stderr += text) },
  };
});

afterEach(async () => {
  await game.close();
  await panel.close();
  await discord.close();
  rmSync(root, { recursive: true, force: true });
});

const titles = () => discord.messages.map((m) => m.body.embeds[0].title as string);
const restartLog = () => readFileSync(join(root, "log", "mc-restart.log"), "utf8");

describe("restart-with-warning", () => {
  it("warns at 5m, 3m, 2m, 1m, 30s, 10s and each of the last 5 seconds, on time, then restarts", async () => {
    await game.join("Steve");
    expect(await restartNow({ reason: "nightly restart" })).toBe(0);
    const said = panel.commands().map((c) => JSON.parse(c.replace(/^tellraw @a /, ""))[2].text as string);
    expect(said).toEqual(
      [
        "5 minutes",
        "3 minutes",
        "2 minutes",
        "1 minute",
        "30 seconds",
        "10 seconds",
        "5 seconds",
        "4 seconds",
        "3 seconds",
        "2 seconds",
        "1 second",
      ].map((left) => `The server restarts in ${left} (nightly restart).`),
    );
    // When each went out, by the (virtual) clock of the log lines.
    const times = [...restartLog().matchAll(/^(\S+) INFO countdown: (.+) left$/gm)].map((m) => [
      m[1]?.slice(11, 19),
      m[2],
    ]);
    expect(times).toEqual([
      ["04:55:00", "5 minutes"],
      ["04:57:00", "3 minutes"],
      ["04:58:00", "2 minutes"],
      ["04:59:00", "1 minute"],
      ["04:59:30", "30 seconds"],
      ["04:59:50", "10 seconds"],
      ["04:59:55", "5 seconds"],
      ["04:59:56", "4 seconds"],
      ["04:59:57", "3 seconds"],
      ["04:59:58", "2 seconds"],
      ["04:59:59", "1 second"],
    ]);
    expect(restartLog()).toMatch(/^2026-11-21T05:00:00Z INFO sending the restart signal/m);
    expect(panel.signals()).toEqual(["restart"]);
    expect(panel.state()).toBe("running");
    expect(titles()).toEqual(["Scheduled restart warning", "Restart triggered", "Server restarted"]);
    expect(discord.messages.map((m) => m.body.embeds[0].color)).toEqual([16776960, 16776960, 5763719]);
  });

  it("does nothing when the server is offline: one log line, exit 75, no messages", async () => {
    panel.setState("offline");
    expect(await restartNow()).toBe(75);
    expect(restartLog()).toMatch(/INFO the server is offline: nothing to restart\n$/);
    expect(panel.commands()).toEqual([]);
    expect(panel.signals()).toEqual([]);
    expect(discord.requests).toHaveLength(0);
  });

  it("stops counting when the server stops during the countdown, and says so", async () => {
    await game.join("Steve");
    clock.at(150_000, () => panel.setState("offline"));
    expect(await restartNow()).toBe(75);
    expect(panel.signals()).toEqual([]);
    expect(panel.commands()).toHaveLength(2);
    expect(restartLog()).toMatch(/WARN the server stopped during the countdown \(2 minutes left\): not restarting it/);
    expect(titles()).toEqual(["Scheduled restart warning", "Restart cancelled"]);
  });

  it("goes on when a console command fails", async () => {
    await game.join("Steve");
    panel.inject({ kind: "status", status: 500, route: "command", times: 2 });
    expect(await restartNow({ countdownMs: 30_000 })).toBe(0);
    expect(restartLog()).toMatch(/WARN countdown message at 30 seconds failed/);
    expect(panel.signals()).toEqual(["restart"]);
  });

  it("restarts at once, without a countdown, when nobody is online, and says so", async () => {
    expect(await restartNow()).toBe(0);
    expect(panel.commands()).toEqual([]);
    expect(panel.signals()).toEqual(["restart"]);
    expect(restartLog()).toMatch(
      /no players online \(Server List Ping on 127\.0\.0\.1:\d+\): restarting now, without a countdown/,
    );
    expect(discord.messages[0]?.body.embeds[0].description).toBe(
      "The server is restarting (nobody was online, so no countdown).",
    );
  });

  it("sees the new process when the whole restart ended before its first look (a busy machine, a fast server)", async () => {
    // Acted on before the 204, stopped and started again in a millisecond each: done while the tool's first look at
    // the panel is still on its way, before any of its (virtual) time has passed.
    await usePanel({ servers: [{ state: "running" }], timings: { startMs: 1, stopMs: 1 }, powerDelayMs: 0 });
    panel.inject({ kind: "delay", ms: 50, route: "resources", times: 2 });
    expect(await restartNow()).toBe(0);
    expect(panel.signals()).toEqual(["restart"]);
    expect(panel.stateHistory().map((s) => s.state)).toEqual(["running", "stopping", "offline", "starting", "running"]);
    expect(titles()).toEqual(["Restart triggered", "Server restarted"]);
  });

  it("counts down anyway when the Server List Ping gets no answer", async () => {
    await game.close();
    expect(await restartNow({ countdownMs: 10_000 })).toBe(0);
    expect(restartLog()).toMatch(/WARN no answer to the Server List Ping on .*; counting down anyway/);
    expect(panel.commands()).toHaveLength(6);
  });

  it("waits for a running backup to finish before restarting", async () => {
    const backup: Lock = await acquireLock(join(root, "run", "backup.lock"), { tool: "backup" });
    clock.at(10 * 60_000, () => backup.release());
    expect(await restartNow({ countdownMs: 10_000 })).toBe(0);
    expect(restartLog()).toMatch(
      /INFO a backup is already running \(backup, pid \d+, since .*\): waiting for it before restarting/,
    );
    // Nobody is online, so no countdown: the signal follows the backup (released at 05:05:00, looked at every 2 s).
    expect(restartLog()).toMatch(/^2026-11-21T05:05:0[0-2]Z INFO sending the restart signal/m);
    expect(panel.signals()).toEqual(["restart"]);
  });

  it("starts the countdown only once the backup lock is free, and holds the lock through the restart", async () => {
    await game.join("Steve");
    const lockFile = join(root, "run", "backup.lock");
    const backup: Lock = await acquireLock(lockFile, { tool: "backup" });
    const atRelease = { commands: -1, messages: -1 };
    clock.at(10 * 60_000, () => {
      atRelease.commands = panel.commands().length;
      atRelease.messages = discord.messages.length;
      backup.release();
    });
    // The lock as the panel sees each call after the countdown: the signal, and every look the tool takes at the server
    // coming back (at the requests themselves: a fast restart can be seen back before any virtual time passes).
    const afterSignal: Array<{ kind: string; held: boolean }> = [];
    panel.onRequest((call) => {
      if (call.kind === "power" || afterSignal.length > 0)
        afterSignal.push({ kind: call.kind, held: existsSync(lockFile) });
    });
    expect(await restartNow({ countdownMs: 10_000 })).toBe(0);
    expect(atRelease).toEqual({ commands: 0, messages: 0 });
    expect(restartLog()).toMatch(/^2026-11-21T05:05:0[0-2]Z INFO countdown: 10 seconds left$/m);
    expect(restartLog()).toMatch(/^2026-11-21T05:05:1[0-2]Z INFO sending the restart signal/m);
    expect(titles()).toEqual(["Scheduled restart warning", "Restart triggered", "Server restarted"]);
    expect(afterSignal[0]).toEqual({ kind: "power", held: true });
    expect(afterSignal.some((call) => call.kind === "resources")).toBe(true);
    expect(afterSignal.filter((call) => !call.held)).toEqual([]);
    expect(existsSync(lockFile)).toBe(false);
  });

  it("does not say the server restarted before the panel acted on the signal", async () => {
    // A real panel hands the signal to Wings asynchronously: at first it still says "running", about the old process.
    await usePanel({
      servers: [{ state: "running", uptimeMs: 3 * 86_400_000 }],
      timings: { startMs: 30, stopMs: 30 },
      powerDelayMs: 150,
      // Real time, to compare with the time the webhook stand-in received "Server restarted". An hour of virtual polls
      // is more than 700 real sleeps of 1 ms: the panel acts, restarts and its cache expires well inside it.
      now: Date.now,
    });
    expect(await restartNow({ upTimeoutMs: 60 * 60_000 })).toBe(0);
    const history = panel.stateHistory();
    expect(history.map((h) => h.state)).toEqual(["running", "stopping", "offline", "starting", "running"]);
    const restarted = discord.messages.find((m) => m.body.embeds[0].title === "Server restarted");
    expect(restarted?.at).toBeGreaterThanOrEqual(history.at(-1)?.at ?? Number.POSITIVE_INFINITY);
  });

  it("reports a failed restart when the panel accepts the signal but the server never restarts", async () => {
    await usePanel({ servers: [{ state: "running", uptimeMs: 3 * 86_400_000 }], powerDelayMs: 60_000 });
    await expect(restartNow({ upTimeoutMs: 60_000 })).rejects.toMatchObject({ exitCode: 1 });
    expect(panel.signals()).toEqual(["restart"]);
    expect(titles()).toEqual(["Restart triggered", "Restart failed"]);
    expect(discord.messages.at(-1)?.body.embeds[0].color).toBe(15548997);
    expect(restartLog()).toMatch(/ERROR the server is not running again: .*still says it is running/);
  });

  it("reports a failed restart, with a log line, when the server does not come back in time", async () => {
    // Ten virtual minutes are more than a hundred real sleeps of 1 ms: the panel acts on the signal (40 ms) well inside.
    // (The resources cache ages on the virtual clock, see usePanel.)
    await usePanel({
      servers: [{ state: "running", uptimeMs: 3 * 86_400_000 }],
      timings: { startMs: 60_000, stopMs: 30 },
    });
    await expect(restartNow({ upTimeoutMs: 10 * 60_000 })).rejects.toMatchObject({
      exitCode: 1,
      message: expect.stringMatching(/did not come back/),
    });
    expect(titles()).toEqual(["Restart triggered", "Restart failed"]);
    expect(discord.messages.at(-1)?.body.embeds[0]).toMatchObject({
      color: 15548997,
      description: expect.stringMatching(/^The server did not come back: the server did not become running in/),
    });
    expect(restartLog().match(/ ERROR /g)).toHaveLength(1);
    expect(restartLog()).toMatch(/ERROR the server is not running again: the server did not become running in \d+ s/);
  });

  it("logs and posts a failed restart signal, and rethrows it", async () => {
    panel.inject({ kind: "status", status: 500, route: "power" });
    await expect(restartNow()).rejects.toMatchObject({ exitCode: 1, message: /the panel answered 500/ });
    expect(panel.signals()).toEqual([]);
    expect(restartLog()).toMatch(/^\S+ ERROR restart failed: the panel answered 500 HttpException: .* — /m);
    expect(titles()).toEqual(["Restart failed"]);
    expect(discord.messages[0]?.body.embeds[0]).toMatchObject({
      color: 15548997,
      description: expect.stringMatching(/^The restart signal failed: the panel answered 500/),
    });
    // The one-line error on stderr is runMain's (the rethrown error), not a second copy from the log.
    expect(stderr).not.toMatch(/ERROR/);
  });

  it("logs a failed first status request, posts nothing, and rethrows it", async () => {
    panel.inject({ kind: "status", status: 500, route: "resources", times: 4 });
    await expect(restartNow()).rejects.toMatchObject({ exitCode: 1, message: /the panel answered 500/ });
    expect(restartLog()).toMatch(
      /^2026-11-21T04:5\d:\d\dZ ERROR restart failed: the panel answered 500 HttpException/m,
    );
    expect(panel.signals()).toEqual([]);
    expect(discord.requests).toHaveLength(0);
    expect(stderr).toBe("");
  });

  it("skips the restart, exit 75, when the backup is still running after the wait", async () => {
    await game.join("Steve");
    const backup = await acquireLock(join(root, "run", "backup.lock"), { tool: "backup" });
    await expect(restartNow({ countdownMs: 10_000, lockWaitMs: 60_000 })).rejects.toMatchObject({ exitCode: 75 });
    expect(panel.signals()).toEqual([]);
    // The players were never told about a restart that did not happen.
    expect(panel.commands()).toEqual([]);
    expect(titles()).toEqual(["Restart skipped"]);
    expect(restartLog().match(/ ERROR /g)).toHaveLength(1);
    // The one line on stderr is the busy error's (runMain's), not a copy of the log line.
    expect(stderr).not.toMatch(/ERROR/);
    backup.release();
  });

  it("does nothing when the server went offline while it waited for a backup", async () => {
    const backup = await acquireLock(join(root, "run", "backup.lock"), { tool: "backup" });
    clock.at(5 * 60_000, () => panel.setState("offline"));
    clock.at(10 * 60_000, () => backup.release());
    expect(await restartNow({ countdownMs: 10_000 })).toBe(75);
    expect(restartLog()).toMatch(/INFO the server is offline after the backup: nothing to restart\n$/);
    expect(panel.signals()).toEqual([]);
    expect(discord.requests).toHaveLength(0);
    expect(existsSync(join(root, "run", "backup.lock"))).toBe(false);
  });
});

describe("schedule and durations", () => {
  it("keeps the marks within the countdown and announces its whole length first", () => {
    expect(schedule(300_000)).toEqual([300, 180, 120, 60, 30, 10, 5, 4, 3, 2, 1]);
    expect(schedule(90_000)).toEqual([90, 60, 30, 10, 5, 4, 3, 2, 1]);
    expect(schedule(3_000)).toEqual([3, 2, 1]);
  });

  it("reads 5m, 90s, 1m30s and 300", () => {
    expect([parseDuration("5m"), parseDuration("90s"), parseDuration("1m30s"), parseDuration("300")]).toEqual([
      300_000, 90_000, 90_000, 300_000,
    ]);
    expect(() => parseDuration("soon")).toThrowError(expect.objectContaining({ exitCode: 2 }));
  });

  it("colours the last ten seconds red", () => {
    expect(JSON.parse(tellraw(10, undefined).slice(11))[2]).toEqual({
      text: "The server restarts in 10 seconds.",
      color: "red",
    });
    expect(JSON.parse(tellraw(30, undefined).slice(11))[2].color).toBe("yellow");
  });
});
