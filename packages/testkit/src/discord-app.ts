/**
 * A loopback stand-in for Discord's side of an application's slash commands: Discord signs each interaction it sends
 * to the application's Interactions Endpoint URL with the application's Ed25519 key, and the application then edits
 * its reply and registers its commands through the HTTP API. This stand-in holds a test key pair, sends interactions
 * (signed, or signed wrong, or stale) to an endpoint as Discord does, and answers the API routes the application
 * calls, recording every reply edit.
 *
 * Sources (discord/discord-api-docs):
 * - developers/interactions/overview.mdx, "Setting Up an Endpoint": every interaction is a POST with the headers
 *   `X-Signature-Ed25519` (hex signature) and `X-Signature-Timestamp`; the signed message is the timestamp followed by
 *   the raw body; an endpoint must answer a bad signature 401, and Discord sends such requests to check it; a PING
 *   (type 1) is answered `{"type":1}`.
 * - developers/interactions/receiving-and-responding.mdx: the Interaction object (type 2 APPLICATION_COMMAND, `data`
 *   with `name` and `options`, `member` with `user` and `roles` in a guild, `token` valid for 15 minutes); response
 *   types 4 CHANNEL_MESSAGE_WITH_SOURCE and 5 DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE; message flag 64 EPHEMERAL; Edit
 *   Original Interaction Response: PATCH /webhooks/{application.id}/{interaction.token}/messages/@original, no
 *   Authorization header (the token is in the path), answers 200 with the message; an unknown or expired token is
 *   404 `{"message": "Unknown Webhook", "code": 10015}`. Where an interaction comes from: `guild_id` and `member` in a
 *   guild, `user` (no member) in a DM; `context` (0 GUILD, 1 BOT_DM, 2 PRIVATE_CHANNEL) and
 *   `authorizing_integration_owners` (key "0" GUILD_INSTALL: the guild's id; "1" USER_INSTALL: the user's id).
 * - developers/reference.mdx, "User Agent": a request without a valid `DiscordBot ($url, $versionNumber)` User-Agent
 *   may be blocked (the stand-in records what each edit sent). developers/topics/rate-limits.mdx: a 429 carries
 *   `retry_after` (seconds, a float) in the body and `Retry-After` (whole seconds); `inject` queues one for edits.
 * - developers/interactions/application-commands.mdx, "Bulk Overwrite Global Application Commands": PUT
 *   /applications/{application.id}/commands with `Authorization: Bot <token>`, a JSON array of commands, answers 200
 *   with the commands (ids added); a wrong token is 401 `{"message": "401: Unauthorized", "code": 0}`.
 */
import { createHash, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RouteSource } from "./contract.ts";
import { injectedRateLimit } from "./discord.ts";
import {
  applyFault,
  type Fault,
  FaultQueue,
  isPlainObject,
  type Loopback,
  listenLoopback,
  parseJson,
  randomDigits,
  randomString,
  readBody,
  reasonPhrase,
  sendAny,
  sendJson,
  TimerSet,
} from "./http.ts";

const DOCS = "discord/discord-api-docs";

export const DISCORD_APP_ROUTES: readonly RouteSource[] = [
  {
    method: "PATCH",
    path: "/api/v10/webhooks/{application.id}/{interaction.token}/messages/@original",
    source: `${DOCS} developers/interactions/receiving-and-responding.mdx#edit-original-interaction-response`,
  },
  {
    method: "PUT",
    path: "/api/v10/applications/{application.id}/commands",
    source: `${DOCS} developers/interactions/application-commands.mdx#bulk-overwrite-global-application-commands`,
  },
];

/** What a member typed: the command, its options, and who they are. */
export interface SlashCommand {
  name: string;
  options?: Record<string, string | number | boolean>;
  /** Role ids of the member (default none). */
  roles?: string[];
  user?: string;
  /**
   * Where it is typed (default "guild": the stand-in's guild, the app installed there). "dm": a DM with the app (no
   * guild, no member); "user-install": a guild where only the member installed the app (USER_INSTALL).
   */
  from?: "guild" | "dm" | "user-install";
  /** Another guild's id (default the stand-in's `guildId`). */
  guildId?: string;
}

/** One edit of an interaction's reply, in order. */
export interface ReplyEdit {
  token: string;
  content: string;
  at: number;
  /** The User-Agent the edit was sent with. */
  userAgent: string | undefined;
}

/** Every PATCH of a reply, answered or refused, in order. */
export interface EditRequest {
  token: string;
  at: number;
  status: number;
}

