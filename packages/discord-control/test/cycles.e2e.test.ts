import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createConnection, createServer, type Server } from "node:net";
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
} from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RunningWorker, startWorker, workerVars } from "./worker.ts";

/**
 * A month left alone, in two cycles: nobody touches anything but Discord (/start). The built idle monitor (`--once`,
 * as its timer runs it) is the VM, with a new kernel boot id each time a VM is made from the snapshot; the Worker runs
 * in workerd. The game answers only while the panel says it runs (a VM that is destroyed, or whose game is stopped,
 * does not answer).
 */
const IDLE_MONITOR = fileURLToPath(new URL("../../idle-monitor/dist/idle-monitor.mjs", import.meta.url));
const SECRET = "0123456789abcdef0123456789abcdef-test-only";
const PLAY = "play.example.co.uk";
const KEEP_SNAPSHOTS = 1;

let dir: TempDir;
let app: DiscordAppStandIn;
let channel: DiscordStandIn;
let game: GameServer;
let gate: Server;
let panel: PanelStandIn;
let digitalocean: DigitalOceanStandIn;
let cloudflare: CloudflareStandIn;
let worker: RunningWorker;
let env: NodeJS.ProcessEnv;
let bootIdFile: string;

beforeEach(async () => {
  dir = tempDir("mcops-cycles-");
  [app, channel, game] = await Promise.all([startDiscordAppStandIn(), startDiscordStandIn(), startGameServer()]);
  panel = await startPanelStandIn({ servers: [{ state: "running" }], timings: { startMs: 50, stopMs: 50 } });
  // The game's address: it answers while the game runs on a VM that is there.
  gate = createServer((socket) => {
    if (panel.state() !== "running" || digitalocean.droplets().length === 0) {
      socket.destroy();
      return;
    }
    const upstream = createConnection({ host: "127.0.0.1", port: game.port });
    socket.pipe(upstream).pipe(socket);
    upstream.on("error", () => socket.destroy());
    socket.on("error", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => gate.listen(0, "127.0.0.1", () => resolve()));
  const gameAddress = `127.0.0.1:${(gate.address() as { port: number }).port}`;
  digitalocean = await startDigitalOceanStandIn({
    droplets: [{ name: "mc", size: "s-2vcpu-4gb", region: "fra1", tags: ["mcops"], sizeGigabytes: 30 }],
    timings: { createMs: 300, powerOnMs: 100, shutdownMs: 100, snapshotMs: 200 },
  });
  cloudflare = await startCloudflareStandIn({
    zones: [{ name: "example.co.uk" }],
    records: [{ zone: "example.co.uk", name: PLAY, content: "198.51.100.20", proxied: false }],
  });
  worker = await startWorker(
    workerVars(
      { app, digitalocean, cloudflare, gameAddress, secret: SECRET },
      // START_HOLD_MS as deployed (15 minutes): once the revived VM has heard the /start, its own 2 s idle clock decides.
      { KEEP_SNAPSHOTS: String(KEEP_SNAPSHOTS) },
    ),
  );
  env = toolEnv(dir.path);
  const etc = env.MCOPS_CONFIG_DIR as string;
  mkdirSync(etc, { recursive: true });
  writeFileSync(join(etc, "webhook.env"), `WEBHOOK_URL=${channel.webhookUrl()}\n`);
  chmodSync(join(etc, "webhook.env"), 0o600);
  const backup = join(dir.path, "backup-stand-in");
  writeFileSync(backup, `#!/bin/sh\necho backup >> '${join(dir.path, "backups.txt")}'\n`);
  chmodSync(backup, 0o755);
  mkdirSync(join(dir.path, "volume", "logs"), { recursive: true });
  bootIdFile = join(dir.path, "boot_id");
  writeFileSync(bootIdFile, "3b0c1f9e-2a4d-4c55-8e0b-7d9f6a1e2b01\n");
  const settings = {
    BOOT_ID_FILE: bootIdFile,
    CONTROL_URL: panel.url,
    CONTROL_KEY: panel.apiKey,
    SERVER_ID: panel.server.identifier,
    WORLD_DIR: join(dir.path, "volume"),
    GAME_ADDRESS: gameAddress,
    IDLE_BACKUP_COMMAND: backup,
    WORKER_URL: worker.url,
    WORKER_SECRET: SECRET,
    TPS_EVERY: "off",
    // A month's waits, test-short: backed up after 1 s empty, hibernated after 2 s, a heartbeat every second.
    IDLE_AFTER: "1s",
    IDLE_COOLDOWN: "1s",
    IDLE_HIBERNATE_AFTER: "2s",
    HEARTBEAT_EVERY: "1s",
  };
  const file = join(etc, "backup.env");
  writeFileSync(
    file,
    Object.entries(settings)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(""),
  );
  chmodSync(file, 0o600);
});

afterEach(async () => {
  await worker.close();
  await new Promise((resolve) => gate.close(resolve));
  await game.close();
  await Promise.all([app.close(), channel.close(), panel.close(), digitalocean.close(), cloudflare.close()]);
  dir.cleanup();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const status = async () =>
  (await app.command(`${worker.url}/interactions`, { name: "status" })).body?.data?.content ?? "";

/** The droplet list, looked at: never more than one. */
function droplets(): number {
  const n = digitalocean.droplets().length;
  expect(n, "droplets on the account").toBeLessThanOrEqual(1);
  return n;
}

/** One run of the idle monitor's timer on the VM. */
async function tick(): Promise<void> {
  const run = await runTool(IDLE_MONITOR, ["--once"], { env });
  expect(run.code, run.stderr).toBe(0);
  droplets();
}

/** The VM's timer runs until a heartbeat has told the Worker what /status is to say (one every HEARTBEAT_EVERY). */
async function tickUntilStatus(expected: RegExp): Promise<void> {
  // Bounded: 20 runs of the timer about 0.3 s apart.
  for (let i = 0; i < 20 && !expected.test(await status()); i++) {
    await tick();
    await sleep(300);
  }
  expect(await status()).toMatch(expected);
}

/** A player plays a while and leaves; then the VM's timer runs until it has hibernated itself on autopilot. */
async function playThenIdleToHibernation(): Promise<void> {
  const steve = await game.join("Steve");
  try {
    await tickUntilStatus(/^🟢 Running\. 1 player online\./);
  } finally {
    await steve.leave();
  }
  const stops = panel.signals().filter((s) => s === "stop").length;
  // Bounded: 60 runs of the timer about 0.5 s apart (idle 2 s, then a backup, then the hibernation asked).
  for (let i = 0; i < 60 && panel.signals().filter((s) => s === "stop").length === stops; i++) {
    await tick();
    await sleep(500);
  }
  expect(panel.signals().filter((s) => s === "stop")).toHaveLength(stops + 1);
  // Bounded: 600 looks 100 ms apart while the Worker snapshots and destroys the droplet.
  for (let i = 0; i < 600 && !/^💤/.test(await status()); i++) {
    droplets();
    await sleep(100);
  }
  expect(await status()).toMatch(/^💤 Hibernated since/);
  expect(droplets()).toBe(0);
  const ours = digitalocean.snapshots().filter((s) => s.name.startsWith(`mcops-${PLAY}-`));
  expect(ours.length).toBeGreaterThanOrEqual(1);
  expect(ours.length).toBeLessThanOrEqual(KEEP_SNAPSHOTS);
}

/** /start from Discord; the VM made from the snapshot boots anew and its timer runs until the reply ends. */
async function startFromDiscord(bootId: string): Promise<void> {
  const start = await app.command(`${worker.url}/interactions`, { name: "start", roles: [app.roles.start] });
  expect(start.body?.type).toBe(5);
  // Bounded: 600 looks 100 ms apart until the revive has made the VM.
  for (let i = 0; i < 600 && droplets() === 0; i++) await sleep(100);
  expect(droplets()).toBe(1);
  writeFileSync(bootIdFile, `${bootId}\n`);
  // Bounded: 60 runs of the timer about 0.5 s apart until the reply shows the outcome.
  for (let i = 0; i < 60 && !/^Server is up at /.test(app.reply(start.token) ?? ""); i++) {
    await tick();
    await sleep(500);
  }
  expect(app.reply(start.token)).toMatch(new RegExp(`^Server is up at ${PLAY.replaceAll(".", "\\.")} \\(\\d+ s\\)$`));
  expect(panel.state()).toBe("running");
  expect(droplets()).toBe(1);
  await tickUntilStatus(/^🟢 Running\. Nobody is online\./);
}

describe("two unattended cycles", () => {
  it("plays, idles, hibernates on autopilot, wakes for /start, and does it all again: one droplet throughout", async () => {
    // Besides the looks of the test, the droplet list every 50 ms throughout.
    let most = 0;
    const sampler = setInterval(() => {
      most = Math.max(most, digitalocean.droplets().length);
    }, 50);
    try {
      await tick();
      await playThenIdleToHibernation();
      await startFromDiscord("9d2e4a70-5c1b-4f3e-a6d8-0e1f2a3b4c5d");
      await playThenIdleToHibernation();
      await startFromDiscord("5f1a2b3c-4d5e-4f60-8a7b-9c0d1e2f3a4b");
    } finally {
      clearInterval(sampler);
    }
    expect(most).toBe(1);
    expect(panel.signals()).toEqual(["stop", "start", "stop", "start"]);
    expect(readFileSync(join(dir.path, "backups.txt"), "utf8").split("\n").filter(Boolean).length).toBeGreaterThan(0);
  }, 240_000);
});
