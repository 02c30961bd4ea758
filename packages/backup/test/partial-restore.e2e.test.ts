import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { fifoWitness, giveToGame } from "@mcops/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { runRestore } from "../src/commands/restore.ts";
import {
  ALEX,
  backUp,
  buildPlayersWorld,
  inProcess,
  type Server,
  STEVE,
  startServer,
  volumeHash,
  volumePut,
} from "./harness.ts";

/**
 * Issue 17's selective restores against real restic and worlds built with real NBT and region files: one player's
 * files while the server runs, an area across a region boundary, a dimension in both layouts, a failure midway.
 */

let server: Server;

afterEach(async () => {
  await server?.close();
});

/** A server whose volume holds a real world (in `layout`), usercache.json naming Steve and Alex, and one backup. */
async function withWorld(layout: "bukkit" | "vanilla" = "bukkit", state: "running" | "offline" = "running") {
  server = await startServer({ state });
  buildPlayersWorld(server, { layout, regions: 1, chunksPerRegion: 2 });
  expect((await server.run(["init"])).code).toBe(0);
}

const file = (rel: string) => join(server.worldDir, rel);
const hashOf = (rel: string) => volumeHash(server, rel);
const put = (rel: string, content: string | Buffer) => volumePut(server, rel, content);
const asideDir = () => readdirSync(server.worldDir).filter((n) => n.startsWith(".mcops-pre-restore-"));
const titles = () => server.discord.messages.map((m) => m.body.embeds[0].title as string);

async function snapshotTags(): Promise<string[][]> {
  const listed = JSON.parse((await server.run(["snapshots", "--json"])).stdout) as { tags?: string[] }[];
  return listed.map((s) => s.tags ?? []);
}