export interface DiscordAppStandIn extends Loopback {
  /** The API base the application calls: `<url>/api/v10`. */
  api: string;
  applicationId: string;
  /** The application's public key, hex (what the Developer Portal shows). */
  publicKey: string;
  botToken: string;
  /** The guild the application is installed in, and its role ids, to hand to members. */
  guildId: string;
  roles: { start: string; admin: string };
  /** Sends an interaction to `endpoint`, signed as Discord signs it. */
  command(endpoint: string, command: SlashCommand): Promise<InteractionAnswer>;
  /** Sends a PING. */
  ping(endpoint: string): Promise<InteractionAnswer>;
  /** Sends raw bytes with the given signature headers (a forged, a stale or an unsigned request). */
  send(endpoint: string, body: string, headers: Record<string, string>): Promise<Response>;
  /** The headers Discord would send for `body` at `timestamp` (seconds). */
  sign(body: string, timestamp?: number): Record<string, string>;
  /** Every reply edit received. */
  readonly edits: ReplyEdit[];
  /** Every reply edit asked for, with the status it got (429s and 404s included). */
  readonly editRequests: EditRequest[];
  /** Queue a fault (a 429 with retry_after, a status, a drop, a delay) for the next reply edit(s). */
  inject(fault: Fault): void;
  /** The latest content of each interaction's reply, by token. */
  reply(token: string): string | undefined;
  /** The commands registered, as last put. */
  readonly commands: unknown[];
  /** Interaction tokens expire (15 minutes on Discord): edits to this one answer 404 from now on. */
  expire(token: string): void;
}

export interface InteractionAnswer {
  status: number;
  /** The interaction's token, for its reply's edits. */
  token: string;
  body: { type?: number; data?: { content?: string; flags?: number } } | undefined;
  /** The bytes and headers sent, as someone who captured them could send them again (`send`). */
  sent: { body: string; headers: Record<string, string> };
}

export async function startDiscordAppStandIn(): Promise<DiscordAppStandIn> {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const publicHex = (publicKey.export({ format: "der", type: "spki" }) as Buffer).subarray(-32).toString("hex");
  const applicationId = randomDigits(19);
  const botToken = `${randomString(26)}.${randomString(6)}.${randomString(38)}`;
  const guildId = randomDigits(19);
  const roles = { start: randomDigits(19), admin: randomDigits(19) };
  const app: AppState = {
    applicationId,
    botToken,
    edits: [],
    editRequests: [],
    faults: new FaultQueue<Fault>(),
    timers: new TimerSet(),
    expired: new Set(),
    issued: new Set(),
    commands: [],
  };

  const signHeaders = (body: string, timestamp = Math.floor(Date.now() / 1000)) => signed(privateKey, body, timestamp);

  const server = await listenLoopback(async (req, res) => {
    const path = new URL(req.url ?? "/", "http://discord").pathname;
    const edit = /^\/api\/v10\/webhooks\/(\d+)\/([^/]+)\/messages\/@original$/.exec(path);
    if (edit && req.method === "PATCH") return editReply(app, req, res, edit[1] as string, edit[2] as string);
    if (path === `/api/v10/applications/${applicationId}/commands` && req.method === "PUT")
      return putCommands(app, req, res);
    sendJson(res, 404, { message: "404: Not Found", code: 0 });
  });

  async function post(endpoint: string, body: string, headers: Record<string, string>): Promise<Response> {
    return fetch(endpoint, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "Discord-Interactions/1.0 (+https://discord.com)",
        ...headers,
      },
      body,
    });
  }

  async function interact(endpoint: string, interaction: Record<string, unknown>): Promise<InteractionAnswer> {
    const token = `aW50ZXJhY3Rpb24${randomString(150)}`;
    app.issued.add(token);
    const body = JSON.stringify({
      id: randomDigits(19),
      application_id: applicationId,
      token,
      version: 1,
      ...interaction,
    });
    const headers = signHeaders(body);
    const response = await post(endpoint, body, headers);
    const text = await response.text();
    const parsed = parseJson(text);
    return {
      status: response.status,
      token,
      body: parsed.ok ? (parsed.value as InteractionAnswer["body"]) : undefined,
      sent: { body, headers },
    };
  }

  return {
    ...server,
    api: `${server.url}/api/v10`,
    applicationId,
    publicKey: publicHex,
    botToken,
    guildId,
    roles,
    edits: app.edits,
    editRequests: app.editRequests,
    inject: (fault) => app.faults.push(fault),
    get commands() {
      return app.commands;
    },
    sign: signHeaders,
    send: post,
    ping: (endpoint) => interact(endpoint, { type: 1 }),
    command: (endpoint, command) => interact(endpoint, slashCommand(command, guildId)),
    reply(token) {
      return app.edits.filter((e) => e.token === token).at(-1)?.content;
    },
    expire(token) {
      app.expired.add(token);
    },
    async close() {
      app.timers.clearAll();
      await server.close();
    },
  };
}

