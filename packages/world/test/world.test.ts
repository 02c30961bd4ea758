import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "@mcops/core/errors";
import { UnsafePathError, VolumeDir } from "@mcops/core/volume";
import { describe, expect, it } from "vitest";
import { backupPaths, levelName, worldDirectories } from "../src/world.ts";

function volume(properties?: string, dirs: string[] = []): VolumeDir {
  const dir = mkdtempSync(join(tmpdir(), "mcops-world-"));
  if (properties !== undefined) writeFileSync(join(dir, "server.properties"), properties);
  for (const d of dirs) mkdirSync(join(dir, d), { recursive: true });
  return VolumeDir.open(dir);
}

describe("world directories", () => {
  it("reads level-name from server.properties, with Java properties escapes, defaulting to world", () => {
    expect(levelName(volume())).toBe("world");
    expect(levelName(volume("#c\nlevel-name=survival\n"))).toBe("survival");
    expect(levelName(volume("level-name = My\\:World\r\n"))).toBe("My:World");
    expect(levelName(volume("level-name=\n"))).toBe("world");
  });

  it("reads level-name as the game does (java.util.Properties): the last line wins, escapes, continued lines", () => {
    // The game's user writes server.properties: a first line naming a decoy had the tools snapshot and check the decoy
    // while the game played the world of the last line.
    const cases: [string, string][] = [
      ["level-name=decoy\nlevel-name=survival\n", "survival"],
      ["level-name=\\u0073urvival\n", "survival"],
      ["level-name=sur\\\n    vival\n", "survival"],
      ["level-name=decoy\rlevel-name=survival\r", "survival"],
      ["level-name survival\n", "survival"],
      ["level-name:survival\n", "survival"],
      ["\\level-name=decoy\nlevel\\-name=survival\n", "survival"],
      ["level-name=survival\n!level-name=decoy\n#level-name=decoy\n", "survival"],
      ["level-name=survival\nx=\\\nlevel-name=decoy\n", "survival"],
      ["level-name=decoy\n# a comment goes on no line \\\nlevel-name=survival\n", "survival"],
      ["level-name=decoy\n  level-name\t=\tsurvival\n", "survival"],
      ["level-name=\\u00e9t\u00e9\n", "\u00e9t\u00e9"],
    ];
    for (const [text, name] of cases) expect(levelName(volume(text)), JSON.stringify(text)).toBe(name);
    // Not UTF-8: the game reads it as ISO-8859-1.
    const latin1 = volume();
    writeFileSync(join(latin1.path, "server.properties"), Buffer.from("level-name=\xe9t\xe9\n", "latin1"));
    expect(levelName(latin1)).toBe("\u00e9t\u00e9");
    // A megabyte of backslashes and spaces is read in one pass (a regular expression took a minute over 200 KB).
    const slashes = volume(
      `level-name=${"\\".repeat(500_000)}x\nmotd=${"\\\\".repeat(100_000)}${" ".repeat(100_000)}x\n`,
    );
    expect(() => levelName(slashes)).toThrow(/has a path separator in it/);
    expect(levelName(volume("level-name=world\\ \n"))).toBe("world ");
    expect(() => levelName(volume("level-name=world\t\n"))).toThrow(/has a control character in it/);
    // White space ending the value is the game's too (it does not trim): "world " is another folder than "world".
    expect(levelName(volume("level-name=world \n"))).toBe("world ");
    // A \u not followed by four hex digits: the game cannot read the file at all.
    const malformed = volume("level-name=world\nmotd=\\u12\n");
    expect(() => levelName(malformed)).toThrowError(
      expect.objectContaining({ exitCode: 78, where: join(malformed.path, "server.properties") }),
    );
  });

  it.each(["../othersrv/world", "lnk/payload", "..", "../canary", ".mcops-pre-restore-2026", "/etc"])(
    "refuses level-name=%s with exit 78 naming server.properties",
    (name) => {
      const vol = volume(`level-name=${name}\n`);
      expect(() => levelName(vol)).toThrowError(
        expect.objectContaining({ exitCode: 78, where: join(vol.path, "server.properties") }),
      );
      expect(() => levelName(vol)).toThrow(ConfigError);
    },
  );

  it("reads no server.properties behind a link, and none larger than 1 MiB", () => {
    const linked = volume();
    symlinkSync("/etc/hostname", join(linked.path, "server.properties"));
    expect(() => levelName(linked)).toThrow(UnsafePathError);
    const huge = volume(`level-name=world\n${"#".repeat(1 << 20)}\n`);
    expect(() => levelName(huge)).toThrow(/server\.properties is 1\.00 MiB, more than the 1\.00 MiB/);
  });

  it("takes the world with whichever of its _nether and _the_end siblings exist", () => {
    const vol = volume("level-name=survival\n", ["survival", "survival_the_end", "world"]);
    expect(worldDirectories(vol)).toEqual([join(vol.path, "survival"), join(vol.path, "survival_the_end")]);
  });

  it("refuses a world, or a dimension beside it, that is a link", () => {
    const outside = mkdtempSync(join(tmpdir(), "mcops-outside-"));
    const vol = volume(undefined, ["world"]);
    symlinkSync(outside, join(vol.path, "world_nether"));
    expect(() => worldDirectories(vol)).toThrow(`${join(vol.path, "world_nether")} is a symbolic link`);
    const main = volume();
    symlinkSync(outside, join(main.path, "world"));
    expect(() => worldDirectories(main)).toThrow(UnsafePathError);
  });

  it("fails with the path and advice when the world is missing", () => {
    const vol = volume("level-name=gone\n");
    expect(() => worldDirectories(vol)).toThrowError(
      expect.objectContaining({
        message: 'the world "gone" is not in the server volume',
        where: join(vol.path, "gone"),
      }),
    );
  });

  it("adds extra paths, relative to the volume or absolute, and refuses missing ones", () => {
    const vol = volume(undefined, ["world", "plugins"]);
    expect(backupPaths(vol, ["plugins", join(vol.path, "plugins")])).toEqual([
      join(vol.path, "world"),
      join(vol.path, "plugins"),
    ]);
    expect(() => backupPaths(vol, ["config"])).toThrow(/the extra path "config" does not exist/);
  });

  it("refuses an extra path that goes through a link or leaves the volume", () => {
    const outside = mkdtempSync(join(tmpdir(), "mcops-outside-"));
    mkdirSync(join(outside, "config"));
    const vol = volume(undefined, ["world"]);
    symlinkSync(outside, join(vol.path, "plugins"));
    expect(() => backupPaths(vol, ["plugins/config"])).toThrow("plugins is a symbolic link, not a directory");
    expect(() => backupPaths(vol, ["plugins"])).toThrow('the extra path "plugins" is a symbolic link');
    expect(() => backupPaths(vol, ["../x"])).toThrow("leaves the server volume");
  });
});
