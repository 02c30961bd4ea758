import { JobError } from "@mcops/core/errors";
import type { Runner, RunResult } from "@mcops/core/runner";
import type { VolumeDir } from "@mcops/core/volume";
import type { z } from "zod";
import { isolated } from "./isolate.ts";
import {
  BackupErrorSchema,
  BackupStatusSchema,
  BackupSummarySchema,
  ExitErrorSchema,
  jsonLine,
  LsLineSchema,
  MessageTypeSchema,
  RestoreErrorSchema,
  readJsonLine,
  type SnapshotSchema,
  SnapshotsSchema,
  StatsSchema,
} from "./restic-json.ts";
import {
  checkFloor,
  featuresOf,
  parseResticVersion,
  type ResticFeatures,
  type ResticVersion,
  shortId,
} from "./restic-version.ts";

/**
 * restic as the backup tool drives it: always with --json where restic has it, each JSON output read through its
 * schema (restic-json.ts), the repository and its password file passed through the environment (never argv), and its
 * failures turned into one clear reason with restic's own words. Works with every restic from RESTIC_FLOOR (0.11.0,
 * Debian 11) to the newest (restic-version.ts says what each version changes): up to 0.16 every fatal error exits 1,
 * so the reason is read from stderr; newer versions also say it with exit codes 10 (no repository), 11 (locked) and
 * 12 (wrong password). Exit 3 (some files could not be read; the snapshot was still made) is a warning.
 */
export interface ResticEnv {
  RESTIC_REPOSITORY: string;
  RESTIC_PASSWORD_FILE: string;
}

export interface BackupSummary {
  snapshotId: string;
  dataAdded: number;
  /** Files restic could not read (exit 3); the snapshot was made without them. */
  unreadable: string[];
}

export interface Progress {
  percent: number;
  bytesDone: number;
  totalBytes: number;
  secondsRemaining: number | undefined;
}

/** A snapshot as `snapshots --json` lists it (restic-json.ts's SnapshotSchema). */
export type Snapshot = z.infer<typeof SnapshotSchema>;

/** One entry of a snapshot, as `restic ls --json` lists it. */
export interface SnapshotNode {
  /** Its absolute path as backed up. */
  path: string;
  type: "file" | "dir" | "symlink" | string;
  size?: number;
}

export type ResticFailure =
  | "no-repository"
  | "wrong-password"
  | "locked"
  | "not-writable"
  | "remote"
  | "no-password"
  | "failed"
  | "interrupted";

export class ResticError extends JobError {
  readonly kind: ResticFailure;
  constructor(kind: ResticFailure, message: string, hint: string, where?: string) {
    super(message, { hint, where });
    this.kind = kind;
  }
}

export interface RetentionPolicy {
  keepLast: number;
  keepDaily: number;
  keepWeekly: number;
}

/**
 * A line of restic's stderr as words: from 0.17 a command run with --json says its fatal error as a JSON message
 * (`{"message_type":"exit_error","code":12,"message":"Fatal: wrong password or no key found"}`).
 */
function asWords(line: string): string {
  const exit = readJsonLine(ExitErrorSchema, line);
  return exit ? exit.message.trim() : line.trim();
}

/** The last lines of restic's stderr that say something (not rclone's notices), for messages. */
function lastWords(stderr: string): string {
  const lines = stderr
    .split("\n")
    .map(asWords)
    .filter((l) => l && !/^rclone: .* NOTICE: /.test(l) && !l.startsWith("reading repository password"));
  // restic says one Fatal line, its last; an earlier one can only be a name in a restore warning (see ownWords).
  const fatal = lines.findLast((l) => l.startsWith("Fatal: "));
  return (fatal ?? lines.at(-1) ?? "no output").replace(/^Fatal: /, "");
}

/** How much of restic's first error a message quotes. */
const QUOTED_ERROR_CHARS = 300;

