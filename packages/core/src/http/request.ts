import type * as z from "zod/mini";
import { type Clock, systemClock } from "../clock.ts";
import { JobError } from "../errors.ts";

/**
 * The part of an HTTP answer the request policy (request.ts) and its callers read. A fetch Response has it (the
 * Worker's clients, the downloads), and so has what transport.ts `send` gives (the daemons').
 */
export interface Answer {
  readonly status: number;
  readonly ok: boolean;
  readonly headers: AnswerHeaders;
  readonly body: ReadableStream<Uint8Array> | null;
  text(): Promise<string>;
}

/** A header by its name (any case), or null. */
export interface AnswerHeaders {
  get(name: string): string | null;
}

/**
 * The one request policy of every client in mcops (the panel, the Discord webhook, DigitalOcean, Cloudflare, the jar
 * hosts, the dead-man's-switch ping): which answers are tried again, how long to wait, and when to stop.
 *
 * - A 429 is tried again whatever the request (nothing was done), after the wait the service asks for.
 * - 408, 500, 502, 503, 504 and Cloudflare's 520–524 are tried again only for an idempotent request: a repeated
 *   restart restarts twice, a repeated droplet create makes two droplets.
 * - A connection that was never made (refused, no such host) is tried again whatever the request; a timeout or a
 *   reset only for an idempotent one.
 * - Retry-After (seconds or a date), RateLimit-Reset (DigitalOcean: epoch seconds; the IETF draft: seconds),
 *   X-RateLimit-Reset-After, X-RateLimit-Reset (Modrinth: seconds; others: epoch seconds) and a JSON `retry_after`
 *   (seconds) are honoured up to `maxWaitMs` (a client whose service
 *   says it otherwise reads it with its own `waitHint`: Discord's, @mcops/core/discord); a longer wait is not slept
 *   through: the answer is returned as it is, with `waitTooLongMs` set. A 429 that names no wait waits the policy's
 *   `rateLimitedMs` (DigitalOcean's minute), else the backoff.
 * - Tries and the whole time (waits included) are bounded. A failure to reach the service is a `RequestFailure`, a core
 *   error with a hint; an answer that is not what the caller wanted is the caller's to explain (it knows the service).
 */
export interface RequestPolicy {
  /** The service as the messages name it: "the panel", "Discord", "DigitalOcean". */
  service: string;
  /** Tries in all, the first included. */
  attempts: number;
  /** The longest the whole request may take, waits included. */
  totalMs: number;
  /** One try, until the answer's headers. */
  timeoutMs: number;
  /** The first pause after a failed try; it doubles each time. */
  backoffMs: number;
  /** The longest single wait a 429 or 503 may ask for. */
  maxWaitMs: number;
  /** What to check when the service cannot be reached. */
  unreachableHint: string;
  /** The wait of a 429 that names none (the service's shortest window); default the backoff. */
  rateLimitedMs?: number;
}

/** revive's and hibernate's vendor APIs: a run carries on where it stopped, so giving up early costs little. */
const CLOUD_API = {
  attempts: 4,
  totalMs: 3 * 60_000,
  timeoutMs: 30_000,
  backoffMs: 500,
  maxWaitMs: 60_000,
  unreachableHint: "check the network, then run the same command again: it carries on where it stopped",
} as const;

