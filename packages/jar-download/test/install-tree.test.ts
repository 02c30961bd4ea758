import { execFileSync } from "node:child_process";
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { VolumeDir } from "@mcops/core/volume";
import { type TempDir, tempDir } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  checkTree,
  INSTALL_LIMITS,
  KEEP_PREFIX,
  loaderLayout,
  moveInto,
  prepareLoaderOutput,
} from "../src/install-tree.ts";

/**
 * The installer's output as NeoForge's leaves it (research: neoforged/LegacyInstaller ServerInstall, NeoForge's
 * server_files): run.sh, run.bat, user_jvm_args.txt and libraries/ with the loader's unix_args.txt and Mojang's jar.
 */
const ARGS = "libraries/net/neoforged/neoforge/21.1.77";
const OWNER = { uid: 988, gid: 988 };

let dir: TempDir;
let volume: VolumeDir;
let work: VolumeDir;
let out: VolumeDir;
let keep: VolumeDir;

function installerOutput(path: string): void {
  mkdirSync(join(path, ARGS), { recursive: true });
  mkdirSync(join(path, "libraries/net/minecraft/server/1.21.1"), { recursive: true });
  writeFileSync(join(path, "run.sh"), '#!/usr/bin/env sh\njava @user_jvm_args.txt @libraries/.../unix_args.txt "$@"\n');
  chmodSync(join(path, "run.sh"), 0o700);
  writeFileSync(join(path, "run.bat"), "java @user_jvm_args.txt %*\r\n");
  writeFileSync(join(path, "user_jvm_args.txt"), "# -Xmx4G\n");
  writeFileSync(join(path, ARGS, "unix_args.txt"), "-DlibraryDirectory=libraries\n");
  writeFileSync(join(path, "libraries/net/minecraft/server/1.21.1/server-1.21.1.jar"), "PK\u0003\u0004");
}

beforeEach(() => {
  dir = tempDir("mcops-tree-");
  volume = VolumeDir.open(dir.path);
  work = volume.makePrivateDir(".mcops-jar-download-");
  mkdirSync(work.at("install"));
  out = work.dir("install");
  keep = volume.makePrivateDir(KEEP_PREFIX);
});

afterEach(() => {
  for (const d of [out, keep, work, volume]) d.close();
  dir.cleanup();
});

describe("checkTree", () => {
  it("gives every entry to the game's user through descriptors: directories 755, files 644, run.sh 755", () => {
    installerOutput(out.self);
    expect(checkTree(out, OWNER)).toEqual({ entries: 13, bytes: expect.any(Number) });
    const stat = (rel: string) => statSync(join(out.self, rel));
    for (const rel of ["run.sh", "run.bat", "libraries", ARGS, `${ARGS}/unix_args.txt`]) {
      expect([stat(rel).uid, stat(rel).gid], rel).toEqual([988, 988]);
    }
    expect(stat("run.sh").mode & 0o777).toBe(0o755);
    expect(stat("run.bat").mode & 0o777).toBe(0o644);
    expect(stat(ARGS).mode & 0o777).toBe(0o755);
  });

  it.each([
    [
      "a link to a file outside",
      (d: VolumeDir) => symlinkSync("/etc/shadow", join(d.forChild, ARGS, "evil.txt")),
      "a symbolic link",
    ],
    [
      "a link to a directory",
      (d: VolumeDir) => symlinkSync("/etc", join(d.forChild, "libraries/etc")),
      "a symbolic link",
    ],
    ["a FIFO", (d: VolumeDir) => execFileSync("mkfifo", [join(d.forChild, "libraries/pipe")]), "a FIFO"],
  ])("refuses the whole output when it holds %s, naming it, and follows nothing", (_what, make, kind) => {
    installerOutput(out.self);
    make(out);
    expect(() => checkTree(out, OWNER)).toThrow(
      new RegExp(`the installer's output .* is ${kind}.*nothing was installed`),
    );
    // /etc/shadow was never given away, whatever the order of the walk.
    expect(statSync("/etc/shadow").uid).toBe(0);
  });

  it("refuses more entries, bytes or depth than the limits", () => {
    installerOutput(out.self);
    expect(() => checkTree(out, OWNER, { ...INSTALL_LIMITS, entries: 5 })).toThrow(/makes more than 5 entries/);
    expect(() => checkTree(out, OWNER, { ...INSTALL_LIMITS, bytes: 10 })).toThrow(/makes more than 10 B/);
    expect(() => checkTree(out, OWNER, { ...INSTALL_LIMITS, depth: 3 })).toThrow(/more than 3 directories deep/);
  });
});

