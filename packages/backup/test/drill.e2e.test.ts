import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { COLOURS } from "@mcops/core/http";
import { acquireLock } from "@mcops/core/lock";
import { backupLockFile, resolvePaths } from "@mcops/core/paths";
import { gaugeValue } from "@mcops/core/textfile";
import { buildWorld, damage, waitUntil } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BIN, lastBackupDone, type Server, startServer } from "./harness.ts";

let server: Server;
let scratchParent: string;
const WORLDS = ["world", "world_nether", "world_the_end"];

beforeEach(async () => {
  server = await startServer({ state: "offline" });
  // A real world in place of the harness's random bytes: level.dat, regions in every compression, players.
  for (const dir of WORLDS) rmSync(join(server.worldDir, dir), { recursive: true, force: true });
  buildWorld(server.worldDir, { external: true, chunksPerRegion: 12 });
  server.backupEnv({ BACKUP_TEXTFILE_DIR: join(server.root, "textfiles") });
  scratchParent = join(server.root, "state", "drill");
  expect((await server.run(["init"])).code).toBe(0);
});

afterEach(async () => {
  await server.close();
});

/** A backup of the world as it is now; its snapshot's short id. */
async function backup(): Promise<string> {
  const result = await server.run();
  expect(result.code, result.stderr).toBe(0);
  return lastBackupDone(server).id;
}

const scratchLeft = () => (existsSync(scratchParent) ? readdirSync(scratchParent) : []);
const drillEmbeds = () =>
  server.discord.messages.map((m) => m.body.embeds[0]).filter((e) => /drill|verified/i.test(e.title as string));
const prom = () => readFileSync(join(server.root, "textfiles", "mcops_drill.prom"), "utf8");

