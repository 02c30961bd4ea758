import type { Clock } from "@mcops/core/clock";
import { formatSpan } from "@mcops/core/format";
import { COLOURS, type Notice } from "@mcops/core/http";
import type { GameEvent } from "@mcops/game-log/game-log";
import type { OomKill } from "./container-watch.ts";

/**
 * Game events as channel messages (docs/system.md 6): join success, leave info, death event, start success, stop warning, crash
 * and errors error. Text from the log is marked as game text, so the notifier escapes it: a player or an item named
 * `@everyone` pings nobody and `**` formats nothing.
 */
function noticeFor(event: GameEvent): Notice | undefined {
  switch (event.type) {
    case "join":
      return { title: `${event.player} joined the game`, colour: COLOURS.success, category: "join", fromGame: true };
    case "leave":
      return { title: `${event.player} left the game`, colour: COLOURS.info, category: "leave", fromGame: true };
    case "death":
      return { title: event.message, colour: COLOURS.event, category: "death", fromGame: true };
    case "start":
      return {
        title: "Server started",
        description: event.seconds === undefined ? undefined : `Ready after ${event.seconds} s`,
        colour: COLOURS.success,
        category: "start",
        fromGame: true,
      };
    case "stop":
      return { title: "Server stopped", colour: COLOURS.warning, category: "stop", fromGame: true };
    case "crash":
      return {
        // An OutOfMemoryError anywhere in the crash's lines, or the kernel's kill, is said in the title: the cure is
        // memory, not a bug report.
        title:
          event.line === OOM_KILL_LINE ||
          /\bjava\.lang\.OutOfMemoryError\b/.test(`${event.message}\n${event.exception ?? ""}`)
            ? "Server crashed: out of memory"
            : "Server crashed",
        description: [
          event.message,
          event.exception,
          event.report && `Crash report: ${event.report}`,
          event.line === OOM_KILL_LINE && OOM_KILL_HINT,
        ]
          .filter(Boolean)
          .join("\n"),
        colour: COLOURS.error,
        category: "crash",
        fromGame: true,
      };
    default:
      return undefined; // errors are summarised (ErrorDigest)
  }
}

/** The line number of a crash the log does not have: the container killed for memory (seen on Docker's events). */
const OOM_KILL_LINE = 0;
const OOM_KILL_HINT =
  "The game cannot log this: the process is killed at once. Give the server more memory in the panel (Build Configuration), or less to do (view distance, plugins, loaded chunks).";

/**
 * The kernel's OOM killer ended the server's process: a crash the game never logged, as the parser's crash event, so
 * it is counted, goes through the crash-loop watch, and is posted like any crash.
 */
export function oomKillEvent(kill: OomKill, clock: Clock): GameEvent {
  const ran = !kill.ranSeconds ? "" : ` after ${formatSpan(kill.ranSeconds * 1000)}`;
  return {
    type: "crash",
    message: `Out of memory: the kernel killed the server's container${ran} (exit code ${kill.exitCode})`,
    time: new Date(clock.now()).toTimeString().slice(0, 8),
    line: OOM_KILL_LINE,
  };
}

/**
 * Bursts (docs/system.md 6 rule 4): more than `limit` joins and leaves within `windowMs`, or more than `deathLimit` deaths, become
 * summary messages per window instead of one message each: one for the held joins, one for the held leaves, one for the
 * held deaths, each under its own category so webhook.json's `events` switches apply to it. The notifier's
 * 30-per-minute rule holds on top.
 */
interface BurstOptions {
  clock: Clock;
  send(notice: Notice): void;
  windowMs?: number;
  limit?: number;
  deathLimit?: number;
}

interface Group {
  recent: number[];
  held: GameEvent[];
  /** Cancels the pending release of what is held. */
  cancel: (() => void) | undefined;
}

export class BurstThrottle {
  readonly #o: Required<Omit<BurstOptions, "send" | "clock">> & BurstOptions;
  readonly #groups = new Map<"presence" | "death", Group>();

  constructor(options: BurstOptions) {
    this.#o = { windowMs: 10_000, limit: 10, deathLimit: 3, ...options };
  }

