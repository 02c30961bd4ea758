import { hostname } from "node:os";
import { isAbsolute } from "node:path";
import * as z from "zod/mini";
import { CATEGORIES, type Category } from "./categories.ts";
import { type EnvEntries, readConfigText, readEnvFile, refuseShared } from "./env-file.ts";
import { ConfigError, UsageError } from "./errors.ts";
import { durationMs } from "./format.ts";
import { configFile, type Paths } from "./paths.ts";
import { registerSecret } from "./secrets.ts";

/**
 * The configuration files of docs/system.md 2.1, 2.2 and docs/contract.md, with zod schemas whose messages name the field and say
 * what to do. Values are resolved flag > process environment > env file > default; an error names where the bad value
 * came from (the file and its line, the environment variable, or the flag).
 */

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

type Ctx = z.core.$RefinementCtx<string>;
type Check = (value: string, ctx: Ctx) => void;

function fail(ctx: Ctx, message: string, hint?: string): void {
  ctx.addIssue({ code: "custom", message, params: { hint } });
}

/** Every field: not empty, no stray quotes, no white space; then the field's own check. */
function field(check?: Check) {
  return z.string().check(
    z.superRefine((value, ctx) => {
      if (value === "") return fail(ctx, "is empty", "give it a value, or remove the line to use the default");
      if (/["']/.test(value)) return fail(ctx, "has a stray quote character in it", "remove the quote characters");
      if (/\s/.test(value)) return fail(ctx, "has white space in it", "remove the spaces");
      check?.(value, ctx);
    }),
  );
}

function httpUrl(value: string, ctx: Ctx, example: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    fail(ctx, "is not a URL", `write it in full, e.g. ${example}`);
    return undefined;
  }
  if (url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK.has(url.hostname))) return url;
  fail(ctx, `must be an https:// address (got ${url.protocol}//)`, `use ${example}`);
  return undefined;
}

export const panelUrlSchema = z.pipe(
  field((value, ctx) => {
    const url = httpUrl(value, ctx, "https://panel.example.com");
    if (url && /\/api(\/|$)/.test(url.pathname)) {
      fail(ctx, "must be the panel's base address, without /api/...", `use ${url.origin}`);
    }
  }),
  z.transform((value: string) => value.replace(/\/+$/, "")),
);

export const clientKeySchema = field((value, ctx) => {
  if (value.startsWith("ptla_")) {
    return fail(
      ctx,
      "is an application API key, but the client API needs a client key",
      "create one under Account → API Credentials in the panel (it starts with ptlc_)",
    );
  }
  if (!/^ptlc_[A-Za-z0-9]{20,}$/.test(value) && !/^[A-Za-z0-9]{32,}$/.test(value)) {
    fail(ctx, "does not look like a panel client API key", "copy it again from Account → API Credentials (ptlc_...)");
  }
});

export const serverIdSchema = field((value, ctx) => {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) {
    return fail(ctx, "is the full server UUID", `use its first 8 characters: ${value.slice(0, 8).toLowerCase()}`);
  }
  if (!/^[0-9a-f]{8}$/.test(value)) {
    fail(
      ctx,
      `must be the first 8 characters of the server's UUID (8 hex digits, got ${value.length} characters)`,
      "copy it from the panel's address of the server: /server/<8 characters>",
    );
  }
});

export const absolutePathSchema = field((value, ctx) => {
  if (!isAbsolute(value)) fail(ctx, `must be an absolute path (got "${value}")`, "start it with /");
});

export const resticRepositorySchema = field((value, ctx) => {
  if (value.startsWith("rclone:")) {
    if (!/^rclone:[^:/]+:.+$/.test(value)) {
      fail(ctx, "must have the form rclone:<remote>:<folder>", "e.g. rclone:gdrive:mc-backups");
    }
  } else if (!isAbsolute(value) && !/^(sftp|rest|s3|b2|azure|gs|swift):/.test(value)) {
    fail(ctx, "is not a restic repository location", "use rclone:<remote>:<folder> (docs/system.md 2.1)");
  }
});

const WEBHOOK_PATH = /^\/api(?:\/v\d+)?\/webhooks\/(\d+)\/([A-Za-z0-9_-]+)\/?$/;

