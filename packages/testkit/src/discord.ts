/**
 * A loopback stand-in for a Discord channel webhook (`POST /api/webhooks/<id>/<token>`): validates the payload the
 * way Discord documents it, answers with Discord's status codes, error bodies and rate-limit headers, records what
 * would have appeared in the channel (and whom it would have pinged), and injects faults on request.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RouteSource } from "./contract.ts";
import type {
  Fault,
  HeaderMap,
  JsonParse,
  Loopback,
  RateDecision,
  RateLimitFault,
  RateLimitOptions,
  StatusFault,
} from "./http.ts";
import {
  applyFault,
  Changes,
  clockTime,
  FaultQueue,
  isPlainObject,
  listenLoopback,
  mediaType,
  parseJson,
  randomDigits,
  randomString,
  readBody,
  reasonPhrase,
  SlidingWindowLimiter,
  seconds,
  sendAny,
  sendEmpty,
  sendJson,
  TimerSet,
} from "./http.ts";

export interface WebhookConfig {
  id: string;
  token: string;
  /** The name messages are posted under unless the payload sets `username` (default "Captain Hook"). */
  name?: string;
}

export interface DiscordStandInOptions {
  /** Default: one webhook with an 18-digit id and a random 68-character token. */
  webhooks?: WebhookConfig[];
  /** Per webhook, sliding window. Default 30 per 60 000 ms. */
  rateLimit?: RateLimitOptions;
  /**
   * The clock of the rate limit (default Date.now): its window and the times its headers give (X-RateLimit-Reset,
   * -Reset-After, Retry-After, retry_after). A test that moves its own clock decides exactly which posts are still in
   * the window, however slow the machine is. The times the stand-in records (`at`) and its delays stay real time.
   */
  now?: () => number;
}

/** Whom a message pings, computed as Discord does (content only, filtered by allowed_mentions). */
export interface Pings {
  everyone: boolean;
  users: string[];
  roles: string[];
}

export interface ReceivedMessage {
  /** The message id Discord would have given it (a snowflake). */
  id: string;
  /** Date.now() when it was accepted. */
  at: number;
  webhookId: string;
  wait: boolean;
  /** The parsed JSON payload, as posted. */
  // biome-ignore lint/suspicious/noExplicitAny: whatever JSON the tool posted; the tests of nine packages read it as posted (body.embeds[0].title), which unknown would forbid
  body: any;
  pings: Pings;
}

export interface DiscordRequestRecord {
  at: number;
  method: string;
  /** Path and query, the webhook token replaced by "***". */
  path: string;
  /** The status answered; 0 when a "drop" fault closed the connection without an answer. */
  status: number;
  /** The injected fault that answered (or delayed) this request. */
  fault?: Fault["kind"];
}

export interface DiscordStandIn {
  /** Base address, http://127.0.0.1:PORT */
  url: string;
  webhooks: WebhookConfig[];
  /**
   * The full webhook address of webhooks[index], as Discord's Copy Webhook URL gives it: without an API version
   * (answered as the default version, v6: 429 waits in milliseconds), or with `version` (`/api/v10/webhooks/…`).
   */
  webhookUrl(index?: number, version?: number): string;
  /** Accepted messages, in order. */
  messages: ReceivedMessage[];
  /** Every request answered (or dropped), faults and 429s included. */
  requests: DiscordRequestRecord[];
  /** Queue a fault for the next POST(s) to a webhook address. */
  inject(fault: Fault): void;
  /** Delete webhooks[index]: from now on it answers 404 Unknown Webhook. */
  deleteWebhook(index: number): void;
  /** Resolves with the messages once at least `count` were accepted; rejects after `timeoutMs`. */
  waitForMessages(count: number, timeoutMs?: number): Promise<ReceivedMessage[]>;
  /** Forget messages, requests, rate-limit windows and pending faults. */
  reset(): void;
  close(): Promise<void>;
}

type DiscordError = { message: string; code: number; errors?: ErrorTree };
export interface FieldError {
  code: string;
  message: string;
}
/** Discord's nested error shape: keys follow the payload path, leaves hold `_errors`. */
export interface ErrorTree {
  _errors?: FieldError[];
  [key: string]: ErrorTree | FieldError[] | undefined;
}

const DOCS = "discord/discord-api-docs";
const SPEC = "discord/discord-api-spec specs/openapi.json";

