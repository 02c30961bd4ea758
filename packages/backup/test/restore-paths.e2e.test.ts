import {
  closeSync,
  existsSync,
  ftruncateSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { resticVersions, runTool } from "@mcops/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, buildPlayersWorld, type Server, startServer } from "./harness.ts";

/**
 * Issue 45, what a backup took can be restored: a path near PATH_MAX the game's user made (items 6), sparse files
 * (item 8) and a restore that would not fit on the volume's disk. What restic itself does differs by version, so each
 * version's pair runs the first two (testkit's resticVersions); the room check is the tool's own, run with the
 * machine's restic.
 */

interface PathExpectations {
  /**
   * A 4,093-byte path: restic 0.16 and newer restore `<snapshot>:<WORLD_DIR>`, so that the file's path is written
   * below the restore's short target without WORLD_DIR's (69 bytes here, 65 on Pterodactyl) and it comes back; older
   * versions write WORLD_DIR's path below the target too, past PATH_MAX, and the backup names the path instead.
   */
  longPath: "restored" | "named";
  /** restic 0.15 and newer have `restore --sparse`; older ones write a sparse file whole. */
  sparse: boolean;
}

const EXPECTED: Record<string, PathExpectations> = {
  "0.11.0": { longPath: "named", sparse: false },
  "0.14.0": { longPath: "named", sparse: false },
  "0.18.0": { longPath: "restored", sparse: true },
};

const PAIRS = resticVersions().map((pair) => [`restic ${pair.restic} (Debian ${pair.debian})`, pair] as const);

let server: Server | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/**
 * Makes, below `dir`, a file whose absolute path is `bytes` long (folders of 200 bytes, then the file's name, which
 * ends in `tail`).
 */
function longPath(dir: string, bytes: number, tail = ""): string {
  let path = dir;
  while (bytes - path.length - 1 > 250) path = join(path, "d".repeat(200));
  mkdirSync(path, { recursive: true });
  const file = join(path, "f".repeat(bytes - path.length - 1 - tail.length) + tail);
  writeFileSync(file, "planted by the game's user\n");
  expect(Buffer.byteLength(file)).toBe(bytes);
  return file;
}

/** A sparse file of `bytes`: nothing of it on disk. */
function sparseFile(path: string, bytes: number): void {
  const fd = openSync(path, "w");
  ftruncateSync(fd, bytes);
  closeSync(fd);
}

/** The bytes a file takes on disk (st_blocks are 512 bytes each). */
const onDisk = (path: string) => lstatSync(path).blocks * 512;

const GiB = 1024 ** 3;

describe.each(PAIRS)("%s", (_name, pair) => {
  const expected = EXPECTED[pair.restic] as PathExpectations;

  it("has expectations for this restic", () => {
    expect(EXPECTED[pair.restic], `no expectations for restic ${pair.restic}: add them to EXPECTED`).toBeDefined();
  });

  it("a 4,093-byte path in the volume: the drill and restore latest bring it back, or the backup's message names it", async () => {
    const s = await startServer({ state: "offline", binDir: pair.dir });
    server = s;
    buildPlayersWorld(s, { regions: 1, chunksPerRegion: 2 });
    // Its name ends in a line of the game's user's own: the message names it on one line, quoted.
    const file = longPath(join(s.worldDir, "world"), 4093, "\n# big");
    expect((await s.run(["init"])).code).toBe(0);
    const backup = await s.run();
    expect(backup.code).toBe(0);
    const done = s.discord.messages.at(-1)?.body.embeds[0] as { title: string; description: string; color: number };
    expect(done.title).toBe("Backup completed");
    if (expected.longPath === "named") {
      expect(done.color).toBe(16776960); // yellow
      expect(done.description).toMatch(
        /\n1 path\(s\) are too long to restore: "world\/d{42}…f{42}\\\\n# big" \(4093 bytes\)\. A restore writes each by its restore folder's path \(up to 32 bytes\) and its own, past PATH_MAX \(4096\): restore latest and the drill will fail on them\. Remove them from the server volume, or install restic 0\.16 or newer, which restores them\./,
      );
      expect(backup.stderr).toMatch(
        /^\S+ WARN snapshot \w+ holds 1 path\(s\) too long to restore: "world\/d{42}…f{42}\\n# big" \(4093 bytes\)\n$/,
      );
      return;
    }
    expect(backup.stderr).toBe("");
    expect(done.color).toBe(5763719); // green: nothing to say
    const drill = await s.run(["drill"]);
    expect(drill.stderr).toBe("");
    expect(drill.code).toBe(0);
    writeFileSync(file, "changed after the backup\n");
    // --no-backup here and below: the pre-restore snapshot is not what is tested, and it takes seconds.
    const restore = await s.run(["restore", "latest", "--no-backup"]);
    expect(restore.stderr).toBe("");
    expect(restore.code).toBe(0);
    expect(readFileSync(file, "utf8")).toBe("planted by the game's user\n");
  });

  // Versions without --sparse write such a file whole, as the README says: a smaller one there, the disk's sake.
  const big = expected.sparse ? GiB : GiB / 16;
  it(`a sparse file of ${big / 1024 ** 2} MiB comes back ${expected.sparse ? "sparse" : "whole (no --sparse)"}, from restore latest and from a dimension's restore`, async () => {
    const s = await startServer({ state: "offline", binDir: pair.dir });
    server = s;
    buildPlayersWorld(s, { regions: 1, chunksPerRegion: 2 });
    const overworld = join(s.worldDir, "world", "hole.bin");
    const nether = join(s.worldDir, "world_nether", "DIM-1", "hole.bin");
    sparseFile(overworld, big);
    sparseFile(nether, big / 16);
    expect(onDisk(overworld)).toBe(0);
    expect((await s.run(["init"])).code).toBe(0);
    expect((await s.run()).code).toBe(0);
    // What a restored file takes on disk: under a MiB when sparse, all of it when written whole.
    const expectOnDisk = (path: string, size: number) => {
      expect(lstatSync(path).size).toBe(size);
      if (expected.sparse) expect(onDisk(path)).toBeLessThan(1024 * 1024);
      else expect(onDisk(path)).toBeGreaterThanOrEqual(size);
    };
    const restore = await s.run(["restore", "latest", "--no-backup"]);
    expect(restore.stderr).toBe("");
    expect(restore.code).toBe(0);
    expectOnDisk(overworld, big);
    const dimension = await s.run(["restore", "--dimension", "nether", "--no-backup"]);
    expect(dimension.stderr).toBe("");
    expect(dimension.code).toBe(0);
    expectOnDisk(nether, big / 16);
  });
});

describe("a restore that would not fit on the volume's disk", () => {
  it("is refused before anything is done: one line, exit 75, the server not stopped, the world untouched", async () => {
    const s = await startServer({ state: "running", worldMiB: 8 });
    server = s;
    expect((await s.run(["init"])).code).toBe(0);
    expect((await s.run()).code).toBe(0);
    s.discord.reset();
    s.panel.reset();
    // In a mount namespace of its own, the volume is a 4 MiB tmpfs holding a small world: the snapshot's 8 MiB do not
    // fit, and the free space the tool sees is real.
    const script = [
      'mount -t tmpfs -o size=4m tmpfs "$W"',
      'mkdir -p "$W/world"',
      'printf "level-name=world\\n" > "$W/server.properties"',
      'printf "the world as it is" > "$W/world/level.dat"',
      '"$BACKUP" restore latest; echo "exit $?"',
      'ls -A "$W" "$W/world"',
      'cat "$W/world/level.dat"',
    ].join("; ");
    const result = await runTool("unshare", ["--mount", "--propagation", "private", "sh", "-c", script], {
      env: { ...s.env, W: s.worldDir, BACKUP: BIN },
    });
    expect(result.stderr).toMatch(
      /^backup: not enough space in \S+ for restoring the world: it needs 8\.\d\d MiB \(the snapshot's files and 10 %\), [\d.]+ MiB is free — free some space on the server volume's disk/,
    );
    // The hint names the snapshot's largest file, and the way past the check for a file restored sparse.
    expect(result.stderr).toMatch(
      /; the largest file is "world\/[^"]+" \([\d.]+ [KM]iB\): if it is mostly empty \(sparse, restored sparse by restic 0\.15 and later\), go on with --no-room-check\n$/,
    );
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stdout).toBe(
      `exit 75\n${s.worldDir}:\nserver.properties\nworld\n\n${s.worldDir}/world:\nlevel.dat\nthe world as it is`,
    );
    expect(s.panel.signals()).toEqual([]);
    expect(s.discord.messages).toEqual([]);
    expect(existsSync(s.worldDir)).toBe(true);

    // --no-room-check goes past it: the plan says so, and the restore is tried (here the tmpfs then fills: restic's
    // own failure, the world as it was).
    const plan = await s.run(["restore", "latest", "--dry-run", "--no-room-check"]);
    expect(plan.stdout).toMatch(/check nothing of \S+'s room for what comes back \(8\.\d\d MiB\) \(--no-room-check\)/);
    const tried = await runTool(
      "unshare",
      [
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        script.replace("restore latest;", "restore latest --no-room-check --no-backup;"),
      ],
      { env: { ...s.env, W: s.worldDir, BACKUP: BIN } },
    );
    expect(tried.stderr).not.toMatch(/not enough space/);
    expect(tried.stdout).toMatch(/^exit 1\n/);
    expect(tried.stdout).toMatch(/the world as it is$/);
  });
});
