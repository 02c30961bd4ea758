import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { StatFs } from "@mcops/core/disk";
import { eventJournal } from "@mcops/core/events";
import { COLOURS } from "@mcops/core/http";
import { acquireLock } from "@mcops/core/lock";
import { resolvePaths } from "@mcops/core/paths";
import { zxRunner } from "@mcops/core/runner";
import {
  type DiscordStandIn,
  fifoWitness,
  type GameServer,
  type PanelStandIn,
  startDiscordStandIn,
  startGameServer,
  startPanelStandIn,
  statfsWithFree,
  type TempDir,
  tempDir,
  toolEnv,
  type VirtualClock,
  virtualClock,
} from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMonitor, type Monitor } from "../src/monitor.ts";
import { LOG_TAIL_BYTES, playersInLog } from "../src/observe.ts";
import { defaultBackupCommand, loadSettings } from "../src/settings.ts";

const MIN = 60_000;
const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);

let root: TempDir;
let panel: PanelStandIn;
let discord: DiscordStandIn;
let game: GameServer;
let clock: VirtualClock;
let ctx: Parameters<typeof createMonitor>[0];
let calls: string;
let worldDir: string;

/** A stand-in for the backup executable: records each call (and the virtual time it was asked at) and exits $EXIT. */
function writeBackupStandIn(exitCode = 0): string {
  const script = join(root.path, "backup-stand-in");
  writeFileSync(script, `#!/bin/sh\necho "backup $*" >> '${calls}'\nexit ${exitCode}\n`);
  chmodSync(script, 0o755);
  return script;
}

function backups(): number {
  return existsSync(calls) ? readFileSync(calls, "utf8").trim().split("\n").length : 0;
}

/** A monitor on backup.env's fields and `extra`; its disk half free unless the test gives its own (`statfs`). */
function monitor(extra: Record<string, string> = {}, statfs: StatFs = statfsWithFree(0.5)): Monitor {
  const etc = ctx.env.MCOPS_CONFIG_DIR as string;
  writeFileSync(
    join(etc, "backup.env"),
    Object.entries({
      CONTROL_URL: panel.url,
      CONTROL_KEY: panel.apiKey,
      SERVER_ID: panel.server.identifier,
      WORLD_DIR: worldDir,
      GAME_ADDRESS: game.address,
      IDLE_BACKUP_COMMAND: writeBackupStandIn(),
      ...extra,
    })
      .map(([k, v]) => `${k}=${v}\n`)
      .join(""),
  );
  chmodSync(join(etc, "backup.env"), 0o600);
  return createMonitor(ctx, loadSettings(ctx), false, statfs);
}

/** The panel replaced by one whose game (of that kind) answers the console in the volume's latest.log, which it runs. */
async function answeringPanel(game: "vanilla" | "paper" | "old-vanilla"): Promise<void> {
  await panel.close();
  const logFile = join(worldDir, "logs", "latest.log");
  panel = await startPanelStandIn({
    servers: [{ state: "running" }],
    timings: { startMs: 20, stopMs: 20 },
    now: () => clock.now(),
    logFile,
    game,
  });
  writeFileSync(logFile, ""); // the running server's log
}

/** `minutes` polls, one a minute; returns the actions taken. */
async function polls(m: Monitor, minutes: number): Promise<string[]> {
  const actions: string[] = [];
  for (let i = 0; i < minutes; i++) {
    const at = clock.now();
    const decision = await m.tick();
    if (decision.error) throw decision.error;
    if (decision.action !== "none") actions.push(`${decision.action}@${Math.round((at - T0) / MIN)}`);
    clock.advance(MIN);
  }
  return actions;
}

beforeEach(async () => {
  root = tempDir("mcops-idle-");
  clock = virtualClock(T0);
  // The monitor runs on the virtual clock: the panel's uptimes and resources cache age on the same clock.
  panel = await startPanelStandIn({
    servers: [{ state: "running" }],
    timings: { startMs: 20, stopMs: 20 },
    now: () => clock.now(),
  });
  discord = await startDiscordStandIn();
  game = await startGameServer();
  calls = join(root.path, "backup-calls.txt");
  worldDir = join(root.path, "volume");
  mkdirSync(join(worldDir, "logs"), { recursive: true });
  const env = toolEnv(root.path);
  mkdirSync(env.MCOPS_CONFIG_DIR as string, { recursive: true });
  writeFileSync(join(env.MCOPS_CONFIG_DIR as string, "webhook.env"), `WEBHOOK_URL=${discord.webhookUrl()}\n`);
  chmodSync(join(env.MCOPS_CONFIG_DIR as string, "webhook.env"), 0o600);
  ctx = {
    paths: resolvePaths(env),
    env,
    clock,
    stderr: { write: () => true },
    runner: zxRunner,
    signal: new AbortController().signal,
  };
});

