import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { resticVersions, resticVersionsPlaces } from "../src/index.ts";

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("resticVersions", () => {
  it("lists the cached pairs with the folder holding both binaries", () => {
    dir = mkdtempSync(join(tmpdir(), "mcops-rv-"));
    mkdirSync(join(dir, "bullseye"));
    for (const tool of ["restic", "rclone"]) {
      writeFileSync(join(dir, "bullseye", tool), "#!/bin/sh\n");
      chmodSync(join(dir, "bullseye", tool), 0o755);
    }
    writeFileSync(
      join(dir, "versions.json"),
      JSON.stringify({
        pairs: [{ release: "bullseye", debian: 11, restic: "0.11.0", rclone: "1.53.3", dir: "bullseye", more: 1 }],
      }),
    );
    expect(resticVersions({ MCOPS_RESTIC_VERSIONS: dir })).toEqual([
      { release: "bullseye", debian: 11, restic: "0.11.0", rclone: "1.53.3", dir: join(dir, "bullseye") },
    ]);
    rmSync(join(dir, "bullseye", "rclone"));
    expect(() => resticVersions({ MCOPS_RESTIC_VERSIONS: dir })).toThrow(
      `${join(dir, "bullseye", "rclone")} is missing or cannot run: run npm run setup`,
    );
  });

  it("says to run set-up when nothing is cached", () => {
    dir = mkdtempSync(join(tmpdir(), "mcops-rv-"));
    expect(() => resticVersions({ MCOPS_RESTIC_VERSIONS: join(dir, "none") })).toThrow(
      `the restic versions are not fetched (no versions.json in ${join(dir, "none")}): run npm run setup`,
    );
    expect(resticVersionsPlaces({ HOME: "/home/op" })).toEqual([
      "/var/cache/mcops-test/restic-versions",
      "/home/op/.cache/mcops-test/restic-versions",
    ]);
  });
});
