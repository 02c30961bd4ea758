import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Clock } from "@mcops/core/clock";
import { loadBackupEnv } from "@mcops/core/config";
import { BusyError, ConfigError, JobError, UsageError } from "@mcops/core/errors";
import { formatBytes, formatDuration } from "@mcops/core/format";
import { COLOURS, createHttpClient, createPanelClient, toolNotifier } from "@mcops/core/http";
import { acquireLock, pauseBackups } from "@mcops/core/lock";
import { type Logger, toolLogger, type Writer } from "@mcops/core/log";
import { backupLockFile, type Paths } from "@mcops/core/paths";
import { VERSION } from "@mcops/core/version";
import { VolumeDir } from "@mcops/core/volume";
import { downloadVerified, installedDigest } from "./download.ts";
import { installJar, JAR, PREVIOUS, removeStaleTemps, WORK_PREFIX } from "./install.ts";
import {
  type Artifact,
  type Bases,
  type Channel,
  createSource,
  DEFAULT_BASES,
  INSTALLER_TYPES,
  JAR_TYPES,
  type JarType,
  LABELS,
} from "./sources.ts";

export { systemClock } from "@mcops/core/clock";
// What cli.ts needs of core, named here so that the bundle keeps only what the tool uses.
export { resolvePaths } from "@mcops/core/paths";

export interface JarContext {
  paths: Paths;
  env: NodeJS.ProcessEnv;
  clock: Clock;
  stdout: Writer;
  stderr: Writer & { isTTY?: boolean };
  /** Aborts a download in progress (SIGINT, SIGTERM). */
  signal?: AbortSignal;
}

export interface JarOptions {
  version?: string | undefined;
  type?: string | undefined;
  build?: string | undefined;
  channel?: string | undefined;
  list?: boolean | undefined;
  dryRun?: boolean | undefined;
  stop?: boolean | undefined;
  /** Flag form of WORLD_DIR: the server's data volume, where server.jar lives. */
  dir?: string | undefined;
  /** Flag form of BACKUP_OWNER, uid:gid. */
  owner?: string | undefined;
  /** How long to wait for a running backup before stopping the server (default 30 minutes). */
  lockWaitMs?: number | undefined;
  /** How long the server may take to stop, and to run again (default 5 minutes each). */
  stateTimeoutMs?: number | undefined;
}

const VERSION_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/;