afterEach(async () => {
  await game.close();
  await panel.close();
  await discord.close();
  root.cleanup();
});

describe("idle-monitor against a real protocol server", () => {
  it("runs exactly one backup per idle period, after real players left, and posts it", async () => {
    const m = monitor();
    const steve = await game.join("Steve");
    const alex = await game.join("Alex");
    expect(await polls(m, 5)).toEqual([]);
    await alex.leave();
    expect(await polls(m, 5)).toEqual([]);
    await steve.leave();
    expect(await polls(m, 45)).toEqual(["backup@40"]);
    expect(backups()).toBe(1);
    expect(discord.messages.map((msg) => msg.body.embeds[0].title)).toEqual(["Idle backup triggered"]);
    const log = readFileSync(join(root.path, "log", "mc-idle-monitor.log"), "utf8");
    expect(log).toMatch(/INFO 2 players online \[ping\], server running: active; recovery point in 1 h 0 min\n/);
    expect(log).toMatch(
      /INFO 0 players online \[ping\], server running, empty for 29 min 0 s; idle backup in 1 min 0 s\n/,
    );
    expect(log).toMatch(/INFO idle backup done/);
  });

  it("backs up nothing when nobody played, and nothing during the cooldown", async () => {
    const m = monitor();
    expect(await polls(m, 90)).toEqual([]);
    const steve = await game.join("Steve");
    expect(await polls(m, 2)).toEqual([]);
    await steve.leave();
    expect(await polls(m, 31)).toEqual(["backup@122"]);
    const again = await game.join("Steve");
    expect(await polls(m, 2)).toEqual([]);
    await again.leave();
    // The second idle period is due 30 min later, but the cooldown (2 h from minute 122) holds it to minute 242.
    expect(await polls(m, 120)).toEqual(["backup@242"]);
    expect(backups()).toBe(2);
  });

  it("falls back to the game log when the ping fails", async () => {
    const m = monitor({ GAME_ADDRESS: "127.0.0.1:1" });
    const log = join(worldDir, "logs", "latest.log");
    writeFileSync(log, "[12:00:00] [Server thread/INFO]: Steve joined the game\n");
    const first = await m.tick();
    expect(first.line).toMatch(/^1 player online \(Steve\) \[log\], server running; no ping answer on 127\.0\.0\.1:1 /);
    clock.advance(MIN);
    writeFileSync(log, "[12:01:00] [Server thread/INFO]: Steve left the game\n", { flag: "a" });
    expect(await polls(m, 31)).toEqual(["backup@31"]);
  });

  it("keeps its timing across a restart of the monitor", async () => {
    const steve = await game.join("Steve");
    expect(await polls(monitor(), 3)).toEqual([]);
    await steve.leave();
    expect(await polls(monitor(), 20)).toEqual([]);
    // A new monitor (a service restart) remembers the idle period began at minute 3: the backup comes at minute 33.
    expect(await polls(monitor(), 20)).toEqual(["backup@33"]);
    expect(await polls(monitor(), 20)).toEqual([]);
    expect(backups()).toBe(1);
  });

  it("never starts a backup while one runs, and stops the idle server when told to", async () => {
    const m = monitor({ IDLE_STOP_AFTER: "45m" });
    const steve = await game.join("Steve");
    await polls(m, 1);
    await steve.leave();
    const running = await acquireLock(join(root.path, "run", "backup.lock"), { tool: "backup" });
    expect(await polls(m, 35)).toEqual([]);
    running.release();
    expect(await polls(m, 20)).toEqual(["backup@36", "stop@46"]);
    expect(panel.signals()).toEqual(["stop"]);
    expect(discord.messages.map((msg) => msg.body.embeds[0].title)).toEqual([
      "Idle backup triggered",
      "Server stopped (idle)",
    ]);
    expect(readFileSync(join(root.path, "log", "mc-idle-monitor.log"), "utf8")).toMatch(
      /but a backup is running \(backup, pid \d+\): waiting for it/,
    );
  });
});

