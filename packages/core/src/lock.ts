import { closeSync, linkSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { type Clock, systemClock } from "./clock.ts";
import { BusyError } from "./errors.ts";
import { isErrno } from "./fs.ts";

/**
 * An exclusive lock between processes on this machine: a file created with O_EXCL that names its holder (pid and the
 * process start time, so a reused pid is not mistaken for the holder). A lock whose holder is gone (kill -9, a crash,
 * a reboot) is stale and is taken over at once, under a short "breaker" lock so that two newcomers can never both
 * break it. Held locks are released on exit, even on an uncaught error.
 *
 * Why not proper-lockfile: it judges staleness by the age of an mtime it refreshes on a timer, so after kill -9 the
 * next run must wait out the stale period, and a holder paused longer than that (SIGSTOP, a suspended VM) loses its
 * lock while still running. Here liveness is exact.
 */
interface LockHolder {
  pid: number;
  /** Process start time in clock ticks since boot (/proc/<pid>/stat field 22); "" where unknown. */
  start: string;
  tool: string;
  host: string;
  /** ISO time the lock was taken. */
  since: string;
}

export interface Lock {
  readonly path: string;
  readonly holder: LockHolder;
  release(): void;
}

interface LockOptions {
  /** Who takes it; shown to whoever finds it busy. */
  tool: string;
  /** How long to wait for a held lock; 0 (default) fails at once with BusyError. */
  waitMs?: number;
  /** How often to look again while waiting. */
  pollMs?: number;
  /** What the busy message says is running, e.g. "a backup". */
  what?: string;
  /** The command's option that waits for the lock (`--wait`), if it has one: the busy hint names it. */
  waitOption?: string;
  clock?: Clock;
  signal?: AbortSignal;
}

const held = new Set<Lock>();
let exitHookInstalled = false;

export function processStartTime(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? "";
  } catch {
    return "";
  }
}

export function isHolderAlive(holder: LockHolder): boolean {
  if (holder.host !== hostname()) return true; // cannot tell: be safe
  if (!Number.isInteger(holder.pid) || holder.pid <= 0) return false;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if (isErrno(error, "ESRCH")) return false;
  }
  const start = processStartTime(holder.pid);
  return holder.start === "" || start === "" || start === holder.start;
}

export function readLockHolder(path: string): LockHolder | undefined {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as LockHolder;
  } catch (error) {
    if (isErrno(error, "ENOENT")) return undefined;
    // Garbage (the file is always written whole, so this is not a holder mid-write): treat as stale.
    return { pid: -1, start: "", tool: "unknown", host: hostname(), since: "" };
  }
}

/** Creates the lock file with its content in one step (write a temporary file, then link it into place). */
function tryCreate(path: string, holder: LockHolder): boolean {
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  const fd = openSync(tmp, "wx", 0o644);
  try {
    writeSync(fd, JSON.stringify(holder));
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, path);
    return true;
  } catch (error) {
    if (isErrno(error, "EEXIST")) return false;
    throw error;
  } finally {
    unlinkSync(tmp);
  }
}

const BREAKER_STALE_MS = 10_000;

/** Removes `path` if it still names the same dead holder, under the breaker lock. */
function breakStale(path: string, stale: LockHolder): void {
  const breaker = `${path}.break`;
  try {
    if (Date.now() - statSync(breaker).mtimeMs > BREAKER_STALE_MS) unlinkSync(breaker);
  } catch {
    // no breaker, or someone else removed it
  }
  if (!tryCreate(breaker, { ...stale, pid: process.pid })) return; // someone else is breaking it
  try {
    const now = readLockHolder(path);
    if (now && now.pid === stale.pid && now.start === stale.start && now.since === stale.since) unlinkSync(path);
  } catch {
    // gone already
  } finally {
    unlinkSync(breaker);
  }
}

function busyMessage(what: string, holder: LockHolder): string {
  const since = holder.since ? `, since ${holder.since}` : "";
  return `${what} is already running (${holder.tool}, pid ${holder.pid}${since})`;
}

export async function acquireLock(path: string, options: LockOptions): Promise<Lock> {
  const { tool, waitMs = 0, pollMs = 250, what = "another run", clock = systemClock, signal, waitOption } = options;
  mkdirSync(dirname(path), { recursive: true });
  const deadline = clock.now() + waitMs;
  for (;;) {
    const holder: LockHolder = {
      pid: process.pid,
      start: processStartTime(process.pid),
      tool,
      host: hostname(),
      since: new Date(clock.now()).toISOString(),
    };
    if (tryCreate(path, holder)) return register(path, holder);
    const current = readLockHolder(path);
    if (current && !isHolderAlive(current)) {
      breakStale(path, current);
      continue;
    }
    if (clock.now() >= deadline) {
      throw new BusyError(busyMessage(what, current ?? holder), {
        where: path,
        hint:
          waitMs > 0 || !waitOption
            ? "it is still running; try again later"
            : `wait for it to finish, or pass ${waitOption}`,
      });
    }
    await clock.sleep(Math.min(pollMs, Math.max(1, deadline - clock.now())), signal);
  }
}

function register(path: string, holder: LockHolder): Lock {
  const lock: Lock = {
    path,
    holder,
    release() {
      if (!held.delete(lock)) return;
      const now = readLockHolder(path);
      if (now && now.pid === holder.pid && now.since === holder.since) {
        try {
          unlinkSync(path);
        } catch {
          // already gone
        }
      }
    },
  };
  held.add(lock);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", () => {
      for (const l of [...held]) l.release();
    });
  }
  return lock;
}

interface BackupPauseOptions {
  tool: string;
  /** How long to wait for a running backup (bounded). */
  waitMs: number;
  clock?: Clock;
  /** Called once when a backup runs and the wait begins. */
  onWait?: (busy: BusyError) => void;
}

/**
 * Takes the backup lock so that no backup starts while the server is taken down (a restart, a jar swap). When a
 * backup runs, waits for it, at most `waitMs`; then rejects with the BusyError that names it.
 */
export async function pauseBackups(lockFile: string, options: BackupPauseOptions): Promise<Lock> {
  const { tool, clock } = options;
  try {
    return await acquireLock(lockFile, { tool, what: "a backup", clock });
  } catch (busy) {
    if (!(busy instanceof BusyError)) throw busy;
    options.onWait?.(busy);
    return acquireLock(lockFile, { tool, what: "a backup", waitMs: options.waitMs, pollMs: 2000, clock });
  }
}
