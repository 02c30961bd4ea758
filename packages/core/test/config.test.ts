import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  absolutePathSchema,
  field,
  flagOptions,
  fromBackupEnv,
  gameAddressField,
  listSchema,
  loadNotifyConfig,
  loadSettings,
  panelFields,
  redactWebhookUrl,
  type Setting,
  setting,
  worldDirField,
} from "../src/config/index.ts";
import { ConfigError, UsageError } from "../src/errors.ts";
import type { Paths } from "../src/paths.ts";
import { clearSecrets, redact } from "../src/secrets.ts";

const KEY = `ptlc_${"k".repeat(21)}${"Q".repeat(22)}`;
const UUID = "1a2b3c4d-0000-4000-8000-00000000abcd";
const HOOK = `https://discord.example/api/webhooks/112233445566778899/${"t".repeat(30)}`;
const ALL = [
  "CONTROL_URL",
  "CONTROL_KEY",
  "SERVER_ID",
  "WORLD_DIR",
  "RESTIC_REPOSITORY",
  "RESTIC_PASSWORD_FILE",
] as const;

let paths: Paths;

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
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

/**
 * backup.env's fields as a tool declares them: the shared ones from core, and two of a tool's own (backup's own
 * fields, with their checks, are tested in packages/world, beside their declaration). A field gets a flag when a test
 * gives one.
 */
const FIELDS: Record<string, Setting> = {
  ...panelFields,
  WORLD_DIR: worldDirField,
  RESTIC_REPOSITORY: setting(field()),
  RESTIC_PASSWORD_FILE: setting(absolutePathSchema, { default: "/root/.restic-password" }),
  GAME_ADDRESS: gameAddressField,
};

function load(
  names: readonly string[],
  options: {
    paths: Paths;
    env: NodeJS.ProcessEnv;
    flags?: Record<string, string>;
    flagNames?: Record<string, string>;
  },
): Record<string, unknown> {
  const { flags = {}, flagNames = {} } = options;
  const flagName = (name: string) => flagNames[name] ?? name.toLowerCase().replaceAll("_", "-");
  const fields = Object.fromEntries(
    names.map((name) => {
      const declared = FIELDS[name] as Setting;
      return [name, name in flags ? { ...declared, flag: { name: flagName(name), describe: "" } } : declared];
    }),
  );
  const args = Object.fromEntries(Object.entries(flags).map(([name, value]) => [flagName(name), value]));
  return fromBackupEnv(fields, { paths: options.paths, env: options.env, args });
}

beforeEach(() => {
  const root = mkdtempSync(join(tmpdir(), "mcops-config-"));
  paths = { configDir: root, logDir: root, stateDir: root, runDir: root };
  clearSecrets();
});