export const webhookUrlSchema = field((value, ctx) => {
  const url = httpUrl(value, ctx, "https://discord.com/api/webhooks/<id>/<token>");
  if (url && !WEBHOOK_PATH.test(url.pathname)) {
    fail(
      ctx,
      "is not a webhook address of the form <scheme>://<host>/api/webhooks/<id>/<token>",
      "copy the address from the channel's Integrations → Webhooks → Copy Webhook URL",
    );
  }
});

/** The token part of a webhook address: the credential (docs/system.md 5). */
export function webhookToken(url: string): string | undefined {
  try {
    return WEBHOOK_PATH.exec(new URL(url).pathname)?.[2];
  } catch {
    return undefined;
  }
}

/** The webhook address with its token replaced by ***, for messages. */
export function redactWebhookUrl(url: string): string {
  const token = webhookToken(url);
  return token ? url.replace(token, "***") : url;
}

export const hostSchema = field((value, ctx) => {
  const match = /^[A-Za-z0-9.-]+(?::(\d{1,5}))?$/.exec(value);
  if (!match) fail(ctx, "is not a host name", "e.g. play.example.com");
  else if (match[1] !== undefined && !(Number(match[1]) >= 1 && Number(match[1]) <= 65535))
    fail(ctx, `has port ${match[1]}, which no server listens on`, "a port is 1-65535, e.g. play.example.com:25565");
});

const countSchema = z.pipe(
  field((value, ctx) => {
    if (!/^\d{1,6}$/.test(value)) fail(ctx, "must be a whole number", "e.g. 30");
  }),
  z.transform((value: string) => Number(value)),
);

const secondsSchema = z.pipe(
  field((value, ctx) => {
    if (!/^\d{1,6}$/.test(value) || Number(value) === 0) fail(ctx, "must be a number of seconds above 0", "e.g. 60");
  }),
  z.transform((value: string) => Number(value)),
);

/** A file size as restic writes it: digits and a unit k, m, g or t (binary). */
const sizeSchema = field((value, ctx) => {
  if (!/^\d{1,9}[kmgt]$/i.test(value) || /^0+[kmgt]$/i.test(value)) {
    fail(ctx, "must be a size above 0 with its unit", "e.g. 4G (k, m, g or t)");
  }
});

const yesNoSchema = z.pipe(
  field((value, ctx) => {
    if (!/^(yes|no|true|false|on|off|1|0)$/i.test(value)) fail(ctx, "must be yes or no", "e.g. yes");
  }),
  z.transform((value: string) => /^(yes|true|on|1)$/i.test(value)),
);

/** Comma-separated, no spaces (an env value cannot hold them unquoted); empty items dropped. */
const listSchema = z.pipe(
  field(),
  z.transform((value: string) => value.split(",").filter(Boolean)),
);

const ownerSchema = z.pipe(
  field((value, ctx) => {
    if (!/^\d+:\d+$/.test(value))
      fail(ctx, "must be uid:gid in numbers", "the container's user is 988:988 (docs/system.md 2.6)");
  }),
  z.transform((value: string) => {
    const [uid, gid] = value.split(":").map(Number) as [number, number];
    return { uid, gid };
  }),
);

const pingUrlSchema = field((value, ctx) => {
  httpUrl(value, ctx, "https://hc-ping.com/<uuid>");
});

/** A service's base address (a mirror, or a stand-in in tests); no trailing slash. */
const baseUrlSchema = z.pipe(
  field((value, ctx) => {
    httpUrl(value, ctx, "https://fill.papermc.io");
  }),
  z.transform((value: string) => value.replace(/\/+$/, "")),
);

const contactSchema = field((value, ctx) => {
  if (!/^(https?:\/\/\S+|[^@\s]+@[^@\s]+\.[^@\s]+)$/.test(value)) {
    fail(ctx, "must be an e-mail address or an https:// address", "e.g. admin@example.com");
  }
});

const durationSchema = z.pipe(
  field((value, ctx) => {
    if (!durationMs(value)) fail(ctx, "is not a duration above 0", "write it like 30m, 90s or 2h");
  }),
  z.transform((value: string) => durationMs(value) as number),
);

/** A duration, or off (0, no, off): undefined. */
const durationOrOffSchema = z.pipe(
  field((value, ctx) => {
    if (!/^(off|no|0)$/i.test(value) && !durationMs(value)) {
      fail(ctx, "is not a duration or off", "write it like 2h, or off");
    }
  }),
  z.transform((value: string) => (/^(off|no|0)$/i.test(value) ? undefined : durationMs(value))),
);

