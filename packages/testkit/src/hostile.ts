import { execFile, spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * The game's side of the server volume, as an attacker: a process of the container's user (988, as Wings runs it)
 * that does what any plugin or mod in the game could do to the files it owns. Tests of the root tools run it at the
 * moment that matters (after the stand-in saw a stop signal, while a wrapper holds restic), never by luck.
 */
const GAME_UID = 988;
const GAME_GID = 988;

/**
 * Makes `volume` the game's, as Wings does (owned by 988:988), and lets the game's user reach it: its ancestors up to
 * `root` get the search bit for others (mkdtemp makes them 700). Nothing else in them is opened up.
 */
export function giveToGame(volume: string, root: string): void {
  chownSync(volume, GAME_UID, GAME_GID);
  for (let dir = dirname(volume); dir.startsWith(root); dir = dirname(dir)) {
    chmodSync(dir, statSync(dir).mode | 0o011);
    if (dir === root) break;
  }
}

export interface GameUserRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a Python script as the game's user (uid and gid 988, no supplementary groups). Python, not Node: the toolchain
 * Node lives in the clone, which the game's user cannot enter when the clone sits in a mode-700 directory.
 */
function runAsGameUser(script: string, args: string[] = [], timeoutMs = 30_000): Promise<GameUserRun> {
  return new Promise((resolve) => {
    execFile(
      "/usr/bin/python3",
      ["-c", script, ...args],
      { uid: GAME_UID, gid: GAME_GID, timeout: timeoutMs, cwd: "/" },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout, stderr: stderr || (error ? error.message : "") });
      },
    );
  });
}

export interface Swap {
  /** The entry that was swapped, or undefined when none matched. */
  name: string | undefined;
  /** Whether the game's user could list what was inside it (a private directory must say false). */
  entered: boolean;
  /** What went wrong, if the swap could not be made. */
  error?: string;
}

const SWAP = `
import errno, json, os, sys
dir, prefix, target = sys.argv[1:4]
name = next((n for n in sorted(os.listdir(dir)) if n.startswith(prefix)), None)
out = {"entered": False}
if name is not None:
    out["name"] = name
    try:
        os.listdir(os.path.join(dir, name))
        out["entered"] = True
    except OSError:
        pass
    try:
        os.rename(os.path.join(dir, name), os.path.join(dir, name + ".moved-by-game"))
        os.symlink(target, os.path.join(dir, name))
    except OSError as e:
        out["error"] = errno.errorcode.get(e.errno, str(e))
print(json.dumps(out))
`;

/**
 * As the game's user: finds the entry of `dir` whose name starts with `prefix`, tries to look inside it, moves it to
 * `<name>.moved-by-game` and puts a symbolic link to `target` (a root-only place outside the volume) under its name.
 */
export async function swapForLink(dir: string, prefix: string, target: string): Promise<Swap> {
  const run = await runAsGameUser(SWAP, [dir, prefix, target]);
  if (run.code !== 0) throw new Error(`the game's user could not run: ${run.stderr.trim()}`);
  return JSON.parse(run.stdout) as Swap;
}

/** Resolves once `condition()` holds; checks every 20 ms, fails after `timeoutMs` naming `what`. */
export async function waitUntil(condition: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * As the game's user, with Python (Node has no fcntl): takes a write lease on `leased` (a file the game owns), so the
 * first process that opens it (restic, walking the world) is held by the kernel inside open(); on that signal moves
 * `<volume>/world` aside and puts a link to `target` in its place, lets the reader go, and puts everything back once
 * `done` exists. `ready` is written when the lease is taken, `swapped` when the link is in place.
 */
const LEASE_SWAP = `
import fcntl, os, signal, sys, time
volume, leased, target, ready, swapped, done = sys.argv[1:7]
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGIO})
fd = os.open(leased, os.O_RDONLY)
fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
open(ready, "w").close()
signal.sigwait({signal.SIGIO})
os.rename(os.path.join(volume, "world"), os.path.join(volume, "world.real"))
os.symlink(target, os.path.join(volume, "world"))
open(swapped, "w").close()
fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
os.close(fd)
deadline = time.time() + 120
while not os.path.exists(done) and time.time() < deadline: time.sleep(0.05)
os.unlink(os.path.join(volume, "world"))
os.rename(os.path.join(volume, "world.real"), os.path.join(volume, "world"))
`;

export interface LeaseSwap {
  /** Resolves once the lease is taken: start the reader then. */
  ready: Promise<void>;
  /** Whether the link was put in place (a reader opened the leased file). */
  swapped(): boolean;
  /** Puts the world back and waits for the attacker to end. */
  finish(): Promise<void>;
}

export function leaseSwapWorld(volume: string, leased: string, target: string, flags: string): LeaseSwap {
  const [ready, swapped, done] = ["ready", "swapped", "done"].map((name) => join(flags, name)) as [
    string,
    string,
    string,
  ];
  const child = spawn("/usr/bin/python3", ["-c", LEASE_SWAP, volume, leased, target, ready, swapped, done], {
    uid: GAME_UID,
    gid: GAME_GID,
    stdio: ["ignore", "ignore", "pipe"],
    cwd: "/",
  });
  let stderr = "";
  child.stderr?.on("data", (chunk) => (stderr += chunk));
  const ended = new Promise<void>((resolve) => child.on("close", () => resolve()));
  return {
    ready: Promise.race([
      waitUntil(() => existsSync(ready), "the lease on the world file", 30_000),
      ended.then(() => {
        throw new Error(`the game's user could not take the lease: ${stderr.trim()}`);
      }),
    ]),
    swapped: () => existsSync(swapped),
    async finish() {
      writeFileSync(done, "");
      await ended;
    },
  };
}

/**
 * Nobody writes to `fifo`: a reader that opened it blocking would wait forever, and, the open being synchronous, so
 * would the test's event loop. This helper (its own process) frees such a reader after `afterMs` and records that it
 * had to: the test fails on that record, not on how long it took. `end()` stops the helper and says whether it freed
 * one; call it at the end of the test (also when it fails: in an afterEach).
 */
export function fifoWitness(fifo: string, afterMs = 60_000): { end(): Promise<boolean> } {
  // SIGTERM is handled on the helper's event loop, so it never cuts in between freeing a reader and saying so.
  const script = `process.on("SIGTERM", () => process.exit(0)); setTimeout(() => { const fs = require("node:fs"); try { fs.closeSync(fs.openSync(${JSON.stringify(fifo)}, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK)); process.stdout.write("freed"); } catch {} }, ${afterMs});`;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "ignore"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  return {
    async end() {
      child.kill("SIGTERM");
      await closed;
      return out === "freed";
    },
  };
}
