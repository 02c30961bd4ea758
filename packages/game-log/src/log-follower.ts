import { closeSync, type FSWatcher, fstatSync, readSync, type Stats, watch } from "node:fs";
import { JobError } from "@mcops/core/errors";
import { kindOf, readRange, UnsafePathError, type VolumeDir } from "@mcops/core/volume";

/**
 * Follows a log file the way the game writes it (docs/system.md 6 rule 3): appended to, renamed away at every start and after
 * midnight (log4j's rollover), truncated, deleted and created again, or not there yet. Nothing is lost or repeated:
 * a renamed or deleted file is read to its end through the descriptor still open on it before the new one is read from
 * its beginning; a truncated file (or one rewritten from the start, recognised by its first bytes) is read from its
 * beginning. A partial last line waits for its newline. It wakes on file events (inotify through fs.watch on the
 * directory) and polls slowly as a fallback.
 *
 * The file lives in the server volume, which the game and its plugins write while this runs as root: it is reached
 * through a `VolumeDir` without following any link, and only a regular file is ever opened. A link on the way, a FIFO,
 * a device, a socket or a directory is "no file", said once through `onProblem`; polling goes on, and a regular file
 * written there again is followed. A line longer than the cap is cut: its first bytes are delivered, the rest up to
 * its newline is skipped, and the cost stays linear in the bytes read, with memory bounded by the cap.
 *
 * Zero bytes are never part of a line: the game writes none, and they are what a sparse file's hole reads as
 * (`truncate -s 20G latest.log`) or what a crash leaves in a file being appended to. A run of them ends the line
 * before it (bytes that did not end in a newline are delivered as a line of their own, and the rest of a cut line is
 * no longer skipped), and the first byte after them starts a new line: nothing is glued across a hole. Node has no
 * SEEK_DATA, so a hole is never searched for: a chunk of zeros costs one read and a compare, and a run of zeros of at
 * least HOLE_BYTES with more than JUMP_BYTES of the file after it is jumped over to the file's last TAIL_BYTES, so a
 * hole of any size costs a few reads. Each run of at least REPORT_BYTES is said once through `onSkipped`.
 *
 * The game does not append with O_APPEND: log4j's RollingRandomAccessFile writes at its own position, which
 * `truncate -s 20G` does not move. What it writes after the file was made longer lands at the start of the hole, not
 * after it. So while the file ends in a run of zeros, where that run starts is kept (`hole`), and the first byte there
 * is looked at before each read: once it is no longer zero, reading goes back there, and from the first zero after what
 * was written there on to where it had got (the zeros in between are neither read nor said again).
 *
 * It is the one reader of the game's log: the log tailer follows it (start(), woken by file events), and what waits for
 * the game's answer to a command reads through it on its own clock (positionAtEnd() before the command, then poll():
 * the backup's "Saved the game", the idle monitor's tick rate).
 */
export interface FollowPosition {
  dev: number;
  ino: number;
  /** Byte offset of the first line not yet delivered. */
  offset: number;
  /** Lines delivered from this file so far. */
  line: number;
  /**
   * The file's first bytes (up to 64, and up to its first zero byte), base64: tells a rewritten file from the same one
   * grown.
   */
  head: string;
  /** The bytes at `offset` are the rest of a line that was cut (longer than the cap): skipped up to their newline. */
  cut?: boolean | undefined;
  /**
   * The file ends in a run of zeros (a hole) that starts here: what the game writes at its own position lands there,
   * and is read from there.
   */
  hole?: number | undefined;
}

export type NewFileReason = "opened" | "resumed" | "rotated" | "truncated";

export interface LineInfo {
  /** The line was longer than the cap: this is its beginning only, the rest was skipped. */
  cut: boolean;
}

/**
 * The longest line delivered whole, in bytes. The game's own lines are short (chat is at most 256 characters, a death
 * message or a join well under 1 KiB); the longest real lines are exception messages and mod lists of a few KiB. 64 KiB
 * keeps every one of them whole while a line of any length (a plugin's runaway output, /dev/zero, an attacker) costs
 * at most that much memory.
 */
export const MAX_LINE_BYTES = 64 * 1024;

