import { closeSync, type FSWatcher, fstatSync, openSync, readSync, statSync, watch } from "node:fs";
import { basename, dirname } from "node:path";
import { isErrno } from "./env-file.ts";

/**
 * Follows a log file the way the game writes it (SPEC 6 rule 3): appended to, renamed away at every start and after
 * midnight (log4j's rollover), truncated, deleted and created again, or not there yet. Nothing is lost or repeated:
 * a renamed or deleted file is read to its end through the descriptor still open on it before the new one is read from
 * its beginning; a truncated file (or one rewritten from the start, recognised by its first bytes) is read from its
 * beginning. A partial last line waits for its newline. It wakes on file events (inotify through fs.watch on the
 * directory) and polls slowly as a fallback.
 */
export interface FollowPosition {
  dev: number;
  ino: number;
  /** Byte offset of the first line not yet delivered. */
  offset: number;
  /** Lines delivered from this file so far. */
  line: number;
  /** The file's first bytes (up to 64), base64: tells a rewritten file from the same one grown. */
  head: string;
}

export type NewFileReason = "opened" | "resumed" | "rotated" | "truncated";

export interface FollowerOptions {
  path: string;
  /** Each complete line, without its newline. */
  onLine(line: string): void;
  /** A new file (or the same one from its beginning) starts; `line` is where counting goes on from. */
  onFile?(reason: NewFileReason, line: number): void;
  /** After each read that reached the end of the file: a good time to flush and to save the position. */
  onCaughtUp?(position: FollowPosition): void;
  /** Where a previous run stopped; used only when it is still the same file. */
  resumeFrom?: FollowPosition | undefined;
  /** Fallback poll interval; default 1000 ms. */
  pollMs?: number;
}

const HEAD_BYTES = 64;
const CHUNK = 256 * 1024;

export class LogFollower {
  readonly #o: FollowerOptions;
  #fd: number | undefined;
  #dev = 0;
  #ino = 0;
  #pos = 0;
  #line = 0;
  #head: Buffer = Buffer.alloc(0);
  #partial: Buffer = Buffer.alloc(0);
  #busy = false;
  #again = false;
  #watcher: FSWatcher | undefined;
  #timer: NodeJS.Timeout | undefined;
  #resume: FollowPosition | undefined;
  readonly #buffer = Buffer.allocUnsafe(CHUNK);

  constructor(options: FollowerOptions) {
    this.#o = options;
    this.#resume = options.resumeFrom;
  }

  start(): void {
    this.#watch();
    this.#timer = setInterval(() => {
      if (!this.#watcher) this.#watch();
      this.drain();
    }, this.#o.pollMs ?? 1000);
    this.drain();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#watcher?.close();
    this.#watcher = undefined;
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }

  get position(): FollowPosition {
    return {
      dev: this.#dev,
      ino: this.#ino,
      offset: this.#pos - this.#partial.length,
      line: this.#line,
      head: this.#head.toString("base64"),
    };
  }

