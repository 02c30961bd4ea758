import { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type DiscordStandIn,
  type DockerStandIn,
  type DockerStandInOptions,
  type DownloadStandIn,
  type InstallerBehaviour,
  type PanelStandIn,
  runTool,
  type StandInContainer,
  startDiscordStandIn,
  startDockerStandIn,
  startDownloadStandIn,
  startPanelStandIn,
  startUnderCachedOffline,
  stopOrder,
  type TempDir,
  type ToolRun,
  tempDir,
  testInstallerJar,
  toolEnv,
} from "@mcops/testkit";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import yauzl from "yauzl";
import { FORGE_EGG_STARTUP, GUARDED_ENTRYPOINT, levelDat, OLD, writeConfig } from "./config.ts";

/**
 * `jar-download VERSION --type neoforge|forge` with the built executable: the installer downloaded from the maven
 * stand-in, run by the Docker stand-in in the server's image as 988:988 (Debian's Java running the test installer,
 * which writes the real installer's layout), its output checked and moved into the volume.
 */
const BIN = fileURLToPath(new URL("../dist/jar-download.mjs", import.meta.url));
const ARGS = "libraries/net/neoforged/neoforge/21.1.77/unix_args.txt";

let stand: DownloadStandIn;
let discord: DiscordStandIn;
let panel: PanelStandIn;
let docker: DockerStandIn;
let root: TempDir;
let volume: string;
let env: NodeJS.ProcessEnv;

function run(...args: string[]): Promise<ToolRun> {
  return runTool(BIN, args, { env });
}

beforeAll(async () => {
  discord = await startDiscordStandIn();
});
afterAll(async () => {
  await discord.close();
});

/** The maven stand-in serving the test installer that behaves so (the stand-in makes each file once). */
function installers(behaviour: InstallerBehaviour): Promise<DownloadStandIn> {
  return startDownloadStandIn({
    vanilla: [
      { id: "1.21.1", type: "release" },
      { id: "1.20.1", type: "release" },
      { id: "1.12.2", type: "release" },
    ],
    forge: {
      versions: ["1.12.2-14.23.5.2859", "1.12.2-14.23.5.2860", "1.20.1-47.2.0", "1.20.1-47.3.0", "1.21.1-52.0.10"],
      promos: {
        "1.12.2-recommended": "14.23.5.2859",
        "1.12.2-latest": "14.23.5.2860",
        "1.20.1-latest": "47.3.0",
        "1.20.1-recommended": "47.2.0",
        "1.21.1-latest": "52.0.10",
      },
    },
    installerJar: (loader, version) => {
      // Quilt's installer is one for every loader (its version is the installer's): the test one installs 0.26.4.
      const [game, forge] =
        loader === "forge" ? version.split("-") : loader === "quilt" ? ["1.21.1", "0.26.4"] : ["1.21.1", version];
      return testInstallerJar({ loader, version: forge as string, game: game as string, behaviour });
    },
  });
}

async function setUp(
  options: {
    startup?: string;
    behaviour?: InstallerBehaviour;
    image?: string;
    stopMs?: number;
    eggImages?: Record<string, string>;
    /** The Docker stand-in's images on the machine, registries, engine. */
    docker?: Omit<DockerStandInOptions, "dir">;
  } = {},
): Promise<void> {
  stand = await installers(options.behaviour ?? "ok");
  discord.reset();
  panel = await startPanelStandIn({
    servers: [
      {
        state: "offline",
        dockerImage: options.image ?? "ghcr.io/pterodactyl/yolks:java_21",
        egg: {
          ...(options.startup ? { startup: options.startup } : {}),
          ...(options.eggImages ? { dockerImages: options.eggImages } : {}),
        },
      },
    ],
    timings: { startMs: 100, stopMs: options.stopMs ?? 100 },
  });
  root = tempDir("mcops-loader-e2e-");
  docker = await startDockerStandIn({ dir: root.path, ...options.docker });
  volume = join(root.path, "volumes", panel.server.uuid);
  mkdirSync(join(volume, "world"), { recursive: true });
  mkdirSync(join(volume, "libraries", "io", "papermc"), { recursive: true });
  writeFileSync(join(volume, "libraries", "io", "papermc", "paper.jar"), "paper's library");
  writeFileSync(join(volume, "server.jar"), OLD);
  env = toolEnv(root.path, { MCOPS_RETRY_MS: "20" });
  writeConfig(env, {
    panel,
    volume,
    stand,
    discord,
    extra: [`DOCKER_SOCKET=${docker.socket}`, `INSTALLER_TIMEOUT=${options.behaviour === "hang" ? "3s" : "60s"}`],
  });
}

