import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type CloudflareStandIn,
  type DigitalOceanStandIn,
  type DiscordAppStandIn,
  type DiscordStandIn,
  type GameServer,
  type PanelStandIn,
  runTool,
  startCloudflareStandIn,
  startDigitalOceanStandIn,
  startDiscordAppStandIn,
  startDiscordStandIn,
  startGameServer,
  startPanelStandIn,
  type TempDir,
  tempDir,
  toolEnv,
  waitUntil,
} from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RunningWorker, startWorker, workerVars } from "./worker.ts";

/**
 * The VM's side as it runs: the built idle monitor (`--once`, its backup.env, its state file) talks to the Worker in
 * workerd: heartbeats that /status shows, and hibernation on autopilot that ends with the droplet destroyed.
 */
const IDLE_MONITOR = fileURLToPath(new URL("../../idle-monitor/dist/idle-monitor.mjs", import.meta.url));
const SECRET = "0123456789abcdef0123456789abcdef-test-only";

let dir: TempDir;
let app: DiscordAppStandIn;
let channel: DiscordStandIn;
let game: GameServer;
let panel: PanelStandIn;
let digitalocean: DigitalOceanStandIn;
let cloudflare: CloudflareStandIn;
let worker: RunningWorker;
let env: NodeJS.ProcessEnv;
let calls: string;
/** The VM's kernel boot id, as the idle monitor reads it (BOOT_ID_FILE). */
let bootIdFile: string;

beforeEach(async () => {
  dir = tempDir("mcops-vm-");
  [app, channel, game] = await Promise.all([startDiscordAppStandIn(), startDiscordStandIn(), startGameServer()]);
  panel = await startPanelStandIn({ servers: [{ state: "running" }], timings: { startMs: 50, stopMs: 50 } });
  digitalocean = await startDigitalOceanStandIn({
    droplets: [{ name: "mc", size: "s-2vcpu-4gb", region: "fra1", tags: ["mcops"], sizeGigabytes: 30 }],
    timings: { shutdownMs: 100, snapshotMs: 200 },
  });
  cloudflare = await startCloudflareStandIn({ zones: [{ name: "example.co.uk" }] });
  worker = await startWorker(workerVars({ app, digitalocean, cloudflare, gameAddress: game.address, secret: SECRET }));
  env = toolEnv(dir.path);
  const etc = env.MCOPS_CONFIG_DIR as string;
  mkdirSync(etc, { recursive: true });
  writeFileSync(join(etc, "webhook.env"), `WEBHOOK_URL=${channel.webhookUrl()}\n`);
  chmodSync(join(etc, "webhook.env"), 0o600);
  calls = join(dir.path, "backups.txt");
  const backup = join(dir.path, "backup-stand-in");
  writeFileSync(backup, `#!/bin/sh\necho backup >> '${calls}'\n`);
  chmodSync(backup, 0o755);
  mkdirSync(join(dir.path, "volume", "logs"), { recursive: true });
  bootIdFile = join(dir.path, "boot_id");
  writeFileSync(bootIdFile, "3b0c1f9e-2a4d-4c55-8e0b-7d9f6a1e2b01\n");
  backupEnv({
    BOOT_ID_FILE: bootIdFile,
    CONTROL_URL: panel.url,
    CONTROL_KEY: panel.apiKey,
    SERVER_ID: panel.server.identifier,
    WORLD_DIR: join(dir.path, "volume"),
    GAME_ADDRESS: game.address,
    IDLE_BACKUP_COMMAND: backup,
    WORKER_URL: worker.url,
    WORKER_SECRET: SECRET,
    TPS_EVERY: "off",
  });
});

afterEach(async () => {
  await worker.close();
  await game.close();
  await Promise.all([app.close(), channel.close(), panel.close(), digitalocean.close(), cloudflare.close()]);
  dir.cleanup();
});

function backupEnv(fields: Record<string, string>): void {
  const file = join(env.MCOPS_CONFIG_DIR as string, "backup.env");
  const old = existsSync(file) ? readFileSync(file, "utf8") : "";
  writeFileSync(
    file,
    old +
      Object.entries(fields)
        .map(([k, v]) => `${k}=${v}\n`)
        .join(""),
  );
  chmodSync(file, 0o600);
}

