import { type CachedOffline, startUnderCachedOffline, stopOrder } from "@mcops/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { hibernate, startWorld, type World } from "./harness.ts";

/**
 * Issue 44: the panel caches /resources for 20 s, so a game started from Discord a moment before a hibernation is
 * still "offline" there. hibernate asks the game itself (core's gameState): the game is stopped, and confirmed stopped
 * by Wings, before the last backup, the shutdown, the snapshot and the destroy.
 */

let world: World;
let scene: CachedOffline | undefined;

afterEach(async () => {
  scene?.close();
  scene = undefined;
  await world?.close();
});

/** What the VM has been through as a request arrives: its last backup, then DigitalOcean's actions on it. */
const look = () => {
  const done = [...world.ssh.map(() => "backup"), ...world.digitalocean.actions().map((a) => a.type)];
  return done.length === 0 ? "untouched" : done.join(", ");
};

/** The game VM with its game server offline in the panel, as the panel's cache still says. */
const offlineWorld = () => startWorld({}, {}, {}, { servers: [{ state: "offline" }] });

describe("hibernate while the panel's cached answer says offline and the game runs", () => {
  it("stops the game and waits for Wings to say it stopped before the last backup and the shutdown", async () => {
    world = await offlineWorld();
    scene = await startUnderCachedOffline(world.panel, look);
    expect(await hibernate(world.ctx(), { yes: true, runner: world.runner })).toBe(0);
    expect(stopOrder(world.panel, scene)).toEqual({
      beforeStop: ["command list 204"],
      atStop: "untouched",
      atStopped: "untouched",
      atStart: undefined,
      offlineFromStoppedToStart: true,
    });
    expect(world.panel.signals()).toEqual(["start", "stop"]);
    expect(world.panel.state()).toBe("offline");
    expect(look()).toBe("backup, shutdown, snapshot, destroy");
    expect(world.out.join("")).toMatch(
      /^The panel showed the server offline \(its answer is cached for 20 s\), but the game took a console command: it runs\nStopped the game server through the panel \(.*\)\nLast backup on the VM done/,
    );
  });
});

describe("hibernate when the panel or Wings does not answer", () => {
  it("refuses in one line and touches nothing when the panel cannot be reached", async () => {
    world = await offlineWorld();
    await world.panel.close();
    await expect(hibernate(world.ctx(), { yes: true, runner: world.runner })).rejects.toMatchObject({
      kind: "network",
      message: expect.stringMatching(/^cannot reach the panel \(ECONNREFUSED\) after \d tries$/),
    });
    expect(look()).toBe("untouched");
    expect(world.digitalocean.droplets()[0]?.status).toBe("active");
  });

  it("refuses and touches nothing when the panel shows offline but Wings cannot be asked about the game", async () => {
    world = await offlineWorld();
    // Wings does not answer the panel (down, or slower than the panel's 15 s): the panel's 504 on the console route.
    world.panel.inject({ kind: "wings", route: "command" });
    await expect(hibernate(world.ctx(), { yes: true, runner: world.runner })).rejects.toMatchObject({
      kind: "wings",
      message: expect.stringMatching(/^the panel could not get an answer from Wings: no answer/),
    });
    expect(look()).toBe("untouched");
    expect(world.panel.signals()).toEqual([]);
    expect(world.digitalocean.droplets()[0]?.status).toBe("active");
  });
});
