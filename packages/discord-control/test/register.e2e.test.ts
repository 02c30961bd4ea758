import { spawnSync } from "node:child_process";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type DiscordAppStandIn, runTool, startDiscordAppStandIn, type TempDir, tempDir } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { COMMANDS } from "../src/register.ts";

/** The built `discord-control register` against the Discord application stand-in; `wrangler deploy --dry-run`. */
const BIN = fileURLToPath(new URL("../dist/discord-control.mjs", import.meta.url));
let discord: DiscordAppStandIn;
let dir: TempDir;

beforeEach(async () => {
  discord = await startDiscordAppStandIn();
  dir = tempDir("mcops-register-");
});
afterEach(async () => {
  await discord.close();
  dir.cleanup();
});

function localEnv(lines: string[]): string {
  const file = join(dir.path, ".env");
  writeFileSync(file, `${lines.join("\n")}\n`);
  chmodSync(file, 0o600);
  return file;
}

describe("discord-control register", () => {
  it("puts /start, /status and /stop into the application", async () => {
    const file = localEnv([
      `DISCORD_APPLICATION_ID=${discord.applicationId}`,
      `DISCORD_BOT_TOKEN=${discord.botToken}`,
      `DISCORD_API_URL=${discord.api}`,
    ]);
    const run = await runTool(BIN, ["register", "--config", file], { env: { ...process.env, HOME: dir.path } });
    expect(run).toMatchObject({
      code: 0,
      stdout: "Registered /start, /status, /stop globally (Discord shows them within a minute).\n",
    });
    expect(discord.commands).toEqual(COMMANDS.map((c) => expect.objectContaining(c)));
  });

  it("registers the commands for guilds only, guild installs only, /stop for administrators", async () => {
    const file = localEnv([
      `DISCORD_APPLICATION_ID=${discord.applicationId}`,
      `DISCORD_BOT_TOKEN=${discord.botToken}`,
      `DISCORD_API_URL=${discord.api}`,
    ]);
    const run = await runTool(BIN, ["register", "--config", file], { env: { ...process.env, HOME: dir.path } });
    expect(run.code).toBe(0);
    const put = discord.commands as Array<Record<string, unknown>>;
    expect(put.map((c) => [c.name, c.contexts, c.integration_types, c.default_member_permissions])).toEqual([
      ["start", [0], [0], null],
      ["status", [0], [0], null],
      ["stop", [0], [0], "0"],
    ]);
  });

  it("says in one line that the token is refused (exit 1), or that the id is missing (exit 78)", async () => {
    const file = localEnv([
      `DISCORD_APPLICATION_ID=${discord.applicationId}`,
      "DISCORD_BOT_TOKEN=wrong",
      `DISCORD_API_URL=${discord.api}`,
    ]);
    const refused = await runTool(BIN, ["register", "--config", file], { env: { ...process.env, HOME: dir.path } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^discord-control: Discord answered 401 .*DISCORD_BOT_TOKEN is not the application's bot token.*\n$/,
    );
    expect(refused.stderr).not.toContain("wrong");
    const missing = localEnv(["DISCORD_BOT_TOKEN=x"]);
    const run = await runTool(BIN, ["register", "--config", missing], { env: { ...process.env, HOME: dir.path } });
    expect(run.code).toBe(78);
    expect(run.stderr).toMatch(/^discord-control: DISCORD_APPLICATION_ID .*\n$/);
    expect(discord.commands).toEqual([]);
  });
});

describe("wrangler deploy --dry-run", () => {
  it("bundles the Worker with its Durable Object and no secret in its settings", () => {
    const wrangler = join(
      dirname(createRequire(import.meta.url).resolve("wrangler/package.json")),
      "bin",
      "wrangler.js",
    );
    const out = join(dir.path, "out");
    const run = spawnSync(process.execPath, [wrangler, "deploy", "--dry-run", "--outdir", out], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      env: { ...process.env, CI: "1", WRANGLER_SEND_METRICS: "false", XDG_CONFIG_HOME: join(dir.path, "config") },
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/env\.CONTROL \(ServerControl\)\s+Durable Object/);
    const bundle = readFileSync(join(out, "index.js"), "utf8");
    expect(bundle).toMatch(/ServerControl = class extends DurableObject/);
    expect(bundle).not.toMatch(/from ["']node:/);
    const toml = readFileSync(new URL("../wrangler.toml", import.meta.url), "utf8");
    expect(toml).not.toMatch(/^(DISCORD_PUBLIC_KEY|VM_SECRET|DIGITALOCEAN_ACCESS_TOKEN|CLOUDFLARE_API_TOKEN)\s*=/m);
  });
});
