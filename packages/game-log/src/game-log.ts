import { closeSync } from "node:fs";
import { readRange, type VolumeDir } from "@mcops/core/volume";
import { matchDeath } from "./death-messages.ts";
import { isServerMessage } from "./server-messages.ts";

/**
 * The game log parser (docs/system.md 6, docs/contract.md `log-tailer scan`), shared by log-tailer and idle-monitor (who is online).
 * It reads what real servers write: vanilla, Paper, Spigot/CraftBukkit, Folia, Fabric, Forge and NeoForge; both
 * timestamp styles (`[12:34:56]` and Forge's `[11May2025 13:57:36.740]`), a logger name after the level, any thread
 * name, ANSI and § colour codes, CRLF, and stack-trace lines without a prefix (they belong to the entry above).
 *
 * Events come out as soon as their first line is read, except `error` and `crash`, which wait for their stack lines
 * (and a crash for its report path) until the next entry, or until `flush()`.
 */
export type GameEventType = "join" | "leave" | "death" | "start" | "stop" | "crash" | "error";

export interface GameEvent {
  type: GameEventType;
  /** join, leave, death */
  player?: string;
  /** The log message without its prefix (first line of the entry). */
  message: string;
  /** HH:MM:SS from the entry's prefix. */
  time: string;
  /** 1-based line of the entry's first line. */
  line: number;
  /** start: the seconds of `Done (<seconds>s)!` */
  seconds?: number;
  /** crash, error: the exception line (first stack line naming an exception). */
  exception?: string;
  /** crash: the crash report's path. */
  report?: string;
  /** error: the stack lines that followed. */
  stack?: string[];
}

/** The prefix of a game log entry, and its message. */
export interface EntryHeader {
  time: string;
  thread: string;
  level: string;
  message: string;
}

// [12:34:56] [Server thread/INFO]: msg   |   [11May2025 13:57:36.740] [Server thread/INFO] [logger/]: msg
// Paper's console style [12:34:56 INFO]: msg has no thread: it reads as the main thread.
const HEADER =
  /^\[(?:\d{1,2}[A-Za-z]{3}\d{4} )?(\d\d:\d\d:\d\d)(?:[.,]\d+)?\] \[(.+?)\/(INFO|WARN|ERROR|FATAL|DEBUG|TRACE)\](?: \[[^\]]*\])?: ?(.*)$/;
const CONSOLE_HEADER = /^\[(\d\d:\d\d:\d\d)(?:[.,]\d+)? (INFO|WARN|ERROR|FATAL)\]: ?(.*)$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: it strips ANSI escape sequences, which begin with ESC.
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;
const SECTION = /§[0-9a-fk-orx]/gi;

const NAME = "[.*]?[A-Za-z0-9_]{1,16}";
const JOINED = new RegExp(`^(${NAME})(?: \\(formerly known as ${NAME}\\))? joined the game$`);
const LEFT = new RegExp(`^(${NAME}) left the game$`);
const LOGGED_IN = new RegExp(`^(${NAME})\\[[^\\]]*\\] logged in with entity id \\d+ at `);
const LOST_CONNECTION = new RegExp(`^(${NAME}) lost connection: `);
const DONE = /^Done \((\d+(?:[.,]\d+)?)s\)! For help, type "help"/;
const STOPPING = /^Stopping (?:the )?server$/;
const STARTING = /^Starting (?:minecraft|Minecraft) server version /;
/**
 * A crash's first line: the game's own, and the watchdogs' (vanilla's ServerWatchdog says "A single server tick took
 * 60.00 seconds (should be max 0.05)" then "Considering it to be crashed"; Paper's WatchdogThread "The server has stopped
 * responding! This is (probably) not a Paper bug."): a server that hangs is a crash as much as one that throws.
 */
const CRASH =
  /Encountered an unexpected exception|This crash report has been saved to|Considering it to be crashed|Failed to start the minecraft server|^A single server tick took [\d.,]+ seconds|^The server has stopped responding!/;
