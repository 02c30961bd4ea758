import { hostname } from "node:os";
import * as z from "zod/mini";
import { CATEGORIES, type Category } from "../categories.ts";
import { readConfigText, readEnvFile, refuseShared } from "../env-file.ts";
import { ConfigError } from "../errors.ts";
import { configFile, type Paths } from "../paths.ts";
import { registerSecret } from "../secrets.ts";
import { fail, field, hostSchema, httpUrl } from "./fields.ts";
import { describeIssue, parseResolved, resolveFields, setting } from "./load.ts";

/** webhook.env and webhook.json: where every tool's notifications go (docs/system.md 2.2, 6). */

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

/** webhook.env's fields (docs/system.md 2.2). */
export const webhookFields = {
  WEBHOOK_URL: setting(z.optional(webhookUrlSchema)),
  /** Not in docs/system.md 2.2: the play host name shown in message footers (mcops extension, optional). */
  PLAY_HOST: setting(z.optional(hostSchema)),
};

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
export function loadNotifyConfig(options: { paths: Paths; env?: NodeJS.ProcessEnv | undefined }): NotifyConfig {
  const envFile = configFile(options.paths, "webhook.env");
  const jsonFile = configFile(options.paths, "webhook.json");
  const entries = readEnvFile(envFile, { secret: true });
  const fromEnv = parseResolved(
    z.object({ WEBHOOK_URL: webhookFields.WEBHOOK_URL.schema, PLAY_HOST: webhookFields.PLAY_HOST.schema }),
    resolveFields(webhookFields, entries, envFile, options),
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
