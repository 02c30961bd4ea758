import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type CachedOffline,
  type DiscordStandIn,
  type DownloadStandIn,
  type PanelStandIn,
  runTool,
  startDiscordStandIn,
  startDownloadStandIn,
  startPanelStandIn,
  startUnderCachedOffline,
  stopOrder,
  type TempDir,
  type ToolRun,
  tempDir,
  toolEnv,
} from "@mcops/testkit";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { OLD, writeConfig } from "./config.ts";

/**
 * Issue 44: the panel caches /resources for 20 s, so a game started from Discord a moment before an upgrade is still
 * "offline" there. jar-download asks the game itself (core's gameState): without --stop it refuses, with --stop (and
 * for --rollback) it stops the game, confirmed by Wings, before server.jar is touched, and starts it again because it
 * stopped it.
 */
const BIN = fileURLToPath(new URL("../dist/jar-download.mjs", import.meta.url));

let stand: DownloadStandIn;
let discord: DiscordStandIn;
let panel: PanelStandIn;
let root: TempDir;
let volume: string;
let env: NodeJS.ProcessEnv;
let scene: CachedOffline | undefined;

const run = (...args: string[]): Promise<ToolRun> => runTool(BIN, args, { env });
const jarRequests = () => stand.requests.filter((r) => r.route === "jar").length;
/** Which jar server.jar is as a request arrives: the one that was there, or another. */
const look = () => (readFileSync(join(volume, "server.jar")).equals(OLD) ? "old jar" : "new jar");

beforeAll(async () => {
  stand = await startDownloadStandIn();
  discord = await startDiscordStandIn();
});
afterAll(async () => {
  await stand.close();
  await discord.close();
});

beforeEach(async () => {
  stand.reset();
  discord.reset();
  panel = await startPanelStandIn({ servers: [{ state: "offline" }], timings: { startMs: 100, stopMs: 100 } });
  root = tempDir("mcops-jar-cached-");
  volume = join(root.path, "volumes", panel.server.uuid);
  mkdirSync(join(volume, "world"), { recursive: true });
  writeFileSync(join(volume, "server.jar"), OLD);
  env = toolEnv(root.path, { MCOPS_RETRY_MS: "20" });
  writeConfig(env, { panel, volume, stand, discord });
});
afterEach(async () => {
  scene?.close();
  scene = undefined;
  await panel.close();
  root.cleanup();
});

describe("jar-download while the panel's cached answer says offline and the game runs", () => {
  it("without --stop: refused (exit 75) before anything is downloaded, the game left running", async () => {
    scene = await startUnderCachedOffline(panel, look);
    const result = await run("1.21.4", "--type", "vanilla", "--no-backup");
    expect(result.code).toBe(75);
    expect(result.stderr).toBe(
      `jar-download: the server is running; its jar cannot be replaced under it (server ${panel.server.identifier}) — stop it first, or pass --stop to stop it, replace the jar and start it again\n`,
    );
    expect(readFileSync(join(root.path, "log", "mc-jar-download.log"), "utf8")).toMatch(
      /INFO the panel showed the server offline \(its answer is cached for 20 s\), but the game took a console command: it runs\n/,
    );
    expect(jarRequests()).toBe(0);
    expect(look()).toBe("old jar");
    expect(readdirSync(volume).sort()).toEqual(["server.jar", "world"]);
    expect(stopOrder(panel, scene)).toMatchObject({ beforeStop: ["command list 204"], atStop: undefined });
    expect(panel.signals()).toEqual(["start"]);
    expect(panel.state()).toBe("running");
  });

  it("with --stop: stops the game and waits for Wings to say it stopped before the swap, then starts it again", async () => {
    scene = await startUnderCachedOffline(panel, look);
    const tool = run("1.21.4", "--type", "vanilla", "--stop", "--no-backup");
    await scene.releaseWhenStopped();
    const result = await tool;
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toMatch(/ The server was restarted with it\.\n$/);
    expect(readFileSync(join(volume, "server.jar"))).toEqual(stand.jar("vanilla-1.21.4.jar"));
    expect(stopOrder(panel, scene)).toEqual({
      // Before the download and again once it is there: the game took the probe both times.
      beforeStop: ["command list 204", "command list 204"],
      atStop: "old jar",
      atStopped: "old jar",
      atStart: "new jar",
      offlineFromStoppedToStart: true,
    });
    expect(panel.signals()).toEqual(["start", "stop", "start"]);
    expect(panel.state()).toBe("running");
  });

  it("--rollback: stops the game before the jars change places, and starts it again", async () => {
    const first = await run("1.21.4", "--type", "vanilla", "--no-backup");
    expect(first).toMatchObject({ code: 0, stderr: "" });
    // server.jar.previous is the jar that was there: the rollback puts it back.
    scene = await startUnderCachedOffline(panel, () => (look() === "old jar" ? "rolled back" : "as installed"));
    const tool = run("--rollback");
    await scene.releaseWhenStopped();
    const back = await tool;
    expect(back, back.stderr).toMatchObject({ code: 0 });
    expect(back.stdout).toMatch(/ The server was restarted with it\.\n$/);
    expect(stopOrder(panel, scene)).toEqual({
      beforeStop: ["command list 204"],
      atStop: "as installed",
      atStopped: "as installed",
      atStart: "rolled back",
      offlineFromStoppedToStart: true,
    });
    expect(panel.signals()).toEqual(["start", "stop", "start"]);
  });

  it("--rollback of a server really offline: the jars change places, and nothing starts it", async () => {
    expect((await run("1.21.4", "--type", "vanilla", "--no-backup")).code).toBe(0);
    const back = await run("--rollback");
    expect(back, back.stderr).toMatchObject({ code: 0 });
    expect(back.stdout).not.toMatch(/restarted/);
    expect(look()).toBe("old jar");
    expect(panel.signals()).toEqual([]);
    expect(panel.calls.filter((c) => c.kind === "command").map((c) => `${c.command} ${c.status}`)).toEqual([
      "list 502",
      "list 502",
      "list 502",
    ]);
  });
});

describe("jar-download when the panel does not answer", () => {
  it("refuses in one line, nothing downloaded and nothing touched", async () => {
    await panel.close();
    const result = await run("1.21.4", "--type", "vanilla", "--stop", "--no-backup");
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(
      /^jar-download: cannot reach the panel \(ECONNREFUSED\) after \d tries \(http:\/\/127\.0\.0\.1:\d+\) — .*\n$/,
    );
    expect(jarRequests()).toBe(0);
    expect(look()).toBe("old jar");
    expect(readdirSync(volume).sort()).toEqual(["server.jar", "world"]);
    // A closed stand-in for afterEach.
    panel = await startPanelStandIn();
  });
});
