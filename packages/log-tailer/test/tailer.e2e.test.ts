import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { realLogPath } from "@mcops/game-log/fixtures";
import { type DiscordStandIn, runTool, startDiscordStandIn, toolEnv, waitUntil } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../dist/log-tailer.mjs", import.meta.url));
const FIXTURE = realLogPath("vanilla-1.21.5-dawncraft-2025-03-30-4.log");

let discord: DiscordStandIn;
let root: string;
let log: string;
let env: NodeJS.ProcessEnv;
let service: ChildProcess | undefined;

const line = (message: string, level = "INFO") => `[12:00:00] [Server thread/${level}]: ${message}\n`;
const titles = () => discord.messages.map((m) => m.body.embeds[0].title as string);
const toolLog = () => {
  try {
    return readFileSync(join(root, "log", "mc-log-tailer.log"), "utf8");
  } catch {
    return "";
  }
};

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "mcops-tailer-"));
  mkdirSync(join(root, "etc"));
  mkdirSync(join(root, "logs"));
  log = join(root, "logs", "latest.log");
  writeFileSync(log, "");
  discord = await startDiscordStandIn();
  const webhookEnv = join(root, "etc", "webhook.env");
  writeFileSync(webhookEnv, `WEBHOOK_URL=${discord.webhookUrl()}\nPLAY_HOST=play.example.test\n`);
  chmodSync(webhookEnv, 0o600);
  env = toolEnv(root);
});

afterEach(async () => {
  service?.kill("SIGKILL");
  service = undefined;
  await discord.close();
  rmSync(root, { recursive: true, force: true });
});

function start(): ChildProcess {
  service = spawn(BIN, ["--file", log], { env, stdio: ["ignore", "ignore", "inherit"] });
  return service;
}

async function stop(): Promise<number | null> {
  const child = service as ChildProcess;
  const done = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  child.kill("SIGTERM");
  service = undefined;
  return done;
}

/** Waits until the service has read the file (its position is saved), so that appends come after it started. */
async function settled(ms = 300): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

