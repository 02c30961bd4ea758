import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { resolvePaths } from "@mcops/core/paths";
import { zxRunner } from "@mcops/core/runner";
import { verifyVmRequest } from "@mcops/core/vm-signature";
import {
  type CachedOffline,
  type DiscordStandIn,
  type PanelStandIn,
  startDiscordStandIn,
  startPanelStandIn,
  startUnderCachedOffline,
  statfsWithFree,
  stopOrder,
  type TempDir,
  tempDir,
  toolEnv,
  type VirtualClock,
  virtualClock,
} from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMonitor } from "../src/monitor.ts";
import { loadSettings } from "../src/settings.ts";

const MIN = 60_000;
const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);
const SECRET = "0123456789abcdef0123456789abcdef-test-only";
const BOOT = "3b0c1f9e-2a4d-4c55-8e0b-7d9f6a1e2b01";

let root: TempDir;
let clock: VirtualClock;
let panel: PanelStandIn;
let discord: DiscordStandIn;
let worker: Server;
/** What the Worker stand-in took (signature verified on the monitor's clock), in order. */
let taken: Array<{ path: string; body: Record<string, unknown> }>;
/** What it answers a heartbeat. */
let answer: { hibernate: false | { force: boolean }; start: boolean };
/** What it answers a hibernate request. */
let hibernateAnswer: { status: number; body: Record<string, unknown> };
let scene: CachedOffline | undefined;

/** A Worker stand-in on 127.0.0.1: checks the signature as the Worker does (for the path it was posted to). */
async function startWorkerStandIn(): Promise<string> {
  worker = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
    });
    req.on("end", async () => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      const headers = { get: (name: string) => (req.headers[name] as string | undefined) ?? null };
      const check = await verifyVmRequest(
        SECRET,
        { method: req.method ?? "", path, body: text },
        headers,
        clock.now(),
        0,
      );
      if (!check.ok) {
        res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: check.reason }));
        return;
      }
      taken.push({ path, body: JSON.parse(text) });
      const hibernate = path === "/vm/hibernate";
      res.writeHead(hibernate ? hibernateAnswer.status : 200, { "content-type": "application/json" });
      res.end(JSON.stringify(hibernate ? hibernateAnswer.body : answer));
    });
  });
  await new Promise<void>((resolve) => worker.listen(0, "127.0.0.1", () => resolve()));
  return `http://127.0.0.1:${(worker.address() as { port: number }).port}`;
}

beforeEach(async () => {
  root = tempDir("mcops-idle-worker-");
  // Virtual minutes do not pass while the panel stand-in is between states on its real timers (a stop under way).
  clock = virtualClock(T0, { settled: () => !panel.busy() });
  taken = [];
  answer = { hibernate: false, start: false };
  hibernateAnswer = { status: 202, body: { hibernating: true } };
  panel = await startPanelStandIn({
    servers: [{ state: "offline" }],
    timings: { startMs: 20, stopMs: 20 },
    now: () => clock.now(),
  });
  discord = await startDiscordStandIn();
});

afterEach(async () => {
  scene?.close();
  scene = undefined;
  worker?.close();
  await panel.close();
  await discord.close();
  root.cleanup();
});

/** A monitor of an idle, backed-up VM on the boot BOOT, hibernating after an hour on autopilot. */
async function idleMonitor(options: { state?: Record<string, number>; runner?: typeof zxRunner } = {}) {
  const env = toolEnv(root.path);
  const etc = env.MCOPS_CONFIG_DIR as string;
  mkdirSync(etc, { recursive: true });
  mkdirSync(join(root.path, "volume", "logs"), { recursive: true });
  writeFileSync(join(etc, "webhook.env"), `WEBHOOK_URL=${discord.webhookUrl()}\n`);
  chmodSync(join(etc, "webhook.env"), 0o600);
  const calls = join(root.path, "backups.txt");
  const backup = join(root.path, "backup-stand-in");
  writeFileSync(backup, `#!/bin/sh\necho backup >> '${calls}'\n`);
  chmodSync(backup, 0o755);
  const bootIdFile = join(root.path, "boot_id");
  writeFileSync(bootIdFile, `${BOOT}\n`);
  const fields = {
    CONTROL_URL: panel.url,
    CONTROL_KEY: panel.apiKey,
    SERVER_ID: panel.server.identifier,
    WORLD_DIR: join(root.path, "volume"),
    // Nothing answers there: the game is off, the panel says offline.
    GAME_ADDRESS: "127.0.0.1:1",
    IDLE_BACKUP_COMMAND: backup,
    WORKER_URL: await startWorkerStandIn(),
    WORKER_SECRET: SECRET,
    IDLE_HIBERNATE_AFTER: "1h",
    BOOT_ID_FILE: bootIdFile,
    TPS_EVERY: "off",
    CERT_CHECK_COMMAND: "/bin/true",
  };
  const file = join(etc, "backup.env");
  writeFileSync(
    file,
    Object.entries(fields)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(""),
  );
  chmodSync(file, 0o600);
  const state = {
    bootId: BOOT,
    lastActivity: T0 - 3 * 60 * MIN,
    idleSince: T0 - 2 * 60 * MIN,
    lastBackupOk: T0 - 60 * MIN,
    // A heartbeat a minute ago: the next is not due for four more.
    heartbeatAt: T0 - MIN,
    ...options.state,
  };
  mkdirSync(env.MCOPS_STATE_DIR as string, { recursive: true });
  writeFileSync(join(env.MCOPS_STATE_DIR as string, "idle-monitor.json"), JSON.stringify(state));
  const ctx = {
    paths: resolvePaths(env),
    env,
    clock,
    stderr: { write: () => true },
    runner: options.runner ?? zxRunner,
    signal: new AbortController().signal,
  };
  return {
    monitor: createMonitor(ctx, loadSettings(ctx), false, statfsWithFree(0.5)),
    backedUp: () => existsSync(calls),
  };
}

