import { fromHex } from "@mcops/core/vm-signature";
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
  token: string;
  command: string;
  options: Record<string, unknown>;
  /** The member's role ids; undefined outside a guild (a DM). */
  roles: string[] | undefined;
  user: string;
}

export function readInteraction(value: unknown): Interaction | undefined {
  const i = value as {
    type?: unknown;
    token?: unknown;
    data?: { name?: unknown; options?: Array<{ name?: unknown; value?: unknown }> };
    member?: { roles?: unknown; user?: { username?: unknown; global_name?: unknown } };
    user?: { username?: unknown };
  };
  if (typeof i?.type !== "number" || (i.type !== 1 && typeof i.token !== "string")) return undefined;
  const options: Record<string, unknown> = {};
  for (const option of Array.isArray(i.data?.options) ? i.data.options : []) {
    if (typeof option?.name === "string") options[option.name] = option.value;
  }
  const roles = i.member?.roles;
  const name = i.member?.user?.global_name ?? i.member?.user?.username ?? i.user?.username;
  return {
    type: i.type,
    token: typeof i.token === "string" ? i.token : "",
    command: typeof i.data?.name === "string" ? i.data.name : "",
    options,
    roles: Array.isArray(roles) ? roles.filter((r): r is string => typeof r === "string") : undefined,
    user: typeof name === "string" ? name.slice(0, 32) : "someone",
  };
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

/**
 * Edits a deferred reply (PATCH /webhooks/{application.id}/{token}/messages/@original). False when Discord refused
 * (the token expired after 15 minutes): the run goes on, only that reply stops following it.
 */
export async function editReply(env: Env, token: string, content: string): Promise<boolean> {
  const base = env.DISCORD_API_URL ?? DISCORD_API;
  const response = await fetch(`${base}/webhooks/${env.DISCORD_APPLICATION_ID}/${token}/messages/@original`, {
    method: "PATCH",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ content: content.slice(0, 2000), allowed_mentions: { parse: [] } }),
  });
  await response.body?.cancel();
  return response.ok;
}

/** Markdown of Discord escaped, so a name shows as written and formats nothing. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\*_~`|>#[\]()<@:-]/g, "\\$&");
}

/** `<t:…:R>`: Discord shows it as "3 hours ago" in each reader's own language and time zone. */
export function relative(ms: number): string {
  return `<t:${Math.floor(ms / 1000)}:R>`;
}
