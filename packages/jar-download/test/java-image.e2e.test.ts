/**
 * The Java image for the version (docs/system.md 9), with the built executable, the panel stand-in (the egg's images,
 * PUT settings/docker-image) and the download stand-in (Mojang's javaVersion, Fill's java.version.minimum).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type DiscordStandIn,
  type DownloadStandIn,
  type PanelStandIn,
  type PanelStandInOptions,
  runTool,
  startDiscordStandIn,
  startDownloadStandIn,
  startPanelStandIn,
  type TempDir,
  type ToolRun,
  tempDir,
  toolEnv,
} from "@mcops/testkit";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { OLD, writeConfig } from "./config.ts";

const BIN = fileURLToPath(new URL("../dist/jar-download.mjs", import.meta.url));
const YOLKS = "ghcr.io/pterodactyl/yolks";

let stand: DownloadStandIn;
let panel: PanelStandIn | undefined;
let discord: DiscordStandIn;
let root: TempDir;
let volume: string;
let env: NodeJS.ProcessEnv;

function run(...args: string[]): Promise<ToolRun> {
  return runTool(BIN, args, { env });
}

/** The panel with one server on `server`'s image and egg; backup.env points at it. */
async function serverOn(server: NonNullable<PanelStandInOptions["servers"]>[number]): Promise<PanelStandIn> {
  panel = await startPanelStandIn({ servers: [server], timings: { startMs: 100, stopMs: 100 } });
  volume = join(root.path, "volumes", panel.server.uuid);
  mkdirSync(join(volume, "world"), { recursive: true });
  writeFileSync(join(volume, "server.jar"), OLD);
  writeConfig(env, { panel, volume, stand, discord });
  return panel;
}

function jarRequests(): number {
  return stand.requests.filter((r) => r.route === "jar").length;
}

function untouched(p: PanelStandIn): void {
  expect(readFileSync(join(volume, "server.jar"))).toEqual(OLD);
  expect(readdirSync(volume).sort()).toEqual(["server.jar", "world"]);
  expect(p.imageChanges()).toEqual([]);
}

beforeAll(async () => {
  stand = await startDownloadStandIn({
    vanilla: [
      { id: "1.21", type: "release" },
      { id: "1.20.4", type: "release" },
    ],
    paper: { paper: { "1.21": [{ id: 130 }], "1.20.4": [{ id: 499 }] } },
  });
  discord = await startDiscordStandIn();
});
afterAll(async () => {
  await stand.close();
  await discord.close();
});
beforeEach(() => {
  stand.reset();
  discord.reset();
  root = tempDir("mcops-jar-java-");
  env = toolEnv(root.path, { MCOPS_RETRY_MS: "20" });
});
afterEach(async () => {
  await panel?.close();
  panel = undefined;
  root.cleanup();
});

