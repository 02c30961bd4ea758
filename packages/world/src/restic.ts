import { JobError } from "@mcops/core/errors";
import type { Runner, RunResult } from "@mcops/core/runner";
import { isolated } from "./isolate.ts";

/**
 * restic as the backup tool drives it: always with --json where restic has it, the repository and its password file
 * passed through the environment (never argv), and its failures turned into one clear reason. Works with restic 0.14
 * (Debian 12) up to the newest: 0.14 exits 1 for every fatal error, so the reason is read from stderr; newer versions
 * also say it with exit codes 10 (no repository), 11 (locked) and 12 (wrong password). Exit 3 (some files could not be
 * read; the snapshot was still made) is a warning.
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

export interface Snapshot {
  id: string;
  short_id: string;
  time: string;
  hostname: string;
  tags?: string[];
  paths: string[];
}

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

/** The last lines of restic's stderr that say something (not rclone's notices), for messages. */
function lastWords(stderr: string): string {
  const lines = stderr
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !/^rclone: .* NOTICE: /.test(l) && !l.startsWith("reading repository password"));
  // restic says one Fatal line, its last; an earlier one can only be a name in a restore warning (see ownWords).
  const fatal = lines.findLast((l) => l.startsWith("Fatal: "));
  return (fatal ?? lines.at(-1) ?? "no output").replace(/^Fatal: /, "");
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

/** stderr up to the first restore warning: the lines restic itself wrote. */
function ownWords(stderr: string): string {
  const at = stderr.search(RESTORE_WARNING);
  return at < 0 ? stderr : stderr.slice(0, at);
}

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
): ResticError {
  const said = lastWords(output);
  // Only restic's own lines are matched below (a restore warning names the game's files).
  const stderr = ownWords(output);
  if (signal)
    return new ResticError("interrupted", `restic was stopped by ${signal}`, "run the backup again", repository);
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
  return new ResticError(
    "failed",
    `restic failed (exit ${code}): ${said}`,
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
}

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

  constructor(options: ResticOptions) {
    this.#options = options;
    this.#childEnv = {
      RESTIC_REPOSITORY: options.env.RESTIC_REPOSITORY,
      RESTIC_PASSWORD_FILE: options.env.RESTIC_PASSWORD_FILE,
      RESTIC_PASSWORD: undefined,
      RESTIC_PASSWORD_COMMAND: undefined,
    };
  }

  /** Runs restic; an exit not in `okCodes` becomes a ResticError that says why. */
  async #run(args: string[], invocation: Invocation = {}): Promise<RunResult> {
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
    let ownLine = true;
    let result: RunResult;
    try {
      result = await runner.run(command, argv, {
        env: this.#childEnv,
        onStdoutLine,
        onStderrLine: (line) => {
          onStderrLine?.(line);
          if (RESTORE_WARNING.test(line)) ownLine = false;
          if (!ownLine || readOnly !== undefined) return;
          readOnly = notWritable(line);
          if (readOnly) stop.abort();
        },
        onSpawn: this.#options.onSpawn,
        signal: stop.signal,
      });
    } finally {
      outer?.removeEventListener("abort", onAbort);
    }
    if (readOnly && !outer?.aborted) throw notWritableError(readOnly, env.RESTIC_REPOSITORY);
    if (result.code === null && result.signal === null) {
      throw new ResticError("failed", "restic could not be started", "install it: apt-get install restic");
    }
    if (result.code === 127)
      throw new ResticError("failed", "restic is not installed", "install it: apt-get install restic");
    if (result.code === null || !okCodes.includes(result.code)) {
      const error = classifyFailure(result.code, result.signal, result.stderr, env.RESTIC_REPOSITORY, logFile);
      if (error.kind !== "remote") throw error;
      // restic may stop rclone before rclone says why; ask rclone itself whether the remote exists.
      const configured = await this.#remoteConfigured();
      throw configured === false
        ? classifyFailure(result.code, result.signal, result.stderr, env.RESTIC_REPOSITORY, logFile, false)
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
    if (!summary || typeof summary.snapshot_id !== "string") {
      throw new ResticError("failed", "restic finished without reporting a snapshot", `see ${this.#options.logFile}`);
    }
    return {
      snapshotId: summary.snapshot_id,
      dataAdded: Number(summary.data_added ?? 0),
      unreadable: messages.unreadable,
    };
  }

  async snapshots(tags: string[] = []): Promise<Snapshot[]> {
    const args = ["snapshots", "--json"];
    if (tags.length) args.push("--tag", tags.join(","));
    const { stdout } = await this.#run(args);
    return (JSON.parse(stdout || "[]") as Snapshot[] | null) ?? [];
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
    return Number((JSON.parse(stdout) as { total_size?: number }).total_size ?? 0);
  }

  /** What restoring a snapshot writes, in bytes (restic stats --mode restore-size). */
  async restoreSize(snapshotId: string): Promise<number> {
    const { stdout } = await this.#run(["stats", "--json", "--mode", "restore-size", snapshotId]);
    return Number((JSON.parse(stdout) as { total_size?: number }).total_size ?? 0);
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

  async check(readDataSubset?: string): Promise<string> {
    const args = ["check"];
    if (readDataSubset) args.push(`--read-data-subset=${readDataSubset}`);
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
        if (!line.startsWith("{")) return;
        const node = JSON.parse(line) as SnapshotNode & { struct_type?: string };
        if (node.struct_type === "node") nodes.push({ path: node.path, type: node.type, size: node.size });
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
   * `world[1]` would otherwise match `world1`), into `target`.
   */
  async restore(snapshotId: string, target: string, includes: string[] = []): Promise<void> {
    const args = ["restore", snapshotId, "--target", target];
    for (const include of includes) args.push("--include", include.replace(/[\\*?[\]]/g, "\\$&"));
    await this.#run(args);
  }
}

/** What `restic backup --json` says as it goes: its progress, the files it cannot read, and at the end its summary. */
class BackupMessages {
  summary: Record<string, unknown> | undefined;
  readonly unreadable: string[] = [];
  readonly #onProgress: ((p: Progress) => void) | undefined;
  readonly #onStderr: ((line: string) => void) | undefined;

  constructor(onProgress: ((p: Progress) => void) | undefined, onStderr: ((line: string) => void) | undefined) {
    this.#onProgress = onProgress;
    this.#onStderr = onStderr;
  }

  /** Takes one line of restic's; false when it is not one of its JSON messages. */
  take(line: string): boolean {
    if (!line.startsWith("{")) return false;
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return false;
    }
    if (message.message_type === "summary") this.summary = message;
    else if (message.message_type === "error") {
      const item = String(message.item ?? (message.error as { Path?: string })?.Path ?? "?");
      this.unreadable.push(item);
      this.#onStderr?.(`error: cannot read ${item} (${describeErrno((message.error as { Err?: number })?.Err)})`);
    } else if (message.message_type === "status" && this.#onProgress) {
      this.#onProgress({
        percent: Number(message.percent_done ?? 0) * 100,
        bytesDone: Number(message.bytes_done ?? 0),
        totalBytes: Number(message.total_bytes ?? 0),
        secondsRemaining: message.seconds_remaining === undefined ? undefined : Number(message.seconds_remaining),
      });
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