export const POLICIES = {
  panel: {
    service: "the panel",
    attempts: 4,
    totalMs: 5 * 60_000,
    // Above the panel's own 15 s to Wings (pterodactyl/panel config/pterodactyl.php guzzle.timeout, GUZZLE_TIMEOUT),
    // so that a hung Wings is said by the panel's 504 DaemonConnectionException, not by this timeout.
    timeoutMs: 20_000,
    backoffMs: 1000,
    // Pterodactyl's limits are per minute: a longer wait is someone else's limit, not one to sleep through.
    maxWaitMs: 2 * 60_000,
    unreachableHint: "check CONTROL_URL and that the panel is up",
  },
  discord: {
    service: "Discord",
    attempts: 5,
    totalMs: 2 * 60_000,
    timeoutMs: 15_000,
    backoffMs: 1000,
    // A shared limit can last many minutes: no countdown or backup is held up by a post.
    maxWaitMs: 60_000,
    unreachableHint: "check the machine's network and DNS; messages are not queued",
  },
  // DigitalOcean's RateLimit-Reset is when the oldest request of the hour expires, not when its 250-per-minute limit
  // lets the next one through: a 429 with room left in the hour waits its Retry-After, else a minute (waitHintMs).
  digitalocean: { service: "DigitalOcean", ...CLOUD_API, rateLimitedMs: 60_000 },
  cloudflare: { service: "Cloudflare", ...CLOUD_API },
  downloads: {
    service: "the download service",
    attempts: 4,
    totalMs: 10 * 60_000,
    timeoutMs: 30_000,
    backoffMs: 500,
    // Modrinth's 429 asks for a whole window of its limiter, a minute (its X-RateLimit-Reset, 60: waitHintMs): waited
    // out, with room. A longer wait is not that limiter's (a proxy's, a changed limit): said at once, not slept
    // through while someone watches a command that looks hung; the download is run again later at no cost.
    maxWaitMs: 2 * 60_000,
    unreachableHint: "check the network and the service's base address (DOWNLOAD_BASE and friends)",
  },
  healthcheck: {
    service: "the dead-man's-switch",
    attempts: 3,
    totalMs: 30_000,
    timeoutMs: 10_000,
    backoffMs: 1000,
    maxWaitMs: 10_000,
    unreachableHint: "check BACKUP_PING_URL and the network",
  },
} as const satisfies Record<string, RequestPolicy>;

/** Answers worth another try of an idempotent request: the service or a proxy in front of it did not do it. */
export const TRANSIENT_STATUSES: ReadonlySet<number> = new Set([408, 500, 502, 503, 504, 520, 521, 522, 523, 524]);

/** Connection errors that mean the request never left: trying again cannot do anything twice. */
export const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

export type Verdict =
  | { retry: true; waitMs: number }
  | { retry: false; why: "final" | "attempts" | "time" | "wait-too-long"; waitMs?: number };

export interface TryOutcome {
  /** 1 for the first try. */
  attempt: number;
  /** Since the first try began. */
  elapsedMs: number;
  idempotent: boolean;
  /** The answer's status; undefined when there was none. */
  status?: number | undefined;
  /** Why there was no answer: a Node error code, "TimeoutError". */
  networkCode?: string | undefined;
  /** The wait the answer asked for (see waitHintMs). */
  waitHintMs?: number | undefined;
}

/** The policy's decision after one try. */
export function decide(policy: RequestPolicy, outcome: TryOutcome): Verdict {
  const { attempt, elapsedMs, idempotent, status, networkCode, waitHintMs } = outcome;
  const backoff = policy.backoffMs * 2 ** (attempt - 1);
  let waitMs: number;
  if (status !== undefined) {
    if (status === 429) waitMs = waitHintMs ?? policy.rateLimitedMs ?? backoff;
    else if (idempotent && TRANSIENT_STATUSES.has(status)) waitMs = waitHintMs ?? backoff;
    else return { retry: false, why: "final" };
  } else if (idempotent || NOT_SENT_CODES.has(networkCode ?? "")) {
    waitMs = backoff;
  } else {
    return { retry: false, why: "final" };
  }
  if (waitMs > policy.maxWaitMs) return { retry: false, why: "wait-too-long", waitMs };
  if (attempt >= policy.attempts) return { retry: false, why: "attempts" };
  if (elapsedMs + waitMs > policy.totalMs) return { retry: false, why: "time", waitMs };
  return { retry: true, waitMs };
}