describe("jar-download: the Java image for the version (built executable)", () => {
  it("1.20.4 → 1.21 switches java_17 to java_21 with the swap, says so, and --rollback switches back", async () => {
    const p = await serverOn({ dockerImage: `${YOLKS}:java_17` });
    // 1.20.4 first, on java_17 (its need): nothing to switch.
    expect(await run("1.20.4", "--type", "vanilla", "--no-backup")).toMatchObject({ code: 0, stderr: "" });
    expect(p.imageChanges()).toEqual([]);
    const result = await run("1.21", "--type", "vanilla", "--no-backup");
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toMatch(
      /^Installed Minecraft 1\.21 as .*server\.jar \(.*, sha1 verified\); the old jar is server\.jar\.previous; Java image switched to java_21 \(was java_17\)\.\n$/,
    );
    expect(readFileSync(join(volume, "server.jar"))).toEqual(stand.jar("vanilla-1.21.jar"));
    expect(p.dockerImage()).toBe(`${YOLKS}:java_21`);
    expect(p.imageChanges()).toEqual([{ from: `${YOLKS}:java_17`, to: `${YOLKS}:java_21` }]);
    // The switch came with the swap: after the download, never before it.
    const jarAt = stand.requests.find((r) => r.route === "jar")?.at ?? Infinity;
    const switchCall = p.calls.find((c) => c.kind === "docker-image");
    expect(switchCall).toMatchObject({ method: "PUT", status: 204, image: `${YOLKS}:java_21` });
    expect(switchCall?.at ?? 0).toBeGreaterThanOrEqual(jarAt);
    const log = readFileSync(join(root.path, "log", "mc-jar-download.log"), "utf8");
    expect(log).toContain(
      "INFO Minecraft 1.21 needs Java 21; the server's image java_17 has Java 17: it is switched to java_21 (Java 21) with the swap",
    );
    expect(log).toMatch(/INFO installed Minecraft 1\.21 as .*; Java image switched to java_21 \(was java_17\)\n/);
    expect(discord.messages.map((m) => m.body.embeds[0].description).at(-1)).toContain(
      "Minecraft 1.21 installed; Java image switched to java_21 (was java_17)",
    );

    const back = await run("--rollback");
    expect(back).toMatchObject({ code: 0 });
    expect(back.stdout).toBe(
      "Minecraft 1.20.4 is back as server.jar (Minecraft 1.21 is kept as server.jar.previous); the Java image back to java_17.\n",
    );
    expect(readFileSync(join(volume, "server.jar"))).toEqual(stand.jar("vanilla-1.20.4.jar"));
    expect(p.dockerImage()).toBe(`${YOLKS}:java_17`);

    // The rollback can itself be undone, with the image again.
    const again = await run("--rollback");
    expect(again.stdout).toBe(
      "Minecraft 1.21 is back as server.jar (Minecraft 1.20.4 is kept as server.jar.previous); the Java image back to java_21.\n",
    );
    expect(p.imageChanges().map((c) => c.to)).toEqual([`${YOLKS}:java_21`, `${YOLKS}:java_17`, `${YOLKS}:java_21`]);
  });

  it("keeps an image that is new enough: no egg read, no switch", async () => {
    const p = await serverOn({ dockerImage: `${YOLKS}:java_21` });
    const result = await run("1.20.4", "--type", "vanilla", "--no-backup");
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).not.toContain("Java image");
    expect(p.calls.filter((c) => c.kind === "startup" || c.kind === "docker-image")).toEqual([]);
  });

  it("an egg without java_21: exit 2 before anything is done, naming the admin step", async () => {
    const egg = { dockerImages: { "Java 17": `${YOLKS}:java_17`, "Java 11": `${YOLKS}:java_11` } };
    const p = await serverOn({ dockerImage: `${YOLKS}:java_17`, egg, state: "running" });
    for (const args of [
      ["1.21", "--type", "vanilla"],
      ["1.21", "--type", "vanilla", "--stop"],
      ["1.21", "--dry-run"],
    ]) {
      const result = await run(...args, "--no-backup");
      expect(result, args.join(" ")).toMatchObject({
        code: 2,
        stdout: "",
        stderr: `jar-download: ${args[2] === "vanilla" ? "Minecraft" : "Paper"} 1.21 needs Java 21; the server's image java_17 has Java 17, and its egg offers no image with Java 21 or newer (it offers Java 17, Java 11) — add it in the panel's admin area: Nests → the egg → Docker Images, a line \`Java 21|ghcr.io/pterodactyl/yolks:java_21\`, then run jar-download again\n`,
      });
    }
    expect(jarRequests()).toBe(0);
    expect(p.signals()).toEqual([]);
    expect(p.calls.filter((c) => c.method !== "GET")).toEqual([]);
    untouched(p);
    expect(discord.messages).toEqual([]);
  });

  it("--dry-run shows the image change (Paper: Fill's java.version.minimum) and changes nothing", async () => {
    const p = await serverOn({ dockerImage: `${YOLKS}:java_17` });
    const dry = await run("1.21", "--dry-run");
    expect(dry).toMatchObject({ code: 0, stderr: "" });
    expect(dry.stdout).toContain(
      `  image:    ${YOLKS}:java_17 → ${YOLKS}:java_21 (needs Java 21, the image has 17; switched with the swap)\n`,
    );
    expect(stand.requests.some((r) => r.path === "/fill/v3/projects/paper/versions/1.21")).toBe(true);
    const kept = await run("1.20.4", "--dry-run");
    expect(kept.stdout).toContain(`  image:    ${YOLKS}:java_17 kept (needs Java 17, the image has 17)\n`);
    expect(jarRequests()).toBe(0);
    untouched(p);
  });

  it("a panel that refuses the switch at the swap: exit 2, nothing replaced, the server started again", async () => {
    const p = await serverOn({ dockerImage: `${YOLKS}:java_17`, state: "running" });
    // The panel's 403 for a key whose user lost startup.docker-image after the plan (the answer's real body).
    const forbidden = {
      errors: [{ code: "AccessDeniedHttpException", status: "403", detail: "This action is unauthorized." }],
    };
    p.inject({ kind: "status", status: 403, body: forbidden, route: "docker-image" });
    const result = await run("1.21", "--type", "vanilla", "--stop", "--no-backup");
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^jar-download: the panel refused to switch the server's image to ghcr\.io\/pterodactyl\/yolks:java_21: the API key may not do this on server \w{8} \(403 AccessDeniedHttpException: This action is unauthorized\.\); nothing was replaced \(.*\) — the server was started again with its old jar; the key's user needs the subuser permission startup\.docker-image .*; or switch it on the server's Startup tab\n$/,
    );
    expect(p.signals()).toEqual(["stop", "start"]);
    expect(p.state()).toBe("running");
    expect(jarRequests()).toBe(1);
    untouched(p);
    expect(p.dockerImage()).toBe(`${YOLKS}:java_17`);
  });
});