describe("backups while people play, and the staleness alarm", () => {
  it("gives exactly one recovery point per hour of continuous play, none while the lock is held, none when off", async () => {
    const m = monitor({ BACKUP_WHILE_PLAYING: "60m" });
    const steve = await game.join("Steve");
    expect(await polls(m, 181)).toEqual(["recovery@60", "recovery@120", "recovery@180"]);
    expect(backups()).toBe(3);
    expect(discord.messages.map((msg) => msg.body.embeds[0].title)).toEqual([
      "Recovery point",
      "Recovery point",
      "Recovery point",
    ]);
    // A backup (or a restart's countdown, which holds the same lock) is running: nothing starts until it ends.
    const running = await acquireLock(join(root.path, "run", "backup.lock"), { tool: "restart-with-warning" });
    expect(await polls(m, 90)).toEqual([]);
    running.release();
    expect(await polls(m, 1)).toEqual(["recovery@271"]);
    expect(backups()).toBe(4);
    await steve.leave();

    const off = monitor({ BACKUP_WHILE_PLAYING: "0" });
    await game.join("Alex");
    expect(await polls(off, 130)).toEqual([]);
  }, 120_000);

  it("posts one red alarm per BACKUP_MAX_AGE while backups fail, says when they run again, and sets the gauges", async () => {
    const textfiles = join(root.path, "textfiles");
    const m = monitor({ BACKUP_MAX_AGE: "2h", BACKUP_TEXTFILE_DIR: textfiles });
    const log = join(root.path, "log", "mc-backup.log");
    mkdirSync(join(root.path, "log"), { recursive: true });
    const at = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
    writeFileSync(log, `${at(T0)} INFO === Backup done === took 1 s, added 1 B, snapshot aaaa0000\n`);
    appendFileSync(log, `${at(T0 + 30 * MIN)} ERROR === Backup failed === restic: wrong password\n`);
    expect(await polls(m, 5 * 60)).toEqual([]);
    const titles = () => discord.messages.map((msg) => msg.body.embeds[0].title);
    expect(titles()).toEqual(["No backup for 2 h", "No backup for 4 h"]);
    expect(discord.messages[0]?.body.embeds[0].description).toBe(
      "The last one failed: restic: wrong password\nBACKUP_MAX_AGE is 2 h 0 min.",
    );
    expect(discord.messages[0]?.body.embeds[0].color).toBe(COLOURS.error);
    const prom = readFileSync(join(textfiles, "mcops_idle.prom"), "utf8");
    expect(prom).toMatch(/^mcops_backup_stale\{server="\w+"\} 1$/m);
    expect(prom).toMatch(/^mcops_backup_age_seconds\{server="\w+"\} 17940$/m);

    appendFileSync(log, `${at(clock.now())} INFO === Backup done === took 1 s, added 1 B, snapshot bbbb0000\n`);
    expect(await polls(m, 60)).toEqual([]);
    expect(titles()).toEqual(["No backup for 2 h", "No backup for 4 h", "Backups are running again"]);
    expect(readFileSync(join(textfiles, "mcops_idle.prom"), "utf8")).toMatch(/^mcops_backup_stale\{server="\w+"\} 0$/m);
    // Cleared in the state file, so the next gap alarms again.
    expect(m.state.staleAlarm).toBeUndefined();
  }, 120_000);

  it("takes the backup's ends from its records: a failure's reason, and the success that ends the alarm", async () => {
    const m = monitor({ BACKUP_MAX_AGE: "2h" });
    const journal = eventJournal(ctx.paths, "backup");
    const done = { type: "backup.done", tookMs: 1000, addedBytes: 1, snapshot: "aaaa0000" } as const;
    journal.append({ ...done, at: T0 });
    journal.append({ type: "backup.failed", at: T0 + 30 * MIN, reason: "restic: wrong password", exitCode: 1 });
    // A line in the log, where records are kept, is not the backup's word: it changes nothing.
    mkdirSync(join(root.path, "log"), { recursive: true });
    const at = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
    writeFileSync(
      join(root.path, "log", "mc-backup.log"),
      `${at(T0 + 60 * MIN)} INFO === Backup done === took 1 s, added 1 B, snapshot ffff0000\n`,
    );
    expect(await polls(m, 3 * 60)).toEqual([]);
    const titles = () => discord.messages.map((msg) => msg.body.embeds[0].title);
    expect(titles()).toEqual(["No backup for 2 h"]);
    expect(discord.messages[0]?.body.embeds[0].description).toBe(
      "The last one failed: restic: wrong password\nBACKUP_MAX_AGE is 2 h 0 min.",
    );
    const now = clock.now();
    journal.append({ ...done, at: now, snapshot: "bbbb0000" });
    expect(await polls(m, 1)).toEqual([]);
    expect(titles()).toEqual(["No backup for 2 h", "Backups are running again"]);
    expect(m.state.lastBackupOk).toBe(now);
  }, 120_000);
});

