import { execFileSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { buildWorld, giveToGame, leaseSwapWorld, resticVersions, swapForLink, waitUntil } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorld, type Server, startServer, treeHash } from "./harness.ts";

/**
 * The server volume as an attacker writes it (issue 12): every test puts root-only canaries outside the volume and
 * shows that the built `backup` neither reads, moves, chowns nor posts them, and ends with one line and its exit code.
 */
let server: Server;
let canary: string;
const WORLDS = ["world", "world_nether", "world_the_end"];
const hashes = () => WORLDS.map((d) => treeHash(join(server.worldDir, d)));
const canaryState = () => ({ hash: treeHash(canary), owner: statSync(join(canary, "secret")).uid });
const properties = (text: string) => writeFileSync(join(server.worldDir, "server.properties"), text);

beforeEach(async () => {
  server = await startServer({ state: "offline" });
  canary = join(server.root, "host-dir");
  mkdirSync(canary, { mode: 0o700 });
  writeFileSync(join(canary, "secret"), "root only\n", { mode: 0o600 });
  giveToGame(server.worldDir, server.root);
  expect((await server.run(["init"])).code).toBe(0);
  expect((await server.run()).code).toBe(0);
  server.discord.reset();
  server.panel.reset();
});

afterEach(async () => {
  await server.close();
});

describe("level-name from a hostile server.properties", () => {
  it.each([
    ["lnk/payload", "finding 1: a directory planted through a link"],
    ["../othersrv/world", "finding 3: another server's world"],
  ])(
    "restore refuses level-name=%s (%s) with exit 78 and moves nothing",
    async (name) => {
      const other = join(server.root, "volumes", "othersrv", "world");
      makeWorld(join(server.root, "volumes", "othersrv"), 1);
      const otherHash = treeHash(other);
      mkdirSync(join(server.worldDir, "lnk", "payload"), { recursive: true });
      writeFileSync(join(server.worldDir, "lnk", "payload", "level.dat"), "x");
      rmSync(join(server.worldDir, "lnk"), { recursive: true });
      symlinkSync(canary, join(server.worldDir, "lnk"));
      properties(`level-name=${name}\n`);
      const before = { canary: canaryState(), worlds: hashes() };

      const result = await server.run(["restore", "latest"]);
      expect(result.code).toBe(78);
      expect(result.stderr).toBe(
        `backup: level-name ${JSON.stringify(name)} has a path separator in it: it must be one folder name (${join(server.worldDir, "server.properties")}) — set level-name to the world folder's own name, e.g. world\n`,
      );
      expect({ canary: canaryState(), worlds: hashes() }).toEqual(before);
      expect(treeHash(other)).toBe(otherHash);
      expect(server.panel.signals()).toEqual([]);
    },
    60_000,
  );

  it("backup refuses level-name=../canary (finding 5): exit 78, nothing read into the repository, the failure posted as plain text", async () => {
    properties("level-name=../host-dir\n");
    const snapshots = (await server.run(["snapshots"])).stdout;
    const result = await server.run();
    expect(result.code).toBe(78);
    expect(result.stderr).toMatch(/^backup: level-name "\.\.\/host-dir" has a path separator in it/);
    expect((await server.run(["snapshots"])).stdout).toBe(snapshots);
    expect(server.panel.commands()).toEqual([]);
  });

  it("posts a level-name that is a masked link as literal text, never as a link (finding 10)", async () => {
    properties("level-name=[Click to claim your reward](https://evil.example/login)\n");
    const result = await server.run();
    expect(result.code).toBe(78);
    const failed = server.discord.messages.find((m) => m.body.embeds[0].title === "Backup failed");
    const description = failed?.body.embeds[0].description as string;
    expect(description).toContain("\\[Click to claim your reward\\]\\(https:");
    expect(description).not.toMatch(/(^|[^\\])\[Click/);
  });
});

describe("bidirectional and zero-width controls from the game (issue 32, item 6)", () => {
  it("writes a level-name's U+202E visibly in the error line, and leaves it out of the Discord message", async () => {
    properties("level-name=\u202edlrow/\u200bx\n");
    const result = await server.run();
    expect(result.code).toBe(78);
    expect(result.stderr).toBe(
      `backup: level-name "\\u202edlrow/\\u200bx" has a path separator in it: it must be one folder name (${join(server.worldDir, "server.properties")}) — set level-name to the world folder's own name, e.g. world\n`,
    );
    const failed = server.discord.messages.find((m) => m.body.embeds[0].title === "Backup failed");
    const description = failed?.body.embeds[0].description as string;
    expect(description).toContain('level-name "dlrow/x" has a path separator in it');
    expect(description).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u200b-\u200f\ufeff]/);
  });
});

