/**
 * Plumbing shared by the stand-ins: a loopback HTTP server that closes fast, JSON answers, body reading,
 * the fault queue, a sliding-window rate limiter, bounded waits and small random helpers.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, STATUS_CODES } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";

export type HeaderMap = Record<string, string>;

/** Answer with a JSON body and `Content-Type: application/json`. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: HeaderMap = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** Answer without a body (204 and friends). */
export function sendEmpty(res: ServerResponse, status: number, headers: HeaderMap = {}): void {
  res.writeHead(status, headers);
  res.end();
}

/** Answer with whatever a test handed to a status fault: a string as text/plain, anything else as JSON. */
export function sendAny(res: ServerResponse, status: number, body: unknown, headers: HeaderMap = {}): void {
  if (body === undefined) {
    sendEmpty(res, status, headers);
  } else if (typeof body === "string") {
    res.writeHead(status, {
      "Content-Type": "text/plain; charset=utf-8",
      "Content-Length": String(Buffer.byteLength(body)),
      ...headers,
    });
    res.end(body);
  } else {
    sendJson(res, status, body, headers);
  }
}

/** The reason phrase of a status code ("Bad Gateway"), "Unknown" for codes node does not know. */
export function reasonPhrase(status: number): string {
  return STATUS_CODES[status] ?? "Unknown";
}

/** Read the whole request body as UTF-8. */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export type JsonParse = { ok: true; value: unknown } | { ok: false };