/**
 * The wait an answer asks for, in ms: Retry-After (seconds or an HTTP date), X-RateLimit-Reset-After (seconds),
 * RateLimit-Reset (epoch seconds when it looks like one, else seconds), X-RateLimit-Reset (the same), or a JSON body's
 * `retry_after` (seconds). Undefined when it names none, or names a time already past by this machine's clock (a clock
 * ahead of the service's): the wait is unknown then, not zero, and the policy's own applies (DigitalOcean's minute).
 *
 * An epoch RateLimit-Reset is DigitalOcean's: "the time when the oldest request will expire" of the hour
 * (digitalocean/openapi specification/description.yml, "Rate Limit"; shared/headers.yml), up to an hour away. It is
 * the wait only when the hour is used up (RateLimit-Remaining 0); with room left in the hour the 429 is the
 * 250-per-minute burst limit, whose wait is its Retry-After and is not in RateLimit-Reset.
 *
 * X-RateLimit-Reset in seconds is Modrinth's, whose 429 names no other wait: "the time in seconds until the ratelimit
 * window resets" (modrinth/code apps/docs/public/openapi.yaml, "Ratelimits"). labrinth writes it on every answer
 * (apps/labrinth/src/util/ratelimit.rs, rate_limit_middleware) as `reset_after_ms / 1000`: whole seconds, rounded
 * down, until its GCRA bucket is whole again; on a 429 that is a whole window (a minute: lib.rs GCRAParameters::new(300,
 * 300)), more than the next request needs, so waiting it is always enough. Like RateLimit-Reset it is read only when
 * the allowance is used up (X-RateLimit-Remaining 0, as every 429 of labrinth's says): a 503 with allowance left names
 * when the allowance is whole, not a wait. A 0 (the window whole within the second) waits a second: waiting nothing
 * would spend the tries at once. An epoch value (GitHub's, Laravel's) is read as RateLimit-Reset's is.
 */
export function waitHintMs(headers: AnswerHeaders, now: number, body?: unknown): number | undefined {
  const inBody = (body as { retry_after?: unknown } | undefined)?.retry_after;
  if (typeof inBody === "number" && Number.isFinite(inBody) && inBody >= 0) return Math.ceil(inBody * 1000);
  const retryAfter = headers.get("retry-after")?.trim();
  if (retryAfter) {
    if (/^\d+(\.\d+)?$/.test(retryAfter)) return Math.ceil(Number(retryAfter) * 1000);
    // A date already past (this machine's clock ahead of the service's) names no wait: the policy's applies.
    const date = Date.parse(retryAfter);
    if (Number.isFinite(date) && date > now) return date - now;
  }
  const resetAfter = Number(headers.get("x-ratelimit-reset-after") ?? Number.NaN);
  if (Number.isFinite(resetAfter) && resetAfter >= 0) return Math.ceil(resetAfter * 1000);
  const reset = Number(headers.get("ratelimit-reset") ?? Number.NaN);
  if (Number.isFinite(reset) && reset > 0) {
    if (reset <= EPOCH_FROM) return reset * 1000;
    const remaining = Number(headers.get("ratelimit-remaining") ?? Number.NaN);
    if (!(remaining > 0) && reset * 1000 > now) return reset * 1000 - now;
  }
  const xReset = headers.get("x-ratelimit-reset")?.trim() ?? "";
  if (/^\d+(\.\d+)?$/.test(xReset) && headers.get("x-ratelimit-remaining")?.trim() === "0") {
    const value = Number(xReset);
    if (value <= EPOCH_FROM) return Math.max(1000, Math.ceil(value * 1000));
    if (value * 1000 > now) return Math.ceil(value * 1000 - now);
  }
  return undefined;
}

/** A reset above this many seconds is a time (epoch seconds, 2001 on), not a wait: no limit lasts 31 years. */
const EPOCH_FROM = 1e9;

/** The service could not be reached (or did not answer in time) within the policy's tries. */
export class RequestFailure extends JobError {
  readonly service: string;
  readonly code: string;
  readonly kind: "network" | "timeout" | "interrupted";
  readonly attempts: number;
  constructor(
    policy: RequestPolicy,
    details: { code: string; kind: RequestFailure["kind"]; attempts: number; where: string; cause?: unknown },
  ) {
    const { code, kind, attempts } = details;
    const tries = attempts > 1 ? ` after ${attempts} tries` : "";
    const message =
      kind === "interrupted"
        ? "interrupted"
        : kind === "timeout"
          ? `${policy.service} did not answer in ${Math.round(policy.timeoutMs / 1000)} s${tries}`
          : `cannot reach ${policy.service} (${code})${tries}`;
    super(message, {
      where: details.where,
      hint:
        kind === "interrupted"
          ? undefined
          : kind === "timeout"
            ? `${policy.service} is slow or overloaded; try again later`
            : policy.unreachableHint,
      cause: details.cause,
    });
    this.service = policy.service;
    this.code = code;
    this.kind = kind;
    this.attempts = attempts;
  }
}

