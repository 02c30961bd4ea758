import { join } from "node:path";
import { type Settings as BackupSettings, loadSettings as loadBackupSettings } from "@mcops/backup/snapshot";
import { levelName } from "@mcops/backup/world";
import { ConfigError, UsageError } from "@mcops/core/errors";
import { formatBytes } from "@mcops/core/format";
import { createHttpClient } from "@mcops/core/http";
import type { ToolContext } from "@mcops/core/tool";
import { VERSION } from "@mcops/core/version";
import { VolumeDir } from "@mcops/core/volume";
import { JAR, PREVIOUS } from "./install.ts";
import { replaceJar } from "./replace.ts";
import { rollBack } from "./rollback.ts";
import { loadSettings } from "./settings.ts";
import {
  type Artifact,
  type Channel,
  createSource,
  INSTALLER_TYPES,
  JAR_TYPES,
  type JarType,
  LABELS,
  type Source,
} from "./sources.ts";
import { dataVersionOf, refuseDowngrade, worldSaver } from "./versions.ts";

interface JarOptions {
  version?: string | undefined;
  type?: string | undefined;
  build?: string | undefined;
  channel?: string | undefined;
  list?: boolean | undefined;
  dryRun?: boolean | undefined;
  stop?: boolean | undefined;
  /** false: no pre-upgrade snapshot before the swap (--no-backup). */
  backup?: boolean | undefined;
  /** Put server.jar.previous back. */
  rollback?: boolean | undefined;
  /** Go on without level.dat's version (a forged or unreadable one): no downgrade check; still snapshotted first. */
  ignoreWorldVersion?: boolean | undefined;
  /** The parsed command line: --dir and --owner override WORLD_DIR and BACKUP_OWNER (see settings.ts). */
  args?: Record<string, unknown> | undefined;
  /** How long to wait for a running backup before stopping the server (default 30 minutes). */
  lockWaitMs?: number | undefined;
  /** How long the server may take to stop, and to run again (default 5 minutes each). */
  stateTimeoutMs?: number | undefined;
}

const VERSION_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/;

function parseType(type: string | undefined): JarType {
  const name = (type ?? "paper").toLowerCase();
  if ((JAR_TYPES as readonly string[]).includes(name)) return name as JarType;
  if ((INSTALLER_TYPES as readonly string[]).includes(name)) {
    throw new UsageError(
      `${name} is the heavy modpack loader: it ships an installer that builds the server, not a jar`,
      {
        hint: "run its installer (java -jar <installer>.jar --installServer) in the server volume, or use the panel's egg for it",
      },
    );
  }
  throw new UsageError(`unknown server type "${type}"`, { hint: `use one of ${JAR_TYPES.join(", ")}` });
}

function parseChannel(channel: string | undefined): Channel | undefined {
  if (channel === undefined) return undefined;
  const name = channel.toUpperCase();
  if (name === "STABLE" || name === "BETA" || name === "ALPHA") return name;
  throw new UsageError(`unknown channel "${channel}"`, { hint: "use stable, beta or alpha" });
}

interface Wanted {
  type: JarType;
  channel: Channel | undefined;
  /** Always there unless --list. */
  version: string | undefined;
  build: string | undefined;
}

/** What was asked for, checked before anything is read: a usage error comes before a configuration error. */
function checkRequest(options: JarOptions): Wanted {
  const type = parseType(options.type);
  const channel = parseChannel(options.channel);
  const { version, build } = options;
  if (version !== undefined && !VERSION_PATTERN.test(version)) {
    throw new UsageError(`"${version}" is not a version`, { hint: "e.g. 1.21.4, 25w03a or 1.21.5-rc1" });
  }
  if (build !== undefined && build !== "latest" && !/^[0-9A-Za-z.+-]{1,64}$/.test(build)) {
    throw new UsageError(`"${build}" is not a build`, { hint: "give a build number, or latest" });
  }
  if (options.rollback && (version !== undefined || options.list)) {
    throw new UsageError("--rollback puts server.jar.previous back: it takes no version", {
      hint: "run jar-download --rollback alone",
    });
  }
  if (!options.list && !options.rollback && version === undefined) {
    throw new UsageError("which version?", { hint: "e.g. jar-download 1.21.4 --type paper; list them with --list" });
  }
  return { type, channel, version, build };
}

function describe(artifact: Artifact): string {
  const what = `${LABELS[artifact.type]} ${artifact.version}`;
  if (artifact.type === "vanilla") return what;
  if (artifact.type === "fabric") return `${what} (loader ${artifact.build})`;
  return `${what} build ${artifact.build}${artifact.channel && artifact.channel !== "STABLE" ? ` (${artifact.channel})` : ""}`;
}

function userAgent(contact: string | undefined): string {
  return `mcops-jar-download/${VERSION} (${contact ?? "self-hosted Minecraft server tools; operator contact not set"})`;
}

/**
 * docs/system.md 4.3: fetch the jar of a version, verify it, and install it as server.jar in the server's volume, chowned to
 * the container's user, keeping the old one as server.jar.previous. The download happens while the server still runs;
 * only the swap needs it stopped: refused while it runs, unless --stop (then: wait for a running backup, stop, swap,
 * start, wait until it runs).
 */