const REPORT = /This crash report has been saved to:? ?(.+)$/;
const EXCEPTION = /^(?:Caused by: )?[\w$.]+(?:Exception|Error|Throwable)\b.*/;
const LEADING_NAME = new RegExp(`^(${NAME}) `);
/**
 * Messages that start with a player's name and are not deaths (the modded-death rule must skip them), besides the
 * server's own messages from the language files (isServerMessage): what servers and Bukkit write without a language
 * key, and the game's own fixed lines that start with a word a player can be named: the shutdown's `Saving players`,
 * `Saving worlds`, `Saving chunks for level ...`; a villager's and a named entity's death (`Villager ... died,
 * message: '...'`, `Named entity ... died: ...`); a reload's `Reloading ResourceManager: ...`, `Loaded 6 recipes`,
 * `Loaded 1399 advancements`, `Server permissions file ... is empty, ignoring it`; a login turned away before 1.20.2
 * (`Disconnecting Bob (/203.0.113.7:51234): ...`, which anybody who connects can make the server write).
 */
const NOT_A_DEATH =
  /^(?:Saving (?:players|worlds|chunks for level .*)$|Villager \S+\[.*\] died, message: |Named entity \S+\[.*\] died|Reloading ResourceManager: |Loaded \d+ (?:recipes|advancements)$|Server permissions file |Disconnecting (?:[A-Za-z0-9_]{1,16} \(\/|com\.mojang\.authlib\.GameProfile@))| (?:joined the game|left the game|lost connection: .*|has made the advancement .*|has completed the challenge .*|has reached the goal .*|issued server command: .*|moved too quickly!.*|moved wrongly!.*|has the following .*|was kicked .*|logged in .*)$/;

/** Main-thread names: vanilla's, and Folia's region threads (which announce joins and deaths); "" is Paper's console. */
export function isMainThread(thread: string): boolean {
  return thread === "Server thread" || thread.startsWith("Region Scheduler Thread") || thread === "";
}

/** Chat, /me and /say never make an event, whatever they say. */
function isChat(message: string): boolean {
  const c = message.charCodeAt(0);
  // < (chat)  [ ([Not Secure], [Server], [name: ...])  * (/me)
  return c === 60 || c === 91 || (c === 42 && message.charCodeAt(1) === 32);
}

export interface ParserOptions {
  /** Lines after a Bukkit `logged in` (or a `lost connection`) within which `joined the game` (`left the game`) makes
   * it one join (leave) (default 20). */
  joinWindow?: number;
}

/** Makes an event of the entry being read: its message, time and line, and what the type adds. */
type MakeEvent = (type: GameEventType, extra?: Partial<GameEvent>) => GameEvent;

interface Slot {
  event: GameEvent;
  /** pending: may still change or be dropped; later events wait behind it, so events leave in log order. */
  state: "pending" | "ready" | "dropped";
  /** The line after which a pending join or leave is taken as it is. */
  until: number;
}

/** A set of names that counts its changes: who reads it often (LineFilter) sees at a glance whether it changed. */
export class OnlinePlayers extends Set<string> {
  /** Goes up with every add, delete and clear. */
  changes = 0;

  override add(name: string): this {
    this.changes++;
    return super.add(name);
  }

  override delete(name: string): boolean {
    this.changes++;
    return super.delete(name);
  }

  override clear(): void {
    this.changes++;
    super.clear();
  }
}

export class GameLogParser {
  /** Players online as the log tells it (joins minus leaves); cleared at start and stop. */
  readonly online = new OnlinePlayers();
  #line = 0;
  /** Events in log order, waiting until every event before them is settled. */
  #queue: Slot[] = [];
  /** The error or crash entry still collecting its stack lines. */
  #open: Slot | undefined;
  /** Bukkit logins waiting for their `joined the game`, and lost connections for their `left the game`. */
  #held: Slot[] = [];
  #stopped = false;
  #crashed = false;
  #joinsLogged = false;
  readonly #joinWindow: number;
  readonly #emit: (event: GameEvent) => void;

  constructor(emit: (event: GameEvent) => void, options: ParserOptions = {}) {
    this.#emit = emit;
    this.#joinWindow = options.joinWindow ?? 20;
  }

  /** The line number of the last line pushed. */
  get line(): number {
    return this.#line;
  }

  /**
   * Whether every line must be pushed, whatever it says: an error or crash entry is collecting its stack lines (every
   * line up to the next entry belongs to it), or a login or a lost connection is held for its window (the line that
   * ends the window settles it, and a player online changes what later lines mean).
   */
  get needsEveryLine(): boolean {
    return this.#open !== undefined || this.#held.length > 0;
  }

  /**
   * Counts `count` lines that were not pushed because pushing them would have changed nothing but the line number:
   * the parser did not need every line (needsEveryLine) and no rule below acts on them (line-filter.ts decides that on
   * bytes, for log-tailer scan). Only when events are emitted differs: the next line pushed releases them. A line
   * without an entry header may be counted even while an entry collects its stack: it would only have been added to
   * that entry's stack, exception or report, which the caller then does without (a scan line prints none of them).
   */
  skip(count: number): void {
    this.#line += count;
  }

  /** Feeds one line (without its newline). */
  push(raw: string): void {
    this.#line++;
    let text = raw.charCodeAt(raw.length - 1) === 13 ? raw.slice(0, -1) : raw;
    if (text.includes("\x1b")) text = text.replace(ANSI, "");
    if (text.includes("§")) text = text.replace(SECTION, "");
    const header = text.charCodeAt(0) === 91 ? parseHeader(text) : undefined;
    if (!header) {
      this.#continuation(text);
      return;
    }
    const open = this.#open;
    if (open?.event.type === "crash" && isSevere(header.level) && CRASH.test(header.message)) {
      // The same crash, said again (the report path, the watchdog): part of the one crash event.
      const report = REPORT.exec(header.message);
      if (report && !open.event.report) open.event.report = report[1];
      return;
    }
    this.#close();
    this.#expire(this.#line);
    this.#entry(header);
    this.#release();
  }

  /** Settles everything held: an entry collecting stack lines, logins and lost connections still waiting. */
  flush(): void {
    this.#close();
    this.#expire(Number.POSITIVE_INFINITY);
    this.#release();
  }

  /** Starts counting lines again (a new file). Online players and the shutdown state are kept. */
  resetLines(line = 0): void {
    this.flush();
    this.#line = line;
  }

  #add(event: GameEvent, state: Slot["state"] = "ready", until = 0): Slot {
    const slot: Slot = { event, state, until };
    this.#queue.push(slot);
    if (event.type === "join" && state === "ready") this.online.add(event.player as string);
    if (event.type === "leave" && state === "ready") this.online.delete(event.player as string);
    return slot;
  }

  #settle(slot: Slot, state: "ready" | "dropped"): void {
    slot.state = state;
    if (state !== "ready") return;
    if (slot.event.type === "join") this.online.add(slot.event.player as string);
    if (slot.event.type === "leave") this.online.delete(slot.event.player as string);
  }

  #release(): void {
    let i = 0;
    for (; i < this.#queue.length; i++) {
      const slot = this.#queue[i] as Slot;
      if (slot.state === "pending") break;
      if (slot.state === "ready") this.#emit(slot.event);
    }
    if (i) this.#queue.splice(0, i);
  }

  #continuation(text: string): void {
    const event = this.#open?.event;
    if (!event) return;
    if (event.type === "error") {
      event.stack ??= [];
      event.stack.push(text);
    }
    if (!event.exception) {
      const match = EXCEPTION.exec(text.trim());
      if (match) event.exception = match[0];
    }
    if (event.type === "crash" && !event.report) {
      const report = REPORT.exec(text);
      if (report) event.report = report[1];
    }
  }

  #close(): void {
    if (!this.#open) return;
    this.#settle(this.#open, "ready");
    this.#open = undefined;
  }

  #expire(line: number): void {
    if (!this.#held.length) return;
    this.#held = this.#held.filter((slot) => {
      if (slot.state !== "pending") return false;
      if (slot.until >= line) return true;
      this.#settle(slot, "ready");
      return false;
    });
  }

  /** Settles a held login or lost connection of `player` as it is (a later line of the player says it happened). */
  #settleHeld(player: string, type: "join" | "leave", state: "ready" | "dropped"): void {
    for (const slot of this.#held) {
      if (slot.state === "pending" && slot.event.type === type && slot.event.player === player)
        this.#settle(slot, state);
    }
  }

  #hasHeld(player: string, type: "join" | "leave"): boolean {
    return this.#held.some(
      (slot) => slot.state === "pending" && slot.event.type === type && slot.event.player === player,
    );
  }

  /** One entry's first line: which event it makes, step by step (most lines make none). */
  #entry({ time, thread, level, message }: EntryHeader): void {
    const line = this.#line;
    const event: MakeEvent = (type, extra = {}) => ({ type, message, time, line, ...extra });

    if (isSevere(level)) {
      this.#severe(thread, message, event);
      return;
    }
    if (level !== "INFO") return;
    if (!isMainThread(thread) || message === "" || isChat(message)) return;

    // Cheap tests on the message's end and start first: most lines are none of these.
    if (this.#joinedOrLeft(message, event)) return;
    if (this.#connection(message, line, event)) return;
    if (this.#lifecycle(message, event)) return;
    this.#death(message, event);
  }

  /** An ERROR or FATAL entry: a crash, or an error of the main thread. */
  #severe(thread: string, message: string, event: MakeEvent): void {
    if (CRASH.test(message)) {
      if (this.#crashed) return; // a crash is announced once, until the server starts again
      this.#crashed = true;
      const report = REPORT.exec(message);
      this.#open = this.#add(event("crash", report ? { report: report[1] } : {}), "pending");
    } else if (isMainThread(thread) && thread !== "") {
      // The main thread, or a Folia region thread; not Paper's console style, which names no thread at all.
      this.#open = this.#add(event("error"), "pending");
    }
  }

  /** `joined the game`, `left the game`; true when the message was one of them. */
  #joinedOrLeft(message: string, event: MakeEvent): boolean {
    if (!message.endsWith(" the game")) return false;
    const joined = JOINED.exec(message);
    if (joined) {
      const player = joined[1] as string;
      this.#joinsLogged = true;
      this.#settleHeld(player, "join", "dropped");
      this.#add(event("join", { player }));
      return true;
    }
    const left = LEFT.exec(message);
    if (left) {
      const player = left[1] as string;
      this.#settleHeld(player, "join", "ready");
      this.#settleHeld(player, "leave", "dropped");
      this.#add(event("leave", { player }));
      return true;
    }
    return false;
  }

  /** Bukkit's `logged in with entity id` and `lost connection`, held for a while; true when the message was one. */
  #connection(message: string, line: number, event: MakeEvent): boolean {
    if (message.includes(" logged in with entity id ")) {
      const login = LOGGED_IN.exec(message);
      // Servers that log `joined the game` get their join from that line; Bukkit and Spigot never write it.
      if (login && !this.#joinsLogged) {
        this.#held.push(this.#add(event("join", { player: login[1] as string }), "pending", line + this.#joinWindow));
      }
      return true;
    }
    if (message.includes(" lost connection: ")) {
      const player = LOST_CONNECTION.exec(message)?.[1];
      if (player && (this.online.has(player) || this.#hasHeld(player, "join"))) {
        // Servers whose plugins replace the quit message log only this; others follow it with "left the game",
        // which is then the leave.
        this.#settleHeld(player, "join", "ready");
        this.#held.push(this.#add(event("leave", { player }), "pending", line + this.#joinWindow));
      }
      return true;
    }
    return false;
  }

  /** `Done (...)!` (start), `Stopping server` (stop, once), `Starting minecraft server`; true when it was one. */
  #lifecycle(message: string, event: MakeEvent): boolean {
    const c = message.charCodeAt(0);
    if (c === 68 /* D */) {
      const done = DONE.exec(message);
      if (done) {
        this.#stopped = false;
        this.#crashed = false;
        this.online.clear();
        this.#add(event("start", { seconds: Number((done[1] as string).replace(",", ".")) }));
        return true;
      }
    } else if (c === 83 /* S */) {
      if (STOPPING.test(message)) {
        if (this.#stopped) return true;
        this.#stopped = true;
        this.#expire(Number.POSITIVE_INFINITY);
        this.#add(event("stop"));
        this.online.clear();
        return true;
      }
      if (STARTING.test(message)) {
        this.#stopped = false;
        this.#crashed = false;
        this.online.clear();
        return true;
      }
    }
    return false;
  }

  /** A vanilla death message, or on a modded server an unmatched system message starting with an online player. */
  #death(message: string, event: MakeEvent): void {
    const death = matchDeath(message);
    if (death) {
      this.#add(event("death", { player: death.player }));
      return;
    }
    // Modded servers add their own death messages: an otherwise unmatched system message that starts with the name of
    // a player who is online is that player's death, unless it is one of the server's own messages (a player named
    // `Automatic` is not dead when a backup turns autosave off: `Automatic saving is now disabled`).
    if (this.online.size) {
      const name = LEADING_NAME.exec(message)?.[1];
      if (name && this.online.has(name) && !NOT_A_DEATH.test(message) && !isServerMessage(message)) {
        this.#add(event("death", { player: name }));
      }
    }
  }
}

