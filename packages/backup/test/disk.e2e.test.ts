import { runTool } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BIN, type Server, startServer } from "./harness.ts";

/**
 * A disk almost full: the built backup runs in a mount namespace of its own (unshare) where the server volume is a
 * 4 MiB tmpfs the test fills, so the free space it sees is real and nothing outside the test is touched.
 */
let server: Server;

beforeEach(async () => {
  server = await startServer({ state: "running" });
});
afterEach(() => server.close());

/** Runs backup with WORLD_DIR on a fresh 4 MiB tmpfs holding a world and `fillKiB` of other files. */
function onSmallDisk(fillKiB: number) {
  const script = [
    'mount -t tmpfs -o size=4m tmpfs "$W"',
    'mkdir -p "$W/world/region" "$W/logs"',
    'printf x > "$W/world/level.dat"',
    `head -c ${fillKiB}k /dev/zero > "$W/crash-reports.tar"`,
    'exec "$BACKUP"',
  ].join(" && ");
  return runTool("unshare", ["--mount", "--propagation", "private", "sh", "-c", script], {
    env: { ...server.env, W: server.worldDir, BACKUP: BIN },
  });
}

describe("backup on a disk almost full", () => {
  it("refuses to begin below DISK_CRITICAL: no save-off, a red message, exit 1", async () => {
    expect((await server.run(["init"])).code).toBe(0);
    const result = await onSmallDisk(3950);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^backup: the server volume's disk is almost full: [0-4]\.\d % free \(\d+(\.\d)? KiB of 4\.00 MiB\), below DISK_CRITICAL \(5 %\); no save was asked of the game, since a save on a full disk corrupts the world — free space on that disk/,
    );
    expect(server.panel.calls.filter((c) => c.kind === "command")).toEqual([]);
    const messages = server.discord.messages.map((m) => m.body.embeds[0]);
    expect(messages.map((m) => [m.title, m.color])).toEqual([["Backup failed", 15548997]]);
    expect(server.backupLog()).toMatch(/ERROR === Backup failed === the server volume's disk is almost full/);
  });

  it("backs up as usual with room left, and says what is wrong with DISK_CRITICAL (exit 78)", async () => {
    expect((await server.run(["init"])).code).toBe(0);
    // Offline: the stand-in's game writes its log outside the namespace, where the tool would not see "Saved the game".
    server.panel.setState("offline");
    const roomy = await onSmallDisk(1000);
    expect(roomy.stderr).toBe("");
    expect(roomy.code).toBe(0);
    server.backupEnv({ DISK_CRITICAL: "20%" });
    const inverted = await server.run();
    expect(inverted.code).toBe(78);
    expect(inverted.stderr).toMatch(/^backup: DISK_CRITICAL \(20%\) must be below DISK_WARN \(10%\)/);
  });
});
