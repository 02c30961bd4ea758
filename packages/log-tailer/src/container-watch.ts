import { request } from "node:http";
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
}

export interface OomKill {
  exitCode: number;
  ranSeconds: number | undefined;
}

/** Docker's events are a few hundred bytes; a line longer than this is not one of them and is skipped whole. */
const MAX_EVENT_BYTES = 64 * 1024;
/** Events remembered to skip on a replay: more than one second of a server's own container events. */
const SEEN_KEPT = 64;
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
  while (!signal.aborted) {
    try {
      await stream.follow(() => {
        if (!announced || problem !== undefined) logger.info(`following Docker's events for container ${who}`);
        announced = true;
        problem = undefined;
      });
      if (signal.aborted) return;
      const ended = "Docker's event stream ended (the daemon restarted?)";
      if (problem !== ended) logger.warn(`${ended}; following it again`);
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

class EventReader {
  readonly #o: ContainerWatchOptions;
  /**
   * The newest event read: a reconnection asks from its second again and skips what it already had. timeNano is above
   * 2^53, so events close together can read as the same number: what was read is also known by its key.
   */
  #lastNano = 0;
  readonly #seen: string[] = [];
  /** Containers (by id) with an `oom` since they started. */
  readonly #oom = new Set<string>();

  constructor(options: ContainerWatchOptions) {
    this.#o = options;
  }

  /** Reads the stream until it ends (resolves) or fails (rejects); `connected` once Docker answered 200. */
  follow(connected: () => void): Promise<void> {
    const query = new URLSearchParams({ filters: FILTERS });
    if (this.#lastNano > 0) query.set("since", String(Math.floor(this.#lastNano / 1e9)));
    return new Promise<void>((resolve, reject) => {
      const req = request(
        { socketPath: this.#o.socket, path: `/events?${query}`, method: "GET", signal: this.#o.signal },
        (res) => {
          if (res.statusCode !== 200) {
            let body = "";
            res.on("data", (chunk: Buffer) => {
              if (body.length < MAX_ERROR_BYTES) body += chunk.toString("utf8").slice(0, MAX_ERROR_BYTES);
            });
            res.on("end", () => reject(new Error(`answered ${res.statusCode}: ${errorMessage(body)}`)));
            return;
          }
          connected();
          const lines = new LineSplitter((line) => this.#line(line));
          res.on("data", (chunk: Buffer) => lines.push(chunk));
          // However it ends (the daemon stopping closes it mid-chunk), a stream that was followed has ended.
          res.on("end", () => resolve());
          res.on("error", () => resolve());
          res.on("close", () => resolve());
        },
      );
      req.on("error", reject);
      req.end();
    });
  }

  #line(line: Buffer): void {
    const event = parseEvent(line);
    if (!event || event.timeNano < this.#lastNano) return;
    const key = `${event.timeNano} ${event.action} ${event.id}`;
    if (this.#seen.includes(key)) return;
    this.#seen.push(key);
    if (this.#seen.length > SEEN_KEPT) this.#seen.shift();
    this.#lastNano = event.timeNano;
    if (!this.#ours(event)) return;
    if (event.action === "oom") this.#oom.add(event.id);
    else if (event.action === "start" || event.action === "destroy") this.#oom.delete(event.id);
    else if (event.action === "die" && this.#oom.delete(event.id)) {
      const exitCode = Number(event.attributes.exitCode);
      const ran = Number(event.attributes.execDuration);
      this.#o.logger.error(
        `Docker: the server's container was killed for memory (oom, then die with exit code ${event.attributes.exitCode})`,
      );
      this.#o.onOomKill({
        exitCode: Number.isInteger(exitCode) ? exitCode : 137,
        ranSeconds: Number.isFinite(ran) && ran >= 0 ? ran : undefined,
      });
    }
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
