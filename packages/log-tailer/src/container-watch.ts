import type { IncomingMessage } from "node:http";
import type { Clock } from "@mcops/core/clock";
import type { Logger } from "@mcops/core/log";

/**
 * The server's container as Docker sees it (issue 18): when the kernel's OOM killer kills the game, the JVM has no
 * time to write a line, so the game log just stops. Docker says it on its event stream: `oom`, then `die` with exit
 * code 137. Wings then removes the container and makes a new one to start the server again, so nothing on the
 * machine remembers it afterwards: the stream, followed while it happens, is the only record.
 *
 * Wings names a server's container by the server's UUID (which is also the name of its volume directory) and labels
 * it `ContainerType=server_process`. Only that container's events are read; every line of the stream is bounded.
 */
export interface ContainerWatchOptions {
  /** Docker's socket (DOCKER_SOCKET, default /var/run/docker.sock). */
  socket: string;
  /** The server's container: named by this UUID, or (without it) by a UUID starting with this short id. */
  uuid?: string | undefined;
  shortId?: string | undefined;
  clock: Clock;
  signal: AbortSignal;
  logger: Logger;
  /** The container's process was killed for memory: its exit code and how long it had run (seconds, if known). */
  onOomKill(kill: OomKill): void;
  /** Between a failed or ended stream and the next try (default 30 s). */
  retryMs?: number;
  /** Where the stream got to when the tailer last stopped, and where to save it as it goes. */
  mark?: StreamMark | undefined;
  onMark?: ((mark: StreamMark) => void) | undefined;
}

export interface OomKill {
  exitCode: number;
  ranSeconds: number | undefined;
}

/** Docker's events are a few hundred bytes; a line longer than this is not one of them and is skipped whole. */
const MAX_EVENT_BYTES = 64 * 1024;
/** The start of an error answer kept for the message. */
const MAX_ERROR_BYTES = 4096;
/** Only the actions that matter are asked for: the rest of a busy host's events never cross the socket. */
const FILTERS = JSON.stringify({ type: ["container"], event: ["oom", "die", "start", "destroy"] });

/** Follows Docker's event stream until the signal aborts, reconnecting after a failure or an ended stream. */
export async function watchContainer(options: ContainerWatchOptions): Promise<void> {
  const { clock, signal, logger } = options;
  const who = options.uuid ?? `${options.shortId}-…`;
  const stream = new EventReader(options);
  let problem: string | undefined;
  let announced = false;
  const ended = "Docker's event stream ended (the daemon restarted?)";
  while (!signal.aborted) {
    let since = 0;
    try {
      await stream.follow(() => {
        // A stream that keeps ending at once is said once, not each time it is followed again.
        if (!announced || (problem !== undefined && problem !== ended)) {
          logger.info(`following Docker's events for container ${who}`);
        }
        announced = true;
        if (problem !== ended) problem = undefined;
        since = clock.now();
      });
      if (signal.aborted) return;
      if (problem !== ended || clock.now() - since > 60_000) logger.warn(`${ended}; following it again`);
      problem = ended;
    } catch (error) {
      if (signal.aborted) return;
      const said = describe(error, options.socket);
      if (said !== problem)
        logger.warn(
          `${said}: out-of-memory kills of the server's container are not seen until it answers (DOCKER_SOCKET=off turns this off)`,
        );
      problem = said;
    }
    await clock.sleep(options.retryMs ?? 30_000, signal).catch(() => undefined);
  }
}

function describe(error: unknown, socket: string): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return `no Docker socket at ${socket}`;
  if (code === "ECONNREFUSED") return `Docker does not answer at ${socket}`;
  if (code === "EACCES") return `no permission to use ${socket}`;
  return `Docker's events at ${socket}: ${(error as Error).message}`;
}

/** One event, as far as it is read: anything else in it is ignored. */
interface ContainerEvent {
  action: string;
  id: string;
  name: string;
  attributes: Record<string, unknown>;
  timeNano: number;
}

/**
 * Where the stream got to, kept across the tailer's restarts (a kill while it was down is still posted): the newest
 * event's time and the keys of the events read lately. timeNano is above 2^53 and events of different containers can
 * reach the stream a little out of time order, so what was read is known by its key, never by comparing times.
 */
