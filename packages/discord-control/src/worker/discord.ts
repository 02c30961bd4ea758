import { apiVersion, discordRateLimit, versionedWebhookUrl } from "@mcops/core/discord";
import { fromHex } from "@mcops/core/vm-signature";
import { DISCORD_USER_AGENT } from "../user-agent.ts";
import { DISCORD_API, type Env } from "./env.ts";

/**
 * Discord's side (discord/discord-api-docs developers/interactions): the Ed25519 signature of every interaction, the
 * interaction as far as it is read, the answers, and the edits of a deferred reply.
 */

/** How old an interaction's timestamp may be; Discord sends it at once, so anything older is a replay. */
export const MAX_AGE_SECONDS = 5 * 60;
/** An interaction is a few KiB; anything larger is not Discord. */
export const MAX_BODY_BYTES = 64 * 1024;

const encoder = new TextEncoder();

/**
 * True when `body` was signed by the application's key (`X-Signature-Ed25519` over `X-Signature-Timestamp` + body)
 * and the timestamp is within MAX_AGE_SECONDS of now.
 */
export async function verifyInteraction(
  publicKeyHex: string,
  body: string,
  headers: Headers,
  nowSeconds: number,
): Promise<boolean> {
  const signature = fromHex(headers.get("x-signature-ed25519") ?? "");
  const timestamp = headers.get("x-signature-timestamp") ?? "";
  const publicKey = fromHex(publicKeyHex);
  if (signature?.length !== 64 || publicKey?.length !== 32) return false;
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(nowSeconds - Number(timestamp)) > MAX_AGE_SECONDS) return false;
  const key = await crypto.subtle.importKey("raw", publicKey, { name: "Ed25519" }, false, ["verify"]);
  return crypto.subtle.verify("Ed25519", key, signature, encoder.encode(timestamp + body));
}

/** The request's body, or undefined when it is larger than `max` bytes (read no further). */
export async function boundedText(request: Request, max = MAX_BODY_BYTES): Promise<string | undefined> {
  if (Number(request.headers.get("content-length") ?? 0) > max) return undefined;
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(all);
}

/** The parts of an interaction that are read. */
export interface Interaction {
  type: number;
  /** Its snowflake: a repeat of it is a replay. */
  id: string;
  token: string;
  command: string;
  options: Record<string, unknown>;
  /** The member's role ids; undefined outside a guild (a DM). */
  roles: string[] | undefined;
  user: string;
  /** Where it was typed: the guild (none in a DM), the context (0 GUILD, 1 BOT_DM, 2 PRIVATE_CHANNEL). */
  guildId: string | undefined;
  context: number | undefined;
  /**
   * authorizing_integration_owners: the guild the app is installed in ("0", GUILD_INSTALL), or undefined when only
   * the member installed it ("1", USER_INSTALL); `null` when Discord did not say (older payloads).
   */
  installedIn: string | undefined | null;
}

export function readInteraction(value: unknown): Interaction | undefined {
  const i = value as {
    type?: unknown;
    id?: unknown;
    token?: unknown;
    guild_id?: unknown;
    context?: unknown;
    authorizing_integration_owners?: Record<string, unknown>;
    data?: { name?: unknown; options?: Array<{ name?: unknown; value?: unknown }> };
    member?: { roles?: unknown; user?: { username?: unknown; global_name?: unknown } };
    user?: { username?: unknown };
  };
  if (typeof i?.type !== "number") return undefined;
  if (i.type !== 1 && (typeof i.token !== "string" || typeof i.id !== "string")) return undefined;
  const options: Record<string, unknown> = {};
  for (const option of Array.isArray(i.data?.options) ? i.data.options : []) {
    if (typeof option?.name === "string") options[option.name] = option.value;
  }
  const roles = i.member?.roles;
  const name = i.member?.user?.global_name ?? i.member?.user?.username ?? i.user?.username;
  const owners = i.authorizing_integration_owners;
  const guildInstall = typeof owners === "object" && owners !== null ? owners["0"] : null;
  return {
    type: i.type,
    id: typeof i.id === "string" ? i.id : "",
    token: typeof i.token === "string" ? i.token : "",
    command: typeof i.data?.name === "string" ? i.data.name : "",
    options,
    roles: Array.isArray(roles) ? roles.filter((r): r is string => typeof r === "string") : undefined,
    user: typeof name === "string" ? name.slice(0, 32) : "someone",
    guildId: typeof i.guild_id === "string" ? i.guild_id : undefined,
    context: typeof i.context === "number" ? i.context : undefined,
    installedIn: guildInstall === null ? null : typeof guildInstall === "string" ? guildInstall : undefined,
  };
}

/**
 * Why an interaction is not answered here, or undefined when it comes from the group's guild (GUILD_ID) with the app
 * installed there: a DM, another guild, or a guild where only the member installed the app (a user install) are
 * refused, whatever the command, so /status says nothing of the server outside the group.
 */