export function parseType(type: string | undefined): JarType {
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

function describe(artifact: Artifact): string {
  const what = `${LABELS[artifact.type]} ${artifact.version}`;
  if (artifact.type === "vanilla") return what;
  if (artifact.type === "fabric") return `${what} (loader ${artifact.build})`;
  return `${what} build ${artifact.build}${artifact.channel && artifact.channel !== "STABLE" ? ` (${artifact.channel})` : ""}`;
}

function userAgent(contact: string | undefined): string {
  return `mcops-jar-download/${VERSION} (${contact ?? "self-hosted Minecraft server tools; operator contact not set"})`;
}

/** Env-file fields that say where the services are and who asks. */
const SERVICE_FIELDS = ["DOWNLOAD_BASE", "PURPUR_BASE", "MOJANG_BASE", "FABRIC_BASE", "DOWNLOAD_CONTACT"] as const;

/**
 * docs/system.md 4.3: fetch the jar of a version, verify it, and install it as server.jar in the server's volume, chowned to
 * the container's user, keeping the old one as server.jar.previous. The download happens while the server still runs;
 * only the swap needs it stopped: refused while it runs, unless --stop (then: wait for a running backup, stop, swap,
 * start, wait until it runs).
 */
export async function runJarDownload(ctx: JarContext, options: JarOptions): Promise<number> {
  const type = parseType(options.type);
  const channel = parseChannel(options.channel);
  const version = options.version;
  if (version !== undefined && !VERSION_PATTERN.test(version)) {
    throw new UsageError(`"${version}" is not a version`, { hint: "e.g. 1.21.4, 25w03a or 1.21.5-rc1" });
  }
  if (options.build !== undefined && options.build !== "latest" && !/^[0-9A-Za-z.+-]{1,64}$/.test(options.build)) {
    throw new UsageError(`"${options.build}" is not a build`, { hint: "give a build number, or latest" });
  }
  if (!options.list && version === undefined) {
    throw new UsageError("which version?", { hint: "e.g. jar-download 1.21.4 --type paper; list them with --list" });
  }

  const loadOptions = {
    paths: ctx.paths,
    env: ctx.env,
    flags: { WORLD_DIR: options.dir, BACKUP_OWNER: options.owner },
    flagNames: { WORLD_DIR: "dir", BACKUP_OWNER: "owner" },
  };
  // Everything the run needs is read before anything is asked of the network: a config error comes first.
  const settings = loadBackupEnv(SERVICE_FIELDS, loadOptions);
  if ((type === "paper" || type === "folia") && !settings.DOWNLOAD_CONTACT) {
    // PaperMC's downloads API asks every client to name a contact (an address or e-mail) in its User-Agent and may
    // refuse or block those that do not: no request to PaperMC leaves without one.
    throw new ConfigError("DOWNLOAD_CONTACT is not set: PaperMC asks every client for a contact in its User-Agent", {
      where: settings.file,
      hint: `add DOWNLOAD_CONTACT=<your e-mail or web address> to ${settings.file}`,
    });
  }
  const volumeEnv = options.list ? undefined : loadBackupEnv(["WORLD_DIR"], loadOptions);
  const control =
    options.list || options.dryRun
      ? undefined
      : loadBackupEnv(["CONTROL_URL", "CONTROL_KEY", "SERVER_ID", "BACKUP_OWNER"], loadOptions);
  const bases: Bases = {
    paper: settings.DOWNLOAD_BASE ?? DEFAULT_BASES.paper,
    purpur: settings.PURPUR_BASE ?? DEFAULT_BASES.purpur,
    mojang: settings.MOJANG_BASE ?? DEFAULT_BASES.mojang,
    fabric: settings.FABRIC_BASE ?? DEFAULT_BASES.fabric,
  };
  const retryDelayMs = Number(ctx.env.MCOPS_RETRY_MS ?? 1000);
  const http = createHttpClient({
    userAgent: userAgent(settings.DOWNLOAD_CONTACT),
    retryDelayMs,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  const source = createSource(http, bases);

  if (options.list) {
    const lines = await source.list(type, version);
    ctx.stdout.write(lines.length ? `${lines.join("\n")}\n` : "");
    return 0;
  }

  const artifact = await source.resolve({ type, version: version as string, build: options.build, channel });
  const dir = (volumeEnv as { WORLD_DIR: string }).WORLD_DIR;
  const jar = join(dir, JAR);
  const what = describe(artifact);
  const checksum = artifact.checksum
    ? `${artifact.checksum.algorithm} ${artifact.checksum.hex}`
    : "no checksum published";

  if (options.dryRun) {
    ctx.stdout.write(
      [
        `Would install ${what} (nothing done, --dry-run):`,
        `  file:     ${artifact.fileName}${artifact.size ? `, ${formatBytes(artifact.size)}` : ""}`,
        `  from:     ${artifact.url}`,
        `  verify:   ${checksum}`,
        `  into:     ${jar} (the old one kept as ${PREVIOUS})`,
        "",
      ].join("\n"),
    );
    return 0;
  }

  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new ConfigError("the server's volume does not exist", {
      where: `WORLD_DIR=${dir}`,
      hint: "set WORLD_DIR (or --dir) to {volumes_dir}/<server uuid>",
    });
  }
  const logger = toolLogger({
    logDir: ctx.paths.logDir,
    file: "mc-jar-download.log",
    stderr: ctx.stderr,
    env: ctx.env,
    clock: ctx.clock,
  });
  // Read now, before anything is done: a webhook.env that is refused (exit 78) must stop the run, not follow it.
  const notifier = toolNotifier({ paths: ctx.paths, env: ctx.env, logger, clock: ctx.clock });
  const lock = await acquireLock(join(ctx.paths.runDir, "jar-download.lock"), {
    tool: "jar-download",
    what: "another jar-download",
    clock: ctx.clock,
  });
  const volume = VolumeDir.open(dir);
  let work: VolumeDir | undefined;
  const removeTemp = () => {
    try {
      if (work) volume.removePrivateDir(work);
    } catch {
      // Left for the next run's removeStaleTemps.
    }
    work?.close();
    work = undefined;
  };
  process.once("exit", removeTemp);
  try {
    if (
      artifact.checksum &&
      (await installedDigest(volume, JAR, artifact.checksum.algorithm, artifact.size)) === artifact.checksum.hex
    ) {
      logger.info(`${what} is already installed (${jar}): nothing to do`);
      ctx.stdout.write(`${what} is already installed in ${jar}.\n`);
      return 0;
    }
    const { CONTROL_URL, CONTROL_KEY, SERVER_ID, BACKUP_OWNER } = control as NonNullable<typeof control>;
    const panel = createPanelClient({ url: CONTROL_URL, key: CONTROL_KEY, serverId: SERVER_ID, clock: ctx.clock });
    const refuse = (state: string) =>
      new BusyError(`the server is ${state}; its jar cannot be replaced under it`, {
        where: `server ${SERVER_ID}`,
        hint: "stop it first, or pass --stop to stop it, replace the jar and start it again",
      });
    const before = (await panel.resources()).state;
    if (before !== "offline" && !options.stop) throw refuse(before);

    removeStaleTemps(volume);
    // The download is written and verified where the game's user cannot reach it, then renamed into place.
    work = volume.makePrivateDir(WORK_PREFIX);
    const temp = work.at(JAR);
    logger.info(`downloading ${what}: ${artifact.fileName} from ${artifact.url}`);
    const started = ctx.clock.now();
    const progress = progressLine(ctx.stderr, artifact.fileName);
    let downloaded: Awaited<ReturnType<typeof downloadVerified>>;
    try {
      downloaded = await downloadVerified(artifact, temp, {
        http,
        clock: ctx.clock,
        retryDelayMs,
        onProgress: progress.update,
        onRetry: (reason, attempt) => {
          progress.done();
          logger.warn(`download attempt ${attempt} failed (${reason}); trying again`);
        },
      });
    } finally {
      progress.done();
    }
    logger.info(
      `downloaded ${formatBytes(downloaded.size)} in ${formatDuration(ctx.clock.now() - started)}; ${artifact.checksum ? `${downloaded.algorithm} verified` : `size verified (${LABELS[type]} publishes no checksum)`}`,
    );

    const owner = BACKUP_OWNER ?? { uid: 988, gid: 988 };
    const now = (await panel.resources()).state;
    if (now === "offline") {
      const { previous } = installJar(work, volume, owner);
      return finish(ctx, logger, { what, jar, previous, restarted: false, downloaded, artifact, owner, notifier });
    }
    if (!options.stop) throw refuse(now);

    const lockWaitMs = options.lockWaitMs ?? 30 * 60_000;
    const backups = await pauseBackups(backupLockFile(ctx.paths), {
      tool: "jar-download",
      waitMs: lockWaitMs,
      clock: ctx.clock,
      onWait: (busy) => logger.info(`${busy.message}: waiting for it before stopping the server`),
    });
    try {
      const timeoutMs = options.stateTimeoutMs ?? 5 * 60_000;
      logger.info(`stopping the server to replace its jar (it was ${now})`);
      await panel.power("stop");
      await panel.waitForState("offline", { timeoutMs });
      const { previous } = installJar(work, volume, owner);
      logger.info("starting the server again");
      await panel.power("start");
      try {
        await panel.waitForState("running", { timeoutMs });
      } catch (failure) {
        const reason = (failure as Error).message;
        logger.error(`the server did not start with the new jar: ${reason}`);
        await notifier.send({
          title: "Server did not start",
          description: `${what} was installed, but the server is not running: ${reason}`,
          colour: COLOURS.error,
          category: "restart",
        });
        throw new JobError(`${what} was installed, but the server did not start: ${reason}`, {
          hint: previous
            ? `look at the panel console; to go back: mv ${join(dir, PREVIOUS)} ${jar}`
            : "look at the panel console and the server's latest.log",
        });
      }
      return finish(ctx, logger, { what, jar, previous, restarted: true, downloaded, artifact, owner, notifier });
    } finally {
      backups.release();
    }
  } finally {
    removeTemp();
    process.off("exit", removeTemp);
    volume.close();
    lock.release();
  }
}

async function finish(
  ctx: JarContext,
  logger: Logger,
  done: {
    what: string;
    jar: string;
    previous: boolean;
    restarted: boolean;
    downloaded: { size: number };
    artifact: Artifact;
    owner: { uid: number; gid: number };
    notifier: ReturnType<typeof toolNotifier>;
  },
): Promise<number> {
  const kept = done.previous ? `; the old jar is ${PREVIOUS}` : "";
  logger.info(`installed ${done.what} as ${done.jar} (${done.owner.uid}:${done.owner.gid})${kept}`);
  ctx.stdout.write(
    `Installed ${done.what} as ${done.jar} (${formatBytes(done.downloaded.size)}, ${done.artifact.checksum ? `${done.artifact.checksum.algorithm} verified` : "size verified"})${kept}.${done.restarted ? " The server was restarted with it." : ""}\n`,
  );
  await done.notifier.send({
    title: "Server jar updated",
    description: `${done.what} installed${done.restarted ? "; the server was restarted with it" : "; it is used from the next start"}.`,
    colour: COLOURS.success,
    category: "restart",
  });
  return 0;
}

/** `paper-1.21.4-231.jar  12.3 MiB / 50.1 MiB  24%` on a terminal, redrawn at most 10 times a second. */
function progressLine(stderr: Writer & { isTTY?: boolean }, name: string) {
  let last = 0;
  let shown = false;
  return {
    update(done: number, total: number | undefined): void {
      if (!stderr.isTTY) return;
      const now = Date.now();
      if (now - last < 100 && done !== total) return;
      last = now;
      shown = true;
      const of = total ? ` / ${formatBytes(total)}  ${Math.floor((done / total) * 100)}%` : "";
      stderr.write(`\r\x1b[2K${name}  ${formatBytes(done)}${of}`);
    },
    done(): void {
      if (shown) stderr.write("\n");
      shown = false;
    },
  };
}
