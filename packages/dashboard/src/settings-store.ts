import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { CATEGORIES, type Category } from "@mcops/core/categories";
import { loadNotifyConfig, webhookJsonSchema, webhookToken, webhookUrlSchema } from "@mcops/core/config";
import { BusyError, ConfigError, describeError as describeCoreError, UsageError } from "@mcops/core/errors";
import { isErrno, writeFileAtomic } from "@mcops/core/fs";
import { configFile, type Paths } from "@mcops/core/paths";
import { redact, registerSecret } from "@mcops/core/secrets";
import { checkWebhookHost } from "./webhook-host.ts";

/**
 * webhook.json (docs/system.md 6, docs/contract.md): `{"webhook_url": "...", "events": {"join": true, ...}}`, read by every tool
 * through core's loadNotifyConfig. The page shows what the tools would use; a save rewrites the file whole and
 * atomically at mode 600, keeping every key it does not know, and is refused when the file changed since the page was
 * drawn (another tab, another admin, an edit by hand).
 */
export interface CurrentSettings {
  file: string;
  /** Digest of the file's bytes, "none" when it does not exist. */
  version: string;
  /** The address the tools post to, or undefined (notifications are off). Never shown in full. */
  webhookUrl: string | undefined;
  /** Where that address comes from: webhook.json, webhook.env, or the environment. */
  source: string;
  /** webhook.json has a webhook_url of its own (it can be removed from the page). */
  jsonHasUrl: boolean;
  events: Record<Category, boolean>;
  /** What stops the tools reading their webhook settings, as one line; they post nothing until it is fixed. */
  problem: string | undefined;
}

/** `what (where) — hint`: a core error as one line for the page (the tool prefix is for stderr), secrets hidden. */
export function describeError(error: unknown): string {
  return redact(describeCoreError(error));
}

function readBytes(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return undefined;
    throw new ConfigError(`cannot be read (${(error as NodeJS.ErrnoException).code})`, {
      where: file,
      hint: "run the dashboard as root, or as the user that owns /etc/mc-backup",
    });
  }
}

const versionOf = (bytes: Buffer | undefined) =>
  bytes === undefined ? "none" : createHash("sha256").update(bytes).digest("hex").slice(0, 16);

/** The JSON object in the file, or undefined when it is absent or not a JSON object. */
function rawObject(bytes: Buffer | undefined): Record<string, unknown> | undefined {
  if (bytes === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(bytes.toString("utf8").replace(/^\uFEFF/, ""));
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

export function readSettings(paths: Paths, env: NodeJS.ProcessEnv): CurrentSettings {
  const file = configFile(paths, "webhook.json");
  const bytes = readBytes(file);
  const raw = rawObject(bytes);
  const base = {
    file,
    version: versionOf(bytes),
    jsonHasUrl: typeof raw?.webhook_url === "string" && raw.webhook_url !== "",
  };
  try {
    const config = loadNotifyConfig({ paths, env });
    return { ...base, webhookUrl: config.webhookUrl, source: config.source, events: config.events, problem: undefined };
  } catch (error) {
    // The tools cannot read their settings: show why, and the categories as the file has them (default on).
    const events = (raw?.events ?? {}) as Record<string, unknown>;
    return {
      ...base,
      webhookUrl: undefined,
      source: "none",
      events: Object.fromEntries(CATEGORIES.map((c) => [c, events[c] !== false])) as Record<Category, boolean>,
      problem: describeError(error),
    };
  }
}

interface SaveRequest {
  /** The version the page was drawn from. */
  version: string;
  /** A new address; empty or undefined keeps the current one. */
  webhookUrl?: string | undefined;
  /** Remove webhook_url from webhook.json (the tools then use webhook.env). */
  forgetUrl?: boolean | undefined;
  events: Record<Category, boolean>;
}

interface SaveResult {
  /** What changed, for the log and the page: "join off", "address set", ... */
  changes: string[];
  /** The file was readable by others before this save (its mode then). */
  wasInsecure: number | undefined;
}

interface WebhookUrlOptions {
  /** DASHBOARD_ALLOW_ANY_WEBHOOK=1: any host core's schema takes, not only Discord's (webhook-host.ts). */
  allowAnyHost?: boolean | undefined;
}

/**
 * Checks an address typed into the form with core's schema, then that it is on a Discord webhook host (unless
 * allowAnyHost); UsageError with the words for the page when it is not.
 */
function checkWebhookUrl(value: string, options: WebhookUrlOptions = {}): string {
  if (value.includes("***")) {
    throw new UsageError("that is the hidden form of an address", {
      where: "webhook address",
      hint: "paste the whole address from Discord, or leave the field empty to keep the current one",
    });
  }
  const result = webhookUrlSchema.safeParse(value);
  if (result.success) {
    if (!options.allowAnyHost) checkWebhookHost(result.data);
    return result.data;
  }
  const issue = result.error.issues[0];
  throw new UsageError(`the webhook address ${issue?.message ?? "is not valid"}`, {
    where: "webhook address",
    hint: (issue as { params?: { hint?: string } } | undefined)?.params?.hint,
  });
}

/** Saves the form; nothing is written when the new address is refused (UsageError), or any other check fails. */
export function saveSettings(file: string, request: SaveRequest, options: WebhookUrlOptions = {}): SaveResult {
  const newUrl = request.webhookUrl?.trim() ? checkWebhookUrl(request.webhookUrl.trim(), options) : undefined;
  const bytes = readBytes(file);
  if (versionOf(bytes) !== request.version) {
    throw new BusyError("webhook.json changed since this page was loaded", {
      where: file,
      hint: "nothing was saved; look at the page again and repeat your change",
    });
  }
  const raw = rawObject(bytes);
  if (bytes !== undefined && raw === undefined) {
    throw new ConfigError("is not a JSON object, so its other settings cannot be kept", {
      where: file,
      hint: "fix it by hand or delete it, then save again",
    });
  }
  const before = raw ?? {};
  const oldEvents = (typeof before.events === "object" && before.events !== null ? before.events : {}) as Record<
    string,
    unknown
  >;
  const next: Record<string, unknown> = { ...before };
  const changes: string[] = [];
  if (newUrl !== undefined) {
    if (newUrl !== before.webhook_url) changes.push(before.webhook_url ? "address changed" : "address set");
    next.webhook_url = newUrl;
  } else if (request.forgetUrl && "webhook_url" in next) {
    delete next.webhook_url;
    changes.push("address removed");
  }
  // Every category written out, so the file says what is on without knowing the default.
  next.events = Object.fromEntries(CATEGORIES.map((c) => [c, request.events[c]]));
  for (const c of CATEGORIES) {
    if ((oldEvents[c] !== false) !== request.events[c] || (bytes === undefined && !request.events[c])) {
      changes.push(`${c} ${request.events[c] ? "on" : "off"}`);
    }
  }
  const check = webhookJsonSchema.safeParse(next);
  if (!check.success) {
    const issue = check.error.issues[0];
    const field = issue?.path.map(String).join(".") || "(top level)";
    throw new ConfigError(`${field} ${issue?.message ?? "is not valid"}`, {
      where: file,
      hint: field === "webhook_url" ? "enter a new webhook address, or remove it" : "fix it by hand, then save again",
    });
  }
  const mode = bytes === undefined ? undefined : statSync(file).mode & 0o777;
  writeFileAtomic(file, `${JSON.stringify(next, null, 2)}\n`, 0o600);
  if (newUrl) registerSecret(webhookToken(newUrl));
  return { changes, wasInsecure: mode !== undefined && (mode & 0o077) !== 0 ? mode : undefined };
}
