import { execFileSync } from "node:child_process";
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "../src/errors.ts";
import { checkVolumeName, UnsafePathError, VolumeDir } from "../src/volume.ts";

let root: string;
let vol: string;
let canary: string;
let volume: VolumeDir;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mcops-volume-"));
  vol = join(root, "vol");
  canary = join(root, "outside");
  mkdirSync(join(vol, "logs"), { recursive: true });
  mkdirSync(canary);
  writeFileSync(join(canary, "secret"), "root only\n", { mode: 0o600 });
  volume = VolumeDir.open(vol);
});

afterEach(() => {
  volume.close();
  execFileSync("rm", ["-rf", root]);
});

describe("checkVolumeName", () => {
  it.each([
    ["../othersrv/world", "has a path separator"],
    ["lnk/payload", "has a path separator"],
    ["..", "starts with a dot"],
    [".mcops-pre-restore-x", "starts with a dot"],
    ["", "is empty"],
    ["wo\0rld", "NUL"],
    ["a\\b", "path separator"],
    ["w\u001b]52;c;cm0=\u0007", "control character"],
  ])("refuses %j with exit 78 naming the file", (name, problem) => {
    const call = () => checkVolumeName(name, { field: "level-name", file: "/v/server.properties" });
    expect(call).toThrow(ConfigError);
    expect(call).toThrow(problem);
    try {
      call();
    } catch (error) {
      expect((error as ConfigError).where).toBe("/v/server.properties");
      expect((error as ConfigError).exitCode).toBe(78);
    }
  });

  it("takes an ordinary world name, spaces and all", () => {
    expect(checkVolumeName("My World 2", { field: "level-name", file: "f" })).toBe("My World 2");
  });
});

