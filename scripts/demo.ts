import { execFileSync, spawn } from "node:child_process";
import { randomBytes, randomInt, randomUUID } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  buildMrpack,
  buildWorld,
  changeChunkAsGame,
  damage,
  describeMessage,
  mrpackFile,
  mrpackIndex,
  type ReceivedMessage,
  regionChunks,
  startCloudflareStandIn,
  startDigitalOceanStandIn,
  startDiscordAppStandIn,
  startDiscordStandIn,
  startDockerStandIn,
  startDownloadStandIn,
  startGameServer,
  startModrinthStandIn,
  startPanelStandIn,
  testInstallerJar,
  toolEnv,
  waitUntil,
} from "@mcops/testkit";

/**
 * `npm run demo`: the toolkit rehearsed against the local stand-ins. Part 1 is a day of the server in about a minute:
 * the morning backup, the server starting, players joining (real protocol clients and the lines the game logs), a
 * death, the countdown restart, everyone leaving, the idle backup, restores after griefing (the whole world, one
 * area, one player), and a crash loop caught. Part 2 shows the rest:
 * the kernel's out-of-memory kill seen on Docker's events, the webhook's edge cases, a jar update with its safety snapshot, downgrade refusal and rollback, a loader by its installer and a Modrinth modpack, hibernate and
 * revive, the dashboard. Everything runs on 127.0.0.1 in a temporary directory;
 * nothing leaves the machine.
 */
import { startWorker, workerVars } from "../packages/discord-control/test/worker.ts";

/** packages/<tool>/dist/<tool>.mjs; hibernate is built by the revive package. */
const bin = (tool: string) =>
  fileURLToPath(new URL(`../packages/${tool === "hibernate" ? "revive" : tool}/dist/${tool}.mjs`, import.meta.url));
const root = mkdtempSync(join(tmpdir(), "mcops-demo-"));
const configDir = join(root, "etc", "mc-backup");
mkdirSync(configDir, { recursive: true });
const env = toolEnv(root, {
  MCOPS_CONFIG_DIR: configDir,
  // The "cloud drive": an rclone remote named gdrive that is a local folder here.
  RCLONE_CONFIG_GDRIVE_TYPE: "local",
});

// Two webhooks in the channel: the second is the one the operator makes after the first is deleted (Part 2).
const hook = () => ({ id: String(randomInt(1e8, 1e9)).repeat(2), token: randomBytes(51).toString("base64url") });
const discord = await startDiscordStandIn({ webhooks: [hook(), hook()] });
// Docker's event stream, on a socket in the demo's directory (what is /var/run/docker.sock on the VM).
const docker = await startDockerStandIn({ dir: root });
const uuid = randomUUID();
const worldDir = join(root, "var", "lib", "pterodactyl", "volumes", uuid);
const panel = await startPanelStandIn({
  servers: [{ uuid, name: "Survival", state: "running" }],
  timings: { startMs: 300, stopMs: 300 },
  logFile: join(worldDir, "logs", "latest.log"),
});
let shown = 0;

function heading(text: string): void {
  console.log(`\n\x1b[1m== ${text}\x1b[0m`);
}

/**
 * Runs a built executable as cron would, and shows what it printed and what reached the channel. Asynchronous: the
 * stand-ins live in this process and must keep answering while the tool runs.
 */