/**
 * restic's first restore warning (`ignoring error for <path>: <reason>`, up to 0.16 and without --json), quoted: the
 * path is the game's and may hold anything, so it is shown as a JSON string (escaped, one line, bounded), never as
 * restic's own words. What follows a newline in the name is not part of the line, so it cannot be quoted.
 */
function firstWarning(stderr: string): string | undefined {
  const line = stderr.split("\n").find((l) => RESTORE_WARNING.test(l));
  return line === undefined ? undefined : JSON.stringify(line.slice(0, QUOTED_ERROR_CHARS));
}

/**
 * An error restic reported as JSON (`restore --json`, 0.17 on): its item and its reason, each quoted. The reason names
 * the file again (`open <target>/<item>: file name too long`): the game's name, raw, in restic's words.
 */
function describeReported(error: { item: string; message: string }): string {
  const quoted = (text: string) => JSON.stringify(text.slice(0, QUOTED_ERROR_CHARS));
  return `${quoted(error.item)}: ${quoted(error.message)}`;
}

/**
 * restic's (or rclone's) own line when it could not write the repository because the file system is read-only, as
 * `open <file>: read-only file system`. restic retries such a write for about 90 s and then says only "unable to create
 * lock in backend"; rclone's reason is in its ERROR lines.
 */
const READ_ONLY =
  /^(?:Save\(<[^>]*>\) returned error|rclone: .*? ERROR : .*?Post request \w+ error).*?(open \S+: read-only file system)\s*$/;

/**
 * restic restore says each file it could not write as `ignoring error for <path>: <reason>`, the path as the snapshot
 * holds it, raw: a name the game chose, which may hold a newline followed by any text, so that a line of its own reads
 * like restic's ("Save(<lock/…>) returned error …: open …: read-only file system", "wrong password or no key found").
 * Whatever follows the first such line is not taken as restic's own word. (backup's messages are JSON, names escaped.)
 */
const RESTORE_WARNING = /^ignoring error for /m;

/**
 * stderr up to the first restore warning, less the errors it reported as JSON (0.17 on, each naming a file of the
 * game's in its `item`): the lines restic itself wrote.
 */
function ownWords(stderr: string): string {
  const at = stderr.search(RESTORE_WARNING);
  const own = at < 0 ? stderr : stderr.slice(0, at);
  return own
    .split("\n")
    .filter((line) => readJsonLine(MessageTypeSchema, line)?.message_type !== "error")
    .join("\n");
}

/**
 * restic 0.17 and newer retry a repository they cannot open for up to 15 minutes (`Stat(<config/>) returned error,
 * retrying after 17.5s: <reason>`), where older versions stopped at once with the reason: the tools stop at the first
 * such line, as before, rather than hold a backup (and the game's autosave) for a quarter of an hour. Retries of later
 * requests, once the repository is open, are left to restic.
 */
const UNREACHABLE = /^Stat\(<config\/>\) returned error, retrying after [\d.]+m?s: (.*)$/;

function notWritable(stderr: string): string | undefined {
  for (const line of stderr.split("\n")) {
    const match = READ_ONLY.exec(line);
    if (match) return match[1];
  }
  return undefined;
}

function notWritableError(reason: string, repository: string): ResticError {
  return new ResticError(
    "not-writable",
    `restic cannot write the repository: ${reason}`,
    "a repository on this machine's disk must be writable where the backup runs: under idle-monitor.service, run install.sh again once RESTIC_REPOSITORY is set (it allows the repository's folder); otherwise remount it read-write",
    repository,
  );
}

function describeErrno(errno: number | undefined): string {
  if (errno === 13) return "permission denied";
  if (errno === 2) return "no such file";
  return errno === undefined ? "error" : `errno ${errno}`;
}

/**
 * The remote name of an `rclone:<remote>:<path>` repository, or undefined (not rclone, or an on-the-fly `:backend:`
 * remote that needs no config section).
 */
export function rcloneRemoteName(repository: string): string | undefined {
  const name = /^rclone:([^:]+):/.exec(repository)?.[1];
  return name && !name.startsWith(":") ? name : undefined;
}

