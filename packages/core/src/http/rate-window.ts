import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Clock, systemClock } from "../clock.ts";
import { acquireLock } from "../lock.ts";

/**
 * A sliding-window rate limit shared by every process on the machine: the times of the last posts live in a small
 * JSON file in the run dir, read and written under a lock. Several tools post to one webhook (backup, log-tailer,
 * idle-monitor, restart), and docs/system.md 8 allows 30 messages per minute per webhook address, whoever sends them. A 429 from
 * the service blocks the window for everyone until its retry time.
 *
 * No library fits: the well-kept limiters (limiter, bottleneck, rate-limiter-flexible) coordinate within one process
 * or through Redis, and this machine has neither a shared process nor a Redis to lean on.
 */
export interface RateWindowOptions {
  /** Directory for the window file (the run dir); a temporary directory is used when it cannot be created. */
  dir: string;
  /** What is limited, e.g. the webhook address; only its hash is written to disk. */
  key: string;
  limit: number;
  windowMs: number;
  clock?: Clock;
  /** Told once when the shared directory cannot be used. */
  onFallback?: (reason: string) => void;
}

interface WindowState {
  sent: number[];
  blockedUntil: number;
}

export interface Slot {
  /** Milliseconds spent waiting for it. */
  waitedMs: number;
  /**
   * Call when the request has been answered: the slot is then counted from that moment, which is no earlier than the
   * moment the service counted it, so our window can never run ahead of the service's however long the request took.
   */
  done(): Promise<void>;
}

export interface RateWindow {
  /** Waits for a free slot and takes it; throws WaitTooLong, taking nothing, when that would mean waiting past maxWaitMs. */
  take(signal?: AbortSignal, maxWaitMs?: number): Promise<Slot>;
  /** Nobody may post before `untilMs` (the service said so). */
  block(untilMs: number): Promise<void>;
}

/** The window is held (by Discord's 429, or full) for longer than a caller may wait. */
export class WaitTooLong extends Error {
  readonly waitMs: number;
  constructor(waitMs: number) {
    super(`rate limited for ${Math.ceil(waitMs / 1000)} s`);
    this.waitMs = waitMs;
  }
}

export function createRateWindow(options: RateWindowOptions): RateWindow {
  const { key, limit, windowMs, clock = systemClock } = options;
  // node:crypto is loaded here rather than imported at the top: executables load every top-level import at start-up,
  // and crypto is the slowest built-in to load; only a tool that posts needs it.
  const { createHash } = process.getBuiltinModule("node:crypto");
  const name = `rate-${createHash("sha256").update(key).digest("hex").slice(0, 16)}`;
  let dir = options.dir;
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    const fallback = join(tmpdir(), `mcops-${process.getuid?.() ?? "user"}`);
    options.onFallback?.(
      `cannot use ${dir} (${(error as NodeJS.ErrnoException).code}); sharing the rate limit through ${fallback}`,
    );
    dir = fallback;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }
  const file = join(dir, `${name}.json`);
  const lockFile = join(dir, `${name}.lock`);

  function read(): WindowState {
    try {
      const state = JSON.parse(readFileSync(file, "utf8")) as WindowState;
      if (Array.isArray(state.sent) && typeof state.blockedUntil === "number") return state;
    } catch {
      // absent or damaged: start empty
    }
    return { sent: [], blockedUntil: 0 };
  }

  function write(state: WindowState): void {
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(state));
    renameSync(tmp, file);
  }

  async function withState<T>(fn: (state: WindowState, now: number) => T): Promise<T> {
    const lock = await acquireLock(lockFile, { tool: "rate-window", waitMs: 30_000, pollMs: 5, clock });
    try {
      const now = clock.now();
      const state = read();
      state.sent = state.sent.filter((t) => t > now - windowMs && t <= now + windowMs);
      return fn(state, now);
    } finally {
      lock.release();
    }
  }

  return {
    async take(signal, maxWaitMs = Number.POSITIVE_INFINITY) {
      const started = clock.now();
      for (;;) {
        let taken = 0;
        const wait = await withState((state, now) => {
          const blocked = state.blockedUntil - now;
          const full = state.sent.length >= limit ? (state.sent[0] as number) + windowMs - now : 0;
          const wait = Math.max(blocked, full, 0);
          if (wait === 0) {
            taken = now;
            state.sent.push(now);
            write(state);
          }
          return wait;
        });
        if (wait === 0) {
          return {
            waitedMs: clock.now() - started,
            done: () =>
              withState((state, now) => {
                const index = state.sent.indexOf(taken);
                if (index >= 0) state.sent.splice(index, 1);
                state.sent.push(now);
                state.sent.sort((a, b) => a - b);
                write(state);
              }),
          };
        }
        if (clock.now() - started + wait > maxWaitMs) throw new WaitTooLong(wait);
        // A little jitter so that waiting processes do not all wake at the same instant.
        await clock.sleep(wait + Math.floor(Math.random() * 20), signal);
      }
    },
    async block(untilMs) {
      await withState((state) => {
        if (untilMs > state.blockedUntil) {
          state.blockedUntil = untilMs;
          write(state);
        }
      });
    },
  };
}