export async function runJarDownload(
  ctx: Pick<ToolContext, "paths" | "env" | "clock" | "stdout" | "stderr" | "signal" | "runner" | "atExit">,
  options: JarOptions,
): Promise<number> {
  const wanted = checkRequest(options);
  const list = options.list ?? false;
  const dryRun = options.dryRun ?? false;
  if (options.rollback) {
    // Nothing is downloaded: no host's settings are needed (vanilla's ask for none).
    const settings = loadSettings(ctx, { type: "vanilla", list: false, dryRun: false, args: options.args ?? {} });
    return rollBack(ctx, settings, {
      stateTimeoutMs: options.stateTimeoutMs ?? 5 * 60_000,
      dryRun,
      ignoreWorldVersion: options.ignoreWorldVersion ?? false,
    });
  }
  const settings = loadSettings(ctx, { type: wanted.type, list, dryRun, args: options.args ?? {} });
  const retryDelayMs = Number(ctx.env.MCOPS_RETRY_MS ?? 1000);
  const http = createHttpClient({ userAgent: userAgent(settings.contact), retryDelayMs, signal: ctx.signal });
  const source = createSource(http, settings.bases);
  if (list) return listAvailable(ctx, source, wanted);

  const dir = settings.worldDir as string;
  // A downgrade is refused before anything is fetched; the backup's settings are read before anything is done. A
  // volume with no world yet (a first install) has nothing to snapshot, and needs no backup settings.
  const ignoreWorldVersion = options.ignoreWorldVersion ?? false;
  const snapshot = (await checkNotOlder(dir, wanted, ignoreWorldVersion)) && options.backup !== false;
  const backup = snapshot && !dryRun ? backupSettingsFor(ctx, dir) : undefined;
  const artifact = await source.resolve({ ...wanted, version: wanted.version as string });
  if (dryRun) return showPlan(ctx, artifact, join(dir, JAR), snapshot, ignoreWorldVersion);
  return replaceJar(ctx, {
    artifact,
    what: describe(artifact),
    dir,
    control: settings.control as NonNullable<typeof settings.control>,
    http,
    retryDelayMs,
    stop: options.stop ?? false,
    backup,
    ignoreWorldVersion,
    lockWaitMs: options.lockWaitMs ?? 30 * 60_000,
    stateTimeoutMs: options.stateTimeoutMs ?? 5 * 60_000,
  });
}

/**
 * Exit 2 when the world was saved by a newer version than the one asked for, or level.dat says a version no game writes
 * or cannot be read (nothing fetched yet); not checked with --ignore-world-version. True when the volume holds a world
 * (its level's folder), which the pre-upgrade snapshot keeps.
 */
async function checkNotOlder(dir: string, wanted: Wanted, ignoreWorldVersion: boolean): Promise<boolean> {
  let volume: VolumeDir;
  try {
    volume = VolumeDir.open(dir);
  } catch {
    return false; // no volume: replaceJar says so in its own words
  }
  try {
    const version = wanted.version as string;
    if (!ignoreWorldVersion) {
      refuseDowngrade(await worldSaver(volume), dataVersionOf(version), `${LABELS[wanted.type]} ${version}`);
    }
    return volume.lstat(levelName(volume))?.isDirectory() === true;
  } finally {
    volume.close();
  }
}

/**
 * The backup's settings (backup.env's restic fields), for the pre-upgrade snapshot, WORLD_DIR being the volume
 * jar-download works on: a problem with them is said before anything is done, with the way to go without.
 */
function backupSettingsFor(ctx: Pick<ToolContext, "paths" | "env">, dir: string): BackupSettings {
  try {
    return { ...loadBackupSettings(ctx), WORLD_DIR: dir };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new ConfigError(`${error.message} (the pre-upgrade snapshot needs backup's settings)`, {
      where: error.where,
      hint: `${error.hint ? `${error.hint}; or ` : ""}install without a pre-upgrade snapshot: --no-backup`,
    });
  }
}

/** --list: the versions of a type, or the builds of a version, one a line. */
async function listAvailable(ctx: Pick<ToolContext, "stdout">, source: Source, wanted: Wanted): Promise<number> {
  const lines = await source.list(wanted.type, wanted.version);
  ctx.stdout.write(lines.length ? `${lines.join("\n")}\n` : "");
  return 0;
}

/** --dry-run: what would be installed, from where, verified how, and where to. */
function showPlan(
  ctx: Pick<ToolContext, "stdout">,
  artifact: Artifact,
  jar: string,
  snapshot: boolean,
  ignoreWorldVersion: boolean,
): number {
  const checksum = artifact.checksum
    ? `${artifact.checksum.algorithm} ${artifact.checksum.hex}`
    : "no checksum published";
  ctx.stdout.write(
    [
      `Would install ${describe(artifact)} (nothing done, --dry-run):`,
      `  file:     ${artifact.fileName}${artifact.size ? `, ${formatBytes(artifact.size)}` : ""}`,
      `  from:     ${artifact.url}`,
      `  verify:   ${checksum}`,
      `  into:     ${jar} (the old one kept as ${PREVIOUS})`,
      `  first:    ${snapshot ? "a snapshot of the world, tagged pre-upgrade" : "no snapshot (no world in the volume, or --no-backup)"}`,
      ...(ignoreWorldVersion ? ["  world:    its version not checked (--ignore-world-version)"] : []),
      "",
    ].join("\n"),
  );
  return 0;
}
