import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { systemClock } from "@mcops/core";
import type { Runner } from "@mcops/core/runner";
import {
  type CloudflareStandIn,
  type CloudflareStandInOptions,
  type DigitalOceanStandIn,
  type DigitalOceanStandInOptions,
  type DiscordStandIn,
  type GameServer,
  type PanelStandIn,
  type PanelStandInOptions,
  startCloudflareStandIn,
  startDigitalOceanStandIn,
  startDiscordStandIn,
  startGameServer,
  startPanelStandIn,
  type TempDir,
  tempDir,
} from "@mcops/testkit";
import { type DnsOptions, runDns } from "../src/commands/dns.ts";
import { type HibernateOptions, runHibernate } from "../src/commands/hibernate.ts";
import { type ReviveOptions, runRevive } from "../src/commands/revive.ts";
import type { Ask, LocalContext } from "../src/local.ts";
import { dnsSettings, hibernateSettings, reviveSettings } from "../src/settings.ts";

/**
 * The operator's world for hibernate and revive: DigitalOcean with the game VM (tagged mcops), Cloudflare with the
 * zone example.co.uk and its two A records on the old address, the panel with a running server, a real protocol game
 * server, a Discord webhook, and a local .env (mode 600) in a temporary directory.
 */
export interface World {
  dir: TempDir;
  digitalocean: DigitalOceanStandIn;
  cloudflare: CloudflareStandIn;
  panel: PanelStandIn;
  game: GameServer;
  discord: DiscordStandIn;
  envFile: string;
  out: string[];
  /** What the tools wrote on stderr. */
  err: string[];
  ssh: string[][];
  sshExit: number;
  runner: Runner;
  ctx(): LocalContext;
  close(): Promise<void>;
}

export const PANEL = "panel.example.co.uk";
export const PLAY = "play.example.co.uk";
export const OLD_IP = "198.51.100.20";

export async function startWorld(
  env: Record<string, string> = {},
  seed: Pick<DigitalOceanStandInOptions, "snapshots" | "droplets"> = {},
  cloudflareOptions: Pick<CloudflareStandInOptions, "tokenOwner"> = {},
  panelOptions: Pick<PanelStandInOptions, "timings" | "servers"> = {},
  /** Another world's DigitalOcean (one account, two servers): not seeded, not closed by this world. */
  shared: { digitalocean?: DigitalOceanStandIn } = {},
): Promise<World> {
  const dir = tempDir("mcops-revive-");
  const digitalocean = shared.digitalocean ?? (await startDigitalOcean(seed));
  const cloudflare = await startCloudflareStandIn({
    ...cloudflareOptions,
    zones: [{ name: "example.co.uk" }],
    records: [
      { zone: "example.co.uk", name: PANEL, content: OLD_IP, proxied: true },
      { zone: "example.co.uk", name: PLAY, content: OLD_IP, proxied: false },
    ],
  });
  const panel = await startPanelStandIn({
    servers: [{ state: "running" }],
    timings: { startMs: 50, stopMs: 50 },
    ...panelOptions,
  });
  const game = await startGameServer();
  const discord = await startDiscordStandIn();
  const envFile = join(dir.path, ".env");
  const fields: Record<string, string> = {
    DIGITALOCEAN_ACCESS_TOKEN: digitalocean.token,
    CLOUDFLARE_API_TOKEN: cloudflare.token,
    CONTROL_KEY: panel.apiKey,
    SERVER_ID: panel.server.identifier,
    SERVER_ADDR: `${PLAY}:25565`,
    PANEL_URL: `https://${PANEL}`,
    CONTROL_URL: panel.url,
    GAME_ADDRESS: game.address,
    WEBHOOK_URL: discord.webhookUrl(),
    DIGITALOCEAN_API_URL: digitalocean.url,
    CLOUDFLARE_API_URL: cloudflare.url,
    ...env,
  };
  writeFileSync(
    envFile,
    Object.entries(fields)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(""),
  );
  chmodSync(envFile, 0o600);
  const out: string[] = [];
  const err: string[] = [];
  const world: World = {
    dir,
    digitalocean,
    cloudflare,
    panel,
    game,
    discord,
    envFile,
    out,
    err,
    ssh: [],
    sshExit: 0,
    runner: {
      async run(command, args) {
        world.ssh.push([command, ...args]);
        return {
          code: world.sshExit,
          signal: null,
          stdout: "",
          stderr: world.sshExit ? "backup: restic failed\n" : "",
        };
      },
    },
    ctx: () => ({
      envFile,
      env: { MCOPS_RUN_DIR: join(dir.path, "run") },
      clock: systemClock,
      stdout: { write: (text: string) => void out.push(text) },
      stderr: { write: (text: string) => void err.push(text) },
      pollMs: 10,
      // Generous against the stand-in's 30-80 ms actions, so that a busy machine does not change the story.
      timeouts: { shutdownMs: 3000, powerOffMs: 3000, snapshotMs: 2000, activeMs: 5000 },
    }),
    async close() {
      await game.close();
      await Promise.all([
        shared.digitalocean ? undefined : digitalocean.close(),
        cloudflare.close(),
        panel.close(),
        discord.close(),
      ]);
      dir.cleanup();
    },
  };
  return world;
}

/** The account with the game VM `mc` (tagged mcops and minecraft, 30 GB snapshots), unless `seed` says other droplets. */
export function startDigitalOcean(
  seed: Pick<DigitalOceanStandInOptions, "snapshots" | "droplets"> = {},
): Promise<DigitalOceanStandIn> {
  return startDigitalOceanStandIn({
    droplets: [{ name: "mc", size: "s-2vcpu-4gb", region: "fra1", tags: ["mcops", "minecraft"], sizeGigabytes: 30 }],
    ...seed,
    timings: { createMs: 80, shutdownMs: 60, powerOffMs: 30, powerOnMs: 30, snapshotMs: 80 },
  });
}

/** Polls `test` every 10 ms until it holds; fails after `timeoutMs`. */
export async function waitFor(test: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * The commands as cli.ts and hibernate-cli.ts run them: their settings read first with the same loaders (--keep and
 * --wait with them; --wait's default is the command line's), then the command with them.
 */
export async function hibernate(
  ctx: LocalContext & { ask?: Ask | undefined },
  { keep, ...options }: HibernateOptions & { keep?: number | undefined } = {},
): Promise<number> {
  return runHibernate(ctx, hibernateSettings(ctx, keep), options);
}

export async function revive(
  ctx: LocalContext,
  { wait = "10m", ...options }: ReviveOptions & { wait?: string } = {},
): Promise<number> {
  return runRevive(ctx, reviveSettings(ctx, wait), options);
}

export async function dns(ctx: LocalContext, options: DnsOptions): Promise<number> {
  return runDns(ctx, dnsSettings(ctx), options);
}