export function parseJson(text: string): JsonParse {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function mediaType(req: IncomingMessage): string {
  return (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

// ---------------------------------------------------------------------------------------------------------------
// Faults

/** Answer with this status (and body/headers) instead of doing the work. */
export interface StatusFault {
  kind: "status";
  status: number;
  /** A string is sent as text/plain, anything else as JSON; default: the service's own error body. */
  body?: unknown;
  headers?: HeaderMap;
  times?: number;
}

/** Answer 429 whatever the window says. */
export interface RateLimitFault {
  kind: "rate-limit";
  retryAfterSeconds: number;
  global?: boolean;
  /** Discord's X-RateLimit-Scope of a 429 that is not global (default `shared`). */
  scope?: "user" | "shared";
  /** Only the Retry-After header says how long to wait (no retry_after in the body, no X-RateLimit-*). */
  viaHeaderOnly?: boolean;
  /**
   * DigitalOcean: the 429 with the headers its OpenAPI response lists (too_many_requests.yml: RateLimit-Limit,
   * -Remaining and -Reset, the hour's) and no Retry-After.
   */
  withoutRetryAfter?: boolean;
  times?: number;
}

/** Destroy the connection without answering (the client sees a network error). */
export interface DropFault {
  kind: "drop";
  times?: number;
}

/** Answer normally, `ms` later. */
export interface DelayFault {
  kind: "delay";
  ms: number;
  times?: number;
}

export type Fault = StatusFault | RateLimitFault | DropFault | DelayFault;

/** Faults queued by a test, consumed in order by the requests they match; `times` (default 1) uses each up. */
export class FaultQueue<F extends { times?: number }> {
  readonly #queue: Array<{ fault: F; left: number }> = [];

  push(fault: F): void {
    const left = fault.times ?? 1;
    if (!Number.isInteger(left) || left < 1)
      throw new RangeError(`fault.times must be a positive integer, got ${left}`);
    this.#queue.push({ fault, left });
  }

  /** The first queued fault that `matches`, with one use taken off it. */
  take(matches: (fault: F) => boolean = () => true): F | undefined {
    const index = this.#queue.findIndex((entry) => matches(entry.fault));
    const entry = this.#queue[index];
    if (!entry) return undefined;
    entry.left -= 1;
    if (entry.left === 0) this.#queue.splice(index, 1);
    return entry.fault;
  }

  get pending(): number {
    return this.#queue.reduce((sum, entry) => sum + entry.left, 0);
  }

  clear(): void {
    this.#queue.length = 0;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Rate limiting

export interface RateLimitOptions {
  limit: number;
  windowMs: number;
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** Requests still allowed in the window after this one. */
  remaining: number;
  /** Until the oldest counted request leaves the window (when `remaining` next grows). */
  resetAfterMs: number;
  /** Until one more request would be allowed; 0 when one is allowed now. */
  retryAfterMs: number;
}

/**
 * A sliding window per key: a request is allowed when fewer than `limit` counted requests happened in the last
 * `windowMs`. With `countRejected`, refused requests count too (a client that ignores the wait pushes it back).
 * `now` is its clock (default Date.now): a test that passes a clock it moves itself decides exactly which requests are
 * still in the window, however slow the machine is.
 */
export class SlidingWindowLimiter {
  readonly limit: number;
  readonly windowMs: number;
  readonly #countRejected: boolean;
  readonly #now: () => number;
  readonly #hits = new Map<string, number[]>();

  constructor(options: RateLimitOptions & { countRejected: boolean; now?: () => number }) {
    if (!(options.limit >= 1) || !(options.windowMs > 0))
      throw new RangeError("rateLimit needs limit >= 1 and windowMs > 0");
    this.limit = options.limit;
    this.windowMs = options.windowMs;
    this.#countRejected = options.countRejected;
    this.#now = options.now ?? Date.now;
  }

  /** Counts a request of `key` at `now` (default: the limiter's clock now); the decision's times are from `now`. */
  hit(key: string, now: number = this.#now()): RateDecision {
    const hits = this.#window(key, now);
    const allowed = hits.length < this.limit;
    if (allowed || this.#countRejected) hits.push(now);
    const oldest = hits[0] ?? now;
    const unblocking = hits.length >= this.limit ? (hits[hits.length - this.limit] ?? now) : undefined;
    return {
      allowed,
      limit: this.limit,
      remaining: Math.max(0, this.limit - hits.length),
      resetAfterMs: oldest + this.windowMs - now,
      retryAfterMs: unblocking === undefined ? 0 : unblocking + this.windowMs - now,
    };
  }

  reset(): void {
    this.#hits.clear();
  }

  #window(key: string, now: number): number[] {
    const since = now - this.windowMs;
    const hits = (this.#hits.get(key) ?? []).filter((at) => at > since);
    this.#hits.set(key, hits);
    return hits;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Timers, waits and the server itself

/** Timers that die with the stand-in, so a closed stand-in leaves nothing running. */
export class TimerSet {
  readonly #timers = new Set<NodeJS.Timeout>();

  set(fn: () => void, ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      fn();
    }, ms);
    this.#timers.add(timer);
    return timer;
  }

  clear(timer: NodeJS.Timeout | undefined): void {
    if (!timer) return;
    clearTimeout(timer);
    this.#timers.delete(timer);
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.set(resolve, ms));
  }

  clearAll(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }
}

/** Something that changes; `waitFor` resolves once `check` returns a value, or rejects after `timeoutMs`. */
export class Changes {
  readonly #listeners = new Set<() => void>();

  notify(): void {
    for (const listener of [...this.#listeners]) listener();
  }

  waitFor<T>(check: () => T | undefined, timeoutMs: number, describeTimeout: () => string): Promise<T> {
    const now = check();
    if (now !== undefined) return Promise.resolve(now);
    return new Promise<T>((resolve, reject) => {
      const listener = (): void => {
        const value = check();
        if (value === undefined) return;
        finish();
        resolve(value);
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(describeTimeout()));
      }, timeoutMs);
      const finish = (): void => {
        clearTimeout(timer);
        this.#listeners.delete(listener);
      };
      this.#listeners.add(listener);
    });
  }
}

export type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export interface Loopback {
  /** http://127.0.0.1:PORT */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Listen on 127.0.0.1, an ephemeral port. `close()` also ends keep-alive and in-flight connections. */
export async function listenLoopback(handler: Handler): Promise<Loopback> {
  const server = createServer((req, res) => {
    handler(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      sendAny(res, 500, `testkit stand-in failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("testkit: server has no TCP address");
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${address.port}`,
    port: address.port,
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/**
 * Run the part of a fault both stand-ins treat alike. Returns "handled" when the request got its answer (or was
 * dropped), "continue" when the stand-in should answer normally (no fault, or a delay that has elapsed).
 */
export async function applyFault(
  fault: Fault | undefined,
  res: ServerResponse,
  timers: TimerSet,
  answer: { status(fault: StatusFault): void; rateLimit(fault: RateLimitFault): void; dropped(): void },
): Promise<"handled" | "continue"> {
  if (!fault) return "continue";
  switch (fault.kind) {
    case "delay":
      await timers.sleep(fault.ms);
      return "continue";
    case "drop":
      answer.dropped();
      res.socket?.destroy();
      return "handled";
    case "status":
      answer.status(fault);
      return "handled";
    case "rate-limit":
      answer.rateLimit(fault);
      return "handled";
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Small helpers

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** `length` random characters drawn from `alphabet` (default A-Z a-z 0-9). */
export function randomString(length: number, alphabet: string = ALNUM): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // Reject bytes that would bias the draw.
      if (byte >= alphabet.length * Math.floor(256 / alphabet.length)) continue;
      out += alphabet[byte % alphabet.length];
      if (out.length === length) break;
    }
  }
  return out;
}

/** A random decimal id of `digits` digits that does not start with 0. */
export function randomDigits(digits: number): string {
  return randomString(1, "123456789") + randomString(digits - 1, "0123456789");
}

export interface TempDir {
  path: string;
  cleanup(): void;
}

/** A fresh directory under os.tmpdir(); `cleanup()` removes it and everything in it. */
export function tempDir(prefix = "mcops-"): TempDir {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

/** "HH:MM:SS" in local time, as the game and the Discord client print it. */
export function clockTime(date: Date): string {
  return [date.getHours(), date.getMinutes(), date.getSeconds()].map((n) => String(n).padStart(2, "0")).join(":");
}

/** Seconds with millisecond precision, as Discord writes them ("1.234"). */
export function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

/**
 * The environment a built mcops executable runs with in a test, the demo or a benchmark: its config, log, state and
 * run directories under `root` (docs/contract.md's MCOPS_* overrides), HOME there too, PATH kept.
 */
export function toolEnv(root: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: root,
    MCOPS_CONFIG_DIR: join(root, "etc"),
    MCOPS_LOG_DIR: join(root, "log"),
    MCOPS_STATE_DIR: join(root, "state"),
    MCOPS_RUN_DIR: join(root, "run"),
    ...extra,
  };
}

export interface ToolRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Wall time from spawn to exit. */
  ms: number;
}

/**
 * The test's environment without the JOURNAL_STREAM this runner inherited (a suite started by a systemd unit passes
 * it on through `...process.env`): what a tool writes on stderr must not depend on how the suite was started. A value
 * the test set itself is kept.
 */
function withoutInheritedJournal(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (env.JOURNAL_STREAM === undefined || env.JOURNAL_STREAM !== process.env.JOURNAL_STREAM) return env;
  const { JOURNAL_STREAM: _, ...rest } = env;
  return rest;
}

/** Starts a built executable with its output collected; `done` settles when it exits. */
export function startTool(
  bin: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string; input?: string | Buffer },
): { child: ChildProcess; done: Promise<ToolRun> } {
  const started = Date.now();
  const stdin = options.input === undefined ? "ignore" : "pipe";
  const env = withoutInheritedJournal(options.env);
  const child = spawn(bin, args, { cwd: options.cwd, env, stdio: [stdin, "pipe", "pipe"] });
  // What a user pastes or pipes in: written whole, then the end of input.
  if (options.input !== undefined) child.stdin?.end(options.input);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d) => (stdout += d));
  child.stderr?.on("data", (d) => (stderr += d));
  const done = new Promise<ToolRun>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr, ms: Date.now() - started }));
  });
  return { child, done };
}

/** Runs a built executable to its end (see startTool). */
export function runTool(
  bin: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string; input?: string | Buffer },
): Promise<ToolRun> {
  return startTool(bin, args, options).done;
}