afterEach(async () => {
  await stand.close();
  await panel.close();
  await docker.close();
  root.cleanup();
});

/** The command a container ran: its Cmd, which its own Entrypoint (GUARDED_ENTRYPOINT) execs. */
function command(container: StandInContainer | undefined): string[] {
  return container?.cmd ?? [];
}

/** One entry of a jar, as text (the manifest: what `java -jar` reads). */
async function zipEntry(path: string, name: string): Promise<string> {
  const zip = await yauzl.openPromise(path, { lazyEntries: true, autoClose: false });
  try {
    for await (const entry of zip.eachEntry()) {
      if (entry.fileName !== name) continue;
      const chunks: Buffer[] = [];
      for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString("utf8");
    }
  } finally {
    zip.close();
  }
  throw new Error(`no ${name} in ${path}`);
}

/** The volume's top-level names, but for hidden ones (the keep directory). */
function visible(): string[] {
  return readdirSync(volume)
    .filter((n) => !n.startsWith("."))
    .sort();
}

describe("jar-download --type neoforge (built executable)", () => {
  it("runs the installer in the server's image as 988:988 and moves what it wrote into the volume, what it replaced kept", async () => {
    await setUp({ startup: FORGE_EGG_STARTUP });
    const result = await run("1.21.1", "--type", "neoforge", "--no-backup");
    expect(result.stderr).not.toMatch(/startup line/);
    expect(result, result.stderr).toMatchObject({ code: 0 });
    expect(result.stdout).toMatch(
      /^Installed NeoForge 21\.1\.77 for Minecraft 1\.21\.1 in .*; what it replaced is kept/,
    );
    const [container] = docker.containers;
    expect(container).toMatchObject({
      image: "ghcr.io/pterodactyl/yolks:java_21",
      user: "988:988",
      state: "removed",
      exitCode: 0,
      // The panel gives the server 4 GiB: more than Wings' installer limit (1 GiB), so the installer has as much.
      memory: 4 * 1024 ** 3,
    });
    // The container's own Entrypoint checks the bind and execs the installer, its Cmd: the image's ENTRYPOINT does not run.
    expect(container?.entrypoint).toEqual(GUARDED_ENTRYPOINT);
    expect(command(container)).toEqual(["java", "-jar", "neoforge-21.1.77-installer.jar", "--installServer"]);
    expect(visible()).toEqual([
      "libraries",
      "run.bat",
      "run.sh",
      "server.jar",
      "unix_args.txt",
      "user_jvm_args.txt",
      "world",
    ]);
    expect(readFileSync(join(volume, "unix_args.txt"))).toEqual(readFileSync(join(volume, ARGS)));
    for (const rel of ["run.sh", "unix_args.txt", ARGS, "libraries", "libraries/net/minecraft/server/1.21.1"]) {
      expect(statSync(join(volume, rel)), rel).toMatchObject({ uid: 988, gid: 988 });
    }
    expect(statSync(join(volume, "run.sh")).mode & 0o777).toBe(0o755);
    // Paper's libraries are kept (hidden, root's) for --rollback; server.jar is not the loader's and stays.
    expect(lstatSync(join(volume, "libraries", "io"), { throwIfNoEntry: false })).toBeUndefined();
    expect(readFileSync(join(volume, "server.jar"))).toEqual(OLD);
    const log = readFileSync(join(root.path, "log", "mc-jar-download.log"), "utf8");
    expect(log).toMatch(/INFO installer: /);
    expect(discord.messages.map((m) => m.body.embeds[0].title)).toEqual(["Server loader installed"]);
    // Nothing of the installer's own is left: its jar, its log, the private directories but the kept one.
    expect(readdirSync(volume).filter((n) => n.startsWith("."))).toEqual([
      expect.stringMatching(/^\.mcops-previous-install-/),
    ]);
  });

  it("installs Forge's recommended build for the game version, its arguments from forge/<game>-<loader>", async () => {
    await setUp({ startup: FORGE_EGG_STARTUP });
    const result = await run("1.20.1", "--type", "forge", "--no-backup");
    expect(result, result.stderr).toMatchObject({ code: 0 });
    expect(result.stdout).toMatch(/^Installed Forge 47\.2\.0 for Minecraft 1\.20\.1 in /);
    const args = "libraries/net/minecraftforge/forge/1.20.1-47.2.0/unix_args.txt";
    expect(readFileSync(join(volume, "unix_args.txt"))).toEqual(readFileSync(join(volume, args)));
    expect(command(docker.containers[0])).toEqual([
      "java",
      "-jar",
      "forge-1.20.1-47.2.0-installer.jar",
      "--installServer",
    ]);
  });

  it("a server on Java 17 gets the egg's Java 21 image for 1.21.1, which is pulled, and the installer runs in it", async () => {
    // The node has only ever run java_17: Wings pulls java_21 only when it next creates the server's container.
    await setUp({
      startup: FORGE_EGG_STARTUP,
      image: "ghcr.io/pterodactyl/yolks:java_17",
      docker: { images: ["ghcr.io/pterodactyl/yolks:java_17"] },
    });
    const result = await run("1.21.1", "--type", "neoforge", "--no-backup");
    expect(result, result.stderr).toMatchObject({ code: 0 });
    expect(result.stderr).not.toContain("pull");
    expect(result.stdout).toMatch(/; Java image switched to java_21 \(was java_17\)\./);
    expect(panel.imageChanges()).toEqual([
      { from: "ghcr.io/pterodactyl/yolks:java_17", to: "ghcr.io/pterodactyl/yolks:java_21" },
    ]);
    expect(docker.images).toContain("ghcr.io/pterodactyl/yolks:java_21");
    expect(docker.containers[0]?.image).toBe("ghcr.io/pterodactyl/yolks:java_21");
    expect(discord.messages[0]?.body.embeds[0].description).toMatch(/Java image switched to java_21/);
    // The pull in the log: a line per layer done and the final status, none of its progress bars.
    const log = readFileSync(join(root.path, "log", "mc-jar-download.log"), "utf8");
    expect(log).toContain("INFO pulling ghcr.io/pterodactyl/yolks:java_21\n");
    expect(log.match(/INFO pull: [0-9a-f]{12}: Pull complete\n/g)).toHaveLength(5);
    expect(log).toContain("INFO pull: Status: Downloaded newer image for ghcr.io/pterodactyl/yolks:java_21\n");
    // "pulling", five layers, the digest and the status: 8 lines, none of the pull's 250 progress messages.
    expect(log.match(/INFO pull/g)).toHaveLength(8);
    expect(log.indexOf("Status: Downloaded newer image")).toBeLessThan(log.indexOf("INFO installer: "));
  });

  it("installs in the community images (Ptero-Eggs yolks: tini and an entrypoint.sh that ignores its arguments)", async () => {
    const image = "ghcr.io/ptero-eggs/yolks:java_21";
    await setUp({
      startup: FORGE_EGG_STARTUP,
      image,
      eggImages: { "Java 21": image, "Java 17": "ghcr.io/ptero-eggs/yolks:java_17" },
      docker: { images: [image] },
    });
    const result = await run("1.21.1", "--type", "neoforge", "--no-backup");
    expect(result, result.stderr).toMatchObject({ code: 0 });
    expect(result.stdout).toMatch(/^Installed NeoForge 21\.1\.77 for Minecraft 1\.21\.1 in /);
    expect(docker.containers[0]).toMatchObject({ image, entrypoint: GUARDED_ENTRYPOINT, exitCode: 0 });
    expect(readFileSync(join(volume, "unix_args.txt"))).toEqual(readFileSync(join(volume, ARGS)));
  });

  it.each([
    ["29.0", "1.44 at least"],
    ["20.10", "1.41 at most"],
  ] as const)("installs through Docker %s (API %s)", async (engine, _range) => {
    await setUp({ startup: FORGE_EGG_STARTUP, docker: { engine } });
    const result = await run("1.21.1", "--type", "neoforge", "--no-backup");
    expect(result, result.stderr).toMatchObject({ code: 0 });
    expect(new Set(docker.calls.map((c) => c.api))).toEqual(new Set([engine === "29.0" ? 52 : 41]));
  });

  it("an image the node lacks and cannot pull: exit 1 before anything is moved, one line with what to do", async () => {
    const image = "ghcr.io/someone/private-yolks:java_21";
    await setUp({ startup: FORGE_EGG_STARTUP, image, eggImages: { "Java 21": image } });
    const result = await run("1.21.1", "--type", "neoforge", "--no-backup");
    expect(result.code).toBe(1);
    expect(result.stderr.split("\n").at(-2)).toBe(
      `jar-download: the image ${image} is not on this machine and could not be pulled: 500 Head "https://ghcr.io/v2/someone/private-yolks/manifests/java_21": unauthorized (${docker.socket}) — ghcr.io gave it only with a login, or has no such image: check the image in the egg; mcops does not log in to registries (Wings' docker.registries are not read), so pull a private image on the node yourself (docker login ghcr.io, docker pull ${image}), then run again`,
    );
    expect(docker.containers).toEqual([]);
    expect(visible()).toEqual(["libraries", "server.jar", "world"]);
    expect(readFileSync(join(volume, "server.jar"))).toEqual(OLD);
  });

  it("--rollback takes the loader out, puts back what it replaced and the image before it", async () => {
    await setUp({ startup: FORGE_EGG_STARTUP, image: "ghcr.io/pterodactyl/yolks:java_17" });
    writeFileSync(join(volume, "run.sh"), "the operator's own run.sh\n");
    expect((await run("1.21.1", "--type", "neoforge", "--no-backup")).code).toBe(0);
    panel.setState("running");
    const dry = await run("--rollback", "--dry-run");
    expect(dry.stdout).toMatch(
      /^Would take NeoForge 21\.1\.77 for Minecraft 1\.21\.1 out \(libraries, run\.sh, run\.bat, unix_args\.txt, user_jvm_args\.txt\) and put what was there before it back; the image back to java_17/,
    );
    const back = await run("--rollback");
    expect(back, back.stderr).toMatchObject({ code: 0 });
    expect(back.stdout).toMatch(
      /was taken out and what was there before it put back; the image back to java_17\. The server was restarted\./,
    );
    expect(visible()).toEqual(["libraries", "run.sh", "server.jar", "world"]);
    expect(readFileSync(join(volume, "run.sh"), "utf8")).toBe("the operator's own run.sh\n");
    expect(readFileSync(join(volume, "libraries", "io", "papermc", "paper.jar"), "utf8")).toBe("paper's library");
    expect(readdirSync(volume).filter((n) => n.startsWith("."))).toEqual([]);
    expect(panel.imageChanges().at(-1)).toEqual({
      from: "ghcr.io/pterodactyl/yolks:java_21",
      to: "ghcr.io/pterodactyl/yolks:java_17",
    });
    expect(panel.signals()).toEqual(["stop", "start"]);
    expect(discord.messages.map((m) => m.body.embeds[0].title)).toEqual([
      "Server loader installed",
      "Server rolled back",
    ]);
  });

  it("--rollback whose image switch the panel refuses still puts the files back, starts the server, and says so (exit 1)", async () => {
    await setUp({ startup: FORGE_EGG_STARTUP, image: "ghcr.io/pterodactyl/yolks:java_17" });
    expect((await run("1.21.1", "--type", "neoforge", "--no-backup")).code).toBe(0);
    panel.setState("running");
    // More than the client's retries: the panel keeps refusing.
    panel.inject({ kind: "status", status: 500, route: "docker-image", times: 20 });
    const back = await run("--rollback");
    expect(back.code).toBe(1);
    expect(back.stderr).toMatch(
      /NeoForge 21\.1\.77 for Minecraft 1\.21\.1 was taken out and what was there before it put back, but the image could not be switched back to java_17/,
    );
    expect(readFileSync(join(volume, "libraries", "io", "papermc", "paper.jar"), "utf8")).toBe("paper's library");
    expect(lstatSync(join(volume, "unix_args.txt"), { throwIfNoEntry: false })).toBeUndefined();
    expect(panel.state()).toBe("running");
    // Nothing left to roll back: the history says the files are back.
    const again = await run("--rollback", "--dry-run");
    expect(again.stdout).not.toMatch(/NeoForge/);
  });

  it("keeps aside only what the last install replaced: an older install's kept directory goes when a newer one is recorded", async () => {
    await setUp({ startup: FORGE_EGG_STARTUP });
    const kept = () => readdirSync(volume).filter((n) => n.startsWith(".mcops-previous-install-"));
    expect((await run("1.21.1", "--type", "neoforge", "--no-backup")).code).toBe(0);
    const [first] = kept();
    expect((await run("1.21.1", "--type", "neoforge", "--loader", "21.1.72", "--no-backup")).code).toBe(0);
    expect(kept()).toHaveLength(1);
    expect(kept()).not.toContain(first);
    // A directory the game's user made under such a name is not ours: left alone.
    mkdirSync(join(volume, ".mcops-previous-install-decoy"));
    const jar = await run("1.21.1", "--type", "vanilla", "--no-backup");
    expect(jar, jar.stderr).toMatchObject({ code: 0 });
    expect(kept()).toEqual([".mcops-previous-install-decoy"]);
  });

  it("--rollback checks the world again once the server is stopped: saved by the loader's version as it stopped, refused and started again", async () => {
    await setUp({ startup: FORGE_EGG_STARTUP, stopMs: 1500 });
    writeFileSync(join(volume, "world", "level.dat"), levelDat(3465, "1.20.1"));
    const vanilla = await run("1.20.1", "--type", "vanilla", "--no-backup");
    expect(vanilla, vanilla.stderr).toMatchObject({ code: 0 });
    expect((await run("1.21.1", "--type", "neoforge", "--no-backup")).code).toBe(0);
    panel.setState("running");
    const rollback = run("--rollback");
    // The server ran 1.21.1 for less than an autosave: it writes level.dat as 1.21.1's only as it stops.
    await vi.waitFor(() => expect(panel.signals()).toContain("stop"), { timeout: 30_000, interval: 5 });
    writeFileSync(join(volume, "world", "level.dat"), levelDat(3955, "1.21.1"));
    const back = await rollback;
    expect(back.code).toBe(2);
    expect(back.stderr).toMatch(/the world has been saved by 1\.21\.1 \(data version 3955\)/);
    expect(back.stderr).toMatch(/the server was started again/);
    expect(readFileSync(join(volume, "unix_args.txt"))).toEqual(readFileSync(join(volume, ARGS)));
    expect(panel.signals()).toEqual(["stop", "start"]);
  });

  it("when what --rollback needs cannot be recorded, the move is undone: the volume and the image as they were", async () => {
    await setUp({ startup: FORGE_EGG_STARTUP, image: "ghcr.io/pterodactyl/yolks:java_17" });
    writeFileSync(join(volume, "run.sh"), "the operator's own run.sh\n");
    // The state file cannot be written (here a directory in its place; a full disk does the same).
    mkdirSync(join(root.path, "state", "jar-download.json"), { recursive: true });
    const before = visible();
    const result = await run("1.21.1", "--type", "neoforge", "--no-backup");
    expect(result.code).toBe(1);
    expect(visible()).toEqual(before);
    expect(readFileSync(join(volume, "run.sh"), "utf8")).toBe("the operator's own run.sh\n");
    expect(readFileSync(join(volume, "libraries", "io", "papermc", "paper.jar"), "utf8")).toBe("paper's library");
    expect(readdirSync(join(volume, "libraries"))).toEqual(["io"]);
    expect(readdirSync(volume).filter((n) => n.startsWith("."))).toEqual([]);
    expect(panel.imageChanges().at(-1)).toEqual({
      from: "ghcr.io/pterodactyl/yolks:java_21",
      to: "ghcr.io/pterodactyl/yolks:java_17",
    });
  });

  it("--rollback refuses when unix_args.txt changed since the loader went in, and changes nothing (not a jar rollback)", async () => {
    await setUp({ startup: FORGE_EGG_STARTUP });
    writeFileSync(join(volume, "server.jar.previous"), "an older jar");
    expect((await run("1.21.1", "--type", "neoforge", "--no-backup")).code).toBe(0);
    writeFileSync(join(volume, "unix_args.txt"), "-Dsomething=else\n");
    const back = await run("--rollback");
    expect(back.code).toBe(1);
    expect(back.stderr).toMatch(
      /unix_args\.txt is not the one NeoForge 21\.1\.77 for Minecraft 1\.21\.1 put there: it changed since/,
    );
    expect(readFileSync(join(volume, "server.jar"))).toEqual(OLD);
    expect(readFileSync(join(volume, "server.jar.previous"), "utf8")).toBe("an older jar");
  });

  it("--rollback never takes a directory the game's user renamed to the kept one's name for it", async () => {
    await setUp({ startup: FORGE_EGG_STARTUP });
    expect((await run("1.21.1", "--type", "neoforge", "--no-backup")).code).toBe(0);
    const [kept] = readdirSync(volume).filter((n) => n.startsWith(".mcops-previous-install-"));
    // The game's user moves the kept directory away and puts its own of that name in its place.
    renameSync(join(volume, kept as string), join(volume, "elsewhere"));
    mkdirSync(join(volume, kept as string, "libraries"), { recursive: true });
    const back = await run("--rollback");
    expect(back.code).toBe(1);
    expect(back.stderr).toMatch(
      /what NeoForge 21\.1\.77 for Minecraft 1\.21\.1 replaced is no longer kept in the volume/,
    );
    expect(readFileSync(join(volume, "unix_args.txt"))).toEqual(readFileSync(join(volume, ARGS)));
  });

  it.each([
    ["fails", "fail", /the NeoForge installer failed \(exit 1\): nothing in the volume was changed/],
    [
      "ends with 0 having written nothing",
      "exit0-nothing",
      /the installer ended without writing run\.sh: nothing was installed/,
    ],
    ["outlives its time limit", "hang", /the installer did not finish within 3\.0 s .* its container was killed/],
    [
      "writes a directory 5,000 levels deep",
      "deep",
      /the installer's output libraries\/deep(\/d){31} is more than 32 directories deep: nothing was installed/,
    ],
  ] as const)("an installer that %s changes nothing in the volume (exit 1)", async (_what, behaviour, message) => {
    await setUp({ startup: FORGE_EGG_STARTUP, behaviour });
    const before = visible();
    const result = await run("1.21.1", "--type", "neoforge", "--no-backup");
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(message);
    expect(visible()).toEqual(before);
    expect(readdirSync(volume).filter((n) => n.startsWith("."))).toEqual([]);
    expect(readFileSync(join(volume, "libraries", "io", "papermc", "paper.jar"), "utf8")).toBe("paper's library");
    expect(docker.containers.map((c) => c.state)).toEqual(["removed"]);
    expect(discord.messages).toEqual([]);
  });

  it("installs Forge before 1.17 as its egg has it: the Forge jar as server.jar beside Mojang's, on the egg's Java 8", async () => {
    await setUp({ image: "ghcr.io/pterodactyl/yolks:java_17" });
    const dry = await run("1.12.2", "--type", "forge", "--dry-run");
    expect(dry.stdout).toMatch(
      /run: +java -jar forge-1\.12\.2-14\.23\.5\.2859-installer\.jar --installServer \(Java 8 only\)/,
    );
    expect(dry.stdout).toMatch(
      /image: +ghcr\.io\/pterodactyl\/yolks:java_17 → ghcr\.io\/pterodactyl\/yolks:java_8 \(needs Java 8/,
    );
    const result = await run("1.12.2", "--type", "forge", "--no-backup");
    expect(result, result.stderr).toMatchObject({ code: 0 });
    expect(result.stdout).toMatch(
      /^Installed Forge 14\.23\.5\.2859 for Minecraft 1\.12\.2 in .* \(libraries, server\.jar, minecraft_server\.1\.12\.2\.jar\).*; Java image switched to java_8 \(was java_17\)/,
    );
    // The installer ran in the Java 8 image the server will run in.
    expect(docker.containers[0]?.image).toBe("ghcr.io/pterodactyl/yolks:java_8");
    expect(await zipEntry(join(volume, "server.jar"), "META-INF/MANIFEST.MF")).toMatch(
      /Main-Class: net\.minecraftforge\.fml\.relauncher\.ServerLaunchWrapper/,
    );
    expect(statSync(join(volume, "minecraft_server.1.12.2.jar"))).toMatchObject({ uid: 988, gid: 988 });
    expect(lstatSync(join(volume, "run.sh"), { throwIfNoEntry: false })).toBeUndefined();
    const back = await run("--rollback");
    expect(back, back.stderr).toMatchObject({ code: 0 });
    expect(readFileSync(join(volume, "server.jar"))).toEqual(OLD);
    expect(visible()).toEqual(["libraries", "server.jar", "world"]);
    expect(panel.imageChanges().at(-1)).toEqual({
      from: "ghcr.io/pterodactyl/yolks:java_8",
      to: "ghcr.io/pterodactyl/yolks:java_17",
    });
  });

  it("refuses Forge before 1.17 when the egg has no Java 8 image, before anything is fetched (exit 2)", async () => {
    await setUp({
      image: "ghcr.io/pterodactyl/yolks:java_21",
      eggImages: { "Java 21": "ghcr.io/pterodactyl/yolks:java_21", "Java 17": "ghcr.io/pterodactyl/yolks:java_17" },
    });
    const result = await run("1.12.2", "--type", "forge", "--no-backup");
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /Forge 14\.23\.5\.2859 for Minecraft 1\.12\.2 needs Java 8 exactly; the server's image java_21 has Java 21, and its egg offers no image with Java 8 \(it offers Java 21, Java 17\)/,
    );
    expect(docker.containers).toEqual([]);
  });

  it("installs Quilt as its egg has it: the launcher as server.jar, Mojang's jar as vanilla.jar named in its properties", async () => {
    await setUp({ startup: FORGE_EGG_STARTUP });
    const result = await run("1.21.1", "--type", "quilt", "--no-backup");
    expect(result, result.stderr).toMatchObject({ code: 0 });
    expect(result.stdout).toMatch(
      /^Installed Quilt 0\.26\.4 for Minecraft 1\.21\.1 in .* \(libraries, server\.jar, vanilla\.jar, quilt-server-launcher\.properties\)/,
    );
    expect(command(docker.containers[0])).toEqual([
      "java",
      "-jar",
      "quilt-installer-0.9.2.jar",
      "install",
      "server",
      "1.21.1",
      "0.26.4",
      "--download-server",
      "--install-dir=.",
    ]);
    // The launcher: a manifest naming Quilt's main class and its libraries, relative to itself.
    const launcher = await zipEntry(join(volume, "server.jar"), "META-INF/MANIFEST.MF");
    expect(launcher).toMatch(/Main-Class: org\.quiltmc\.loader\.impl\.launch\.server\.QuiltServerLauncher/);
    expect(launcher).toMatch(/Class-Path: libraries\/org\/quiltmc\/quilt-loader\/0\.26\.4\//);
    expect(await zipEntry(join(volume, "vanilla.jar"), "META-INF/MANIFEST.MF")).toMatch(
      /net\.minecraft\.bundler\.Main/,
    );
    expect(readFileSync(join(volume, "quilt-server-launcher.properties"), "utf8")).toMatch(/^serverJar=vanilla\.jar$/m);
    for (const rel of ["server.jar", "vanilla.jar", "quilt-server-launcher.properties", "libraries/org/quiltmc"]) {
      expect(statSync(join(volume, rel)), rel).toMatchObject({ uid: 988, gid: 988 });
    }
    expect(result.stderr).not.toMatch(/does not read @unix_args/);
    // A lightweight loader: the heavy loaders' memory bound is not said for it (the panel gives 4 GiB).
    expect(result.stderr).not.toMatch(/GiB of memory in the panel/);
    const back = await run("--rollback");
    expect(back, back.stderr).toMatchObject({ code: 0 });
    expect(readFileSync(join(volume, "server.jar"))).toEqual(OLD);
    expect(visible()).toEqual(["libraries", "server.jar", "world"]);
    expect(readFileSync(join(volume, "libraries", "io", "papermc", "paper.jar"), "utf8")).toBe("paper's library");
  });

  it("a Quilt installer that prints its failure and ends with 0 changes nothing (exit 1)", async () => {
    await setUp({ behaviour: "exit0-nothing" });
    const before = visible();
    const result = await run("1.21.1", "--type", "quilt", "--no-backup");
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /the installer ended without writing quilt-server-launch\.jar: nothing was installed/,
    );
    expect(visible()).toEqual(before);
    expect(readFileSync(join(volume, "server.jar"))).toEqual(OLD);
  });

  it("says when the server's startup line does not read @unix_args.txt, and when the panel gives it less memory than a modpack needs", async () => {
    await setUp();
    const result = await run("1.21.1", "--type", "neoforge", "--no-backup");
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/WARN the server's startup line does not read @unix_args\.txt/);
    expect(result.stderr).toMatch(
      /WARN the server has 4\.00 GiB of memory in the panel; NeoForge with mods needs 6\.00 GiB/,
    );
  });

  it("a server that runs is refused without --stop, before anything is downloaded", async () => {
    await setUp({ startup: FORGE_EGG_STARTUP });
    panel.setState("running");
    const result = await run("1.21.1", "--type", "neoforge", "--no-backup");
    expect(result.code).toBe(75);
    expect(result.stderr).toMatch(/the server is running; its loader cannot be installed under it/);
    expect(docker.containers).toEqual([]);
    expect(stand.requests.filter((r) => r.route === "jar")).toEqual([]);
  });
});

