import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type DiscordStandIn,
  type DockerStandIn,
  type PanelStandIn,
  runTool,
  startDiscordStandIn,
  startDockerStandIn,
  startPanelStandIn,
  toolEnv,
  waitUntil,
} from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

/** The crash-loop watch of the built service, on the game's real log lines, with the panel and Discord stand-ins. */
const BIN = fileURLToPath(new URL("../dist/log-tailer.mjs", import.meta.url));

let discord: DiscordStandIn;
let panel: PanelStandIn;
let root: string;
let log: string;
let env: NodeJS.ProcessEnv;
let service: ChildProcess | undefined;
let docker: DockerStandIn;
let uuid: string;

const at = (message: string, thread = "Server thread", level = "INFO") =>
  `[12:00:00] [${thread}/${level}]: ${message}\n`;
const titles = () => discord.messages.map((m) => m.body.embeds[0].title as string);
const started = at('Done (3.5s)! For help, type "help"');
const CRASHES = {
  vanilla: [
    at("Encountered an unexpected exception", "Server thread", "ERROR"),
    "net.minecraft.ReportedException: Ticking entity\n",
    'Caused by: java.lang.NullPointerException: Cannot invoke "net.minecraft.world.entity.Entity.tick()"\n',
    at("This crash report has been saved to: /srv/crash-reports/crash-1.txt", "Server thread", "ERROR"),
  ].join(""),
  oom: [
    at("Encountered an unexpected exception", "Server thread", "ERROR"),
    "java.lang.OutOfMemoryError: Java heap space\n",
  ].join(""),
  watchdog: [
    at("A single server tick took 60.00 seconds (should be max 0.05)", "Server Watchdog", "ERROR"),
    at("Considering it to be crashed, server will forcibly shutdown.", "Server Watchdog", "ERROR"),
  ].join(""),
  paper: at("The server has stopped responding! This is (probably) not a Paper bug.", "Paper Watchdog Thread", "ERROR"),
};

function backupEnv(lines: string[]): void {
  const file = join(root, "etc", "backup.env");
  writeFileSync(file, `${lines.join("\n")}\n`);
  chmodSync(file, 0o600);
}

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "mcops-crash-loop-"));
  uuid = randomUUID();
  const worldDir = join(root, "volumes", uuid);
  mkdirSync(join(worldDir, "logs"), { recursive: true });
  mkdirSync(join(root, "etc"));
  log = join(worldDir, "logs", "latest.log");
  writeFileSync(log, "");
  discord = await startDiscordStandIn();
  docker = await startDockerStandIn({ dir: root });
  panel = await startPanelStandIn({ servers: [{ uuid, state: "running" }], timings: { startMs: 100, stopMs: 100 } });
  const webhookEnv = join(root, "etc", "webhook.env");
  writeFileSync(webhookEnv, `WEBHOOK_URL=${discord.webhookUrl()}\n`);
  chmodSync(webhookEnv, 0o600);
  backupEnv([
    `WORLD_DIR=${worldDir}`,
    `CONTROL_URL=${panel.url}`,
    `CONTROL_KEY=${panel.apiKey}`,
    `SERVER_ID=${panel.server.identifier}`,
    "CRASH_LOOP=3/10m",
    "CRASH_LOOP_STOP=yes",
    `BACKUP_TEXTFILE_DIR=${join(root, "textfiles")}`,
    `DOCKER_SOCKET=${docker.socket}`,
  ]);
  env = toolEnv(root);
});

afterEach(async () => {
  service?.kill("SIGKILL");
  service = undefined;
  await discord.close();
  await panel.close();
  await docker.close();
  rmSync(root, { recursive: true, force: true });
});

