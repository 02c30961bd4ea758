import { createHash } from "node:crypto";
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type DiscordStandIn,
  type DownloadStandIn,
  giveToGame,
  type PanelStandIn,
  runTool,
  startDiscordStandIn,
  startDownloadStandIn,
  startPanelStandIn,
  startTool,
  swapForLink,
  type TempDir,
  type ToolRun,
  tempDir,
  toolEnv,
  waitUntil,
} from "@mcops/testkit";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { OLD, writeConfig } from "./config.ts";

const BIN = fileURLToPath(new URL("../dist/jar-download.mjs", import.meta.url));

let stand: DownloadStandIn;
let panel: PanelStandIn;
let discord: DiscordStandIn;
let root: TempDir;
let volume: string;
let env: NodeJS.ProcessEnv;

function run(...args: string[]): Promise<ToolRun> {
  return runTool(BIN, args, { env });
}

function jarRequests(): number {
  return stand.requests.filter((r) => r.route === "jar").length;
}

/**
 * A running server that, once told to stop, stays "stopping" until the test calls setState (a large world saving),
 * with the real panel's timing otherwise; backup.env points at it.
 */
async function holdStopping(): Promise<PanelStandIn> {
  const held = await startPanelStandIn({
    servers: [{ uuid: panel.server.uuid, state: "running" }],
    timings: { startMs: 100, stopMs: 600_000 },
  });
  const file = join(env.MCOPS_CONFIG_DIR as string, "backup.env");
  writeFileSync(
    file,
    readFileSync(file, "utf8")
      .replace(panel.url, held.url)
      .replace(panel.apiKey, held.apiKey)
      .replace(`SERVER_ID=${panel.server.identifier}`, `SERVER_ID=${held.server.identifier}`),
  );
  return held;
}

/** server.jar is still the old one, and nothing else appeared in the volume. */
function untouched(): void {
  expect(readFileSync(join(volume, "server.jar"))).toEqual(OLD);
  expect(readdirSync(volume).sort()).toEqual(["server.jar", "world"]);
}

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
  root = tempDir("mcops-jar-e2e-");
  volume = join(root.path, "volumes", panel.server.uuid);
  mkdirSync(join(volume, "world"), { recursive: true });
  writeFileSync(join(volume, "server.jar"), OLD);
  env = toolEnv(root.path, { MCOPS_RETRY_MS: "20" });
  writeConfig(env, { panel, volume, stand, discord });
});
afterEach(async () => {
  await panel.close();
  root.cleanup();
});