describe("the heartbeat and the autopilot", () => {
  it("sends the heartbeat, with the boot id, before the autopilot hibernates: a /start waiting for the game wins", async () => {
    const { monitor, backedUp } = await idleMonitor();
    answer = { hibernate: false, start: true };
    const decision = await monitor.tick();
    expect(decision.error).toBeUndefined();
    expect(taken.map((t) => t.path)).toEqual(["/vm/heartbeat"]);
    expect(taken[0]?.body).toMatchObject({ serverState: "offline", bootId: BOOT });
    expect(panel.signals()).toEqual(["start"]);
    expect(backedUp()).toBe(false);
    // The group's time to join counts from now: the next poll does not hibernate.
    expect(monitor.state.idleSince).toBeUndefined();
    clock.advance(MIN);
    answer = { hibernate: false, start: false };
    await monitor.tick();
    expect(taken.map((t) => t.path)).toEqual(["/vm/heartbeat"]);
    expect(backedUp()).toBe(false);
  });

  it("hibernates on autopilot after the heartbeat, the request carrying the boot id", async () => {
    const { monitor, backedUp } = await idleMonitor();
    const decision = await monitor.tick();
    expect(decision.error).toBeUndefined();
    expect(taken.map((t) => t.path)).toEqual(["/vm/heartbeat", "/vm/hibernate"]);
    expect(taken[1]?.body).toMatchObject({ players: 0, force: false, bootId: BOOT });
    expect(backedUp()).toBe(true);
  });

  it("keeps the VM and starts the game again when the Worker refuses the hibernation for a /start it had not told", async () => {
    const { monitor, backedUp } = await idleMonitor();
    // The /start came after this poll's heartbeat was answered: the Worker's 409 says so.
    hibernateAnswer = { status: 409, body: { error: "a /start asked for the server since", start: true } };
    const decision = await monitor.tick();
    expect(taken.map((t) => t.path)).toEqual(["/vm/heartbeat", "/vm/hibernate"]);
    expect(backedUp()).toBe(true);
    expect(decision.error).toBeUndefined();
    expect(panel.signals()).toEqual(["start"]);
    // The group's time to join counts from now, and a later idle period may hibernate again.
    expect(monitor.state.idleSince).toBeUndefined();
    expect(monitor.state.hibernateAsked).toBeUndefined();
    expect(discord.messages.map((m) => m.body.embeds?.[0]?.title)).not.toContain("Server hibernating");
  });

  it("says a refusal without a /start as a failure, and leaves the game as the hibernation left it", async () => {
    const { monitor } = await idleMonitor();
    hibernateAnswer = { status: 409, body: { error: "a revive is under way" } };
    const decision = await monitor.tick();
    expect(decision.error?.message).toMatch(/^hibernation: the Worker answered 409 .*a revive is under way/);
    expect(panel.signals()).toEqual([]);
    expect(monitor.state.hibernateAsked).toBe(T0);
  });
});

describe("a boot id that cannot be read", () => {
  it("does not send the boot id the state file kept: on a revived VM that is the boot the Worker hibernated", async () => {
    const { monitor } = await idleMonitor();
    // The VM revived from the snapshot (the state file says BOOT), and its boot id cannot be read this time.
    rmSync(join(root.path, "boot_id"));
    answer = { hibernate: false, start: true };
    await monitor.tick();
    expect(taken[0]?.path).toBe("/vm/heartbeat");
    // BOOT is the boot the Worker hibernated: it refuses every request that says it (409), so /start never starts
    // the game. Not knowing the boot, the VM says none.
    expect(taken[0]?.body.bootId).toBeUndefined();
  });
});

