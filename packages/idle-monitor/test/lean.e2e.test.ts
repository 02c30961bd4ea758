import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type DiscordStandIn,
  moduleProbe,
  type PanelStandIn,
  runTool,
  startDiscordStandIn,
  startPanelStandIn,
  type TempDir,
  tempDir,
  toolEnv,
} from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../dist/idle-monitor.mjs", import.meta.url));

let root: TempDir;
let panel: PanelStandIn;
let discord: DiscordStandIn;

beforeEach(async () => {
  root = tempDir("mcops-idle-lean-");
  panel = await startPanelStandIn({ servers: [{ state: "running" }] });
  discord = await startDiscordStandIn();
});
afterEach(async () => {
  await panel.close();
  await discord.close();
  root.cleanup();
});

describe("idle-monitor, in memory", () => {
  it("asks the panel and posts to Discord without loading fetch's undici (16 MiB it would carry for days)", async () => {
    const env = toolEnv(root.path);
    const etc = env.MCOPS_CONFIG_DIR as string;
    const volume = join(root.path, "volume");
    mkdirSync(join(volume, "logs"), { recursive: true });
    // A log it will not read: the monitor says so in the channel, once.
    symlinkSync("/dev/zero", join(volume, "logs", "latest.log"));
    mkdirSync(etc, { recursive: true });
    const files = {
      "backup.env": `CONTROL_URL=${panel.url}\nCONTROL_KEY=${panel.apiKey}\nSERVER_ID=${panel.server.identifier}\nWORLD_DIR=${volume}\nGAME_ADDRESS=127.0.0.1:1\nDISK_WARN=1%\nDISK_CRITICAL=0.5%\n`,
      "webhook.env": `WEBHOOK_URL=${discord.webhookUrl()}\n`,
    };
    for (const [name, text] of Object.entries(files)) {
      writeFileSync(join(etc, name), text);
      chmodSync(join(etc, name), 0o600);
    }
    const probe = moduleProbe(root.path, env);
    const run = await runTool(BIN, ["--once"], { env: probe.env });
    expect(run.code).toBe(0);
    expect(panel.calls.length).toBeGreaterThan(0);
    expect(discord.messages.map((m) => m.body.embeds[0].title)).toEqual(["Game log not readable"]);
    const loaded = probe.loaded();
    expect(loaded).toContain("NativeModule http");
    expect(loaded).not.toContain("NativeModule internal/deps/undici/undici");
  });
});