export function classifyFailure(
  code: number | null,
  signal: string | null,
  output: string,
  repository: string,
  /** The backup log, where restic's whole output is. */
  logFile: string,
  /** Whether `rclone listremotes` lists the repository's remote; restic's own words race with rclone's. */
  remoteConfigured?: boolean,
  /** The first error restic reported as JSON (restore --json), when it did. */
  reported?: { item: string; message: string },
): ResticError {
  const said = lastWords(output);
  // Only restic's own lines are matched below (a restore warning names the game's files).
  const stderr = ownWords(output);
  if (signal)
    return new ResticError("interrupted", `restic was stopped by ${signal}`, "run the backup again", repository);
  // restic 0.17 and newer catch SIGINT and SIGTERM and exit 130 ("context canceled").
  if (code === 130) return new ResticError("interrupted", "restic was interrupted", "run the backup again", repository);
  if (code === 12 || /wrong password or no key found/.test(stderr)) {
    return new ResticError(
      "wrong-password",
      "restic says the repository password is wrong",
      "check the file RESTIC_PASSWORD_FILE points to; it must hold the password the repository was created with",
      repository,
    );
  }
  if (/an empty password is not a password/.test(stderr)) {
    return new ResticError(
      "no-password",
      "the repository password file is empty",
      "put the password in RESTIC_PASSWORD_FILE",
      repository,
    );
  }
  if (code === 10 || /unable to open config file|Is there a repository at the following location/.test(stderr)) {
    return new ResticError(
      "no-repository",
      "there is no restic repository at RESTIC_REPOSITORY",
      "create it once with: backup init",
      repository,
    );
  }
  const readOnly = notWritable(stderr);
  if (readOnly) return notWritableError(readOnly, repository);
  if (code === 11 || /repository is already locked|unable to create lock/.test(stderr)) {
    return new ResticError(
      "locked",
      `the repository is locked by another restic process (${said})`,
      "wait for it to finish; a lock left by a crashed run is cleared by the next backup (restic unlock)",
      repository,
    );
  }
  if (
    /unable to open repository at rclone:|error talking HTTP to rclone|didn't find section in config file|exec: "rclone"/.test(
      stderr,
    )
  ) {
    const detail =
      remoteConfigured === false || /didn't find section in config file/.test(stderr)
        ? "the rclone remote is not configured"
        : said;
    return new ResticError(
      "remote",
      `restic cannot reach the repository through rclone: ${detail}`,
      "check the remote with: rclone lsd <remote>: (and rclone config reconnect <remote>: for an expired token)",
      repository,
    );
  }
  // "There were N errors" says only how many: the first of them is the reason.
  const first = reported ? describeReported(reported) : firstWarning(output);
  return new ResticError(
    "failed",
    `restic failed (exit ${code}): ${said}${first ? `; the first: ${first}` : ""}`,
    `see ${logFile} for restic's full output`,
    repository,
  );
}

export interface ResticOptions {
  runner: Runner;
  env: ResticEnv;
  /** The backup log (in MCOPS_LOG_DIR), named in hints: restic's whole output is there. */
  logFile: string;
  /** Called with each stderr line restic writes (for the log). */
  onStderr?: (line: string) => void;
  onSpawn?: (pid: number) => void;
  signal?: AbortSignal;
}

/** Whether `isolated` works here (it needs root's right to make a mount namespace, and Linux 5.10 for nosymfollow). */
export async function isolationProblem(runner: Runner, dir: string): Promise<string | undefined> {
  const result = await runner.run("unshare", isolated(dir, "true", []), {});
  if (result.code === 0) return undefined;
  if (result.code === null && result.signal === null) return "unshare could not be started (util-linux)";
  return result.stderr.trim().split("\n").at(-1) || `exit ${result.code ?? result.signal}`;
}

