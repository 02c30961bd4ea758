import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, UsageError } from "@mcops/core/errors";
import type { Paths } from "@mcops/core/paths";
import { clearSecrets, redact } from "@mcops/core/secrets";
import { beforeEach, describe, expect, it } from "vitest";
import { loadSettings } from "../src/settings.ts";

// backup.env's fields as backup and jar-download read them, and their tests (from core's test/config.test.ts, then
// from backup's).

const KEY = `ptlc_${"k".repeat(21)}${"Q".repeat(22)}`;
const UUID = "1a2b3c4d-0000-4000-8000-00000000abcd";

let paths: Paths;
let passwordFile: string;

function write(name: string, text: string, mode = 0o600): string {
  const file = join(paths.configDir, name);
  writeFileSync(file, text);
  chmodSync(file, mode);
  return file;
}

function goodBackupEnv(overrides: Record<string, string> = {}): string {
  const fields: Record<string, string> = {
    CONTROL_URL: "https://panel.example.com/",
    CONTROL_KEY: KEY,
    SERVER_ID: "1a2b3c4d",
    WORLD_DIR: `/var/lib/pterodactyl/volumes/${UUID}`,
    RESTIC_REPOSITORY: "rclone:gdrive:mc-backups",
    RESTIC_PASSWORD_FILE: passwordFile,
    ...overrides,
  };
  return Object.entries(fields)
    .map(([k, v]) => `${k}=${v}`)
    .join("\n");
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error");
}

function configError(fn: () => unknown): ConfigError {
  const error = thrown(fn);
  if (error instanceof ConfigError) return error;
  throw error;
}

beforeEach(() => {
  const root = mkdtempSync(join(tmpdir(), "mcops-backup-settings-"));
  paths = { configDir: root, logDir: join(root, "log"), stateDir: root, runDir: root };
  passwordFile = join(root, "restic-password");
  writeFileSync(passwordFile, "a repository password\n", { mode: 0o600 });
  clearSecrets();
});

describe("backup's settings", () => {
  it("registers the user and password inside RESTIC_REPOSITORY as secrets", () => {
    clearSecrets();
    write("backup.env", goodBackupEnv({ RESTIC_REPOSITORY: "rest:https://backup:s3cr%40t@repo.example:8000/mc/" }));
    loadSettings({ paths, env: {} });
    expect(redact("to rest:https://backup:s3cr%40t@repo.example:8000/mc/")).toBe(
      "to rest:https://***@repo.example:8000/mc/",
    );
    expect(redact("restic said s3cr@t and s3cr%40t")).toBe("restic said *** and ***");
    clearSecrets();
    write("backup.env", goodBackupEnv({ RESTIC_REPOSITORY: "rest:http://u:pw@h/" }));
    loadSettings({ paths, env: {} });
    expect(redact("rest:http://u:pw@h/")).not.toContain("pw");
  });

  it.each([
    ["rest:http://mcops:hunter2@pw-x@host:8000/", "hunter2@pw-x"],
    ["sftp:backup:s3cretpass@host.example:/srv/restic", "s3cretpass"],
    [
      "rclone:s3,provider=AWS,access_key_id=AKIAEXAMPLE,secret_access_key=wJalrXUtnFEMIK7MDENG:bucket/mc",
      "wJalrXUtnFEMIK7MDENG",
    ],
  ])("never shows the credential inside %s", (repository, secret) => {
    clearSecrets();
    write("backup.env", goodBackupEnv({ RESTIC_REPOSITORY: repository }));
    loadSettings({ paths, env: {} });
    expect(redact(`unable to open repository at ${repository}: ${secret}`)).not.toContain(secret);
  });

  it.each([
    [{ RESTIC_REPOSITORY: "rclone:gdrive" }, "RESTIC_REPOSITORY must have the form rclone:<remote>:<folder>", "line 5"],
  ])("refuses %j with one line naming the file and the field", (override, message, line) => {
    const file = write("backup.env", goodBackupEnv(override));
    const error = configError(() => loadSettings({ paths, env: {} }));
    expect(error.message).toBe(message);
    expect(error.where).toBe(`${file} ${line}`);
    expect(error.hint).toBeTruthy();
    expect(error.exitCode).toBe(78);
  });

  it("takes --extra-path, --exclude and --owner over backup.env, and names the option whose value is wrong", () => {
    write("backup.env", goodBackupEnv({ BACKUP_EXTRA_PATHS: "plugins", BACKUP_EXCLUDE: "*.tmp", BACKUP_OWNER: "1:1" }));
    const args = { "extra-path": ["config", "mods"], exclude: ["cache"], owner: "4321:8765" };
    expect(loadSettings({ paths, env: {} }, args)).toMatchObject({
      BACKUP_EXTRA_PATHS: ["config", "mods"],
      BACKUP_EXCLUDE: ["cache"],
      owner: { uid: 4321, gid: 8765 },
    });
    const flagged = thrown(() => loadSettings({ paths, env: {} }, { owner: "nobody" }));
    expect(flagged).toBeInstanceOf(UsageError);
    expect(flagged).toMatchObject({ exitCode: 2, where: "--owner" });
  });

  it("keeps the defaults of the keys backup.env leaves out, and names the backup log where MCOPS_LOG_DIR puts it", () => {
    write("backup.env", goodBackupEnv());
    expect(loadSettings({ paths, env: {} })).toMatchObject({
      retention: { keepLast: 1, keepDaily: 30, keepWeekly: 12 },
      BACKUP_PRUNE: true,
      saveTimeoutMs: 60_000,
      BACKUP_MAX_FILE_SIZE: "4G",
      BACKUP_ISOLATE: true,
      owner: { uid: 988, gid: 988 },
      tags: ["mcops", "server-1a2b3c4d"],
      logFile: join(paths.logDir, "mc-backup.log"),
    });
  });
});