export interface StreamMark {
  sinceNano: number;
  seen: string[];
}

/** Events remembered by key: as many as Docker keeps for `since` (moby daemon/events: eventsLimit 256). */
const SEEN_KEPT = 256;
/** An `oom` and a `die` of one container this close together are one kill, in either order (containerd can send the
 * oom after the exit: containerd#12372). */
const PAIR_NANO = 10e9;
/** Exit code of a process the OOM killer ended (SIGKILL). */
const KILLED = 137;
/** How long Docker may take to answer the request's headers. */
const ANSWER_MS = 30_000;
/** A saved mark older than this is not asked from again: the kill it could still find is old news. */
const MARK_MAX_AGE_NANO = 3600e9;

class EventReader {
  readonly #o: ContainerWatchOptions;
  #mark: StreamMark;
  /** The last `oom` and the last `die` with exit code 137 not yet paired, by container id. */
  readonly #ooms = new Map<string, number>();
  readonly #dies = new Map<string, { nano: number; attributes: Record<string, unknown> }>();

  constructor(options: ContainerWatchOptions) {
    this.#o = options;
    const saved = options.mark;
    const fresh = saved && saved.sinceNano > options.clock.now() * 1e6 - MARK_MAX_AGE_NANO;
    this.#mark = fresh
      ? { sinceNano: saved.sinceNano, seen: saved.seen.slice(-SEEN_KEPT) }
      : { sinceNano: 0, seen: [] };
  }

  /** Reads the stream until it ends (resolves) or fails (rejects); `connected` once Docker answered 200. */
  follow(connected: () => void): Promise<void> {
    const query = new URLSearchParams({ filters: FILTERS });
    if (this.#mark.sinceNano > 0) query.set("since", String(Math.floor(this.#mark.sinceNano / 1e9)));
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const settle = (error?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(unanswered);
        if (error) reject(error);
        else resolve();
      };
      // Not an ES import of node:http: that loads undici (16 MiB) for the whole life of the service (core's transport.ts).
      const req = process
        .getBuiltinModule("node:http")
        .request(
          { socketPath: this.#o.socket, path: `/events?${query}`, method: "GET", signal: this.#o.signal },
          (res) => {
            clearTimeout(unanswered);
            if (res.statusCode !== 200) return this.#refused(res, settle);
            // From now on nothing is missed: a reconnection asks from here even when no event came.
            if (this.#mark.sinceNano === 0) this.#setSince(this.#o.clock.now() * 1e6 - 1e9);
            connected();
            const lines = new LineSplitter((line) => this.#line(line));
            res.on("data", (chunk: Buffer) => lines.push(chunk));
            // However it ends (the daemon stopping closes it mid-chunk), a stream that was followed has ended.
            res.on("error", () => settle());
            res.on("close", () => settle());
          },
        );
      // Only until the headers: a stream that was answered may then be quiet for days.
      const unanswered = setTimeout(() => req.destroy(new Error("it did not answer within 30 s")), ANSWER_MS);
      req.on("error", (error) => settle(error));
      req.end();
    });
  }

  /** An answer that is not the stream: its message (bounded), however the answer ends. */
  #refused(res: IncomingMessage, settle: (error?: Error) => void): void {
    let body = "";
    const fail = () => settle(new Error(`answered ${res.statusCode}: ${errorMessage(body)}`));
    res.on("data", (chunk: Buffer) => {
      if (body.length < MAX_ERROR_BYTES) body += chunk.toString("utf8").slice(0, MAX_ERROR_BYTES);
    });
    res.on("end", fail);
    res.on("error", fail);
    res.on("close", fail);
  }

  #setSince(nano: number): void {
    this.#mark.sinceNano = nano;
    this.#o.onMark?.(this.#mark);
  }