describe("files of the game that are not what they seem", () => {
  it("reads no server.properties behind a link to /dev/zero (finding 7): one line, exit 1, the lock is free again", async () => {
    rmSync(join(server.worldDir, "server.properties"));
    symlinkSync("/dev/zero", join(server.worldDir, "server.properties"));
    const first = await server.run();
    expect(first.code).toBe(1);
    expect(first.stderr).toBe(
      `backup: ${join(server.worldDir, "server.properties")} is a symbolic link, not a regular file — links inside the server volume are never followed; remove it\n`,
    );
    expect((await server.run()).code).toBe(1);
  });

  it("refuses a server.properties of 2 GiB without reading it", async () => {
    const file = join(server.worldDir, "server.properties");
    execFileSync("truncate", ["-s", "2G", file]);
    const result = await server.run();
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/server\.properties is 2\.00 GiB, more than the 1\.00 MiB such a file can be/);
  });

  it("does not hang on a FIFO as latest.log (finding 6): the flush goes unconfirmed, autosave is back on, the backup is taken", async () => {
    // The panel stand-in must not write the game's console lines into the FIFO itself: a server that writes no log.
    await server.close();
    server = await startServer({ state: "running", writesLog: false });
    giveToGame(server.worldDir, server.root);
    expect((await server.run(["init"])).code).toBe(0);
    server.panel.reset();
    rmSync(join(server.worldDir, "logs", "latest.log"));
    execFileSync("mkfifo", [join(server.worldDir, "logs", "latest.log")]);
    server.backupEnv({ BACKUP_SAVE_TIMEOUT: "3600" });
    const result = await server.run();
    expect(result.code).toBe(0);
    expect(server.panel.commands()).toEqual(["save-off", "save-all flush", "save-on"]);
    expect(server.backupLog()).toContain(
      `${join(server.worldDir, "logs", "latest.log")} is a FIFO, not a regular file: going on without the game's confirmation`,
    );
  });

  it("refuses a world that is a link instead of backing up what it points to", async () => {
    rmSync(join(server.worldDir, "world_nether"), { recursive: true });
    symlinkSync(canary, join(server.worldDir, "world_nether"));
    const result = await server.run();
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/world_nether is a symbolic link, not a world directory/);
  });

  it.each([
    ["rest:http://mcops:hunter2-repo-password@127.0.0.1:9/repo/", "rest:http://***@127.0.0.1:9/repo/"],
    // restic quotes this form whole in its own error, which becomes the reason posted in "Backup failed".
    ["sftp:mcops:hunter2-repo-password@127.0.0.1:/repo", "sftp:***@127.0.0.1:/repo"],
  ])(
    "shows no credential of RESTIC_REPOSITORY=%s in its line, its log or its message (finding 9)",
    async (repository, shown) => {
      server.backupEnv({ RESTIC_REPOSITORY: repository });
      const result = await server.run();
      expect(result.code).not.toBe(0);
      expect(server.discord.messages.map((m) => m.body.embeds[0].title)).toContain("Backup failed");
      const everything = [result.stdout, result.stderr, server.backupLog(), JSON.stringify(server.discord.messages)];
      for (const text of everything) expect(text).not.toContain("hunter2-repo-password");
      expect(server.backupLog()).toContain(shown);
    },
    60_000,
  );
});

/**
 * The races are run with the machine's restic and with Debian 13's (0.18), which looks at what stands at its restore
 * target: restic writes into a directory inside the staging directory's descriptor with both.
 */