export const backupEnvSchema = z.object({
  CONTROL_URL: panelUrlSchema,
  CONTROL_KEY: clientKeySchema,
  SERVER_ID: serverIdSchema,
  WORLD_DIR: absolutePathSchema,
  RESTIC_REPOSITORY: resticRepositorySchema,
  RESTIC_PASSWORD_FILE: absolutePathSchema,
  // mcops extensions (all optional; see packages/backup/README.md)
  /** Extra paths to back up, relative to WORLD_DIR or absolute: plugins,config */
  BACKUP_EXTRA_PATHS: z.optional(listSchema),
  /** restic --exclude patterns */
  BACKUP_EXCLUDE: z.optional(listSchema),
  BACKUP_KEEP_LAST: z.optional(countSchema),
  BACKUP_KEEP_DAILY: z.optional(countSchema),
  BACKUP_KEEP_WEEKLY: z.optional(countSchema),
  /** Retention after each backup (default yes). */
  BACKUP_PRUNE: z.optional(yesNoSchema),
  /** How long to wait for "Saved the game" after save-all flush (default 60). */
  BACKUP_SAVE_TIMEOUT: z.optional(secondsSchema),
  /** Owner of what the tools put into the volume: restored worlds, server.jar (default 988:988, docs/system.md 2.6). */
  BACKUP_OWNER: z.optional(ownerSchema),
  /** Files larger than this are left out of the backup (default 4G): no world file comes near it. */
  BACKUP_MAX_FILE_SIZE: z.optional(sizeSchema),
  /** restic reads the volume in a mount namespace where no link is followed (default yes; no is unsafe). */
  BACKUP_ISOLATE: z.optional(yesNoSchema),
  /** Dead-man's switch, Healthchecks style: <url>/start, <url>, <url>/fail. */
  BACKUP_PING_URL: z.optional(pingUrlSchema),
  /** node_exporter textfile collector directory for mcops_backup.prom. */
  BACKUP_TEXTFILE_DIR: z.optional(absolutePathSchema),
  /** The game port for the Server List Ping (default 127.0.0.1:25565). */
  GAME_ADDRESS: z.optional(hostSchema),
  // jar-download (see packages/jar-download/README.md)
  /** PaperMC's download service, docs/system.md 4.3's {download_base} (default https://fill.papermc.io). */
  DOWNLOAD_BASE: z.optional(baseUrlSchema),
  PURPUR_BASE: z.optional(baseUrlSchema),
  MOJANG_BASE: z.optional(baseUrlSchema),
  FABRIC_BASE: z.optional(baseUrlSchema),
  /** The operator's contact, put into the User-Agent as PaperMC asks of every client. */
  DOWNLOAD_CONTACT: z.optional(contactSchema),
  // idle-monitor (see packages/idle-monitor/README.md)
  /** How long the server must stay empty after play before the idle backup (default 30m). */
  IDLE_AFTER: z.optional(durationSchema),
  /** Least time between two idle backups (default 2h). */
  IDLE_COOLDOWN: z.optional(durationSchema),
  /** How often to look (default 60s). */
  IDLE_POLL: z.optional(durationSchema),
  /** Stop the server after it stayed empty this long, once the idle backup succeeded (default off). */
  IDLE_STOP_AFTER: z.optional(durationOrOffSchema),
  /** The backup executable (default /opt/mc-tools/backup). */
  IDLE_BACKUP_COMMAND: z.optional(absolutePathSchema),
  /** An executable run after an idle stop (e.g. the hibernate tool); none by default. */
  IDLE_STOP_COMMAND: z.optional(absolutePathSchema),
});
export type BackupEnv = z.infer<typeof backupEnvSchema>;

export const backupEnvDefaults: Partial<Record<keyof BackupEnv, string>> = {
  RESTIC_PASSWORD_FILE: "/root/.restic-password",
};

export const webhookEnvSchema = z.object({
  WEBHOOK_URL: webhookUrlSchema,
  /** Not in docs/system.md 2.2: the play host name shown in message footers (mcops extension, optional). */
  PLAY_HOST: z.optional(hostSchema),
});
export type WebhookEnv = z.infer<typeof webhookEnvSchema>;

