import { describe, expect, it } from "vitest";
import { classifyFailure, rcloneRemoteName } from "./restic.ts";

const REPO = "rclone:gdrive:mc";

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
    expect(classifyFailure(code, null, stderr, REPO).kind).toBe(kind);
  });

  it("reads a signal as an interruption", () => {
    expect(classifyFailure(null, "SIGTERM", "", REPO)).toMatchObject({
      kind: "interrupted",
      message: "restic was stopped by SIGTERM",
    });
  });

  it("quotes restic's own last word, not rclone's notices", () => {
    const notice = 'rclone: 2026/11/21 NOTICE: Config file "x" not found - using defaults';
    const error = classifyFailure(1, null, `${notice}\nFatal: There were 5 errors\n`, REPO);
    expect(error.message).toBe("restic failed (exit 1): There were 5 errors");
    expect(error.where).toBe(REPO);
  });

  it("says the remote is not configured when rclone does not list it, whatever restic managed to say first", () => {
    // restic sometimes cancels rclone before rclone prints "didn't find section in config file".
    const raced =
      "Fatal: unable to open repository at rclone:nosuchremote:mc: error talking HTTP to rclone: context canceled\n";
    expect(classifyFailure(1, null, raced, "rclone:nosuchremote:mc").message).toMatch(/context canceled$/);
    expect(classifyFailure(1, null, raced, "rclone:nosuchremote:mc", false).message).toBe(
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
