import { execFileSync } from "node:child_process";
import { lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  buildMrpack,
  type DiscordStandIn,
  type DockerStandIn,
  type DownloadStandIn,
  type ModrinthStandIn,
  type MrpackOptions,
  mrpackFile,
  mrpackIndex,
  type PanelStandIn,
  runTool,
  startDiscordStandIn,
  startDockerStandIn,
  startDownloadStandIn,
  startModrinthStandIn,
  startPanelStandIn,
  type TempDir,
  type ToolRun,
  tempDir,
  testInstallerJar,
  toolEnv,
} from "@mcops/testkit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { FORGE_EGG_STARTUP, levelDat, modProjects, OLD, writeConfig } from "./config.ts";

/**
 * `jar-download --mrpack FILE|URL` and `--modrinth PROJECT` with the built executable: the pack read and checked, its
 * files downloaded from the Modrinth stand-in's CDN and checked against their sha512 and sha1, its overrides extracted,
 * and its loader installed with it (Fabric's launcher as server.jar; NeoForge by its installer in the Docker
 * stand-in), the whole moved into the volume at once; every hostile pack refused with nothing installed.
 */
const BIN = fileURLToPath(new URL("../dist/jar-download.mjs", import.meta.url));
const FABRIC_EGG_STARTUP = "java -Xms128M -XX:MaxRAMPercentage=95.0 -jar {{SERVER_JARFILE}}";

let modrinth: ModrinthStandIn;
let discord: DiscordStandIn;
let stand: DownloadStandIn;
let panel: PanelStandIn;
let docker: DockerStandIn;
let root: TempDir;
let volume: string;
let env: NodeJS.ProcessEnv;

const sodium = () => modrinth.file("AANobbMI", "V1000001", "sodium.jar");
const fabricApi = () => modrinth.file("P7dR8mSH", "V2000002", "fabric-api.jar");
const create = () => modrinth.file("NEOMOD01", "V3000003", "create.jar");

/** A Fabric pack for 1.21.4: two mods (one for clients only), a config and the server's own config over it. */
function fabricPack(fields: Record<string, unknown> = {}, more: Partial<MrpackOptions> = {}): Buffer {
  return buildMrpack({
    index: mrpackIndex({
      name: "Cozy Pack",
      versionId: "2.0.0",
      files: [
        mrpackFile(fabricApi(), "mods/fabric-api.jar", { client: "required", server: "required" }),
        mrpackFile(sodium(), "mods/sodium.jar", { client: "required", server: "unsupported" }),
      ],
      ...fields,
    }),
    overrides: { "config/cozy.toml": "view = 8\n", "config/client-only.toml": "x = 1\n" },
    serverOverrides: { "config/cozy.toml": "view = 12\n" },
    ...more,
  });
}

/** A Quilt pack for 1.21.1 with one mod, and `overrides` when given. */
function quiltPack(overrides?: Record<string, string>): Buffer {
  return buildMrpack({
    index: mrpackIndex({
      name: "Patchwork",
      versionId: "3.0.0",
      files: [mrpackFile(create(), "mods/create.jar")],
      dependencies: { minecraft: "1.21.1", "quilt-loader": "0.26.4" },
    }),
    ...(overrides ? { overrides } : {}),
  });
}

/** A NeoForge pack for 1.21.1 with one mod. */
function neoforgePack(): Buffer {
  return buildMrpack({
    index: mrpackIndex({
      name: "Gears",
      versionId: "1.0.0",
      files: [mrpackFile(create(), "mods/create.jar")],
      dependencies: { minecraft: "1.21.1", neoforge: "21.1.77" },
    }),
    overrides: { "config/create-common.toml": "speed = 2\n" },
  });
}

function run(...args: string[]): Promise<ToolRun> {
  return runTool(BIN, args, { env });
}

beforeAll(async () => {
  discord = await startDiscordStandIn();
  modrinth = await startModrinthStandIn({ projects: modProjects() });
});
afterAll(async () => {
  await discord.close();
  await modrinth.close();
});