describe("health: free disk space", () => {
  it("posts yellow below DISK_WARN, red below DISK_CRITICAL, each at most once a UTC day, green once on recovery", async () => {
    let free = 0.5;
    // A filesystem of a million 4 KiB blocks, `free` of them available: the volume and restic's cache are on it.
    const statfs: StatFs = () => ({ bsize: 4096, blocks: 1_000_000, bavail: Math.round(free * 1_000_000) });
    const textfiles = join(root.path, "textfiles");
    const m = monitor({ BACKUP_TEXTFILE_DIR: textfiles, BACKUP_MAX_AGE: "1000h" }, statfs);
    const disk = () =>
      discord.messages
        .map((msg) => msg.body.embeds[0])
        .filter((embed) => /^Disk /.test(embed.title))
        .map((embed) => [embed.title, embed.color]);
    const ticks = async (count: number, stepMs: number) => {
      for (let i = 0; i < count; i++) {
        const decision = await m.tick();
        if (decision.error) throw decision.error;
        clock.advance(stepMs);
      }
    };
    const on = "on the server volume's disk (also restic's cache)";
    await ticks(3, 10 * MIN);
    expect(disk()).toEqual([]);
    free = 0.08; // 12:30 to 17:30
    await ticks(6, 60 * MIN);
    expect(disk()).toEqual([[`Disk filling up: 8.0 % free ${on}`, COLOURS.warning]]);
    expect(discord.messages.at(-1)?.body.embeds[0].description).toBe(
      "8.0 % free (312.5 MiB of 3.81 GiB), below DISK_WARN (10 %). Below 5 % backups stop.",
    );
    free = 0.03; // 18:30 to 20:30, then past midnight: red again on the new day, once
    await ticks(3, 60 * MIN);
    expect(disk()).toHaveLength(2);
    await ticks(5, 60 * MIN);
    expect(disk()).toEqual([
      [`Disk filling up: 8.0 % free ${on}`, COLOURS.warning],
      [`Disk almost full: 3.0 % free ${on}`, COLOURS.error],
      [`Disk almost full: 3.0 % free ${on}`, COLOURS.error],
    ]);
    expect(readFileSync(join(textfiles, "mcops_health.prom"), "utf8")).toMatch(
      /^mcops_disk_free_ratio\{server="\w+"\} 0\.0300$/m,
    );
    free = 0.5;
    await ticks(3, 10 * MIN);
    expect(disk().slice(3)).toEqual([[`Disk space back: 50.0 % free ${on}`, COLOURS.success]]);
    expect(m.state.disks).toBeUndefined();
    expect(discord.messages.filter((msg) => /^Disk /.test(msg.body.embeds[0].title)).length).toBe(4);
  }, 120_000);

  it("posts one yellow memory warning after 10 min above 95 % of the limit, one green once it is below", async () => {
    const textfiles = join(root.path, "textfiles");
    const m = monitor({ BACKUP_TEXTFILE_DIR: textfiles, BACKUP_MAX_AGE: "1000h" });
    const memory = () =>
      discord.messages
        .map((msg) => msg.body.embeds[0])
        .filter((embed) => /^Memory/.test(embed.title))
        .map((embed) => [embed.title, embed.color]);
    // The panel's server has a 4096 MiB limit; the container now uses 97 % of it.
    panel.setMemory(Math.round(4096 * 1024 * 1024 * 0.97));
    expect(await polls(m, 10)).toEqual([]);
    expect(memory()).toEqual([]);
    await polls(m, 31);
    expect(memory()).toEqual([["Memory: 97 % of 4.00 GiB for 10 min", COLOURS.warning]]);
    expect(readFileSync(join(textfiles, "mcops_health.prom"), "utf8")).toMatch(
      /^mcops_memory_ratio\{server="\w+"\} 0\.9700$/m,
    );
    panel.setMemory(undefined); // 1.5 GiB, the stand-in's usual figure
    await polls(m, 5);
    expect(memory()).toEqual([
      ["Memory: 97 % of 4.00 GiB for 10 min", COLOURS.warning],
      ["Memory back to 38 % of 4.00 GiB", COLOURS.success],
    ]);
  }, 120_000);

  it("asks Paper its tps while players are online, warns once after three low samples, once when it is over", async () => {
    await answeringPanel("paper");
    const textfiles = join(root.path, "textfiles");
    const m = monitor({ BACKUP_TEXTFILE_DIR: textfiles, BACKUP_MAX_AGE: "1000h", BACKUP_WHILE_PLAYING: "0" });
    const lag = () =>
      discord.messages
        .map((msg) => msg.body.embeds[0])
        .filter((embed) => /^Lag/.test(embed.title))
        .map((embed) => [embed.title, embed.color]);
    await polls(m, 10);
    expect(panel.commands()).toEqual([]); // nobody plays: nothing is asked
    const steve = await game.join("Steve");
    await polls(m, 16);
    expect(panel.commands()).toEqual(["tps", "tps", "tps", "tps"]);
    expect(readFileSync(join(textfiles, "mcops_health.prom"), "utf8")).toMatch(/^mcops_tps\{server="\w+"\} 20\.00$/m);
    panel.setTickMs(89.3); // 11.2 ticks a second
    await polls(m, 15);
    expect(lag()).toEqual([["Lag: 11.2 TPS for 15 min (1 player)", COLOURS.warning]]);
    await polls(m, 10);
    expect(lag()).toHaveLength(1);
    panel.setTickMs(12.3);
    await polls(m, 5);
    expect(lag()).toEqual([
      ["Lag: 11.2 TPS for 15 min (1 player)", COLOURS.warning],
      ["Lag over: 20.0 TPS", COLOURS.success],
    ]);
    await steve.leave();
  }, 120_000);

  it("falls back to vanilla's tick query, and asks a server that knows neither only once", async () => {
    for (const flavour of ["vanilla", "old-vanilla"] as const) {
      await answeringPanel(flavour);
      rmSync(join(root.path, "state"), { recursive: true, force: true });
      const m = monitor({ BACKUP_MAX_AGE: "1000h", BACKUP_WHILE_PLAYING: "0" });
      const alex = await game.join("Alex");
      await polls(m, 11);
      expect(panel.commands()).toEqual(
        flavour === "vanilla" ? ["tps", "tick query", "tick query", "tick query"] : ["tps", "tick query"],
      );
      await alex.leave();
    }
    expect(readFileSync(join(root.path, "log", "mc-idle-monitor.log"), "utf8")).toMatch(
      /INFO the server answers neither tps nor tick query \(vanilla before 1\.20\.3\?\): its tick rate is not watched\n/,
    );
  }, 120_000);

  it("says in one line what is wrong with DISK_WARN, DISK_CRITICAL, TPS_WARN or TPS_EVERY (exit 78 for --once)", () => {
    expect(() => monitor({ DISK_WARN: "ten" })).toThrow("DISK_WARN is not a percentage");
    expect(() => monitor({ DISK_WARN: "5%", DISK_CRITICAL: "8%" })).toThrow(
      "DISK_CRITICAL (8%) must be below DISK_WARN (5%)",
    );
    expect(() => monitor({ TPS_WARN: "25" })).toThrow("TPS_WARN is not a tick rate from 0 to 20");
    expect(() => monitor({ TPS_EVERY: "often" })).toThrow("TPS_EVERY is not a duration or off");
  });
});