describe("a loader while the panel's cached answer says offline and the game runs (issue 44)", () => {
  /** Whether the volume holds the NeoForge install's args file as a request arrives. */
  const look = () => (lstatSync(join(volume, "unix_args.txt"), { throwIfNoEntry: false }) ? "neoforge" : "paper");

  it("--stop: the game is stopped, confirmed by Wings, before the loader is moved in; started again after", async () => {
    await setUp({ startup: FORGE_EGG_STARTUP });
    const scene = await startUnderCachedOffline(panel, look);
    try {
      const tool = run("1.21.1", "--type", "neoforge", "--stop", "--no-backup");
      await scene.releaseWhenStopped();
      const result = await tool;
      expect(result, result.stderr).toMatchObject({ code: 0 });
      expect(result.stdout).toMatch(/ The server was restarted with it\.\n$/);
      expect(stopOrder(panel, scene)).toEqual({
        beforeStop: ["command list 204", "command list 204"],
        atStop: "paper",
        atStopped: "paper",
        atStart: "neoforge",
        offlineFromStoppedToStart: true,
      });
      expect(panel.signals()).toEqual(["start", "stop", "start"]);
    } finally {
      scene.close();
    }
  });

  it("--rollback: the game is stopped, confirmed by Wings, before the loader is taken out; started again after", async () => {
    await setUp({ startup: FORGE_EGG_STARTUP });
    expect((await run("1.21.1", "--type", "neoforge", "--no-backup")).code).toBe(0);
    const scene = await startUnderCachedOffline(panel, look);
    try {
      const tool = run("--rollback");
      await scene.releaseWhenStopped();
      const back = await tool;
      expect(back, back.stderr).toMatchObject({ code: 0 });
      expect(back.stdout).toMatch(/ The server was restarted\.\n$/);
      expect(stopOrder(panel, scene)).toEqual({
        beforeStop: ["command list 204"],
        atStop: "neoforge",
        atStopped: "neoforge",
        atStart: "paper",
        offlineFromStoppedToStart: true,
      });
      expect(panel.signals()).toEqual(["start", "stop", "start"]);
    } finally {
      scene.close();
    }
  });
});