describe("fromBackupEnv", () => {
  it("reads every docs/system.md 2.1 field, with the password file's default", () => {
    const file = write("backup.env", goodBackupEnv());
    expect(load(ALL, { paths, env: {} })).toEqual({
      CONTROL_URL: "https://panel.example.com",
      CONTROL_KEY: KEY,
      SERVER_ID: "1a2b3c4d",
      WORLD_DIR: `/var/lib/pterodactyl/volumes/${UUID}`,
      RESTIC_REPOSITORY: "rclone:gdrive:mc-backups",
      RESTIC_PASSWORD_FILE: "/root/.restic-password",
      file,
    });
  });

  it("takes a flag over the environment, the environment over the file, the file over the default", () => {
    write("backup.env", goodBackupEnv({ SERVER_ID: "aaaaaaaa", RESTIC_PASSWORD_FILE: "/etc/restic-pw" }));
    const env = { SERVER_ID: "bbbbbbbb", RESTIC_PASSWORD_FILE: "/env/pw" };
    expect(load(["SERVER_ID", "RESTIC_PASSWORD_FILE"], { paths, env }).SERVER_ID).toBe("bbbbbbbb");
    const flagged = load(["SERVER_ID", "RESTIC_PASSWORD_FILE"], {
      paths,
      env,
      flags: { SERVER_ID: "cccccccc" },
    });
    expect(flagged).toMatchObject({ SERVER_ID: "cccccccc", RESTIC_PASSWORD_FILE: "/env/pw" });
    expect(load(["RESTIC_PASSWORD_FILE"], { paths, env: {} }).RESTIC_PASSWORD_FILE).toBe("/etc/restic-pw");
  });

  it("normalises a path: a trailing slash or a doubled one is the same volume", () => {
    for (const written of ["/srv/volumes/abc/", "/srv//volumes/./abc", "/srv/volumes/abc"]) {
      expect(absolutePathSchema.parse(written)).toBe("/srv/volumes/abc");
    }
    expect(absolutePathSchema.parse("/")).toBe("/");
  });

  it("asks only for the fields a tool needs", () => {
    write("backup.env", "SERVER_ID=1a2b3c4d\n");
    expect(load(["SERVER_ID"], { paths, env: {} }).SERVER_ID).toBe("1a2b3c4d");
  });

  it.each([
    [{ SERVER_ID: "" }, "SERVER_ID is empty", "line 3"],
    [
      { SERVER_ID: "1a2b3c" },
      "SERVER_ID must be the first 8 characters of the server's UUID (8 hex digits, got 6 characters)",
      "line 3",
    ],
    [{ SERVER_ID: UUID }, "SERVER_ID is the full server UUID", "line 3"],
    [{ SERVER_ID: `"'1a2b3c4d'"` }, "SERVER_ID has a stray quote character in it", "line 3"],
    [{ WORLD_DIR: "volumes/abc" }, 'WORLD_DIR must be an absolute path (got "volumes/abc")', "line 4"],
    [{ CONTROL_URL: "http://panel.example.com" }, "CONTROL_URL must be an https:// address (got http://)", "line 1"],
    [{ CONTROL_URL: "panel.example.com" }, "CONTROL_URL is not a URL", "line 1"],
    [
      { CONTROL_URL: "https://admin:hunter2@panel.example.com" },
      "CONTROL_URL must not hold a user name or password",
      "line 1",
    ],
    [
      { CONTROL_URL: "https://panel.example.com/api/client" },
      "CONTROL_URL must be the panel's base address, without /api/...",
      "line 1",
    ],
    [
      { CONTROL_KEY: `ptla_${"x".repeat(43)}` },
      "CONTROL_KEY is an application API key, but the client API needs a client key",
      "line 2",
    ],
    [{ CONTROL_KEY: "short" }, "CONTROL_KEY does not look like a panel client API key", "line 2"],
  ])("refuses %j with one line naming the file and the field", (override, message, line) => {
    const file = write("backup.env", goodBackupEnv(override));
    const error = configError(() => load(ALL, { paths, env: {} }));
    expect(error.message).toBe(message);
    expect(error.where).toBe(`${file} ${line}`);
    expect(error.hint).toBeTruthy();
    expect(error.exitCode).toBe(78);
  });

  it("refuses a game address whose port is not 1-65535", () => {
    write("backup.env", goodBackupEnv());
    const env = { GAME_ADDRESS: "play.example.com:99999" };
    const error = configError(() => load(["GAME_ADDRESS"], { paths, env }));
    expect(error.message).toBe("GAME_ADDRESS has port 99999, which no server listens on");
    expect(error.where).toBe("environment variable GAME_ADDRESS");
    expect(load(["GAME_ADDRESS"], { paths, env: { GAME_ADDRESS: "127.0.0.1:65535" } }).GAME_ADDRESS).toBe(
      "127.0.0.1:65535",
    );
  });

  it("says where a bad value came from when it is not the file", () => {
    write("backup.env", goodBackupEnv());
    expect(configError(() => load(ALL, { paths, env: { SERVER_ID: "x y" } })).where).toBe(
      "environment variable SERVER_ID",
    );
  });

  it("takes a bad value given as an option for a usage error (exit 2), named by its option", () => {
    write("backup.env", goodBackupEnv());
    const flagged = thrown(() => load(ALL, { paths, env: {}, flags: { WORLD_DIR: "rel" } }));
    expect(flagged).toBeInstanceOf(UsageError);
    expect(flagged).toMatchObject({ exitCode: 2, where: "--world-dir" });
    const named = { paths, env: {}, flags: { WORLD_DIR: "rel" }, flagNames: { WORLD_DIR: "dir" } };
    expect(thrown(() => load(ALL, named))).toMatchObject({ exitCode: 2, where: "--dir" });
  });

  it("names a missing field and the file to add it to", () => {
    const file = write("backup.env", goodBackupEnv({ SERVER_ID: "1a2b3c4d" }).replace(/^SERVER_ID=.*$/m, "# none"));
    const error = configError(() => load(ALL, { paths, env: {} }));
    expect(error.message).toBe("SERVER_ID is not set");
    expect(error.where).toBe(file);
    expect(error.hint).toContain(`add SERVER_ID=... to ${file}`);
  });

  it("refuses a group-readable backup.env with exit 78", () => {
    const file = write("backup.env", goodBackupEnv(), 0o644);
    const error = configError(() => load(ALL, { paths, env: {} }));
    expect(error.exitCode).toBe(78);
    expect(error.hint).toBe(`run: chmod 600 ${file}`);
  });

  it("registers the panel key as a secret so that no output can show it", () => {
    write("backup.env", goodBackupEnv());
    load(ALL, { paths, env: {} });
    expect(redact(`Authorization: Bearer ${KEY}`)).toBe("Authorization: Bearer ***");
  });
});

