import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type BuiltWorld, changeChunkAsGame, type RawChunk, resticVersions } from "@mcops/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ALEX,
  buildPlayersWorld,
  chunkIndex,
  chunksAt,
  expectedMerge,
  expectSameChunks,
  lastBackupDone,
  resticBackup,
  type Server,
  STEVE,
  startServer,
  treeHash,
  volumeHash,
  volumePut,
} from "./harness.ts";

/**
 * Issue 43's version matrix: the built executable against the restic and rclone of Debian 11, 12 and 13 (set-up
 * fetched them with apt into a cache; testkit's resticVersions lists them), each pair first in the tool's PATH, so
 * restic and the rclone restic starts are that release's. One world per pair and one operator's sequence on it: init,
 * a backup, snapshots, status, every restore kind, the drill, check and retention. What differs between the versions
 * is said below, per version; a release whose restic is not listed there fails until it is.
 */

interface VersionExpectations {
  /** The repository format `restic init` makes. */
  repositoryVersion: number;
  /**
   * `check --read-data-subset 50%`: a percentage came in restic 0.12; for 0.11 the tool asks for one part in two
   * (n/t), a different one each day.
   */
  percentSubset: "percent" | "part";
  /**
   * restic 0.16 and later keep the oldest snapshot of a group as "oldest daily/weekly snapshot" while that policy's
   * buckets are not all filled; earlier versions keep only the newest snapshot of each day or week.
   */
  keepsOldest: boolean;
}

const EXPECTED: Record<string, VersionExpectations> = {
  "0.11.0": {
    repositoryVersion: 1,
    percentSubset: "part",
    keepsOldest: false,
  },
  "0.14.0": { repositoryVersion: 2, percentSubset: "percent", keepsOldest: false },
  "0.18.0": { repositoryVersion: 2, percentSubset: "percent", keepsOldest: true },
};

const WORLDS = ["world", "world_nether", "world_the_end"];
/** The area's chunk (blocks 80..95, 16..31) and one outside it that the game saved since; both in r.0.0.mca. */
const IN_AREA = chunkIndex(5, 1);
const OUTSIDE = chunkIndex(10, 2);
const REGION_FOLDERS = ["region", "entities", "poi"].map((f) => `world/${f}/r.0.0.mca`);

const PAIRS = resticVersions().map(
  (pair) =>
    [`restic ${pair.restic} with rclone ${pair.rclone} (Debian ${pair.debian}, ${pair.release})`, pair] as const,
);