export const webhookJsonSchema = z.looseObject({
  webhook_url: z.optional(webhookUrlSchema),
  events: z.optional(
    z.strictObject(
      Object.fromEntries(CATEGORIES.map((c) => [c, z.optional(z.boolean())])) as Record<
        Category,
        z.ZodMiniOptional<z.ZodMiniBoolean>
      >,
    ),
  ),
});
export type WebhookJson = z.infer<typeof webhookJsonSchema>;

/** Where one value came from, for error messages. */
type Origin =
  | { kind: "flag"; flag: string }
  | { kind: "environment" }
  | { kind: "file"; file: string; line: number }
  | { kind: "default" };

function describeOrigin(name: string, origin: Origin | undefined, file: string): string {
  switch (origin?.kind) {
    case "flag":
      return `--${origin.flag}`;
    case "environment":
      return `environment variable ${name}`;
    case "file":
      return `${origin.file} line ${origin.line}`;
    default:
      return file;
  }
}

export interface LoadEnvOptions {
  paths: Paths;
  /** The process environment (precedence over the file). */
  env?: NodeJS.ProcessEnv | undefined;
  /** Command-line values by field name (precedence over everything). */
  flags?: Record<string, string | undefined> | undefined;
  /** The option each field of `flags` came from, for error messages (default: the field's name, `IDLE_POLL` → `idle-poll`). */
  flagNames?: Record<string, string> | undefined;
}

interface Resolved {
  input: Record<string, string>;
  origins: Map<string, Origin>;
}

function resolveFields(
  names: readonly string[],
  entries: EnvEntries | undefined,
  file: string,
  { env = process.env, flags = {}, flagNames = {} }: LoadEnvOptions,
  defaults: Partial<Record<string, string>> = {},
): Resolved {
  const input: Record<string, string> = {};
  const origins = new Map<string, Origin>();
  for (const name of names) {
    const flag = flags[name];
    const entry = entries?.get(name);
    if (flag !== undefined) {
      input[name] = flag;
      origins.set(name, { kind: "flag", flag: flagNames[name] ?? name.toLowerCase().replaceAll("_", "-") });
    } else if (env[name] !== undefined) {
      input[name] = env[name] as string;
      origins.set(name, { kind: "environment" });
    } else if (entry) {
      input[name] = entry.value;
      origins.set(name, { kind: "file", file, line: entry.line });
    } else if (defaults[name] !== undefined) {
      input[name] = defaults[name] as string;
      origins.set(name, { kind: "default" });
    }
  }
  return { input, origins };
}

/** An operator's words for a zod issue (zod/mini carries no message text of its own). */
function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_type":
      if (issue.expected === "boolean") return "must be true or false";
      return `must be ${/^[aeiou]/.test(issue.expected) ? "an" : "a"} ${issue.expected}`;
    case "unrecognized_keys":
      return `has unknown keys ${issue.keys.join(", ")}`;
    default:
      return issue.message;
  }
}

function parseOrThrow<S extends z.ZodMiniType>(
  schema: S,
  resolved: Resolved,
  file: string,
  missingHint: string,
): z.infer<S> {
  const result = schema.safeParse(resolved.input);
  if (result.success) return result.data;
  const issue = result.error.issues[0] as z.core.$ZodIssue;
  const name = issue.path.map(String).join(".");
  const origin = resolved.origins.get(String(issue.path[0]));
  if (resolved.input[String(issue.path[0])] === undefined) {
    throw new ConfigError(`${name} is not set`, { where: file, hint: missingHint.replace("{name}", name) });
  }
  const hint = (issue as { params?: { hint?: string } }).params?.hint;
  const where = describeOrigin(name, origin, file);
  // A bad value typed on the command line is a usage error (exit 2); one in a file or the environment, configuration.
  if (origin?.kind === "flag") throw new UsageError(`${name} ${describeIssue(issue)}`, { where, hint });
  throw new ConfigError(`${name} ${describeIssue(issue)}`, { where, hint });
}

/**
 * Loads the fields a tool needs from backup.env (docs/system.md 2.1). The file is secret (mode 600); it may be absent when
 * every field comes from the environment or flags. Other tools' keys in the file are left alone.
 */