  #line(line: Buffer): void {
    const event = parseEvent(line);
    if (!event) return;
    const key = `${event.timeNano} ${event.action} ${event.id}`;
    if (this.#mark.seen.includes(key)) return;
    this.#mark.seen.push(key);
    if (this.#mark.seen.length > SEEN_KEPT) this.#mark.seen.shift();
    this.#setSince(Math.max(this.#mark.sinceNano, event.timeNano));
    if (this.#ours(event)) this.#pair(event);
  }

  /** An `oom` and a `die` with exit code 137 of the container, close together in either order, are one kill. */
  #pair(event: ContainerEvent): void {
    const { id, timeNano } = event;
    if (event.action === "start" || event.action === "destroy") {
      this.#ooms.delete(id);
      this.#dies.delete(id);
    } else if (event.action === "oom") {
      const die = this.#dies.get(id);
      if (die && Math.abs(timeNano - die.nano) <= PAIR_NANO) {
        this.#dies.delete(id);
        this.#killed(die.attributes);
      } else this.#ooms.set(id, timeNano);
    } else if (event.action === "die" && Number(event.attributes.exitCode) === KILLED) {
      const oom = this.#ooms.get(id);
      this.#ooms.delete(id);
      if (oom !== undefined && Math.abs(timeNano - oom) <= PAIR_NANO) this.#killed(event.attributes);
      else this.#dies.set(id, { nano: timeNano, attributes: event.attributes });
    } else if (event.action === "die") {
      // A plain exit: an earlier oom was a child process the game outlived.
      this.#ooms.delete(id);
    }
  }

  #killed(attributes: Record<string, unknown>): void {
    const ran = Number(attributes.execDuration);
    this.#o.logger.error("Docker: the server's container was killed for memory (oom, and its process ended with 137)");
    this.#o.onOomKill({ exitCode: KILLED, ranSeconds: Number.isFinite(ran) && ran >= 0 ? ran : undefined });
  }

  /** Wings' server container, named by this server's UUID. */
  #ours(event: ContainerEvent): boolean {
    if (event.attributes.ContainerType !== "server_process") return false;
    const { uuid, shortId } = this.#o;
    if (uuid) return event.name.toLowerCase() === uuid.toLowerCase();
    return shortId !== undefined && event.name.toLowerCase().startsWith(`${shortId.toLowerCase()}-`);
  }
}

function parseEvent(line: Buffer): ContainerEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line.toString("utf8"));
  } catch {
    return undefined;
  }
  const event = value as {
    Type?: unknown;
    Action?: unknown;
    Actor?: { ID?: unknown; Attributes?: unknown };
    timeNano?: unknown;
  };
  const attributes = event?.Actor?.Attributes;
  if (
    event?.Type !== "container" ||
    typeof event.Action !== "string" ||
    typeof event.Actor?.ID !== "string" ||
    typeof attributes !== "object" ||
    attributes === null ||
    typeof (attributes as { name?: unknown }).name !== "string" ||
    typeof event.timeNano !== "number"
  ) {
    return undefined;
  }
  return {
    action: event.Action,
    id: event.Actor.ID,
    name: (attributes as { name: string }).name,
    attributes: attributes as Record<string, unknown>,
    timeNano: event.timeNano,
  };
}

/** Docker's error body is `{"message": "..."}`. */
function errorMessage(body: string): string {
  try {
    const message = (JSON.parse(body) as { message?: unknown }).message;
    if (typeof message === "string") return message.slice(0, 300);
  } catch {
    // not JSON
  }
  return body.trim().slice(0, 300) || "no message";
}

/** Newline-separated lines from chunks; a line over MAX_EVENT_BYTES is dropped whole, never held. */
class LineSplitter {
  #parts: Buffer[] = [];
  #length = 0;
  #skipping = false;

  readonly #onLine: (line: Buffer) => void;

  constructor(onLine: (line: Buffer) => void) {
    this.#onLine = onLine;
  }

  push(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
      this.#take(chunk.subarray(start, end));
      if (!this.#skipping)
        this.#onLine(this.#parts.length === 1 ? (this.#parts[0] as Buffer) : Buffer.concat(this.#parts));
      this.#parts = [];
      this.#length = 0;
      this.#skipping = false;
      start = end + 1;
    }
    if (start < chunk.length) this.#take(chunk.subarray(start));
  }

  #take(part: Buffer): void {
    if (this.#skipping) return;
    if (this.#length + part.length > MAX_EVENT_BYTES) {
      this.#skipping = true;
      this.#parts = [];
      this.#length = 0;
      return;
    }
    this.#parts.push(Buffer.from(part));
    this.#length += part.length;
  }
}
