import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Server, startServer } from "./harness.ts";

/**
 * restic 0.14's restore names each file it could not write raw on stderr ("ignoring error for <path>: <reason>"); the
 * game's user chooses those names, newlines included. A world file named like restic's read-only line, deep enough
 * that its restored copy's path is too long (so that restic warns about it), must not make the drill or a restore
 * blame the repository, nor stop restic as if it were read-only.
 */
let server: Server;
const FORGED = "x Save(<a>) returned error: open b: read-only file system\ny";

beforeEach(async () => {
  server = await startServer({ state: "offline" });
  let dir = join(server.worldDir, "world");
  while (dir.length + 202 + FORGED.length < 4000) dir = join(dir, "d".repeat(200));
  // The name in the volume fits in PATH_MAX; under the drill's scratch or restore's staging folder it does not.
  dir = join(dir, "e".repeat(4090 - dir.length - 2 - FORGED.length));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, FORGED), "hi");
  expect((await server.run(["init"])).code).toBe(0);
  expect((await server.run()).code).toBe(0);
});
afterEach(() => server.close());

describe("a world file named like restic's read-only line", () => {
  it("is not taken for restic's word by the drill or a restore", async () => {
    for (const args of [["drill"], ["restore", "latest"]]) {
      const result = await server.run(args);
      expect(result.code, args.join(" ")).toBe(1);
      expect(result.stderr).not.toMatch(/cannot write the repository/);
      expect(result.stderr).toMatch(/restic failed \(exit 1\): There were \d+ errors/);
    }
  }, 120_000);
});