export function loadBackupEnv<K extends keyof BackupEnv>(
  fields: readonly K[],
  options: LoadEnvOptions,
): Pick<BackupEnv, K> & { file: string } {
  const file = configFile(options.paths, "backup.env");
  const entries = readEnvFile(file, { secret: true });
  const resolved = resolveFields(fields, entries, file, options, backupEnvDefaults);
  const mask = Object.fromEntries(fields.map((f) => [f, true])) as Record<K, true>;
  const values = parseOrThrow(
    z.pick(backupEnvSchema, mask as never),
    resolved,
    file,
    `add {name}=... to ${file} (docs/system.md 2.1)`,
  ) as Pick<BackupEnv, K>;
  if ("CONTROL_KEY" in values) registerSecret(values.CONTROL_KEY as string);
  if ("RESTIC_REPOSITORY" in values) registerRepositoryCredentials(values.RESTIC_REPOSITORY as string);
  return { ...values, file };
}

/**
 * A repository address can carry credentials: a user and password in a URL (`rest:https://user:pass@host/`, up to the
 * last `@` before the host, as Go parses it), in sftp's short form (`sftp:user:pass@host:/repo`), or as parameters of an
 * rclone connection string (`rclone:remote,secret_access_key=...:path`). All are secrets, so every line that shows the
 * address shows `***` in their place; a password is registered percent-decoded too, as restic's messages may show it.
 */
export function registerRepositoryCredentials(repository: string): void {
  const url = /^(?:[a-z0-9]+:)?[a-z][a-z0-9+.-]*:\/\/([^/]*)@/i.exec(repository);
  const short = /^sftp:([^/]*)@[^@/]*:/i.exec(repository);
  const userinfo = url?.[1] ?? (short?.[1]?.includes(":") ? short[1] : undefined);
  if (userinfo) {
    // Short credentials are registered with what surrounds them: a bare two-letter secret would mangle ordinary text.
    registerSecret(userinfo.length >= 6 ? userinfo : url ? `//${userinfo}@` : `:${userinfo}@`);
    const password = userinfo.includes(":") ? userinfo.slice(userinfo.indexOf(":") + 1) : undefined;
    if (password) {
      registerSecret(password);
      try {
        registerSecret(decodeURIComponent(password));
      } catch {
        // not percent-encoded
      }
    }
  }
  const rclone = /^rclone:([^:]*)/.exec(repository)?.[1] ?? "";
  for (const [, key, value] of rclone.matchAll(/,([^,=]+)=([^,]*)/g)) {
    if (value) registerSecret(value.length >= 6 ? value : `${key}=${value}`);
  }
}

/**
 * The local `.env` of the operator's own computer (docs/system.md 2.3), read by revive and hibernate. The token names are the
 * ones the vendors' own tools use (doctl, wrangler/terraform).
 */
export const localEnvSchema = z.object({
  DIGITALOCEAN_ACCESS_TOKEN: field(),
  CLOUDFLARE_API_TOKEN: field(),
  CONTROL_KEY: clientKeySchema,
  /** The play host, maybe with its port. */
  SERVER_ADDR: hostSchema,
  PANEL_URL: panelUrlSchema,
  SERVER_ID: z.optional(serverIdSchema),
  WEBHOOK_URL: z.optional(webhookUrlSchema),
  /** The game VM: by name, else the one droplet with DROPLET_TAG (default mcops). */
  DROPLET_NAME: z.optional(field()),
  DROPLET_TAG: z.optional(field()),
  /** The passphrase-free automation key for the last backup over SSH (docs/system.md 1). */
  SSH_KEY: z.optional(absolutePathSchema),
  SSH_USER: z.optional(field()),
  /** How many mcops snapshots to keep (default 2). */
  KEEP_SNAPSHOTS: z.optional(countSchema),
  /** Where to reach the panel's API and the game when that is not PANEL_URL and SERVER_ADDR (a private network, tests). */
  CONTROL_URL: z.optional(panelUrlSchema),
  GAME_ADDRESS: z.optional(hostSchema),
  DIGITALOCEAN_API_URL: z.optional(baseUrlSchema),
  CLOUDFLARE_API_URL: z.optional(baseUrlSchema),
});
export type LocalEnv = z.infer<typeof localEnvSchema>;