describe("health: the certificates, once a day", () => {
  it("runs certs check once a UTC day and posts one yellow warning per certificate that needs the operator", async () => {
    const calls = join(root.path, "certs-calls.txt");
    const certs = join(root.path, "certs-stand-in");
    // certs check's own lines: the origin is fine, Wings' expires in 2 days (exit 1).
    writeFileSync(
      certs,
      `#!/bin/sh\necho "$@" >> '${calls}'\necho "origin example.com: valid until 2041-11-21 (5474 days)"\necho "wings /etc/letsencrypt/live/play.example.com/fullchain.pem: valid until 2026-11-23 (2 days) — within CERT_WARN (14 d): renew it"\nexit 1\n`,
    );
    chmodSync(certs, 0o755);
    const m = monitor({ CERT_CHECK_COMMAND: certs, BACKUP_MAX_AGE: "1000h" });
    const warnings = () =>
      discord.messages.map((msg) => msg.body.embeds[0]).filter((embed) => /^Certificate/.test(embed.title));
    for (let i = 0; i < 3; i++) {
      expect((await m.tick()).error).toBeUndefined();
      clock.advance(60 * MIN);
    }
    expect(readFileSync(calls, "utf8")).toBe("check\n");
    expect(warnings().map((e) => [e.title, e.color])).toEqual([
      ["Certificate expires in 2 days: wings /etc/letsencrypt/live/play.example.com/fullchain.pem", COLOURS.warning],
    ]);
    expect(warnings()[0]?.description).toMatch(
      /^Wings' certificate \(.*\) is valid until 2026-11-23\. Let's Encrypt renews it/,
    );
    clock.advance(24 * 60 * MIN); // the next day
    await m.tick();
    expect(readFileSync(calls, "utf8")).toBe("check\ncheck\n");
    expect(warnings()).toHaveLength(2);
  });
});

