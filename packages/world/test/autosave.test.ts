import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { appendFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Clock, systemClock } from "@mcops/core/clock";
import { createPanelClient, type PanelClient } from "@mcops/core/http";
import { silentLogger } from "@mcops/core/log";
import { VolumeDir } from "@mcops/core/volume";
import { type PanelStandIn, startPanelStandIn, waitUntil } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pauseAutosave } from "../src/autosave.ts";

let panel: PanelStandIn;
let dir: string;
let latestLog: string;

beforeEach(async () => {
  // The game's answers go nowhere: each test writes the lines that appear in latest.log after save-all flush.
  panel = await startPanelStandIn({ servers: [{ uuid: randomUUID(), state: "running" }] });
  dir = mkdtempSync(join(tmpdir(), "mcops-autosave-"));
  latestLog = join(dir, "latest.log");
  writeFileSync(latestLog, "[05:59:58] [Server thread/INFO]: Saved the game\n");
});

afterEach(async () => {
  await panel.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The real panel client, with `lines` appended to latest.log as soon as the panel took `save-all flush`. */
function panelWriting(lines: string[]): PanelClient {
  const client = createPanelClient({ url: panel.url, key: panel.apiKey, serverId: panel.server.identifier });
  return {
    ...client,
    async command(line) {
      await client.command(line);
      if (line === "save-all flush") for (const text of lines) appendFileSync(latestLog, text);
    },
  };
}

const pause = (lines: string[], saveTimeoutMs = 400, signal?: AbortSignal) =>
  pauseAutosave({
    panel: panelWriting(lines),
    volume: VolumeDir.open(dir),
    latestLog: "latest.log",
    clock: systemClock,
    logger: silentLogger,
    saveTimeoutMs,
    signal,
  });

describe("waiting for the game's Saved the game", () => {
  it("never opens a FIFO put where the log belongs: goes on unconfirmed at once, autosave back on", async () => {
    rmSync(latestLog);
    execFileSync("mkfifo", [latestLog]);
    const logged: string[] = [];
    const guard = await pauseAutosave({
      panel: panelWriting([]),
      volume: VolumeDir.open(dir),
      latestLog: "latest.log",
      clock: systemClock,
      logger: { ...silentLogger, warn: (text: string) => logged.push(text) },
      saveTimeoutMs: 3_600_000,
    });
    await guard.resume();
    expect(guard.mode).toBe("flush-unconfirmed");
    expect(logged).toEqual([`${latestLog} is a FIFO, not a regular file: going on without the game's confirmation`]);
    expect(panel.commands().at(-1)).toBe("save-on");
  });

  it("does not read a log behind a link: a Saved the game outside the volume confirms nothing", async () => {
    const outside = mkdtempSync(join(tmpdir(), "mcops-outside-"));
    const canary = join(outside, "other.log");
    writeFileSync(canary, "");
    rmSync(latestLog);
    symlinkSync(canary, latestLog);
    const client = createPanelClient({ url: panel.url, key: panel.apiKey, serverId: panel.server.identifier });
    const guard = await pauseAutosave({
      panel: {
        ...client,
        async command(line) {
          await client.command(line);
          if (line === "save-all flush") appendFileSync(canary, "[06:00:01] [Server thread/INFO]: Saved the game\n");
        },
      },
      volume: VolumeDir.open(dir),
      latestLog: "latest.log",
      clock: systemClock,
      logger: silentLogger,
      saveTimeoutMs: 3_600_000,
    });
    await guard.resume();
    expect(guard.mode).toBe("flush-unconfirmed");
    rmSync(outside, { recursive: true });
  });

  it("takes the server's own line, in the vanilla, Paper console and Forge layouts", async () => {
    for (const line of [
      "[06:00:01] [Server thread/INFO]: Saved the game\n",
      "[06:00:01 INFO]: Saved the game\r\n",
      "[21Nov2026 06:00:01.734] [Server thread/INFO] [net.minecraft.server.MinecraftServer/]: Saved the game\n",
    ]) {
      const guard = await pause(["[06:00:01] [Server thread/INFO]: Saving the game (this may take a moment!)\n", line]);
      await guard.resume();
      expect(guard.mode, line).toBe("flushed");
    }
  });

  it("does not take a player or /say writing Saved the game for the game's confirmation", async () => {
    const guard = await pause([
      "[06:00:01] [Server thread/INFO]: <Steve> Saved the game\n",
      "[06:00:01] [Async Chat Thread - #0/INFO]: <Steve> Saved the game\n",
      "[06:00:01] [Server thread/INFO]: [Not Secure] <Alex> Saved the game\n",
      "[06:00:01] [Server thread/INFO]: [Server] Saved the game\n",
      "[06:00:01] [Server thread/INFO]: * Steve Saved the game\n",
      "Saved the game\n",
    ]);
    await guard.resume();
    expect(guard.mode).toBe("flush-unconfirmed");
    expect(panel.commands()).toEqual(["save-off", "save-all flush", "save-on"]);
  });

  it("takes the line when the game's write of it is read in two halves", async () => {
    const client = panelWriting(["[06:00:01] [Server thread/INFO]: Saved"]);
    // The first half is in the log before the wait begins; the rest is written at the wait's first pause, once the
    // first half has been read. The save timeout is an hour: only the whole line ends the wait as "flushed".
    let pauses = 0;
    const clock: Clock = {
      now: systemClock.now,
      sleep(ms, signal) {
        if (pauses++ === 0) appendFileSync(latestLog, " the game\n");
        return systemClock.sleep(ms, signal);
      },
    };
    const guard = await pauseAutosave({
      panel: client,
      volume: VolumeDir.open(dir),
      latestLog: "latest.log",
      clock,
      logger: silentLogger,
      saveTimeoutMs: 3_600_000,
    });
    await guard.resume();
    expect(guard.mode).toBe("flushed");
    expect(pauses).toBe(1);
  });

  it("stops waiting as soon as the run is aborted, and save-on still follows", async () => {
    const controller = new AbortController();
    // The wait is held: an hour's save timeout, and each look at the log followed by a 10-minute pause. The abort comes
    // once that pause has begun, so only honouring the abort at once ends the wait before this test's timeout.
    let pausing = false;
    const clock: Clock = {
      now: systemClock.now,
      sleep(ms, signal) {
        pausing = true;
        return systemClock.sleep(ms, signal);
      },
    };
    const waiting = pauseAutosave({
      panel: panelWriting([]),
      volume: VolumeDir.open(dir),
      latestLog: "latest.log",
      clock,
      logger: silentLogger,
      saveTimeoutMs: 3_600_000,
      pollMs: 600_000,
      signal: controller.signal,
    });
    await waitUntil(() => pausing, "the wait for Saved the game to pause", 50_000);
    controller.abort("SIGINT");
    const guard = await waiting;
    expect(guard.mode).toBe("flush-unconfirmed");
    expect(guard.note).toMatch(/interrupted by SIGINT while waiting/);
    await guard.resume();
    expect(panel.commands()).toEqual(["save-off", "save-all flush", "save-on"]);
  });
});

describe("never trusting the panel's cached state", () => {
  const SAVED = ["[06:00:01] [Server thread/INFO]: Saved the game\n"];
  const restart = async (options: Parameters<typeof startPanelStandIn>[0]) => {
    await panel.close();
    panel = await startPanelStandIn(options);
  };
  const commandCalls = () => panel.calls.filter((c) => c.kind === "command").map((c) => `${c.command} ${c.status}`);
  const logging = (logged: string[]) => ({
    ...silentLogger,
    info: (text: string) => logged.push(text),
    warn: (text: string) => logged.push(text),
  });

  it("sends save-off while the panel still says offline but the game runs, and confirms the flush", async () => {
    // The panel's resources cache (20 s on a real panel) still holds the answer from before the start.
    await restart({ servers: [{ state: "offline" }], resourcesCacheMs: 60_000 });
    const client = createPanelClient({ url: panel.url, key: panel.apiKey, serverId: panel.server.identifier });
    expect((await client.resources()).state).toBe("offline");
    panel.setState("running");
    const logged: string[] = [];
    const guard = await pauseAutosave({
      panel: panelWriting(SAVED),
      volume: VolumeDir.open(dir),
      latestLog: "latest.log",
      clock: systemClock,
      logger: logging(logged),
      saveTimeoutMs: 5000,
    });
    await guard.resume();
    expect(guard.mode).toBe("flushed");
    expect(panel.commands()).toEqual(["save-off", "save-all flush", "save-on"]);
    expect(logged).toContain("the panel showed the server offline, but the game took save-off: it runs");
  });

  it("takes the panel's Server must be online (Wings' 502) as the world at rest, and sends no save-on", async () => {
    await restart({ servers: [{ state: "offline" }] });
    const logged: string[] = [];
    const guard = await pauseAutosave({
      panel: panelWriting(SAVED),
      volume: VolumeDir.open(dir),
      latestLog: "latest.log",
      clock: systemClock,
      logger: logging(logged),
      saveTimeoutMs: 5000,
    });
    await guard.resume();
    expect(guard).toMatchObject({ mode: "server-offline", offSince: undefined });
    expect(commandCalls()).toEqual(["save-off 502"]);
    expect(logged).toContain("the game is not running (the panel: Server must be online): its files are at rest");
  });

  it("does not take Server must be online as the world at rest while the panel shows the game running (a proxy's 502 in front of Wings)", async () => {
    // Wings restarting behind its proxy: the proxy answers 502 to everything the panel asks Wings; the game's
    // container runs on. The panel turns the command's 502 into "Server must be online" (CommandController.php).
    await restart({ servers: [{ state: "running" }], resourcesCacheMs: 1000 });
    const client = createPanelClient({ url: panel.url, key: panel.apiKey, serverId: panel.server.identifier });
    // The panel's cache holds Wings' last answer (running) from just before Wings went away.
    expect((await client.resources()).state).toBe("running");
    panel.inject({ kind: "wings", status: 502, route: "command", times: 5 });
    panel.inject({ kind: "wings", status: 502, route: "resources", times: 50 });
    const logged: string[] = [];
    const quick = createPanelClient({
      url: panel.url,
      key: panel.apiKey,
      serverId: panel.server.identifier,
      backoffMs: 10,
    });
    const guard = await pauseAutosave({
      panel: { ...quick, command: panelWriting(SAVED).command },
      volume: VolumeDir.open(dir),
      latestLog: "latest.log",
      clock: systemClock,
      logger: logging(logged),
      saveTimeoutMs: 5000,
    });
    await guard.resume();
    expect(panel.state()).toBe("running");
    expect(guard.mode).not.toBe("server-offline");
    expect(guard.note).toMatch(/crash-consistent/);
    expect(logged.some((line) => /Wings may be unreachable behind a proxy while the game runs/.test(line))).toBe(true);
  });

  it("takes Server must be online after a running state as at rest once the panel shows the server offline (a crash)", async () => {
    await restart({ servers: [{ state: "running" }], resourcesCacheMs: 200 });
    const client = createPanelClient({ url: panel.url, key: panel.apiKey, serverId: panel.server.identifier });
    expect((await client.resources()).state).toBe("running");
    // The game crashed a moment ago: the panel's cache still says running, Wings refuses the command.
    panel.setState("offline");
    const guard = await pause(SAVED, 5000);
    expect(guard).toMatchObject({ mode: "server-offline", offSince: undefined });
    expect(commandCalls()).toEqual(["save-off 502"]);
  });

  it("says the world was not at rest when the game started while its files were read (save-off refused early in a start)", async () => {
    // The panel's cache still says offline; a start was just asked: Wings is "starting" and the container does not
    // run yet, so save-off gets Server must be online. A moment later the game runs and writes its world.
    await restart({
      servers: [{ state: "offline" }],
      resourcesCacheMs: 60_000,
      // The start takes its time on purpose: save-off must meet the container not yet running however slow the machine.
      timings: { startMs: 60_000, stopMs: 50, containerMs: 30_000 },
    });
    const client = createPanelClient({ url: panel.url, key: panel.apiKey, serverId: panel.server.identifier });
    expect((await client.resources()).state).toBe("offline");
    await client.power("start");
    await panel.waitForState("starting");
    const guard = await pause(SAVED, 5000);
    expect(guard.mode).toBe("server-offline");
    expect(guard.disturbed?.()).toBeUndefined();
    // restic reads the volume meanwhile; the game starts and writes its log (then its world).
    panel.setState("running");
    appendFileSync(latestLog, "[06:00:05] [Server thread/INFO]: Starting minecraft server version 1.21.4\n");
    expect(guard.disturbed?.()).toMatch(/started during the backup/);
  });

  it("waits for a server shown starting to be running before save-off", async () => {
    await restart({ servers: [{ state: "offline" }], resourcesCacheMs: 0, timings: { startMs: 400, stopMs: 50 } });
    await fetch(`${panel.url}/api/client/servers/${panel.server.identifier}/power`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${panel.apiKey}`,
        "Content-Type": "application/json",
        Accept: "application/json",
      },
      body: JSON.stringify({ signal: "start" }),
    });
    await panel.waitForState("starting");
    const guard = await pause(SAVED, 5000);
    await guard.resume();
    expect(guard.mode).toBe("flushed");
    const running = panel.stateHistory().find((h) => h.state === "running")?.at ?? Number.POSITIVE_INFINITY;
    const saveOff = panel.calls.find((c) => c.kind === "command" && c.command === "save-off");
    expect(saveOff?.at).toBeGreaterThanOrEqual(running);
    expect(commandCalls()).toEqual(["save-off 204", "save-all flush 204", "save-on 204"]);
  });

  it("waits for a server shown stopping to be offline, then finds the world at rest", async () => {
    await restart({ servers: [{ state: "stopping" }], resourcesCacheMs: 0, timings: { startMs: 50, stopMs: 50 } });
    // setState leaves it stopping: the stop ends 300 ms into the wait.
    setTimeout(() => panel.setState("offline"), 300);
    const guard = await pause(SAVED, 5000);
    expect(guard.mode).toBe("server-offline");
    const offline = panel.stateHistory().findLast((h) => h.state === "offline")?.at ?? Number.POSITIVE_INFINITY;
    expect(panel.calls.find((c) => c.kind === "command")?.at).toBeGreaterThanOrEqual(offline);
    expect(commandCalls()).toEqual(["save-off 502"]);
  });

  it("stops waiting for a settled state as soon as the run is aborted, sending nothing", async () => {
    await restart({ servers: [{ state: "stopping" }], resourcesCacheMs: 0 });
    const controller = new AbortController();
    setTimeout(() => controller.abort("SIGTERM"), 200);
    const guard = await pause(SAVED, 5000, controller.signal);
    expect(guard).toMatchObject({ mode: "flush-unconfirmed", note: "interrupted before save-off" });
    expect(commandCalls()).toEqual([]);
  });

  it("waits for a settled state only settleTimeoutMs, then lets save-off decide", async () => {
    await restart({ servers: [{ state: "stopping" }], resourcesCacheMs: 0 });
    const logged: string[] = [];
    const guard = await pauseAutosave({
      panel: panelWriting(SAVED),
      volume: VolumeDir.open(dir),
      latestLog: "latest.log",
      clock: systemClock,
      logger: logging(logged),
      saveTimeoutMs: 5000,
      settleTimeoutMs: 300,
    });
    await guard.resume();
    // The container still runs while the game stops: save-off is taken.
    expect(guard.mode).toBe("flushed");
    expect(
      logged.some((line) =>
        // "in 0 s": settleTimeoutMs (300 ms), not saveTimeoutMs (5 s), ended the wait (a line, not a clock, says so).
        /did not become running or offline in 0 s \(it is stopping\); trying save-off anyway/.test(line),
      ),
    ).toBe(true);
  });
});