export interface Exchange<R extends Answer = Answer> {
  /** The last answer. A 2xx body is left unread for the caller (it may be a download to stream). */
  response: R;
  /** The body of a non-2xx answer, at most 64 KiB; "" for a 2xx. */
  errorText: string;
  attempts: number;
  /** A 429 or 503 asked for a wait longer than the policy's maxWaitMs; this is that wait. */
  waitTooLongMs?: number;
}

export interface ExchangeOptions<R extends Answer = Answer> {
  /** For messages: the address or "GET /resources". Never a secret. */
  where: string;
  /** A repeat does nothing twice (GET, a power stop, a DNS PATCH to the same content). */
  idempotent: boolean;
  /** One try. Must pass `signal` to the request (it carries the per-try timeout and the caller's interruption). */
  send: (signal: AbortSignal) => Promise<R>;
  clock?: Clock;
  signal?: AbortSignal;
  /** Runs before each try, outside its timeout (a rate window's turn); what it returns runs after the try. */
  beforeTry?: () => Promise<(() => Promise<void>) | undefined>;
  /** The wait a failed answer asks for, in ms (default waitHintMs); `body` is its JSON body, if it is JSON. */
  waitHint?: (response: R, body: unknown, now: number) => number | undefined;
  /** Told of each pause before another try. */
  onRetry?: (info: RetryNotice) => void | Promise<void>;
}

/** A pause before another try: the status or the network code, and the wait; for an answer, its headers and JSON body. */
export interface RetryNotice {
  attempt: number;
  waitMs: number;
  status?: number;
  code?: string;
  headers?: AnswerHeaders;
  body?: unknown;
}

const ERROR_TEXT_LIMIT = 64 * 1024;

/** One request under the policy: tries, waits and gives up as it says. */
export async function exchange<R extends Answer>(
  policy: RequestPolicy,
  options: ExchangeOptions<R>,
): Promise<Exchange<R>> {
  const clock = options.clock ?? systemClock;
  const started = clock.now();
  for (let attempt = 1; ; attempt++) {
    if (options.signal?.aborted) throw interrupted(policy, options, attempt - 1);
    const { response, code, failure } = await tryOnce(policy, options);
    if (code === "AbortError") throw interrupted(policy, options, attempt, failure);
    if (response?.ok) return { response, errorText: "", attempts: attempt };
    const { errorText, body } = response ? await failedAnswer(response) : { errorText: "", body: undefined };
    const verdict = decide(policy, {
      attempt,
      elapsedMs: clock.now() - started,
      idempotent: options.idempotent,
      status: response?.status,
      networkCode: code,
      waitHintMs: response
        ? options.waitHint
          ? options.waitHint(response, body, clock.now())
          : waitHintMs(response.headers, clock.now(), body)
        : undefined,
    });
    if (verdict.retry) {
      await options.onRetry?.({
        attempt,
        waitMs: verdict.waitMs,
        ...(response ? { status: response.status, headers: response.headers, body } : {}),
        ...(code ? { code } : {}),
      });
      await clock.sleep(verdict.waitMs, options.signal);
      continue;
    }
    if (!response) {
      const kind = code === "TimeoutError" ? "timeout" : "network";
      throw new RequestFailure(policy, {
        code: code ?? "unknown",
        kind,
        attempts: attempt,
        where: options.where,
        cause: failure,
      });
    }
    return {
      response,
      errorText,
      attempts: attempt,
      ...(verdict.why === "wait-too-long" && verdict.waitMs !== undefined ? { waitTooLongMs: verdict.waitMs } : {}),
    };
  }
}