describe("log-tailer: crash loops", () => {
  it("posts one crash-loop message with each crash's line, stops the server once, then posts no more crashes", async () => {
    service = spawn(BIN, [], { env, stdio: ["ignore", "ignore", "inherit"] });
    appendFileSync(log, CRASHES.vanilla + started);
    await discord.waitForMessages(2, 10_000);
    appendFileSync(log, CRASHES.oom + started);
    await discord.waitForMessages(4, 10_000);
    appendFileSync(log, CRASHES.watchdog + started);
    await discord.waitForMessages(6, 10_000);
    expect(titles()).toEqual([
      "Server crashed",
      "Server started",
      "Server crashed: out of memory",
      "Server started",
      expect.stringMatching(/^Crash loop: the server crashed 3 times in \d+ s$/),
      "Server started",
    ]);
    const loop = discord.messages[4]?.body.embeds[0];
    expect(loop).toMatchObject({ color: 15548997 });
    expect(loop?.description).toBe(
      [
        "1. net.minecraft.ReportedException: Ticking entity",
        "2. java.lang.OutOfMemoryError: Java heap space",
        "3. A single server tick took 60.00 seconds \\(should be max 0.05\\)",
        "The server was stopped through the panel so it does not keep corrupting chunks (CRASH_LOOP_STOP): start it from the panel once the cause is fixed.",
      ].join("\n"),
    );
    await waitUntil(() => panel.signals().length > 0, "the stop through the panel");
    expect(panel.signals()).toEqual(["stop"]);

    // A fourth crash (Paper's watchdog this time) posts nothing; what follows it still does.
    appendFileSync(log, CRASHES.paper + at("Steve joined the game"));
    await discord.waitForMessages(7, 10_000);
    expect(titles().slice(6)).toEqual(["Steve joined the game"]);
    // Every crash is counted, posted or not.
    expect(readFileSync(join(root, "textfiles", "mcops_log_tailer.prom"), "utf8")).toMatch(
      /^mcops_crashes_total\{server="\w+"\} 4$/m,
    );
    expect(panel.signals()).toEqual(["stop"]);
    // The log says the fourth crash was seen and not posted.
    const tailerLog = () => readFileSync(join(root, "log", "mc-log-tailer.log"), "utf8");
    await waitUntil(
      () => /WARN crash 4 of the crash loop: not posted \(The server has stopped responding!/.test(tailerLog()),
      "the log line",
    );
  });

  it("posts the kernel's out-of-memory kill, which the log cannot show, as a crash, counted and part of a loop", async () => {
    service = spawn(BIN, [], { env, stdio: ["ignore", "ignore", "inherit"] });
    await waitUntil(() => docker.followers === 1, "the service to follow Docker's events", 10_000);
    appendFileSync(log, started);
    await discord.waitForMessages(1, 10_000);
    // The game writes nothing: Docker says oom, then die with 137; Wings starts a new container, the game a new log.
    docker.emit(uuid, "start");
    docker.oomKill(uuid, 7_815);
    await discord.waitForMessages(2, 10_000);
    const kill = discord.messages[1]?.body.embeds[0];
    expect(kill).toMatchObject({ title: "Server crashed: out of memory", color: 15548997 });
    expect(kill?.description).toMatch(
      /^Out of memory: the kernel killed the server's container after 2 h 10 min \\\(exit code 137\\\)\nThe game cannot log this/,
    );
    // A plain stop and another server's kill say nothing; the next kill and a logged crash make a loop.
    docker.exit(uuid, 0);
    docker.oomKill(randomUUID());
    appendFileSync(log, at("Starting minecraft server version 1.21.4") + started);
    await discord.waitForMessages(3, 10_000);
    docker.oomKill(uuid);
    await discord.waitForMessages(4, 10_000);
    appendFileSync(log, started + CRASHES.vanilla);
    await discord.waitForMessages(6, 10_000);
    expect(titles()).toEqual([
      "Server started",
      "Server crashed: out of memory",
      "Server started",
      "Server crashed: out of memory",
      "Server started",
      expect.stringMatching(/^Crash loop: the server crashed 3 times in \d+ s$/),
    ]);
    expect(discord.messages[5]?.body.embeds[0].description).toMatch(
      /^1\. Out of memory: the kernel killed the server's container .*\n2\. Out of memory: .*\n3\. net\.minecraft\.ReportedException: Ticking entity\n/,
    );
    await waitUntil(() => panel.signals().length > 0, "the stop through the panel");
    expect(panel.signals()).toEqual(["stop"]);
    expect(readFileSync(join(root, "textfiles", "mcops_log_tailer.prom"), "utf8")).toMatch(
      /^mcops_crashes_total\{server="\w+"\} 3$/m,
    );
  });

  it("counts every kill for memory while the world loads, before Done, and catches the loop", async () => {
    service = spawn(BIN, [], { env, stdio: ["ignore", "ignore", "inherit"] });
    await waitUntil(() => docker.followers === 1, "the service to follow Docker's events", 10_000);
    appendFileSync(log, started);
    await discord.waitForMessages(1, 10_000); // the start is read before the kill comes
    docker.emit(uuid, "start");
    docker.oomKill(uuid, 3600);
    await discord.waitForMessages(2, 10_000);
    // -Xmx above the container's limit: Wings starts it again and the kernel kills it while the world loads.
    for (let i = 0; i < 2; i++) {
      docker.emit(uuid, "destroy");
      docker.emit(uuid, "start");
      appendFileSync(log, at("Starting minecraft server version 1.21.4") + at('Preparing level "world"'));
      docker.oomKill(uuid, 40);
    }
    await discord.waitForMessages(4, 10_000);
    expect(titles()).toEqual([
      "Server started",
      "Server crashed: out of memory",
      "Server crashed: out of memory",
      expect.stringMatching(/^Crash loop: the server crashed 3 times in \d+ s$/),
    ]);
    await waitUntil(() => panel.signals().length > 0, "the stop through the panel");
    expect(readFileSync(join(root, "textfiles", "mcops_log_tailer.prom"), "utf8")).toMatch(
      /^mcops_crashes_total\{server="\w+"\} 3$/m,
    );
  });

  it("posts a kill that happened while the service itself was restarting, once", async () => {
    service = spawn(BIN, [], { env, stdio: ["ignore", "ignore", "inherit"] });
    await waitUntil(() => docker.followers === 1, "the service to follow Docker's events", 10_000);
    appendFileSync(log, started);
    await discord.waitForMessages(1, 10_000);
    service.kill("SIGTERM");
    expect(await new Promise((resolve) => service?.once("exit", resolve))).toBe(0);
    docker.emit(uuid, "start");
    docker.oomKill(uuid); // in the 5 s before systemd starts it again
    service = spawn(BIN, [], { env, stdio: ["ignore", "ignore", "inherit"] });
    await discord.waitForMessages(2, 10_000);
    expect(titles()).toEqual(["Server started", "Server crashed: out of memory"]);
    // Restarted again: the kill is not posted twice.
    service.kill("SIGTERM");
    await new Promise((resolve) => service?.once("exit", resolve));
    service = spawn(BIN, [], { env, stdio: ["ignore", "ignore", "inherit"] });
    await waitUntil(() => docker.followers === 1 && docker.requests.length === 3, "the third start to follow", 10_000);
    appendFileSync(log, started);
    await discord.waitForMessages(3, 10_000);
    expect(titles()).toEqual(["Server started", "Server crashed: out of memory", "Server started"]);
  });

  it("stops at once on SIGTERM, saving its position, while Docker's answer is cut midway", async () => {
    const socket = join(root, "cut.sock");
    let asked = 0;
    const cut = createServer((_req, res) => {
      asked++;
      res.writeHead(500, { "Content-Type": "application/json", "Content-Length": "1000" });
      res.write('{"message":"starting');
      setTimeout(() => res.socket?.destroy(), 50);
    });
    await new Promise<void>((resolve) => cut.listen(socket, resolve));
    const file = join(root, "etc", "backup.env");
    writeFileSync(file, readFileSync(file, "utf8").replace(/DOCKER_SOCKET=.*/, `DOCKER_SOCKET=${socket}`));
    service = spawn(BIN, [], { env, stdio: ["ignore", "ignore", "inherit"] });
    try {
      await waitUntil(() => asked === 1, "the request to Docker", 10_000);
      appendFileSync(log, started);
      await discord.waitForMessages(1, 10_000);
      service.kill("SIGTERM");
      expect(await new Promise((resolve) => service?.once("exit", resolve))).toBe(0);
      expect(readFileSync(join(root, "log", "mc-log-tailer.log"), "utf8")).toMatch(/INFO stopped\n$/);
    } finally {
      cut.closeAllConnections();
      cut.close();
    }
  });

  it("takes a kill for memory right after a crash the log showed as that crash: one post", async () => {
    service = spawn(BIN, [], { env, stdio: ["ignore", "ignore", "inherit"] });
    await waitUntil(() => docker.followers === 1, "the service to follow Docker's events", 10_000);
    appendFileSync(log, CRASHES.oom);
    await discord.waitForMessages(1, 10_000);
    docker.oomKill(uuid);
    const tailerLog = () => readFileSync(join(root, "log", "mc-log-tailer.log"), "utf8");
    await waitUntil(
      () => tailerLog().includes("right after the crash the log showed: that crash, already posted"),
      "the kill logged",
    );
    appendFileSync(log, started);
    await discord.waitForMessages(2, 10_000);
    expect(titles()).toEqual(["Server crashed: out of memory", "Server started"]);
  });

  it("says in one line what is wrong with CRASH_LOOP, and that CRASH_LOOP_STOP needs the panel (exit 78)", async () => {
    const worldDir = join(root, "volumes");
    backupEnv([`WORLD_DIR=${worldDir}`, "CRASH_LOOP=3"]);
    const bad = await runTool(BIN, [], { env });
    expect(bad.code).toBe(78);
    expect(bad.stderr).toMatch(/^log-tailer: CRASH_LOOP is not a crash count and a time .*3\/10m.*\n$/);
    backupEnv([`WORLD_DIR=${worldDir}`, "DOCKER_SOCKET=docker.sock"]);
    const socket = await runTool(BIN, [], { env });
    expect(socket.code).toBe(78);
    expect(socket.stderr).toMatch(
      /^log-tailer: DOCKER_SOCKET must be the path of Docker's socket or off \(got "docker.sock"\).*\/var\/run\/docker.sock\n$/,
    );
    backupEnv([`WORLD_DIR=${worldDir}`, "CRASH_LOOP_STOP=yes"]);
    const noPanel = await runTool(BIN, [], { env });
    expect(noPanel).toMatchObject({
      code: 78,
      stderr: `log-tailer: CRASH_LOOP_STOP=yes needs the panel to stop the server (${join(root, "etc", "backup.env")}) — add CONTROL_URL, CONTROL_KEY and SERVER_ID (docs/system.md 2.1), or set CRASH_LOOP_STOP=no\n`,
    });
  });
});