const RACED = [
  { label: "the machine's restic", path: process.env.PATH ?? "" },
  ...resticVersions()
    .filter((pair) => pair.debian === 13)
    .map((pair) => ({ label: `restic ${pair.restic} (Debian 13)`, path: `${pair.dir}:${process.env.PATH}` })),
];

describe.each(RACED)("restore while the game's user moves things, with $label", ({ path }) => {
  /** A restic that holds `restore` until the test has done its move: the moment is the test's, not luck's. */
  function holdRestic(): { held: string; go: string; env: Record<string, string> } {
    const bin = join(server.root, "bin");
    mkdirSync(bin);
    const held = join(server.root, "restic-held");
    const go = join(server.root, "restic-go");
    const real = execFileSync("sh", ["-c", "command -v restic"], { encoding: "utf8", env: { PATH: path } }).trim();
    writeFileSync(
      join(bin, "restic"),
      `#!/bin/sh\nif [ "$1" = restore ]; then\n  : > '${held}'\n  i=0\n  while [ ! -e '${go}' ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\nfi\nexec '${real}' "$@"\n`,
    );
    chmodSync(join(bin, "restic"), 0o755);
    return { held, go, env: { PATH: `${bin}:${path}` } };
  }

  it("writes nothing outside the volume when the staging directory is swapped for a link (finding 1's race)", async () => {
    const snapshot = hashes();
    writeFileSync(join(server.worldDir, "world", "level.dat"), "played on after the backup");
    const before = canaryState();
    const restic = holdRestic();
    const run = server.start(["restore", "latest", "--no-start"], restic.env);
    await waitUntil(() => existsSync(restic.held), "restic restore to start");
    const swap = await swapForLink(server.worldDir, ".mcops-restore-", canary);
    expect(swap.name).toMatch(/^\.mcops-restore-/);
    expect(swap).toMatchObject({ entered: false });
    expect(swap.error).toBeUndefined();
    writeFileSync(restic.go, "");
    const result = await run.done;
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(canaryState()).toEqual(before);
    expect(readdirSync(canary)).toEqual(["secret"]);
    expect(hashes()).toEqual(snapshot);
    expect(lstatSync(join(server.worldDir, "world")).uid).toBe(988);
    expect(lstatSync(join(server.worldDir, "world", "level.dat")).uid).toBe(988);
  }, 120_000);

  it("never uses a .mcops-pre-restore- link planted in advance (finding 4): the aside directory's name cannot be guessed", async () => {
    const now = Date.now();
    const planted: string[] = [];
    for (let s = -5; s < 300; s++) {
      const stamp = new Date(now + s * 1000)
        .toISOString()
        .replace(/\.\d+Z$/, "Z")
        .replaceAll(":", "-");
      const name = `.mcops-pre-restore-${stamp}`;
      symlinkSync(canary, join(server.worldDir, name));
      planted.push(name);
    }
    const before = canaryState();
    const result = await server.run(["restore", "latest", "--no-start"], { PATH: path });
    expect(result.code).toBe(0);
    expect(canaryState()).toEqual(before);
    expect(readdirSync(canary)).toEqual(["secret"]);
    for (const name of planted) expect(lstatSync(join(server.worldDir, name)).isSymbolicLink()).toBe(true);
    const aside = readdirSync(server.worldDir).filter(
      (n) => n.startsWith(".mcops-pre-restore-") && lstatSync(join(server.worldDir, n)).isDirectory(),
    );
    expect(aside).toHaveLength(1);
    expect(statSync(join(server.worldDir, aside[0] as string)).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(canary, "secret"), "utf8")).toBe("root only\n");
  }, 120_000);
});