/**
 * Every route the stand-in answers and the public source it follows. The real answers copied from these sources are
 * in test/contracts/discord/ and checked against the stand-in by discord.contract.test.ts.
 */
export const DISCORD_ROUTES: readonly RouteSource[] = [
  {
    method: "POST",
    path: "/api/webhooks/{webhook.id}/{webhook.token}",
    source:
      `${DOCS} developers/resources/webhook.mdx#execute-webhook (204, or 200 and the message with ?wait=true: ` +
      "developers/resources/message.mdx#message-object; boolean query strings: developers/reference.mdx); errors: " +
      "developers/topics/opcodes-and-status-codes.mdx (10015, 50006, 50027, 50035, 50109) and " +
      "developers/reference.mdx#error-messages (the nested errors object); rate limits: " +
      `developers/topics/rate-limits.mdx; the headers of each status: ${SPEC} (execute_webhook)`,
  },
  {
    method: "POST",
    path: "/api/v{version}/webhooks/{webhook.id}/{webhook.token}",
    source:
      `${DOCS} developers/reference.mdx#api-versioning (https://discord.com/api/v{version_number}; without it, the ` +
      "default version, v6, answers); answers as the unversioned path but for the units of a 429's waits: seconds " +
      "from v8 on, milliseconds below and without a version (docs/change-log/2020-09-24-api-and-gateway-v8.md; " +
      "issues #2360 and #4722)",
  },
  {
    method: "PUT",
    path: "/api/webhooks/{webhook.id}/{webhook.token}",
    source:
      `${DOCS} developers/topics/opcodes-and-status-codes.mdx (405 METHOD NOT ALLOWED, JSON code 0). The stand-in ` +
      "answers 405 to every method but POST; Discord serves GET, PATCH and DELETE there as well " +
      "(developers/resources/webhook.mdx: Get, Modify and Delete Webhook with Token), which no mcops tool uses",
  },
  {
    method: "GET",
    path: "/api/webhooks/{webhook.id}",
    source:
      `${DOCS} developers/resources/webhook.mdx#get-webhook (a bot's route: needs MANAGE_WEBHOOKS) and ` +
      "developers/topics/opcodes-and-status-codes.mdx (401 UNAUTHORIZED, JSON code 0); any method",
  },
];

const DISCORD_EPOCH = 1_420_070_400_000n;
const CONTENT_MAX = 2000;
const EMBEDS_MAX = 10;
const EMBED_TOTAL_MAX = 6000;
const COLOUR_MAX = 0xffffff;
const MENTION_TYPES = ["roles", "users", "everyone"] as const;

/** What the stand-in keeps between requests. */
interface Discord {
  webhooks: WebhookConfig[];
  deleted: Set<string>;
  /** The rate limit's clock. */
  now: () => number;
  limiter: SlidingWindowLimiter;
  faults: FaultQueue<Fault>;
  timers: TimerSet;
  changes: Changes;
  channelId: string;
  nextSnowflake: (at: number) => string;
  messages: ReceivedMessage[];
  requests: DiscordRequestRecord[];
}

export async function startDiscordStandIn(options: DiscordStandInOptions = {}): Promise<DiscordStandIn> {
  const now = options.now ?? Date.now;
  const discord: Discord = {
    webhooks: (options.webhooks ?? [defaultWebhook()]).map((hook) => ({ ...hook })),
    deleted: new Set<string>(),
    now,
    limiter: new SlidingWindowLimiter({
      ...(options.rateLimit ?? { limit: 30, windowMs: 60_000 }),
      countRejected: true,
      now,
    }),
    faults: new FaultQueue<Fault>(),
    timers: new TimerSet(),
    changes: new Changes(),
    channelId: randomDigits(18),
    nextSnowflake: snowflakes(),
    messages: [],
    requests: [],
  };
  const server = await listenLoopback((req, res) => handle(discord, req, res));
  return standIn(discord, server);
}

