import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Server, startServer, treeHash } from "./harness.ts";

let server: Server;

beforeEach(async () => {
  server = await startServer();
  const init = await server.run(["init"]);
  expect(init.stderr).toBe("");
  expect(init.code).toBe(0);
});

afterEach(async () => {
  await server.close();
});

const titles = () => server.discord.messages.map((m) => m.body.embeds[0].title as string);

describe("backup (built executable, real restic and rclone)", () => {
  it("takes a snapshot that restores byte-identical, with the save commands in order", async () => {
    const before = ["world", "world_nether", "world_the_end"].map((d) => treeHash(join(server.worldDir, d)));
    const result = await server.run();
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(server.panel.commands()).toEqual(["save-off", "save-all flush", "save-on"]);
    const log = server.backupLog();
    expect(log).toMatch(/Z INFO === Backup started ===\n/);
    expect(log).toMatch(/Z INFO the game confirmed: Saved the game, [\d.]+ s after save-all flush\n/);
    expect(log).toMatch(/Z INFO === Backup done === took .+, added .+, repository .+, snapshot [0-9a-f]{8}/);
    expect(titles()).toEqual(["Backup started", "Backup completed"]);
    const done = server.discord.messages[1]?.body.embeds[0];
    expect(done.color).toBe(5763719);
    expect(done.description).toMatch(
      /^took .+ · added .+ · repository .+ · snapshot [0-9a-f]{8}\nsave took .+ · autosave off for .+\nworld flushed/,
    );

    // Wreck the world, then restore the snapshot and compare.
    rmSync(join(server.worldDir, "world_nether"), { recursive: true });
    writeFileSync(join(server.worldDir, "world", "level.dat"), "corrupted");
    const restore = await server.run(["restore", "latest"]);
    expect(restore.stderr).toBe("");
    expect(restore.code).toBe(0);
    const after = ["world", "world_nether", "world_the_end"].map((d) => treeHash(join(server.worldDir, d)));
    expect(after).toEqual(before);
  });

  it("leaves session.lock out and backs up extra paths when asked", async () => {
    writeFileSync(join(server.worldDir, "plugins.txt"), "not a dir");
    expect((await server.run(["--extra-path", "eula.txt"])).code).toBe(0);
    const snapshots = JSON.parse((await server.run(["snapshots", "--json"])).stdout);
    expect(snapshots).toHaveLength(1);
    expect(snapshots[0].paths.sort()).toEqual(
      ["world", "world_nether", "world_the_end", "eula.txt"].map((p) => join(server.worldDir, p)).sort(),
    );
    expect(snapshots[0].tags).toEqual(["mcops", `server-${server.panel.server.identifier}`]);
  });
});
