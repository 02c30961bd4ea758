import { McopsError } from "@mcops/core/errors";
import { PanelError } from "@mcops/core/http";
import { WEBHOOK_ANSWER_WORDS, type WebhookFailure } from "@mcops/core/records";
import { redact } from "@mcops/core/secrets";
import { describeError } from "./settings-store.ts";

/**
 * What the page may say about a remote service's answer: a short status summary, never the answer's body. Core's
 * notifier and panel client put the body's words (Discord's `message` and form errors, the panel's `detail`) into their
 * reasons, which is right for the tools' logs (root's to read) but not for a page: an address pointed at another
 * service would otherwise read that service's answers back through the dashboard. The logs keep the whole line; the
 * page puts the codes (a failed post's kind and status, a PanelError's kind, status and own words) into its words.
 */

/** The longest advice or own-words reason the page shows: the notifier's are far shorter. */
const LONGEST_SHOWN = 240;

/**
 * A failed post (its record's failure) in the page's words: an HTTP answer as the notifier's words and its status;
 * the notifier's other reasons are its own words and local facts, shown as they are; the advice follows. A failure
 * read from a log written before the records has only its sentence: a pointer to the log.
 */
export function webhookFailureWords(failure: WebhookFailure): string {
  const { kind, status, reason, hint } = failure;
  let summary: string;
  if (kind === "gone" || kind === "token" || kind === "refused") {
    summary = status === undefined ? WEBHOOK_ANSWER_WORDS[kind] : `${WEBHOOK_ANSWER_WORDS[kind]} (HTTP ${status})`;
  } else if (kind === "legacy" || reason.length > LONGEST_SHOWN) {
    return "the post failed; the tool's log says why";
  } else summary = reason;
  return redact(hint && hint.length <= LONGEST_SHOWN ? `${summary} — ${hint}` : summary);
}

/**
 * The page's form of an error from the panel client: an answer the panel wrote as the client's own words for it and
 * its status, without the panel's words; an answer that could not be read as just that (a JSON parser's message
 * quotes the body); the rest (cannot reach the panel, a setting missing) as describeError has it.
 */
export function panelErrorSummary(error: unknown): string {
  if (!(error instanceof McopsError)) return "the panel's answer could not be read (not the JSON of its API)";
  if (!(error instanceof PanelError) || error.status === undefined) return describeError(error);
  let line = `${error.reason ?? "the panel refused the request"} (HTTP ${error.status})`;
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