/** The test's handle on the stand-in. */
function standIn(discord: Discord, server: Loopback): DiscordStandIn {
  const { webhooks, messages, requests } = discord;
  const hookAt = (index: number): WebhookConfig => {
    const hook = webhooks[index];
    if (!hook) throw new RangeError(`no webhook at index ${index} (there are ${webhooks.length})`);
    return hook;
  };
  return {
    url: server.url,
    webhooks,
    webhookUrl(index = 0, version) {
      const hook = hookAt(index);
      return `${server.url}/api${version === undefined ? "" : `/v${version}`}/webhooks/${hook.id}/${hook.token}`;
    },
    messages,
    requests,
    inject: (fault) => discord.faults.push(fault),
    deleteWebhook(index) {
      discord.deleted.add(hookAt(index).id);
    },
    waitForMessages(count, timeoutMs = 30_000) {
      return discord.changes.waitFor(
        () => (messages.length >= count ? [...messages] : undefined),
        timeoutMs,
        () =>
          `Discord stand-in: expected ${count} message(s) within ${timeoutMs} ms, got ${messages.length}; ` +
          `requests answered: ${requests.map((r) => r.status).join(", ") || "none"}`,
      );
    },
    reset() {
      messages.length = 0;
      requests.length = 0;
      discord.limiter.reset();
      discord.faults.clear();
    },
    async close() {
      discord.timers.clearAll();
      await server.close();
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// A request, step by step

/** One request on its way through the steps below, and how to answer it (each answer is recorded). */
interface Exchange {
  /** Date.now() when it arrived. */
  at: number;
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  url: URL;
  body: string;
  /** The API version of the path; undefined without one (Discord's default version then answers). */
  version: number | undefined;
  /** The injected fault that answered (or delayed) it, once taken. */
  fault?: Fault["kind"];
  record(status: number): void;
  json(status: number, payload: unknown, headers?: HeaderMap): void;
  error(status: number, payload: DiscordError, headers?: HeaderMap): void;
}

async function receive(discord: Discord, req: IncomingMessage, res: ServerResponse): Promise<Exchange> {
  const at = Date.now();
  const method = req.method ?? "GET";
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const path = url.pathname.replace(/^(\/api(?:\/v\d+)?\/webhooks\/[^/]+\/)[^/]+/, "$1***") + url.search;
  const body = await readBody(req);
  const version = /^\/api\/v(\d+)\//.exec(url.pathname)?.[1];
  const exchange: Exchange = {
    at,
    req,
    res,
    method,
    url,
    body,
    version: version === undefined ? undefined : Number(version),
    record(status) {
      const fault = exchange.fault;
      discord.requests.push({ at, method, path, status, ...(fault ? { fault } : {}) });
    },
    json(status, payload, headers = {}) {
      exchange.record(status);
      sendJson(res, status, payload, headers);
    },
    error: (status, payload, headers = {}) => exchange.json(status, payload, headers),
  };
  return exchange;
}

async function handle(discord: Discord, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const x = await receive(discord, req, res);
  const route = /^\/api(?:\/v\d+)?\/webhooks\/([^/]+)(?:\/([^/]+))?\/?$/.exec(x.url.pathname);

  // The routes and their sources: DISCORD_ROUTES above.
  if (!route) return x.error(404, { message: "404: Not Found", code: 0 });
  const [, webhookId = "", token] = route;
  // Without the token the address needs a bot's Authorization header, which a webhook client never has
  // (webhook.mdx, Get Webhook).
  if (token === undefined) return x.error(401, { message: "401: Unauthorized", code: 0 });
  if (x.method !== "POST") return x.error(405, { message: "405: Method Not Allowed", code: 0 });
  // webhook.mdx, Execute Webhook, from here on.

  if ((await injectedFault(discord, x)) === "handled") return;
  const limitHeaders = throttle(discord, x, `${webhookId}/${token}`);
  if (!limitHeaders) return;

  // opcodes-and-status-codes.mdx: 10015 Unknown webhook, 50027 Invalid webhook token provided.
  const hook = discord.webhooks.find((candidate) => candidate.id === webhookId);
  if (!hook || discord.deleted.has(hook.id)) {
    return x.error(404, { message: "Unknown Webhook", code: 10015 }, limitHeaders);
  }
  if (hook.token !== token) return x.error(401, { message: "Invalid Webhook Token", code: 50027 }, limitHeaders);
  execute(discord, x, hook, limitHeaders);
}

/** The next queued fault, if any: "handled" when it answered (or dropped) the request. */
function injectedFault(discord: Discord, x: Exchange): Promise<"handled" | "continue"> {
  const fault = discord.faults.take();
  x.fault = fault?.kind;
  return applyFault(fault, x.res, discord.timers, {
    status: (f) => {
      x.record(f.status);
      sendAny(x.res, f.status, f.body === undefined ? defaultErrorBody(f) : f.body, f.headers ?? {});
    },
    rateLimit: (f) => {
      x.record(429);
      injectedRateLimit(x.res, f, EXECUTE_BUCKET, discord.now(), x.version);
    },
    dropped: () => x.record(0),
  });
}

/**
 * Counts the request in its window: the rate-limit headers every answer from here on carries, or undefined when the
 * request was over the limit and got its 429.
 */
function throttle(discord: Discord, x: Exchange, key: string): HeaderMap | undefined {
  // The limit is counted before the webhook is looked up, so the 404 and 401 carry the rate-limit headers too
  // (discord-api-spec: execute_webhook's 4XX is ClientErrorResponse, with the X-RateLimit-* headers). Webhooks
  // are a top-level resource limited by "webhook_id + webhook_token" (rate-limits.mdx): a wrong token has its own
  // window and does not use up the webhook's.
  const hitAt = discord.now();
  const decision = discord.limiter.hit(key, hitAt);
  const limitHeaders = rateLimitHeaders(decision, EXECUTE_BUCKET, hitAt);
  if (decision.allowed) return limitHeaders;
  // rate-limits.mdx, Exceeding A Rate Limit: the body, Retry-After, the route's headers and the scope; the waits in
  // the units of the path's version (retryAfter).
  const wait = retryAfter(decision.retryAfterMs, x.version);
  x.json(
    429,
    { message: "You are being rate limited.", retry_after: wait.body, global: false },
    { ...limitHeaders, "Retry-After": wait.header, "X-RateLimit-Scope": "shared" },
  );
  return undefined;
}

/** Execute Webhook itself: `?wait=` and the body checked, then the message posted. */
function execute(discord: Discord, x: Exchange, hook: WebhookConfig, limitHeaders: HeaderMap): void {
  const read = readMessage(x);
  if ("error" in read) {
    x.error(400, read.error, limitHeaders);
    return;
  }
  const received: ReceivedMessage = {
    id: discord.nextSnowflake(x.at),
    at: x.at,
    webhookId: hook.id,
    wait: read.wait,
    body: read.message,
    pings: computePings(read.message),
  };
  discord.messages.push(received);
  discord.changes.notify();
  if (read.wait) {
    x.json(200, messageObject(received, hook, discord.channelId), limitHeaders);
  } else {
    x.record(204);
    sendEmpty(x.res, 204, limitHeaders);
  }
}

/** The 400 Discord answers to the request's `?wait=` or body, in that order; else the message and whether to wait. */
function readMessage(x: Exchange): { error: DiscordError } | { message: Record<string, unknown>; wait: boolean } {
  const wait = parseBoolean(x.url.searchParams.get("wait"));
  if (wait === "invalid") {
    const value = x.url.searchParams.get("wait");
    return { error: invalidForm({ wait: leaf("BOOLEAN_TYPE_COERCE", `Value "${value}" is not boolean.`) }) };
  }
  const payload = readPayload(x.req, x.body);
  if (!payload.ok) return { error: { message: "The request body contains invalid JSON.", code: 50109 } };
  const errors = validatePayload(payload.value);
  if (errors) return { error: invalidForm(errors) };
  const message = payload.value as Record<string, unknown>;
  if (isEmptyMessage(message)) return { error: { message: "Cannot send an empty message", code: 50006 } };
  return { message, wait };
}

/** The body as Discord reads it: JSON (empty is `{}`), a form, or any other type as a form with no fields it knows. */
function readPayload(req: IncomingMessage, body: string): JsonParse {
  const type = mediaType(req);
  if (type === "application/json") return body.trim() === "" ? { ok: true, value: {} } : parseJson(body);
  if (type === "application/x-www-form-urlencoded") {
    return { ok: true, value: Object.fromEntries(new URLSearchParams(body)) };
  }
  // Discord reads other bodies as a form with no fields it knows.
  return { ok: true, value: {} };
}

// ---------------------------------------------------------------------------------------------------------------
// Answers

function defaultWebhook(): WebhookConfig {
  return {
    id: randomDigits(18),
    token: randomString(68, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"),
  };
}

/**
 * X-RateLimit-Bucket: "A unique string denoting the rate limit being encountered (non-inclusive of top-level
 * resources in the path)" (rate-limits.mdx), so one value for the execute route whatever the webhook.
 */
const EXECUTE_BUCKET = createHash("sha256")
  .update("POST /webhooks/{webhook.id}/{webhook.token}")
  .digest("hex")
  .slice(0, 32);

/** The headers of a counted request; `at` is when the limiter counted it (the stand-in's clock). */
function rateLimitHeaders(decision: RateDecision, bucket: string, at: number): HeaderMap {
  return {
    "X-RateLimit-Limit": String(decision.limit),
    "X-RateLimit-Remaining": String(decision.remaining),
    "X-RateLimit-Reset": seconds(at + decision.resetAfterMs),
    "X-RateLimit-Reset-After": seconds(decision.resetAfterMs),
    "X-RateLimit-Bucket": bucket,
  };
}

/**
 * A 429's `retry_after` and Retry-After for a wait of `ms`, in the units of the API version the path names:
 * - v8 and later: seconds, `retry_after` a float and Retry-After rounded up (developers/topics/rate-limits.mdx,
 *   Exceeding A Rate Limit; docs/change-log/2020-09-24-api-and-gateway-v8.md: "The `Retry-After` header value and
 *   `retry_after` body value is now based in seconds instead of milliseconds").
 * - no version (Discord's default, v6: developers/reference.mdx#api-versioning), v6 and v7: milliseconds, both
 *   integers (docs/topics/Rate_Limits.md before v8, at 048bf36c491f0d3e1c1e34ed7e2b95dc9db8a851: "retry_after |
 *   integer | The number of milliseconds"; discord-api-docs issue #2360: Retry-After of Execute Webhook in
 *   milliseconds on a copied /api/webhooks address; issue #4722: a webhook's retry_after in milliseconds, "You are
 *   probably using a deprecated API version").
 * X-RateLimit-Reset-After is seconds in every version (rateLimitHeaders).
 */
function retryAfter(ms: number, version: number | undefined): { body: number; header: string } {
  if (version !== undefined && version >= 8) return { body: round3(ms / 1000), header: String(Math.ceil(ms / 1000)) };
  return { body: Math.ceil(ms), header: String(Math.ceil(ms)) };
}

/**
 * An injected 429; `at` is now on the stand-in's clock, `version` the API version of the path (undefined for none:
 * the waits are then in milliseconds, see retryAfter). Scope: `global` for a global fault, else the fault's `scope`
 * (default `shared`).
 */
export function injectedRateLimit(
  res: ServerResponse,
  fault: RateLimitFault,
  bucket: string,
  at: number,
  version: number | undefined,
): void {
  const global = fault.global === true;
  const retryAfterS = Math.max(0, fault.retryAfterSeconds);
  const wait = retryAfter(retryAfterS * 1000, version);
  const header = { "Retry-After": wait.header };
  if (fault.viaHeaderOnly) {
    sendJson(res, 429, { message: "You are being rate limited.", global }, header);
    return;
  }
  const headers: HeaderMap = global
    ? { ...header, "X-RateLimit-Global": "true", "X-RateLimit-Scope": "global" }
    : {
        ...header,
        "X-RateLimit-Limit": "0",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": seconds(at + retryAfterS * 1000),
        "X-RateLimit-Reset-After": seconds(retryAfterS * 1000),
        "X-RateLimit-Bucket": bucket,
        "X-RateLimit-Scope": fault.scope ?? "shared",
      };
  sendJson(res, 429, { message: "You are being rate limited.", retry_after: wait.body, global }, headers);
}

function defaultErrorBody(fault: StatusFault): DiscordError {
  return { message: `${fault.status}: ${reasonPhrase(fault.status)}`, code: 0 };
}

function invalidForm(errors: ErrorTree): DiscordError {
  return { message: "Invalid Form Body", code: 50035, errors };
}

function messageObject(message: ReceivedMessage, hook: WebhookConfig, channelId: string): Record<string, unknown> {
  const body = message.body as Record<string, unknown>;
  const content = typeof body.content === "string" ? body.content : body.content == null ? "" : String(body.content);
  const embeds = Array.isArray(body.embeds) ? body.embeds.map(normaliseEmbed) : [];
  return {
    id: message.id,
    type: 0,
    content,
    channel_id: channelId,
    author: {
      id: hook.id,
      username: typeof body.username === "string" ? body.username : (hook.name ?? "Captain Hook"),
      avatar: null,
      discriminator: "0000",
      public_flags: 0,
      flags: 0,
      bot: true,
      global_name: null,
    },
    attachments: [],
    embeds,
    mentions: message.pings.users.map((id) => ({
      id,
      username: `user${id.slice(-4)}`,
      discriminator: "0",
      avatar: null,
    })),
    mention_roles: message.pings.roles,
    pinned: false,
    mention_everyone: message.pings.everyone,
    tts: body.tts === true,
    timestamp: discordTimestamp(new Date(message.at)),
    edited_timestamp: null,
    flags: 0,
    components: [],
    webhook_id: hook.id,
  };
}

function normaliseEmbed(embed: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = { type: "rich", ...(embed as Record<string, unknown>) };
  if (typeof out.timestamp === "string") out.timestamp = discordTimestamp(new Date(out.timestamp));
  if (typeof out.color === "string") out.color = Number(out.color);
  return out;
}

/** "2026-11-21T06:00:01.123000+00:00", the way Discord writes message timestamps. */
function discordTimestamp(date: Date): string {
  return `${date.toISOString().slice(0, 23)}000+00:00`;
}

function snowflakes(): (at: number) => string {
  let increment = 0n;
  return (at) => {
    increment = (increment + 1n) & 0xfffn;
    return (((BigInt(at) - DISCORD_EPOCH) << 22n) | (1n << 17n) | increment).toString();
  };
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function parseBoolean(value: string | null): boolean | "invalid" {
  if (value === null) return false;
  const lower = value.toLowerCase();
  if (lower === "true" || lower === "1") return true;
  if (lower === "false" || lower === "0") return false;
  return "invalid";
}

// ---------------------------------------------------------------------------------------------------------------
// Validation

function leaf(code: string, message: string): ErrorTree {
  return { _errors: [{ code, message }] };
}

/** Put an error at `path` in `tree`, creating the branches on the way. */
function addError(tree: ErrorTree, path: Array<string | number>, code: string, message: string): void {
  let node = tree;
  for (const key of path) {
    const name = String(key);
    node[name] ??= {};
    node = node[name] as ErrorTree;
  }
  node._errors ??= [];
  node._errors.push({ code, message });
}

/** Length as Discord counts it: Unicode code points. */
function length(text: string): number {
  return [...text].length;
}

function checkString(
  tree: ErrorTree,
  path: Array<string | number>,
  value: unknown,
  max: number,
  required = false,
): number {
  if (value === undefined || value === null) {
    if (required) addError(tree, path, "BASE_TYPE_REQUIRED", "This field is required");
    return 0;
  }
  if (typeof value === "number" || typeof value === "boolean") return checkString(tree, path, String(value), max);
  if (typeof value !== "string") {
    addError(tree, path, "STRING_TYPE_CONVERT", `Could not interpret "${JSON.stringify(value)}" as string.`);
    return 0;
  }
  const n = length(value);
  if (n > max) addError(tree, path, "BASE_TYPE_MAX_LENGTH", `Must be ${max} or fewer in length.`);
  return n;
}

function checkObject(tree: ErrorTree, path: Array<string | number>, value: unknown): value is Record<string, unknown> {
  if (isPlainObject(value)) return true;
  addError(tree, path, "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType");
  return false;
}

function checkList(tree: ErrorTree, path: Array<string | number>, value: unknown, max: number): value is unknown[] {
  if (!Array.isArray(value)) {
    addError(tree, path, "LIST_TYPE_CONVERT", "Only iterables may be used in a ListType");
    return false;
  }
  if (value.length > max) addError(tree, path, "BASE_TYPE_MAX_LENGTH", `Must be ${max} or fewer in length.`);
  return true;
}

function checkColour(tree: ErrorTree, path: Array<string | number>, value: unknown): void {
  if (value === undefined || value === null) return;
  const n = typeof value === "string" && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n !== "number" || !Number.isInteger(n)) {
    const shown = typeof value === "string" ? value : JSON.stringify(value);
    addError(tree, path, "NUMBER_TYPE_COERCE", `Value "${shown}" is not int.`);
  } else if (n < 0) {
    addError(tree, path, "NUMBER_TYPE_MIN", "int value should be greater than or equal to 0.");
  } else if (n > COLOUR_MAX) {
    addError(tree, path, "NUMBER_TYPE_MAX", `int value should be less than or equal to ${COLOUR_MAX}.`);
  }
}

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

function checkTimestamp(tree: ErrorTree, path: Array<string | number>, value: unknown): void {
  if (value === undefined || value === null) return;
  if (typeof value === "string" && ISO_8601.test(value) && !Number.isNaN(Date.parse(value.replace(",", ".")))) return;
  const shown = typeof value === "string" ? value : JSON.stringify(value);
  addError(tree, path, "DATE_TYPE_PARSE", `Could not parse ${shown}. Should be ISO8601.`);
}

/** The Invalid Form Body tree for `payload`, or undefined when Discord would accept its shape. */
function validatePayload(payload: unknown): ErrorTree | undefined {
  const tree: ErrorTree = {};
  if (!checkObject(tree, [], payload)) return tree;
  checkString(tree, ["content"], payload.content, CONTENT_MAX);
  if (payload.username !== undefined && payload.username !== null) {
    const n = checkString(tree, ["username"], payload.username, 80);
    if (n < 1 && !tree.username)
      addError(tree, ["username"], "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 80 in length.");
  }

  const embeds = payload.embeds;
  if (embeds !== undefined && embeds !== null && checkList(tree, ["embeds"], embeds, EMBEDS_MAX)) {
    let total = 0;
    embeds.forEach((embed, i) => {
      const at = ["embeds", i];
      if (!checkObject(tree, at, embed)) return;
      total += checkString(tree, [...at, "title"], embed.title, 256);
      total += checkString(tree, [...at, "description"], embed.description, 4096);
      checkColour(tree, [...at, "color"], embed.color);
      checkTimestamp(tree, [...at, "timestamp"], embed.timestamp);
      if (embed.footer !== undefined && embed.footer !== null && checkObject(tree, [...at, "footer"], embed.footer)) {
        total += checkString(tree, [...at, "footer", "text"], embed.footer.text, 2048, true);
      }
      if (embed.author !== undefined && embed.author !== null && checkObject(tree, [...at, "author"], embed.author)) {
        total += checkString(tree, [...at, "author", "name"], embed.author.name, 256, true);
      }
      const fields = embed.fields;
      if (fields !== undefined && fields !== null && checkList(tree, [...at, "fields"], fields, 25)) {
        fields.forEach((field, j) => {
          const fieldAt = [...at, "fields", j];
          if (!checkObject(tree, fieldAt, field)) return;
          total += checkString(tree, [...fieldAt, "name"], field.name, 256, true);
          total += checkString(tree, [...fieldAt, "value"], field.value, 1024, true);
        });
      }
    });
    if (total > EMBED_TOTAL_MAX) {
      addError(tree, ["embeds"], "MAX_EMBED_SIZE_EXCEEDED", `Embed size exceeds maximum size of ${EMBED_TOTAL_MAX}`);
    }
  }

  const allowed = payload.allowed_mentions;
  if (allowed !== undefined && allowed !== null && checkObject(tree, ["allowed_mentions"], allowed)) {
    const parse = allowed.parse ?? [];
    if (checkList(tree, ["allowed_mentions", "parse"], parse, MENTION_TYPES.length)) {
      parse.forEach((kind, i) => {
        if (!(MENTION_TYPES as readonly unknown[]).includes(kind)) {
          const shown = typeof kind === "string" ? kind : JSON.stringify(kind);
          addError(
            tree,
            ["allowed_mentions", "parse", i],
            "ENUM_TYPE_COERCE",
            `Value "${shown}" is not a valid enum value.`,
          );
        }
      });
      for (const kind of ["users", "roles"] as const) {
        const ids = allowed[kind] ?? [];
        if (!checkList(tree, ["allowed_mentions", kind], ids, 100)) continue;
        if (parse.includes(kind) && ids.length > 0) {
          addError(
            tree,
            ["allowed_mentions"],
            "MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE",
            `parse:["${kind}"] and ${kind}: [${ids.map((id) => JSON.stringify(String(id))).join(", ")}] are mutually exclusive.`,
          );
        }
      }
    }
  }
  return Object.keys(tree).length > 0 ? tree : undefined;
}

function isEmptyMessage(payload: Record<string, unknown>): boolean {
  const content = payload.content;
  const hasContent = content !== undefined && content !== null && String(content).trim() !== "";
  const hasEmbeds = Array.isArray(payload.embeds) && payload.embeds.length > 0;
  return !hasContent && !hasEmbeds;
}

// ---------------------------------------------------------------------------------------------------------------
// Mentions

/**
 * Whom a payload pings. Only `content` pings (embeds never do). Without `allowed_mentions` every mention pings; with
 * it, @everyone/@here need parse "everyone", users need parse "users" or their id in `users`, roles likewise.
 * A backslash before @everyone/@here keeps it from pinging.
 */
export function computePings(payload: Record<string, unknown>): Pings {
  const content = typeof payload.content === "string" ? payload.content : "";
  const allowed = isPlainObject(payload.allowed_mentions) ? payload.allowed_mentions : undefined;
  const parse: unknown[] = allowed ? (Array.isArray(allowed.parse) ? allowed.parse : []) : [...MENTION_TYPES];
  const listed = (kind: "users" | "roles"): string[] =>
    allowed && Array.isArray(allowed[kind]) ? (allowed[kind] as unknown[]).map(String) : [];
  const pick = (pattern: RegExp, kind: "users" | "roles"): string[] => {
    const ids = [...new Set([...content.matchAll(pattern)].map((match) => match[1] ?? ""))];
    return ids.filter((id) => parse.includes(kind) || listed(kind).includes(id));
  };
  return {
    everyone: /(?<!\\)@(?:everyone|here)/.test(content) && parse.includes("everyone"),
    users: pick(/<@!?(\d+)>/g, "users"),
    roles: pick(/<@&(\d+)>/g, "roles"),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Rendering for people

const COLOUR_NAMES: Record<number, string> = {
  5763719: "green",
  15548997: "red",
  16776960: "yellow",
  3447003: "blue",
  10181046: "purple",
};

/** What Discord shows for escaped markdown: `\*\*` as `**`, without the zero-width spaces that break mentions. */
function rendered(text: string): string {
  return text.replace(/\\([\\*_~`|>#\-[\]()<:@!.])/g, "$1").replace(/\u200b/g, "");
}

/**
 * Render a webhook payload roughly as it reads in the channel: the plain content, then one block per embed:
 * `■ purple  Title`, the description indented, fields as `name: value`, and `— footer · HH:MM:SS` (local time).
 */
export function describeMessage(body: unknown): string {
  const blocks: string[] = [];
  if (!isPlainObject(body)) return String(body);
  if (body.content !== undefined && body.content !== null && String(body.content) !== "")
    blocks.push(String(body.content));
  const embeds: unknown[] = Array.isArray(body.embeds) ? body.embeds : [];
  for (const embed of embeds) {
    if (!isPlainObject(embed)) continue;
    const lines: string[] = [];
    const title = typeof embed.title === "string" ? rendered(embed.title) : "";
    lines.push(`■ ${colourName(embed.color)}  ${title}`.trimEnd());
    if (typeof embed.description === "string" && embed.description !== "") {
      for (const line of rendered(embed.description).split("\n")) lines.push(`  ${line}`.trimEnd());
    }
    if (Array.isArray(embed.fields)) {
      for (const field of embed.fields) {
        if (isPlainObject(field)) lines.push(`  ${String(field.name ?? "")}: ${String(field.value ?? "")}`);
      }
    }
    const footer = isPlainObject(embed.footer) && typeof embed.footer.text === "string" ? embed.footer.text : "";
    const time =
      typeof embed.timestamp === "string" && !Number.isNaN(Date.parse(embed.timestamp))
        ? clockTime(new Date(embed.timestamp))
        : "";
    const tail = [footer, time].filter((part) => part !== "").join(" · ");
    if (tail !== "") lines.push(`  — ${tail}`);
    blocks.push(lines.join("\n"));
  }
  return blocks.join("\n");
}

function colourName(colour: unknown): string {
  if (colour === undefined || colour === null) return "none";
  const n = Number(colour);
  if (!Number.isInteger(n)) return String(colour);
  return COLOUR_NAMES[n] ?? `#${n.toString(16).padStart(6, "0")}`;
}
