import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeFileAtomic } from "../src/fs.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcops-atomic-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("writeFileAtomic", () => {
  it("replaces the whole file with the given mode, and leaves no temporary file", () => {
    const file = join(dir, "state.json");
    writeFileSync(file, "old", { mode: 0o644 });
    const umask = process.umask(0);
    try {
      writeFileAtomic(file, "new\n", 0o600);
    } finally {
      process.umask(umask);
    }
    expect(readFileSync(file, "utf8")).toBe("new\n");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(["state.json"]);
  });

  it("leaves the old file as it was when the write cannot happen", () => {
    const file = join(dir, "missing-dir", "state.json");
    expect(() => writeFileAtomic(file, "new", 0o600)).toThrow(/ENOENT/);
    const target = join(dir, "target");
    writeFileSync(target, "old");
    // A directory where the file should go: the rename fails, the temporary file is removed.
    const blocked = join(dir, "blocked");
    mkdirSync(join(blocked, "x"), { recursive: true });
    expect(() => writeFileAtomic(blocked, "new", 0o600)).toThrow();
    expect(readdirSync(dir).sort()).toEqual(["blocked", "target"]);
    expect(readFileSync(target, "utf8")).toBe("old");
  });
});