/** How one restic command is run: which exits are success, where its lines go, whether it reads with no link followed. */
interface Invocation {
  onStdoutLine?: ((line: string) => void) | undefined;
  onStderrLine?: ((line: string) => void) | undefined;
  okCodes?: number[];
  /** Read with no link followed below this directory (a private mount namespace; see `isolated`). */
  isolate?: string | undefined;
  /** The first error restic reported as JSON, for the failure's reason (restore --json). */
  reported?: (() => { item: string; message: string } | undefined) | undefined;
}

/** The directory `restoreInto` has restic write into, inside the directory it is given. */
const RESTORE_INTO = "restored";

export interface BackupRequest {
  tags: string[];
  excludes: string[];
  onProgress?: ((p: Progress) => void) | undefined;
  /** Files larger than this are left out (restic's size syntax, e.g. 4G). */
  maxFileSize?: string | undefined;
  /** Read with no link followed below this directory (a private mount namespace; see `isolated`). */
  isolate?: string | undefined;
}

export class Restic {
  readonly #options: ResticOptions;
  readonly #childEnv: Record<string, string | undefined>;
  #version: Promise<ResticVersion | undefined> | undefined;

  constructor(options: ResticOptions) {
    this.#options = options;
    this.#childEnv = {
      RESTIC_REPOSITORY: options.env.RESTIC_REPOSITORY,
      RESTIC_PASSWORD_FILE: options.env.RESTIC_PASSWORD_FILE,
      RESTIC_PASSWORD: undefined,
      RESTIC_PASSWORD_COMMAND: undefined,
    };
  }

  /**
   * The restic on PATH's version, asked once (`restic version`, a few milliseconds); undefined when it answers nothing
   * readable (restic itself then says what is wrong at its first command). A restic below the floor is refused here,
   * before it is given anything to do (exit 78).
   */
  version(): Promise<ResticVersion | undefined> {
    this.#version ??= this.#options.runner
      .run("restic", ["version"], { env: this.#childEnv, signal: this.#options.signal })
      .then((result) => {
        const version = result.code === 0 ? parseResticVersion(result.stdout) : undefined;
        checkFloor(version);
        return version;
      });
    return this.#version;
  }

  /** What the restic on PATH offers beyond the floor. */
  async features(): Promise<ResticFeatures> {
    return featuresOf(await this.version());
  }

  /** Runs restic; an exit not in `okCodes` becomes a ResticError that says why. */
  async #run(args: string[], invocation: Invocation = {}): Promise<RunResult> {
    await this.version();
    const { runner, env, logFile } = this.#options;
    const { isolate, okCodes = [0], onStdoutLine, onStderrLine = this.#options.onStderr } = invocation;
    const [command, argv] = isolate ? ["unshare", isolated(isolate, "restic", args)] : ["restic", args];
    // A read-only repository is said at the first refused write: restic would retry it for 90 s (with autosave off),
    // and a retry cannot succeed.
    const stop = new AbortController();
    const outer = this.#options.signal;
    const onAbort = () => stop.abort();
    outer?.addEventListener("abort", onAbort, { once: true });
    if (outer?.aborted) stop.abort();
    let readOnly: string | undefined;
    let unreachable: string | undefined;
    let ownLine = true;
    let result: RunResult;
    try {
      result = await runner.run(command, argv, {
        env: this.#childEnv,
        onStdoutLine,
        onStderrLine: (line) => {
          onStderrLine?.(line);
          if (RESTORE_WARNING.test(line)) ownLine = false;
          if (!ownLine || readOnly !== undefined || unreachable !== undefined) return;
          readOnly = notWritable(line);
          unreachable = UNREACHABLE.exec(line)?.[1];
          if (readOnly || unreachable) stop.abort();
        },
        onSpawn: this.#options.onSpawn,
        signal: stop.signal,
      });
    } finally {
      outer?.removeEventListener("abort", onAbort);
    }
    if (readOnly && !outer?.aborted) throw notWritableError(readOnly, env.RESTIC_REPOSITORY);
    if (unreachable && !outer?.aborted) {
      throw new ResticError(
        "remote",
        `restic cannot reach the repository: ${unreachable}`,
        "check that RESTIC_REPOSITORY's address is right and its server is up, then run again",
        env.RESTIC_REPOSITORY,
      );
    }
    if (result.code === null && result.signal === null) {
      throw new ResticError("failed", "restic could not be started", "install it: apt-get install restic");
    }
    if (result.code === 127)
      throw new ResticError("failed", "restic is not installed", "install it: apt-get install restic");
    if (result.code === null || !okCodes.includes(result.code)) {
      const reported = invocation.reported?.();
      const error = classifyFailure(
        result.code,
        result.signal,
        result.stderr,
        env.RESTIC_REPOSITORY,
        logFile,
        undefined,
        reported,
      );
      if (error.kind !== "remote") throw error;
      // restic may stop rclone before rclone says why; ask rclone itself whether the remote exists.
      const configured = await this.#remoteConfigured();
      throw configured === false
        ? classifyFailure(result.code, result.signal, result.stderr, env.RESTIC_REPOSITORY, logFile, false, reported)
        : error;
    }
    return result;
  }

  async #remoteConfigured(): Promise<boolean | undefined> {
    const name = rcloneRemoteName(this.#options.env.RESTIC_REPOSITORY);
    if (!name) return undefined;
    const listed = await this.#options.runner.run("rclone", ["listremotes"], { signal: this.#options.signal });
    if (listed.code !== 0) return undefined;
    return listed.stdout.split("\n").some((line) => line.trim() === `${name}:`);
  }

  /** True when a repository exists and the password opens it. */
  async exists(): Promise<boolean> {
    try {
      await this.#run(["cat", "config"]);
      return true;
    } catch (error) {
      if (error instanceof ResticError && error.kind === "no-repository") return false;
      throw error;
    }
  }

  async init(): Promise<void> {
    await this.#run(["init"]);
  }

  /** Removes locks left by restic processes that no longer run; a live lock is left alone (restic unlock). */
  async unlock(): Promise<void> {
    await this.#run(["unlock"]);
  }

  async backup(paths: string[], request: BackupRequest): Promise<BackupSummary> {
    const args = ["backup", "--json"];
    if (request.maxFileSize) args.push("--exclude-larger-than", request.maxFileSize);
    for (const tag of request.tags) args.push("--tag", tag);
    for (const pattern of request.excludes) args.push("--exclude", pattern);
    args.push("--", ...paths);
    const messages = new BackupMessages(request.onProgress, this.#options.onStderr);
    const result = await this.#run(args, {
      onStdoutLine: (line) => messages.take(line),
      okCodes: [0, 3],
      // JSON messages come on stdout, except that restic 0.14 writes its "error" messages to stderr.
      onStderrLine: (line) => {
        if (!messages.take(line)) this.#options.onStderr?.(line);
      },
      isolate: request.isolate,
    });
    if (result.code === 3 && messages.unreadable.length === 0) messages.unreadable.push("(see the log)");
    const summary = messages.summary;
    if (!summary) {
      throw new ResticError("failed", "restic finished without reporting a snapshot", `see ${this.#options.logFile}`);
    }
    return {
      // The short id in every version (0.18 reports the whole one).
      snapshotId: shortId(summary.snapshot_id),
      dataAdded: summary.data_added,
      unreadable: messages.unreadable,
    };
  }

  async snapshots(tags: string[] = []): Promise<Snapshot[]> {
    const args = ["snapshots", "--json"];
    if (tags.length) args.push("--tag", tags.join(","));
    const { stdout } = await this.#run(args);
    return this.#parse(SnapshotsSchema, stdout || "[]", "snapshots") ?? [];
  }

  /** restic's whole JSON answer read through its schema; one that does not fit is a clear failure, not a crash. */
  #parse<T>(schema: z.ZodType<T>, text: string, command: string): T {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    throw new ResticError(
      "failed",
      `restic ${command} --json answered what the tools cannot read`,
      `see ${this.#options.logFile}; the restic versions the tools know are in packages/world/src/restic-json.ts`,
    );
  }

  /**
   * Bytes the repository takes. For the rclone repositories of docs/system.md 2.1 rclone counts them (a listing, ~50 ms
   * locally, no password, no lock); otherwise restic stats --mode raw-data (which opens the repository's key, ~0.7 s).
   */
  async repositorySize(): Promise<number> {
    const remote = /^rclone:(.+)$/.exec(this.#options.env.RESTIC_REPOSITORY)?.[1];
    if (remote) {
      const result = await this.#options.runner.run("rclone", ["size", "--json", remote], {
        signal: this.#options.signal,
      });
      if (result.code === 0) return Number((JSON.parse(result.stdout) as { bytes?: number }).bytes ?? 0);
    }
    const { stdout } = await this.#run(["stats", "--json", "--mode", "raw-data"]);
    return this.#parse(StatsSchema, stdout, "stats").total_size;
  }

  /**
   * What restoring a snapshot writes at most, in bytes: from 0.17 the snapshot keeps its backup's summary, whose
   * `total_bytes_processed` is every file's size (no restic command, which would derive the repository's key again:
   * half a second); before, restic stats --mode restore-size.
   */
  async restoreSize(snapshot: Snapshot): Promise<number> {
    const kept = snapshot.summary?.total_bytes_processed;
    if (kept !== undefined) return kept;
    const { stdout } = await this.#run(["stats", "--json", "--mode", "restore-size", snapshot.id]);
    return this.#parse(StatsSchema, stdout, "stats").total_size;
  }

  async forget(policy: RetentionPolicy, tags: string[], prune: boolean): Promise<string> {
    const args = [
      "forget",
      "--keep-last",
      String(policy.keepLast),
      "--keep-daily",
      String(policy.keepDaily),
      "--keep-weekly",
      String(policy.keepWeekly),
      // Snapshots are grouped by their tags too: a pre-restore or pre-upgrade snapshot is kept under the policy in a
      // group of its own, never counted as the day's backup in place of the scheduled one.
      "--group-by",
      "host,paths,tags",
    ];
    if (tags.length) args.push("--tag", tags.join(","));
    if (prune) args.push("--prune");
    return (await this.#run(args)).stdout;
  }

  /**
   * restic check, reading `readDataSubset` of the data too (`10%`, `1/5`, or restic's size syntax). restic 0.11 takes
   * only `n/t`: a percentage is read there as one part of as many as make it, a different part each `day` (a number
   * that grows by one a day), so that the parts take turns. Anything else is restic's to accept or refuse.
   */
  async check(readDataSubset?: string, day = 0): Promise<string> {
    const args = ["check"];
    if (readDataSubset) {
      const percent = Number(/^(\d+(?:\.\d+)?)%$/.exec(readDataSubset)?.[1]);
      const parts =
        percent > 0 && percent <= 100 && !(await this.features()).readDataPercent ? Math.round(100 / percent) : 0;
      args.push(`--read-data-subset=${parts ? `${(day % parts) + 1}/${parts}` : readDataSubset}`);
    }
    return (await this.#run(args)).stdout;
  }

  /**
   * The entries of a snapshot in the directories `dirs` (the directories themselves and what is directly in them; with
   * `recursive`, everything below them). A directory the snapshot does not hold lists nothing.
   */
  async ls(snapshotId: string, dirs: string[], recursive = false): Promise<SnapshotNode[]> {
    const nodes: SnapshotNode[] = [];
    await this.#run(["ls", "--json", ...(recursive ? ["--recursive"] : []), snapshotId, "--", ...dirs], {
      onStdoutLine: (line) => {
        const node = readJsonLine(LsLineSchema, line);
        if (node?.struct_type === "node") nodes.push({ path: node.path, type: node.type, size: node.size });
      },
    });
    return nodes;
  }

  /** A file of a snapshot, whole (the caller checks its size with `ls` first). */
  async dump(snapshotId: string, path: string): Promise<string> {
    return (await this.#run(["dump", snapshotId, "--", path])).stdout;
  }

  /**
   * The snapshot, or only the `includes` (paths, taken literally: restic reads --include as a glob, so a level named
   * `world[1]` would otherwise match `world1`), into the directory `target` (a path only root can change: see
   * restoreInto for one inside the volume). From 0.17 restic says its errors as JSON (`--json`), the file named apart
   * from the reason, which the failure then quotes. From 0.15 files are restored sparse: a file of zeros the game's
   * user made (costing nothing on disk) comes back costing nothing, not written out whole on the disk the world
   * shares with the panel; 0.11 to 0.14 write it whole (the restores' room checks count every file's whole size).
   * With `root` (a folder of the snapshot, every include below it) and restic 0.16 or newer, what is in `root` is
   * restored straight into `target` (`<snapshot>:<root>`), without `root`'s own path in front (restoredPathBytes).
   */
  async restore(snapshotId: string, target: string, includes: string[] = [], root?: string): Promise<void> {
    const features = await this.features();
    const within = root !== undefined && features.restoreSubfolder ? root.replace(/\/+$/, "") : undefined;
    const args = ["restore", within === undefined ? snapshotId : `${snapshotId}:${within || "/"}`, "--target", target];
    if (features.restoreSparse) args.push("--sparse");
    for (const include of includes) {
      const path = within === undefined ? include : include.slice(within.length);
      args.push("--include", path.replace(/[\\*?[\]]/g, "\\$&"));
    }
    if (!features.restoreJson) {
      // restic 0.11 says what it could not restore and still exits 0: a restore with errors is a failed one.
      let warnings = 0;
      const { stderr } = await this.#run(args, {
        onStderrLine: (line) => {
          if (RESTORE_WARNING.test(line)) warnings++;
          this.#options.onStderr?.(line);
        },
      });
      if (warnings > 0) {
        throw new ResticError(
          "failed",
          `restic could not restore ${warnings} entr${warnings === 1 ? "y" : "ies"}, though it exited 0; the first: ${firstWarning(stderr)}`,
          `see ${this.#options.logFile} for restic's full output`,
          this.#options.env.RESTIC_REPOSITORY,
        );
      }
      return;
    }
    let first: { item: string; message: string } | undefined;
    // Its progress comes on stdout, its errors on stderr, each a JSON message.
    const take = (line: string): boolean => {
      const value = jsonLine(line);
      if (!MessageTypeSchema.safeParse(value).success) return false;
      const reported = RestoreErrorSchema.safeParse(value).data;
      if (reported) {
        const error = { item: reported.item, message: reported.error?.message ?? "unknown error" };
        first ??= error;
        // In the log at the level of restic's other lines; the first is the failure's reason.
        this.#options.onStderr?.(`cannot restore ${describeReported(error)}`);
      }
      return true;
    };
    await this.#run([...args, "--json"], {
      onStdoutLine: take,
      onStderrLine: (line) => {
        if (!take(line)) this.#options.onStderr?.(line);
      },
      reported: () => first,
    });
  }

  /**
   * Restores the `includes` (each below `root`, a folder of the snapshot: WORLD_DIR) into a new directory inside
   * `dir`, a private directory held open (the staging directory in the volume, the drill's scratch directory): restic
   * writes through this process's descriptor of it, so renaming it, or putting a link in its place, changes nothing
   * for restic. Not into `/proc/<pid>/fd/<n>` itself: from 0.17 restic removes whatever stands at the target when it
   * is not a directory, and that is a link ("failed to remove stale item"). Returns the restored copy of `root`, open.
   *
   * The target is short (RESTORE_TARGET_BYTES) whatever `dir`'s own path: restic writes each file by its whole path,
   * the target's followed by the file's, and a path longer than PATH_MAX cannot be written (issue 45: a file the
   * game's user made 4,093 bytes long, backed up without a word, failed every restore and every drill).
   *
   * No `includes` restores nothing (restic is not asked: with no --include it would restore the whole snapshot), and
   * the copy of `root` is an empty directory.
   */
  async restoreInto(snapshotId: string, dir: VolumeDir, root: string, includes: string[]): Promise<VolumeDir> {
    const into = dir.ensureDir(RESTORE_INTO);
    try {
      if (includes.length) await this.restore(snapshotId, `${dir.forChild}/${RESTORE_INTO}`, includes, root);
      if ((await this.features()).restoreSubfolder) return into;
      // Older versions restore `root`'s own path too: the copy of `root` is inside (made when nothing was restored).
      const restored = into.ensureDir(root.replace(/^\/+/, ""));
      into.close();
      return restored;
    } catch (error) {
      into.close();
      throw error;
    }
  }
}

