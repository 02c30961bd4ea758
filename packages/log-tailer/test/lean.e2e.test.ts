import { appendFileSync, chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type DiscordStandIn,
  moduleProbe,
  startDiscordStandIn,
  startTool,
  type TempDir,
  tempDir,
  toolEnv,
  waitUntil,
} from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../dist/log-tailer.mjs", import.meta.url));
const UNDICI = "NativeModule internal/deps/undici/undici";

let root: TempDir;
let discord: DiscordStandIn;

beforeEach(async () => {
  root = tempDir("mcops-tailer-lean-");
  discord = await startDiscordStandIn();
  mkdirSync(join(root.path, "etc"));
  writeFileSync(join(root.path, "etc", "webhook.env"), `WEBHOOK_URL=${discord.webhookUrl()}\n`);
  chmodSync(join(root.path, "etc", "webhook.env"), 0o600);
});
afterEach(async () => {
  await discord.close();
  root.cleanup();
});

describe("log-tailer, the service, in memory", () => {
  it("posts to Discord without loading fetch's undici (16 MiB it would carry for days), nor child_process", async () => {
    const log = join(root.path, "latest.log");
    writeFileSync(log, "");
    const probe = moduleProbe(root.path, toolEnv(root.path));
    const { child, done } = startTool(BIN, ["--file", log], { env: probe.env });
    const toolLog = () => {
      try {
        return readFileSync(join(root.path, "log", "mc-log-tailer.log"), "utf8");
      } catch {
        return "";
      }
    };
    await waitUntil(() => toolLog().includes("following "), "the tailer to follow the log");
    appendFileSync(log, '[12:00:00] [Server thread/INFO]: Done (2.585s)! For help, type "help"\n');
    await discord.waitForMessages(1);
    child.kill("SIGTERM");
    expect((await done).code).toBe(0);
    const loaded = probe.loaded();
    expect(loaded).toContain("NativeModule http");
    expect(loaded).not.toContain(UNDICI);
    expect(loaded).not.toContain("NativeModule child_process");
  });
});
