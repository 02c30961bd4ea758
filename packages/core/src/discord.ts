/**
 * Discord's API versions and 429s, as every mcops client that posts to Discord reads them: the webhook notifier (on
 * the machine) and discord-control's Worker. No Node built-ins here: the Worker imports it too.
 *
 * Sources (discord/discord-api-docs):
 * - developers/reference.mdx#api-versioning: "Omitting the version number from the route will route requests to the
 *   current default version", and the default is v6. A webhook address copied from a channel's settings has no version
 *   (`https://discord.com/api/webhooks/<id>/<token>`).
 * - the v8 change-log (docs/change-log/2020-09-24-api-and-gateway-v8.md): "The `Retry-After` header value and
 *   `retry_after` body value is now based in seconds instead of milliseconds". Below v8 (so on an unversioned path)
 *   both are milliseconds: issues #2360 (Retry-After of Execute Webhook in milliseconds on `/api/webhooks`) and #4722
 *   (retry_after of a webhook's 429 in milliseconds: "You are probably using a deprecated API version").
 * - developers/topics/rate-limits.mdx: X-RateLimit-Reset-After is "Total time (in seconds)" with decimals, in every
 *   version; X-RateLimit-Scope is `user`, `global` or `shared`; the body's `global` and X-RateLimit-Global mark the
 *   global limit (per bot, or per IP address without authorization: a webhook's is the machine's address).
 */

/** The version a webhook address without one is posted to (the one discord-control's bot calls too). */
export const DISCORD_API_VERSION = 10;

const VERSIONED = /^(.*?\/api)(?:\/v(\d+))?(\/webhooks\/.*)$/;

/**
 * The address to post to: a webhook address without an API version gets `/v10` after `/api` (Discord would otherwise
 * answer it as its default version, v6); one with a version, or any other address, is kept as it is.
 */
export function versionedWebhookUrl(address: string | URL): URL {
  const url = new URL(address);
  const match = VERSIONED.exec(url.pathname);
  if (match && match[2] === undefined) url.pathname = `${match[1]}/v${DISCORD_API_VERSION}${match[3]}`;
  return url;
}

/** The API version a request path names; undefined when it names none (Discord then answers as v6). */
export function apiVersion(address: string | URL): number | undefined {
  const version = VERSIONED.exec(new URL(address).pathname)?.[2];
  return version === undefined ? undefined : Number(version);
}

/** Which rate limit a 429 is: one webhook's (its own bucket, `user`, or the resource's, `shared`) or the machine's. */
export type DiscordRateScope = "webhook" | "global";

export interface DiscordRateLimit {
  /** How long to wait, ms; undefined when the answer names no wait. */
  waitMs: number | undefined;
  scope: DiscordRateScope;
}

/**
 * A Discord 429 read: how long to wait and whom it holds. `version` is the API version of the path it answered
 * (apiVersion; undefined for an unversioned path).
 *
 * The wait is X-RateLimit-Reset-After (seconds in every version) first; else the body's `retry_after`, else
 * Retry-After, both seconds from v8 on and milliseconds below (and on an unversioned path). A shared or global 429
 * is the resource's or the machine's limit, not the bucket's that Reset-After counts (rate-limits.mdx's shared
 * example: Reset-After 64.57, retry_after 1336.57): there the longer of the two is waited.
 *
 * `global` is X-RateLimit-Scope: global, X-RateLimit-Global: true or the body's `global: true`; `user` and `shared`
 * hold only the webhook posted to.
 */
export function discordRateLimit(
  headers: Pick<Headers, "get">,
  body: unknown,
  version: number | undefined,
): DiscordRateLimit {
  const scopeHeader = headers.get("x-ratelimit-scope")?.trim().toLowerCase();
  const inBody = body && typeof body === "object" ? (body as { retry_after?: unknown; global?: unknown }) : {};
  const global =
    scopeHeader === "global" ||
    headers.get("x-ratelimit-global")?.trim().toLowerCase() === "true" ||
    inBody.global === true;
  const unit = version !== undefined && version >= 8 ? 1000 : 1;
  const resetAfter = seconds(headers.get("x-ratelimit-reset-after"));
  const stated =
    typeof inBody.retry_after === "number" && Number.isFinite(inBody.retry_after) && inBody.retry_after >= 0
      ? Math.ceil(inBody.retry_after * unit)
      : retryAfterHeader(headers.get("retry-after"), unit);
  const resetMs = resetAfter === undefined ? undefined : Math.ceil(resetAfter * 1000);
  let waitMs = resetMs ?? stated;
  if ((global || scopeHeader === "shared") && resetMs !== undefined && stated !== undefined) {
    waitMs = Math.max(resetMs, stated);
  }
  return { waitMs, scope: global ? "global" : "webhook" };
}

function seconds(value: string | null): number | undefined {
  const n = Number(value?.trim() || Number.NaN);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

function retryAfterHeader(value: string | null, unit: number): number | undefined {
  const n = seconds(value);
  return n === undefined ? undefined : Math.ceil(n * unit);
}