/** The stand-ins' Modrinth unless `api` is given (one with a rate limit of its own). */
async function setUp(options: { startup?: string; image?: string; api?: ModrinthStandIn } = {}): Promise<void> {
  const api = options.api ?? modrinth;
  discord.reset();
  modrinth.requests.length = 0;
  stand = await startDownloadStandIn({
    vanilla: [
      { id: "1.21.4", type: "release" },
      { id: "1.21.1", type: "release" },
    ],
    // Quilt's installer is one for every loader (its version is the installer's): the test one installs 0.26.4.
    installerJar: (loader, version) =>
      testInstallerJar({ loader, version: loader === "quilt" ? "0.26.4" : version, game: "1.21.1" }),
  });
  panel = await startPanelStandIn({
    servers: [
      {
        state: "offline",
        dockerImage: options.image ?? "ghcr.io/pterodactyl/yolks:java_21",
        egg: { startup: options.startup ?? FABRIC_EGG_STARTUP },
      },
    ],
    timings: { startMs: 100, stopMs: 100 },
  });
  root = tempDir("mcops-modpack-e2e-");
  docker = await startDockerStandIn({ dir: root.path });
  volume = join(root.path, "volumes", panel.server.uuid);
  mkdirSync(join(volume, "world"), { recursive: true });
  mkdirSync(join(volume, "mods"), { recursive: true });
  writeFileSync(join(volume, "mods", "old-mod.jar"), "the mod that was there");
  writeFileSync(join(volume, "server.jar"), OLD);
  env = toolEnv(root.path, { MCOPS_RETRY_MS: "20" });
  writeConfig(env, {
    panel,
    volume,
    stand,
    discord,
    extra: [`DOCKER_SOCKET=${docker.socket}`, `MODRINTH_API_BASE=${api.api}`, `MODRINTH_CDN_BASE=${api.cdn}`],
  });
}

afterEach(async () => {
  await stand.close();
  await panel.close();
  await docker.close();
  root.cleanup();
});

/** Writes a pack file outside the volume (the operator's) and returns its path. */
function packFile(bytes: Buffer, name = "pack.mrpack"): string {
  const path = join(root.path, name);
  writeFileSync(path, bytes);
  return path;
}

/** The volume's tree (names, and files' contents), hidden entries left out: to see that nothing changed. */
function tree(dir = volume): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir)) {
    if (name.startsWith(".")) continue;
    const path = join(dir, name);
    const stat = lstatSync(path);
    if (stat.isDirectory()) {
      for (const [rel, text] of Object.entries(tree(path))) out[`${name}/${rel}`] = text;
      out[`${name}/`] = "";
    } else out[name] = readFileSync(path, "latin1");
  }
  return out;
}

