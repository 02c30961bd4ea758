import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  runTool,
  startDiscordStandIn,
  startGameServer,
  startPanelStandIn,
  type ToolRun,
  toolEnv,
} from "@mcops/testkit";
import { describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../dist/restart-with-warning.mjs", import.meta.url));

function run(args: string[], env: NodeJS.ProcessEnv): Promise<ToolRun> {
  return runTool(BIN, args, { env });
}

describe("restart-with-warning (built executable, real clock)", () => {
  it("counts down 3 seconds in game, restarts, waits for the server and reports", async () => {
    const root = mkdtempSync(join(tmpdir(), "mcops-restart-e2e-"));
    const panel = await startPanelStandIn({ servers: [{ state: "running" }], timings: { startMs: 200, stopMs: 200 } });
    const discord = await startDiscordStandIn();
    const game = await startGameServer();
    try {
      await game.join("Steve");
      const env = toolEnv(root);
      mkdirSync(env.MCOPS_CONFIG_DIR as string, { recursive: true });
      const backupEnv = join(env.MCOPS_CONFIG_DIR as string, "backup.env");
      writeFileSync(
        backupEnv,
        `CONTROL_URL=${panel.url}\nCONTROL_KEY=${panel.apiKey}\nSERVER_ID=${panel.server.identifier}\nGAME_ADDRESS=${game.address}\n`,
      );
      chmodSync(backupEnv, 0o600);
      const webhookEnv = join(env.MCOPS_CONFIG_DIR as string, "webhook.env");
      writeFileSync(webhookEnv, `WEBHOOK_URL=${discord.webhookUrl()}\n`);
      chmodSync(webhookEnv, 0o600);
      const started = Date.now();
      const result = await run(["--countdown", "3s", "--reason", "test"], env);
      expect(result).toMatchObject({ code: 0, stderr: "" });
      expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
      expect(panel.commands()).toHaveLength(3);
      expect(panel.signals()).toEqual(["restart"]);
      expect(discord.messages.map((m) => m.body.embeds[0].title)).toEqual([
        "Scheduled restart warning",
        "Restart triggered",
        "Server restarted",
      ]);
      expect(readFileSync(join(root, "log", "mc-restart.log"), "utf8")).toMatch(/INFO the server is running again/);
      const dry = await run(["--countdown", "1m", "--dry-run"], env);
      expect(dry.stdout).toMatch(/^Restart plan \(nothing done, --dry-run\):\n {2}at -1 minute: tellraw @a /);
      expect((await run(["--countdown", "soon"], env)).stderr).toBe(
        'restart-with-warning: "soon" is not a duration — write it like 5m, 90s, 1m30s or 2h\n',
      );
    } finally {
      await game.close();
      await panel.close();
      await discord.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