async function run(tool: string, args: string[]): Promise<number> {
  const shell = [tool, ...args.map((a) => (/^[\w@.:/#-]+$/.test(a) ? a : `'${a}'`))].join(" ");
  console.log(`\x1b[2m$ ${shell}\x1b[0m`);
  const child = spawn(bin(tool), args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const code = await new Promise<number>((resolve) => child.on("close", (c) => resolve(c ?? 1)));
  if (output) process.stdout.write(indent(output));
  console.log(`\x1b[2m  exit ${code}\x1b[0m`);
  for (const message of discord.messages.slice(shown)) showMessage(message);
  shown = discord.messages.length;
  return code;
}

function showMessage(message: ReceivedMessage): void {
  const pings = message.pings.everyone || message.pings.users.length || message.pings.roles.length;
  console.log(`  \x1b[36m#minecraft receives:\x1b[0m${pings ? " (pings someone!)" : ""}`);
  console.log(indent(describeMessage(message.body), "    "));
}

function indent(text: string, pad = "  "): string {
  return `${text
    .trimEnd()
    .split("\n")
    .map((l) => pad + l)
    .join("\n")}\n`;
}

/** A line the game writes to latest.log, stamped with the current time. */
function gameLine(message: string, level = "INFO"): string {
  return `[${new Date().toTimeString().slice(0, 8)}] [Server thread/${level}]: ${message}\n`;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Shows what reached the channel since the last look (the log-tailer posts on its own, in the background). */
async function channel(expectAtLeast: number): Promise<void> {
  await discord.waitForMessages(shown + expectAtLeast, 10_000).catch(() => undefined);
  for (const message of discord.messages.slice(shown)) showMessage(message);
  shown = discord.messages.length;
}

function writeSecret(name: string, text: string, mode = 0o600): void {
  const file = join(configDir, name);
  writeFileSync(file, text);
  chmodSync(file, mode);
}

const game = await startGameServer();
const latest = join(worldDir, "logs", "latest.log");
let tailer: ReturnType<typeof spawn> | undefined;
try {
  console.log("\x1b[1mPart 1: a day on the server, in about a minute\x1b[0m");
  heading("05:55 — the VM is set up: backup.env and webhook.env (mode 600), a world, a restic repository in the drive");
  // A real world: level.dat and players' files as gzip NBT, region files in the game's format, Bukkit's layout.
  buildWorld(worldDir, { regions: 4, chunksPerRegion: 64, sections: 24 });
  writeFileSync(join(worldDir, "server.properties"), "level-name=world\n");
  const password = join(root, "root", ".restic-password");
  mkdirSync(join(root, "root"));
  writeFileSync(password, "demo password, keep it safe\n", { mode: 0o600 });
  const backupEnv = [
    `CONTROL_URL=${panel.url}`,
    `CONTROL_KEY=${panel.apiKey}`,
    `SERVER_ID=${panel.server.identifier}`,
    `WORLD_DIR=${worldDir}`,
    `RESTIC_REPOSITORY=rclone:gdrive:${join(root, "drive", "mc-backups")}`,
    `RESTIC_PASSWORD_FILE=${password}`,
    `GAME_ADDRESS=${game.address}`,
    "IDLE_AFTER=2s",
    "TPS_EVERY=1s",
    `IDLE_BACKUP_COMMAND=${bin("backup")}`,
    "CRASH_LOOP_STOP=yes",
    `DOCKER_SOCKET=${docker.socket}`,
  ];
  writeSecret("backup.env", `${backupEnv.join("\n")}\n`);
  writeSecret("webhook.env", `WEBHOOK_URL=${discord.webhookUrl()}\nPLAY_HOST=play.example.com\n`);
  // Which restic and rclone this rehearsal runs: the first on PATH, as on the VM (Debian's packages).
  const said = (tool: string) => execFileSync(tool, ["version"], { encoding: "utf8" }).split("\n")[0];
  console.log(`  \x1b[2mwith ${said("restic")}; ${said("rclone")}\x1b[0m`);
  await run("backup", ["init"]);

  heading("06:00 — cron runs the daily backup (save-off, save-all flush, restic through rclone, save-on)");
  await run("backup", []);
  console.log(`  \x1b[2mthe panel console saw: ${panel.commands().join(" → ")}\x1b[0m`);

  heading("07:30 — the log-tailer follows latest.log; the server is (re)started and says Done");
  tailer = spawn(bin("log-tailer"), [], { env, stdio: ["ignore", "ignore", "pipe"] });
  docker.emit(uuid, "start"); // Wings' new container for the server
  await pause(600);
  writeFileSync(latest, gameLine('Done (3.512s)! For help, type "help"'), { flag: "a" });
  await channel(1);

  heading("08:10 — Steve and Alex join (real protocol clients; the game logs them)");
  const steve = await game.join("Steve");
  writeFileSync(latest, gameLine("Steve[/203.0.113.7:51234] logged in with entity id 42 at (0.5, 64.0, 0.5)"), {
    flag: "a",
  });
  writeFileSync(latest, gameLine("Steve joined the game"), { flag: "a" });
  const alex = await game.join("Alex");
  writeFileSync(latest, gameLine("Alex joined the game"), { flag: "a" });
  await channel(2);
  await run("idle-monitor", ["--once"]);

  heading("09:02 — chat that tries to ping everyone, a wolf's death, and Steve's death (only his posts)");
  for (const text of [
    gameLine("<Steve> hi! Alex joined the game lol @everyone"),
    gameLine(
      "Named entity EntityWolf['Buddy'/12, l='ServerLevel[world]', x=1.5, y=64.0, z=2.5] died: Buddy was slain by Zombie",
    ),
    gameLine("Steve was slain by Zombie using [**@everyone**]"),
  ]) {
    writeFileSync(latest, text, { flag: "a" });
    await pause(100);
  }
  await channel(1);

  heading("10:55 — the scheduled restart: a countdown in game (10 s here instead of 5 min), then the restart");
  const consoleBefore = panel.commands().length;
  await run("restart-with-warning", ["--countdown", "10s", "--reason", "daily restart"]);
  console.log(
    `  \x1b[2mthe panel console got ${panel.commands().length - consoleBefore} tellraw lines, then the restart signal; the server is ${panel.state()}\x1b[0m`,
  );
  await channel(2);

  heading("11:30 — Alex builds a lag machine: three tick-rate samples under 15 TPS (1 s apart here), one warning");
  panel.setTickMs(89.3); // 11.2 ticks a second
  for (let sample = 0; sample < 3; sample++) {
    await pause(1100);
    await run("idle-monitor", ["--once"]);
  }
  console.log(
    `  \x1b[2mthe console was asked: ${[...new Set(panel.commands().filter((c) => /^(tps|tick )/.test(c)))].join(", ")} (this vanilla server has no tps)\x1b[0m`,
  );
  panel.setTickMs(12.3);
  await pause(1100);
  await run("idle-monitor", ["--once"]);

  heading("12:40 — everyone leaves");
  await steve.leave();
  writeFileSync(latest, gameLine("Steve left the game"), { flag: "a" });
  await alex.leave();
  writeFileSync(latest, gameLine("Alex left the game"), { flag: "a" });
  await channel(2);

  heading("13:10 — nobody has played for IDLE_AFTER (2 s here instead of 30 min): the idle monitor backs up, once");
  await run("idle-monitor", ["--once"]);
  await pause(2100);
  await run("idle-monitor", ["--once"]);
  await run("idle-monitor", ["--once"]);
  const decisions = readFileSync(join(root, "log", "mc-idle-monitor.log"), "utf8")
    .trim()
    .split("\n");
  console.log("  \x1b[2m/var/log/mc-idle-monitor.log:\x1b[0m");
  process.stdout.write(indent(decisions.join("\n"), "    "));

  heading("18:00 — a griefer wrecks the world; the snapshot brings it back, the wrecked world is kept aside");
  const before = readFileSync(join(worldDir, "world", "level.dat")).length;
  writeFileSync(join(worldDir, "world", "level.dat"), "a griefer was here");
  await run("backup", ["snapshots"]);
  await run("backup", ["restore", "latest"]);
  const after = readFileSync(join(worldDir, "world", "level.dat")).length;
  console.log(
    `  \x1b[2mlevel.dat: ${before} bytes before, 18 wrecked, ${after} restored; the server is ${panel.state()}\x1b[0m`,
  );
  await channel(0);

  heading("19:30 — a griefer burns Steve's base near spawn: only its chunks come back, Alex's build next to it stays");
  // Both in r.0.0.mca: Steve's base in chunk 0,0 (blocks 0..15), Alex's build in the first chunk east of the area.
  const base = join(worldDir, "world", "region", "r.0.0.mca");
  const inArea = (i: number) => (i & 31) <= 12 && i >> 5 <= 12; // the area 10,10 to 200,200: chunks 0..12
  const snapshotBase = regionChunks(readFileSync(base)).get(0)?.raw;
  const build = [...regionChunks(readFileSync(base)).keys()].find((i) => !inArea(i)) as number;
  changeChunkAsGame(base, { x: 0, z: 0 }, build, "Alex's evening build");
  const progress = regionChunks(readFileSync(base)).get(build)?.raw;
  damage.corruptChunk(base);
  await run("backup", ["restore", "--area", "10,10,200,200", "--dry-run"]);
  await run("backup", ["restore", "--area", "10,10,200,200"]);
  const merged = regionChunks(readFileSync(base));
  console.log(
    `  \x1b[2mchunk 0,0 (Steve's base): ${snapshotBase && merged.get(0)?.raw.equals(snapshotBase) ? "as in the snapshot again" : "STILL GRIEFED"}; chunk ${build & 31},${build >> 5} of the same region file (Alex's build): ${progress && merged.get(build)?.raw.equals(progress) ? "this evening's progress kept" : "PROGRESS LOST"}\x1b[0m`,
  );

  heading("20:15 — a plugin bug empties Steve's inventory: his player file alone comes back, the server keeps running");
  const steveUuid = "6f4b2c1e-0000-4000-8000-000000000001";
  writeFileSync(
    join(worldDir, "usercache.json"),
    JSON.stringify([
      { name: "Steve", uuid: steveUuid, expiresOn: "2026-12-25 20:15:00 +0000" },
      { name: "Alex", uuid: "6f4b2c1e-0000-4000-8000-000000000002", expiresOn: "2026-12-25 20:15:00 +0000" },
    ]),
  );
  writeFileSync(join(worldDir, "world", "playerdata", `${steveUuid}.dat`), "an empty inventory");
  await run("backup", ["restore", "--player", "Stevee"]);
  await run("backup", ["restore", "--player", "Steve"]);
  console.log(`  \x1b[2mthe server stayed ${panel.state()}\x1b[0m`);
  await run("backup", ["snapshots"]);

  heading(
    "21:00 — a broken plugin: the server crashes, the panel restarts it, it crashes again; the loop is caught once",
  );
  const ready = gameLine('Done (3.5s)! For help, type "help"');
  const crash = (exception: string) => `${gameLine("Encountered an unexpected exception", "ERROR")}${exception}\n`;
  writeFileSync(latest, crash("java.lang.NoSuchMethodError: 'void org.bukkit.World.save()'") + ready, { flag: "a" });
  await channel(2);
  writeFileSync(latest, crash("java.lang.NoSuchMethodError: 'void org.bukkit.World.save()'") + ready, { flag: "a" });
  await channel(2);
  writeFileSync(latest, crash("java.lang.IllegalStateException: Asynchronous chunk load!"), { flag: "a" });
  await channel(2); // the crash loop, then the stop the tailer asked the panel for
  console.log(`  \x1b[2mpower signals: ${panel.signals().slice(-1).join("")}; the server is ${panel.state()}\x1b[0m`);
  console.log("  \x1b[2m(the operator removes the plugin and starts the server from the panel)\x1b[0m");
  panel.setState("running");
  writeFileSync(latest, ready, { flag: "a" });
  await channel(1);
  tailer.kill("SIGTERM");
  await new Promise((r) => tailer?.on("close", r));
  tailer = undefined;
  await channel(0);

  heading("Sunday 07:00 — cron's weekly restore drill: the newest snapshot restores into a world the game can open");
  await run("backup", ["drill"]);

  heading("… a disk error cuts a region file short; tonight's snapshot has it, and the drill says which file");
  damage.truncate(join(worldDir, "world_nether", "DIM-1", "region", "r.1.-1.mca"));
  await run("backup", []);
  await run("backup", ["drill"]);
  await run("backup", ["status"]);

  heading("the day in the channel");
  const counts = new Map<string, number>();
  for (const message of discord.messages) {
    const title = (describeMessage(message.body).split("\n")[0] ?? "").replace(/^■ \S+\s+/, "");
    counts.set(title, (counts.get(title) ?? 0) + 1);
  }
  console.log(indent([...counts].map(([title, n]) => `${n} × ${title}`).join("\n")));
  const dayMessages = discord.messages.length;

  console.log("\n\x1b[1mPart 2: the rest of the toolkit\x1b[0m");
  heading("log-tailer scan: the day's log as events (prints, posts nothing)");
  await run("log-tailer", ["scan", latest]);

  heading(
    "log-tailer: a chicken farm fills the memory and the kernel kills the game; the log cannot say it, Docker can",
  );
  tailer = spawn(bin("log-tailer"), [], { env, stdio: ["ignore", "ignore", "pipe"] });
  await waitUntil(() => docker.followers === 1, "the log-tailer to follow Docker's events", 30_000);
  docker.oomKill(uuid); // oom, then die with exit code 137: Wings then starts a new container
  await channel(1);
  tailer.kill("SIGTERM");
  await new Promise((r) => tailer?.on("close", r));
  tailer = undefined;

  heading("webhook: a preview, a wrong colour, an insecure webhook.env, and Discord's 429 waited out");
  await run("webhook", ["Preview", "not sent", "info", "--dry-run"]);
  await run("webhook", ["Hello", "world", "purple"]);
  writeSecret("webhook.env", `WEBHOOK_URL=${discord.webhookUrl()}\n`, 0o644);
  await run("webhook", ["Hello"]);
  writeSecret("webhook.env", `WEBHOOK_URL=${discord.webhookUrl()}\nPLAY_HOST=play.example.com\n`);
  discord.inject({ kind: "rate-limit", retryAfterSeconds: 1.5 });
  await run("webhook", ["Careful", "this text says @everyone and <@123456789> but pings nobody", "event"]);

  heading(
    "jar-download: a new server jar, verified, swapped in while the players wait a moment, the world snapshotted first",
  );
  // The loaders' installers are the test installer (Java source, built with Debian's JDK): run for real in the Docker
  // stand-in, writing what NeoForge's writes.
  const downloads = await startDownloadStandIn({
    vanilla: [
      { id: "1.21.4", type: "release" },
      { id: "1.21.3", type: "release" },
    ],
    installerJar: (loader, version) => {
      const [major, minor] = version.split(".");
      return testInstallerJar({ loader, version, game: minor === "0" ? `1.${major}` : `1.${major}.${minor}` });
    },
  });
  try {
    writeFileSync(join(worldDir, "server.jar"), downloads.jar("vanilla-1.21.3.jar")); // the jar the egg installed
    writeSecret(
      "backup.env",
      [
        readFileSync(join(configDir, "backup.env"), "utf8").trimEnd(),
        `DOWNLOAD_BASE=${downloads.bases.paper}`,
        `PURPUR_BASE=${downloads.bases.purpur}`,
        `MOJANG_BASE=${downloads.bases.mojang}`,
        `FABRIC_BASE=${downloads.bases.fabric}`,
        `NEOFORGE_BASE=${downloads.bases.neoforge}`,
        `FORGE_BASE=${downloads.bases.forge}`,
        `FORGE_FILES_BASE=${downloads.bases.forgeFiles}`,
        `QUILT_META_BASE=${downloads.bases.quilt}`,
        `QUILT_MAVEN_BASE=${downloads.bases.quiltMaven}`,
        "DOWNLOAD_CONTACT=admin@example.com",
        "",
      ].join("\n"),
    );
    await run("jar-download", ["1.21.4", "--list"]);
    await run("jar-download", ["1.21.4", "--dry-run"]);
    await run("jar-download", ["1.21.4"]);
    await run("jar-download", ["1.21.4", "--stop"]);
    console.log(
      `  \x1b[2mpower signals: ${panel.signals().slice(-2).join(" → ")}; the server is ${panel.state()}; the old jar is server.jar.previous\x1b[0m`,
    );
    heading(
      "jar-download: a downgrade the world cannot survive is refused before anything is fetched; and the way back",
    );
    await run("jar-download", ["1.20.1"]);
    await run("jar-download", ["--rollback"]);
    await run("jar-download", ["1.21.4", "--stop", "--no-backup"]);
    heading("jar-download: a corrupt download never replaces server.jar");
    downloads.inject({ kind: "corrupt", route: "jar", times: 5 });
    await run("jar-download", ["1.21.4", "--type", "purpur", "--stop"]);
    downloads.reset(); // the corrupt answers the purpur run did not use up
    heading(
      "jar-download: the heavy modpack loader by its own installer, run in the server's image through Docker as the game's user",
    );
    await run("jar-download", ["1.21.4", "--type", "neoforge", "--list"]);
    await run("jar-download", ["1.21.4", "--type", "neoforge", "--channel", "beta", "--dry-run"]);
    await run("jar-download", ["1.21.4", "--type", "neoforge", "--channel", "beta", "--stop", "--no-backup"]);
    console.log(
      `  \x1b[2mthe installer ran in ${docker.containers.at(-1)?.image} as ${docker.containers.at(-1)?.user}; the volume now holds run.sh, unix_args.txt and libraries/\x1b[0m`,
    );
    heading("jar-download: a Modrinth modpack, its mods checked against their sha512 and sha1, with its loader");
    await modpack();
  } finally {
    await downloads.close();
  }

  /** A small NeoForge modpack on the Modrinth stand-in: planned, installed with the server stopped, a hostile one refused. */
  async function modpack(): Promise<void> {
    const modrinth = await startModrinthStandIn({
      projects: [
        {
          id: "DEMOMOD1",
          slug: "demo-mod",
          versions: [
            {
              id: "DMV00001",
              versionNumber: "1.0.0",
              gameVersions: ["1.21.4"],
              loaders: ["neoforge"],
              files: [{ filename: "demo-mod-1.0.0.jar" }],
            },
          ],
        },
      ],
    });
    try {
      const mod = modrinth.file("DEMOMOD1", "DMV00001", "demo-mod-1.0.0.jar");
      const pack = (files: Record<string, unknown>[]) =>
        buildMrpack({
          index: mrpackIndex({
            name: "Demo Pack",
            versionId: "1.0.0",
            files,
            dependencies: { minecraft: "1.21.4", neoforge: "21.4.10-beta" },
          }),
          overrides: { "config/demo-mod.toml": "# the pack's settings for demo-mod\nspeed = 2\n" },
        });
      modrinth.projects.push({
        id: "DEMOPACK",
        slug: "demo-pack",
        versions: [
          {
            id: "DPV00001",
            versionNumber: "1.0.0",
            gameVersions: ["1.21.4"],
            loaders: ["neoforge"],
            files: [{ filename: "Demo Pack 1.0.0.mrpack", bytes: pack([mrpackFile(mod, "mods/demo-mod-1.0.0.jar")]) }],
          },
        ],
      });
      writeSecret(
        "backup.env",
        [
          readFileSync(join(configDir, "backup.env"), "utf8").trimEnd(),
          `MODRINTH_API_BASE=${modrinth.api}`,
          `MODRINTH_CDN_BASE=${modrinth.cdn}`,
          "",
        ].join("\n"),
      );
      await run("jar-download", ["1.21.4", "--modrinth", "demo-pack", "--dry-run"]);
      await run("jar-download", ["1.21.4", "--modrinth", "demo-pack", "--stop", "--no-backup"]);
      console.log(
        `  \x1b[2mthe volume's mods/: ${readdirSync(join(worldDir, "mods")).join(", ")}; NeoForge 21.4.10-beta installed with it; the old mods/ and config/ kept aside for --rollback\x1b[0m`,
      );
      const hostile = join(root, "hostile.mrpack");
      writeFileSync(hostile, pack([mrpackFile(mod, "mods/../../../etc/cron.d/payload")]));
      await run("jar-download", ["--mrpack", hostile, "--stop"]);
    } finally {
      await modrinth.close();
    }
  }

  heading("hibernate and revive (on the operator's computer): snapshot and destroy the VM, then bring it back");
  const digitalocean = await startDigitalOceanStandIn({
    droplets: [{ name: "mc", size: "s-2vcpu-4gb", region: "fra1", tags: ["mcops"], sizeGigabytes: 30 }],
    timings: { createMs: 1500, shutdownMs: 800, snapshotMs: 1500 },
  });
  const cloudflare = await startCloudflareStandIn({
    zones: [{ name: "example.co.uk" }],
    records: [
      { zone: "example.co.uk", name: "panel.example.co.uk", content: "198.51.100.20", proxied: true },
      { zone: "example.co.uk", name: "play.example.co.uk", content: "198.51.100.20" },
    ],
  });
  const vmGame = await startGameServer();
  try {
    const laptop = join(root, "home", "operator");
    mkdirSync(laptop, { recursive: true });
    const dotenv = join(laptop, ".env");
    writeFileSync(
      dotenv,
      [
        `DIGITALOCEAN_ACCESS_TOKEN=${digitalocean.token}`,
        `CLOUDFLARE_API_TOKEN=${cloudflare.token}`,
        `CONTROL_KEY=${panel.apiKey}`,
        `SERVER_ID=${panel.server.identifier}`,
        "SERVER_ADDR=play.example.co.uk",
        "PANEL_URL=https://panel.example.co.uk",
        `WEBHOOK_URL=${discord.webhookUrl()}`,
        "# The stand-ins: where the APIs, the panel and the game are reached here.",
        `DIGITALOCEAN_API_URL=${digitalocean.url}`,
        `CLOUDFLARE_API_URL=${cloudflare.url}`,
        `CONTROL_URL=${panel.url}`,
        `GAME_ADDRESS=${vmGame.address}`,
        "",
      ].join("\n"),
      { mode: 0o600 },
    );
    console.log("  \x1b[2m(no SSH to the stand-in VM here, so the last backup is skipped with --skip-backup)\x1b[0m");
    await run("hibernate", ["--config", dotenv]);
    await run("hibernate", ["--config", dotenv, "--yes", "--skip-backup"]);
    await run("revive", ["dns", "--config", dotenv, "--ip", "203.0.113.50", "--dry-run"]);
    await run("revive", ["--config", dotenv]);
    const records = cloudflare
      .records("example.co.uk")
      .map((r) => `${r.name} → ${r.content}${r.proxied ? " (proxied)" : ""}`);
    console.log(`  \x1b[2mDNS now: ${records.join(", ")}\x1b[0m`);
    await run("revive", ["dns", "--config", dotenv]);
  } finally {
    await vmGame.close();
    await digitalocean.close();
    await cloudflare.close();
  }

  heading(
    "dashboard: the notification settings page, behind basic auth (here driven over HTTP; the tests use Chromium)",
  );
  {
    const password = "correct horse battery staple";
    console.log("\x1b[2m$ echo '…' | dashboard passwd\x1b[0m");
    const passwd = spawn(bin("dashboard"), ["passwd"], { env, stdio: ["pipe", "pipe", "pipe"] });
    passwd.stdout?.on("data", (d) => process.stdout.write(indent(String(d))));
    passwd.stdin?.end(`${password}\n`);
    await new Promise((r) => passwd.on("close", r));
    // The webhook here is the loopback stand-in, not discord.com: the dashboard refuses any other host unless told.
    console.log("\x1b[2m$ DASHBOARD_ALLOW_ANY_WEBHOOK=1 dashboard --listen 127.0.0.1:0\x1b[0m");
    const server = spawn(bin("dashboard"), ["--listen", "127.0.0.1:0"], {
      env: { ...env, DASHBOARD_ALLOW_ANY_WEBHOOK: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let warnings = ""; // its WARN lines (refused sign-ins and forms), shown at the end of the act
    server.stderr?.on("data", (d) => (warnings += d));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("the dashboard did not start within 10 s")), 10_000);
        server.stdout?.on("data", (d) => {
          const address = /listening on (\S+)/.exec(String(d))?.[1];
          if (address) {
            clearTimeout(timer);
            process.stdout.write(indent(String(d)));
            resolve(address);
          }
        });
      });
      const basic = (secret: string) => `Basic ${Buffer.from(`admin:${secret}`).toString("base64")}`;
      console.log(`  a wrong password: ${(await fetch(url, { headers: { authorization: basic("guess") } })).status}`);
      const page = await fetch(url, { headers: { authorization: basic(password) } });
      const html = await page.text();
      const cookie = (page.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
      const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? "";
      const facts = /<dl class="facts">([\s\S]*?)<\/dl>/.exec(html)?.[1] ?? "";
      for (const [, term, value] of facts.matchAll(/<dt>(.*?)<\/dt><dd[^>]*>([\s\S]*?)<\/dd>/g)) {
        console.log(
          `  ${term}: ${(value ?? "")
            .replace(/<br>/g, "; ")
            .replace(/<[^>]+>/g, "")
            .replace(/&#39;/g, "'")
            .replace(/&quot;/g, '"')
            .replace(/&lt;/g, "<")
            .replace(/&gt;/g, ">")
            .replace(/&amp;/g, "&")
            .replace(/\s+/g, " ")
            .trim()}`,
        );
      }
      const post = (path: string, fields: Array<[string, string]>, origin = url) =>
        fetch(`${url}${path}`, {
          method: "POST",
          redirect: "manual",
          headers: {
            authorization: basic(password),
            cookie,
            origin,
            "content-type": "application/x-www-form-urlencoded",
          },
          body: new URLSearchParams(fields),
        });
      const on = ["leave", "death", "start", "stop", "crash", "backup", "idle", "restart", "health"]; // "Player joined" unticked
      const saved = await post("/settings", [
        ["csrf", field("csrf")],
        ["version", field("version")],
        ...on.map((c): [string, string] => ["events", c]),
      ]);
      console.log(`  Save without "Player joined": ${saved.status}; webhook.json is now (mode 600):`);
      process.stdout.write(indent(readFileSync(join(configDir, "webhook.json"), "utf8"), "    "));
      const forged = await post(
        "/settings",
        [
          ["csrf", "guessed"],
          ["version", "none"],
        ],
        "https://evil.example",
      );
      console.log(`  the same form posted from another site: ${forged.status}`);
      await run("webhook", ["Steve joined the game", "--category", "join"]); // off now: nothing is posted
      await run("webhook", ["Steve left the game", "--category", "leave"]);
      console.log(`  Send test message: ${(await post("/test", [["csrf", field("csrf")]])).status}`);
      await channel(1);
      console.log("  the dashboard logged (/var/log/mc-dashboard.log):");
      process.stdout.write(indent(warnings, "    "));
      rmSync(join(configDir, "webhook.json")); // every category on again for the acts after this one
    } finally {
      server.kill("SIGTERM");
    }
  }

  heading("webhook: the webhook was deleted in Discord");
  discord.deleteWebhook(0);
  await run("webhook", ["Backup failed", "restic: wrong password", "error"]);
  console.log("  \x1b[2m(the operator makes a new webhook in the channel and puts its address in webhook.env)\x1b[0m");
  writeSecret("webhook.env", `WEBHOOK_URL=${discord.webhookUrl(1)}\nPLAY_HOST=play.example.com\n`);

  await discordControl();

  heading("summary");
  const statuses = new Map<number, number>();
  for (const r of discord.requests) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
  console.log(
    `  ${discord.messages.length} messages reached the channel (${dayMessages} of them during the day); answers: ${[...statuses].map(([s, n]) => `${n} × ${s}`).join(", ")}`,
  );
  console.log(`  nobody was pinged: ${discord.messages.every((m) => !m.pings.everyone && m.pings.users.length === 0)}`);
} finally {
  tailer?.kill("SIGTERM");
  await game.close();
  await discord.close();
  await panel.close();
  await docker.close();
  rmSync(root, { recursive: true, force: true });
}

/** Discord's application, DigitalOcean with the VM's droplet, and Cloudflare with the panel's and the game's names. */
async function cloudStandIns() {
  const app = await startDiscordAppStandIn();
  const cloud = await startDigitalOceanStandIn({
    droplets: [{ name: "mc", size: "s-2vcpu-4gb", region: "fra1", tags: ["mcops"], sizeGigabytes: 7 }],
    timings: { createMs: 1500, shutdownMs: 600, snapshotMs: 1500, powerOnMs: 300 },
  });
  const dns = await startCloudflareStandIn({
    zones: [{ name: "example.co.uk" }],
    records: [
      { zone: "example.co.uk", name: "panel.example.co.uk", content: "198.51.100.20", proxied: true },
      { zone: "example.co.uk", name: "play.example.co.uk", content: "198.51.100.20" },
    ],
  });
  return { app, cloud, dns };
}

/**
 * The end: the server hibernates on autopilot and a group member wakes it from Discord. The Worker runs in the real
 * workerd runtime (wrangler dev) against the stand-ins; the VM's side is the idle monitor with WORKER_URL set.
 */
async function discordControl(): Promise<void> {
  heading(
    "Saturday — nobody has played for 2 hours: the idle monitor stops the game, backs up, and the Worker hibernates the VM",
  );
  const { app, cloud, dns } = await cloudStandIns();
  const secret = randomBytes(32).toString("hex");
  const worker = await startWorker(
    workerVars({ app, digitalocean: cloud, cloudflare: dns, gameAddress: game.address, secret }, { POLL_MS: "400" }),
  );
  const endpoint = `${worker.url}/interactions`;
  const say = (who: string, text: string | undefined) => console.log(indent(`${who}: ${text ?? "(nothing)"}`, "    "));
  try {
    const file = join(configDir, "backup.env");
    // The VM's kernel boot id, as a file the demo can change: each revived VM is a new boot.
    const bootId = join(root, "boot_id");
    writeFileSync(bootId, `${randomUUID()}\n`);
    writeSecret(
      "backup.env",
      `${readFileSync(file, "utf8")}WORKER_URL=${worker.url}\nWORKER_SECRET=${secret}\nIDLE_HIBERNATE_AFTER=2h\nBOOT_ID_FILE=${bootId}\n`,
    );
    const stateFile = join(root, "state", "idle-monitor.json");
    /** Two hours pass in a moment: the idle monitor's state says nobody has played since, and it backed up. */
    const twoHoursIdle = () => {
      const state = JSON.parse(readFileSync(stateFile, "utf8")) as Record<string, unknown>;
      const now = Date.now();
      writeFileSync(
        stateFile,
        JSON.stringify({
          ...state,
          // This boot's: the hours passed on the VM that is running now.
          bootId: readFileSync(bootId, "utf8").trim(),
          lastActivity: now - 3 * 3600_000,
          idleSince: now - 2 * 3600_000,
          lastBackupOk: now - 3600_000,
        }),
      );
    };
    /** The autopilot: the idle monitor stops the game, backs up and asks; the Worker snapshots and destroys. */
    const hibernates = async () => {
      twoHoursIdle();
      panel.setState("running");
      await run("idle-monitor", ["--once"]);
      await waitUntil(() => cloud.droplets().length === 0, "the droplet destroyed", 60_000);
      console.log(
        `  \x1b[2mDigitalOcean now: no droplet; snapshots ${cloud
          .snapshots()
          .map((x) => x.name)
          .join(", ")}\x1b[0m`,
      );
      say("/status", (await app.command(endpoint, { name: "status" })).body?.data?.content);
    };
    /** Alex's /start, its reply followed until the revive ends; then the revived VM's first look (a new boot). */
    const starts = async () => {
      const start = await app.command(endpoint, { name: "start", user: "alex", roles: [app.roles.start] });
      let shown = "";
      for (let i = 0; i < 1200 && !/^(Server is up|Could not)/.test(shown); i++) {
        const latest = app.reply(start.token) ?? "";
        if (latest !== shown) {
          shown = latest;
          say("/start (Alex) — reply edited", latest);
        }
        await pause(50);
      }
      console.log(
        `  \x1b[2mdroplets: ${cloud.droplets().length}; play.example.co.uk → ${dns.records("example.co.uk").find((r) => r.name === "play.example.co.uk")?.content}\x1b[0m`,
      );
      writeFileSync(bootId, `${randomUUID()}\n`);
      await run("idle-monitor", ["--once"]);
    };

    await hibernates();
    heading("… Steve, without the role, types /start; then Alex types /start and the reply follows the revive");
    say(
      "/start (Steve, only him sees it)",
      (await app.command(endpoint, { name: "start", user: "steve" })).body?.data?.content,
    );
    await starts();

    heading("The next Saturday: played, then idle again — the second cycle, with nobody touching anything but Discord");
    // The revived VM heard the /start at its first look: from there its own idle clock decides, as on the first cycle.
    await hibernates();
    await starts();
  } finally {
    await worker.close();
    await Promise.all([app.close(), cloud.close(), dns.close()]);
  }
}