export interface FollowerOptions {
  /** The directory the file is found in (the server volume); held open by the caller. */
  dir: VolumeDir;
  /** The file, relative to `dir` (`logs/latest.log`); no component of it is followed if it is a link. */
  file: string;
  /** Each complete line, without its newline; a line longer than the cap is its first `maxLineBytes` bytes, `cut`. */
  onLine(line: string, info: LineInfo): void;
  /** A new file (or the same one from its beginning) starts; `line` is where counting goes on from. */
  onFile?(reason: NewFileReason, line: number): void;
  /** After each read that reached the end of the file: a good time to flush and to save the position. */
  onCaughtUp?(position: FollowPosition): void;
  /**
   * What is there is not a regular file reached without links (an `UnsafePathError`), or it cannot be read: nothing
   * is read from it. Each distinct problem is said once (not at every poll) until a regular file is followed again.
   */
  onProblem?(error: JobError): void;
  /** After a problem, a regular file is there again and is followed. */
  onFollowedAgain?(): void;
  /**
   * A run of zero bytes (a hole, or zeros written) of at least REPORT_BYTES was skipped, with whatever a jump over it
   * passed: said once, when a byte after it is read or the end of the file is reached.
   */
  onSkipped?(bytes: number): void;
  /** Where a previous run stopped; used only when it is still the same file. */
  resumeFrom?: FollowPosition | undefined;
  /** Fallback poll interval; default 1000 ms. */
  pollMs?: number;
  /** The line cap; default MAX_LINE_BYTES. */
  maxLineBytes?: number;
  /** The most read in one turn (a drain, a poll); default TURN_BYTES. */
  turnBytes?: number;
}

const HEAD_BYTES = 64;
const CHUNK = 256 * 1024;
/** Read at most this much in one turn of the event loop; a huge file goes on in the next (a stop is never held up). */
const TURN_BYTES = 8 * 1024 * 1024;
/** A run of zeros this long (at least) with more than JUMP_BYTES of the file after it is a hole, jumped over. */
const HOLE_BYTES = 64 * 1024;
/** See HOLE_BYTES: a hole smaller than this is read (a compare per chunk), a larger one jumped over. */
const JUMP_BYTES = 64 * 1024 * 1024;
/** How much of the file's end a jump over a hole leaves to read: what the game wrote after it, and more. */
const TAIL_BYTES = TURN_BYTES;
/** A run of zeros at least this long is said (`onSkipped`); shorter ones only end the line they are in. */
const REPORT_BYTES = 4096;
/** Zero bytes to compare a page of a chunk against (read only). */
const ZERO_PAGE = Buffer.alloc(4096);
const WHOLE: LineInfo = Object.freeze({ cut: false });
const CUT: LineInfo = Object.freeze({ cut: true });

export class LogFollower {
  readonly #o: FollowerOptions;
  readonly #max: number;
  readonly #turn: number;
  #fd: number | undefined;
  #dev = 0;
  #ino = 0;
  #pos = 0;
  #line = 0;
  #head: Buffer = Buffer.alloc(0);
  /** The bytes of a line not yet complete, at most the cap. */
  readonly #pending: Buffer;
  #pendingLength = 0;
  /** In the rest of a cut line: bytes are dropped up to the next newline. */
  #skipping = false;
  /** Zero bytes skipped in the run being read (with what a jump over it passed), not yet said. */
  #zeros = 0;
  /** Where the run of zeros the file ends in starts (see FollowPosition.hole); undefined once a byte after it is read. */
  #hole: number | undefined;
  /** The offset up to which zeros have been counted: read again after going back to a hole, they are not said again. */
  #zerosTo = 0;
  /** Gone back to a hole the game wrote into: where reading had got to, taken up again at the next run of zeros. */
  #back: number | undefined;
  #busy = false;
  #again = false;
  #stopped = false;
  #watcher: FSWatcher | undefined;
  #timer: NodeJS.Timeout | undefined;
  #more: NodeJS.Immediate | undefined;
  #resume: FollowPosition | undefined;
  /** The problems said since a regular file was last followed (each is said once). */
  readonly #problems = new Set<string>();
  readonly #buffer: Buffer;