describe("jar-download (built executable)", () => {
  it("installs the newest stable Paper into a stopped server, keeps the old jar, chowns, logs and posts", async () => {
    const result = await run("1.21.4", "--no-backup");
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toMatch(
      new RegExp(
        `^Installed Paper 1\\.21\\.4 build 231 as ${volume}/server\\.jar \\(64\\.\\d+ KiB, sha256 verified\\); the old jar is server\\.jar\\.previous\\.\\n$`,
      ),
    );
    const jar = join(volume, "server.jar");
    expect(readFileSync(jar)).toEqual(stand.jar("paper-1.21.4-231.jar"));
    expect(readFileSync(join(volume, "server.jar.previous"))).toEqual(OLD);
    expect(statSync(jar)).toMatchObject({ uid: 988, gid: 988 });
    expect(readdirSync(volume).sort()).toEqual(["server.jar", "server.jar.previous", "world"]);
    expect(stand.requests.every((r) => r.userAgent === "mcops-jar-download/0.1.0 (ops@example.com)")).toBe(true);
    expect(panel.signals()).toEqual([]);
    expect(discord.messages.map((m) => m.body.embeds[0].title)).toEqual(["Server jar updated"]);
    const log = readFileSync(join(root.path, "log", "mc-jar-download.log"), "utf8");
    expect(log).toMatch(/INFO downloading Paper 1\.21\.4 build 231: paper-1\.21\.4-231\.jar from http/);
    expect(log).toMatch(/INFO downloaded 64\.\d+ KiB in .*; sha256 verified\n/);

    // Again: already there, nothing downloaded, nothing touched.
    const again = await run("1.21.4", "--no-backup");
    expect(again).toMatchObject({ code: 0, stdout: `Paper 1.21.4 build 231 is already installed in ${jar}.\n` });
    expect(jarRequests()).toBe(1);
  });

  it("refuses a webhook.env others can read (exit 78) before it downloads or installs anything", async () => {
    const etc = env.MCOPS_CONFIG_DIR as string;
    writeFileSync(join(etc, "webhook.env"), `WEBHOOK_URL=${discord.webhookUrl()}\n`);
    chmodSync(join(etc, "webhook.env"), 0o640);
    const result = await run("1.21.4", "--type", "purpur", "--no-backup");
    expect(result.code).toBe(78);
    expect(result.stderr).toMatch(/^jar-download: .*webhook\.env.* chmod 600 /);
    expect(result.stdout).toBe("");
    expect(jarRequests()).toBe(0);
    untouched();
  });

  it("refuses while the server runs (exit 75) and downloads nothing", async () => {
    panel.setState("running");
    const result = await run("1.21.4", "--type", "purpur", "--no-backup");
    expect(result.code).toBe(75);
    expect(result.stderr).toBe(
      `jar-download: the server is running; its jar cannot be replaced under it (server ${panel.server.identifier}) — stop it first, or pass --stop to stop it, replace the jar and start it again\n`,
    );
    expect(jarRequests()).toBe(0);
    untouched();
  });

  it("with --stop: downloads first, then stops, swaps, starts and waits until it runs", async () => {
    panel.setState("running");
    const result = await run("1.21.4", "--type", "vanilla", "--stop", "--no-backup");
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toMatch(
      /Installed Minecraft 1\.21\.4 .*sha1 verified.* The server was restarted with it\.\n$/,
    );
    expect(panel.signals()).toEqual(["stop", "start"]);
    expect(panel.state()).toBe("running");
    expect(readFileSync(join(volume, "server.jar"))).toEqual(stand.jar("vanilla-1.21.4.jar"));
    const jarAt = stand.requests.find((r) => r.route === "jar")?.at ?? Infinity;
    const stopAt = panel.calls.find((c) => c.signal === "stop")?.at ?? 0;
    expect(jarAt).toBeLessThan(stopAt);
  });

  it("with --stop and the panel's real timing: replaces the jar only once the panel says offline", async () => {
    const held = await holdStopping();
    try {
      expect(held.timing.powerDelayMs).toBeGreaterThan(0);
      const tool = startTool(BIN, ["1.21.4", "--type", "vanilla", "--stop", "--no-backup"], { env });
      // The tool has looked at least twice since the server began stopping, and waits.
      await held.waitForPolls("stopping", 2);
      expect(readFileSync(join(volume, "server.jar"))).toEqual(OLD);
      held.setState("offline");
      const result = await tool.done;
      expect(result).toMatchObject({ code: 0, stderr: "" });
      expect(readFileSync(join(volume, "server.jar"))).toEqual(stand.jar("vanilla-1.21.4.jar"));
      expect(held.signals()).toEqual(["stop", "start"]);
      expect(held.stateHistory().map((h) => h.state)).toEqual([
        "running",
        "stopping",
        "offline",
        "starting",
        "running",
      ]);
    } finally {
      await held.close();
    }
  }, 120_000);

  it("never replaces server.jar with a corrupt or cut download", async () => {
    stand.inject({ kind: "corrupt", route: "jar", times: 10 });
    const corrupt = await run("1.21.4", "--no-backup");
    expect(corrupt.code).toBe(1);
    expect(corrupt.stderr).toMatch(
      /^jar-download: paper-1\.21\.4-231\.jar does not match its sha256 \(expected [0-9a-f]{64}, got [0-9a-f]{64}\) \(http:\/\/127\.0\.0\.1:\d+\/fill-data\/.*\) — nothing in the volume was changed; try again later, or use another mirror\n$/,
    );
    untouched();

    stand.reset();
    stand.inject({ kind: "truncate", bytes: 4096, route: "jar", times: 4 });
    const cut = await run("1.21.4", "--type", "folia", "--no-backup");
    expect(cut.code).toBe(1);
    const lines = cut.stderr.trimEnd().split("\n");
    expect(lines.slice(0, 3).every((l) => / WARN download attempt \d failed \(the connection broke/.test(l))).toBe(
      true,
    );
    expect(lines[3]).toMatch(
      /^jar-download: the download of folia-1\.21\.4-10\.jar failed 4 times: the connection broke after 4\.00 KiB/,
    );
    expect(lines).toHaveLength(4);
    untouched();
    expect(discord.messages).toEqual([]);
  });

  it("stops on SIGINT during the download and leaves server.jar and the volume as they were", async () => {
    // The jar's answer is held for ten minutes: the tool ends only because it was interrupted.
    stand.inject({ kind: "delay", ms: 600_000, route: "jar" });
    const { child, done } = startTool(BIN, ["1.21.4", "--no-backup"], { env });
    await waitUntil(() => stand.requests.some((r) => r.route === "jar"), "the jar request");
    child.kill("SIGINT");
    const result = await done;
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^jar-download: downloading paper-1\.21\.4-231\.jar failed: interrupted/);
    untouched();
  });

  it("asks PaperMC nothing without DOWNLOAD_CONTACT (exit 78, one line); the other hosts do not need it", async () => {
    const file = join(env.MCOPS_CONFIG_DIR as string, "backup.env");
    writeFileSync(file, readFileSync(file, "utf8").replace("DOWNLOAD_CONTACT=ops@example.com\n", ""));
    for (const args of [["1.21.4", "--no-backup"], ["1.21.4", "--type", "folia", "--no-backup"], ["--list"]]) {
      const result = await run(...args);
      expect(result).toMatchObject({
        code: 78,
        stderr: `jar-download: DOWNLOAD_CONTACT is not set: PaperMC asks every client for a contact in its User-Agent (${file}) — add DOWNLOAD_CONTACT=<your e-mail or web address> to ${file}\n`,
      });
    }
    expect(stand.requests).toHaveLength(0);
    expect((await run("1.21.4", "--type", "vanilla", "--no-backup")).code).toBe(0);
    expect(stand.requests.every((r) => r.route !== "paper")).toBe(true);
  });

  it("retries a 5xx from the download service", async () => {
    stand.inject({ kind: "status", status: 503, times: 2 });
    expect((await run("1.21.4", "--no-backup")).code).toBe(0);
    expect(stand.requests.slice(0, 3).map((r) => r.status)).toEqual([503, 503, 200]);
  });

  it("says in one line what is wrong with the request (exit 2)", async () => {
    const unknown = await run("1.99.9", "--no-backup");
    expect(unknown).toMatchObject({
      code: 2,
      stderr: "jar-download: Paper has no version 1.99.9 — see what there is: jar-download --list --type paper\n",
    });
    expect((await run("1.21.4", "--type", "bukkit", "--no-backup")).stderr).toBe(
      'jar-download: unknown server type "bukkit" — use one of paper, folia, purpur, vanilla, fabric, neoforge, forge, quilt\n',
    );
    expect((await run("1.21.4", "--type", "paper", "--loader", "1.0", "--dry-run")).stderr).toMatch(
      /^jar-download: --loader is for neoforge, forge and quilt, not paper/,
    );
    expect((await run()).code).toBe(2);
    expect((await run("../../etc")).stderr).toMatch(/is not a version/);
    untouched();
  });

  it("lists versions and builds, and plans without doing (--dry-run)", async () => {
    const list = await run("--list", "--type", "purpur");
    expect(list).toMatchObject({ code: 0, stdout: "1.21.4\n" });
    const builds = await run("1.21.4", "--list");
    expect(builds.stdout.split("\n").map((l) => l.split("\t")[0])).toEqual(["232", "231", "230", ""]);
    const dry = await run("1.21.4", "--type", "fabric", "--dry-run");
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("Would install Fabric 1.21.4 (loader 0.16.10) (nothing done, --dry-run):");
    expect(dry.stdout).toContain(`into:     ${volume}/server.jar`);
    expect(jarRequests()).toBe(0);
    untouched();
  });
});

