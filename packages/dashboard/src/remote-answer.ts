import { McopsError } from "@mcops/core/errors";
import { PanelError } from "@mcops/core/http";
import { redact } from "@mcops/core/secrets";
import { describeError } from "./settings-store.ts";

/**
 * What the page may say about a remote service's answer: a short status summary, never the answer's body. Core's
 * notifier and panel client put the body's words (Discord's `message` and form errors, the panel's `detail`) into their
 * reasons, which is right for the tools' logs (root's to read) but not for a page: an address pointed at another
 * service would otherwise read that service's answers back through the dashboard. The logs keep the whole line.
 */

/** The notifier's reasons for an HTTP answer (`<reason> (<status> <Discord's words>)`): the reason and the status kept. */
const WEBHOOK_HTTP_ANSWER =
  /^((?:the webhook does not exist|the webhook token is not accepted|the message was refused)[^()]*) \((\d{3})\b/;

/** The notifier's other reasons, made of its own words and local facts only: shown as they are. */
const WEBHOOK_OWN_WORDS = [
  /^cannot reach the webhook host [\w.:[\]-]+ \([\w.-]+\) after \d+ tries$/,
  /^the webhook stayed rate limited \(429\) after \d+ waits$/,
  /^the webhook host kept failing \(HTTP \d{3}\) after \d+ tries$/,
  /^the message could not be sent \([^()]{0,120}\)$/,
];

/** The notifier's advice is its own words and the settings file's name; a longer one is not shown. */
const LONGEST_ADVICE = 240;

/**
 * The page's form of a notifier's failure, `<reason> — <advice>` as it logs it: the HTTP status instead of what the
 * remote side said; a reason of another shape becomes a pointer to the log.
 */
export function webhookFailureSummary(detail: string): string {
  // The advice is the notifier's and never holds " — "; a remote text may, so the last one splits.
  const split = detail.lastIndexOf(" — ");
  const reason = split < 0 ? detail : detail.slice(0, split);
  const advice = split < 0 ? undefined : detail.slice(split + 3);
  const http = WEBHOOK_HTTP_ANSWER.exec(reason);
  let summary: string;
  if (http) summary = `${http[1]} (HTTP ${http[2]})`;
  else if (WEBHOOK_OWN_WORDS.some((shape) => shape.test(reason))) summary = reason;
  else return "the post failed; the tool's log says why";
  return redact(advice !== undefined && advice.length <= LONGEST_ADVICE ? `${summary} — ${advice}` : summary);
}

/**
 * The page's form of an error from the panel client: an HTTP answer as the reason and its status, without the panel's
 * words; an answer that could not be read as just that (a JSON parser's message quotes the body); the rest (cannot
 * reach the panel, a setting missing) as describeError has it.
 */
export function panelErrorSummary(error: unknown): string {
  if (!(error instanceof McopsError)) return "the panel's answer could not be read (not the JSON of its API)";
  if (!(error instanceof PanelError) || error.status === undefined) return describeError(error);
  const status = error.status;
  // Core's messages: `<reason> (<status>[ <code>][: <detail>]...)`, or `the panel answered <status>...`.
  const at = error.message.indexOf(` (${status}`);
  const reason = error.message.startsWith("the panel answered ")
    ? "the panel answered"
    : at > 0
      ? error.message.slice(0, at)
      : "the panel refused the request";
  let line = `${reason} (HTTP ${status})`;
  if (error.where) line += ` (${error.where})`;
  // A rate limit's advice quotes the panel's Retry-After header.
  const hint = error.kind === "rate-limited" ? "try again in a minute" : error.hint;
  if (hint) line += ` — ${hint}`;
  return redact(line);
}

/** The Server List Ping's failures that are the library's own words or a socket's error. */
const PING_OWN_WORDS = [
  /^Server is offline or unreachable$/,
  /^(?:connect |getaddrinfo |read |write )?E[A-Z_]+(?: [\w.:[\]-]+)?$/,
  /^Expected server to send packet type 0x0[01], received \d+$/,
  /^Ping payload did not match received payload$/,
  /^[\w ]*[Tt]imed? ?out[\w ]*$/,
];

/** Why the game did not answer, for the page: the library's own words, never a quote of what the game sent. */
export function pingErrorSummary(error: string): string {
  return PING_OWN_WORDS.some((shape) => shape.test(error)) ? error : "its answer is not a Server List Ping status";
}