describe("jar-download --mrpack / --modrinth (built executable)", () => {
  it("installs a Fabric pack from a file: its server files, its overrides and server-overrides, Fabric as server.jar", async () => {
    await setUp();
    const result = await run("--mrpack", packFile(fabricPack()), "--no-backup");
    expect(result, result.stderr).toMatchObject({ code: 0 });
    expect(result.stdout).toMatch(
      /^Installed the modpack Cozy Pack 2\.0\.0 \(Minecraft 1\.21\.4, Fabric 0\.16\.10\) in .* \(server\.jar, config, mods\); what it replaced is kept aside/,
    );
    // The client-only mod is left out; server-overrides/ wins over overrides/.
    expect(readdirSync(join(volume, "mods"))).toEqual(["fabric-api.jar"]);
    expect(readFileSync(join(volume, "mods", "fabric-api.jar"))).toEqual(fabricApi().bytes);
    expect(readFileSync(join(volume, "config", "cozy.toml"), "utf8")).toBe("view = 12\n");
    expect(readFileSync(join(volume, "server.jar"), "latin1")).toMatch(/^PK/);
    expect(readFileSync(join(volume, "server.jar"))).not.toEqual(OLD);
    for (const rel of ["mods", "mods/fabric-api.jar", "config", "config/cozy.toml", "server.jar"]) {
      expect(statSync(join(volume, rel)), rel).toMatchObject({ uid: 988, gid: 988 });
    }
    expect(modrinth.requests.map((r) => r.path)).toEqual(["/cdn/data/P7dR8mSH/versions/V2000002/fabric-api.jar"]);
    expect(docker.containers).toEqual([]);
    expect(discord.messages.map((m) => m.body.embeds[0].title)).toEqual(["Modpack installed"]);
    expect(result.stderr).toMatch(
      /WARN the server has 4\.00 GiB of memory in the panel; the modpack Cozy Pack needs 6\.00 GiB/,
    );
    expect(readdirSync(volume).filter((n) => n.startsWith("."))).toEqual([
      expect.stringMatching(/^\.mcops-previous-install-/),
    ]);
  });

  it("installs a pack whose env names one side alone (labrinth accepts it); a file for clients only is still left out", async () => {
    await setUp();
    const pack = fabricPack({
      files: [
        mrpackFile(fabricApi(), "mods/fabric-api.jar", { server: "required" }),
        mrpackFile(create(), "mods/create.jar", { client: "optional" }),
        mrpackFile(sodium(), "mods/sodium.jar", { client: "required", server: "unsupported" }),
      ],
    });
    const result = await run("--mrpack", packFile(pack), "--no-backup");
    expect(result, result.stderr).toMatchObject({ code: 0 });
    expect(result.stdout).toMatch(/^Installed the modpack Cozy Pack 2\.0\.0 /);
    expect(readdirSync(join(volume, "mods")).sort()).toEqual(["create.jar", "fabric-api.jar"]);
    expect(readFileSync(join(volume, "mods", "fabric-api.jar"))).toEqual(fabricApi().bytes);
    expect(modrinth.requests.map((r) => r.path)).not.toContain("/cdn/data/AANobbMI/versions/V1000001/sodium.jar");
  });

  it("--rollback takes the pack out and puts back the mods/ and server.jar it replaced", async () => {
    await setUp();
    const before = tree();
    expect((await run("--mrpack", packFile(fabricPack()), "--no-backup")).code).toBe(0);
    const back = await run("--rollback");
    expect(back, back.stderr).toMatchObject({ code: 0 });
    expect(back.stdout).toMatch(
      /^the modpack Cozy Pack 2\.0\.0 .* was taken out and what was there before it put back/,
    );
    expect(tree()).toEqual(before);
    expect(readdirSync(volume).filter((n) => n.startsWith("."))).toEqual([]);
  });

  it("--rollback refuses when server.jar changed since a Fabric pack went in, and changes nothing", async () => {
    await setUp();
    expect((await run("--mrpack", packFile(fabricPack()), "--no-backup")).code).toBe(0);
    writeFileSync(join(volume, "server.jar"), "PK\u0003\u0004 the operator's own jar");
    const after = tree();
    const back = await run("--rollback");
    expect(back.code).toBe(1);
    expect(back.stderr).toMatch(
      /server\.jar is not the one the modpack Cozy Pack 2\.0\.0 .* put there: it changed since/,
    );
    expect(tree()).toEqual(after);
  });

  it("installs a NeoForge pack from Modrinth's API: its newest release, the installer run, mods and config in place", async () => {
    await setUp({ startup: FORGE_EGG_STARTUP });
    const older = buildMrpack({
      index: mrpackIndex({
        name: "Gears",
        versionId: "0.9.0",
        dependencies: { minecraft: "1.21.1", neoforge: "21.1.72" },
      }),
    });
    modrinth.projects.push({
      id: "PACK0001",
      slug: "gears",
      versions: [
        {
          id: "PV000003",
          versionNumber: "1.1.0-beta",
          versionType: "beta",
          gameVersions: ["1.21.1"],
          loaders: ["neoforge"],
          files: [{ filename: "Gears 1.1.0-beta.mrpack", bytes: older }],
        },
        {
          id: "PV000002",
          versionNumber: "1.0.0",
          gameVersions: ["1.21.1"],
          loaders: ["neoforge"],
          files: [{ filename: "Gears 1.0.0.mrpack", bytes: neoforgePack() }],
        },
        {
          id: "PV000001",
          versionNumber: "0.9.0",
          gameVersions: ["1.21.1"],
          loaders: ["neoforge"],
          files: [{ filename: "Gears 0.9.0.mrpack", bytes: older }],
        },
      ],
    });
    const result = await run("1.21.1", "--modrinth", "gears", "--no-backup");
    expect(result, result.stderr).toMatchObject({ code: 0 });
    expect(result.stdout).toMatch(
      /^Installed the modpack Gears 1\.0\.0 \(Minecraft 1\.21\.1, NeoForge 21\.1\.77\) in .* \(libraries, run\.sh, run\.bat, unix_args\.txt, user_jvm_args\.txt, config, mods\)/,
    );
    expect(docker.containers.map((c) => c.cmd)).toEqual([
      ["java", "-jar", "neoforge-21.1.77-installer.jar", "--installServer"],
    ]);
    expect(readFileSync(join(volume, "mods", "create.jar"))).toEqual(create().bytes);
    expect(readFileSync(join(volume, "config", "create-common.toml"), "utf8")).toBe("speed = 2\n");
    expect(statSync(join(volume, "unix_args.txt"))).toMatchObject({ uid: 988 });
    expect(modrinth.requests.map((r) => r.path)).toEqual([
      `/api/v2/project/gears/version?game_versions=${encodeURIComponent('["1.21.1"]')}`,
      `/cdn/data/PACK0001/versions/PV000002/${encodeURIComponent("Gears 1.0.0.mrpack")}`,
      "/cdn/data/NEOMOD01/versions/V3000003/create.jar",
    ]);
    modrinth.projects.pop();
  });

  /** A Modrinth whose API limits as labrinth does, `limit` a `windowMs`, serving the Fabric pack as project "cozy". */
  async function limitedModrinth(rateLimit: { limit: number; windowMs: number }): Promise<ModrinthStandIn> {
    const cozy = {
      id: "PACK0003",
      slug: "cozy",
      versions: [
        {
          id: "PV000020",
          versionNumber: "2.0.0",
          gameVersions: ["1.21.4"],
          loaders: ["fabric"],
          files: [{ filename: "cozy.mrpack", bytes: fabricPack() }],
        },
      ],
    };
    return startModrinthStandIn({ projects: [...modProjects(), cozy], rateLimit });
  }

  it("waits out a 429 of Modrinth's API for its x-ratelimit-reset (labrinth sends no Retry-After), then installs", async () => {
    // One request every 500 ms, a burst of one: after a burst, labrinth's 429 says reset 1 (seconds).
    const limited = await limitedModrinth({ limit: 1, windowMs: 500 });
    try {
      await setUp({ api: limited });
      limited.exhaust();
      const result = await run("--modrinth", "cozy", "--no-backup");
      expect(result, result.stderr).toMatchObject({ code: 0 });
      expect(result.stdout).toMatch(/^Installed the modpack Cozy Pack 2\.0\.0 /);
      expect(result.stderr).toMatch(/ WARN 127\.0\.0\.1:\d+ rate limits this machine \(429\): asking again in 1 s\n/);
      const asked = limited.requests.filter((r) => r.path.startsWith("/api/"));
      expect(asked.map((r) => r.status)).toEqual([429, 200]);
      expect(readdirSync(join(volume, "mods"))).toEqual(["fabric-api.jar"]);
    } finally {
      await limited.close();
    }
  });

  it("a 429 whose x-ratelimit-reset is beyond the cap is one line naming the wait, at once; nothing installed", async () => {
    // 300 an hour: after a burst, labrinth's 429 says reset 3612 (seconds), more than the 2 min a download waits.
    const limited = await limitedModrinth({ limit: 300, windowMs: 3_600_000 });
    try {
      await setUp({ api: limited });
      const before = tree();
      limited.exhaust();
      const result = await run("--modrinth", "cozy", "--no-backup");
      expect(result.code).toBe(1);
      const lines = result.stderr
        .trim()
        .split("\n")
        .filter((l) => !/ (INFO|WARN) /.test(l));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /Modrinth's API failed: 127\.0\.0\.1:\d+ answered 429 and asks for a wait of 1 h, longer than the 2 min mcops waits/,
      );
      expect(result.stderr).toMatch(/run it again in 1 h/);
      expect(limited.requests.map((r) => r.status)).toEqual([429]);
      expect(tree()).toEqual(before);
      expect(readdirSync(volume).filter((n) => n.startsWith("."))).toEqual([]);
      expect(discord.messages).toEqual([]);
    } finally {
      await limited.close();
    }
  });

  it("--dry-run shows the pack, its loader and what it replaces, and changes nothing", async () => {
    await setUp();
    const before = tree();
    const result = await run("--mrpack", packFile(fabricPack()), "--dry-run");
    expect(result, result.stderr).toMatchObject({ code: 0 });
    expect(result.stdout).toMatch(/^Would install the modpack Cozy Pack 2\.0\.0 \(nothing done, --dry-run\):/);
    expect(result.stdout).toMatch(/game: +Minecraft 1\.21\.4, Fabric 0\.16\.10/);
    expect(result.stdout).toMatch(
      /files: +1 file downloaded \(.*\), each checked against its sha512 and sha1; 1 for clients only left out/,
    );
    expect(result.stdout).toMatch(/replaces: config\/, mods\/ \(each whole/);
    expect(tree()).toEqual(before);
    expect(modrinth.requests).toEqual([]);
  });

  it.each([
    [
      "a file whose sha512 does not match",
      () => {
        const file = mrpackFile(fabricApi(), "mods/fabric-api.jar") as { hashes: { sha512: string } };
        file.hashes.sha512 = "0".repeat(128);
        return fabricPack({ files: [file] });
      },
      1,
      /fabric-api\.jar does not match its sha512/,
    ],
    [
      "a ../ path",
      () => fabricPack({ files: [mrpackFile(fabricApi(), "mods/../../escape.jar")] }),
      2,
      /has a \.\. component/,
    ],
    ["an absolute path", () => fabricPack({ files: [mrpackFile(fabricApi(), "/etc/cron.d/evil")] }), 2, /is absolute/],
    [
      "a link entry in its overrides",
      () =>
        fabricPack(
          {},
          {
            entries: [{ name: Buffer.from("overrides/config/link"), data: Buffer.from("/etc/shadow"), mode: 0o120777 }],
          },
        ),
      2,
      /is a symbolic link/,
    ],
    [
      "a server.jar of its own",
      () => fabricPack({}, { overrides: { "server.jar": "PK\u0003\u0004 evil" } }),
      2,
      /is the server's own server\.jar/,
    ],
    [
      "a file outside the pack folders",
      () => fabricPack({}, { overrides: { "world/level.dat": "x" } }),
      2,
      /is the server's own world/,
    ],
  ] as const)("a pack with %s: refused, nothing installed", async (_what, make, code, message) => {
    await setUp();
    const before = tree();
    const result = await run("--mrpack", packFile(make()), "--no-backup");
    expect(result.code).toBe(code);
    expect(result.stderr).toMatch(message);
    expect(
      result.stderr
        .trim()
        .split("\n")
        .filter((l) => !/ (INFO|WARN) /.test(l)),
    ).toHaveLength(1);
    expect(tree()).toEqual(before);
    expect(readdirSync(volume).filter((n) => n.startsWith("."))).toEqual([]);
    expect(discord.messages).toEqual([]);
  });

  it("a pack that would replace the world's folder (level-name=config) is refused, and a pack's name is shown on one line", async () => {
    await setUp();
    writeFileSync(join(volume, "server.properties"), "level-name=config\n");
    mkdirSync(join(volume, "config"));
    writeFileSync(join(volume, "config", "level.dat"), "the world");
    const before = tree();
    const result = await run(
      "--mrpack",
      packFile(fabricPack({ name: "Evil\n2026-01-01T00:00:00Z INFO forged\u202e" })),
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /the modpack replaces config\/, which is a world's folder here \(level-name=config\)/,
    );
    expect(tree()).toEqual(before);
    writeFileSync(join(volume, "server.properties"), "level-name=world\n");
    const dry = await run(
      "--mrpack",
      packFile(fabricPack({ name: "Evil\n2026-01-01T00:00:00Z INFO forged\u202e" })),
      "--dry-run",
    );
    expect(dry.stdout).toContain("Would install the modpack Evil | 2026-01-01T00:00:00Z INFO forged\\u202e 2.0.0");
  });

  it("installs a Quilt pack with Quilt's installer: its launcher as server.jar, Mojang's as vanilla.jar, the mods", async () => {
    await setUp();
    const quilt = quiltPack();
    const result = await run("--mrpack", packFile(quilt), "--no-backup");
    expect(result, result.stderr).toMatchObject({ code: 0 });
    expect(result.stdout).toMatch(
      /^Installed the modpack Patchwork 3\.0\.0 \(Minecraft 1\.21\.1, Quilt 0\.26\.4\) in .* \(libraries, server\.jar, vanilla\.jar, quilt-server-launcher\.properties, mods\)/,
    );
    expect(docker.containers[0]?.cmd.slice(3)).toEqual([
      "install",
      "server",
      "1.21.1",
      "0.26.4",
      "--download-server",
      "--install-dir=.",
    ]);
    expect(readdirSync(join(volume, "mods"))).toEqual(["create.jar"]);
    expect(readFileSync(join(volume, "quilt-server-launcher.properties"), "utf8")).toMatch(/^serverJar=vanilla\.jar$/m);
  });

  it("a Quilt pack shipping the launcher's quilt-server-launcher.properties is refused before anything is downloaded or run (exit 2)", async () => {
    await setUp();
    const quilt = quiltPack({ "quilt-server-launcher.properties": "serverJar=mods/create.jar\n" });
    const before = tree();
    const result = await run("--mrpack", packFile(quilt), "--no-backup");
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/is the server's own quilt-server-launcher\.properties/);
    expect(modrinth.requests).toEqual([]);
    expect(docker.containers).toEqual([]);
    expect(tree()).toEqual(before);
    // Fabric's launcher reads its own file naming the game jar: the server's too.
    const fabric = await run(
      "--mrpack",
      packFile(fabricPack({}, { overrides: { "Fabric-Server-Launcher.properties": "serverJar=mods/x.jar\n" } })),
      "--no-backup",
    );
    expect(fabric.code).toBe(2);
    expect(fabric.stderr).toMatch(/is the server's own Fabric-Server-Launcher\.properties/);
    expect(tree()).toEqual(before);
  });

  it("a pack's file at the top where the server has a folder (a mod's backups/), or a logs file, is refused (exit 2)", async () => {
    await setUp();
    mkdirSync(join(volume, "backups"));
    writeFileSync(join(volume, "backups", "world-2026-01-01.zip"), "a backup an in-game mod made");
    const before = tree();
    const result = await run("--mrpack", packFile(fabricPack({}, { overrides: { backups: "x" } })), "--no-backup");
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/the modpack's file backups would replace the folder backups here/);
    expect(modrinth.requests).toEqual([]);
    expect(tree()).toEqual(before);
    const logs = await run("--mrpack", packFile(fabricPack({}, { overrides: { logs: "x" } })), "--no-backup");
    expect(logs.code).toBe(2);
    expect(logs.stderr).toMatch(/is the server's own logs/);
    expect(tree()).toEqual(before);
    expect(readdirSync(volume).filter((n) => n.startsWith("."))).toEqual([]);
  });

  it("a pack whose world a newer game saved is refused before anything is downloaded (exit 2)", async () => {
    await setUp();
    // 1.21.5 (data version 4325) saved the world: a 1.21.4 pack cannot open it.
    writeFileSync(join(volume, "world", "level.dat"), levelDat(4325, "1.21.5"));
    const before = tree();
    const older = await run("--mrpack", packFile(fabricPack()), "--no-backup");
    expect(older.code).toBe(2);
    expect(older.stderr).toMatch(
      /the world was last saved by 1\.21\.5 .*; the modpack Cozy Pack 2\.0\.0 .* cannot open it safely/,
    );
    expect(modrinth.requests).toEqual([]);
    expect(tree()).toEqual(before);
  });

  it("--mrpack takes an address; a link as the pack file, or a FIFO, is refused; --type does not go with a pack", async () => {
    await setUp();
    modrinth.projects.push({
      id: "PACK0002",
      slug: "cozy",
      versions: [
        {
          id: "PV000010",
          versionNumber: "2.0.0",
          gameVersions: ["1.21.4"],
          loaders: ["fabric"],
          files: [{ filename: "cozy.mrpack", bytes: fabricPack() }],
        },
      ],
    });
    try {
      const url = `${modrinth.cdn}/data/PACK0002/versions/PV000010/cozy.mrpack`;
      const dry = await run("--mrpack", url, "--dry-run");
      expect(dry, dry.stderr).toMatchObject({ code: 0 });
      expect(dry.stdout).toMatch(/pack: +Cozy Pack 2\.0\.0, from http:\/\/127\.0\.0\.1:\d+\/cdn\/data\/PACK0002/);
    } finally {
      modrinth.projects.pop();
    }
    const real = packFile(fabricPack());
    symlinkSync(real, join(root.path, "link.mrpack"));
    const link = await run("--mrpack", join(root.path, "link.mrpack"), "--dry-run");
    expect(link.code).toBe(2);
    expect(link.stderr).toMatch(/the modpack file is a link/);
    execFileSync("mkfifo", [join(root.path, "fifo.mrpack")]);
    const fifo = await run("--mrpack", join(root.path, "fifo.mrpack"), "--dry-run");
    expect(fifo.code).toBe(2);
    expect(fifo.stderr).toMatch(/the modpack is not a regular file/);
    const typed = await run("--mrpack", real, "--type", "fabric");
    expect(typed.code).toBe(2);
    expect(typed.stderr).toMatch(/a modpack names its own game version and loader: --type does not go with it/);
    // ".." would be another API route once the address is normalized: not a project.
    modrinth.requests.length = 0;
    const dots = await run("--modrinth", "..", "--dry-run");
    expect(dots.code).toBe(2);
    expect(dots.stderr).toMatch(/"\.\." is not a Modrinth project/);
    expect(modrinth.requests).toEqual([]);
  });
});