describe("the idle stop, with the panel's real timing", () => {
  it("says the server stopped, and runs the stop command, only once the panel says offline", async () => {
    const stopCommand = join(root.path, "stop-command");
    const ran = join(root.path, "stop-command-ran");
    writeFileSync(stopCommand, `#!/bin/sh\ntouch '${ran}'\n`);
    chmodSync(stopCommand, 0o755);
    // "stopping" lasts until the test says otherwise (the game saving a large world): the stop times out.
    await panel.close();
    panel = await startPanelStandIn({
      servers: [{ state: "running" }],
      timings: { startMs: 20, stopMs: 600_000 },
      now: () => clock.now(),
    });
    expect(panel.timing.powerDelayMs).toBeGreaterThan(0);
    const m = monitor({ IDLE_STOP_AFTER: "45m", IDLE_STOP_COMMAND: stopCommand });
    const steve = await game.join("Steve");
    await polls(m, 1);
    await steve.leave();
    await expect(polls(m, 50)).rejects.toThrow(
      /idle stop failed: the server did not become offline in 300 s \(it is stopping\)/,
    );
    expect(panel.signals()).toEqual(["stop"]);
    expect(discord.messages.map((msg) => msg.body.embeds[0].title)).toEqual(["Idle backup triggered"]);
    expect(existsSync(ran)).toBe(false);
    expect(m.state.idleStop).toBeUndefined();
  });

  it("is offline by the time the tick that stopped it ends, and the stop command has run", async () => {
    const stopCommand = join(root.path, "stop-command");
    const ran = join(root.path, "stop-command-ran");
    writeFileSync(stopCommand, `#!/bin/sh\ntouch '${ran}'\n`);
    chmodSync(stopCommand, 0o755);
    const m = monitor({ IDLE_STOP_AFTER: "45m", IDLE_STOP_COMMAND: stopCommand });
    const steve = await game.join("Steve");
    await polls(m, 1);
    await steve.leave();
    let stopping: string | undefined;
    for (let i = 0; i < 60 && !stopping; i++) {
      const decision = await m.tick();
      if (decision.error) throw decision.error;
      if (decision.action === "stop") stopping = panel.state();
      clock.advance(MIN);
    }
    expect(stopping).toBe("offline");
    expect(panel.stateHistory().map((h) => h.state)).toEqual(["running", "stopping", "offline"]);
    expect(discord.messages.map((msg) => msg.body.embeds[0].title)).toEqual([
      "Idle backup triggered",
      "Server stopped (idle)",
    ]);
    expect(existsSync(ran)).toBe(true);
  });
});

describe("the backup it starts", () => {
  it("is the one installed beside it (<prefix>/backup from <prefix>/lib), else /opt/mc-tools/backup", () => {
    const prefix = tempDir("mcops-prefix-");
    try {
      mkdirSync(join(prefix.path, "lib"));
      const self = pathToFileURL(join(prefix.path, "lib", "idle-monitor.mjs")).href;
      expect(defaultBackupCommand(self)).toBe("/opt/mc-tools/backup");
      writeFileSync(join(prefix.path, "backup"), "#!/bin/sh\n");
      expect(defaultBackupCommand(self)).toBe(join(prefix.path, "backup"));
    } finally {
      prefix.cleanup();
    }
  });
});

