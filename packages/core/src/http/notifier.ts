import { statSync } from "node:fs";
import * as z from "zod/mini";
import type { Category } from "../categories.ts";
import { type Clock, systemClock } from "../clock.ts";
import { loadNotifyConfig, type NotifyConfig } from "../config/index.ts";
import { apiVersion, type DiscordRateScope, discordRateLimit, versionedWebhookUrl } from "../discord.ts";
import { record } from "../events.ts";
import { type Logger, silentLogger, stripHidden } from "../log.ts";
import { configFile, type Paths } from "../paths.ts";
import { WEBHOOK_ANSWER_WORDS, type WebhookFailure, type WebhookFailureKind } from "../records.ts";
import { redact } from "../secrets.ts";
import { createRateWindow, type RateWindow, WaitTooLong } from "./rate-window.ts";
import {
  type Exchange,
  errorBody,
  exchange,
  POLICIES,
  RequestFailure,
  type RequestPolicy,
  waitHintMs,
} from "./request.ts";
import { NO_HEADERS, send } from "./transport.ts";

/** docs/system.md 2.4 colour constants. */
export const COLOURS = {
  success: 5763719,
  error: 15548997,
  warning: 16776960,
  info: 3447003,
  event: 10181046,
} as const;
export type ColourName = keyof typeof COLOURS;

/** Discord's embed limits (docs/contract.md): text over them is cut, never rejected. */
export const EMBED_LIMITS = { title: 256, description: 4096, footer: 2048, total: 6000 } as const;

/** docs/system.md 8: 30 messages per minute per webhook address. */
export const WEBHOOK_RATE = { limit: 30, windowMs: 60_000 } as const;
/** The longest a post waits for the webhook's rate limit (its window or Discord's 429) before it is dropped. */
export const MAX_RATE_WAIT_MS = 60_000;
/**
 * Discord's global limit (rate-limits.mdx, Global Rate Limit): 50 requests a second, per IP address for requests
 * without authorization such as a webhook's, so per machine. Its window is shared by every post of the machine, to
 * any webhook, and a global 429 blocks it.
 */
export const GLOBAL_RATE = { limit: 50, windowMs: 1000 } as const;
/**
 * The longest a 429 (or an empty bucket) holds a window shared through the run dir. A longer wait is still reported
 * (the post is dropped), but the file does not keep every tool of the machine silent for what an odd answer asked (a
 * year's retry_after, a proxy's Retry-After): after an hour the next post asks Discord again, and a real limit just
 * answers another 429.
 */
export const MAX_BLOCK_MS = 60 * 60_000;
/** The key of the machine's global window (every other window is keyed by its webhook address). */
const GLOBAL_KEY = "discord global rate limit";

export interface Embed {
  title?: string;
  description?: string;
  color?: number;
  footer?: { text: string };
  timestamp?: string;
}

/** docs/system.md 2.4: the plain or the rich form, plus allowed_mentions (docs/contract.md: nobody is ever pinged). */
export interface WebhookMessage {
  content?: string;
  embeds?: Embed[];
  allowed_mentions: { parse: [] };
}

export interface Notice {
  title: string;
  description?: string | undefined;
  /** Decimal RGB; default info blue (3447003). */
  colour?: number | undefined;
  /** Filtered by webhook.json; a notice without one is always sent. */
  category?: Category | undefined;
  /** Title and description came from the game (player names, chat, item names): escape them. */
  fromGame?: boolean | undefined;
  /** Epoch ms; default now. */
  time?: number | undefined;
}

/** `@everyone` and `@here`: broken with a zero-width space wherever they are (allowed_mentions pings nobody anyway). */
const MENTION = /@(everyone|here)/gi;

