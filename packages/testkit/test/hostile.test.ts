import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, lstatSync, mkdirSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { type TempDir, tempDir } from "../src/http.ts";

/**
 * The game's user (uid 988) must be able to run the attacker wherever the clone is (issue 31, 12): cloned into
 * /root/mcops or a mktemp -d directory (mode 700), the toolchain Node inside the clone is out of its reach. The
 * helpers are driven here by a Node that sits in a mode-700 directory, as the toolchain's does in such a clone: an
 * attacker started with `process.execPath` could not run.
 */
const HOSTILE = fileURLToPath(new URL("../src/hostile.ts", import.meta.url));
let dir: TempDir | undefined;
afterEach(() => dir?.cleanup());

describe("the game's user's helpers", () => {
  it.skipIf(process.getuid?.() !== 0)("run from a clone in a mode-700 directory", () => {
    dir = tempDir("mcops-hostile-");
    // The clone's toolchain Node, in a directory only root can enter.
    const clone = join(dir.path, "private", "mcops");
    mkdirSync(clone, { recursive: true, mode: 0o700 });
    chmodSync(join(dir.path, "private"), 0o700);
    const node = join(clone, "node");
    copyFileSync(process.execPath, node);
    chmodSync(node, 0o755);
    // The server volume: the game's, reachable by it (giveToGame opens its ancestors' search bit).
    const volume = join(dir.path, "srv", "volume");
    mkdirSync(join(volume, "world"), { recursive: true });
    writeFileSync(join(volume, "world", "level.dat"), "x");
    const script = `
      import { chownSync } from "node:fs";
      import { giveToGame, swapForLink } from ${JSON.stringify(HOSTILE)};
      const [root, volume] = process.argv.slice(1);
      giveToGame(volume, root);
      chownSync(volume + "/world", 988, 988);
      process.stdout.write(JSON.stringify(await swapForLink(volume, "world", "/etc")));
    `;
    const run = spawnSync(node, ["--input-type=module", "-e", script, dir.path, volume], {
      encoding: "utf8",
      cwd: clone,
      timeout: 60_000,
    });
    expect(run.stderr).not.toMatch(/could not run/);
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ name: "world", entered: true });
    expect(readlinkSync(join(volume, "world"))).toBe("/etc");
    expect(lstatSync(join(volume, "world.moved-by-game")).uid).toBe(988);
  });
});