/** The caller's signal ended the request: no further try. */
function interrupted(policy: RequestPolicy, options: { where: string }, attempts: number, cause?: unknown) {
  return new RequestFailure(policy, {
    code: "AbortError",
    kind: "interrupted",
    attempts,
    where: options.where,
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * One try, within the policy's time: the answer, or the failure and its code (TimeoutError when the time ran out,
 * AbortError when the caller's signal ended it, else the network's own code).
 */
async function tryOnce<R extends Answer>(
  policy: RequestPolicy,
  options: ExchangeOptions<R>,
): Promise<{ response?: R; code?: string; failure?: unknown }> {
  const after = await options.beforeTry?.();
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(new DOMException("timed out", "TimeoutError")), policy.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout.signal]) : timeout.signal;
  try {
    return { response: await options.send(signal) };
  } catch (error) {
    const code = timeout.signal.aborted
      ? "TimeoutError"
      : options.signal?.aborted
        ? "AbortError"
        : ((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name);
    return { code, failure: error };
  } finally {
    clearTimeout(timer);
    await after?.();
  }
}

/** An error answer's text (bounded) and, when it is JSON, its body; a proxy's error page: the status alone speaks. */
async function failedAnswer(response: Answer): Promise<{ errorText: string; body: unknown }> {
  const errorText = await readCapped(response, ERROR_TEXT_LIMIT);
  try {
    return { errorText, body: JSON.parse(errorText) as unknown };
  } catch {
    return { errorText, body: undefined };
  }
}

/** A body's text, cut at `limit` bytes (an error page is read, never an unbounded one). */
async function readCapped(response: Answer, limit: number): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // a body cut midway: what arrived is enough to explain the status
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).toString("utf8").slice(0, limit);
}

/** The service answered, but not in the shape mcops reads: one line naming the service, the route and the field. */
export class ResponseShapeError extends JobError {}

/**
 * A response body checked against what the tool reads from it. A vendor that changed a shape is one line, never an
 * `undefined` further down: "DigitalOcean answered GET /v2/droplets/1 in an unexpected shape: droplet.networks.v4:
 * expected array, got missing". An empty body is read as undefined.
 */
export function parseBody<S extends z.ZodMiniType>(
  schema: S,
  text: string,
  where: { service: string; route: string },
): z.infer<S> {
  let value: unknown;
  try {
    value = text === "" ? undefined : (JSON.parse(text) as unknown);
  } catch {
    throw new ResponseShapeError(`${where.service} answered ${where.route} with something that is not JSON`, {
      where: where.route,
      hint: "a proxy or a wrong base address may be in the way; check the address the tool was given",
    });
  }
  return checkShape(schema, value, where);
}

/** An already parsed body checked as parseBody checks one. */
export function checkShape<S extends z.ZodMiniType>(
  schema: S,
  value: unknown,
  where: { service: string; route: string },
): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue?.path.length ? issue.path.join(".") : "the body";
  throw new ResponseShapeError(
    `${where.service} answered ${where.route} in an unexpected shape: ${field}: ${issue ? describeIssue(issue, value) : "invalid"}`,
    { hint: "the service may have changed its API; update mcops, or report this line" },
  );
}

/**
 * A failed answer's body as `schema` reads the service's own error shape; undefined for anything else (a proxy's page,
 * an empty body): the status alone then speaks.
 */
export function errorBody<S extends z.ZodMiniType>(schema: S, text: string): z.infer<S> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
  const result = schema.safeParse(value);
  return result.success ? result.data : undefined;
}

/** "expected string, got missing", "expected one of "a", "b", got "c"" (zod/mini carries no messages of its own). */
function describeIssue(issue: z.core.$ZodIssue, root: unknown): string {
  let found: unknown = root;
  for (const key of issue.path) found = (found as Record<PropertyKey, unknown> | undefined)?.[key as PropertyKey];
  const shown = (value: unknown): string => {
    if (value === undefined) return "missing";
    if (value === null) return "null";
    if (Array.isArray(value)) return "an array";
    if (typeof value === "object") return "an object";
    const text = JSON.stringify(value) ?? String(value);
    return `${typeof value} ${text.length > 40 ? `${text.slice(0, 40)}…` : text}`;
  };
  if (issue.code === "invalid_type") return `expected ${issue.expected}, got ${shown(found)}`;
  if (issue.code === "invalid_value") {
    return `expected ${issue.values.map((v) => JSON.stringify(v)).join(" or ")}, got ${shown(found)}`;
  }
  return issue.message;
}
