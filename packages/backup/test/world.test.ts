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
    expect(levelName(volume("level-name = My\\:World \r\n"))).toBe("My:World");
    expect(levelName(volume("level-name=\n"))).toBe("world");
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