/** PATH_MAX (linux/limits.h): a path a system call is given is at most 4,095 bytes and its terminating NUL. */
export const PATH_MAX = 4096;

/**
 * The longest target restoreInto gives restic, `/proc/<pid>/fd/<n>/restored`: pid_max is at most 4,194,304 on Linux
 * (PID_MAX_LIMIT), and a descriptor of this process is below a million.
 */
export const RESTORE_TARGET_BYTES = Buffer.byteLength("/proc/4194304/fd/999999/restored");

/**
 * How long the path restic writes `path` (as backed up, absolute) by is at most, in a restore into restoreInto's
 * target of the snapshot's `root` (WORLD_DIR): the target's and the file's path below `root` (0.16 on), or its whole
 * path (before). Longer than PATH_MAX - 1, the file cannot be restored.
 */
export function restoredPathBytes(features: ResticFeatures, root: string, path: string): number {
  const below = features.restoreSubfolder ? path.slice(root.replace(/\/+$/, "").length) : path;
  return RESTORE_TARGET_BYTES + Buffer.byteLength(below);
}

/** What `restic backup --json` says as it goes: its progress, the files it cannot read, and at the end its summary. */
class BackupMessages {
  summary: z.infer<typeof BackupSummarySchema> | undefined;
  readonly unreadable: string[] = [];
  readonly #onProgress: ((p: Progress) => void) | undefined;
  readonly #onStderr: ((line: string) => void) | undefined;