describe("backup restore --player", () => {
  it("restores one player's files while the server runs and they are offline; the rest of the world keeps today's", async () => {
    await withWorld();
    put(`world/advancements/${STEVE}.json`, '{"minecraft:story/root":{"done":true},"DataVersion":3953}');
    await backUp(server);
    const snapshot = { dat: hashOf(`world/playerdata/${STEVE}.dat`), adv: hashOf(`world/advancements/${STEVE}.json`) };
    // After the backup: Steve loses his inventory, gains statistics; Alex plays on; both joined and left.
    put(`world/playerdata/${STEVE}.dat`, "griefed inventory");
    put(`world/advancements/${STEVE}.json`, "{}");
    put(`world/stats/${STEVE}.json`, '{"stats":{}}');
    put(`world/playerdata/${ALEX}.dat`, "Alex's progress today");
    appendFileSync(
      file("logs/latest.log"),
      "[12:00:00] [Server thread/INFO]: Steve joined the game\n[12:00:01] [Server thread/INFO]: Alex joined the game\n[12:30:00] [Server thread/INFO]: Steve left the game\n",
    );
    const alex = hashOf(`world/playerdata/${ALEX}.dat`);

    const result = await server.run(["restore", "--player", "steve"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(hashOf(`world/playerdata/${STEVE}.dat`)).toBe(snapshot.dat);
    expect(hashOf(`world/advancements/${STEVE}.json`)).toBe(snapshot.adv);
    expect(existsSync(file(`world/stats/${STEVE}.json`))).toBe(false);
    expect(hashOf(`world/playerdata/${ALEX}.dat`)).toBe(alex);
    expect(lstatSync(file(`world/playerdata/${STEVE}.dat`)).uid).toBe(988);
    // The server kept running: no power signal.
    expect(server.panel.signals()).toEqual([]);
    expect(server.panel.state()).toBe("running");
    // What it replaced is kept under its own paths.
    const [aside] = asideDir();
    const kept = join(server.worldDir, aside as string);
    expect(readFileSync(join(kept, `world/playerdata/${STEVE}.dat`), "utf8")).toBe("griefed inventory");
    expect(readFileSync(join(kept, `world/stats/${STEVE}.json`), "utf8")).toBe('{"stats":{}}');
    expect(readdirSync(join(kept, "world/playerdata"))).toEqual([`${STEVE}.dat`]);
    // One message; the pre-restore snapshot exists and is listed.
    expect(titles()).toEqual(["Restore completed"]);
    const text = server.discord.messages[0]?.body.embeds[0].description as string;
    expect(text).toMatch(
      /^Restored player 6f4b2c1e-0000-4000-8000-000000000001 \\\(Steve\\\) from snapshot [0-9a-f]{8} /,
    );
    expect(text).toMatch(/the server kept running/);
    expect(text).toMatch(/The world before the restore is snapshot [0-9a-f]{8} \(pre-restore\)\./);
    expect((await snapshotTags()).map((t) => t.includes("pre-restore"))).toEqual([false, true]);
    expect((await server.run(["snapshots"])).stdout).toMatch(/mcops,server-\w+,pre-restore/);
  }, 120_000);

  it("refuses while the player is online (exit 75), changing nothing; an unknown name lists close matches (exit 2)", async () => {
    await withWorld();
    await backUp(server);
    put(`world/playerdata/${STEVE}.dat`, "today's inventory");
    appendFileSync(file("logs/latest.log"), "[12:00:00] [Server thread/INFO]: Steve joined the game\n");
    const online = await server.run(["restore", "--player", "Steve"]);
    expect(online.code).toBe(75);
    expect(online.stderr).toBe(
      `backup: ${STEVE} (Steve) is online: the server would overwrite the restored file when they leave — try again once they have left the game (other players can keep playing)\n`,
    );
    expect(readFileSync(file(`world/playerdata/${STEVE}.dat`), "utf8")).toBe("today's inventory");
    expect(asideDir()).toEqual([]);
    expect(server.discord.requests).toHaveLength(0);
    expect((await snapshotTags()).length).toBe(1);

    const unknown = await server.run(["restore", "--player", "Stevee"]);
    expect(unknown).toMatchObject({
      code: 2,
      stderr: `backup: no player "Stevee" in the server's usercache.json — did you mean Steve?\n`,
    });
  }, 120_000);
});

/** As the game's user (uid 988, which owns the volume once given to the game): runs a shell line. */
function asGame(script: string, input = ""): void {
  execFileSync("setpriv", ["--reuid=988", "--regid=988", "--clear-groups", "sh", "-c", script], {
    input,
    cwd: server.worldDir,
  });
}

describe("backup restore --player against the game's usercache.json (issue 32)", () => {
  it("refuses a name two UUIDs share in usercache.json (exit 2), listing both, restoring nothing", async () => {
    await withWorld("bukkit", "running");
    await backUp(server);
    put(`world/playerdata/${STEVE}.dat`, "Steve's inventory today");
    put(`world/playerdata/${ALEX}.dat`, "Alex's inventory today");
    giveToGame(server.worldDir, server.root);
    // The game's user puts a forged entry naming Alex's UUID Steve first; offline mode would add "sTeVe" by itself.
    const cache = [
      { name: "sTeVe", uuid: ALEX, expiresOn: "2026-12-26 09:00:00 +0000" },
      { name: "Steve", uuid: STEVE, expiresOn: "2026-12-25 10:00:00 +0000" },
      { name: "Alex", uuid: ALEX, expiresOn: "2026-12-25 10:00:00 +0000" },
    ];
    asGame("rm -f usercache.json && cat > usercache.json", JSON.stringify(cache));
    rmSync(file(`world/playerdata/${ALEX}.dat`)); // Alex's data is gone from the world: the list says so

    const result = await server.run(["restore", "--player", "Steve"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `backup: "Steve" names 2 players in the server's usercache.json: ${ALEX} (sTeVe, expires 2026-12-26 09:00:00 +0000, no playerdata in world), ${STEVE} (Steve, expires 2026-12-25 10:00:00 +0000, playerdata in world) — nothing was restored; choose one with --player <uuid>\n`,
    );
    expect(readFileSync(file(`world/playerdata/${STEVE}.dat`), "utf8")).toBe("Steve's inventory today");
    expect(existsSync(file(`world/playerdata/${ALEX}.dat`))).toBe(false);
    expect(asideDir()).toEqual([]);
    expect(server.discord.requests).toHaveLength(0);
    expect(await snapshotTags()).toHaveLength(1);

    // By UUID: the one meant comes back, and the message names the UUID first.
    const byUuid = await server.run(["restore", "--player", STEVE, "--no-backup"]);
    expect(byUuid).toMatchObject({ code: 0, stderr: "" });
    expect(readFileSync(file(`world/playerdata/${STEVE}.dat`), "utf8")).not.toBe("Steve's inventory today");
    expect(existsSync(file(`world/playerdata/${ALEX}.dat`))).toBe(false);
    expect(server.discord.messages[0]?.body.embeds[0].description).toMatch(
      new RegExp(`^Restored player ${STEVE} from snapshot [0-9a-f]{8} `),
    );
  }, 120_000);

  it("refuses a name 60,000 UUIDs share in a 4 MiB usercache.json at once, with one short line", async () => {
    await withWorld("bukkit", "running");
    await backUp(server);
    giveToGame(server.worldDir, server.root);
    // Each UUID's entries were looked for among all the others: minutes of CPU, and a line of megabytes.
    const uuid = (i: number) => `6f4b2c1e-0000-4000-8000-${i.toString(16).padStart(12, "0")}`;
    const cache = Array.from({ length: 60_000 }, (_, i) => ({ name: i % 2 ? "Steve" : "sTeVe", uuid: uuid(i + 1) }));
    const text = JSON.stringify(cache);
    expect(text.length).toBeLessThan(4 * 1024 * 1024);
    asGame("rm -f usercache.json && cat > usercache.json", text);

    const result = await server.run(["restore", "--player", "Steve", "--dry-run"]);
    expect(result.code).toBe(2);
    const listed = Array.from({ length: 10 }, (_, i) => {
      const data = i < 2 ? "playerdata" : "no playerdata"; // Steve's and Alex's UUIDs come first
      return `${uuid(i + 1)} (${i % 2 ? "Steve" : "sTeVe"}, no expiry, ${data} in world)`;
    });
    expect(result.stderr).toBe(
      `backup: "Steve" names 60000 players in the server's usercache.json: ${listed.join(", ")}, and 59990 more — nothing was restored; choose one with --player <uuid>\n`,
    );
    expect(asideDir()).toEqual([]);
  });

  it("restores by UUID without reading usercache.json: a FIFO or a 5 MiB file there stops nothing", async () => {
    await withWorld("bukkit", "running");
    await backUp(server);
    const snapshot = hashOf(`world/playerdata/${STEVE}.dat`);
    giveToGame(server.worldDir, server.root);
    asGame("rm -f usercache.json && mkfifo usercache.json");
    const witness = fifoWitness(file("usercache.json"));
    try {
      put(`world/playerdata/${STEVE}.dat`, "griefed inventory");
      const result = await server.run(["restore", "--player", STEVE.toUpperCase(), "--no-backup"]);
      expect(result).toMatchObject({ code: 0, stderr: "" });
      expect(hashOf(`world/playerdata/${STEVE}.dat`)).toBe(snapshot);
      expect(server.discord.messages[0]?.body.embeds[0].description).toMatch(
        new RegExp(`^Restored player ${STEVE} from snapshot [0-9a-f]{8} `),
      );
    } finally {
      expect(await witness.end()).toBe(false);
    }

    asGame("rm -f usercache.json && truncate -s 5M usercache.json");
    put(`world/playerdata/${STEVE}.dat`, "griefed again");
    // With somebody online, the cache is what tells whether that is the player: unreadable, it cannot tell (exit 75).
    appendFileSync(file("logs/latest.log"), "[12:00:00] [Server thread/INFO]: Alex joined the game\n");
    const online = await server.run(["restore", "--player", STEVE, "--no-backup"]);
    expect(online.code).toBe(75);
    expect(online.stderr).toBe(
      `backup: cannot tell whether ${STEVE} is online: ${file("usercache.json")} is 5.00 MiB, more than the 4.00 MiB such a file can be — 1 player(s) online; try again when nobody plays\n`,
    );
    expect(readFileSync(file(`world/playerdata/${STEVE}.dat`), "utf8")).toBe("griefed again");
    appendFileSync(file("logs/latest.log"), "[12:10:00] [Server thread/INFO]: Alex left the game\n");
    const large = await server.run(["restore", "--player", STEVE.replaceAll("-", ""), "--no-backup"]);
    expect(large).toMatchObject({ code: 0, stderr: "" });
    expect(hashOf(`world/playerdata/${STEVE}.dat`)).toBe(snapshot);
  }, 120_000);
});

/** Region files of the overworld on both sides of the 0,0 region corner, and one farther out. */
const REGIONS = ["r.-1.-1", "r.-1.0", "r.0.-1", "r.0.0", "r.1.0"];
const FOLDERS = ["region", "entities", "poi"];

describe("backup restore --area", () => {
  it("with --whole-regions, restores exactly the region files covering the area in region/, entities/ and poi/, across a region boundary", async () => {
    await withWorld("bukkit", "running");
    for (const folder of FOLDERS) {
      const made = readdirSync(file(`world/${folder}`)).find((n) => n.endsWith(".mca")) as string;
      for (const r of REGIONS) {
        if (`${r}.mca` !== made) copyFileSync(file(`world/${folder}/${made}`), file(`world/${folder}/${r}.mca`));
      }
    }
    await backUp(server);
    const inArea = FOLDERS.flatMap((f) => REGIONS.slice(0, 4).map((r) => `world/${f}/${r}.mca`));
    const snapshot = inArea.map(hashOf);
    // Griefed after the backup: every region file changes; the one outside the area must keep today's.
    for (const folder of FOLDERS) for (const r of REGIONS) put(`world/${folder}/${r}.mca`, `griefed ${folder} ${r}`);
    const outside = FOLDERS.map((f) => hashOf(`world/${f}/r.1.0.mca`));
    put(`world/playerdata/${ALEX}.dat`, "Alex's progress today");

    const plan = await server.run(["restore", "--area", "-10,-10,10,10", "--whole-regions", "--dry-run"]);
    expect(plan.code).toBe(0);
    const entries = plan.stdout.split("Entries (12):\n")[1]?.trim().split("\n");
    expect(entries?.map((l) => l.trim()).sort()).toEqual(inArea.map((rel) => `replace ${rel}`).sort());
    expect(server.panel.signals()).toEqual([]);

    const result = await server.run(["restore", "--area", "-10,-10,10,10", "--whole-regions"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(inArea.map(hashOf)).toEqual(snapshot);
    expect(FOLDERS.map((f) => hashOf(`world/${f}/r.1.0.mca`))).toEqual(outside);
    expect(readFileSync(file(`world/playerdata/${ALEX}.dat`), "utf8")).toBe("Alex's progress today");
    expect(server.panel.signals()).toEqual(["stop", "start"]);
    const kept = join(server.worldDir, asideDir()[0] as string);
    expect(FOLDERS.flatMap((f) => readdirSync(join(kept, "world", f)).map((n) => `world/${f}/${n}`)).sort()).toEqual(
      [...inArea].sort(),
    );
    expect(titles()).toEqual(["Restore completed"]);
    expect(server.discord.messages[0]?.body.embeds[0].description).toMatch(
      /^Restored the area -10,-10 to 10,10 of the overworld \\\(4 regions whole\\\) from snapshot [0-9a-f]{8} .*: 12 entries/,
    );
  }, 120_000);

  it("refuses an area that is not four numbers, or too large (exit 2)", async () => {
    await withWorld();
    expect(await server.run(["restore", "--area", "1,2,3"])).toMatchObject({
      code: 2,
      stderr: `backup: "1,2,3" is not an area — give two corners in block coordinates as X1,Z1,X2,Z2, e.g. --area=-100,-100,600,250\n`,
    });
    expect((await server.run(["restore", "--area", "0,0,20000,20000"])).stderr).toBe(
      "backup: the area covers 1600 region files, more than 1024 — restore the whole dimension instead: --dimension\n",
    );
    expect((await server.run(["restore", "--player", "Steve", "--dimension", "nether"])).code).toBe(2);
  });
});

describe("backup restore --dimension nether", () => {
  it.each([
    ["bukkit", "world_nether/DIM-1"],
    ["vanilla", "world/DIM-1"],
  ] as const)(
    "restores the nether whole in the %s layout (%s), the overworld keeping today's",
    async (layout, dim) => {
      await withWorld(layout, "offline");
      await backUp(server);
      const netherFile = readdirSync(file(`${dim}/region`))[0] as string;
      const snapshot = hashOf(`${dim}/region/${netherFile}`);
      put(`${dim}/region/${netherFile}`, "griefed nether");
      put(`${dim}/region/r.5.5.mca`, "explored after the backup");
      put("world/region/r.0.0.mca", "today's overworld");

      const result = await server.run(["restore", "--dimension", "nether", "--no-backup"]);
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(hashOf(`${dim}/region/${netherFile}`)).toBe(snapshot);
      expect(existsSync(file(`${dim}/region/r.5.5.mca`))).toBe(false);
      expect(readFileSync(file("world/region/r.0.0.mca"), "utf8")).toBe("today's overworld");
      const kept = join(server.worldDir, asideDir()[0] as string);
      expect(readFileSync(join(kept, dim, "region/r.5.5.mca"), "utf8")).toBe("explored after the backup");
      // The server was offline: nothing to stop; it is started afterwards, as after every restore.
      expect(server.panel.signals()).toEqual(["start"]);
      // --no-backup: no pre-restore snapshot.
      expect((await snapshotTags()).length).toBe(1);
    },
    120_000,
  );
});

describe("a failure midway", () => {
  it("puts every replaced file back and starts the server again", async () => {
    await withWorld("bukkit", "running");
    await backUp(server);
    for (const folder of FOLDERS) put(`world/${folder}/r.0.0.mca`, `griefed ${folder}`);
    const before = FOLDERS.map((f) => hashOf(`world/${f}/r.0.0.mca`));
    let moves = 0;
    const restore = runRestore(inProcess(server), {
      area: "0,0,1,1",
      snapshot: "latest",
      backup: false,
      serverTimeoutMs: 60_000,
      beforeMove: (rel) => {
        // The fourth move: entities' file is aside and the restored one in place, poi's is aside, the restored one not yet.
        if (++moves === 4) throw new Error(`disk full while moving ${rel}`);
      },
    });
    await expect(restore).rejects.toThrow(
      /^restore failed: disk full while moving world\/poi\/r\.0\.0\.mca; everything replaced was put back$/,
    );
    expect(FOLDERS.map((f) => hashOf(`world/${f}/r.0.0.mca`))).toEqual(before);
    expect(readdirSync(server.worldDir).filter((n) => n.startsWith(".mcops-"))).toEqual([]);
    expect(server.panel.signals()).toEqual(["stop", "start"]);
    expect(titles()).toEqual(["Restore failed"]);
  }, 120_000);
});

describe("restores against what the volume and the game do", () => {
  it("finds the snapshot's files with a WORLD_DIR written with a trailing slash", async () => {
    await withWorld("bukkit", "offline");
    await backUp(server);
    // Every chunk of the region file gone since (its header zeroed): chunk 0,0 of the area must come back.
    put("world/region/r.0.0.mca", Buffer.alloc(8192));
    server.backupEnv({ WORLD_DIR: `${server.worldDir}/` });
    const area = await server.run(["restore", "--area", "0,0,10,10", "--no-backup"]);
    expect(area).toMatchObject({ code: 0, stderr: "" });
    expect(lstatSync(file("world/region/r.0.0.mca")).size).toBeGreaterThan(8192);
    expect((await server.run(["restore", "--player", "Steve", "--no-backup"])).code).toBe(0);
  }, 120_000);

  it("restores a level whose name has glob characters in it (restic's --include is a pattern)", async () => {
    await withWorld("bukkit", "offline");
    for (const name of ["world", "world_nether", "world_the_end"]) {
      renameSync(file(name), file(name.replace("world", "world[1]")));
    }
    writeFileSync(file("server.properties"), "level-name=world[1]\n");
    await backUp(server);
    const before = hashOf(`world[1]/playerdata/${STEVE}.dat`);
    put(`world[1]/playerdata/${STEVE}.dat`, "griefed");
    const result = await server.run(["restore", "--player", "Steve", "--no-backup"]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(hashOf(`world[1]/playerdata/${STEVE}.dat`)).toBe(before);
  }, 120_000);

  it("keeps aside a player's file the game wrote after the plan, instead of replacing it", async () => {
    await withWorld("bukkit", "offline");
    put(`world/stats/${STEVE}.json`, "stats in the snapshot");
    await backUp(server);
    rmSync(file(`world/stats/${STEVE}.json`)); // not there when the plan is made
    let moves = 0;
    await runRestore(inProcess(server), {
      player: "Steve",
      snapshot: "latest",
      backup: false,
      serverTimeoutMs: 60_000,
      beforeMove: () => {
        // The server writes Steve's statistics while the snapshot is restored into staging.
        if (++moves === 1) put(`world/stats/${STEVE}.json`, "written by the game meanwhile");
      },
    });
    expect(readFileSync(file(`world/stats/${STEVE}.json`), "utf8")).toBe("stats in the snapshot");
    const [aside] = asideDir();
    expect(readFileSync(join(server.worldDir, aside as string, `world/stats/${STEVE}.json`), "utf8")).toBe(
      "written by the game meanwhile",
    );
  }, 120_000);

  it("refuses an old name found in the snapshot's cache while the player is online under the new one (exit 75)", async () => {
    await withWorld("bukkit", "running");
    server.backupEnv({ BACKUP_EXTRA_PATHS: "usercache.json" });
    await backUp(server);
    // Steve renamed himself Steve_2: the server's cache says so, and the log shows him online under that name.
    writeFileSync(
      file("usercache.json"),
      JSON.stringify([{ name: "Steve_2", uuid: STEVE, expiresOn: "2026-12-25 10:00:00 +0000" }]),
    );
    appendFileSync(file("logs/latest.log"), "[12:00:00] [Server thread/INFO]: Steve_2 joined the game\n");
    put(`world/playerdata/${STEVE}.dat`, "today's inventory");
    const result = await server.run(["restore", "--player", "Steve", "--no-backup"]);
    expect(result.code).toBe(75);
    expect(result.stderr).toMatch(/^backup: 6f4b2c1e-0000-4000-8000-000000000001 \(Steve\) is online/);
    expect(readFileSync(file(`world/playerdata/${STEVE}.dat`), "utf8")).toBe("today's inventory");
  }, 120_000);

  it("refuses an area the snapshot has nothing of, and a snapshot given with --tag, before touching anything (exit 2)", async () => {
    await withWorld("bukkit", "running");
    await backUp(server);
    const empty = await server.run(["restore", "--area", "1000000,1000000,1000010,1000010"]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(
      /^backup: snapshot [0-9a-f]{8} holds no region file of the area 1000000,1000000 to 1000010,1000010 in the overworld — check the coordinates/,
    );
    const both = await server.run(["restore", "latest", "--tag", "pre-upgrade"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/^backup: give a snapshot or --tag, not both/);
    expect(server.panel.signals()).toEqual([]);
    expect(asideDir()).toEqual([]);
    expect(await snapshotTags()).toHaveLength(1);
  }, 120_000);
});
