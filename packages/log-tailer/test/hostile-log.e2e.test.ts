import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import {
  appendFileSync,
  chmodSync,
  closeSync,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  symlinkSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type DiscordStandIn, startDiscordStandIn, toolEnv, waitUntil } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

/**
 * The built executable against a server volume the game (or a plugin) has turned against it: latest.log a FIFO, a link
 * to a root-only log outside the volume, a directory, an endless line. The tailer runs as root, as in production.
 */
const BIN = fileURLToPath(new URL("../dist/log-tailer.mjs", import.meta.url));

let discord: DiscordStandIn;
let root: string;
let volume: string;
let log: string;
let outside: string;
let env: NodeJS.ProcessEnv;
let service: ChildProcess | undefined;
let stderr = "";

const line = (message: string) => `[12:00:00] [Server thread/INFO]: ${message}\n`;
const titles = () => discord.messages.map((m) => m.body.embeds[0].title as string);
const toolLog = () => {
  try {
    return readFileSync(join(root, "log", "mc-log-tailer.log"), "utf8");
  } catch {
    return "";
  }
};
const logLines = (pattern: RegExp) =>
  toolLog()
    .split("\n")
    .filter((l) => pattern.test(l));

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "mcops-tailer-hostile-"));
  volume = join(root, "volume");
  outside = join(root, "other-server");
  mkdirSync(join(root, "etc"));
  mkdirSync(join(volume, "logs"), { recursive: true });
  mkdirSync(outside, { mode: 0o700 });
  log = join(volume, "logs", "latest.log");
  discord = await startDiscordStandIn();
  const webhookEnv = join(root, "etc", "webhook.env");
  writeFileSync(webhookEnv, `WEBHOOK_URL=${discord.webhookUrl()}\nPLAY_HOST=play.example.test\n`);
  chmodSync(webhookEnv, 0o600);
  const backupEnv = join(root, "etc", "backup.env");
  writeFileSync(backupEnv, `WORLD_DIR=${volume}\n`);
  chmodSync(backupEnv, 0o600);
  env = toolEnv(root);
  stderr = "";
});

afterEach(async () => {
  service?.kill("SIGKILL");
  service = undefined;
  await discord.close();
  rmSync(root, { recursive: true, force: true });
});

/** The service on WORLD_DIR from backup.env, as systemd runs it. */
function start(): void {
  service = spawn(BIN, [], { env, stdio: ["ignore", "ignore", "pipe"] });
  service.stderr?.on("data", (d) => (stderr += d));
}

/** How long the service, started afresh on a busy machine, may take to do something before the test fails. */
const WAIT = 60_000;

/** SIGTERM; resolves with the exit code. Until it exits, afterEach can still kill it. */
async function stop(): Promise<{ code: number | null }> {
  const child = service as ChildProcess;
  const done = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  child.kill("SIGTERM");
  const code = await done;
  service = undefined;
  return { code };
}

/** Waits (bounded) until the tool's log has a line matching `pattern`. */
async function logged(pattern: RegExp, timeoutMs = WAIT): Promise<void> {
  await waitUntil(() => logLines(pattern).length > 0, `${pattern} in mc-log-tailer.log`, timeoutMs).catch(() => {
    throw new Error(`nothing like ${pattern} in mc-log-tailer.log within ${timeoutMs} ms:\n${toolLog()}${stderr}`);
  });
}