/** Loads fields of the local `.env` (mode 600); flag > environment > file. */
export function loadLocalEnv<K extends keyof LocalEnv>(
  fields: readonly K[],
  options: { file: string; env?: NodeJS.ProcessEnv | undefined; flags?: Record<string, string | undefined> },
): Pick<LocalEnv, K> & { file: string } {
  const entries = readEnvFile(options.file, { secret: true });
  const resolved = resolveFields(fields, entries, options.file, { paths: undefined as never, ...options });
  const mask = Object.fromEntries(fields.map((f) => [f, true])) as Record<K, true>;
  const values = parseOrThrow(
    z.pick(localEnvSchema, mask as never),
    resolved,
    options.file,
    `add {name}=... to ${options.file} (copy .env.example)`,
  ) as Pick<LocalEnv, K>;
  for (const key of ["DIGITALOCEAN_ACCESS_TOKEN", "CLOUDFLARE_API_TOKEN", "CONTROL_KEY"] as const) {
    const value = (values as Partial<LocalEnv>)[key];
    if (value) registerSecret(value);
  }
  return { ...values, file: options.file };
}

/** What the notifier needs to know: where to post, which categories are on, and the footer text. */
export interface NotifyConfig {
  /** undefined: no webhook configured, every notification is a silent no-op (docs/system.md 7.1). */
  webhookUrl: string | undefined;
  /** Which file or variable the address came from (for messages; never the address itself). */
  source: string;
  events: Record<Category, boolean>;
  playHost: string | undefined;
  /** Posts per window for this address (docs/system.md 8: 30 per minute); MCOPS_WEBHOOK_WINDOW_MS shortens the window for tests. */
  rate?: { limit: number; windowMs: number };
}

/**
 * webhook.env (docs/system.md 2.2) and webhook.json (docs/system.md 6, docs/contract.md). The address comes from the WEBHOOK_URL environment
 * variable, else webhook.json's webhook_url, else webhook.env. Both files hold the webhook token and follow the
 * mode-600 rule. Categories are all on unless webhook.json turns them off.
 */
export function loadNotifyConfig(options: LoadEnvOptions): NotifyConfig {
  const envFile = configFile(options.paths, "webhook.env");
  const jsonFile = configFile(options.paths, "webhook.json");
  const entries = readEnvFile(envFile, { secret: true });
  const fromEnv = parseOrThrow(
    z.partial(webhookEnvSchema),
    resolveFields(["WEBHOOK_URL", "PLAY_HOST"], entries, envFile, options),
    envFile,
    "",
  );
  const json = readWebhookJson(jsonFile);
  const env = options.env ?? process.env;

  let webhookUrl: string | undefined;
  let source = "none";
  if (env.WEBHOOK_URL !== undefined) {
    webhookUrl = fromEnv.WEBHOOK_URL;
    source = "environment variable WEBHOOK_URL";
  } else if (json?.webhook_url) {
    webhookUrl = json.webhook_url;
    source = jsonFile;
  } else if (fromEnv.WEBHOOK_URL) {
    webhookUrl = fromEnv.WEBHOOK_URL;
    source = envFile;
  }
  registerSecret(webhookUrl && webhookToken(webhookUrl));
  const events = Object.fromEntries(CATEGORIES.map((c) => [c, json?.events?.[c] ?? true])) as Record<Category, boolean>;
  const windowMs = Number(env.MCOPS_WEBHOOK_WINDOW_MS);
  const rate = { limit: 30, windowMs: Number.isFinite(windowMs) && windowMs > 0 ? windowMs : 60_000 };
  // docs/system.md 2.4: the footer is the play host; the machine's name when PLAY_HOST is not set, as webhook.sh did.
  return { webhookUrl, source, events, playHost: fromEnv.PLAY_HOST ?? hostname(), rate };
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** webhook.json: a secret (mode 600) only when it holds the webhook address; categories alone are not one. */
export function readWebhookJson(file: string): WebhookJson | undefined {
  const text = readConfigText(file, { secret: false });
  if (text === undefined) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (error) {
    throw new ConfigError(`is not valid JSON: ${(error as Error).message}`, {
      where: file,
      hint: 'fix it or delete it; its shape is {"webhook_url": "...", "events": {"join": true, ...}}',
    });
  }
  if (isPlainObject(data) && data.webhook_url !== undefined) refuseShared(file);
  const result = webhookJsonSchema.safeParse(data);
  if (result.success) return result.data;
  const issue = result.error.issues[0] as z.core.$ZodIssue;
  const name = issue.path.map(String).join(".") || "(top level)";
  const hint =
    (issue as { params?: { hint?: string } }).params?.hint ??
    (issue.code === "unrecognized_keys" ? `the categories are ${CATEGORIES.join(", ")}` : "see docs/contract.md");
  throw new ConfigError(`${name} ${describeIssue(issue)}`, { where: file, hint });
}