describe("a world swapped for a link while restic walks it (the red team's lease)", () => {
  /** restic's own view of a file in the newest snapshot, or "" when the snapshot does not hold it. */
  function inSnapshot(path: string): string {
    try {
      return execFileSync("restic", ["dump", "latest", path], {
        env: {
          ...server.env,
          RESTIC_REPOSITORY: `rclone:mcopstest:${server.repoDir}`,
          RESTIC_PASSWORD_FILE: server.passwordFile,
        },
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      });
    } catch {
      return "";
    }
  }

  it.each([
    ["yes", false],
    ["no", true],
  ])(
    "BACKUP_ISOLATE=%s: the host file behind the link is in the snapshot: %s",
    async (isolate, leaks) => {
      writeFileSync(join(canary, "secret"), "ROOT ONLY CANARY\n", { mode: 0o600 });
      // The game's own files: a placeholder named like the file it is after, and one it leases to hold restic.
      writeFileSync(join(server.worldDir, "world", "secret"), "placeholder");
      writeFileSync(join(server.worldDir, "world", "region", "zz.mca"), "x");
      execFileSync("chown", ["-R", "988:988", server.worldDir]);
      const flags = join(server.root, "flags");
      mkdirSync(flags);
      chownSync(flags, 988, 988);
      server.backupEnv({ BACKUP_ISOLATE: isolate });
      const attacker = leaseSwapWorld(
        server.worldDir,
        join(server.worldDir, "world", "region", "zz.mca"),
        canary,
        flags,
      );
      await attacker.ready;
      const result = await server.run();
      await attacker.finish();
      expect(attacker.swapped()).toBe(true);
      expect(result.code).toBe(0);
      expect(inSnapshot(join(server.worldDir, "world", "secret")).includes("ROOT ONLY CANARY")).toBe(leaks);
      expect(canaryState().owner).toBe(0);
    },
    120_000,
  );
});

describe("the restore drill on a world the game filled with links (issue 28)", () => {
  it("names every link in the restored world and never opens or names what they point at", async () => {
    for (const dir of WORLDS) rmSync(join(server.worldDir, dir), { recursive: true, force: true });
    buildWorld(server.worldDir, { layout: "vanilla", external: true, players: 2 });
    // Root-only files outside the volume, as the host has them: a player's file and a region file the drill would
    // call damaged if it ever read them (so reading them would show), and a world of another server.
    writeFileSync(join(canary, "6f4b2c1e-0000-4000-8000-000000000009.dat"), "root only\n", { mode: 0o600 });
    writeFileSync(join(canary, "r.0.0.mca"), Buffer.alloc(100, 7), { mode: 0o600 });
    mkdirSync(join(canary, "othersrv", "world", "region"), { recursive: true });
    const region = join(server.worldDir, "world", "region");
    const mcc = readdirSync(region).find((n) => n.endsWith(".mcc")) as string;
    // The game's user owns its world and plants the links itself.
    execFileSync("chown", ["-R", "988:988", server.worldDir]);
    const asGame = (...args: string[]) =>
      execFileSync("setpriv", ["--reuid=988", "--regid=988", "--clear-groups", ...args]);
    for (const rel of ["world/playerdata", "world/entities", "world/DIM-1/region", `world/region/${mcc}`]) {
      asGame("rm", "-rf", join(server.worldDir, rel));
      asGame("ln", "-s", rel.endsWith(".mcc") ? join(canary, "secret") : canary, join(server.worldDir, rel));
    }
    asGame("ln", "-s", join(canary, "othersrv"), join(server.worldDir, "world", "dimensions"));
    expect((await server.run()).code).toBe(0);
    server.discord.reset();
    const before = canaryState();

    const result = await server.run(["drill"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^backup: world\/DIM-1\/region: is a symbolic link, not a folder \(and 4 more damaged\)/,
    );
    const damaged = server
      .backupLog()
      .split("\n")
      .filter((l) => l.includes("WARN damaged: "))
      .map((l) => l.slice(l.indexOf("damaged: ") + 9));
    expect(damaged).toEqual([
      "world/DIM-1/region: is a symbolic link, not a folder",
      "world/dimensions: is a symbolic link, not a folder",
      "world/entities: is a symbolic link, not a folder",
      "world/playerdata: is a symbolic link, not a folder",
      expect.stringMatching(
        new RegExp(
          `^world/region/r\\.0\\.0\\.mca: chunk -?\\d+,-?\\d+: its ${mcc.replaceAll(".", "\\.")}: is a symbolic link, not a file$`,
        ),
      ),
    ]);
    const said = [result.stderr, server.backupLog(), JSON.stringify(server.discord.messages)].join("\n");
    for (const secret of ["root only", "othersrv/world", "000000000009", canary]) expect(said).not.toContain(secret);
    expect(canaryState()).toEqual(before);
  }, 120_000);
});