  /** Passes an event on, or holds it for the summary when its group is bursting. */
  offer(event: GameEvent): void {
    const key =
      event.type === "death" ? "death" : event.type === "join" || event.type === "leave" ? "presence" : undefined;
    const notice = noticeFor(event);
    if (!notice) return;
    if (!key) {
      this.#o.send(notice);
      return;
    }
    const group = this.#groups.get(key) ?? { recent: [], held: [], cancel: undefined };
    this.#groups.set(key, group);
    const now = this.#o.clock.now();
    group.recent = group.recent.filter((t) => t > now - this.#o.windowMs);
    group.recent.push(now);
    const limit = key === "death" ? this.#o.deathLimit : this.#o.limit;
    if (group.recent.length <= limit && group.held.length === 0) {
      this.#o.send(notice);
      return;
    }
    group.held.push(event);
    group.cancel ??= after(this.#o.clock, this.#o.windowMs, () => this.#release(key));
  }

  /** Sends what is held now (at shutdown). */
  flush(): void {
    for (const key of this.#groups.keys()) this.#release(key);
  }

  #release(key: "presence" | "death"): void {
    const group = this.#groups.get(key);
    if (!group) return;
    group.cancel?.();
    group.cancel = undefined;
    const held = group.held.splice(0);
    if (held.length === 0) return;
    if (key === "death") {
      this.#o.send(summarise("death", held));
      return;
    }
    // One summary per category, in the order each kind first appeared, so a switched-off category stays silent.
    const kinds = [...new Set(held.map((e) => e.type))] as ("join" | "leave")[];
    for (const kind of kinds) {
      const own = held.filter((e) => e.type === kind);
      this.#o.send(summarise(kind, own));
    }
  }
}

function names(events: GameEvent[]): string {
  const list = [...new Set(events.map((e) => e.player as string))];
  return list.length > 20 ? `${list.slice(0, 20).join(", ")} and ${list.length - 20} more` : list.join(", ");
}

/** The summary of held events of one category: `join`, `leave` or `death`. */
function summarise(category: "join" | "leave" | "death", events: GameEvent[]): Notice {
  if (category === "death") {
    return {
      title: `${events.length} deaths`,
      description:
        events
          .slice(0, 15)
          .map((e) => e.message)
          .join("\n") + (events.length > 15 ? `\n… and ${events.length - 15} more` : ""),
      colour: COLOURS.event,
      category: "death",
      fromGame: true,
    };
  }
  const verb = category === "join" ? "joined" : "left";
  return {
    title: `${events.length} ${verb}`,
    description: `${events.length} ${verb}: ${names(events)}`,
    colour: COLOURS.info,
    category,
    fromGame: true,
  };
}

/** Main-thread ERROR entries: at most one summary per `everyMs` (default 10 min), under the crash category. */
export class ErrorDigest {
  readonly #clock: Clock;
  readonly #send: (notice: Notice) => void;
  readonly #everyMs: number;
  #last = Number.NEGATIVE_INFINITY;
  #held: GameEvent[] = [];
  /** Cancels the pending flush. */
  #cancel: (() => void) | undefined;

  constructor(clock: Clock, send: (notice: Notice) => void, everyMs = 10 * 60_000) {
    this.#clock = clock;
    this.#send = send;
    this.#everyMs = everyMs;
  }

  offer(event: GameEvent): void {
    this.#held.push(event);
    const wait = this.#last + this.#everyMs - this.#clock.now();
    if (wait <= 0) this.flush();
    else this.#cancel ??= after(this.#clock, wait, () => this.flush());
  }

  flush(): void {
    this.#cancel?.();
    this.#cancel = undefined;
    const held = this.#held.splice(0);
    if (held.length === 0) return;
    this.#last = this.#clock.now();
    const lines = held.slice(0, 5).map((e) => `[${e.time}] ${e.message}${e.exception ? ` — ${e.exception}` : ""}`);
    this.#send({
      title: held.length === 1 ? "Server error" : `${held.length} server errors`,
      description: lines.join("\n") + (held.length > 5 ? `\n… and ${held.length - 5} more` : ""),
      colour: COLOURS.error,
      category: "crash",
      fromGame: true,
    });
  }
}

/**
 * Runs `fn` once `ms` have passed on the clock, unless the returned cancel is called first (setTimeout and clearTimeout
 * on the injected clock: a cancelled call never runs, even when its sleep had already ended).
 */
export function after(clock: Clock, ms: number, fn: () => void): () => void {
  const controller = new AbortController();
  clock.sleep(ms, controller.signal).then(
    () => {
      if (!controller.signal.aborted) fn();
    },
    () => {}, // cancelled
  );
  return () => controller.abort();
}