describe("a decision that takes minutes", () => {
  it("signs the heartbeat when it is sent: after a 6-minute idle backup it is not refused as stale", async () => {
    // Played until 40 minutes ago, not backed up since: this decision runs the idle backup first, which takes 6 minutes.
    const runner: typeof zxRunner = {
      ...zxRunner,
      run: (...args: Parameters<typeof zxRunner.run>) => {
        if (args[0].endsWith("backup-stand-in")) clock.advance(6 * MIN);
        return zxRunner.run(...args);
      },
    };
    const { monitor } = await idleMonitor({
      runner,
      state: {
        lastActivity: T0 - 40 * MIN,
        idleSince: T0 - 40 * MIN,
        lastBackupOk: T0 - 60 * MIN,
        heartbeatAt: T0 - 10 * MIN,
      },
    });
    await monitor.tick();
    // The Worker takes a request at most 5 minutes old by its clock: one dated at the decision's start is refused.
    expect(taken[0]?.path).toBe("/vm/heartbeat");
  });
});

describe("a /start the VM could not carry out", () => {
  it("asks the Worker again at the next poll when starting the game failed (the panel not up yet after a boot)", async () => {
    const { monitor } = await idleMonitor();
    answer = { hibernate: false, start: true };
    panel.inject({ kind: "status", status: 502, route: "power", times: 2 });
    await monitor.tick();
    expect(panel.signals()).toEqual([]);
    // The revive waits in its game phase (10 minutes at most): the next heartbeat is not 5 minutes away.
    clock.advance(MIN);
    await monitor.tick();
    expect(taken.map((t) => t.path)).toEqual(["/vm/heartbeat", "/vm/heartbeat"]);
    expect(panel.signals()).toEqual(["start"]);
  });
});

describe("hibernation while the panel's cached answer says offline and the game runs", () => {
  it("stops the game and waits for Wings to say it stopped before the last backup and the Worker's snapshot", async () => {
    const { monitor, backedUp } = await idleMonitor();
    /** What the hibernation has done as a request reaches the panel. */
    const look = () =>
      `${backedUp() ? "backed up" : "not backed up"}, ${taken.some((t) => t.path === "/vm/hibernate") ? "hibernation asked" : "VM kept"}`;
    // The panel showed the server offline (so the autopilot saw nobody), and a /start from the panel came just after.
    scene = await startUnderCachedOffline(panel, look);
    const decision = await monitor.tick();
    expect(decision.error).toBeUndefined();
    expect(stopOrder(panel, scene)).toEqual({
      beforeStop: ["command list 204"],
      atStop: "not backed up, VM kept",
      atStopped: "not backed up, VM kept",
      atStart: undefined,
      offlineFromStoppedToStart: true,
    });
    expect(panel.signals()).toEqual(["start", "stop"]);
    expect(look()).toBe("backed up, hibernation asked");
    expect(taken.map((t) => t.path)).toEqual(["/vm/heartbeat", "/vm/hibernate"]);
    expect(readFileSync(join(root.path, "log", "mc-idle-monitor.log"), "utf8")).toMatch(
      /INFO the panel showed the server offline \(its answer is cached for 20 s\), but the game took a console command: it runs\n/,
    );
  });
});

describe("hibernation when the panel or Wings does not answer", () => {
  it("does not hibernate when the panel cannot be reached, and says so", async () => {
    const { monitor, backedUp } = await idleMonitor();
    // The game log says nobody plays: the autopilot goes on without the panel.
    writeFileSync(join(root.path, "volume", "logs", "latest.log"), "");
    await panel.close();
    const decision = await monitor.tick();
    expect(decision.error?.message).toMatch(
      /^hibernation: stopping the game failed: cannot reach the panel \(ECONNREFUSED\) after \d tries; not hibernating$/,
    );
    expect(taken.map((t) => t.path)).toEqual(["/vm/heartbeat"]);
    expect(backedUp()).toBe(false);
    // A closed stand-in for afterEach.
    panel = await startPanelStandIn();
  });

  it("does not hibernate when the panel shows offline but Wings cannot be asked about the game", async () => {
    const { monitor, backedUp } = await idleMonitor();
    // Wings does not answer the panel (down, or slower than the panel's 15 s): the panel's 504 on the console route.
    panel.inject({ kind: "wings", route: "command" });
    const decision = await monitor.tick();
    expect(decision.error?.message).toMatch(
      /^hibernation: stopping the game failed: the panel could not get an answer from Wings: no answer .*; not hibernating$/,
    );
    expect(taken.map((t) => t.path)).toEqual(["/vm/heartbeat"]);
    expect(backedUp()).toBe(false);
    expect(panel.signals()).toEqual([]);
  });
});
