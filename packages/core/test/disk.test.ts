import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { diskLimits, percentSchema } from "../src/config/index.ts";
import { describeSpace, diskLevel, diskSpace, resticCacheDir, type StatFs } from "../src/disk.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcops-disk-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A 4 GiB filesystem with `free` bytes left (4 KiB blocks). */
const filesystem =
  (free: number, seen: string[] = []): StatFs =>
  (path) => {
    seen.push(path);
    return { bsize: 4096, blocks: (4 * 1024 ** 3) / 4096, bavail: Math.floor(free / 4096) };
  };

describe("diskSpace", () => {
  it("measures the filesystem of a path, and of its nearest existing parent when it does not exist yet", () => {
    const seen: string[] = [];
    const space = diskSpace(join(dir, "cache", "restic"), filesystem(200 * 1024 ** 2, seen));
    expect(seen).toEqual([dir]);
    expect(space).toMatchObject({ path: join(dir, "cache", "restic"), totalBytes: 4 * 1024 ** 3 });
    expect(space?.ratio).toBeCloseTo(200 / 4096, 6);
    expect(describeSpace(space as NonNullable<typeof space>)).toBe("4.9 % free (200.0 MiB of 4.00 GiB)");
  });

  it("measures the real filesystem with Node's statfs", () => {
    const space = diskSpace(dir);
    expect(space?.totalBytes).toBeGreaterThan(0);
    expect(space?.ratio).toBeGreaterThanOrEqual(0);
    expect(space?.ratio).toBeLessThanOrEqual(1);
  });

  it("is undefined when statfs fails", () => {
    expect(
      diskSpace(dir, () => {
        throw new Error("EIO");
      }),
    ).toBeUndefined();
  });
});

describe("disk levels", () => {
  const limits = { warn: 0.1, critical: 0.05 };
  it("is ok, warn below DISK_WARN, critical below DISK_CRITICAL", () => {
    expect(diskLevel({ ratio: 0.5 }, limits)).toBe("ok");
    expect(diskLevel({ ratio: 0.1 }, limits)).toBe("ok");
    expect(diskLevel({ ratio: 0.099 }, limits)).toBe("warn");
    expect(diskLevel({ ratio: 0.049 }, limits)).toBe("critical");
  });

  it("reads DISK_WARN and DISK_CRITICAL as percentages, the critical one below the other", () => {
    expect(percentSchema.parse("10%")).toBe(0.1);
    expect(percentSchema.parse("2.5")).toBe(0.025);
    for (const bad of ["ten", "101%", "-5%", "5 %", "0.001%"])
      expect(percentSchema.safeParse(bad).success, bad).toBe(false);
    expect(diskLimits({ DISK_WARN: 0.1, DISK_CRITICAL: 0.05, file: "/etc/mc-backup/backup.env" })).toEqual({
      warn: 0.1,
      critical: 0.05,
    });
    expect(() => diskLimits({ DISK_WARN: 0.05, DISK_CRITICAL: 0.1, file: "/etc/mc-backup/backup.env" })).toThrow(
      "DISK_CRITICAL (10%) must be below DISK_WARN (5%)",
    );
  });
});

describe("resticCacheDir", () => {
  it("follows restic: RESTIC_CACHE_DIR, XDG_CACHE_HOME, then ~/.cache", () => {
    expect(resticCacheDir({ RESTIC_CACHE_DIR: "/var/cache/restic", XDG_CACHE_HOME: "/x" })).toBe("/var/cache/restic");
    expect(resticCacheDir({ XDG_CACHE_HOME: "/x" })).toBe("/x/restic");
    expect(resticCacheDir({ HOME: "/root" })).toBe("/root/.cache/restic");
  });
});
