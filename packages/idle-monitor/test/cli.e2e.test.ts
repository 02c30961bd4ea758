import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type GameServer,
  type PanelStandIn,
  runTool,
  startGameServer,
  startPanelStandIn,
  startTool,
  type TempDir,
  tempDir,
  toolEnv,
  waitUntil,
} from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../dist/idle-monitor.mjs", import.meta.url));
let root: TempDir;
let panel: PanelStandIn;
let game: GameServer;
let env: NodeJS.ProcessEnv;
/**
 * The executable measures the machine's own disk: its warnings start at 1 % free here, so that a disk nearly full
 * (CI's was 9.4 % free once) does not add a line these tests do not expect. The warnings have their own tests.
 */
const QUIET_DISK = "DISK_WARN=1%\nDISK_CRITICAL=0.5%\n";

beforeEach(async () => {
  root = tempDir("mcops-idle-e2e-");
  panel = await startPanelStandIn({ servers: [{ state: "running" }] });
  game = await startGameServer();
  env = toolEnv(root.path);
  const etc = env.MCOPS_CONFIG_DIR as string;
  mkdirSync(etc, { recursive: true });
  writeFileSync(
    join(etc, "backup.env"),
    `CONTROL_URL=${panel.url}\nCONTROL_KEY=${panel.apiKey}\nSERVER_ID=${panel.server.identifier}\nWORLD_DIR=${join(root.path, "volume")}\nGAME_ADDRESS=${game.address}\n${QUIET_DISK}`,
  );
  chmodSync(join(etc, "backup.env"), 0o600);
});
afterEach(async () => {
  await game.close();
  await panel.close();
  root.cleanup();
});

describe("idle-monitor (built executable)", () => {
  it("--once makes one decision, logs it and remembers it", async () => {
    const steve = await game.join("Steve");
    const result = await runTool(BIN, ["--once"], { env });
    expect(result).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(readFileSync(join(root.path, "log", "mc-idle-monitor.log"), "utf8")).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ INFO 1 player online \[ping\], server running: active; recovery point in 1 h 0 min\n$/,
    );
    const state = JSON.parse(readFileSync(join(root.path, "state", "idle-monitor.json"), "utf8"));
    expect(state.lastActivity).toBeGreaterThan(Date.now() - 60_000);
    await steve.leave();
  });

  it("--once ends with exit 1 and one line when the idle backup fails, and when the panel refuses the key", async () => {
    // Played until an hour ago, empty since: the idle backup is due, and the backup command fails.
    const hourAgo = Date.now() - 3600_000;
    mkdirSync(join(root.path, "state"), { recursive: true });
    writeFileSync(
      join(root.path, "state", "idle-monitor.json"),
      JSON.stringify({ lastActivity: hourAgo, idleSince: hourAgo }),
    );
    const failed = await runTool(BIN, ["--once", "--backup-command", "/bin/false"], { env });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toBe("idle-monitor: idle backup failed (exit 1); next try after the cooldown\n");
    expect(readFileSync(join(root.path, "log", "mc-idle-monitor.log"), "utf8")).toMatch(/ERROR idle backup failed/);

    const etc = env.MCOPS_CONFIG_DIR as string;
    const file = join(etc, "backup.env");
    writeFileSync(file, readFileSync(file, "utf8").replace(panel.apiKey, `ptlc_${"x".repeat(43)}`));
    const refused = await runTool(BIN, ["--once"], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^idle-monitor: the panel refused the API key \(.*\) — .*\n$/);
  });

  it("runs as a service until SIGTERM, a decision every IDLE_POLL", async () => {
    const { child, done } = startTool(BIN, ["--poll", "1s"], { env });
    const log = join(root.path, "log", "mc-idle-monitor.log");
    const lines = () => {
      try {
        return readFileSync(log, "utf8").trim().split("\n").length;
      } catch {
        return 0;
      }
    };
    await waitUntil(() => lines() >= 2, "two decisions in mc-idle-monitor.log", 60_000);
    child.kill("SIGTERM");
    const result = await done;
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(lines()).toBeGreaterThanOrEqual(2);
    expect(readFileSync(log, "utf8")).toMatch(/INFO 0 players online \[ping\], server running, empty for /);
  }, 120_000);

  it.each([
    ["a link to /dev/zero", "is a symbolic link, not a regular file"],
    ["a FIFO", "is a FIFO, not a regular file"],
  ])(
    "--once with %s as latest.log and no ping answer: one warning line, done at once",
    async (what, problem) => {
      const log = join(root.path, "volume", "logs", "latest.log");
      mkdirSync(join(root.path, "volume", "logs"), { recursive: true });
      if (what === "a FIFO") execFileSync("mkfifo", [log]);
      else symlinkSync("/dev/zero", log);
      const { child, done } = startTool(BIN, ["--once", "--game-address", "127.0.0.1:1"], { env });
      // Nobody ever writes to the FIFO and /dev/zero never ends: a run that opened either to read it would never exit on
      // its own, so exiting 0 by itself proves it did not. The kill only ends such a run (then the code is null), long
      // after any run that does not wait, however busy the machine.
      const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
      const result = await done;
      clearTimeout(timer);
      expect(result).toMatchObject({ code: 0, signal: null });
      const lines = result.stderr.split("\n");
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ WARN /);
      expect(lines[0]).toContain(` WARN ${log} ${problem}; not reading it — `);
      expect(readFileSync(join(root.path, "log", "mc-idle-monitor.log"), "utf8")).toMatch(
        /INFO players unknown \[panel\], server running; .*; no log \(.*\): cannot tell whether anyone plays/,
      );
    },
    120_000,
  );

  it("says what is wrong with its settings in one line", async () => {
    // A bad option is a usage error (2), named by its option; the same in backup.env is a configuration error (78).
    const bad = await runTool(BIN, ["--once", "--poll", "soon"], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      "idle-monitor: IDLE_POLL is not a duration above 0 (--poll) — write it like 30m, 90s or 2h\n",
    );
    const inFile = await runTool(BIN, ["--once"], { env: { ...env, IDLE_AFTER: "soon" } });
    expect(inFile.code).toBe(78);
    expect(inFile.stderr).toMatch(
      /^idle-monitor: IDLE_AFTER is not a duration above 0 \(environment variable IDLE_AFTER\)/,
    );
    const unknown = await runTool(BIN, ["--onse"], { env });
    expect(unknown.code).toBe(2);
  });
});

describe("idle-monitor (built executable): BOOT_ID_FILE", () => {
  it("--once ends when BOOT_ID_FILE is a FIFO nobody writes to (it does not block on it)", async () => {
    const fifo = join(root.path, "boot_id");
    execFileSync("mkfifo", [fifo]);
    const file = join(env.MCOPS_CONFIG_DIR as string, "backup.env");
    writeFileSync(file, `${readFileSync(file, "utf8")}BOOT_ID_FILE=${fifo}\n`);
    const { child, done } = startTool(BIN, ["--once"], { env });
    // Nobody ever writes to the FIFO: a run that opened it to read would never exit on its own, so exiting 0 by itself
    // proves it did not. The kill only ends such a run (then the code is null), long after any run that does not wait,
    // however busy the machine (CI: a 20 s bound here was too close once every package's tests ran at once).
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    const result = await done;
    clearTimeout(timer);
    expect(result).toMatchObject({ code: 0, signal: null });
  });
});