describe("loadNotifyConfig", () => {
  it("is silent (no address) when neither webhook.env nor webhook.json exists", () => {
    const config = loadNotifyConfig({ paths, env: {} });
    expect(config.webhookUrl).toBeUndefined();
    expect(Object.values(config.events).every(Boolean)).toBe(true);
  });

  it("reads WEBHOOK_URL and PLAY_HOST from webhook.env and keeps the token secret", () => {
    const file = write("webhook.env", `WEBHOOK_URL=${HOOK}\nPLAY_HOST=play.example.com\n`);
    const config = loadNotifyConfig({ paths, env: {} });
    expect(config).toMatchObject({ webhookUrl: HOOK, source: file, playHost: "play.example.com" });
    expect(redact(HOOK)).not.toContain("t".repeat(30));
    expect(redactWebhookUrl(HOOK)).toBe("https://discord.example/api/webhooks/112233445566778899/***");
  });

  it("takes the machine's name as the play host when PLAY_HOST is not set", async () => {
    write("webhook.env", `WEBHOOK_URL=${HOOK}\n`);
    expect(loadNotifyConfig({ paths, env: {} }).playHost).toBe((await import("node:os")).hostname());
  });

  it("lets webhook.json's address win over webhook.env, and turns categories off", () => {
    write("webhook.env", `WEBHOOK_URL=${HOOK}\n`);
    const other = HOOK.replace("112233445566778899", "998877665544332211");
    const json = write("webhook.json", JSON.stringify({ webhook_url: other, events: { death: false }, theme: "dark" }));
    const config = loadNotifyConfig({ paths, env: {} });
    expect(config.webhookUrl).toBe(other);
    expect(config.source).toBe(json);
    expect(config.events.death).toBe(false);
    expect(config.events.join).toBe(true);
  });

  it.each([
    [
      `WEBHOOK_URL=https://discord.example/api/webhooks/abc/${"t".repeat(30)}`,
      "WEBHOOK_URL is not a webhook address of the form <scheme>://<host>/api/webhooks/<id>/<token>",
    ],
    ["WEBHOOK_URL=http://discord.example/api/webhooks/1/abc", "WEBHOOK_URL must be an https:// address (got http://)"],
    ["WEBHOOK_URL=", "WEBHOOK_URL is empty"],
  ])("refuses a malformed webhook.env (%s)", (text, message) => {
    write("webhook.env", text);
    const error = configError(() => loadNotifyConfig({ paths, env: {} }));
    expect(error.message).toBe(message);
    expect(error.exitCode).toBe(78);
  });

  it("holds webhook.json to mode 600 only when it has the webhook address", () => {
    write("webhook.env", `WEBHOOK_URL=${HOOK}\n`);
    write("webhook.json", JSON.stringify({ events: { join: false } }), 0o644);
    expect(loadNotifyConfig({ paths, env: {} }).events.join).toBe(false);
    const file = write("webhook.json", JSON.stringify({ webhook_url: HOOK, events: {} }), 0o644);
    const error = configError(() => loadNotifyConfig({ paths, env: {} }));
    expect(error).toMatchObject({ exitCode: 78, where: file, hint: `run: chmod 600 ${file}` });
    expect(error.message).toBe("holds secrets but is readable by group and others (mode 644)");
  });

  it("refuses unknown categories and broken JSON in webhook.json, naming the file", () => {
    const file = write("webhook.json", JSON.stringify({ events: { joins: true } }));
    const error = configError(() => loadNotifyConfig({ paths, env: {} }));
    expect(error.message).toBe("events has unknown keys joins");
    expect(error.where).toBe(file);
    write("webhook.json", "{ nope");
    expect(configError(() => loadNotifyConfig({ paths, env: {} })).message).toMatch(/^is not valid JSON/);
  });

  it("refuses a value of the wrong type in webhook.json, naming the field", () => {
    const file = write("webhook.json", JSON.stringify({ events: { join: "yes" } }));
    const error = configError(() => loadNotifyConfig({ paths, env: {} }));
    expect(error.message).toBe("events.join must be true or false");
    write("webhook.json", "[]");
    expect(configError(() => loadNotifyConfig({ paths, env: {} })).message).toBe("(top level) must be an object");
    expect(error.where).toBe(file);
    expect(error.exitCode).toBe(78);
  });

  it("refuses a webhook.env that others can read", () => {
    write("webhook.env", `WEBHOOK_URL=${HOOK}\n`, 0o604);
    expect(configError(() => loadNotifyConfig({ paths, env: {} })).message).toMatch(/readable by others/);
  });
});

