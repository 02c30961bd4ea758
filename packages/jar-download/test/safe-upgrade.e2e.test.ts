import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import {
  buildWorld,
  compoundBomb,
  type DiscordStandIn,
  type DownloadStandIn,
  type PanelStandIn,
  runTool,
  startDiscordStandIn,
  startDownloadStandIn,
  startPanelStandIn,
  startTool,
  type TempDir,
  type ToolRun,
  tempDir,
  toolEnv,
} from "@mcops/testkit";
import nbt from "prismarine-nbt";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { OLD, writeConfig } from "./config.ts";

/**
 * Safe upgrades with real restic (a local rclone remote) and a world built with real NBT: the pre-upgrade snapshot,
 * the downgrade refused before any request, and --rollback, refused while the world is the newer version's.
 */
const BIN = fileURLToPath(new URL("../dist/jar-download.mjs", import.meta.url));
const BACKUP = fileURLToPath(new URL("../../backup/dist/backup.mjs", import.meta.url));

let stand: DownloadStandIn;
let discord: DiscordStandIn;
let panel: PanelStandIn;
let root: TempDir;
let volume: string;
let env: NodeJS.ProcessEnv;

const jar = (...args: string[]): Promise<ToolRun> => runTool(BIN, args, { env });
const backup = (...args: string[]): Promise<ToolRun> => runTool(BACKUP, args, { env });
const titles = () => discord.messages.map((m) => m.body.embeds[0].title);
const description = (title: string) =>
  discord.messages.find((m) => m.body.embeds[0].title === title)?.body.embeds[0].description as string;

/** The DataVersion and version name level.dat says saved the world. */
async function levelSaver(): Promise<{ dataVersion: number; name: string }> {
  const { parsed } = await nbt.parse(readFileSync(join(volume, "world", "level.dat")));
  const data = nbt.simplify(parsed).Data as { DataVersion: number; Version: { Name: string } };
  return { dataVersion: data.DataVersion, name: data.Version.Name };
}

/** A level.dat whose Data.DataVersion is `dataVersion`, a tag of any type, the rest as the game writes it. */
function levelDatSaying(dataVersion: unknown): Buffer {
  const root = nbt.comp({
    Data: nbt.comp({
      DataVersion: dataVersion as nbt.Tags[nbt.TagType],
      LevelName: nbt.string("world"),
      Version: nbt.comp({ Id: nbt.int(4189), Name: nbt.string("1.21.4"), Snapshot: nbt.byte(0) }),
    }),
  });
  return gzipSync(nbt.writeUncompressed(root as nbt.NBT, "big"));
}

/** The tags of this server's snapshots, oldest first, as backup's own `snapshots --json` gives them. */
async function snapshotTags(): Promise<string[][]> {
  const listed = await backup("snapshots", "--json");
  expect(listed.code).toBe(0);
  return (JSON.parse(listed.stdout) as { tags?: string[] }[]).map((s) => s.tags ?? []);
}

beforeAll(async () => {
  stand = await startDownloadStandIn();
  discord = await startDiscordStandIn();
});
afterAll(async () => {
  await stand.close();
  await discord.close();
});

beforeEach(async () => {
  stand.reset();
  discord.reset();
  panel = await startPanelStandIn({ servers: [{ state: "offline" }], timings: { startMs: 100, stopMs: 100 } });
  root = tempDir("mcops-jar-safe-");
  volume = join(root.path, "volumes", panel.server.uuid);
  mkdirSync(volume, { recursive: true });
  buildWorld(volume, { players: 1 });
  writeFileSync(join(volume, "server.jar"), OLD);
  env = toolEnv(root.path, { MCOPS_RETRY_MS: "20", RCLONE_CONFIG_MCOPSTEST_TYPE: "local" });
  const password = join(root.path, "restic-password");
  writeFileSync(password, "correct horse battery staple mcops test\n", { mode: 0o600 });
  const repository = `RESTIC_REPOSITORY=rclone:mcopstest:${join(root.path, "repo")}`;
  writeConfig(env, { panel, volume, stand, discord, extra: [repository, `RESTIC_PASSWORD_FILE=${password}`] });
});
afterEach(async () => {
  await panel.close();
  root.cleanup();
});