  constructor(onProgress: ((p: Progress) => void) | undefined, onStderr: ((line: string) => void) | undefined) {
    this.#onProgress = onProgress;
    this.#onStderr = onStderr;
  }

  /** Takes one line of restic's; false when it is not one of its JSON messages. */
  take(line: string): boolean {
    const value = jsonLine(line);
    const kind = MessageTypeSchema.safeParse(value);
    if (!kind.success) return false;
    if (kind.data.message_type === "summary") {
      const summary = BackupSummarySchema.safeParse(value);
      if (summary.success) this.summary = summary.data;
    } else if (kind.data.message_type === "error") {
      const message = BackupErrorSchema.safeParse(value).data;
      const item = message?.item ?? message?.error?.Path ?? "?";
      this.unreadable.push(item);
      this.#onStderr?.(`error: cannot read ${item} (${describeErrno(message?.error?.Err)})`);
    } else if (kind.data.message_type === "status" && this.#onProgress) {
      const status = BackupStatusSchema.safeParse(value).data;
      if (status) {
        this.#onProgress({
          percent: status.percent_done * 100,
          bytesDone: status.bytes_done,
          totalBytes: status.total_bytes,
          secondsRemaining: status.seconds_remaining,
        });
      }
    }
    return true;
  }
}

/** Why a safety snapshot was taken: its tag, besides this server's own. */
export type SafetyTag = "pre-restore" | "pre-upgrade";
export const SAFETY_TAGS: readonly SafetyTag[] = ["pre-restore", "pre-upgrade"];

/**
 * Whether a snapshot was taken for safety (the world a restore replaced, the world before an upgrade) rather than as
 * a backup: "the newest backup" of `backup status`, `restore latest` and the drill is the newest that is not one.
 */
export function isSafetySnapshot(snapshot: { tags?: string[] | null | undefined }): boolean {
  return SAFETY_TAGS.some((tag) => snapshot.tags?.includes(tag));
}
