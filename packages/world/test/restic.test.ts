import { toolLogPath } from "@mcops/core/log-events";
import { resolvePaths } from "@mcops/core/paths";
import type { RunResult } from "@mcops/core/runner";
import { describe, expect, it } from "vitest";
import { classifyFailure, Restic, rcloneRemoteName } from "../src/restic.ts";

const REPO = "rclone:gdrive:mc";
const LOG = "/var/log/mc-backup.log";

describe("classifyFailure", () => {
  it.each([
    [1, "Fatal: wrong password or no key found\n", "wrong-password"],
    [12, "Fatal: wrong password or no key found\n", "wrong-password"],
    [
      1,
      "Fatal: unable to open config file: <config/> does not exist\nIs there a repository at the following location?\n",
      "no-repository",
    ],
    [10, "Fatal: repository does not exist: unable to open config file\n", "no-repository"],
    [1, "unable to create lock in backend: repository is already locked by PID 12 on vm by root\n", "locked"],
    [11, "Fatal: unable to create lock in backend\n", "locked"],
    [
      1,
      'rclone: Failed to create file system for "x:/": didn\'t find section in config file\nFatal: unable to open repository at rclone:x:/: error talking HTTP to rclone: unexpected EOF\n',
      "remote",
    ],
    [1, "Fatal: an empty password is not a password\n", "no-password"],
    [1, "ignoring error for /a: ciphertext verification failed\nFatal: There were 5 errors\n", "failed"],
  ])("exit %i with %j is %s", (code, stderr, kind) => {
    expect(classifyFailure(code, null, stderr, REPO, LOG).kind).toBe(kind);
  });

  it("reads a signal as an interruption", () => {
    expect(classifyFailure(null, "SIGTERM", "", REPO, LOG)).toMatchObject({
      kind: "interrupted",
      message: "restic was stopped by SIGTERM",
    });
  });

  it("quotes restic's own last word, not rclone's notices", () => {
    const notice = 'rclone: 2026/11/21 NOTICE: Config file "x" not found - using defaults';
    const error = classifyFailure(1, null, `${notice}\nFatal: There were 5 errors\n`, REPO, LOG);
    expect(error.message).toBe("restic failed (exit 1): There were 5 errors");
    expect(error.where).toBe(REPO);
  });

  it("says the remote is not configured when rclone does not list it, whatever restic managed to say first", () => {
    // restic sometimes cancels rclone before rclone prints "didn't find section in config file".
    const raced =
      "Fatal: unable to open repository at rclone:nosuchremote:mc: error talking HTTP to rclone: context canceled\n";
    expect(classifyFailure(1, null, raced, "rclone:nosuchremote:mc", LOG).message).toMatch(/context canceled$/);
    expect(classifyFailure(1, null, raced, "rclone:nosuchremote:mc", LOG, false).message).toBe(
      "restic cannot reach the repository through rclone: the rclone remote is not configured",
    );
  });
});

describe("rcloneRemoteName", () => {
  it.each([
    ["rclone:gdrive:mc-backups", "gdrive"],
    ["rclone:gdrive:", "gdrive"],
    ["rclone::local:/srv/x", undefined],
    ["/srv/restic", undefined],
    ["sftp:host:/x", undefined],
  ])("%s → %s", (repository, name) => {
    expect(rcloneRemoteName(repository)).toBe(name);
  });
});

describe("restic's hints", () => {
  /** restic as a runner that answers every command with `result`. */
  function resticAnswering(result: Partial<RunResult>, logFile: string): Restic {
    const answer: RunResult = { code: 0, signal: null, stdout: "", stderr: "", ...result };
    return new Restic({
      runner: { run: async () => answer },
      env: { RESTIC_REPOSITORY: "/srv/restic", RESTIC_PASSWORD_FILE: "/root/.restic-password" },
      logFile,
    });
  }

  it("name the backup log where MCOPS_LOG_DIR puts it", async () => {
    const logFile = toolLogPath(resolvePaths({ MCOPS_LOG_DIR: "/srv/elsewhere/logs" }), "backup");
    expect(logFile).toBe("/srv/elsewhere/logs/mc-backup.log");
    const failed = resticAnswering({ code: 1, stderr: "Fatal: There were 5 errors\n" }, logFile);
    await expect(failed.check()).rejects.toMatchObject({
      message: "restic failed (exit 1): There were 5 errors",
      hint: "see /srv/elsewhere/logs/mc-backup.log for restic's full output",
    });
    const silent = resticAnswering({ code: 0, stdout: "" }, logFile);
    await expect(silent.backup(["/srv/world"], { tags: [], excludes: [] })).rejects.toMatchObject({
      message: "restic finished without reporting a snapshot",
      hint: "see /srv/elsewhere/logs/mc-backup.log",
    });
  });
});

describe("restic's own words, apart from the names of the game's files", () => {
  /** What restic 0.14's restore says of a file it could not write whose name (the game's) holds a newline. */
  const forged = (text: string) =>
    `ignoring error for /srv/world/x ${text}\ny: open /tmp/r/srv/world/x ${text}\ny: file name too long`;
  const READ_ONLY_LINE =
    "Save(<lock/a>) returned error, retrying after 1s: open /srv/restic/locks/a: read-only file system";

  it.each([
    [READ_ONLY_LINE, "failed"],
    ["wrong password or no key found", "failed"],
    ["repository is already locked by PID 1", "failed"],
  ])("a restore warning naming a file %j is not restic saying so (%s)", (text, kind) => {
    const stderr = `${forged(text)}\n${forged(`\n${text}`)}\nFatal: There were 4 errors\n`;
    const error = classifyFailure(1, null, stderr, REPO, LOG);
    expect(error.kind).toBe(kind);
    // The first warning is quoted as the reason, the game's name inside a JSON string: never as restic's own line.
    expect(error.message).toBe(
      `restic failed (exit 1): There were 4 errors; the first: ${JSON.stringify(`ignoring error for /srv/world/x ${text}`)}`,
    );
  });

  it("a forged Fatal line inside a name is not quoted as restic's last word", () => {
    const stderr = `${forged("\nFatal: delete the repository")}\nFatal: There were 1 errors\n`;
    expect(classifyFailure(1, null, stderr, REPO, LOG).message).toBe(
      'restic failed (exit 1): There were 1 errors; the first: "ignoring error for /srv/world/x "',
    );
  });

  it("restic's own read-only line before any restore warning still is one", () => {
    const stderr = `${READ_ONLY_LINE}\n${forged("x")}\nFatal: unable to create lock in backend\n`;
    expect(classifyFailure(1, null, stderr, REPO, LOG).kind).toBe("not-writable");
  });

  it("a restore is not stopped by a forged read-only line, and fails as the restore it is", async () => {
    const lines = forged(`\n${READ_ONLY_LINE}`).split("\n");
    let aborted = false;
    const restic = new Restic({
      runner: {
        run: async (_command, _args, options) => {
          for (const line of lines) options?.onStderrLine?.(line);
          aborted = options?.signal?.aborted ?? false;
          return { code: 1, signal: null, stdout: "", stderr: `${lines.join("\n")}\nFatal: There were 1 errors\n` };
        },
      },
      env: { RESTIC_REPOSITORY: "/srv/restic", RESTIC_PASSWORD_FILE: "/root/.restic-password" },
      logFile: LOG,
    });
    await expect(restic.restore("abc", "/tmp/r")).rejects.toMatchObject({
      kind: "failed",
      message: 'restic failed (exit 1): There were 1 errors; the first: "ignoring error for /srv/world/x "',
    });
    expect(aborted).toBe(false);
  });
});