describe("backup drill", () => {
  it("verifies a good snapshot: the done line, a green message, the gauges, no scratch left", async () => {
    const id = await backup();
    server.discord.reset();
    // What a drill killed with -9 left behind is removed by the next one.
    mkdirSync(join(scratchParent, "mcops-drill-2026-11-22T07-00-00Z-abcdef", "x"), { recursive: true });
    const result = await server.run(["drill"]);
    expect(server.backupLog()).toMatch(
      /WARN removing .*mcops-drill-2026-11-22T07-00-00Z-abcdef, left by a drill that was killed/,
    );
    expect(result.code).toBe(0);
    // The nether's and the end's own level.dat (Bukkit's layout) are checked and counted too.
    expect(server.backupLog()).toMatch(
      new RegExp(`INFO === Drill done === snapshot ${id}, files 15, chunks 108, took [^,\\n]+\\n`),
    );
    const [embed] = drillEmbeds();
    expect(embed.title).toBe("Backup verified");
    expect(embed.color).toBe(COLOURS.success);
    expect(embed.description).toMatch(
      new RegExp(`^Snapshot ${id} of .* UTC restores into a world the game can open: 15 files, 108 chunks checked in `),
    );
    expect(gaugeValue(prom(), "mcops_drill_success")).toBe(1);
    expect(gaugeValue(prom(), "mcops_drill_chunks_checked")).toBe(108);
    expect(gaugeValue(prom(), "mcops_drill_last_success_timestamp_seconds")).toBeGreaterThan(1.7e9);
    expect(scratchLeft()).toEqual([]);
  });

  it.each([
    [
      "a truncated region file",
      "world/region/r.0.0.mca",
      (w: string) => damage.truncate(join(w, "world/region/r.0.0.mca")),
      /chunk \d+,\d+: truncated: its length says \d+ bytes, the file has \d+/,
    ],
    [
      "a header pointing past the end",
      "world_nether/DIM-1/region/r.0.-1.mca",
      (w: string) => damage.pointPastEnd(join(w, "world_nether/DIM-1/region/r.0.-1.mca")),
      /header points past the end/,
    ],
    [
      "a chunk that does not decompress",
      "world_the_end/DIM1/entities/r.0.-2.mca",
      (w: string) => damage.corruptChunk(join(w, "world_the_end/DIM1/entities/r.0.-2.mca")),
      /gzip data does not decompress/,
    ],
    ["a missing level.dat", "world/level.dat", (w: string) => damage.removeLevelDat(w), /level\.dat is missing/],
  ])(
    "fails on %s, naming the file (exit 1), keeps the last good drill's time",
    async (_what, file, harm, reason) => {
      await backup();
      expect((await server.run(["drill"])).code).toBe(0);
      const good = gaugeValue(prom(), "mcops_drill_last_success_timestamp_seconds");
      harm(server.worldDir);
      const id = await backup();
      server.discord.reset();
      const result = await server.run(["drill", id]);
      expect(result.code).toBe(1);
      expect(result.stderr.split("\n").filter(Boolean)).toHaveLength(1);
      expect(result.stderr).toContain(`backup: ${file}: `);
      expect(result.stderr).toMatch(reason);
      expect(server.backupLog()).toMatch(
        new RegExp(`ERROR === Drill failed === snapshot ${id}: ${file.replaceAll(".", "\\.")}: `),
      );
      const [embed] = drillEmbeds();
      expect(embed.title).toBe("Backup drill failed");
      expect(embed.color).toBe(COLOURS.error);
      // Names from the volume are shown literally: Markdown's _ escaped.
      expect(embed.description).toContain(`Snapshot ${id}: ${file.replaceAll("_", "\\_")}: `);
      expect(gaugeValue(prom(), "mcops_drill_success")).toBe(0);
      expect(gaugeValue(prom(), "mcops_drill_last_success_timestamp_seconds")).toBe(good);
      expect(scratchLeft()).toEqual([]);
    },
    90_000,
  );

  it("stops before restoring when the snapshot would not fit (exit 75), naming its largest file; --no-room-check goes on", async () => {
    await backup();
    const scratch = join(server.root, "tiny");
    // A 256 KiB tmpfs in a private mount namespace: the world's snapshot is several MiB.
    const drillIn = (...args: string[]) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(
          "unshare",
          [
            "-m",
            "sh",
            "-c",
            `mkdir -p '${scratch}' && mount -t tmpfs -o size=256k none '${scratch}' && exec "$0" "$@"`,
            process.execPath,
            BIN,
            "drill",
            "--scratch",
            scratch,
            ...args,
          ],
          { env: server.env, cwd: server.root },
        );
        let stderr = "";
        child.stderr.on("data", (d) => (stderr += d));
        child.on("close", (code) => resolve({ code, stderr }));
      });
    const result = await drillIn();
    expect(result.code).toBe(75);
    expect(result.stderr).toMatch(
      /^backup: not enough space in .*tiny for the drill: it needs [\d.]+ MiB \(the snapshot and 10 %\), 256(\.0)? KiB is free — free some space, or give a directory on a larger disk with --scratch DIR; the largest file is "world[^"]*" \([\d.]+ [KM]iB\): if it is mostly empty \(sparse, restored sparse by restic 0\.15 and later\), go on with --no-room-check\n$/,
    );
    expect(server.backupLog()).not.toMatch(/restored into/);
    expect(server.backupLog()).toMatch(/ERROR === Drill failed === snapshot \w+: not enough space/);

    // Past the check, restic meets the full disk itself: a failed drill, the scratch copy gone.
    const tried = await drillIn("--no-room-check");
    expect(tried.code).toBe(1);
    expect(tried.stderr).not.toMatch(/not enough space in/);
    expect(server.backupLog()).toMatch(/room for the drill not checked \(--no-room-check\)/);
  });

  it("refuses a scratch directory inside the server volume (exit 2) and exits 75 while a backup holds the lock", async () => {
    await backup();
    const inside = await server.run(["drill", "--scratch", join(server.worldDir, "plugins")]);
    expect(inside.code).toBe(2);
    expect(inside.stderr).toMatch(/is inside the server volume/);
    const lock = await acquireLock(backupLockFile(resolvePaths(server.env)), {
      tool: "backup",
      what: "a backup",
      waitMs: 0,
    });
    try {
      const busy = await server.run(["drill"]);
      expect(busy.code).toBe(75);
      expect(scratchLeft()).toEqual([]);
    } finally {
      lock.release();
    }
  });

  it("keeps players' files to their share of --budget: every chunk is checked, and the message says what was read", async () => {
    // 600 more players' files that each inflate to nearly 16 MiB (restic keeps one): reading them all whole takes
    // several times the budget, and the chunk check after them would get none of it.
    const array = 16 * 1024 * 1024 - 64;
    const head = Buffer.from([10, 0, 0, 7, 0, 1, 0x62, 0, 0, 0, 0]);
    head.writeInt32BE(array, 7);
    const file = gzipSync(Buffer.concat([head, Buffer.alloc(array), Buffer.from([0])]));
    for (let p = 0; p < 600; p++) {
      const uuid = `0b7e21a4-0000-4000-8000-${String(p).padStart(12, "0")}`;
      writeFileSync(join(server.worldDir, "world/playerdata", `${uuid}.dat`), file);
    }
    const id = await backup();
    server.discord.reset();
    const result = await server.run(["drill", "--budget", "8s"]);
    expect(result.code, result.stderr).toBe(0);
    const [embed] = drillEmbeds();
    expect(embed.color).toBe(COLOURS.success);
    const text = (embed.description as string).replaceAll("\\", "");
    expect(text).toMatch(/ 108 chunks checked in /);
    expect(text).toContain("; 602 players\n");
    expect(text).toMatch(
      /\nThe time budget ran out: \d+ of 602 players' files were read whole, the rest opened and sized\.$/,
    );
    expect(server.backupLog()).toMatch(
      /INFO the players' share of the time budget ran out: \d+ of 602 players' files were read whole\n/,
    );
    expect(server.backupLog()).toMatch(
      new RegExp(`=== Drill done === snapshot ${id}, files \\d+, chunks 108, took [^,\\n]+\\n`),
    );
  }, 120_000);

  it.each([1, 2])(
    "leaves no scratch files when %i SIGTERM(s) end it mid-drill",
    async (signals) => {
      // A bigger world, so the drill is still restoring or checking when the signal comes.
      buildWorld(server.worldDir, { regions: 2, chunksPerRegion: 150, sections: 24 });
      await backup();
      const { child, done } = server.start(["drill"]);
      await waitUntil(
        () => scratchLeft().some((name) => readdirSync(join(scratchParent, name)).length > 0),
        "the drill's scratch copy",
      );
      for (let i = 0; i < signals; i++) child.kill("SIGTERM");
      const result = await done;
      expect(result.code).not.toBe(0);
      expect(scratchLeft()).toEqual([]);
      // One signal: the drill stops and says so. A second ends the run at once (runTool's atExit removes the scratch).
      if (signals === 1)
        expect(server.backupLog()).toMatch(/ERROR === Drill failed === snapshot \w+: .*(SIGTERM|interrupted)/);
    },
    120_000,
  );
});
