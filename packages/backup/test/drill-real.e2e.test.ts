import { execFileSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { deflateSync, gzipSync } from "node:zlib";
import { COLOURS } from "@mcops/core/http";
import { gaugeValue } from "@mcops/core/textfile";
import { buildRealWorld, compoundBomb, damage, type RealWorld, startTool } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { chunkAt } from "../src/region-file.ts";
import { BIN, type Server, startServer } from "./harness.ts";

/**
 * The built `backup drill` on worlds of region files the game wrote (issue 28), in Forge's layout with DIM<n> folders,
 * unpadded as a running server leaves them: it verifies them, lists their dimensions for restore, warns when a later
 * snapshot holds fewer chunks or players, and ends an object bomb with one line, its memory bounded.
 */
let server: Server;
let world: RealWorld;
const WORLDS = ["world", "world_nether", "world_the_end"];

beforeEach(async () => {
  server = await startServer({ state: "offline" });
  for (const dir of WORLDS) rmSync(join(server.worldDir, dir), { recursive: true, force: true });
  world = buildRealWorld(server.worldDir, { layout: "forge", unpadded: true, players: 2 });
  server.backupEnv({ BACKUP_TEXTFILE_DIR: join(server.root, "textfiles") });
  expect((await server.run(["init"])).code).toBe(0);
  expect((await server.run()).code).toBe(0);
  server.discord.reset();
});

afterEach(async () => {
  await server.close();
});

const drillEmbeds = () =>
  server.discord.messages.map((m) => m.body.embeds[0]).filter((e) => /drill|verified/i.test(e.title as string));
const prom = () => readFileSync(join(server.root, "textfiles", "mcops_drill.prom"), "utf8");
const scratchLeft = () => {
  const parent = join(server.root, "state", "drill");
  return existsSync(parent) ? readdirSync(parent) : [];
};
const dim6 = () => world.regionFiles.find((f) => f.startsWith("world/DIM-6/")) as string;

describe("backup drill on a real Forge world", () => {
  it("verifies it unpadded, names every dimension with its chunks, and restore takes the names it lists", async () => {
    const result = await server.run(["drill"]);
    expect(result.code, result.stderr).toBe(0);
    const [embed] = drillEmbeds();
    expect(embed.title).toBe("Backup verified");
    expect(embed.color).toBe(COLOURS.success);
    const d = world.dimensions;
    expect(embed.description).toContain(
      `overworld ${d.overworld?.chunks} chunks, nether ${d.nether?.chunks}, AETHER ${d.AETHER?.chunks}, DIM-6 ${d["DIM-6"]?.chunks}, DIM7 ${d.DIM7?.chunks}; 2 players`,
    );
    expect(prom()).toContain(
      `mcops_drill_dimension_chunks{server="${server.panel.server.identifier}",dimension="DIM-6"} ${d["DIM-6"]?.chunks}`,
    );
    expect(gaugeValue(prom(), "mcops_drill_fewer")).toBe(0);

    const listed = await server.run(["drill", "--list-dimensions"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(
      listed.stdout
        .split("\n")
        .slice(1, -1)
        .map((l) => l.trim().split(/\s+/)),
    ).toEqual([
      ["overworld", "world"],
      ["nether", "world/DIM-1"],
      ["AETHER", "world/AETHER"],
      ["DIM-6", "world/DIM-6"],
      ["DIM7", "world/DIM7"],
    ]);
    const dry = await server.run(["restore", "--dimension", "DIM-6", "--dry-run", "--no-backup"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain("world/DIM-6");
    const unknown = await server.run(["restore", "--dimension", "DIM-99", "--dry-run", "--no-backup"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/holds no DIM-99 \(world\/DIM-99\)/);
  }, 120_000);

  it("catches a chunk cut short in DIM-6, naming the file and the chunk in world coordinates", async () => {
    damage.truncate(join(server.worldDir, dim6()));
    expect((await server.run()).code).toBe(0);
    const result = await server.run(["drill"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      new RegExp(`^backup: ${dim6()}: chunk -\\d+,-\\d+: truncated: its length says \\d+ bytes, the file has \\d+`),
    );
    expect(scratchLeft()).toEqual([]);
  }, 120_000);

  it("checks Forge's named world/AETHER (damage there is red) and restores it by --dimension AETHER, as listed", async () => {
    const aether = world.regionFiles.find((f) => f.startsWith("world/AETHER/")) as string;
    const good = readFileSync(join(server.worldDir, aether));
    // Retention keeps the first snapshot (one a day otherwise: the same day's later backup would replace it).
    server.backupEnv({ BACKUP_TEXTFILE_DIR: join(server.root, "textfiles"), BACKUP_KEEP_LAST: "10" });
    damage.truncate(join(server.worldDir, aether));
    expect((await server.run()).code).toBe(0);
    const result = await server.run(["drill"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(new RegExp(`^backup: ${aether}: chunk -?\\d+,-?\\d+: truncated: its length says`));

    // The first snapshot (before the damage) brings the folder back whole; the overworld keeps today's.
    const first = /=== Backup done === .*snapshot (\w+)/.exec(server.backupLog())?.[1] as string;
    writeFileSync(join(server.worldDir, "world/AETHER/region/r.9.9.mca"), "explored after the backup");
    writeFileSync(join(server.worldDir, "world/level.dat.today"), "today's");
    const restored = await server.run(["restore", first, "--dimension", "AETHER", "--no-backup"]);
    expect(restored.stderr).toBe("");
    expect(restored.code).toBe(0);
    expect(readFileSync(join(server.worldDir, aether)).equals(good)).toBe(true);
    expect(existsSync(join(server.worldDir, "world/AETHER/region/r.9.9.mca"))).toBe(false);
    expect(readFileSync(join(server.worldDir, "world/level.dat.today"), "utf8")).toBe("today's");
    // The case as on disk: `aether` is another folder, which the snapshot does not hold.
    const other = await server.run(["restore", first, "--dimension", "aether", "--dry-run", "--no-backup"]);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/holds no aether \(world\/aether\)/);
  }, 180_000);

  it("never takes a link, a FIFO, a `..`-like or an overlong folder for a dimension, and refuses such a name", async () => {
    const host = join(server.root, "host");
    for (const dir of [host, join(server.worldDir, "world/..x"), join(server.worldDir, "world", "x".repeat(200))]) {
      mkdirSync(join(dir, "region"), { recursive: true });
      writeFileSync(join(dir, "region/r.0.0.mca"), Buffer.alloc(100, 1));
    }
    symlinkSync(host, join(server.worldDir, "world/LINKED"));
    execFileSync("mkfifo", [join(server.worldDir, "world/FIFO")]);
    expect((await server.run()).code).toBe(0);
    const listed = await server.run(["drill", "--list-dimensions"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).not.toMatch(/LINKED|FIFO|\.\.x|xxxx/);
    expect((await server.run(["drill"])).code).toBe(0);
    for (const name of ["LINKED", "FIFO"]) {
      const result = await server.run(["restore", "--dimension", name, "--dry-run", "--no-backup"]);
      expect(result.code, name).toBe(1);
      expect(result.stderr).toContain(`holds no ${name} (world/${name})`);
    }
    for (const name of ["..x", "../world_nether", "x".repeat(200), "data"]) {
      const result = await server.run(["restore", "--dimension", name, "--dry-run", "--no-backup"]);
      expect(result.code, name).toBe(2);
      expect(result.stderr).toMatch(/^backup: unknown dimension/);
    }
    expect(lstatSync(join(server.worldDir, "world/LINKED")).isSymbolicLink()).toBe(true);
  }, 180_000);

  it("fails a region file cut inside its header, though the entries the cut leaves are empty and a drill is on record", async () => {
    expect((await server.run(["drill"])).code).toBe(0);
    // The game's 1.12.2 file of 105 chunks, none of them in the 25 entries of its first 100 bytes: read as zeros, the
    // rest of the header is empty, and only the counts would show it (a yellow "fewer chunks").
    const file = "world/region/r.0.-1.mca";
    const path = join(server.worldDir, file);
    expect(world.dimensions.overworld?.chunks).toBe(105);
    expect(readFileSync(path).subarray(0, 100)).toEqual(Buffer.alloc(100));
    truncateSync(path, 100);
    expect((await server.run()).code).toBe(0);
    server.discord.reset();
    const result = await server.run(["drill"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^backup: world\/region\/r\.0\.-1\.mca: header truncated: 100 bytes of 8192 \(the game reads no chunk from it/,
    );
    expect(drillEmbeds()[0]?.title).toBe("Backup drill failed");
    expect(gaugeValue(prom(), "mcops_drill_success")).toBe(0);
    expect(scratchLeft()).toEqual([]);
  }, 180_000);

  it("fails a header entry that points at another real chunk's sectors, naming the slot and the chunk it holds", async () => {
    const file = dim6(); // the game's 1.9 r.-1.-1.mca: Level.xPos and Level.zPos
    const { slot, from } = damage.misplaceChunk(join(server.worldDir, file));
    const region = { x: -1, z: -1 };
    const [own, other] = [chunkAt(region, slot), chunkAt(region, from)];
    expect((await server.run()).code).toBe(0);
    const result = await server.run(["drill"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `backup: ${file}: chunk ${own.x},${own.z}: holds chunk ${other.x},${other.z}'s data (its Level.xPos/zPos): the game would load that there and ${own.x},${own.z}'s own is lost`,
    );
    expect(drillEmbeds()[0]?.title).toBe("Backup drill failed");
  }, 120_000);

  it("warns in yellow when a dimension holds fewer chunks or the level fewer players than at the last drill", async () => {
    expect((await server.run(["drill"])).code).toBe(0);
    // A zeroed header entry and a deleted player's file pass every check: only the counts show them.
    const file = join(server.worldDir, dim6());
    const data = readFileSync(file);
    const index = [...Array(1024).keys()].find((i) => data.readUInt32BE(i * 4) !== 0) as number;
    data.writeUInt32BE(0, index * 4);
    writeFileSync(file, data);
    const players = join(server.worldDir, "world", "playerdata");
    unlinkSync(join(players, readdirSync(players)[0] as string));
    expect((await server.run()).code).toBe(0);
    server.discord.reset();

    const result = await server.run(["drill"]);
    expect(result.code).toBe(0);
    const [embed] = drillEmbeds();
    expect(embed.color).toBe(COLOURS.warning);
    const before = world.dimensions["DIM-6"]?.chunks as number;
    // Shown as game text: the notifier escapes Markdown (a dimension's name can hold `_`).
    expect(embed.description.replaceAll("\\", "")).toMatch(
      new RegExp(`Fewer than at the last drill \\(.+\\): DIM-6 ${before} → ${before - 1} chunks; players 2 → 1\\.`),
    );
    expect(gaugeValue(prom(), "mcops_drill_fewer")).toBe(2);
    expect(server.backupLog()).toMatch(/WARN fewer than at the last drill: DIM-6 \d+ → \d+ chunks/);
    // The next drill compares with this one: nothing fewer.
    server.discord.reset();
    expect((await server.run(["drill"])).code).toBe(0);
    expect(drillEmbeds()[0]?.color).toBe(COLOURS.success);
  }, 180_000);
});

describe("the drill's counts against an older snapshot", () => {
  const newestSnapshot = () =>
    /=== Backup done === .*snapshot (\w+)/.exec(
      server
        .backupLog()
        .split("\n")
        .findLast((l) => l.includes("Backup done")) ?? "",
    )?.[1] as string;

  it("neither compares nor keeps a drill of an older snapshot, so a later loss is still seen", async () => {
    const older = newestSnapshot(); // 2 players
    // Retention keeps it (one a day otherwise: the same day's later backups would replace it).
    server.backupEnv({ BACKUP_TEXTFILE_DIR: join(server.root, "textfiles"), BACKUP_KEEP_LAST: "10" });
    const players = join(server.worldDir, "world", "playerdata");
    const [first] = readdirSync(players) as [string];
    writeFileSync(join(players, "8667ba71-b85a-4004-af54-000000000003.dat"), readFileSync(join(players, first)));
    expect((await server.run()).code).toBe(0); // 3 players
    expect((await server.run(["drill"])).code).toBe(0);
    server.discord.reset();

    expect((await server.run(["drill", older])).code).toBe(0);
    expect(drillEmbeds()[0]?.color).toBe(COLOURS.success);
    expect(server.backupLog()).toMatch(
      new RegExp(
        `snapshot ${older} is older than \\w+, which the last drill verified: its counts are neither compared nor kept`,
      ),
    );

    unlinkSync(join(players, first));
    expect((await server.run()).code).toBe(0); // 2 players
    server.discord.reset();
    expect((await server.run(["drill"])).code).toBe(0);
    expect(drillEmbeds()[0]?.color).toBe(COLOURS.warning);
    expect(drillEmbeds()[0]?.description).toContain("players 3 → 2");
  }, 180_000);
});

describe("object bombs in the world", () => {
  /** The drill under GNU time: its exit, its line, and its peak resident memory in KiB. */
  async function drillMeasured(): Promise<{ code: number | null; stderr: string; maxRssKiB: number; ms: number }> {
    const run = await startTool("/usr/bin/time", ["-q", "-f", "maxrss=%M", BIN, "drill"], {
      cwd: server.root,
      env: server.env,
    }).done;
    const maxRssKiB = Number(/maxrss=(\d+)/.exec(run.stderr)?.[1]);
    return { code: run.code, stderr: run.stderr.replace(/maxrss=\d+\n$/, ""), maxRssKiB, ms: run.ms };
  }

  it.each([
    [
      "a chunk of 60 million empty compounds",
      () =>
        damage.replaceChunk(join(server.worldDir, "world/region/r.0.-1.mca"), deflateSync(compoundBomb(60_000_000)), 2),
      /^backup: world\/region\/r\.0\.-1\.mca: chunk \d+,-\d+: not NBT \(it holds more than \d+ values/,
    ],
    [
      "a level.dat of 10 million empty compounds",
      () =>
        writeFileSync(
          join(server.worldDir, "world/level.dat"),
          gzipSync(compoundBomb(10_000_000, { name: "1.12.2", dataVersion: 1343 })),
        ),
      /^backup: world\/level\.dat: not NBT \(it holds more than \d+ values/,
    ],
  ])(
    "ends %s with one line and exit 1, well within memory and a minute, scratch removed",
    async (_what, plant, line) => {
      plant();
      expect((await server.run()).code).toBe(0);
      server.discord.reset();
      const result = await drillMeasured();
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(line);
      expect(result.stderr.trim().split("\n"), result.stderr).toHaveLength(1);
      expect(result.ms).toBeLessThan(60_000);
      // The whole process, restic's restore of the world excluded (another process), stays far below the checker's limit.
      expect(result.maxRssKiB).toBeLessThan(512 * 1024);
      expect(drillEmbeds()[0]?.title).toBe("Backup drill failed");
      expect(gaugeValue(prom(), "mcops_drill_success")).toBe(0);
      expect(scratchLeft()).toEqual([]);
    },
    120_000,
  );
});
