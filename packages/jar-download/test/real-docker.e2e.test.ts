/**
 * Loader and modpack installs on a real Docker Engine (issue 44), with the built executable: Debian's dockerd with a
 * private socket (testkit docker-engine.ts), the images shaped like the eggs' Java images pulled for real from a
 * registry on 127.0.0.1 (testkit fixtures/docker-images), the test installer (the real installers' layout) run by
 * Debian's OpenJDK inside the container as 988:988.
 *
 * Engines: Debian 12's docker.io 20.10 (API 1.41, as Debian 11 and 12 ship it), and Debian 13's 26.1 run with
 * DOCKER_MIN_API_VERSION=1.44, which refuses API 1.41 as Docker 29.0 does. These tests need root (dockerd) and the
 * images set-up builds: without root they are skipped and say why; as root, a missing piece fails them.
 */
import {
  chownSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { VolumeDir } from "@mcops/core/volume";
import {
  buildMrpack,
  type DiscordStandIn,
  type DockerEngine,
  type DownloadStandIn,
  dockerEngineUnavailable,
  type ModrinthStandIn,
  mrpackFile,
  mrpackIndex,
  type PanelStandIn,
  type RealEngine,
  runTool,
  startDiscordStandIn,
  startDockerEngine,
  startDownloadStandIn,
  startModrinthStandIn,
  startPanelStandIn,
  startTestRegistry,
  type TempDir,
  type TestRegistry,
  type ToolRun,
  tempDir,
  testInstallerJar,
  toolEnv,
} from "@mcops/testkit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runInstaller } from "../src/container.ts";
import { FORGE_EGG_STARTUP, modProjects, OLD, writeConfig } from "./config.ts";

const BIN = fileURLToPath(new URL("../dist/jar-download.mjs", import.meta.url));
const NEOFORGE_ARGS = "libraries/net/neoforged/neoforge/21.1.77/unix_args.txt";
const FORGE_ARGS = "libraries/net/minecraftforge/forge/1.20.1-47.3.0/unix_args.txt";

const notRoot = process.getuid?.() !== 0;
if (notRoot) console.warn(`real Docker Engine tests skipped: ${dockerEngineUnavailable()}`);

let discord: DiscordStandIn;
let modrinth: ModrinthStandIn;
let stand: DownloadStandIn;
let registry: TestRegistry;
let shared: TempDir;
let panel: PanelStandIn | undefined;
let root: TempDir | undefined;
let volume: string;
let env: NodeJS.ProcessEnv;

function run(...args: string[]): Promise<ToolRun> {
  return runTool(BIN, args, { env });
}

beforeAll(async () => {
  if (notRoot) return;
  const why = dockerEngineUnavailable();
  if (why) throw new Error(`the real Docker Engine cannot run: ${why}`);
  shared = tempDir("mcops-real-docker-");
  registry = await startTestRegistry(join(shared.path, "registry"));
  discord = await startDiscordStandIn();
  modrinth = await startModrinthStandIn({ projects: modProjects() });
  stand = await startDownloadStandIn({
    vanilla: [
      { id: "1.21.1", type: "release" },
      { id: "1.20.1", type: "release" },
    ],
    forge: { versions: ["1.20.1-47.3.0"], promos: { "1.20.1-latest": "47.3.0", "1.20.1-recommended": "47.3.0" } },
    installerJar: (loader, version) => {
      const [game, loaderVersion] =
        loader === "forge" ? version.split("-") : loader === "quilt" ? ["1.21.1", "0.26.4"] : ["1.21.1", version];
      return testInstallerJar({ loader, version: loaderVersion as string, game: game as string });
    },
  });
}, 120_000);

afterAll(async () => {
  if (notRoot) return;
  await Promise.all([registry?.close(), discord?.close(), modrinth?.close(), stand?.close()]);
  shared?.cleanup();
});

afterEach(async () => {
  await panel?.close();
  panel = undefined;
  root?.cleanup();
  root = undefined;
});

/** The server on `image` (a reference in the test registry), with the egg offering the registry's Java images. */
async function serverOn(docker: DockerEngine, image: string, extra: string[] = []): Promise<PanelStandIn> {
  discord.reset();
  modrinth.requests.length = 0;
  const yolks = (java: number) => registry.image(`pterodactyl/yolks:java_${java}`);
  panel = await startPanelStandIn({
    servers: [
      {
        state: "offline",
        dockerImage: registry.image(image),
        egg: {
          startup: FORGE_EGG_STARTUP,
          dockerImages: { "Java 17": yolks(17), "Java 21": yolks(21), "Java 22": yolks(22) },
        },
      },
    ],
    timings: { startMs: 100, stopMs: 100 },
  });
  root = tempDir("mcops-real-docker-run-");
  volume = join(root.path, "volumes", panel.server.uuid);
  mkdirSync(join(volume, "world"), { recursive: true });
  writeFileSync(join(volume, "server.jar"), OLD);
  env = toolEnv(root.path, { MCOPS_RETRY_MS: "20" });
  writeConfig(env, {
    panel,
    volume,
    stand,
    discord,
    extra: [
      `DOCKER_SOCKET=${docker.socket}`,
      "INSTALLER_TIMEOUT=5m",
      `MODRINTH_API_BASE=${modrinth.api}`,
      `MODRINTH_CDN_BASE=${modrinth.cdn}`,
      ...extra,
    ],
  });
  return panel;
}

/** What the tool's log says. */
function toolLog(): string {
  return readFileSync(join(env.MCOPS_LOG_DIR as string, "mc-jar-download.log"), "utf8");
}

/** The installer's containers still on the engine (each run removes its own). */
async function installerContainers(docker: DockerEngine): Promise<unknown[]> {
  const filters = encodeURIComponent(JSON.stringify({ label: ["ContainerType=mcops_installer"] }));
  return JSON.parse((await docker.api("GET", `/containers/json?all=1&filters=${filters}`)).body) as unknown[];
}

function ownedByGame(rel: string): void {
  expect(statSync(join(volume, rel)), rel).toMatchObject({ uid: 988, gid: 988 });
}

function engineSuite(engine: RealEngine, minApiVersion?: string): void {
  const title = `${engine}${minApiVersion ? ` refusing API < ${minApiVersion}` : ""}`;
  describe.skipIf(notRoot)(`jar-download on a real Docker Engine ${title} (built executable)`, () => {
    let docker: DockerEngine;
    let dir: TempDir;

    beforeAll(async () => {
      dir = tempDir("mcops-real-dockerd-");
      docker = await startDockerEngine({ dir: dir.path, engine, ...(minApiVersion ? { minApiVersion } : {}) });
      // The node has run the server on java_17 and java_22: Wings pulled those. java_21 it never ran.
      await docker.pull(registry.image("pterodactyl/yolks:java_17"));
    }, 300_000);

    afterAll(async () => {
      await docker?.close();
      dir?.cleanup();
    });

    if (minApiVersion) {
      it(`really refuses API 1.41 (${minApiVersion} is its floor)`, async () => {
        const old = await docker.api("GET", "/v1.41/version");
        expect(old.status).toBe(400);
        expect(old.body).toMatch(/client version 1\.41 is too old\. Minimum supported API version is 1\.44/);
      });
    }

    it("a staging directory the game's user replaced at its path before the start: the container runs nothing", async () => {
      root = tempDir("mcops-real-docker-bind-");
      const staging = join(root.path, "staging");
      mkdirSync(staging, { mode: 0o700 });
      chownSync(staging, 988, 988);
      const made = VolumeDir.open(staging);
      try {
        renameSync(staging, `${staging}.moved`);
        mkdirSync(staging);
        writeFileSync(
          join(staging, "installer.jar"),
          testInstallerJar({ loader: "neoforge", version: "21.1.77", game: "1.21.1" }),
        );
        chownSync(staging, 988, 988);
        const lines: string[] = [];
        const installing = runInstaller({
          socket: docker.socket,
          image: registry.image("pterodactyl/yolks:java_17"),
          user: { uid: 988, gid: 988 },
          dir: made,
          cmd: ["java", "-jar", "installer.jar", "--installServer"],
          network: "none",
          timeoutMs: 120_000,
          onLine: (line) => lines.push(line),
          log: { info: () => undefined, warn: () => undefined },
        });
        await expect(installing).rejects.toThrow(/^Docker bound another directory than the installer's/);
        expect(lines).toContain(
          "mcops: the working directory is not the one jar-download made for the installer: nothing was run",
        );
        expect(readdirSync(staging)).toEqual(["installer.jar"]);
        expect(readdirSync(`${staging}.moved`)).toEqual([]);
        expect(await installerContainers(docker)).toEqual([]);
      } finally {
        made.close();
      }
    }, 120_000);

    it("NeoForge 1.21.1 on a java_17 server: the egg's java_21 is pulled, the installer runs in it and writes run.sh", async () => {
      expect(await docker.hasImage(registry.image("pterodactyl/yolks:java_21"))).toBe(false);
      const p = await serverOn(docker, "pterodactyl/yolks:java_17");
      const result = await run("1.21.1", "--type", "neoforge", "--no-backup");
      expect(result, `${result.stderr}\n${docker.log().slice(-2000)}`).toMatchObject({ code: 0 });
      expect(result.stdout).toMatch(/^Installed NeoForge 21\.1\.77 for Minecraft 1\.21\.1 in .*; Java image switched/);
      expect(await docker.hasImage(registry.image("pterodactyl/yolks:java_21"))).toBe(true);
      expect(p.dockerImage()).toBe(registry.image("pterodactyl/yolks:java_21"));
      const log = toolLog();
      expect(log).toMatch(/pull/i);
      expect(readFileSync(join(volume, "unix_args.txt"))).toEqual(readFileSync(join(volume, NEOFORGE_ARGS)));
      expect(readFileSync(join(volume, "user_jvm_args.txt"), "utf8")).toMatch(/Xmx/);
      for (const rel of ["run.sh", "unix_args.txt", NEOFORGE_ARGS, "libraries"]) ownedByGame(rel);
      expect(statSync(join(volume, "run.sh")).mode & 0o777).toBe(0o755);
      expect(await installerContainers(docker)).toEqual([]);
    }, 300_000);

    it("INSTALLER_NETWORK naming a network the engine lacks: exit 1 in one line naming the setting, nothing moved", async () => {
      // The engine runs with --bridge=none: Docker's bridge (the default) leaves the container without a network, which
      // the test installer does not need; Wings' network is not there.
      await serverOn(docker, "pterodactyl/yolks:java_17", ["INSTALLER_NETWORK=pterodactyl_nw"]);
      const result = await run("1.20.1", "--type", "forge", "--no-backup");
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /^jar-download: Docker has no network pterodactyl_nw for the installer's container \(INSTALLER_NETWORK\) \(.*docker\.sock\) — docker network ls names/m,
      );
      expect(
        readdirSync(volume)
          .filter((n) => !n.startsWith("."))
          .sort(),
      ).toEqual(["server.jar", "world"]);
      expect(await installerContainers(docker)).toEqual([]);
    }, 120_000);

    it("Forge 1.20.1 in Ptero-Eggs' java_21, whose ENTRYPOINT is tini and an entrypoint.sh that ignores its arguments", async () => {
      await docker.pull(registry.image("ptero-eggs/yolks:java_21"));
      await serverOn(docker, "ptero-eggs/yolks:java_21");
      const result = await run("1.20.1", "--type", "forge", "--no-backup");
      expect(result, result.stderr).toMatchObject({ code: 0 });
      expect(result.stdout).toMatch(/^Installed Forge 47\.3\.0 for Minecraft 1\.20\.1 in /);
      expect(readFileSync(join(volume, "unix_args.txt"))).toEqual(readFileSync(join(volume, FORGE_ARGS)));
      ownedByGame("run.sh");
      // The installer's own output reached the log: it ran, not the image's entrypoint.
      expect(toolLog()).toMatch(/INFO installer: /);
      expect(toolLog()).not.toMatch(/container@pterodactyl/);
    }, 300_000);

    it("Quilt in pterodactyl's java_22 (tini ENTRYPOINT): the launcher as server.jar, Mojang's as vanilla.jar", async () => {
      await serverOn(docker, "pterodactyl/yolks:java_22");
      const result = await run("1.21.1", "--type", "quilt", "--no-backup");
      expect(result, result.stderr).toMatchObject({ code: 0 });
      expect(result.stdout).toMatch(/^Installed Quilt 0\.26\.4 for Minecraft 1\.21\.1 in /);
      expect(readFileSync(join(volume, "quilt-server-launcher.properties"), "utf8")).toMatch(
        /^serverJar=vanilla\.jar$/m,
      );
      expect(readFileSync(join(volume, "server.jar"))).not.toEqual(OLD);
      expect(lstatSync(join(volume, "vanilla.jar")).isFile()).toBe(true);
      ownedByGame("server.jar");
    }, 300_000);

    it("a NeoForge modpack from a file: the installer run in the server's image, the pack's mods in place", async () => {
      await serverOn(docker, "pterodactyl/yolks:java_21");
      const create = modrinth.file("NEOMOD01", "V3000003", "create.jar");
      const pack = buildMrpack({
        index: mrpackIndex({
          name: "Gears",
          versionId: "1.0.0",
          files: [mrpackFile(create, "mods/create.jar")],
          dependencies: { minecraft: "1.21.1", neoforge: "21.1.77" },
        }),
        overrides: { "config/create-common.toml": "speed = 2\n" },
      });
      const file = join(root?.path as string, "gears.mrpack");
      writeFileSync(file, pack);
      const result = await run("--mrpack", file, "--no-backup");
      expect(result, result.stderr).toMatchObject({ code: 0 });
      expect(result.stdout).toMatch(/^Installed the modpack Gears 1\.0\.0 \(Minecraft 1\.21\.1, NeoForge 21\.1\.77\)/);
      expect(readFileSync(join(volume, "mods", "create.jar"))).toEqual(create.bytes);
      expect(readFileSync(join(volume, "config", "create-common.toml"), "utf8")).toBe("speed = 2\n");
      expect(readdirSync(volume)).toContain("run.sh");
      ownedByGame("unix_args.txt");
      expect(await installerContainers(docker)).toEqual([]);
    }, 300_000);
  });
}

engineSuite("20.10");
engineSuite("26.1", "1.44");
