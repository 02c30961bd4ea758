import { appendFileSync, existsSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type CachedOffline, startUnderCachedOffline, stopOrder } from "@mcops/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { backUp, buildPlayersWorld, type Server, STEVE, startServer, volumeHash, volumePut } from "./harness.ts";

/**
 * Issue 44: the panel caches /resources for 20 s, so a game started from Discord a moment before a restore is still
 * "offline" there. The restore asks the game itself (core's gameState): the game is stopped, and confirmed stopped,
 * before any of its files is moved.
 */

let server: Server;
let scene: CachedOffline | undefined;

afterEach(async () => {
  scene?.close();
  scene = undefined;
  await server?.close();
});

const PLAYED = "played on after the backup";
const LEVEL = "world/level.dat";
/** What world/level.dat holds as a request arrives: the world the game played on, or another. */
const look = () => (readFileSync(join(server.worldDir, LEVEL), "utf8") === PLAYED ? "played" : "restored");
const titles = () => server.discord.messages.map((m) => m.body.embeds[0].title as string);
const description = (i: number) => server.discord.messages[i]?.body.embeds[0].description as string;

/** A server that was offline for its backup, played on after it, and then started from Discord under a cached offline. */
async function playedOnUnderCachedOffline(): Promise<void> {
  server = await startServer({ state: "offline" });
  expect((await server.run(["init"])).code).toBe(0);
  await backUp(server);
  writeFileSync(join(server.worldDir, LEVEL), PLAYED);
  scene = await startUnderCachedOffline(server.panel, look);
}

describe("backup restore while the panel's cached answer says offline and the game runs", () => {
  it("stops the game and waits for Wings to say it stopped before moving the world, then starts it again", async () => {
    await playedOnUnderCachedOffline();
    const cached = scene as CachedOffline;
    const restore = server.start(["restore", "latest", "--no-backup"]);
    await cached.releaseWhenStopped();
    const result = await restore.done;
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(look()).toBe("restored");
    expect(stopOrder(server.panel, cached)).toEqual({
      beforeStop: ["command list 204"],
      atStop: "played",
      atStopped: "played",
      atStart: "restored",
      offlineFromStoppedToStart: true,
    });
    expect(server.panel.signals()).toEqual(["start", "stop", "start"]);
    expect(server.panel.state()).toBe("running");
    expect(server.backupLog()).toMatch(
      /INFO the panel showed the server offline \(its answer is cached for 20 s\), but the game took a console command: it runs\n.*INFO stopping the server \(it is running\)\n/,
    );
    expect(titles()).toEqual(["Restore started", "Restore completed"]);
  }, 120_000);

  it("starts the game again after a failed restore only because it stopped it", async () => {
    server = await startServer({ state: "offline" });
    expect((await server.run(["init"])).code).toBe(0);
    unlinkSync(join(server.worldDir, LEVEL));
    await backUp(server);
    writeFileSync(join(server.worldDir, LEVEL), PLAYED);
    // The game really is offline: the failed restore leaves it so.
    const offline = await server.run(["restore", "latest", "--no-backup"]);
    expect(offline.code).toBe(1);
    expect(server.panel.signals()).toEqual([]);
    expect(description(1)).not.toMatch(/started again/);
    server.discord.reset();

    scene = await startUnderCachedOffline(server.panel, look);
    const cached = scene;
    const restore = server.start(["restore", "latest", "--no-backup"]);
    await cached.releaseWhenStopped();
    const result = await restore.done;
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /restore failed: the restored world has no world\/level\.dat; the world was not touched/,
    );
    expect(look()).toBe("played");
    expect(stopOrder(server.panel, cached)).toMatchObject({ beforeStop: ["command list 204"], atStop: "played" });
    expect(server.panel.signals()).toEqual(["start", "stop", "start"]);
    expect(description(1)).toMatch(/The server was started again\.$/);
  }, 120_000);

  it("refuses a player's restore while that player is online, though the panel's cached answer says offline", async () => {
    server = await startServer({ state: "offline" });
    buildPlayersWorld(server, { regions: 1, chunksPerRegion: 2 });
    expect((await server.run(["init"])).code).toBe(0);
    await backUp(server);
    volumePut(server, `world/playerdata/${STEVE}.dat`, "today's inventory");
    const today = volumeHash(server, `world/playerdata/${STEVE}.dat`);
    scene = await startUnderCachedOffline(server.panel, () => volumeHash(server, `world/playerdata/${STEVE}.dat`));
    appendFileSync(
      join(server.worldDir, "logs/latest.log"),
      "[12:00:00] [Server thread/INFO]: Steve joined the game\n",
    );
    const online = await server.run(["restore", "--player", "Steve", "--no-backup"]);
    expect(online.code).toBe(75);
    expect(online.stderr).toMatch(new RegExp(`^backup: ${STEVE} \\(Steve\\) is online: `));
    expect(volumeHash(server, `world/playerdata/${STEVE}.dat`)).toBe(today);
    expect(stopOrder(server.panel, scene)).toMatchObject({ beforeStop: ["command list 204"], atStop: undefined });
    expect(server.panel.signals()).toEqual(["start"]);

    // Once Steve has left, his files come back while the game runs on: nothing stopped, nothing started.
    appendFileSync(join(server.worldDir, "logs/latest.log"), "[12:30:00] [Server thread/INFO]: Steve left the game\n");
    const left = await server.run(["restore", "--player", "Steve", "--no-backup"]);
    expect(left.stderr).toBe("");
    expect(left.code).toBe(0);
    expect(volumeHash(server, `world/playerdata/${STEVE}.dat`)).not.toBe(today);
    expect(server.panel.signals()).toEqual(["start"]);
    expect(server.panel.state()).toBe("running");
  }, 120_000);
});

describe("backup restore when the panel or Wings does not answer", () => {
  it("refuses in one line and touches nothing when the panel cannot be reached", async () => {
    server = await startServer({ state: "offline" });
    expect((await server.run(["init"])).code).toBe(0);
    await backUp(server);
    writeFileSync(join(server.worldDir, LEVEL), PLAYED);
    await server.panel.close();
    const result = await server.run(["restore", "latest", "--no-backup"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^backup: restore failed: cannot reach the panel \(ECONNREFUSED\) after 3 tries; the world was not touched — see .*mc-backup\.log\n$/,
    );
    expect(look()).toBe("played");
    expect(readdirSync(server.worldDir).filter((n) => n.startsWith(".mcops-"))).toEqual([]);
  }, 120_000);

  it("refuses in one line and touches nothing when the panel shows offline but Wings cannot be asked about the game", async () => {
    server = await startServer({ state: "offline" });
    expect((await server.run(["init"])).code).toBe(0);
    await backUp(server);
    writeFileSync(join(server.worldDir, LEVEL), PLAYED);
    // Wings does not answer the panel (down, or slower than the panel's 15 s): the panel's 504 on the console route.
    server.panel.inject({ kind: "wings", route: "command" });
    const result = await server.run(["restore", "latest", "--no-backup"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^backup: restore failed: the panel could not get an answer from Wings: no answer .*; the world was not touched — see .*mc-backup\.log\n$/,
    );
    expect(look()).toBe("played");
    expect(server.panel.signals()).toEqual([]);
    expect(existsSync(join(server.worldDir, "world"))).toBe(true);
  }, 120_000);
});