describe("VolumeDir", () => {
  it("reads a regular file below it", () => {
    writeFileSync(join(vol, "logs", "latest.log"), "hello\n");
    expect(volume.readFile("logs/latest.log", 1024)?.toString()).toBe("hello\n");
    expect(volume.readFile("logs/absent.log", 1024)).toBeUndefined();
    expect(volume.readFile("nodir/absent.log", 1024)).toBeUndefined();
  });

  it("refuses a link as the file, naming it, and reads nothing behind it", () => {
    symlinkSync(join(canary, "secret"), join(vol, "server.properties"));
    expect(() => volume.readFile("server.properties", 1024)).toThrow(
      `${join(vol, "server.properties")} is a symbolic link, not a regular file`,
    );
  });

  it("refuses a link on the way, even to a directory holding the wanted name", () => {
    writeFileSync(join(canary, "latest.log"), "[12:00:00] [Server thread/INFO]: Steve joined the game\n");
    execFileSync("rm", ["-rf", join(vol, "logs")]);
    symlinkSync(canary, join(vol, "logs"));
    expect(() => volume.readFile("logs/latest.log", 1024)).toThrow(UnsafePathError);
    expect(() => volume.readFile("logs/latest.log", 1024)).toThrow("logs is a symbolic link, not a directory");
    expect(() => volume.lstat("logs/latest.log")).toThrow(UnsafePathError);
    expect(() => volume.tryDir("logs")).toThrow(UnsafePathError);
  });

  it("refuses a FIFO at once instead of blocking on it", () => {
    execFileSync("mkfifo", [join(vol, "logs", "latest.log")]);
    expect(() => volume.tryOpenFile("logs/latest.log")).toThrow("is a FIFO, not a regular file");
  });

  it("refuses a directory where a file belongs, and a file larger than the cap", () => {
    mkdirSync(join(vol, "server.properties"));
    expect(() => volume.readFile("server.properties", 10)).toThrow("is a directory, not a regular file");
    writeFileSync(join(vol, "big"), Buffer.alloc(2048));
    expect(() => volume.readFile("big", 1024)).toThrow("is 2.00 KiB, more than the 1.00 KiB such a file can be");
  });

  it("makes private directories under unpredictable names, mode 700, that a planted link cannot redirect", () => {
    const first = volume.makePrivateDir(".mcops-restore-");
    const second = volume.makePrivateDir(".mcops-restore-");
    try {
      expect(first.path).not.toBe(second.path);
      expect(statSync(first.path).mode & 0o777).toBe(0o700);
      expect(lstatSync(first.path).isDirectory()).toBe(true);
    } finally {
      first.close();
      second.close();
    }
  });

  it("moves entries through descriptors: a directory renamed meanwhile is still the one written to", () => {
    mkdirSync(join(vol, "world"));
    const aside = volume.makePrivateDir(".aside-");
    // The game's user renames the aside directory and puts a link to a host directory under its old name.
    renameSync(aside.path, join(vol, "moved"));
    symlinkSync(canary, aside.path);
    volume.rename("world", aside);
    aside.close();
    expect(readdirSync(join(vol, "moved"))).toEqual(["world"]);
    expect(readdirSync(canary)).toEqual(["secret"]);
  });

  it("chowns a tree without following a link inside it", () => {
    mkdirSync(join(vol, "world", "region"), { recursive: true });
    writeFileSync(join(vol, "world", "level.dat"), "x");
    symlinkSync(join(canary, "secret"), join(vol, "world", "region", "r.0.0.mca"));
    symlinkSync(canary, join(vol, "world", "data"));
    volume.chownTree("world", 988, 988);
    expect(statSync(join(vol, "world", "level.dat")).uid).toBe(988);
    expect(statSync(join(vol, "world", "region")).uid).toBe(988);
    expect(lstatSync(join(vol, "world", "region", "r.0.0.mca")).uid).toBe(988);
    expect(statSync(join(canary, "secret")).uid).toBe(0);
    expect(statSync(canary).uid).toBe(0);
  });

  it("removes a tree without following a link inside it", () => {
    mkdirSync(join(vol, "staging", "a"), { recursive: true });
    writeFileSync(join(vol, "staging", "file"), "x");
    writeFileSync(join(vol, "staging", "a", "file"), "x");
    symlinkSync(canary, join(vol, "staging", "a", "link"));
    volume.removeTree("staging");
    writeFileSync(join(vol, "lone"), "x");
    volume.removeTree("lone");
    expect(readdirSync(vol)).toEqual(["logs"]);
    expect(readFileSync(join(canary, "secret"), "utf8")).toBe("root only\n");
  });

  it("gives a tree 10,000 directories deep to an owner (no stack), following no link in it", () => {
    let fd = openSync(join(vol, "logs"), constants.O_RDONLY | constants.O_DIRECTORY);
    for (let level = 0; level < 10_000; level += 1) {
      mkdirSync(`/proc/self/fd/${fd}/d`);
      if (level % 1000 === 0) writeFileSync(`/proc/self/fd/${fd}/d/file`, "x");
      const next = openSync(`/proc/self/fd/${fd}/d`, constants.O_RDONLY | constants.O_DIRECTORY);
      closeSync(fd);
      fd = next;
    }
    symlinkSync(canary, `/proc/self/fd/${fd}/link`);
    writeFileSync(`/proc/self/fd/${fd}/last`, "x");
    try {
      volume.chownTree("logs", 988, 988);
      // The deepest directory (held open: its path is far longer than PATH_MAX), its file and its link (the link
      // itself, not what it names), and the top.
      expect(fstatSync(fd)).toMatchObject({ uid: 988, gid: 988 });
      expect(statSync(`/proc/self/fd/${fd}/last`)).toMatchObject({ uid: 988, gid: 988 });
      expect(lstatSync(`/proc/self/fd/${fd}/link`)).toMatchObject({ uid: 988, gid: 988 });
    } finally {
      closeSync(fd);
    }
    expect(statSync(join(vol, "logs", "d", "file"))).toMatchObject({ uid: 988, gid: 988 });
    expect(statSync(join(vol, "logs"))).toMatchObject({ uid: 988 });
    expect(statSync(canary).uid).toBe(0);
    volume.removeTree("logs");
  });

  it("removes a tree the game's user made 20,000 directories deep (no stack, no descriptor per level)", () => {
    // Made through descriptors: the path is far longer than PATH_MAX.
    let fd = openSync(join(vol, "logs"), constants.O_RDONLY | constants.O_DIRECTORY);
    for (let level = 0; level < 20_000; level += 1) {
      // Some with the longest name a directory can have: a directory moved up must not take a longer one.
      const name = level % 100 === 99 ? "n".repeat(255) : "d";
      mkdirSync(`/proc/self/fd/${fd}/${name}`);
      if (level % 1000 === 0) writeFileSync(`/proc/self/fd/${fd}/${name}/file`, "x");
      const next = openSync(`/proc/self/fd/${fd}/${name}`, constants.O_RDONLY | constants.O_DIRECTORY);
      closeSync(fd);
      fd = next;
    }
    symlinkSync(canary, `/proc/self/fd/${fd}/link`);
    closeSync(fd);
    volume.removeTree("logs");
    expect(readdirSync(vol)).toEqual([]);
    expect(readFileSync(join(canary, "secret"), "utf8")).toBe("root only\n");
  });
});