function isSevere(level: string): boolean {
  return level === "ERROR" || level === "FATAL";
}

/**
 * The prefix of a game log line (`[12:34:56] [Server thread/INFO]: `, Forge's dated time and logger name, Paper's
 * console `[12:34:56 INFO]: `) and the message after it; undefined for a line without one (a stack line).
 */
export function parseHeader(text: string): EntryHeader | undefined {
  const match = HEADER.exec(text);
  if (match)
    return {
      time: match[1] as string,
      thread: match[2] as string,
      level: match[3] as string,
      message: match[4] as string,
    };
  const console = CONSOLE_HEADER.exec(text);
  if (console)
    return { time: console[1] as string, thread: "", level: console[2] as string, message: console[3] as string };
  return undefined;
}

/** Parses a whole text; the events in order. */
export function parseGameLog(text: string): GameEvent[] {
  const events: GameEvent[] = [];
  const parser = new GameLogParser((e) => events.push(e));
  let start = 0;
  for (;;) {
    const end = text.indexOf("\n", start);
    if (end < 0) {
      if (start < text.length) parser.push(text.slice(start));
      break;
    }
    parser.push(text.slice(start, end));
    start = end + 1;
  }
  parser.flush();
  return events;
}

/**
 * Who is online by the log alone: a join adds the player, a leave removes them, and a start, stop or crash empties the
 * server. For when the game does not answer the Server List Ping (the idle monitor's fallback).
 */