describe("the game log fallback in a hostile volume", () => {
  const joined = (name: string) => `[12:00:00] [Server thread/INFO]: ${name} joined the game\n`;
  const monitorLog = () => readFileSync(join(root.path, "log", "mc-idle-monitor.log"), "utf8");
  const warnings = () =>
    monitorLog()
      .split("\n")
      .filter((l) => / WARN /.test(l));
  const memory = () => process.memoryUsage().arrayBuffers + process.memoryUsage().heapUsed;
  let witness: ReturnType<typeof fifoWitness> | undefined;
  afterEach(async () => {
    await witness?.end();
    witness = undefined;
  });

  it("never reads /dev/zero behind a link as latest.log: one WARN line, the panel's state, memory small", async () => {
    const log = join(worldDir, "logs", "latest.log");
    symlinkSync("/dev/zero", log);
    const m = monitor({ GAME_ADDRESS: "127.0.0.1:1" });
    const before = memory();
    for (let i = 0; i < 3; i++) {
      const decision = await m.tick();
      expect(decision.error).toBeUndefined();
      expect(decision.line).toMatch(
        /^players unknown \[panel\], server running; no ping answer on 127\.0\.0\.1:1 .*; no log \(.*latest\.log is a symbolic link, not a regular file\): cannot tell whether anyone plays/,
      );
      clock.advance(MIN);
    }
    expect(memory() - before).toBeLessThan(32 * 1024 * 1024);
    // The service says it in the channel too, once for the whole time the problem lasts.
    expect(discord.messages.map((msg) => msg.body.embeds[0].title)).toEqual(["Game log not readable"]);
    expect(warnings()).toEqual([
      expect.stringMatching(
        / WARN .*latest\.log is a symbolic link, not a regular file; not reading it — links inside the server volume are never followed; remove it$/,
      ),
    ]);
    expect(backups()).toBe(0);
  });

  it("never blocks on a FIFO as latest.log: one WARN line, and the log is read again once it is a file", async () => {
    const log = join(worldDir, "logs", "latest.log");
    execFileSync("mkfifo", [log]);
    // Nobody writes to it: a monitor that opened it blocking would only go on once the witness freed it, 60 s later.
    witness = fifoWitness(log);
    const m = monitor({ GAME_ADDRESS: "127.0.0.1:1" });
    for (let i = 0; i < 3; i++) {
      expect((await m.tick()).line).toMatch(/^players unknown \[panel\].*latest\.log is a FIFO, not a regular file\)/);
      clock.advance(MIN);
    }
    // Stopped before the FIFO is replaced by a file (which it could open, and call that freeing a reader).
    expect(await witness.end()).toBe(false);
    expect(warnings()).toEqual([
      expect.stringMatching(/ WARN .*latest\.log is a FIFO, not a regular file; not reading it/),
    ]);
    execFileSync("rm", [log]);
    writeFileSync(log, joined("Steve"));
    expect((await m.tick()).line).toMatch(/^1 player online \(Steve\) \[log\]/);
  }, 120_000);

  it("reads only the last 8 MiB of a huge log: who joined before that is not counted by the log", async () => {
    const log = join(worldDir, "logs", "latest.log");
    writeFileSync(log, joined("Early"));
    truncateSync(log, 1024 ** 3); // sparse: a 1 GiB log
    appendFileSync(log, `\n${joined("Late")}`);
    // The tick rate is not asked here: this stand-in's game writes no answers to this log.
    const m = monitor({ GAME_ADDRESS: "127.0.0.1:1", TPS_EVERY: "off" });
    const before = memory();
    expect((await m.tick()).line).toMatch(/^1 player online \(Late\) \[log\]/);
    expect(memory() - before).toBeLessThan(LOG_TAIL_BYTES * 4);
    expect(warnings()).toEqual([]);
  });

  it("drops the partial first line of the tail, and says undefined when there is no log", () => {
    const log = join(worldDir, "logs", "latest.log");
    expect(playersInLog(worldDir)).toBeUndefined();
    writeFileSync(log, joined("Steve") + joined("Alex"));
    // The tail starts inside Steve's line: "ve joined the game" is not Steve's join (nor anyone's).
    expect(playersInLog(worldDir, joined("Alex").length + 20)).toEqual(["Alex"]);
    expect(playersInLog(worldDir)).toEqual(["Steve", "Alex"]);
    expect(playersInLog(worldDir, 10)).toEqual([]);
  });
});