describe("jar-download --type neoforge, forge, quilt (their installers)", () => {
  it("lists the game versions with builds and a game version's loaders, newest first, betas and promotions marked", async () => {
    expect(await run("--list", "--type", "neoforge")).toMatchObject({ code: 0, stdout: "1.21.4\n1.21.1\n1.20.4\n" });
    expect(await run("1.21.4", "--list", "--type", "neoforge")).toMatchObject({
      code: 0,
      stdout: "21.4.10-beta\tbeta\n",
    });
    expect((await run("1.21.1", "--list", "--type", "neoforge")).stdout).toBe("21.1.77\n21.1.72\n");
    expect((await run("--list", "--type", "forge")).stdout).toBe("1.21.1\n1.20.1\n");
    expect((await run("1.20.1", "--list", "--type", "forge")).stdout).toBe("47.3.0\tlatest\n47.2.0\trecommended\n");
    expect((await run("1.21.1", "--list", "--type", "quilt")).stdout).toBe("0.27.0-beta.1\tbeta\n0.26.4\n");
    const unknown = await run("1.19.2", "--list", "--type", "neoforge");
    expect(unknown).toMatchObject({
      code: 2,
      stderr:
        "jar-download: NeoForge has no build for Minecraft 1.19.2 — see what there is: jar-download --list --type neoforge\n",
    });
    expect(jarRequests()).toBe(0);
    untouched();
  });

  it("plans the installer (--dry-run): file, from, its maven checksum, the command it runs, into", async () => {
    const neoforge = await run("1.21.1", "--type", "neoforge", "--dry-run");
    expect(neoforge).toMatchObject({ code: 0, stderr: "" });
    const sha256 = createHash("sha256").update(stand.jar("neoforge-21.1.77-installer.jar")).digest("hex");
    const url = `${stand.bases.neoforge}/releases/net/neoforged/neoforge/21.1.77/neoforge-21.1.77-installer.jar`;
    expect(neoforge.stdout).toBe(
      [
        "Would install NeoForge 21.1.77 for Minecraft 1.21.1 (nothing done, --dry-run):",
        "  file:     neoforge-21.1.77-installer.jar (the installer)",
        `  from:     ${url}`,
        `  verify:   sha256 ${sha256} (the maven's)`,
        "  run:      java -jar neoforge-21.1.77-installer.jar --installServer (the installer needs Java 8 or newer)",
        "  image:    ghcr.io/pterodactyl/yolks:java_21 kept (needs Java 8, the image has 21)",
        `  into:     ${volume} (what the installer writes; the files it replaces kept aside)`,
        "  first:    a snapshot of the world, tagged pre-upgrade",
        "",
      ].join("\n"),
    );
    const forge = await run("1.20.1", "--type", "forge", "--loader", "47.3.0", "--dry-run");
    expect(forge.stdout).toContain("Would install Forge 47.3.0 for Minecraft 1.20.1");
    expect(forge.stdout).toMatch(/ {2}verify: {3}sha1 [0-9a-f]{40} \(the maven's\)\n/);
    const quilt = await run("1.21.1", "--type", "quilt", "--dry-run");
    expect(quilt.stdout).toContain(
      "  run:      java -jar quilt-installer-0.9.2.jar install server 1.21.1 0.26.4 --download-server --install-dir=. (the installer needs Java 17 or newer)\n",
    );
    const beta = await run("1.21.1", "--type", "neoforge", "--loader", "21.4.10-beta", "--dry-run");
    expect(beta).toMatchObject({
      code: 2,
      stderr:
        "jar-download: NeoForge 21.4.10-beta is for Minecraft 1.21.4, not 1.21.1 — run jar-download 1.21.4 --type neoforge --loader 21.4.10-beta, or see what there is: jar-download 1.21.1 --list --type neoforge\n",
    });
    expect(jarRequests()).toBe(0);
    untouched();
  });
});

describe("jar-download in a volume the game's user attacks", () => {
  it("chowns nothing outside the volume when the download is swapped for a link while the server stops", async () => {
    // The server stays "stopping" until the test says otherwise: the swap happens exactly in that window.
    const held = await holdStopping();
    const outside = join(root.path, "root-only");
    mkdirSync(outside, { mode: 0o700 });
    writeFileSync(join(outside, "server.jar"), "root only", { mode: 0o600 });
    giveToGame(volume, root.path);
    try {
      const tool = startTool(BIN, ["1.21.4", "--stop", "--no-backup"], { env });
      await held.waitForState("stopping", 60_000);
      const swap = await swapForLink(volume, ".mcops-jar-download-", outside);
      expect(swap.name).toMatch(/^\.mcops-jar-download-/);
      expect(swap).toMatchObject({ entered: false });
      expect(swap.error).toBeUndefined();
      held.setState("offline");
      const result = await tool.done;
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(readFileSync(join(outside, "server.jar"), "utf8")).toBe("root only");
      expect(statSync(join(outside, "server.jar"))).toMatchObject({ uid: 0, gid: 0 });
      expect(statSync(join(outside, "server.jar")).mode & 0o777).toBe(0o600);
      expect(statSync(outside)).toMatchObject({ uid: 0, gid: 0 });
      const jar = join(volume, "server.jar");
      expect(lstatSync(jar).isSymbolicLink()).toBe(false);
      expect(readFileSync(jar)).toEqual(stand.jar("paper-1.21.4-231.jar"));
      expect(statSync(jar)).toMatchObject({ uid: 988, gid: 988 });
      expect(held.signals()).toEqual(["stop", "start"]);
    } finally {
      await held.close();
    }
  }, 120_000);
});
