import type { Category } from "@mcops/core/categories";
import { loadNotifyConfig, type NotifyConfig } from "@mcops/core/config";
import { BusyError, JobError, UsageError } from "@mcops/core/errors";
import { buildMessage, COLOURS, createNotifier } from "@mcops/core/http";
import { createLogger } from "@mcops/core/log";
import type { ToolContext } from "@mcops/core/tool";
import { DEFAULT_COLOUR } from "./settings.ts";

/** What `runWebhook` touches of the outside world. */
export type WebhookContext = Pick<ToolContext, "paths" | "env" | "clock" | "stdout" | "stderr">;

export interface WebhookOptions {
  title: string;
  description?: string | undefined;
  /** Decimal (3447003), #rrggbb, or a name: success, error, warning, info, event. */
  colour?: string | undefined;
  category?: Category | undefined;
  /** Footer text; default PLAY_HOST from webhook.env, else this machine's host name. */
  footer?: string | undefined;
  dryRun?: boolean | undefined;
}

export function parseColour(input: string | undefined): number {
  if (input === undefined || input === "") return COLOURS[DEFAULT_COLOUR];
  const value = input.trim().toLowerCase();
  if (value in COLOURS) return COLOURS[value as keyof typeof COLOURS];
  let colour = Number.NaN;
  if (/^\d+$/.test(value)) colour = Number(value);
  else if (/^(#|0x)[0-9a-f]{6}$/.test(value)) colour = Number.parseInt(value.replace(/^(#|0x)/, ""), 16);
  if (!Number.isInteger(colour) || colour < 0 || colour > 0xffffff) {
    throw new UsageError(`COLOUR "${input}" is not a colour`, {
      hint: `give a decimal 0-16777215, #rrggbb, or one of ${Object.keys(COLOURS).join(", ")}`,
    });
  }
  return colour;
}

/**
 * webhook's settings: where a message goes (webhook.env, webhook.json, the WEBHOOK_URL variable: core's
 * loadNotifyConfig), handed as a loader. runWebhook calls it once the message's words and colour are checked, as it
 * always read them, so that a usage error is said before a configuration error.
 */
export function webhookSettings(ctx: Pick<ToolContext, "paths" | "env">): () => NotifyConfig {
  return () => loadNotifyConfig({ paths: ctx.paths, env: ctx.env });
}

/** Posts one rich message (docs/system.md 4.4 webhook.sh): title, description, colour; footer = play host; timestamp = now. */
export async function runWebhook(
  ctx: WebhookContext,
  settings: () => NotifyConfig,
  options: WebhookOptions,
): Promise<number> {
  if (options.title.trim() === "" && !options.description?.trim()) {
    throw new UsageError("TITLE and DESCRIPTION are both empty", { hint: "give the message a title or a text" });
  }
  const colour = parseColour(options.colour);
  const config = settings();
  config.playHost = options.footer ?? config.playHost;
  const logger = createLogger({ echo: ctx.stderr, echoLevel: "WARN", clock: ctx.clock });
  const notifier = createNotifier({
    config,
    paths: ctx.paths,
    logger,
    clock: ctx.clock,
    logFailures: false,
  });
  const notice = { title: options.title, description: options.description, colour, category: options.category };

  if (options.dryRun) {
    const message = buildMessage(notice, { playHost: config.playHost, now: ctx.clock.now() });
    ctx.stdout.write(`${JSON.stringify(message, null, 2)}\n`);
    if (!config.webhookUrl) ctx.stderr.write("webhook: no webhook is configured, so nothing would be sent\n");
    else if (options.category && !config.events[options.category]) {
      ctx.stderr.write(`webhook: the ${options.category} category is off in webhook.json, so nothing would be sent\n`);
    }
    return 0;
  }

  const result = await notifier.send(notice);
  if (result.status === "failed" && result.kind === "rate-limited") {
    // Busy, not broken: a later run posts again (docs/contract.md's 75).
    throw new BusyError(`not sent: ${result.reason}`, { where: config.source, hint: result.hint });
  }
  if (result.status === "failed") throw new JobError(result.reason, { where: config.source, hint: result.hint });
  return 0;
}