export function playersOnline(events: readonly GameEvent[]): string[] {
  const online = new Set<string>();
  for (const event of events) {
    if (event.type === "join" && event.player) online.add(event.player);
    else if (event.type === "leave" && event.player) online.delete(event.player);
    else if (event.type === "start" || event.type === "stop" || event.type === "crash") online.clear();
  }
  return [...online];
}

/** The game log, below WORLD_DIR. */
export const LATEST_LOG = "logs/latest.log";

/**
 * How much of the end of latest.log is read to tell who is online. The players online are those who joined and did not
 * leave since the last start; a day's log of a busy server is a few MiB, so 8 MiB holds the start or the joins of nearly
 * every session, while a log of any size (or one made huge on purpose) costs at most 8 MiB and a parse of that.
 */
export const LOG_TAIL_BYTES = 8 * 1024 * 1024;

/**
 * The players the end of the game log says are online: the last `maxBytes` of logs/latest.log in the server volume, its
 * partial first line dropped; undefined when there is no log. The log is reached without following links and read only
 * if it is a regular file: a link, a FIFO, a device or a directory throws its UnsafePathError, and nothing is read.
 */
export function playersInGameLog(volume: VolumeDir, maxBytes = LOG_TAIL_BYTES): string[] | undefined {
  const file = volume.tryOpenFile(LATEST_LOG);
  if (!file) return undefined;
  try {
    const start = Math.max(0, file.stat.size - maxBytes);
    let bytes = readRange(file.fd, start, Math.min(file.stat.size, maxBytes));
    if (start > 0) {
      const nl = bytes.indexOf(10);
      bytes = nl < 0 ? bytes.subarray(0, 0) : bytes.subarray(nl + 1);
    }
    return playersOnline(parseGameLog(bytes.toString("utf8")));
  } finally {
    closeSync(file.fd);
  }
}