describe("log-tailer in a hostile volume (built executable)", () => {
  it("a FIFO as latest.log: one ERROR line, one post, and a prompt exit 0 on SIGTERM", async () => {
    execFileSync("mkfifo", [log]);
    start();
    await logged(/ ERROR .*latest\.log is a FIFO, not a regular file; not reading it/);
    const [message] = await discord.waitForMessages(1, WAIT);
    expect(message?.body.embeds[0].title).toBe("Game log not followed");
    expect(message?.body.embeds[0].description).toBe(
      `${log} is a FIFO, not a regular file; not reading it. Nothing from the game is announced until it is a regular file again.`,
    );
    // SIGTERM makes it look once more (its last read) before it stops: the same FIFO is not said again. Nobody ever
    // writes to the FIFO, so a last read that opened it would never end: exiting at all is the prompt exit.
    const { code } = await stop();
    expect(code).toBe(0);
    expect(logLines(/ ERROR /)).toEqual([
      expect.stringMatching(
        / ERROR .*latest\.log is a FIFO, not a regular file; not reading it — something in the server volume replaced it; remove it/,
      ),
    ]);
    expect(titles()).toEqual(["Game log not followed"]);
    expect(logLines(/ INFO stopped$/)).toHaveLength(1);
  }, 180_000);

  it.each([
    ["latest.log", "a link to another server's log", "latest.log is a symbolic link, not a regular file"],
    ["logs", "a link to another server's logs folder", "logs is a symbolic link, not a directory"],
  ])(
    "%s as %s: nothing from the canary log is ever posted",
    async (entry, _what, problem) => {
      const canary = join(outside, "latest.log");
      writeFileSync(canary, line("Canary joined the game"), { mode: 0o600 });
      if (entry === "logs") {
        rmSync(join(volume, "logs"), { recursive: true });
        symlinkSync(outside, join(volume, "logs"));
      } else {
        symlinkSync(canary, log);
      }
      start();
      await logged(new RegExp(` ERROR .*${problem.replace(/\./g, "\\.")}; not reading it`));
      await discord.waitForMessages(1, WAIT);
      appendFileSync(canary, line("Canary2 joined the game"));
      expect((await stop()).code).toBe(0);
      expect(titles()).toEqual(["Game log not followed"]);
      expect(toolLog()).not.toMatch(/Canary/);
    },
    180_000,
  );

  it("says each problem once, follows the log again when it is a regular file, and survives a directory swapped in", async () => {
    writeFileSync(log, line("Steve joined the game"));
    start();
    await discord.waitForMessages(1, WAIT);

    // The game's file renamed away and a directory put in its place while it runs.
    renameSync(log, join(volume, "logs", "old.log"));
    mkdirSync(log);
    await logged(/ ERROR .*latest\.log is a directory, not a regular file; not reading it/);
    await discord.waitForMessages(2, WAIT);
    rmdirSync(log);
    execFileSync("mkfifo", [log]);
    await logged(/ ERROR .*latest\.log is a FIFO, not a regular file/);
    unlinkSync(log);
    writeFileSync(log, line("Alex joined the game"));
    await logged(/ INFO .*latest\.log is a regular file again: following it$/);
    await discord.waitForMessages(3, WAIT);
    expect((await stop()).code).toBe(0);

    // One post for the episode (directory, then FIFO), and each problem in one ERROR line.
    expect(titles()).toEqual(["Steve joined the game", "Game log not followed", "Alex joined the game"]);
    expect(logLines(/ ERROR /)).toHaveLength(2);
    expect(stderr).not.toMatch(/EISDIR|ESPIPE|\n {4}at /);
  }, 180_000);

  it("cuts a line over 64 KiB with one warning, not its text, and reads the next line", async () => {
    writeFileSync(log, "");
    start();
    await logged(/ INFO following /);
    appendFileSync(
      log,
      `[12:00:00] [Server thread/INFO]: <Steve> ${"spam ".repeat(40_000)}\n${line("Steve joined the game")}`,
    );
    await discord.waitForMessages(1, WAIT);
    expect((await stop()).code).toBe(0);
    expect(titles()).toEqual(["Steve joined the game"]);
    expect(logLines(/ WARN /)).toEqual([
      expect.stringMatching(
        / WARN line 1 of .*latest\.log is longer than 64 KiB: its first 64 KiB are read, the rest is skipped$/,
      ),
    ]);
    expect(toolLog()).not.toMatch(/spam spam/);
  }, 180_000);

  it("fifty holes and five lines over 64 KiB in a row: one WARN of each at once, the rest counted in one more at stop, the join after them posted", async () => {
    writeFileSync(log, "");
    start();
    await logged(/ INFO following /);
    let text = "";
    for (let i = 0; i < 50; i++) text += `${line(`<Steve> ${i}`)}${"\0".repeat(8192)}`;
    for (let i = 0; i < 5; i++) text += `[12:00:00] [Server thread/INFO]: <Steve> ${"spam ".repeat(14_000)}\n`;
    appendFileSync(log, `${text}${line("Steve joined the game")}`);
    await discord.waitForMessages(1, WAIT);
    expect(titles()).toEqual(["Steve joined the game"]);
    expect(logLines(/ WARN /)).toEqual([
      expect.stringMatching(/ WARN skipped 8\.00 KiB of .*latest\.log \(a hole or zeros\)$/),
      expect.stringMatching(/ WARN line \d+ of .*latest\.log is longer than 64 KiB: .* the rest is skipped$/),
    ]);
    expect((await stop()).code).toBe(0);
    expect(logLines(/ WARN /).slice(2)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          / WARN skipped 392\.0 KiB of .*latest\.log in 49 runs \(holes or zeros\) since the last warning$/,
        ),
        expect.stringMatching(
          / WARN 4 lines of .*latest\.log longer than 64 KiB since the last warning \(the last: line 55\): their first 64 KiB are read, the rest is skipped$/,
        ),
      ]),
    );
    expect(logLines(/ WARN /)).toHaveLength(4);
  }, 180_000);

  it("a 20 GiB hole made in latest.log under it (`truncate -s 20G`): the join after it is posted, the line cut before it is a line of its own, one WARN", async () => {
    // The last line before the hole has no newline yet: read through, the hole glued the next real line to it.
    writeFileSync(log, `${line("Steve joined the game")}[12:00:01] [Server thread/INFO]: Alex joined the game`);
    start();
    await discord.waitForMessages(1, WAIT);
    truncateSync(log, 20 * 2 ** 30); // sparse: no disk space (ext4 and tmpfs)
    appendFileSync(log, line("Notch joined the game"));
    // Reading the 20 GiB of zeros takes the tailer minutes at a full core: skipped, the join comes at once. The bound
    // is only what a busy machine may take.
    await discord.waitForMessages(3, 30_000).catch((error) => {
      throw new Error(`${(error as Error).message}; posted ${JSON.stringify(titles())}\n${toolLog()}${stderr}`);
    });
    expect(titles()).toEqual(["Steve joined the game", "Alex joined the game", "Notch joined the game"]);
    await logged(/ WARN skipped 20\.0 GiB of .*latest\.log \(a hole or zeros\)$/);
    expect((await stop()).code).toBe(0);
    expect(logLines(/ WARN /)).toHaveLength(1);
    expect(titles()).toHaveLength(3);
  }, 180_000);

  it("a 20 GiB hole made under the game, which goes on writing at its own offset (log4j, no O_APPEND): its joins at the hole's start are posted, before and after a restart, one WARN", async () => {
    writeFileSync(log, line("Steve joined the game"));
    // latest.log as log4j's RollingRandomAccessFile writes it: at its own position, which a truncate does not move.
    const game = openSync(log, "r+");
    let at = fstatSync(game).size;
    const write = (text: string) => {
      at += writeSync(game, text, at);
    };
    try {
      start();
      await discord.waitForMessages(1, WAIT);
      truncateSync(log, 20 * 2 ** 30);
      await logged(/ WARN skipped 20\.0 GiB of .*latest\.log \(a hole or zeros\)$/);
      write(line("Alex joined the game"));
      await discord.waitForMessages(2, 30_000).catch((error) => {
        throw new Error(`${(error as Error).message}; posted ${JSON.stringify(titles())}\n${toolLog()}${stderr}`);
      });
      write(line("Notch joined the game"));
      await discord.waitForMessages(3, 30_000);
      expect((await stop()).code).toBe(0);

      // Written while it was stopped: the position it saved is at the hole's start, not 20 GiB on.
      write(line("Jeb joined the game"));
      start();
      await discord.waitForMessages(4, WAIT);
      expect((await stop()).code).toBe(0);
      expect(titles()).toEqual([
        "Steve joined the game",
        "Alex joined the game",
        "Notch joined the game",
        "Jeb joined the game",
      ]);
      expect(logLines(/ WARN /)).toHaveLength(1);
    } finally {
      closeSync(game);
    }
  }, 180_000);
});
