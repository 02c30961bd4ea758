import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { backupPaths, levelName, worldDirectories } from "./world.ts";

function volume(properties?: string, dirs: string[] = []): string {
  const dir = mkdtempSync(join(tmpdir(), "mcops-world-"));
  if (properties !== undefined) writeFileSync(join(dir, "server.properties"), properties);
  for (const d of dirs) mkdirSync(join(dir, d), { recursive: true });
  return dir;
}

describe("world directories", () => {
  it("reads level-name from server.properties, with Java properties escapes, defaulting to world", () => {
    expect(levelName(volume())).toBe("world");
    expect(levelName(volume("#c\nlevel-name=survival\n"))).toBe("survival");
    expect(levelName(volume("level-name = My\\:World \r\n"))).toBe("My:World");
    expect(levelName(volume("level-name=\n"))).toBe("world");
  });

  it("takes the world with whichever of its _nether and _the_end siblings exist", () => {
    const dir = volume("level-name=survival\n", ["survival", "survival_the_end", "world"]);
    expect(worldDirectories(dir)).toEqual([join(dir, "survival"), join(dir, "survival_the_end")]);
  });

  it("fails with the path and advice when the world is missing", () => {
    const dir = volume("level-name=gone\n");
    expect(() => worldDirectories(dir)).toThrowError(
      expect.objectContaining({ message: 'the world "gone" is not in the server volume', where: join(dir, "gone") }),
    );
  });

  it("adds extra paths, relative to the volume or absolute, and refuses missing ones", () => {
    const dir = volume(undefined, ["world", "plugins"]);
    expect(backupPaths(dir, ["plugins", join(dir, "plugins")])).toEqual([join(dir, "world"), join(dir, "plugins")]);
    expect(() => backupPaths(dir, ["config"])).toThrow(/the extra path "config" does not exist/);
  });
});