describe("loadSettings: a field declared once gives its flag, its env name and its file line", () => {
  const fields = {
    EXTRA: setting(listSchema, { flag: { name: "extra-path", array: true, describe: "also back up this path" } }),
    DIR: setting(absolutePathSchema, { flag: { name: "dir", describe: "the volume" } }),
    TOKEN: setting(field(), { secret: true }),
  };
  const missingHint = "add {name}=... to the file";

  it("makes yargs options of the flags, in their declared order", () => {
    expect(flagOptions(fields)).toEqual({
      "extra-path": { type: "string", describe: "also back up this path", array: true },
      dir: { type: "string", describe: "the volume" },
    });
  });

  it("joins a repeatable flag's values as the file writes a list, and takes an empty one as not given", () => {
    const file = write("tool.env", "EXTRA=config\nDIR=/srv\nTOKEN=abcdef123456\n");
    const args = { "extra-path": ["plugins", "mods"], dir: undefined };
    expect(loadSettings(fields, { file, env: {}, args, missingHint })).toMatchObject({
      EXTRA: ["plugins", "mods"],
      DIR: "/srv",
    });
    expect(loadSettings(fields, { file, env: {}, args: { "extra-path": [] }, missingHint }).EXTRA).toEqual(["config"]);
  });

  it("refuses a plain flag given twice, named by its flag (exit 2)", () => {
    const file = write("tool.env", "EXTRA=config\nDIR=/srv\nTOKEN=abcdef123456\n");
    const error = thrown(() => loadSettings(fields, { file, env: {}, args: { dir: ["/x", "/y"] }, missingHint }));
    expect(error).toBeInstanceOf(UsageError);
    expect(error).toMatchObject({ message: "DIR must be a string", where: "--dir", exitCode: 2 });
  });

  it("registers a secret field's value, and says how to add a missing field", () => {
    const file = write("tool.env", "EXTRA=config\nDIR=/srv\nTOKEN=abcdef123456\n");
    loadSettings(fields, { file, env: {}, missingHint });
    expect(redact("token abcdef123456")).toBe("token ***");
    const bare = write("bare.env", "EXTRA=config\n");
    expect(configError(() => loadSettings(fields, { file: bare, env: {}, missingHint }))).toMatchObject({
      message: "DIR is not set",
      where: bare,
      hint: "add DIR=... to the file",
    });
  });
});