/** Markdown and mention characters of Discord, escaped so text from the game shows literally and pings nobody. */
export function escapeGameText(text: string): string {
  return (
    text
      .replace(/[\\*_~`|[\]()<]/g, "\\$&")
      // Headings, quotes and lists only form at the start of a line.
      .replace(/^(\s*)([#>-])/gm, "$1\\$2")
      .replace(MENTION, "@\u200b$1")
  );
}

/** Cuts text to at most `max` characters, ending with … when cut. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  // Do not split a surrogate pair.
  let cut = max - 1;
  if (/[\uD800-\uDBFF]/.test(text.charAt(cut - 1))) cut--;
  return `${text.slice(0, cut)}…`;
}

export function buildMessage(notice: Notice, options: { playHost?: string | undefined; now: number }): WebhookMessage {
  // Every field is redacted first: a failure's reason can quote a secret (restic names the repository address). Control,
  // bidirectional and zero-width characters are left out of every field (a level-name's U+202E would turn the rest of
  // the line around); then `@everyone` gets back its zero-width space (a text escaped before, such as a file name in a
  // backup's warning, lost it here), as escaping gives it.
  const clean = (s: string) => redact(stripHidden(s)).replace(MENTION, "@\u200b$1");
  const esc = notice.fromGame ? (s: string) => escapeGameText(clean(s)) : clean;
  const embed: Embed = {};
  // webhook.sh's title is optional (docs/system.md 2.4): an empty one is left out rather than sent empty.
  if (notice.title) embed.title = truncate(esc(notice.title), EMBED_LIMITS.title);
  if (notice.description) embed.description = truncate(esc(notice.description), EMBED_LIMITS.description);
  embed.color = notice.colour ?? COLOURS.info;
  if (options.playHost) embed.footer = { text: truncate(clean(options.playHost), EMBED_LIMITS.footer) };
  embed.timestamp = new Date(notice.time ?? options.now).toISOString();
  const size = (embed.title?.length ?? 0) + (embed.description?.length ?? 0) + (embed.footer?.text.length ?? 0);
  if (size > EMBED_LIMITS.total && embed.description) {
    embed.description = truncate(
      embed.description,
      Math.max(1, embed.description.length - (size - EMBED_LIMITS.total)),
    );
  }
  return { embeds: [embed], allowed_mentions: { parse: [] } };
}

export type SendResult =
  | { status: "sent"; attempts: number }
  | { status: "disabled" }
  | { status: "filtered"; category: Category }
  | {
      status: "failed";
      /** The notifier's reason for the tool's log (it may quote Discord's words) and its advice. */
      reason: string;
      hint: string;
      /** Why, as a code (records.ts): what a page puts into its own words. */
      kind: WebhookFailureKind;
      /** The HTTP status answered, when one was. */
      httpStatus?: number | undefined;
    };

export interface Notifier {
  /** The message that `send` would post, or undefined when no webhook is configured or the category is off. */
  preview(notice: Notice): WebhookMessage | undefined;
  /**
   * Posts one message. Never throws. Every outcome is one line in the logger's log, so that a tool's log says what
   * became of each of its messages (the dashboard's "recent notifications" reads these lines):
   * - `INFO notification "<title>" sent`
   * - `INFO notification "<title>" not sent: the <category> category is off` (webhook.json turned it off)
   * - `ERROR notification "<title>" not sent: <reason> — <hint>` (unless `logFailures` is false)
   * Nothing is logged when no webhook is configured (docs/contract.md: then every notification is a silent no-op).
   */
  send(notice: Notice): Promise<SendResult>;
}

export interface NotifierOptions {
  config: NotifyConfig;
  paths: Paths;
  logger?: Logger;
  clock?: Clock;
  /** Rate limit shared by all processes; default the config's (docs/system.md 8's 30 per minute). */
  rate?: { limit: number; windowMs: number };
  /** Tries in all (default: core's Discord policy, 5). */
  maxAttempts?: number;
  /** First back-off after a network error or 5xx; doubles each time. */
  backoffMs?: number;
  /** The longest one post waits for the rate limit before it is dropped (default MAX_RATE_WAIT_MS, 60 s). */
  maxWaitMs?: number;
  timeoutMs?: number;
  /** Log a failed post as an ERROR line (default); the webhook executable reports it itself instead. */
  logFailures?: boolean;
}

/** Discord's error body (discord-api-docs topics/opcodes-and-status-codes, rate-limits): every field optional. */
export const discordErrorSchema = z.object({
  message: z.optional(z.string()),
  code: z.optional(z.number()),
  retry_after: z.optional(z.number()),
  global: z.optional(z.boolean()),
  errors: z.optional(z.unknown()),
});
type DiscordError = z.infer<typeof discordErrorSchema>;

/** The first `_errors` entry of Discord's nested 50035 error object, as `embeds.0.description: Must be ...`. */
function firstFormError(errors: unknown, path: string[] = []): string | undefined {
  if (!errors || typeof errors !== "object") return undefined;
  const node = errors as Record<string, unknown>;
  const list = node._errors;
  if (Array.isArray(list) && list[0])
    return `${path.join(".")}: ${(list[0] as { message?: string }).message ?? "invalid"}`;
  for (const [key, value] of Object.entries(node)) {
    const found = firstFormError(value, [...path, key]);
    if (found) return found;
  }
  return undefined;
}

function describeHttpFailure(
  status: number,
  body: DiscordError,
  where: string,
): { reason: string; hint: string; kind: WebhookFailureKind; httpStatus: number } {
  const said = body.message ? `${body.message}${body.code ? `, code ${body.code}` : ""}` : `HTTP ${status}`;
  if (status === 404) {
    return {
      kind: "gone",
      httpStatus: status,
      reason: `${WEBHOOK_ANSWER_WORDS.gone} (404 ${said})`,
      hint: `create a webhook again in the channel's settings and put its address in ${where}`,
    };
  }
  if (status === 401 || status === 403) {
    return {
      kind: "token",
      httpStatus: status,
      reason: `${WEBHOOK_ANSWER_WORDS.token} (${status} ${said})`,
      hint: `copy the webhook address again into ${where}`,
    };
  }
  const detail = status === 400 ? firstFormError(body.errors) : undefined;
  return {
    kind: "refused",
    httpStatus: status,
    reason: `${WEBHOOK_ANSWER_WORDS.refused} (${status} ${said}${detail ? `: ${detail}` : ""})`,
    hint: "this is a bug in mcops if it repeats; run with MCOPS_DEBUG=1 and report it",
  };
}

/** The request policy of one notifier: core's Discord policy with the caller's overrides. */
function notifierPolicy(options: NotifierOptions): RequestPolicy {
  return {
    ...POLICIES.discord,
    maxWaitMs: options.maxWaitMs ?? MAX_RATE_WAIT_MS,
    ...(options.maxAttempts ? { attempts: options.maxAttempts } : {}),
    ...(options.backoffMs !== undefined ? { backoffMs: options.backoffMs } : {}),
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
  };
}

/** The rate windows a post goes through, both shared by every process of the machine. */
interface RateWindows {
  /** The webhook address's: 30 a minute (docs/system.md 8), blocked by its own 429s (scope `user` or `shared`). */
  webhook: RateWindow;
  /** The machine's: every post to any webhook, blocked by a global 429. */
  global: RateWindow;
}

/** What one post needs: the policy, its rate windows, the clock and the log. */
interface PostContext {
  policy: RequestPolicy;
  windows: RateWindows;
  /** The API version posted to (its 429s' units); undefined for an unversioned path. */
  version: number | undefined;
  clock: Clock;
  logger: Logger;
}

/** The rate windows of the webhook address, made on the first post (a notifier that never posts touches no file). */
function lazyRateWindows(
  options: Pick<NotifierOptions, "paths"> & { rate: { limit: number; windowMs: number }; clock: Clock; logger: Logger },
): (url: string) => RateWindows {
  let windows: RateWindows | undefined;
  const make = (key: string, rate: { limit: number; windowMs: number }, onFallback?: (reason: string) => void) =>
    createRateWindow({
      dir: options.paths.rateDir ?? options.paths.runDir,
      key,
      ...rate,
      clock: options.clock,
      ...(onFallback ? { onFallback } : {}),
    });
  return (url) => {
    windows ??= {
      webhook: make(url, options.rate, (reason) => options.logger.warn(reason)),
      global: make(GLOBAL_KEY, GLOBAL_RATE),
    };
    return windows;
  };
}

function rateLimitedTooLong(waitMs: number, scope: DiscordRateScope): SendResult {
  return {
    status: "failed",
    kind: "rate-limited",
    reason: `rate limited for ${Math.ceil(waitMs / 1000)} s`,
    hint:
      scope === "global"
        ? "Discord holds every post from this machine (its global limit); the message is dropped, later ones go out once it lets go"
        : "Discord holds this webhook (another program may post to it too); the message is dropped, later ones go out once it lets go",
  };
}

/** The global window's WaitTooLong, told apart from the webhook window's. */
class GlobalWaitTooLong extends WaitTooLong {}

/**
 * The 429's window blocked until the wait it asked for is over (at most MAX_BLOCK_MS): the webhook's, or the machine's
 * for a global one.
 */
function blockFor(windows: RateWindows, scope: DiscordRateScope, now: number, waitMs: number): Promise<void> {
  return (scope === "global" ? windows.global : windows.webhook).block(now + Math.min(waitMs, MAX_BLOCK_MS));
}

/**
 * The request and its retries: each try waits for a slot of the machine's window and then of the webhook's (as long
 * as the policy's maxWaitMs allows in all); a 429 blocks the window of its scope for every process. Throws
 * WaitTooLong (GlobalWaitTooLong for the machine's window) or RequestFailure as exchange does.
 */
function requestPost(ctx: PostContext, target: URL, message: WebhookMessage): Promise<Exchange> {
  const { policy, windows, version, clock, logger } = ctx;
  const started = clock.now();
  const left = () => Math.max(0, policy.maxWaitMs - (clock.now() - started));
  return exchange(policy, {
    where: target.host,
    // A post repeated after a 5xx or a reset shows twice at worst; a lost "Backup failed" at 06:00 is worse.
    idempotent: true,
    clock,
    beforeTry: async () => {
      const global = await windows.global.take(undefined, left()).catch((error: unknown) => {
        throw error instanceof WaitTooLong ? new GlobalWaitTooLong(error.waitMs) : error;
      });
      const slot = await windows.webhook.take(undefined, left());
      const waited = global.waitedMs + slot.waitedMs;
      if (waited > 1000) logger.debug(`waited ${waited} ms for the webhook rate limit`);
      return async () => {
        await global.done();
        await slot.done();
      };
    },
    // Discord's 429 in its own units (@mcops/core/discord); any other answer as every service's.
    waitHint: (response, body, now) =>
      response.status === 429
        ? discordRateLimit(response.headers, body, version).waitMs
        : waitHintMs(response.headers, now, body),
    onRetry: async ({ status, code, waitMs, headers, body }) => {
      if (status === 429) {
        const { scope } = discordRateLimit(headers ?? NO_HEADERS, body, version);
        await blockFor(windows, scope, clock.now(), waitMs);
        logger.warn(
          `webhook rate limited${scope === "global" ? " (Discord's global limit)" : ""}; waiting ${waitMs} ms`,
        );
      } else {
        logger.warn(`webhook ${status ? `answered ${status}` : `post failed (${code})`}; trying again in ${waitMs} ms`);
      }
    },
    send: (signal) => send(target.href, { method: "post", json: message, signal }),
  });
}

/** A post that got no answer to read: the rate limit would have held it too long, or the host was not reached. */
function unanswered(error: unknown, target: URL): SendResult {
  if (error instanceof WaitTooLong) {
    return rateLimitedTooLong(error.waitMs, error instanceof GlobalWaitTooLong ? "global" : "webhook");
  }
  if (error instanceof RequestFailure) {
    return {
      status: "failed",
      kind: "unreachable",
      reason: `cannot reach the webhook host ${target.host} (${error.code}) after ${error.attempts} tries`,
      hint: "check the machine's network and DNS; messages are not queued",
    };
  }
  throw error;
}

/** Discord's answer read: sent (and its rate-limit headers kept for the next post), or why not. */
async function readAnswer(ctx: PostContext, answer: Exchange, where: string): Promise<SendResult> {
  const { windows, version, clock } = ctx;
  const { response, attempts } = answer;
  if (response.ok) {
    await response.body?.cancel().catch(() => undefined);
    if (response.headers.get("x-ratelimit-remaining") === "0") {
      const after = Number(response.headers.get("x-ratelimit-reset-after"));
      if (Number.isFinite(after) && after > 0) await blockFor(windows, "webhook", clock.now(), Math.ceil(after * 1000));
    }
    return { status: "sent", attempts };
  }
  // Not Discord's error body (a proxy's page): the status alone speaks.
  const body: DiscordError = errorBody(discordErrorSchema, answer.errorText) ?? {};
  if (answer.waitTooLongMs !== undefined) {
    const scope: DiscordRateScope =
      response.status === 429 ? discordRateLimit(response.headers, body, version).scope : "webhook";
    await blockFor(windows, scope, clock.now(), answer.waitTooLongMs);
    return rateLimitedTooLong(answer.waitTooLongMs, scope);
  }
  if (response.status === 429) {
    return {
      status: "failed",
      kind: "busy",
      httpStatus: 429,
      reason: `the webhook stayed rate limited (429) after ${attempts} tries`,
      hint: "another program may be posting to the same webhook; give mcops its own webhook",
    };
  }
  if (response.status >= 500) {
    return {
      status: "failed",
      kind: "server",
      httpStatus: response.status,
      reason: `the webhook host kept failing (HTTP ${response.status}) after ${attempts} tries`,
      hint: "Discord may be having an outage; see its status page",
    };
  }
  return { status: "failed", ...describeHttpFailure(response.status, body, where) };
}

/** The outcome's record and its line in the tool's log (Notifier.send): sent, or why not (unless `logFailures` is false). */
function logOutcome(logger: Logger, at: number, title: string, result: SendResult, logFailures: boolean): void {
  if (result.status === "failed") {
    if (logFailures) record(logger, { type: "notification", at, title, outcome: "failed", failure: failureOf(result) });
  } else {
    record(logger, { type: "notification", at, title, outcome: "sent" });
  }
}

/** A failed post's code, for its record. */
export function failureOf(result: Extract<SendResult, { status: "failed" }>): WebhookFailure {
  const { kind, httpStatus, reason, hint } = result;
  return { kind, ...(httpStatus === undefined ? {} : { status: httpStatus }), reason, hint };
}

export function createNotifier(options: NotifierOptions): Notifier {
  const { config, paths, logger = silentLogger, clock = systemClock } = options;
  const { logFailures = true } = options;
  const policy = notifierPolicy(options);
  const rateWindowsFor = lazyRateWindows({ paths, rate: options.rate ?? config.rate ?? WEBHOOK_RATE, clock, logger });

  function preview(notice: Notice): WebhookMessage | undefined {
    if (!config.webhookUrl) return undefined;
    if (notice.category && !config.events[notice.category]) return undefined;
    return buildMessage(notice, { playHost: config.playHost, now: clock.now() });
  }

  async function post(url: string, message: WebhookMessage): Promise<SendResult> {
    // Posted to as /api/v10/webhooks/… when the address names no version (@mcops/core/discord); the address the
    // user gave stays the one shown and the one the rate window is kept for.
    const target = versionedWebhookUrl(url);
    target.searchParams.set("wait", "true");
    const ctx: PostContext = { policy, windows: rateWindowsFor(url), version: apiVersion(target), clock, logger };
    let answer: Exchange;
    try {
      answer = await requestPost(ctx, target, message);
    } catch (error) {
      return unanswered(error, target);
    }
    return readAnswer(ctx, answer, config.source);
  }

  return {
    preview,
    async send(notice) {
      if (!config.webhookUrl) return { status: "disabled" };
      const title = redact(notice.title);
      if (notice.category && !config.events[notice.category]) {
        record(logger, { type: "notification", at: clock.now(), title, outcome: "off", category: notice.category });
        return { status: "filtered", category: notice.category };
      }
      const message = preview(notice) as WebhookMessage;
      // Never throws, as promised above: the rate window's files can fail too (a run dir that cannot be written).
      const result = await post(config.webhookUrl, message).catch(
        (error: unknown): SendResult => ({
          status: "failed",
          kind: "local",
          reason: `the message could not be sent (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
          hint: "check that the run directory (/run/mc-tools, or MCOPS_RUN_DIR / MCOPS_RATE_DIR) can be written",
        }),
      );
      logOutcome(logger, clock.now(), title, result, logFailures);
      return result;
    },
  };
}

/** The notifier a tool posts through: the webhook configuration of webhook.env / webhook.json / the environment. */
export function toolNotifier(options: {
  paths: Paths;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  clock?: Clock;
}): Notifier {
  const { paths, env, logger, clock } = options;
  const build = () =>
    createNotifier({ config: loadNotifyConfig({ paths, env }), paths, logger, ...(clock ? { clock } : {}) });
  // The services (log-tailer, idle-monitor) run for weeks: a change to webhook.env or webhook.json (the dashboard's
  // Save) applies from the next message, without a restart. A broken file keeps the last good settings, said once.
  const files = [configFile(paths, "webhook.env"), configFile(paths, "webhook.json")];
  const stamp = () => files.map((f) => statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? 0).join(",");
  let seen = stamp();
  let current = build();
  let broken = "";
  // A webhook that was deleted (404) or whose token is refused stays so: a running service posts to it no more, and
  // says so once, until webhook.env or webhook.json change.
  let gone: SendResult | undefined;
  const fresh = (): Notifier => {
    const now = stamp();
    if (now === seen) return current;
    seen = now;
    gone = undefined;
    try {
      current = build();
      broken = "";
      logger.info("notification settings changed: using the new ones");
    } catch (error) {
      const line = error instanceof Error ? error.message : String(error);
      if (line !== broken)
        logger.error(`the changed notification settings are not valid (${line}); keeping the last good ones`);
      broken = line;
    }
    return current;
  };
  return {
    preview: (notice) => fresh().preview(notice),
    async send(notice) {
      const notifier = fresh();
      if (gone && notifier.preview(notice)) {
        logger.debug(`notification "${redact(notice.title)}" not sent: the webhook is gone (said above)`);
        return gone;
      }
      const result = await notifier.send(notice);
      if (result.status === "failed" && (result.kind === "gone" || result.kind === "token")) gone = result;
      return result;
    },
  };
}