const status = async () =>
  (await app.command(`${worker.url}/interactions`, { name: "status" })).body?.data?.content ?? "";

describe("the VM and the Worker", () => {
  it("sends a signed heartbeat that /status shows, with the players", async () => {
    const steve = await game.join("Steve");
    try {
      const run = await runTool(IDLE_MONITOR, ["--once"], { env });
      expect(run.code, run.stderr).toBe(0);
      // The protocol server sends no sample of names: the count is what the Worker shows.
      expect(await status()).toBe("🟢 Running. 1 player online.");
    } finally {
      await steve.leave();
    }
  });

  it("hibernates on autopilot: nobody played for IDLE_HIBERNATE_AFTER, backed up: game stopped, last backup, VM destroyed", async () => {
    const now = Date.now();
    const state = { lastActivity: now - 3 * 3600_000, idleSince: now - 2 * 3600_000, lastBackupOk: now - 3600_000 };
    mkdirSync(env.MCOPS_STATE_DIR as string, { recursive: true });
    writeFileSync(join(env.MCOPS_STATE_DIR as string, "idle-monitor.json"), JSON.stringify(state));
    backupEnv({ IDLE_HIBERNATE_AFTER: "1h" });
    const run = await runTool(IDLE_MONITOR, ["--once"], { env });
    expect(run.code, run.stderr).toBe(0);
    expect(panel.signals()).toEqual(["stop"]);
    expect(readFileSync(calls, "utf8")).toBe("backup\n");
    await waitUntil(() => digitalocean.droplets().length === 0, "the droplet destroyed", 60_000);
    await waitUntil(() => digitalocean.snapshots().length === 1, "the snapshot kept", 10_000);
    for (let i = 0; i < 100 && !/^💤/.test(await status()); i++) await new Promise((r) => setTimeout(r, 100));
    expect(await status()).toMatch(/^💤 Hibernated since <t:\d+:R>\. Asleep it costs \$\d+\.\d\d a month/);
    await channel.waitForMessages(1, 10_000);
    expect(channel.messages.map((m) => m.body.embeds[0].title)).toContain("Server hibernating");
  });

  it("starts the game for /start on the VM revived after an autopilot hibernation: a new boot starts clean", async () => {
    const now = Date.now();
    const state = { lastActivity: now - 3 * 3600_000, idleSince: now - 2 * 3600_000, lastBackupOk: now - 3600_000 };
    mkdirSync(env.MCOPS_STATE_DIR as string, { recursive: true });
    writeFileSync(join(env.MCOPS_STATE_DIR as string, "idle-monitor.json"), JSON.stringify(state));
    backupEnv({ IDLE_HIBERNATE_AFTER: "1h" });
    const asleep = await runTool(IDLE_MONITOR, ["--once"], { env });
    expect(asleep.code, asleep.stderr).toBe(0);
    await waitUntil(() => digitalocean.droplets().length === 0, "the droplet destroyed", 60_000);
    // The VM is gone, and its game with it: nothing answers where the Worker looks for the game.
    await game.close();
    game = await startGameServer();
    const start = await app.command(`${worker.url}/interactions`, { name: "start", roles: [app.roles.start] });
    expect(start.body?.type).toBe(5);
    await waitUntil(
      () => /Waiting for the game to answer/.test(app.reply(start.token) ?? ""),
      "the revive waiting for the game",
      60_000,
    );
    // The VM made from the snapshot: a new boot, with the state file the snapshot kept ("idle for 2 h").
    writeFileSync(bootIdFile, "9d2e4a70-5c1b-4f3e-a6d8-0e1f2a3b4c5d\n");
    const revived = await runTool(IDLE_MONITOR, ["--once"], { env });
    expect(revived.code, revived.stderr).toBe(0);
    expect(panel.signals()).toEqual(["stop", "start"]);
    // No second backup, no hibernation asked of a Worker busy reviving.
    expect(readFileSync(calls, "utf8")).toBe("backup\n");
    const log = readFileSync(join(dir.path, "log", "mc-idle-monitor.log"), "utf8");
    expect(log).toMatch(/INFO a new boot \(9d2e4a70-[^)]*\): the idle period starts again/);
    expect(log).not.toMatch(/hibernation: the Worker answered/);
  }, 120_000);

  it("does not stop the game for a /stop without force when someone joined since", async () => {
    await runTool(IDLE_MONITOR, ["--once"], { env }); // a heartbeat: nobody online
    const stop = await app.command(`${worker.url}/interactions`, { name: "stop", roles: [app.roles.admin] });
    expect(stop.body?.data?.content).toMatch(
      /^Asked the VM to hibernate.* If someone is playing by then, it does not\.$/,
    );
    const steve = await game.join("Steve");
    try {
      const state = join(env.MCOPS_STATE_DIR as string, "idle-monitor.json");
      writeFileSync(state, JSON.stringify({ ...JSON.parse(readFileSync(state, "utf8")), heartbeatAt: 0 }));
      const run = await runTool(IDLE_MONITOR, ["--once"], { env });
      expect(run.code, run.stderr).toBe(0);
      expect(panel.signals()).toEqual([]);
      expect(existsSync(calls)).toBe(false);
      expect(readFileSync(join(dir.path, "log", "mc-idle-monitor.log"), "utf8")).toMatch(
        /INFO \/stop asked to hibernate, but 1 player is online now: not hibernating/,
      );
    } finally {
      await steve.leave();
    }
  });

  it("asks a Worker that refuses at most once per 30 minutes: one stop, one backup, not one per poll", async () => {
    const refusing = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        const hibernate = req.url === "/vm/hibernate";
        res.writeHead(hibernate ? 503 : 200, { "content-type": "application/json" });
        res.end(hibernate ? '{"error":"down"}' : '{"hibernate":false,"start":false}');
      });
    });
    await new Promise<void>((resolve) => refusing.listen(0, "127.0.0.1", () => resolve()));
    try {
      const now = Date.now();
      const state = { lastActivity: now - 3 * 3600_000, idleSince: now - 2 * 3600_000, lastBackupOk: now - 3600_000 };
      mkdirSync(env.MCOPS_STATE_DIR as string, { recursive: true });
      writeFileSync(join(env.MCOPS_STATE_DIR as string, "idle-monitor.json"), JSON.stringify(state));
      const port = (refusing.address() as { port: number }).port;
      backupEnv({ IDLE_HIBERNATE_AFTER: "1h", WORKER_URL: `http://127.0.0.1:${port}` });
      const runs = [];
      for (let i = 0; i < 3; i++) runs.push(await runTool(IDLE_MONITOR, ["--once"], { env }));
      expect(runs[0]?.stderr).toBe('idle-monitor: hibernation: the Worker answered 503 {"error":"down"}\n');
      expect(readFileSync(calls, "utf8")).toBe("backup\n");
      expect(panel.signals()).toEqual(["stop"]);
    } finally {
      refusing.close();
    }
  });

  it("says in one line that IDLE_HIBERNATE_AFTER needs the Worker, and that the secret is too short (exit 78)", async () => {
    const file = join(env.MCOPS_CONFIG_DIR as string, "backup.env");
    writeFileSync(
      file,
      readFileSync(file, "utf8")
        .replace(/^WORKER_SECRET=.*\n/m, "")
        .concat("IDLE_HIBERNATE_AFTER=1h\n"),
    );
    const alone = await runTool(IDLE_MONITOR, ["--once"], { env });
    expect(alone.code).toBe(78);
    expect(alone.stderr).toMatch(/^idle-monitor: IDLE_HIBERNATE_AFTER needs both WORKER_URL and WORKER_SECRET .*\n$/);
    backupEnv({ WORKER_SECRET: "short" });
    const short = await runTool(IDLE_MONITOR, ["--once"], { env });
    expect(short.code).toBe(78);
    expect(short.stderr).toMatch(/^idle-monitor: WORKER_SECRET is too short \(5 characters\).*openssl rand -hex 32\n$/);
  });
});
