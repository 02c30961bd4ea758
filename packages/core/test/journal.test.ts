import { spawn } from "node:child_process";
import { closeSync, fstatSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir, toolEnv } from "@mcops/testkit";
import { afterAll, describe, expect, it } from "vitest";
import { journalStream, withPriority } from "../src/journal.ts";

const dir = tempDir("mcops-journal-");
afterAll(() => dir.cleanup());

/** JOURNAL_STREAM as systemd writes it for the file open on `fd`. */
function devIno(fd: number): string {
  const stat = fstatSync(fd, { bigint: true });
  return `${stat.dev}:${stat.ino}`;
}

function openFile(name: string): number {
  return openSync(join(dir.path, name), "a");
}

describe("journalStream", () => {
  it("is true when JOURNAL_STREAM names the device and inode of the descriptor", () => {
    const fd = openFile("stream");
    expect(journalStream({ JOURNAL_STREAM: devIno(fd) }, fd)).toBe(true);
    closeSync(fd);
  });

  it("checks stderr (fd 2) unless told another descriptor", () => {
    expect(journalStream({ JOURNAL_STREAM: devIno(2) })).toBe(true);
    const fd = openFile("other-than-stderr");
    expect(journalStream({ JOURNAL_STREAM: devIno(fd) })).toBe(false);
    closeSync(fd);
  });

  it("is false when JOURNAL_STREAM names another file: the variable was inherited, stderr was not", () => {
    const fd = openFile("stderr-of-a-child");
    const other = openFile("the-journal");
    expect(journalStream({ JOURNAL_STREAM: devIno(other) }, fd)).toBe(false);
    const [dev, ino] = devIno(fd).split(":");
    expect(journalStream({ JOURNAL_STREAM: `${dev}:${BigInt(ino as string) + 1n}` }, fd)).toBe(false);
    expect(journalStream({ JOURNAL_STREAM: `${BigInt(dev as string) + 1n}:${ino}` }, fd)).toBe(false);
    closeSync(fd);
    closeSync(other);
  });

  it("compares the numbers, not the text: leading zeros name the same file", () => {
    const fd = openFile("zeros");
    const [dev, ino] = devIno(fd).split(":");
    expect(journalStream({ JOURNAL_STREAM: `00${dev}:0${ino}` }, fd)).toBe(true);
    closeSync(fd);
  });

  it.each([
    ["unset", undefined],
    ["empty", ""],
    ["a colon alone", ":"],
    ["no colon", "DEVINO"],
    ["no inode", "DEV:"],
    ["no device", ":INO"],
    ["three fields", "DEV:INO:1"],
    ["spaces around", " DEV:INO "],
    ["a trailing newline", "DEV:INO\n"],
    ["a sign", "+DEV:INO"],
    ["hexadecimal", "0xDEVHEX:INO"],
    ["a fraction", "DEV.0:INO"],
    ["letters", "abc:def"],
  ])("is false for a malformed JOURNAL_STREAM (%s), even one built from the right numbers", (_, pattern) => {
    const fd = openFile("malformed");
    const [dev, ino] = devIno(fd).split(":") as [string, string];
    const value = pattern?.replace("DEVHEX", BigInt(dev).toString(16)).replace("DEV", dev).replace("INO", ino);
    expect(journalStream({ JOURNAL_STREAM: value }, fd)).toBe(false);
    closeSync(fd);
  });

  it("is false for a descriptor that is not open", () => {
    const fd = openFile("closed");
    const value = devIno(fd);
    closeSync(fd);
    expect(journalStream({ JOURNAL_STREAM: value }, fd)).toBe(false);
  });
});

describe("withPriority", () => {
  it("starts a line with sd-daemon(3)'s priority of its level", () => {
    expect(withPriority("ERROR", "x ERROR a\n")).toBe("<3>x ERROR a\n");
    expect(withPriority("WARN", "x WARN a\n")).toBe("<4>x WARN a\n");
    expect(withPriority("INFO", "x INFO a\n")).toBe("<6>x INFO a\n");
    expect(withPriority("DEBUG", "x DEBUG a\n")).toBe("<7>x DEBUG a\n");
  });

  it("prefixes every line once, empty ones too, and nothing after the last newline", () => {
    expect(withPriority("DEBUG", "Error: boom\n\n    at f (a.ts:1:1)\n")).toBe(
      "<7>Error: boom\n<7>\n<7>    at f (a.ts:1:1)\n",
    );
    expect(withPriority("ERROR", "<6>a message that starts like a prefix\n")).toBe(
      "<3><6>a message that starts like a prefix\n",
    );
    expect(withPriority("ERROR", "")).toBe("");
  });
});

/**
 * A real tool run (runTool, toolLogger, runMain's error line) with its stderr on a file, as systemd gives a service
 * its stderr on a socket; JOURNAL_STREAM names that file or not.
 */
async function runWithStderrOnFile(name: string, journalStream: (stderrFd: number) => string | undefined) {
  const root = join(dir.path, name);
  const stderrFile = join(dir.path, `${name}.stderr`);
  const fd = openSync(stderrFile, "w");
  const value = journalStream(fd);
  const env = toolEnv(root, value === undefined ? {} : { JOURNAL_STREAM: value });
  const src = (file: string) => JSON.stringify(new URL(`../src/${file}`, import.meta.url).href);
  const script = `
    import { ConfigError } from ${src("errors.ts")};
    import { toolLogger } from ${src("log.ts")};
    import { runTool } from ${src("tool.ts")};
    await runTool({ name: "idle-monitor", usage: "$0", argv: [], commands: [{ command: "$0", describe: false,
      run: async (ctx) => {
        const logger = toolLogger({ logDir: ctx.paths.logDir, file: "mc-idle-monitor.log", stderr: ctx.stderr, env: ctx.env });
        logger.info("server empty for 10 min");
        logger.warn("backup is 27 h old");
        logger.error("idle backup failed");
        throw new ConfigError("SERVER_ID is empty", { where: "backup.env line 3", hint: "give it a value" });
      } }] });`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    env,
    stdio: ["ignore", "ignore", fd],
  });
  const code = await new Promise((resolve) => child.once("exit", resolve));
  closeSync(fd);
  const untimed = (text: string) => text.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/g, "T");
  return {
    code,
    stderr: untimed(readFileSync(stderrFile, "utf8")),
    log: untimed(readFileSync(join(root, "log", "mc-idle-monitor.log"), "utf8")),
  };
}

describe("a tool whose stderr is the journal", () => {
  const file = "T INFO server empty for 10 min\nT WARN backup is 27 h old\nT ERROR idle backup failed\n";
  const error = "idle-monitor: SERVER_ID is empty (backup.env line 3) — give it a value\n";

  it("writes its warnings, errors and error line with priorities; its log file stays plain", async () => {
    const run = await runWithStderrOnFile("journal", devIno);
    expect(run.code).toBe(78);
    expect(run.stderr).toBe(`<4>T WARN backup is 27 h old\n<3>T ERROR idle backup failed\n<3>${error}`);
    expect(run.log).toBe(file);
  });

  it("writes them as before when JOURNAL_STREAM names another file or is unset", async () => {
    const plain = `T WARN backup is 27 h old\nT ERROR idle backup failed\n${error}`;
    const other = openFile("not-this-stderr");
    const wrong = await runWithStderrOnFile("wrong", () => devIno(other));
    closeSync(other);
    expect(wrong).toEqual({ code: 78, stderr: plain, log: file });
    expect(await runWithStderrOnFile("unset", () => undefined)).toEqual({ code: 78, stderr: plain, log: file });
  });
});