  #watch(): void {
    try {
      const name = basename(this.#o.path);
      this.#watcher = watch(dirname(this.#o.path), { persistent: true }, (_event, file) => {
        if (file === null || file === name) this.drain();
      });
      this.#watcher.on("error", () => {
        this.#watcher?.close();
        this.#watcher = undefined;
      });
    } catch {
      this.#watcher = undefined; // the directory is not there yet: the poll tries again
    }
  }

  /** Reads everything there is to read now. Safe to call at any time; calls made while reading run once after. */
  drain(): void {
    if (this.#busy) {
      this.#again = true;
      return;
    }
    this.#busy = true;
    try {
      do {
        this.#again = false;
        this.#step();
      } while (this.#again);
    } finally {
      this.#busy = false;
    }
  }

  #step(): void {
    let current: { dev: number; ino: number; size: number } | undefined;
    try {
      current = statSync(this.#o.path);
    } catch (error) {
      if (!isErrno(error, "ENOENT") && !isErrno(error, "ENOTDIR")) throw error;
    }
    if (this.#fd !== undefined && (!current || current.ino !== this.#ino || current.dev !== this.#dev)) {
      // Renamed away or deleted: what was written to it before that is still ours to read, from its beginning if it
      // was truncated (or rewritten) before it went.
      this.#restartIfTruncated(fstatSync(this.#fd).size);
      this.#readToEnd();
      if (this.#partial.length) this.#deliver(this.#partial.toString("utf8"));
      this.#partial = Buffer.alloc(0);
      closeSync(this.#fd);
      this.#fd = undefined;
      if (current) this.#open("rotated");
    } else if (this.#fd === undefined && current) {
      this.#open(this.#resume ? "resumed" : "opened");
    } else if (this.#fd !== undefined && current) {
      this.#restartIfTruncated(current.size);
    }
    if (this.#fd === undefined) return;
    this.#readToEnd();
    this.#o.onCaughtUp?.(this.position);
  }

  /** A file now shorter than what was read, or whose first bytes changed, was truncated: read it from its beginning. */
  #restartIfTruncated(size: number): void {
    if (size >= this.#pos && this.#sameHead()) return;
    this.#partial = Buffer.alloc(0);
    this.#pos = 0;
    this.#line = 0;
    this.#head = Buffer.alloc(0);
    this.#o.onFile?.("truncated", 0);
  }

  #open(reason: NewFileReason): void {
    let fd: number;
    try {
      fd = openSync(this.#o.path, "r");
    } catch (error) {
      if (isErrno(error, "ENOENT")) return;
      throw error;
    }
    const stat = fstatSync(fd);
    this.#fd = fd;
    this.#dev = stat.dev;
    this.#ino = stat.ino;
    this.#partial = Buffer.alloc(0);
    this.#pos = 0;
    this.#line = 0;
    this.#head = Buffer.alloc(0);
    const resume = this.#resume;
    this.#resume = undefined;
    if (resume && resume.dev === stat.dev && resume.ino === stat.ino && resume.offset <= stat.size) {
      this.#head = this.#readHead(Buffer.from(resume.head, "base64").length);
      if (this.#head.toString("base64") === resume.head) {
        this.#pos = resume.offset;
        this.#line = resume.line;
        this.#o.onFile?.("resumed", this.#line);
        return;
      }
    }
    // A different file than the one a previous run stopped in: it was rotated meanwhile; read it from its beginning.
    this.#head = Buffer.alloc(0);
    this.#o.onFile?.(reason === "resumed" ? "rotated" : reason, 0);
  }

  #readHead(length: number): Buffer {
    if (this.#fd === undefined || length === 0) return Buffer.alloc(0);
    const head = Buffer.alloc(length);
    const read = readSync(this.#fd, head, 0, length, 0);
    return head.subarray(0, read);
  }

  #sameHead(): boolean {
    if (this.#head.length === 0) return true;
    return this.#readHead(this.#head.length).equals(this.#head);
  }

  #readToEnd(): void {
    const fd = this.#fd as number;
    for (;;) {
      const read = readSync(fd, this.#buffer, 0, CHUNK, this.#pos);
      if (read === 0) return;
      const chunk = this.#buffer.subarray(0, read);
      if (this.#head.length < HEAD_BYTES && this.#pos < HEAD_BYTES) {
        this.#head = Buffer.concat([this.#head, chunk.subarray(0, HEAD_BYTES - this.#pos)]);
      }
      this.#pos += read;
      let data = this.#partial.length ? Buffer.concat([this.#partial, chunk]) : chunk;
      let start = 0;
      for (;;) {
        const nl = data.indexOf(10, start);
        if (nl < 0) break;
        this.#deliver(data.toString("utf8", start, nl));
        start = nl + 1;
      }
      data = data.subarray(start);
      this.#partial = Buffer.from(data);
    }
  }

  #deliver(line: string): void {
    this.#line++;
    this.#o.onLine(line);
  }
}