  constructor(options: FollowerOptions) {
    this.#o = options;
    this.#resume = options.resumeFrom;
    this.#max = Math.max(1, options.maxLineBytes ?? MAX_LINE_BYTES);
    this.#pending = Buffer.allocUnsafe(this.#max);
    this.#turn = Math.max(1, options.turnBytes ?? TURN_BYTES);
    this.#buffer = Buffer.allocUnsafe(Math.min(CHUNK, this.#turn));
  }

  start(): void {
    this.#stopped = false;
    this.#watch();
    this.#timer = setInterval(() => {
      if (!this.#watcher) this.#watch();
      this.drain();
    }, this.#o.pollMs ?? 1000);
    this.drain();
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
    if (this.#more) clearImmediate(this.#more);
    this.#more = undefined;
    this.#watcher?.close();
    this.#watcher = undefined;
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }

  get position(): FollowPosition {
    return {
      dev: this.#dev,
      ino: this.#ino,
      offset: this.#pos - this.#pendingLength,
      line: this.#line,
      head: this.#head.toString("base64"),
      cut: this.#skipping,
      ...(this.#hole === undefined ? {} : { hole: this.#hole }),
    };
  }

  /** Where the file is, for messages. */
  get display(): string {
    return this.#o.dir.display(this.#o.file);
  }

  /**
   * A wake-up only: inotify on the file's directory, reached without links and watched through a descriptor (so the
   * watch is on that directory itself). What is read is decided by #step, never by an event.
   */
  #watch(): void {
    const parts = this.#o.file.split("/").filter((part) => part !== "" && part !== ".");
    const name = parts.pop();
    let parent: VolumeDir | undefined;
    try {
      parent = parts.length ? this.#o.dir.tryDir(parts.join("/")) : this.#o.dir;
      if (!parent) return; // not there yet: the poll tries again
      this.#watcher = watch(parent.self, { persistent: true }, (_event, file) => {
        if (file === null || file === name) this.drain();
      });
      this.#watcher.on("error", () => {
        this.#watcher?.close();
        this.#watcher = undefined;
      });
    } catch {
      this.#watcher = undefined; // a link or something else where the directory should be: the poll tries again
    } finally {
      if (parent && parent !== this.#o.dir) parent.close();
    }
  }

  /**
   * For a reader that looks on its own clock instead of start(): reads what is new now, at most `turnBytes` (the rest
   * at the next call), with no watch, no timer and nothing left to run after it. Never throws: a problem goes to
   * `onProblem`. stop() closes the file.
   */
  poll(): void {
    this.drain();
    if (this.#more) clearImmediate(this.#more);
    this.#more = undefined;
  }

  /**
   * Reads what there is to read now (up to a few MiB; a huge file goes on in the next turns of the event loop). Safe
   * to call at any time; calls made while reading run once after. Never throws: a problem goes to `onProblem`.
   */
  drain(): void {
    if (this.#stopped) return;
    if (this.#busy) {
      this.#again = true;
      return;
    }
    this.#busy = true;
    let done = true;
    try {
      do {
        this.#again = false;
        done = this.#step();
      } while (this.#again && done);
    } catch (error) {
      this.#note(this.#failure(error));
    } finally {
      this.#busy = false;
    }
    if (!done && !this.#stopped && !this.#more) {
      this.#more = setImmediate(() => {
        this.#more = undefined;
        this.drain();
      });
    }
  }

  /** One look at the file and a read of what is new; false when there is more to read than one turn takes. */
  #step(): boolean {
    let current: Stats | undefined;
    let problem: JobError | undefined;
    try {
      current = this.#o.dir.lstat(this.#o.file);
    } catch (error) {
      if (!(error instanceof UnsafePathError)) throw error;
      problem = error;
    }
    if (current && !current.isFile()) {
      problem = this.#notRegular(current);
      current = undefined;
    }
    if (this.#fd !== undefined && (!current || current.ino !== this.#ino || current.dev !== this.#dev)) {
      // Renamed away, deleted or replaced: what was written to it before that is still ours to read (through the
      // descriptor, so it is the regular file that was opened), from its beginning if it was truncated (or rewritten)
      // before it went.
      this.#restartIfTruncated(fstatSync(this.#fd).size);
      if (!this.#readToEnd()) return false;
      if (this.#pendingLength && !this.#skipping) {
        this.#deliver(this.#pending.toString("utf8", 0, this.#pendingLength), WHOLE);
      }
      this.#pendingLength = 0;
      this.#skipping = false;
      closeSync(this.#fd);
      this.#fd = undefined;
      if (current) problem = this.#open("rotated");
    } else if (this.#fd === undefined && current) {
      problem = this.#open(this.#resume ? "resumed" : "opened");
    } else if (this.#fd !== undefined && current) {
      this.#restartIfTruncated(current.size);
      this.#backToHole();
    }
    this.#note(problem);
    if (this.#fd === undefined) return true;
    if (!this.#readToEnd()) return false;
    this.#o.onCaughtUp?.(this.position);
    return true;
  }

  #notRegular(stat: Stats): UnsafePathError {
    return new UnsafePathError(`${this.display} is ${kindOf(stat)}, not a regular file`, {
      hint: stat.isSymbolicLink()
        ? "links inside the server volume are never followed; remove it"
        : "something in the server volume replaced it; remove it (the game writes it again)",
    });
  }

  /** Anything unexpected while reading (EACCES, EIO, ...) as one line. */
  #failure(error: unknown): JobError {
    if (error instanceof JobError) return error;
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    return new JobError(
      code ? `cannot read ${this.display} (${code})` : `cannot follow ${this.display}: ${(error as Error).message}`,
      { cause: error },
    );
  }

  /** Says each distinct problem once until a regular file is followed again, and says when that happens. */
  #note(problem: JobError | undefined): void {
    try {
      if (problem) {
        if (this.#problems.has(problem.message)) return;
        this.#problems.add(problem.message);
        this.#o.onProblem?.(problem);
      } else if (this.#problems.size && this.#fd !== undefined) {
        this.#problems.clear();
        this.#o.onFollowedAgain?.();
      }
    } catch {
      // A failing listener must not stop the following.
    }
  }

  /** A file now shorter than what was read, or whose first bytes changed, was truncated: read it from its beginning. */
  #restartIfTruncated(size: number): void {
    if (size >= this.#pos && this.#sameHead()) return;
    this.#pendingLength = 0;
    this.#skipping = false;
    this.#zeros = 0;
    this.#forgetHole();
    this.#pos = 0;
    this.#line = 0;
    this.#head = Buffer.alloc(0);
    this.#o.onFile?.("truncated", 0);
  }

  /** Opens the file (a regular file only, reached without links, never blocking); its problem if it is not one. */
  #open(reason: NewFileReason): UnsafePathError | undefined {
    let opened: { fd: number; stat: Stats } | undefined;
    try {
      opened = this.#o.dir.tryOpenFile(this.#o.file);
    } catch (error) {
      if (error instanceof UnsafePathError) return error;
      throw error;
    }
    if (!opened) return undefined;
    const { fd, stat } = opened;
    this.#fd = fd;
    this.#dev = stat.dev;
    this.#ino = stat.ino;
    this.#pendingLength = 0;
    this.#skipping = false;
    this.#zeros = 0;
    this.#forgetHole();
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
        this.#skipping = resume.cut === true;
        const hole = resume.hole;
        if (typeof hole === "number" && Number.isSafeInteger(hole) && hole >= 0 && hole <= resume.offset) {
          this.#hole = hole;
          this.#zerosTo = resume.offset;
        }
        this.#o.onFile?.("resumed", this.#line);
        return undefined;
      }
    }
    // A different file than the one a previous run stopped in: it was rotated meanwhile; read it from its beginning.
    this.#head = Buffer.alloc(0);
    this.#o.onFile?.(reason === "resumed" ? "rotated" : reason, 0);
    return undefined;
  }

  #readHead(length: number): Buffer {
    if (this.#fd === undefined || length === 0) return Buffer.alloc(0);
    const head = Buffer.alloc(length);
    const read = readSync(this.#fd, head, 0, length, 0);
    return head.subarray(0, read);
  }

  #forgetHole(): void {
    this.#hole = undefined;
    this.#zerosTo = 0;
    this.#back = undefined;
  }

  /**
   * The file ends in a hole, and its first byte is no longer zero: the game wrote there at its own position (see the
   * class comment). Reading goes back there; #back is where it had got to.
   */
  #backToHole(): void {
    const hole = this.#hole;
    if (hole === undefined || hole >= this.#pos || this.#fd === undefined) return;
    const first = Buffer.alloc(1);
    if (readSync(this.#fd, first, 0, 1, hole) !== 1 || first[0] === 0) return;
    this.#endZeros();
    this.#back = this.#pos;
    this.#pos = hole;
    this.#hole = undefined;
    this.#pendingLength = 0;
    this.#skipping = false;
  }

  #sameHead(): boolean {
    if (this.#head.length === 0) return true;
    return this.#readHead(this.#head.length).equals(this.#head);
  }

  /** Reads on to the end of the file, or for one turn's worth of bytes (then false). */
  #readToEnd(): boolean {
    const fd = this.#fd as number;
    for (let budget = this.#turn; budget > 0; ) {
      if (this.#stopped) return true;
      const want = Math.min(this.#buffer.length, budget);
      const read = readSync(fd, this.#buffer, 0, want, this.#pos);
      if (read === 0) {
        this.#endZeros();
        return true;
      }
      budget -= read;
      const chunk = this.#buffer.subarray(0, read);
      if (this.#head.length === this.#pos && this.#pos < HEAD_BYTES) {
        // Up to the first zero: a hole's zeros are not the file's content yet (the game may write there).
        const part = chunk.subarray(0, HEAD_BYTES - this.#pos);
        const zero = part.indexOf(0);
        this.#head = Buffer.concat([this.#head, zero < 0 ? part : part.subarray(0, zero)]);
      }
      const base = this.#pos;
      this.#pos += read;
      // Lines between runs of zeros; a run reaching the end of a full chunk may be a hole to jump over.
      let start = 0;
      let back = false;
      while (start < read) {
        const zero = chunk.indexOf(0, start);
        if (zero < 0) {
          this.#data();
          this.#consume(chunk.subarray(start));
          break;
        }
        if (zero > start) {
          this.#data();
          this.#consume(chunk.subarray(start, zero));
        }
        const end = zeroRunEnd(chunk, zero);
        this.#zeroRun(base + zero, base + end);
        start = end;
        if (this.#back !== undefined && this.#back > base + zero) {
          // Back in the hole after what the game wrote into it: the rest of it was read before, go on from there.
          this.#pos = this.#back;
          this.#back = undefined;
          back = true;
          break;
        }
      }
      if (this.#back !== undefined && this.#pos >= this.#back) this.#back = undefined;
      if (!back && read === want && chunk[read - 1] === 0 && this.#zeros >= HOLE_BYTES) this.#jumpOverHole(fd);
    }
    return false;
  }

  /**
   * Zero bytes from `from` to `to`: the line before them ends there (a line of its own), and the rest of a cut line is
   * not skipped. Only those not counted before are counted.
   */
  #zeroRun(from: number, to: number): void {
    if (this.#pendingLength && !this.#skipping) {
      const pending = this.#pendingLength;
      this.#pendingLength = 0;
      this.#deliver(this.#pending.toString("utf8", 0, pending), WHOLE);
    }
    this.#pendingLength = 0;
    this.#skipping = false;
    this.#hole ??= from;
    this.#countZeros(from, to);
  }

  #countZeros(from: number, to: number): void {
    this.#zeros += Math.max(0, to - Math.max(from, this.#zerosTo));
    this.#zerosTo = Math.max(this.#zerosTo, to);
  }

  /** Bytes that are not zeros: the run before them has ended, and the file no longer ends in it. */
  #data(): void {
    this.#endZeros();
    this.#hole = undefined;
  }

  /** A run of zeros has ended (or the end of the file is reached in it): said once if it was long. */
  #endZeros(): void {
    const skipped = this.#zeros;
    if (skipped === 0) return;
    this.#zeros = 0;
    if (skipped < REPORT_BYTES) return;
    try {
      this.#o.onSkipped?.(skipped);
    } catch {
      // A failing listener must not stop the following.
    }
  }

  /**
   * In a run of zeros with more than JUMP_BYTES of the file still after it: a hole (what the game writes comes at its
   * end). Reading it would take minutes at a full core (hours for ext4's 16 TiB), and Node cannot ask where its data
   * starts: the read goes on from the file's last TAIL_BYTES, the bytes jumped over counted with the run. Landing
   * inside a line, the rest of that line is skipped up to its newline (never read as a line of its own).
   */
  #jumpOverHole(fd: number): void {
    const size = fstatSync(fd).size;
    if (size - this.#pos <= JUMP_BYTES) return;
    const target = size - TAIL_BYTES;
    this.#countZeros(this.#pos, target);
    this.#pos = target;
    const before = Buffer.alloc(1);
    const got = readSync(fd, before, 0, 1, target - 1);
    this.#skipping = got === 1 && before[0] !== 0 && before[0] !== 10;
  }

  /**
   * Splits a chunk into lines. Each byte is looked at once and copied at most once (into the pending line, which never
   * grows past the cap): linear in what is read, whatever the line lengths.
   */
  #consume(chunk: Buffer): void {
    const max = this.#max;
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(10, start);
      if (this.#skipping) {
        if (nl < 0) return;
        this.#skipping = false;
        start = nl + 1;
        continue;
      }
      const end = nl < 0 ? chunk.length : nl;
      const room = max - this.#pendingLength;
      if (end - start > room) {
        // Longer than the cap: its first bytes are the line; the rest, up to its newline, is skipped.
        chunk.copy(this.#pending, this.#pendingLength, start, start + room);
        this.#pendingLength = 0;
        this.#skipping = nl < 0;
        this.#deliver(this.#pending.toString("utf8", 0, max), CUT);
        if (nl < 0) return;
        start = nl + 1;
        continue;
      }
      if (nl < 0) {
        chunk.copy(this.#pending, this.#pendingLength, start, end);
        this.#pendingLength += end - start;
        return;
      }
      if (this.#pendingLength) {
        chunk.copy(this.#pending, this.#pendingLength, start, end);
        const length = this.#pendingLength + end - start;
        this.#pendingLength = 0;
        this.#deliver(this.#pending.toString("utf8", 0, length), WHOLE);
      } else {
        this.#deliver(chunk.toString("utf8", start, end), WHOLE);
      }
      start = nl + 1;
    }
  }

  #deliver(line: string, info: LineInfo): void {
    this.#line++;
    this.#o.onLine(line, info);
  }
}

/**
 * Where `file` ends now, as a position to follow it from (resumeFrom): only what is written after this is read, and
 * a file that replaces it from its beginning. Undefined when there is none; what is there instead of a regular file
 * reached without links is refused as `VolumeDir.tryOpenFile` refuses it (never opened, never waited on).
 */
export function positionAtEnd(dir: VolumeDir, file: string): FollowPosition | undefined {
  const opened = dir.tryOpenFile(file);
  if (!opened) return undefined;
  try {
    const { dev, ino, size } = opened.stat;
    // The head as the follower keeps it: the first bytes, up to the first zero.
    const first = readRange(opened.fd, 0, Math.min(HEAD_BYTES, size));
    const zero = first.indexOf(0);
    const head = zero < 0 ? first : first.subarray(0, zero);
    return { dev, ino, offset: size, line: 0, head: head.toString("base64") };
  } finally {
    closeSync(opened.fd);
  }
}

/** Where the run of zeros starting at `from` ends in `chunk` (its length if it runs to the end). */
function zeroRunEnd(chunk: Buffer, from: number): number {
  const step = ZERO_PAGE.length;
  let end = from;
  // Compared a page at a time (memcmp), then byte by byte in the last one.
  while (end + step <= chunk.length && chunk.subarray(end, end + step).equals(ZERO_PAGE)) end += step;
  while (end < chunk.length && chunk[end] === 0) end++;
  return end;
}