/** What the API routes share. */
interface AppState {
  applicationId: string;
  botToken: string;
  edits: ReplyEdit[];
  editRequests: EditRequest[];
  /** Faults for the reply edits. */
  faults: FaultQueue<Fault>;
  timers: TimerSet;
  expired: Set<string>;
  issued: Set<string>;
  commands: unknown[];
}

async function editReply(
  app: AppState,
  req: IncomingMessage,
  res: ServerResponse,
  appId: string,
  token: string,
): Promise<void> {
  const parsed = parseJson(await readBody(req));
  const at = Date.now();
  const answer = (status: number, body: unknown) => {
    app.editRequests.push({ token, at, status });
    sendJson(res, status, body);
  };
  const fault = app.faults.take();
  const faulted = await applyFault(fault, res, app.timers, {
    status: (f) => {
      app.editRequests.push({ token, at, status: f.status });
      sendAny(res, f.status, f.body ?? { message: `${f.status}: ${reasonPhrase(f.status)}`, code: 0 }, f.headers ?? {});
    },
    rateLimit: (f) => {
      app.editRequests.push({ token, at, status: 429 });
      // Its routes are all under /api/v10: the waits in seconds.
      injectedRateLimit(res, f, EDIT_BUCKET, Date.now(), 10);
    },
    dropped: () => app.editRequests.push({ token, at, status: 0 }),
  });
  if (faulted === "handled") return;
  if (appId !== app.applicationId || !app.issued.has(token) || app.expired.has(token)) {
    return answer(404, { message: "Unknown Webhook", code: 10015 });
  }
  if (!parsed.ok || !isPlainObject(parsed.value) || typeof parsed.value.content !== "string") {
    return answer(400, { message: "Cannot send an empty message", code: 50006 });
  }
  const content = parsed.value.content;
  if (content.length > 2000) {
    return answer(400, {
      message: "Invalid Form Body",
      code: 50035,
      errors: {
        content: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 2000 or fewer in length." }] },
      },
    });
  }
  const userAgent = req.headers["user-agent"];
  app.edits.push({ token, content, at: Date.now(), userAgent });
  answer(200, { id: randomDigits(19), type: 20, content, channel_id: randomDigits(19), application_id: appId });
}

async function putCommands(app: AppState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.headers.authorization !== `Bot ${app.botToken}`) {
    return sendJson(res, 401, { message: "401: Unauthorized", code: 0 });
  }
  const parsed = parseJson(await readBody(req));
  if (!parsed.ok || !Array.isArray(parsed.value)) {
    return sendJson(res, 400, { message: "Invalid Form Body", code: 50035 });
  }
  app.commands = parsed.value.map((command) => ({
    id: randomDigits(19),
    application_id: app.applicationId,
    version: randomDigits(19),
    default_member_permissions: null,
    type: 1,
    ...(command as object),
  }));
  sendJson(res, 200, app.commands);
}

/** The bucket of the edit route in an injected 429's headers. */
const EDIT_BUCKET = createHash("sha256")
  .update("PATCH /webhooks/{application.id}/{interaction.token}/messages/@original")
  .digest("hex")
  .slice(0, 32);

/**
 * An APPLICATION_COMMAND interaction, as receiving-and-responding.mdx shows it (token and ids added): in a guild the
 * app is installed in (default), in a DM with the app, or in a guild where only the member installed it.
 */
function slashCommand(command: SlashCommand, ownGuildId: string): Record<string, unknown> {
  const user = command.user ?? "steve";
  const userObject = { id: randomDigits(18), username: user, global_name: user };
  const guildId = command.guildId ?? ownGuildId;
  const from = command.from ?? "guild";
  const where =
    from === "dm"
      ? { context: 1, user: userObject, authorizing_integration_owners: { "1": userObject.id } }
      : {
          guild_id: guildId,
          context: 0,
          authorizing_integration_owners: from === "user-install" ? { "1": userObject.id } : { "0": guildId },
          guild_locale: "en-US",
          member: {
            user: userObject,
            roles: command.roles ?? [],
            permissions: "0",
            joined_at: new Date().toISOString(),
          },
        };
  return {
    type: 2,
    channel_id: randomDigits(19),
    data: {
      id: randomDigits(19),
      name: command.name,
      type: 1,
      options: Object.entries(command.options ?? {}).map(([name, value]) => ({
        name,
        type: typeof value === "boolean" ? 5 : typeof value === "number" ? 4 : 3,
        value,
      })),
    },
    app_permissions: "0",
    locale: "en-US",
    ...where,
  };
}

/** Discord's signature headers: Ed25519 over the timestamp followed by the body. */
function signed(privateKey: KeyObject, body: string, timestamp: number): Record<string, string> {
  const signature = sign(null, Buffer.from(`${timestamp}${body}`), privateKey).toString("hex");
  return { "x-signature-ed25519": signature, "x-signature-timestamp": String(timestamp) };
}