describe("log-tailer scan", () => {
  it("prints the contract's JSON lines and posts nothing", async () => {
    const child = spawn(BIN, ["scan", FIXTURE], { env, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout?.on("data", (d) => (out += d));
    expect(await new Promise((r) => child.on("close", r))).toBe(0);
    const events = out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(events[0]).toEqual({
      type: "start",
      message: 'Done (2.585s)! For help, type "help"',
      time: "19:39:38",
      line: 21,
    });
    expect(events[1]).toEqual({
      type: "join",
      player: "Sandre",
      message: "Sandre joined the game",
      time: "19:40:10",
      line: 26,
    });
    expect(events.map((e) => Object.keys(e).join(","))).toSatisfy((keys: string[]) =>
      keys.every((k) => k === "type,message,time,line" || k === "type,player,message,time,line"),
    );
    expect(discord.requests).toHaveLength(0);
  });
});

/** Three backups (save-off, save-all flush, save-on) as the game logs them, with players named `Automatic` and `Saving`
 * online, then a real death of each (two deaths in all). */
function backupsLog(): string {
  const backup = [
    line("Automatic saving is now disabled"),
    line("Saving the game (this may take a moment!)"),
    line("ThreadedAnvilChunkStorage (world): All chunks are saved"),
    line("ThreadedAnvilChunkStorage (DIM-1): All chunks are saved"),
    line("ThreadedAnvilChunkStorage (DIM1): All chunks are saved"),
    line("ThreadedAnvilChunkStorage: All dimensions are saved"),
    line("Saved the game"),
    line("Automatic saving is now enabled"),
  ].join("");
  return (
    line('Done (3.5s)! For help, type "help"') +
    line("Automatic joined the game") +
    line("Saving joined the game") +
    backup +
    backup +
    backup +
    line("Saving was devoured by the Cave Dweller") +
    line("Automatic drowned")
  );
}

describe("players named like the game's own messages", () => {
  it("die at no backup: the service posts no death for save-off, save-all and save-on", async () => {
    start();
    await settled();
    appendFileSync(log, backupsLog());
    await discord.waitForMessages(5);
    await settled(500);
    expect(titles()).toEqual([
      "Server started",
      "Automatic joined the game",
      "Saving joined the game",
      "Saving was devoured by the Cave Dweller",
      "Automatic drowned",
    ]);
    expect(await stop()).toBe(0);
  });

  it("and log-tailer scan counts no death at a backup", async () => {
    const file = join(root, "backups.log");
    writeFileSync(file, backupsLog());
    const result = await runTool(BIN, ["scan", file], { env });
    expect(result.code).toBe(0);
    const deaths = result.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((e) => e.type === "death");
    expect(deaths.map((e) => [e.player, e.line])).toEqual([
      ["Saving", 28],
      ["Automatic", 29],
    ]);
  });
});

describe("log-tailer (service)", () => {
  it("says in one line that a directory is not a log (exit 2)", async () => {
    const result = await runTool(BIN, ["--file", root], { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `log-tailer: ${root} is a directory (--file) — give the game log itself, e.g. <WORLD_DIR>/logs/latest.log\n`,
    );
  });

  it("posts each kind of event with its colour, and stops cleanly on SIGTERM", async () => {
    start();
    await settled();
    appendFileSync(
      log,
      [
        line('Done (3.5s)! For help, type "help"'),
        line("Steve joined the game"),
        line("Steve fell from a high place"),
        line("Steve left the game"),
        line("Encountered an unexpected exception", "ERROR"),
        "java.lang.NullPointerException: boom\n",
        line("This crash report has been saved to: /srv/crash-reports/crash-1.txt", "ERROR"),
        line("Stopping server"),
      ].join(""),
    );
    const messages = await discord.waitForMessages(6);
    expect(messages.map((m) => [m.body.embeds[0].title, m.body.embeds[0].color])).toEqual([
      ["Server started", 5763719],
      ["Steve joined the game", 5763719],
      ["Steve fell from a high place", 10181046],
      ["Steve left the game", 3447003],
      ["Server crashed", 15548997],
      ["Server stopped", 16776960],
    ]);
    expect(messages[4]?.body.embeds[0].description).toBe(
      "Encountered an unexpected exception\njava.lang.NullPointerException: boom\nCrash report: /srv/crash-reports/crash-1.txt",
    );
    expect(await stop()).toBe(0);
  });

  it("lets no text from the log ping anyone or format the message", async () => {
    start();
    await settled();
    appendFileSync(
      log,
      line("Steve joined the game") + line("Steve was slain by Alex using [@everyone **Sword** <@123>]"),
    );
    const [, death] = await discord.waitForMessages(2);
    expect(death?.pings).toEqual({ everyone: false, users: [], roles: [] });
    expect(death?.body.embeds[0].title).toBe(
      "Steve was slain by Alex using \\[@\u200beveryone \\*\\*Sword\\*\\* \\<@123>\\]",
    );
    expect(death?.body.allowed_mentions).toEqual({ parse: [] });
  });

  it("leaves the invisible fillers and joiners outside Cf out of the Discord text (issue 45)", async () => {
    start();
    await settled();
    // A Hangul-filler name looks empty, a braille blank looks like a space, U+034F joins nothing visibly.
    appendFileSync(log, line("Steve was slain by \u3164\u3164 using [\u2800Sw\u034ford\u115f\ufe0f]"));
    const [death] = await discord.waitForMessages(1);
    expect(death?.body.embeds[0].title).toBe("Steve was slain by  using \\[Sword\\]");
  });

  it("never posts for chat that imitates events", async () => {
    start();
    await settled();
    appendFileSync(
      log,
      line("<Steve> Alex joined the game") +
        line("[Not Secure] <Steve> Alex was slain by Zombie") +
        line("* Steve left the game") +
        line("Alex joined the game"),
    );
    await discord.waitForMessages(1);
    await settled();
    expect(titles()).toEqual(["Alex joined the game"]);
  });

  it("turns a join storm into one summary, and a run of deaths into another", async () => {
    start();
    await settled();
    let text = "";
    for (let i = 0; i < 25; i++) text += line(`Player${i} joined the game`);
    for (let i = 0; i < 8; i++) text += line(`Player${i} drowned`);
    appendFileSync(log, text);
    // 10 joins one by one, then the other 15 in one summary at the end of the 10 s window; 3 deaths, then 5 summarised.
    const messages = await discord.waitForMessages(10 + 1 + 3 + 1, 20_000);
    const all = messages.map((m) => m.body.embeds[0].title as string);
    expect(all.filter((t) => t.endsWith(" joined the game"))).toHaveLength(10);
    expect(all.filter((t) => / drowned$/.test(t))).toHaveLength(3);
    expect(all).toContain("15 joined");
    expect(all.some((t) => t.includes(" left"))).toBe(false);
    expect(all).toContain("5 deaths");
    expect(discord.requests.filter((r) => r.status === 429)).toHaveLength(0);
  });

  it("follows webhook.json's categories", async () => {
    const json = join(root, "etc", "webhook.json");
    writeFileSync(json, JSON.stringify({ events: { death: false, join: false } }));
    chmodSync(json, 0o600);
    start();
    await settled();
    appendFileSync(log, line("Steve joined the game") + line("Steve drowned") + line("Steve left the game"));
    await discord.waitForMessages(1);
    await settled();
    expect(titles()).toEqual(["Steve left the game"]);
  });

  it("stops while Discord drops every post, and posts what it left at the next start, before new lines", async () => {
    discord.inject({ kind: "drop", times: 10_000 });
    start();
    await waitUntil(() => toolLog().includes("INFO following "), "the service to follow the log", 10_000);
    appendFileSync(log, line("Steve joined the game") + line("Alex joined the game"));
    await waitUntil(() => discord.requests.length > 0, "the first post to be tried", 10_000);
    // The stop gives its posts 10 s, then exits with the one under way abandoned: the notifier's retries alone
    // would hold it 15 s per message.
    expect(await stop()).toBe(0);
    expect(discord.messages).toHaveLength(0);
    expect(toolLog()).toMatch(/WARN notification "Steve joined the game" not sent: the service stopped before/);
    expect(toolLog()).toMatch(/WARN notification "Alex joined the game" not sent: the service stopped before/);
    expect(toolLog()).toContain(" INFO stopped\n");
    discord.reset();
    appendFileSync(log, line("Steve left the game"));
    start();
    await discord.waitForMessages(3, 10_000);
    expect(titles()).toEqual(["Steve joined the game", "Alex joined the game", "Steve left the game"]);
  });

  it("after a restart carries on where it stopped: nothing repeated, nothing missed", async () => {
    appendFileSync(log, line("Old joined the game"));
    start();
    await settled();
    appendFileSync(log, line("Steve joined the game"));
    await discord.waitForMessages(2);
    expect(await stop()).toBe(0);
    appendFileSync(log, line("Alex joined the game"));
    start();
    await discord.waitForMessages(3);
    await settled();
    expect(titles()).toEqual(["Old joined the game", "Steve joined the game", "Alex joined the game"]);
  });
});