describe.each(PAIRS)("%s", (_name, pair) => {
  let server: Server;
  let built: BuiltWorld;
  /** The world at the backup: its snapshot's id and what it added, the folders' hashes, files and chunks. */
  let snapshot: {
    id: string;
    added: string;
    trees: string[];
    nether: string;
    steve: string;
    files: Map<string, string>;
    chunks: Map<string, Map<number, RawChunk>>;
  };
  const expected = EXPECTED[pair.restic] as VersionExpectations;

  const file = (rel: string) => join(server.worldDir, rel);
  const hashOf = (rel: string) => volumeHash(server, rel);
  const put = (rel: string, content: string | Buffer) => volumePut(server, rel, content);
  const trees = () => WORLDS.map((d) => (existsSync(file(d)) ? treeHash(file(d)) : "absent"));
  const messages = () => server.discord.messages.map((m) => m.body.embeds[0] as { title: string; description: string });
  const asideDirs = () => readdirSync(server.worldDir).filter((n) => n.startsWith(".mcops-pre-restore-"));
  /** The repository's snapshots as restic lists them, oldest first. */
  const listed = async () => {
    const result = await server.run(["snapshots", "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const all = JSON.parse(result.stdout) as { id: string; short_id: string; time: string; tags?: string[] }[];
    return all.sort((a, b) => Date.parse(a.time) - Date.parse(b.time));
  };
  /** What a restore does first, in every test below: the server and the channel start afresh. */
  const fresh = () => {
    server.discord.reset();
    server.panel.reset();
  };
  const resticSays = (args: string[]) =>
    spawnSync("restic", args, {
      env: {
        ...server.env,
        RESTIC_REPOSITORY: `rclone:mcopstest:${server.repoDir}`,
        RESTIC_PASSWORD_FILE: server.passwordFile,
      },
      encoding: "utf8",
    });

  beforeAll(async () => {
    server = await startServer({ state: "running", binDir: pair.dir });
    built = buildPlayersWorld(server, { regions: 2, chunksPerRegion: 8 });
  });

  afterAll(async () => {
    await server?.close();
  });

  it("has expectations for this restic, and runs this pair's restic and rclone", () => {
    expect(EXPECTED[pair.restic], `no expectations for restic ${pair.restic}: add them to EXPECTED`).toBeDefined();
    const restic = spawnSync("restic", ["version"], { env: server.env, encoding: "utf8" });
    expect(restic.stdout).toMatch(new RegExp(`^restic ${pair.restic.replaceAll(".", "\\.")} compiled with `));
    const rclone = spawnSync("rclone", ["version"], { env: server.env, encoding: "utf8" });
    expect(rclone.stdout).toMatch(new RegExp(`^rclone v${pair.rclone.replaceAll(".", "\\.")}\\b`));
  });

  it("init: creates the repository in this restic's format", async () => {
    const result = await server.run(["init"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const config = resticSays(["cat", "config"]);
    expect(config.status, config.stderr).toBe(0);
    // restic 0.11 says "created new cache in …" on stdout first.
    expect(JSON.parse(config.stdout.slice(config.stdout.indexOf("{"))).version).toBe(expected.repositoryVersion);
  });

  it("backup: the snapshot's id shown short in the log and the message, with the save commands in order", async () => {
    const files = new Map(
      [`world/playerdata/${STEVE}.dat`, ...REGION_FOLDERS].map((rel) => [rel, hashOf(rel)] as const),
    );
    const chunks = new Map(REGION_FOLDERS.map((rel) => [rel, chunksAt(file(rel))] as const));
    const before = trees();
    const result = await server.run();
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(server.panel.commands()).toEqual(["save-off", "save-all flush", "save-on"]);
    // The snapshot as restic lists it: the steps below go on from it even when this one fails.
    const [only] = await listed();
    const id = only?.short_id as string;
    expect(id).toMatch(/^[0-9a-f]{8}$/);
    snapshot = {
      id,
      added: lastBackupDone(server).added,
      trees: before,
      nether: treeHash(file("world_nether/DIM-1")),
      steve: hashOf(`world/playerdata/${STEVE}.dat`),
      files,
      chunks,
    };
    // Shown short (restic 0.18 reports the full id) in the log's done line and the message.
    expect(lastBackupDone(server).id).toBe(id);
    expect(messages().map((m) => m.title)).toEqual(["Backup started", "Backup completed"]);
    expect(messages()[1]?.description).toMatch(new RegExp(`^took .+ · added .+ · repository .+ · snapshot ${id}\\n`));
  });

  it("snapshots: a table of short ids, and restic's JSON", async () => {
    const result = await server.run(["snapshots"]);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^ID\s+Time \(UTC\)\s+Host\s+Tags\s+Paths$/);
    expect(lines[2]).toMatch(
      new RegExp(
        `^${snapshot.id}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d  .+  mcops,server-${server.panel.server.identifier}  world world_nether world_the_end$`,
      ),
    );
    expect(lines.at(-1)).toBe("1 snapshot");
    const [json] = await listed();
    expect(json?.tags).toEqual(["mcops", `server-${server.panel.server.identifier}`]);
  });

  it("status: the newest backup by its short id, with what it added", async () => {
    const result = await server.run(["status"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      new RegExp(
        `^Newest backup: +${snapshot.id} of \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC \\(.* ago, added ${snapshot.added}\\)$`,
        "m",
      ),
    );
    const json = JSON.parse((await server.run(["status", "--json"])).stdout);
    expect(json.newest).toMatchObject({ id: snapshot.id, added: snapshot.added });
    expect(json.repository.snapshots).toBe(1);
  });

  it("restore latest: the world back as in the snapshot, the one it replaced aside, a pre-restore snapshot", async () => {
    fresh();
    writeFileSync(file("world/level.dat"), "played on after the backup");
    put("world_nether/DIM-1/region/r.0.-1.mca", "griefed nether");
    const result = await server.run(["restore", "latest"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(trees()).toEqual(snapshot.trees);
    expect(lstatSync(file("world/level.dat")).uid).toBe(988);
    expect(server.panel.signals()).toEqual(["stop", "start"]);
    const aside = join(server.worldDir, asideDirs()[0] as string);
    expect(readFileSync(join(aside, "world/level.dat"), "utf8")).toBe("played on after the backup");
    expect(messages().map((m) => m.title)).toEqual(["Restore started", "Restore completed"]);
    const text = messages()[1]?.description as string;
    expect(text).toMatch(new RegExp(`^Snapshot ${snapshot.id} of .* is back `));
    const pre = /The world before the restore is snapshot (\w+) \(pre-restore\)\./.exec(text)?.[1];
    expect(pre).toMatch(/^[0-9a-f]{8}$/);
    expect((await listed()).map((s) => [s.short_id, s.tags?.includes("pre-restore")])).toEqual([
      [snapshot.id, false],
      [pre, true],
    ]);
  });

  it("restore --player: one player's file back while the server runs, the other player's kept", async () => {
    fresh();
    put(`world/playerdata/${STEVE}.dat`, "griefed inventory");
    put(`world/playerdata/${ALEX}.dat`, "Alex's progress today");
    const result = await server.run(["restore", "--player", "steve"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(hashOf(`world/playerdata/${STEVE}.dat`)).toBe(snapshot.steve);
    expect(readFileSync(file(`world/playerdata/${ALEX}.dat`), "utf8")).toBe("Alex's progress today");
    expect(server.panel.signals()).toEqual([]);
    expect(messages().map((m) => m.title)).toEqual(["Restore completed"]);
    expect(messages()[0]?.description).toMatch(
      new RegExp(`^Restored player ${STEVE} \\\\\\(Steve\\\\\\) from snapshot ${snapshot.id} `),
    );
    expect(messages()[0]?.description).toMatch(
      /The world before the restore is snapshot [0-9a-f]{8} \(pre-restore\)\./,
    );
  });

  it("restore --area: the area's chunks back in region/, entities/ and poi/, a chunk outside it keeping its change", async () => {
    fresh();
    for (const rel of REGION_FOLDERS) {
      changeChunkAsGame(file(rel), { x: 0, z: 0 }, IN_AREA, "griefed");
      changeChunkAsGame(file(rel), { x: 0, z: 0 }, OUTSIDE, "built since");
    }
    const live = new Map(REGION_FOLDERS.map((rel) => [rel, chunksAt(file(rel))] as const));
    const result = await server.run(["restore", "--area", "80,16,95,31", "--no-backup"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    for (const rel of REGION_FOLDERS) {
      const merged = expectedMerge(
        live.get(rel) as Map<number, RawChunk>,
        snapshot.chunks.get(rel) as Map<number, RawChunk>,
        [IN_AREA],
      );
      expectSameChunks(chunksAt(file(rel)), merged, rel);
    }
    expect(server.panel.signals()).toEqual(["stop", "start"]);
    expect(messages().at(-1)?.description).toMatch(
      new RegExp(
        `^Restored the area 80,16 to 95,31 of the overworld \\(chunks 5,1 to 5,1 \\(1 chunk\\) in 1 region\\) from snapshot ${snapshot.id} of .*\\n3 chunks come back from 3 region files\\. Every other chunk is as it was\\.`,
      ),
    );
  });

  it("restore --area --whole-regions: the region files covering the area, whole; the one beside it untouched", async () => {
    fresh();
    for (const rel of REGION_FOLDERS) put(rel, `griefed ${rel}`);
    put("world/region/r.1.0.mca", "today's region beside the area");
    const result = await server.run(["restore", "--area", "0,0,10,10", "--whole-regions", "--no-backup"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    for (const rel of REGION_FOLDERS) expect(hashOf(rel), rel).toBe(snapshot.files.get(rel));
    expect(readFileSync(file("world/region/r.1.0.mca"), "utf8")).toBe("today's region beside the area");
    expect(messages().at(-1)?.description).toMatch(
      new RegExp(
        `^Restored the area 0,0 to 10,10 of the overworld \\\\\\(1 region whole\\\\\\) from snapshot ${snapshot.id} .*: 3 entries`,
      ),
    );
  });

  it("restore --dimension nether: that dimension whole, the overworld keeping today's", async () => {
    fresh();
    put("world_nether/DIM-1/region/r.0.-1.mca", "griefed nether");
    put("world_nether/DIM-1/region/r.5.5.mca", "explored after the backup");
    put("world/region/r.1.0.mca", "today's overworld");
    const result = await server.run(["restore", "--dimension", "nether", "--no-backup"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(treeHash(file("world_nether/DIM-1"))).toBe(snapshot.nether);
    expect(readFileSync(file("world/region/r.1.0.mca"), "utf8")).toBe("today's overworld");
    const aside = join(server.worldDir, asideDirs().sort().at(-1) as string);
    expect(readFileSync(join(aside, "world_nether/DIM-1/region/r.5.5.mca"), "utf8")).toBe("explored after the backup");
    expect(server.panel.signals()).toEqual(["stop", "start"]);
  });

  it("drill: the newest backup restores into a world the game can open, every chunk checked", async () => {
    fresh();
    const result = await server.run(["drill"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(server.backupLog()).toMatch(
      new RegExp(`INFO === Drill done === snapshot ${snapshot.id}, files \\d+, chunks ${built.chunks}, took `),
    );
    expect(messages().map((m) => m.title)).toEqual(["Backup verified"]);
  });

  it("check: the repository, also reading a part of the data (n/t, and a percentage: restic 0.11 a part in turn)", async () => {
    const plain = await server.run(["check"]);
    expect(plain.stderr).toBe("");
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/no errors were found/);
    const fraction = await server.run(["check", "--read-data-subset", "1/2"]);
    expect(fraction.code, fraction.stderr).toBe(0);
    expect(fraction.stdout).toMatch(/^read group #1 of \d+ data packs \(out of total \d+ packs in 2 groups\)$/m);
    expect(fraction.stdout).toMatch(/no errors were found/);
    const day = () => Math.floor(Date.now() / 86_400_000);
    const before = day();
    const percent = await server.run(["check", "--read-data-subset", "50%"]);
    expect(percent.code, percent.stderr).toBe(0);
    expect(percent.stdout).toMatch(/no errors were found/);
    if (expected.percentSubset === "percent") expect(percent.stdout).toMatch(/^read 50\.0% of data packs$/m);
    else {
      // restic 0.11 reads today's part of two: group 1 on one day, group 2 the next.
      const group = Number(
        /^read group #(\d+) of \d+ data packs \(out of total \d+ packs in 2 groups\)$/m.exec(percent.stdout)?.[1],
      );
      expect([(before % 2) + 1, (day() % 2) + 1]).toContain(group);
    }
  });

  it("retention: prune and the retention after a backup keep what this restic's policy keeps", async () => {
    // Two backups of one day two months ago, of this server's world: the same group as the tool's own.
    const day = new Date(Date.now() - 60 * 86_400_000).toISOString().slice(0, 10);
    const paths = WORLDS.map((d) => file(d));
    const tags = ["mcops", `server-${server.panel.server.identifier}`];
    resticBackup(server, paths, tags, ["--time", `${day} 06:00:00`]);
    resticBackup(server, paths, tags, ["--time", `${day} 12:00:00`]);
    const backups = async () => (await listed()).filter((s) => !s.tags?.includes("pre-restore")).map((s) => s.short_id);
    const preRestores = async () => (await listed()).filter((s) => s.tags?.includes("pre-restore")).length;
    const [early, late] = (await backups()).filter((id) => id !== snapshot.id);
    expect(await preRestores()).toBe(2);

    const prune = await server.run(["prune"]);
    expect(prune.stderr).toBe("");
    expect(prune.code).toBe(0);
    // keep-last 1, keep-daily 30, keep-weekly 12: today's backup and the later one of that day; restic 0.16+ also the
    // oldest, as "oldest daily snapshot" (two days hold backups, fewer than 30). The two pre-restore snapshots of
    // today are a group of their own: the newest kept, and 0.16+ the oldest too.
    expect(await backups()).toEqual(expected.keepsOldest ? [early, late, snapshot.id] : [late, snapshot.id]);
    expect(await preRestores()).toBe(expected.keepsOldest ? 2 : 1);

    // A second backup today: its retention keeps it in place of the first (neither the oldest nor the day's newest).
    expect((await server.run()).code).toBe(0);
    const after = await backups();
    const second = after.at(-1);
    expect(second).not.toBe(snapshot.id);
    expect(after).toEqual(expected.keepsOldest ? [early, late, second] : [late, second]);
    expect(lastBackupDone(server).id).toBe(second);
  });
});