export function outOfScope(interaction: Interaction, guildId: string | undefined): string | undefined {
  if (!guildId) return "This Worker has no GUILD_ID set: it answers in no Discord server.";
  if (interaction.guildId === undefined || (interaction.context !== undefined && interaction.context !== 0)) {
    return "Use this in the group's Discord server, not in a DM.";
  }
  if (interaction.guildId !== guildId || (interaction.installedIn !== null && interaction.installedIn !== guildId)) {
    return "This application answers only in the group's Discord server.";
  }
  return undefined;
}

/** Interaction response types (receiving-and-responding.mdx). */
export const PONG = 1;
export const MESSAGE = 4;
export const DEFERRED = 5;
/** Message flag: only the member who typed the command sees it. */
export const EPHEMERAL = 64;

export function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

/** A reply in the channel (or only to the member, `private`); it never pings anyone. */
export function reply(content: string, options: { private?: boolean } = {}): Response {
  return json({
    type: MESSAGE,
    data: {
      content: content.slice(0, 2000),
      allowed_mentions: { parse: [] },
      ...(options.private ? { flags: EPHEMERAL } : {}),
    },
  });
}

/** How a message to Discord went: shown; refused for good (an expired or unknown token: 404, 401); or not now. */
export type Delivery = "ok" | "gone" | "failed";

/** Tries of a request that Discord answers 429, and the longest wait for one (longer: it fails, tried later). */
const MAX_TRIES = 4;
const MAX_WAIT_MS = 30_000;

/**
 * Sends a message request to Discord with its User-Agent; a 429 is waited out (@mcops/core/discord's
 * discordRateLimit: X-RateLimit-Reset-After, else retry_after, else Retry-After, in the units of the path's API
 * version) and tried again, MAX_TRIES in all and no wait over MAX_WAIT_MS (developers/topics/rate-limits.mdx).
 * `sleep` is the wait (a test's may be instant).
 */
export async function sendToDiscord(
  url: string,
  init: { method: string; body: string },
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<Delivery> {
  for (let attempt = 1; ; attempt++) {
    let response: Response;
    try {
      response = await fetch(url, {
        ...init,
        headers: { "content-type": "application/json", "user-agent": DISCORD_USER_AGENT },
      });
    } catch {
      return "failed";
    }
    if (response.status !== 429) {
      await response.body?.cancel();
      if (response.ok) return "ok";
      return response.status === 404 || response.status === 401 ? "gone" : "failed";
    }
    const waitMs = await retryAfterMs(response, apiVersion(url));
    if (attempt >= MAX_TRIES || waitMs === undefined || waitMs > MAX_WAIT_MS) return "failed";
    await sleep(waitMs);
  }
}

/** A 429's wait, ms, as the path's API version gives it (`version` undefined: an unversioned path). */
async function retryAfterMs(response: Response, version: number | undefined): Promise<number | undefined> {
  const text = await response.text().catch(() => "");
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    body = undefined;
  }
  return discordRateLimit(response.headers, body, version).waitMs;
}

function messageBody(content: string): string {
  return JSON.stringify({ content: content.slice(0, 2000), allowed_mentions: { parse: [] } });
}

/**
 * Edits a deferred reply (PATCH /webhooks/{application.id}/{token}/messages/@original). "gone" when Discord refused
 * the token (it expired after 15 minutes): the run goes on, only that reply stops following it.
 */
export function editReply(env: Env, token: string, content: string): Promise<Delivery> {
  const base = env.DISCORD_API_URL ?? DISCORD_API;
  const url = `${base}/webhooks/${env.DISCORD_APPLICATION_ID}/${token}/messages/@original`;
  return sendToDiscord(url, { method: "PATCH", body: messageBody(content) });
}

/**
 * Posts to the channel through the outcome webhook (Execute Webhook), when one is set: as `/api/v10/webhooks/…` when
 * its address names no version (a copied address does not; Discord's default version would give a 429's waits in
 * milliseconds).
 */
export function postToChannel(env: Env, content: string): Promise<Delivery> {
  if (!env.OUTCOME_WEBHOOK_URL) return Promise.resolve("failed");
  let url: string;
  try {
    url = versionedWebhookUrl(env.OUTCOME_WEBHOOK_URL).href;
  } catch {
    return Promise.resolve("failed"); // not an address: fetch would have refused it too
  }
  return sendToDiscord(url, { method: "POST", body: messageBody(content) });
}

/** Markdown of Discord escaped, so a name shows as written and formats nothing. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\*_~`|>#[\]()<@:-]/g, "\\$&");
}

/** `<t:…:R>`: Discord shows it as "3 hours ago" in each reader's own language and time zone. */
export function relative(ms: number): string {
  return `<t:${Math.floor(ms / 1000)}:R>`;
}