describe("moveInto", () => {
  it("moves the expected names in, keeps what they replace, leaves anything else in staging", () => {
    installerOutput(out.self);
    writeFileSync(join(out.self, "installer.log"), "log\n");
    mkdirSync(join(dir.path, "libraries/io/papermc"), { recursive: true });
    writeFileSync(join(dir.path, "libraries/io/papermc/paper.jar"), "paper's");
    writeFileSync(join(dir.path, "server.jar"), "the jar");
    const moved = moveInto(out, volume, keep, ["libraries", "run.sh", "run.bat", "unix_args.txt"]);
    expect(moved).toEqual({ installed: ["libraries", "run.sh", "run.bat"], replaced: ["libraries"] });
    expect(readFileSync(join(dir.path, ARGS, "unix_args.txt"), "utf8")).toContain("libraryDirectory");
    expect(readFileSync(join(keep.self, "libraries/io/papermc/paper.jar"), "utf8")).toBe("paper's");
    expect(readFileSync(join(dir.path, "server.jar"), "utf8")).toBe("the jar");
    expect(readdirSync(out.self).sort()).toEqual(["installer.log", "user_jvm_args.txt"]);
  });

  it("moves a link the game's user put in place aside as the link, never following it", () => {
    installerOutput(out.self);
    symlinkSync("/etc", join(dir.path, "libraries"));
    moveInto(out, volume, keep, ["libraries"]);
    expect(readlinkSync(join(keep.self, "libraries"))).toBe("/etc");
    expect(lstatSync(join(dir.path, "libraries")).isDirectory()).toBe(true);
    expect(lstatSync("/etc/passwd").isFile()).toBe(true);
  });

  it("with clear, swaps back: what the volume has under the names goes aside, what was kept comes back (a rollback, itself undoable)", () => {
    installerOutput(out.self);
    writeFileSync(join(dir.path, "server.jar"), "the jar");
    mkdirSync(join(dir.path, "libraries"));
    writeFileSync(join(dir.path, "libraries", "paper.jar"), "paper's");
    const names = ["libraries", "run.sh", "run.bat", "unix_args.txt"];
    moveInto(out, volume, keep, names);
    const back = volume.makePrivateDir(KEEP_PREFIX);
    try {
      expect(moveInto(keep, volume, back, names, { clear: true })).toEqual({
        installed: ["libraries"],
        replaced: ["libraries", "run.sh", "run.bat"],
      });
      expect(readdirSync(dir.path).filter((n) => !n.startsWith("."))).toEqual(expect.arrayContaining(["libraries"]));
      expect(readFileSync(join(dir.path, "libraries", "paper.jar"), "utf8")).toBe("paper's");
      expect(lstatSync(join(dir.path, "run.sh"), { throwIfNoEntry: false })).toBeUndefined();
      expect(readdirSync(keep.self)).toEqual([]);
      expect(readFileSync(join(back.self, "run.sh"), "utf8")).toContain("java @user_jvm_args.txt");
    } finally {
      back.close();
    }
  });

  it("undoes what it did when a rename fails midway", () => {
    installerOutput(out.self);
    writeFileSync(join(dir.path, "run.sh"), "the old run.sh");
    // run.bat cannot be moved in: a directory of that name in the volume is kept aside, but the keep directory has one too.
    mkdirSync(join(dir.path, "run.bat"));
    mkdirSync(join(keep.self, "run.bat"));
    writeFileSync(join(keep.self, "run.bat", "x"), "x");
    expect(() => moveInto(out, volume, keep, ["run.sh", "run.bat"])).toThrow();
    expect(readFileSync(join(dir.path, "run.sh"), "utf8")).toBe("the old run.sh");
    expect(readFileSync(join(out.self, "run.sh"), "utf8")).toContain("java @user_jvm_args.txt");
    expect(lstatSync(join(dir.path, "run.bat")).isDirectory()).toBe(true);
  });
});

describe("prepareLoaderOutput", () => {
  const layout = loaderLayout("neoforge", "1.21.1", "21.1.77");

  it("puts a copy of the loader's unix_args.txt on top for the eggs' @unix_args.txt, and keeps the operator's user_jvm_args.txt", () => {
    installerOutput(out.self);
    expect(prepareLoaderOutput(out, volume, layout, OWNER)).toEqual([
      "libraries",
      "run.sh",
      "run.bat",
      "unix_args.txt",
      "user_jvm_args.txt",
    ]);
    expect(readFileSync(join(out.self, "unix_args.txt"), "utf8")).toBe("-DlibraryDirectory=libraries\n");
    expect(statSync(join(out.self, "unix_args.txt")).uid).toBe(988);
    writeFileSync(join(dir.path, "user_jvm_args.txt"), "-Xmx6G\n");
    expect(prepareLoaderOutput(out, volume, layout, OWNER)).not.toContain("user_jvm_args.txt");
  });

  it("Forge's arguments live under forge/<game>-<loader>", () => {
    expect(loaderLayout("forge", "1.20.1", "47.3.0").argsFile).toBe(
      "libraries/net/minecraftforge/forge/1.20.1-47.3.0/unix_args.txt",
    );
  });

  it.each([
    ["no run.sh (an installer that ended with 0 and wrote nothing)", () => {}, /without writing run\.sh/],
    [
      "unix_args.txt a link",
      () => {
        writeFileSync(join(out.self, "run.sh"), "#!/bin/sh\n");
        mkdirSync(join(out.self, ARGS), { recursive: true });
        symlinkSync("/etc/shadow", join(out.self, ARGS, "unix_args.txt"));
      },
      /without writing .*unix_args\.txt \(it is a symbolic link\)/,
    ],
  ])("refuses %s", (_what, make, message) => {
    make();
    expect(() => prepareLoaderOutput(out, volume, layout, OWNER)).toThrow(message);
  });
});