describe("jar-download: safe upgrades", () => {
  it("snapshots the world before an upgrade, names it, and rolls back; refused while the newer version's world is in place", async () => {
    expect((await backup("init")).code).toBe(0);
    // Minecraft 1.21.3 into a stopped server, then Paper 1.21.4 with --stop: one pre-upgrade snapshot each.
    const first = await jar("1.21.3", "--type", "vanilla");
    expect(first).toMatchObject({ code: 0, stderr: "" });
    expect(first.stdout).toMatch(/ The world before it is snapshot [0-9a-f]{8} \(pre-upgrade\)\.\n$/);
    panel.setState("running");
    const upgrade = await jar("1.21.4", "--stop");
    expect(upgrade).toMatchObject({ code: 0, stderr: "" });
    const id = /snapshot ([0-9a-f]{8}) \(pre-upgrade\)/.exec(upgrade.stdout)?.[1] as string;
    expect(id).toBeDefined();
    expect(panel.signals()).toEqual(["stop", "start"]);
    expect(readFileSync(join(volume, "server.jar"))).toEqual(stand.jar("paper-1.21.4-231.jar"));
    expect(readFileSync(join(volume, "server.jar.previous"))).toEqual(stand.jar("vanilla-1.21.3.jar"));
    expect(titles()).toEqual(["Server jar updated", "Server upgraded"]);
    expect(description("Server upgraded")).toContain(`The world before it is snapshot ${id} (pre-upgrade)`);
    // Both are in the repository, tagged, and listed by backup snapshots.
    expect((await snapshotTags()).map((tags) => tags.includes("pre-upgrade"))).toEqual([true, true]);
    expect((await backup("snapshots")).stdout).toContain(id);

    // The new version saves the world: going back to 1.21.3 is refused, naming the snapshot to restore first.
    buildWorld(volume, { players: 1, savedBy: { name: "1.21.4", dataVersion: 4189 } });
    const refused = await jar("--rollback");
    expect(refused).toMatchObject({
      code: 2,
      stdout: "",
      stderr: `jar-download: the world has been saved by 1.21.4 (data version 4189) since the upgrade; Minecraft 1.21.3 (4082) cannot open it safely — restore the pre-upgrade snapshot ${id} first (backup restore --tag pre-upgrade), then run jar-download --rollback again\n`,
    });
    expect(panel.signals()).toEqual(["stop", "start"]);
    expect(readFileSync(join(volume, "server.jar"))).toEqual(stand.jar("paper-1.21.4-231.jar"));

    // Doing what it says: the world of before the upgrade, then the old jar.
    const restored = await backup("restore", "--tag", "pre-upgrade", "--no-backup");
    expect(restored).toMatchObject({ code: 0 });
    expect(await levelSaver()).toEqual({ dataVersion: 3953, name: "1.21" });
    const back = await jar("--rollback");
    expect(back).toMatchObject({ code: 0, stderr: "" });
    expect(back.stdout).toBe(
      "Minecraft 1.21.3 is back as server.jar (Paper 1.21.4 build 231 is kept as server.jar.previous). The server was restarted with it.\n",
    );
    expect(readFileSync(join(volume, "server.jar"))).toEqual(stand.jar("vanilla-1.21.3.jar"));
    expect(readFileSync(join(volume, "server.jar.previous"))).toEqual(stand.jar("paper-1.21.4-231.jar"));
    expect(panel.state()).toBe("running");
    expect(titles().at(-1)).toBe("Server rolled back");
  }, 120_000);

  it("refuses a downgrade before any request, and allows another build or type of the same version", async () => {
    buildWorld(volume, { players: 1, savedBy: { name: "1.21.4", dataVersion: 4189 } });
    for (const args of [["1.21.3", "--type", "vanilla"], ["1.21.3", "--type", "vanilla", "--dry-run"], ["1.20.1"]]) {
      const result = await jar(...args);
      const what = args[0] === "1.20.1" ? "Paper 1.20.1 (3465)" : "Minecraft 1.21.3 (4082)";
      expect(result).toMatchObject({
        code: 2,
        stdout: "",
        stderr: `jar-download: the world was last saved by 1.21.4 (data version 4189); ${what} cannot open it safely — restore a snapshot from before the upgrade instead\n`,
      });
    }
    expect(stand.requests).toEqual([]);
    expect(panel.calls).toEqual([]);
    expect(readFileSync(join(volume, "server.jar"))).toEqual(OLD);

    const sameVersion = await jar("1.21.4", "--type", "purpur", "--build", "2400", "--no-backup");
    expect(sameVersion).toMatchObject({ code: 0, stderr: "" });
    expect(readFileSync(join(volume, "server.jar"))).toEqual(stand.jar("purpur-1.21.4-2400.jar"));
    const plan = await jar("1.21.4", "--dry-run");
    expect(plan.stdout).toContain("  first:    a snapshot of the world, tagged pre-upgrade\n");
  });

  it("refuses a level.dat built to exhaust memory with one line, before any request (issue 28)", async () => {
    buildWorld(volume, { players: 1 });
    // 10 million empty compounds beside the real fields: ~10 KiB on disk, tens of millions of objects to a tree parser.
    writeFileSync(
      join(volume, "world", "level.dat"),
      gzipSync(compoundBomb(10_000_000, { name: "1.21.4", dataVersion: 4189 })),
    );
    for (const args of [["1.21.4", "--dry-run"], ["1.21.4"]]) {
      const result = await jar(...args);
      expect(result, args.join(" ")).toMatchObject({
        code: 2,
        stdout: "",
        stderr: `jar-download: cannot tell which version saved the world: level.dat is not NBT (it holds more than 4194304 values, far more than the game writes) (${join(volume, "world", "level.dat")}) — restore a snapshot whose world is whole (backup drill checks them); or go on without the world's version: --ignore-world-version (the world is still snapshotted first)\n`,
      });
    }
    expect(stand.requests).toEqual([]);
    expect(panel.calls).toEqual([]);
    expect(readFileSync(join(volume, "server.jar"))).toEqual(OLD);
  });

  describe("a level.dat that says a data version no game writes, or cannot be read (issue 32)", () => {
    const go = "--ignore-world-version (the world is still snapshotted first)";
    const impossible = (said: string) =>
      `jar-download: level.dat says data version ${said}, which no game version writes (${join(volume, "world", "level.dat")}) — the game did not write it; restore a snapshot whose world is whole, or go on without it: ${go}\n`;
    const cases: { what: string; data: () => Buffer; line: () => string | RegExp }[] = [
      { what: "2147483647", data: () => levelDatSaying(nbt.int(2147483647)), line: () => impossible("2147483647") },
      { what: "-5", data: () => levelDatSaying(nbt.int(-5)), line: () => impossible("-5") },
      {
        what: '"abc" (a string tag)',
        data: () => levelDatSaying(nbt.string("abc")),
        line: () =>
          `jar-download: cannot tell which version saved the world: level.dat has no Data.DataVersion that is a number (${join(volume, "world", "level.dat")}) — a world from before 1.9 has none: upgrade it with a release first; or go on without the world's version: ${go}\n`,
      },
      {
        what: "garbage",
        data: () => Buffer.from("\x1f\x8b not really gzip, written by a plugin\n"),
        line: () =>
          /^jar-download: cannot tell which version saved the world: level\.dat is not gzip \([^\n]*\) \([^\n]*level\.dat\) — restore a snapshot whose world is whole \(backup drill checks them\); or go on without the world's version: --ignore-world-version \(the world is still snapshotted first\)\n$/,
      },
    ];

    it.each(cases)(
      "$what: one line, exit 2, nothing asked or installed; --ignore-world-version installs, snapshotted first",
      async ({ data, line }) => {
        expect((await backup("init")).code).toBe(0);
        writeFileSync(join(volume, "world", "level.dat"), data());
        for (const args of [["1.21.4"], ["1.21.4", "--stop", "--dry-run"]]) {
          const refused = await jar(...args);
          expect(refused, args.join(" ")).toMatchObject({ code: 2, stdout: "" });
          const expected = line();
          if (typeof expected === "string") expect(refused.stderr).toBe(expected);
          else expect(refused.stderr).toMatch(expected);
        }
        expect(stand.requests).toEqual([]);
        expect(panel.calls).toEqual([]);
        expect(readFileSync(join(volume, "server.jar"))).toEqual(OLD);
        expect(await snapshotTags()).toEqual([]);

        // Going on: installed, the world snapshotted first, and the log says what level.dat says.
        const result = await jar("1.21.4", "--ignore-world-version");
        expect(result.code, result.stderr).toBe(0);
        expect(result.stdout).toMatch(/ The world before it is snapshot [0-9a-f]{8} \(pre-upgrade\)\.\n$/);
        expect(result.stderr).toMatch(/the world's version is not checked \(--ignore-world-version\): /);
        expect(readFileSync(join(volume, "server.jar"))).toEqual(stand.jar("paper-1.21.4-231.jar"));
        expect(await snapshotTags()).toEqual([expect.arrayContaining(["pre-upgrade"])]);
      },
      60_000,
    );

    it("takes up to 1000 past the newest data version minecraft-data knows, and says how to go on from a downgrade to it", async () => {
      writeFileSync(join(volume, "world", "level.dat"), levelDatSaying(nbt.int(6024)));
      expect((await jar("1.21.4", "--dry-run")).stderr).toBe(impossible("6024"));
      writeFileSync(join(volume, "world", "level.dat"), levelDatSaying(nbt.int(6023)));
      expect(await jar("1.21.4", "--dry-run")).toMatchObject({
        code: 2,
        stderr: `jar-download: the world was last saved by 1.21.4 (data version 6023); Paper 1.21.4 (4189) cannot open it safely — restore a snapshot from before the upgrade instead; if level.dat is wrong about it: ${go}\n`,
      });
      const plan = await jar("1.21.4", "--dry-run", "--ignore-world-version");
      expect(plan).toMatchObject({ code: 0, stderr: "" });
      expect(plan.stdout).toContain("  world:    its version not checked (--ignore-world-version)\n");
      expect(stand.requests.filter((r) => r.route === "jar")).toEqual([]);
    });
  });

  it("reads level.dat_old when level.dat is not there, as the game does (a save cut between its renames)", async () => {
    // The game renames level.dat to level.dat_old before its new one takes the name; it starts from level.dat_old.
    buildWorld(volume, { players: 1, savedBy: { name: "1.21.4", dataVersion: 4189 } });
    renameSync(join(volume, "world", "level.dat"), join(volume, "world", "level.dat_old"));
    const refused = await jar("1.21.3", "--type", "vanilla", "--dry-run");
    expect(refused).toMatchObject({
      code: 2,
      stdout: "",
      stderr:
        "jar-download: the world was last saved by 1.21.4 (data version 4189); Minecraft 1.21.3 (4082) cannot open it safely — restore a snapshot from before the upgrade instead\n",
    });
    writeFileSync(join(volume, "world", "level.dat_old"), levelDatSaying(nbt.int(2147483647)));
    expect(await jar("1.21.4", "--dry-run")).toMatchObject({
      code: 2,
      stderr: `jar-download: level.dat_old says data version 2147483647, which no game version writes (${join(volume, "world", "level.dat_old")}) — the game did not write it; restore a snapshot whose world is whole, or go on without it: --ignore-world-version (the world is still snapshotted first)\n`,
    });
    writeFileSync(join(volume, "world", "level.dat_old"), "not gzip at all, written by a plugin\n");
    const unreadable = await jar("1.21.4", "--dry-run");
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toMatch(
      /^jar-download: cannot tell which version saved the world: level\.dat_old is not gzip \([^\n]*\) \([^\n]*level\.dat_old\) — /,
    );
    // level.dat there again: level.dat_old is the game's previous save, not read.
    writeFileSync(join(volume, "world", "level.dat"), levelDatSaying(nbt.int(4189)));
    expect(await jar("1.21.4", "--dry-run")).toMatchObject({ code: 0, stderr: "" });
    expect(stand.requests.filter((r) => r.route === "jar")).toEqual([]);
  });

  it("checks and snapshots the world the game plays: server.properties' last level-name, with its escapes (issue 32)", async () => {
    expect((await backup("init")).code).toBe(0);
    buildWorld(volume, { players: 1, savedBy: { name: "1.21.4", dataVersion: 4189 } });
    // The game's user names a folder that is not there first (or spells the world \u0077orld): java.util.Properties
    // takes the last line and its escapes, so the game plays "world"; jar-download had found no world at all.
    for (const text of [
      "level-name=decoy\nlevel-name=world\n",
      "level-name=\\u0077orld\n",
      "level-name=wor\\\n  ld\n",
    ]) {
      writeFileSync(join(volume, "server.properties"), text);
      const refused = await jar("1.21.3", "--type", "vanilla");
      expect(refused, JSON.stringify(text)).toMatchObject({
        code: 2,
        stderr:
          "jar-download: the world was last saved by 1.21.4 (data version 4189); Minecraft 1.21.3 (4082) cannot open it safely — restore a snapshot from before the upgrade instead\n",
      });
    }
    expect(stand.requests).toEqual([]);
    const upgrade = await jar("1.21.4");
    expect(upgrade).toMatchObject({ code: 0, stderr: "" });
    expect(upgrade.stdout).toMatch(/ The world before it is snapshot [0-9a-f]{8} \(pre-upgrade\)\.\n$/);
    expect(await snapshotTags()).toEqual([expect.arrayContaining(["pre-upgrade"])]);
  });

  it("--rollback: a forged level.dat refuses it with one line, --ignore-world-version puts the jar back (issue 32)", async () => {
    writeFileSync(join(volume, "server.jar"), stand.jar("vanilla-1.21.3.jar"));
    expect((await jar("1.21.4", "--no-backup")).code).toBe(0);
    writeFileSync(join(volume, "world", "level.dat"), levelDatSaying(nbt.int(-5)));
    const refused = await jar("--rollback");
    expect(refused).toMatchObject({ code: 2, stdout: "" });
    expect(refused.stderr).toMatch(
      /^jar-download: level\.dat says data version -5, which no game version writes \([^\n]*\n$/,
    );
    expect(readFileSync(join(volume, "server.jar"))).toEqual(stand.jar("paper-1.21.4-231.jar"));
    const back = await jar("--rollback", "--ignore-world-version");
    expect(back).toMatchObject({ code: 0 });
    expect(readFileSync(join(volume, "server.jar"))).toEqual(stand.jar("vanilla-1.21.3.jar"));
  });

  it("rolls back to a jar it did not install (the egg's) by what the jar's version.json says", async () => {
    writeFileSync(join(volume, "server.jar"), stand.jar("vanilla-1.21.3.jar"));
    expect((await jar("1.21.4", "--no-backup")).code).toBe(0);
    buildWorld(volume, { players: 1, savedBy: { name: "1.21.4", dataVersion: 4189 } });
    const refused = await jar("--rollback");
    expect(refused).toMatchObject({
      code: 2,
      stderr:
        "jar-download: the world has been saved by 1.21.4 (data version 4189) since the upgrade; the 1.21.3 jar (4082) cannot open it safely — restore a snapshot from before the upgrade first (backup restore --tag pre-upgrade), then run jar-download --rollback again\n",
    });
    expect(readFileSync(join(volume, "server.jar"))).toEqual(stand.jar("paper-1.21.4-231.jar"));

    buildWorld(volume, { players: 1 });
    const back = await jar("--rollback");
    expect(back).toMatchObject({
      code: 0,
      stderr: "",
      stdout: "the 1.21.3 jar is back as server.jar (Paper 1.21.4 build 231 is kept as server.jar.previous).\n",
    });
    expect(readFileSync(join(volume, "server.jar"))).toEqual(stand.jar("vanilla-1.21.3.jar"));
    expect(panel.signals()).toEqual([]);
  });

  it("for a version minecraft-data does not know, reads the downloaded jar's version.json before the server stops", async () => {
    const future = await startDownloadStandIn({
      paper: { paper: { "1.22": [{ id: 5, channel: "STABLE" }] } },
      worldVersions: { "1.22": 4100 },
    });
    try {
      const file = join(env.MCOPS_CONFIG_DIR as string, "backup.env");
      writeFileSync(file, readFileSync(file, "utf8").replace(stand.bases.paper, future.bases.paper));
      buildWorld(volume, { players: 1, savedBy: { name: "1.21.4", dataVersion: 4189 } });
      panel.setState("running");
      const refused = await jar("1.22", "--stop", "--no-backup");
      expect(refused).toMatchObject({
        code: 2,
        stderr:
          "jar-download: the world was last saved by 1.21.4 (data version 4189); Paper 1.22 build 5 (4100) cannot open it safely — restore a snapshot from before the upgrade instead\n",
      });
      expect(future.requests.filter((r) => r.route === "jar")).toHaveLength(1);
      expect(panel.signals()).toEqual([]);
      expect(readFileSync(join(volume, "server.jar"))).toEqual(OLD);
      expect(readdirSync(volume).filter((n) => n.startsWith(".mcops"))).toEqual([]);
    } finally {
      await future.close();
    }
  });

  it("checks the world again once the server has stopped: what it saved as it stopped is what counts", async () => {
    writeFileSync(join(volume, "server.jar"), stand.jar("vanilla-1.21.3.jar"));
    buildWorld(volume, { players: 1, savedBy: { name: "1.21.3", dataVersion: 4082 } });
    expect((await jar("1.21.4", "--no-backup")).code).toBe(0);
    // The server runs 1.21.4 and has not saved yet; it stays "stopping" until the test has saved the world for it.
    const held = await startPanelStandIn({
      servers: [{ uuid: panel.server.uuid, state: "running" }],
      timings: { startMs: 100, stopMs: 600_000 },
    });
    try {
      writeConfig(env, { panel: held, volume, stand, discord });
      const rollback = startTool(BIN, ["--rollback"], { env });
      await held.waitForState("stopping", 60_000);
      buildWorld(volume, { players: 1, savedBy: { name: "1.21.4", dataVersion: 4189 } });
      held.setState("offline");
      const result = await rollback.done;
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(
        /^jar-download: the world has been saved by 1\.21\.4 \(data version 4189\) since the upgrade; the 1\.21\.3 jar \(4082\) cannot open it safely; nothing was changed — the server was started again with the jar it had; restore/,
      );
      expect(readFileSync(join(volume, "server.jar"))).toEqual(stand.jar("paper-1.21.4-231.jar"));
      expect(held.signals()).toEqual(["stop", "start"]);
      expect(held.state()).toBe("running");
    } finally {
      await held.close();
    }
  }, 120_000);

  it("records the upgrade before the start, so a server that does not come up is rolled back with the right snapshot", async () => {
    expect((await backup("init")).code).toBe(0);
    expect((await jar("1.21.3", "--type", "vanilla")).code).toBe(0);
    panel.setState("running");
    // The panel refuses every power call from the moment the server is offline: the start after the swap fails.
    const refuseStart = panel
      .waitForState("offline", 60_000)
      .then(() => panel.inject({ kind: "status", status: 500, route: "power", times: 50 }));
    const upgrade = await jar("1.21.4", "--stop");
    await refuseStart;
    expect(upgrade.code).toBe(1);
    expect(upgrade.stderr).toMatch(
      /\njar-download: Paper 1\.21\.4 build 231 was installed, but the server did not start: .* — look at the panel console; to go back to the jar before it: jar-download --rollback\n$/,
    );
    const preUpgrade = (
      JSON.parse((await backup("snapshots", "--json")).stdout) as { short_id: string; tags?: string[] }[]
    )
      .filter((snapshot) => snapshot.tags?.includes("pre-upgrade"))
      .map((snapshot) => snapshot.short_id);
    expect(preUpgrade).toHaveLength(2);
    buildWorld(volume, { players: 1, savedBy: { name: "1.21.4", dataVersion: 4189 } });
    const refused = await jar("--rollback");
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`restore the pre-upgrade snapshot ${preUpgrade[1]} first`);
  }, 120_000);

  it("plans a rollback with --dry-run and does nothing", async () => {
    writeFileSync(join(volume, "server.jar"), stand.jar("vanilla-1.21.3.jar"));
    expect((await jar("1.21.4", "--no-backup")).code).toBe(0);
    panel.setState("running");
    const dry = await jar("--rollback", "--dry-run");
    expect(dry).toMatchObject({
      code: 0,
      stdout:
        "Would put the 1.21.3 jar back as server.jar (Paper 1.21.4 build 231 is kept as server.jar.previous; the server is running: stopped and started again). Nothing done (--dry-run).\n",
    });
    expect(readFileSync(join(volume, "server.jar"))).toEqual(stand.jar("paper-1.21.4-231.jar"));
    expect(panel.signals()).toEqual([]);
  });

  it("answers at once, exit 2, for a level.dat built to exhaust a parser's memory", async () => {
    // 200 bytes of gzip: a list of 64 lists, each claiming 16 million TAG_End elements.
    const inner = Buffer.from([0, 0, 0xff, 0xff, 0xff]);
    const head = Buffer.from([10, 0, 0, 9, 0, 1, 0x78, 9, 0, 0, 0, 64]);
    const bomb = gzipSync(Buffer.concat([head, ...Array.from({ length: 64 }, () => inner), Buffer.from([0])]));
    writeFileSync(join(volume, "world", "level.dat"), bomb);
    const result = await jar("1.21.4", "--dry-run");
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^jar-download: cannot tell which version saved the world: level\.dat is not NBT \(a list of TAG_End holds 16777215 elements\)/,
    );
    expect(stand.requests).toEqual([]);
  });

  it("replaces nothing and starts the server again when the pre-upgrade snapshot fails", async () => {
    // No `backup init`: the repository does not exist, restic fails.
    panel.setState("running");
    const result = await jar("1.21.4", "--stop");
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^jar-download: the pre-upgrade snapshot failed, nothing was replaced: /);
    expect(result.stderr).toMatch(
      / — the server was started again with its old jar; fix the backup, or install without one: --no-backup\n$/,
    );
    expect(readFileSync(join(volume, "server.jar"))).toEqual(OLD);
    expect(readdirSync(volume).filter((n) => n.startsWith("server.jar"))).toEqual(["server.jar"]);
    expect(panel.signals()).toEqual(["stop", "start"]);
    expect(panel.state()).toBe("running");
    expect(titles()).not.toContain("Server upgraded");
  });

  it("needs backup's restic settings for a world, says how to go without, and needs none for an empty volume", async () => {
    const file = join(env.MCOPS_CONFIG_DIR as string, "backup.env");
    writeFileSync(file, readFileSync(file, "utf8").replace(/^RESTIC_REPOSITORY=.*\n/m, ""));
    const result = await jar("1.21.4");
    expect(result.code).toBe(78);
    expect(result.stderr).toMatch(
      /^jar-download: RESTIC_REPOSITORY .*\(the pre-upgrade snapshot needs backup's settings\)/,
    );
    expect(result.stderr).toMatch(/install without a pre-upgrade snapshot: --no-backup\n$/);
    expect(result.stderr.split("\n")).toHaveLength(2);
    expect(stand.requests).toEqual([]);
    expect(readFileSync(join(volume, "server.jar"))).toEqual(OLD);

    // A first install: no world yet, nothing to keep.
    for (const name of readdirSync(volume)) rmSync(join(volume, name), { recursive: true });
    const fresh = await jar("1.21.4");
    expect(fresh).toMatchObject({ code: 0, stderr: "" });
    expect(fresh.stdout).not.toContain("pre-upgrade");
  });
});
