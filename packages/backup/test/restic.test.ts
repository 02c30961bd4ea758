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
