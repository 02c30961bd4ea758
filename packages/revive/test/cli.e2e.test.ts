import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runTool } from "@mcops/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { OLD_IP, PLAY, startWorld, type World } from "./harness.ts";

const REVIVE = fileURLToPath(new URL("../dist/revive.mjs", import.meta.url));
const HIBERNATE = fileURLToPath(new URL("../dist/hibernate.mjs", import.meta.url));

let world: World;
afterEach(() => world?.close());

/** The tools as the operator runs them: in the directory of the .env, with a recording `ssh` first on PATH. */
function env(): NodeJS.ProcessEnv {
  const bin = join(world.dir.path, "bin");
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, "ssh"), `#!/bin/sh\necho "$@" >> '${join(world.dir.path, "ssh.txt")}'\n`);
  chmodSync(join(bin, "ssh"), 0o755);
  return { PATH: `${bin}:${process.env.PATH}`, HOME: world.dir.path, MCOPS_RUN_DIR: join(world.dir.path, "run") };
}

describe("hibernate and revive (built executables)", () => {
  it("go through the whole cycle from the .env in the working directory", async () => {
    world = await startWorld();
    const hibernated = await runTool(HIBERNATE, ["--yes"], { env: env(), cwd: world.dir.path });
    expect(hibernated).toMatchObject({ code: 0, stderr: "" });
    expect(hibernated.stdout).toMatch(/^Stopped the game server through the panel \(.*\)\nLast backup on the VM done/);
    expect(readFileSync(join(world.dir.path, "ssh.txt"), "utf8")).toMatch(
      /root@203\.0\.113\.\d+ \/opt\/mc-tools\/backup\n$/,
    );
    expect(world.digitalocean.droplets()).toEqual([]);

    const revived = await runTool(REVIVE, [], { env: env(), cwd: world.dir.path });
    expect(revived).toMatchObject({ code: 0, stderr: "" });
    expect(revived.stdout).toMatch(/Revived in .*\.\n$/);
    expect(world.digitalocean.droplets()).toHaveLength(1);
  });

  it("refuse to destroy without --yes when not on a terminal, and say what is wrong in one line", async () => {
    world = await startWorld();
    const noYes = await runTool(HIBERNATE, [], { env: env(), cwd: world.dir.path });
    expect(noYes).toMatchObject({
      code: 2,
      stderr: "hibernate: destroying the droplet needs confirmation, and this is not a terminal — pass --yes\n",
    });
    expect(world.digitalocean.actions()).toEqual([]);

    const dry = await runTool(REVIVE, ["dns", "--ip", "203.0.113.9", "--dry-run"], { env: env(), cwd: world.dir.path });
    expect(dry.stdout).toContain(`${PLAY} (play): ${OLD_IP} (DNS only) → 203.0.113.9 (DNS only)`);

    chmodSync(world.envFile, 0o644);
    const open = await runTool(REVIVE, ["dns"], { env: env(), cwd: world.dir.path });
    expect(open.code).toBe(78);
    expect(open.stderr).toMatch(/chmod 600/);
    chmodSync(world.envFile, 0o600);

    const elsewhere = await runTool(REVIVE, ["dns", "--config", join(world.dir.path, "nope.env")], { env: env() });
    expect(elsewhere.code).toBe(78);
    expect(elsewhere.stderr).toMatch(
      /^revive: CLOUDFLARE_API_TOKEN is not set \(.*nope\.env\) — add CLOUDFLARE_API_TOKEN=\.\.\. to .*nope\.env \(copy \.env\.example\)\n$/,
    );
  });
});
