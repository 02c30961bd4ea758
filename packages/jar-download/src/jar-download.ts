import { join } from "node:path";
import { ConfigError, UsageError } from "@mcops/core/errors";
import { formatBytes, formatSpan } from "@mcops/core/format";
import { createHttpClient, createPanelClient, type HttpClient } from "@mcops/core/http";
import { type Logger, toolLogger } from "@mcops/core/log";
import { LOG_FILES } from "@mcops/core/log-events";
import type { ToolContext } from "@mcops/core/tool";
import { VERSION } from "@mcops/core/version";
import { VolumeDir } from "@mcops/core/volume";
import type { Settings as BackupSettings } from "@mcops/world/settings";
import { levelName } from "@mcops/world/world";
import { JAR, PREVIOUS } from "./install.ts";
import { type ImagePlan, planImage, requiredJava } from "./java.ts";
import { installLoader } from "./loader-install.ts";
import { type InstallerArtifact, LOADER_LABELS } from "./loaders.ts";
import { type ModPack, type MrpackZip, readMrpack } from "./mrpack.ts";
import {
  checkPackRequest,
  loaderWords,
  openPack,
  type PackLoader,
  packPlanLines,
  packTops,
  resolvePackLoader,
} from "./pack.ts";
import { type InstallJob, replaceJar } from "./replace.ts";
import { rollBack } from "./rollback.ts";
import { type Channel, INSTALLER_TYPES, type InstallerType } from "./service.ts";
import { loadSettings, type Settings } from "./settings.ts";
import { type Artifact, createSource, JAR_TYPES, LABELS, type ServerType, type Source } from "./sources.ts";
import { dataVersionOf, refuseDowngrade, worldSaver } from "./versions.ts";

interface JarOptions {
  version?: string | undefined;
  type?: string | undefined;
  build?: string | undefined;
  /** NeoForge, Forge, Quilt: the loader version (--loader). */
  loader?: string | undefined;
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
  /** A Modrinth modpack: --mrpack FILE|URL, or --modrinth PROJECT [--pack-version V] (VERSION: its game version). */
  mrpack?: string | undefined;
  modrinth?: string | undefined;
  packVersion?: string | undefined;
  /** The parsed command line: --dir and --owner override WORLD_DIR and BACKUP_OWNER (see settings.ts's loadSettings). */
  args?: Record<string, unknown> | undefined;
  /** How long to wait for a running backup before stopping the server (default 30 minutes). */
  lockWaitMs?: number | undefined;
  /** How long the server may take to stop, and to run again (default 5 minutes each). */
  stateTimeoutMs?: number | undefined;
}

const VERSION_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/;

function parseType(type: string | undefined): ServerType {
  const name = (type ?? "paper").toLowerCase();
  if ((JAR_TYPES as readonly string[]).includes(name) || isInstallerType(name)) return name as ServerType;
  throw new UsageError(`unknown server type "${type}"`, {
    hint: `use one of ${[...JAR_TYPES, ...INSTALLER_TYPES].join(", ")}`,
  });
}

function isInstallerType(type: string): type is InstallerType {
  return (INSTALLER_TYPES as readonly string[]).includes(type);
}

function labelOf(type: ServerType): string {
  return isInstallerType(type) ? LOADER_LABELS[type] : LABELS[type];
}

function parseChannel(channel: string | undefined): Channel | undefined {
  if (channel === undefined) return undefined;
  const name = channel.toUpperCase();
  if (name === "STABLE" || name === "BETA" || name === "ALPHA") return name;
  throw new UsageError(`unknown channel "${channel}"`, { hint: "use stable, beta or alpha" });
}

interface Wanted {
  type: ServerType;
  channel: Channel | undefined;
  /** Always there unless --list. */
  version: string | undefined;
  build: string | undefined;
  /** An installer type's loader version (--loader). */
  loader: string | undefined;
}

function isPack(options: JarOptions): boolean {
  return options.mrpack !== undefined || options.modrinth !== undefined || options.packVersion !== undefined;
}

/** A pack names its game version and loader: --type, --build, --loader, --list and --rollback do not go with it. */
function checkPackOptions(options: JarOptions): void {
  checkPackRequest(options);
  const clash = [
    options.type !== undefined && "--type",
    options.build !== undefined && "--build",
    options.loader !== undefined && "--loader",
    options.channel !== undefined && "--channel",
    options.list && "--list",
    options.rollback && "--rollback",
    options.mrpack !== undefined && options.version !== undefined && "a VERSION",
  ].filter(Boolean);
  if (clash.length > 0) {
    throw new UsageError(`a modpack names its own game version and loader: ${clash.join(", ")} does not go with it`, {
      hint: "jar-download --mrpack FILE|URL, or jar-download [VERSION] --modrinth PROJECT [--pack-version V]",
    });
  }
}

/** What was asked for, checked before anything is read: a usage error comes before a configuration error. */
function checkRequest(options: JarOptions): Wanted {
  if (isPack(options)) checkPackOptions(options);
  const type = parseType(options.type);
  const channel = parseChannel(options.channel);
  const { version, build, loader } = options;
  if (version !== undefined && !VERSION_PATTERN.test(version)) {
    throw new UsageError(`"${version}" is not a version`, { hint: "e.g. 1.21.4, 25w03a or 1.21.5-rc1" });
  }
  if (build !== undefined && build !== "latest" && !/^[0-9A-Za-z.+-]{1,64}$/.test(build)) {
    throw new UsageError(`"${build}" is not a build`, { hint: "give a build number, or latest" });
  }
  if (loader !== undefined && !/^[0-9A-Za-z.+-]{1,64}$/.test(loader)) {
    throw new UsageError(`"${loader}" is not a loader version`, { hint: "e.g. --loader 21.1.77" });
  }
  if (loader !== undefined && !isInstallerType(type)) {
    throw new UsageError(`--loader is for neoforge, forge and quilt, not ${type}`, {
      hint: type === "fabric" ? "Fabric's loader is chosen with --build <loader version>" : "leave out --loader",
    });
  }
  if (build !== undefined && isInstallerType(type)) {
    throw new UsageError(`${labelOf(type)} has loader versions, not builds`, { hint: "use --loader <version>" });
  }
  if (options.rollback && (version !== undefined || options.list)) {
    throw new UsageError("--rollback puts server.jar.previous back: it takes no version", {
      hint: "run jar-download --rollback alone",
    });
  }
  if (!options.list && !options.rollback && version === undefined && !isPack(options)) {
    throw new UsageError("which version?", { hint: "e.g. jar-download 1.21.4 --type paper; list them with --list" });
  }
  return { type, channel, version, build, loader };
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
 * The client every host is asked through: the tool's clock and signal, MCOPS_RETRY_MS's first backoff (the tests'
 * short one), and a line when a service's 429 makes it wait (Modrinth's asks for a minute): a wait said, not a hang.
 */
function hostsClient(
  ctx: Pick<ToolContext, "paths" | "env" | "clock" | "stderr" | "signal">,
  settings: Settings,
): { http: HttpClient; retryDelayMs: number } {
  const retryDelayMs = Number(ctx.env.MCOPS_RETRY_MS ?? 1000);
  let logger: Logger | undefined;
  const http = createHttpClient({
    userAgent: userAgent(settings.contact),
    retryDelayMs,
    signal: ctx.signal,
    clock: ctx.clock,
    onRetry: ({ url, status, waitMs }) => {
      if (status !== 429) return;
      logger ??= toolLogger({
        logDir: ctx.paths.logDir,
        file: LOG_FILES["jar-download"],
        stderr: ctx.stderr,
        env: ctx.env,
        clock: ctx.clock,
      });
      logger.warn(`${new URL(url).host} rate limits this machine (429): asking again in ${formatSpan(waitMs)}`);
    },
  });
  return { http, retryDelayMs };
}

/** What a run is asked for, checked, and the settings that kind of run reads. */
export interface JarRequest {
  wanted: Wanted;
  settings: Settings;
}

/**
 * jar-download's settings loader (cli.ts). What was asked for is checked first, so that a usage error comes before a
 * configuration error; then the settings that kind of run reads (settings.ts): a rollback's, a modpack's, or those of
 * the type asked for, for --list and --dry-run fewer.
 */
export function loadRequest(ctx: Pick<ToolContext, "paths" | "env">, options: JarOptions): JarRequest {
  const wanted = checkRequest(options);
  const args = options.args ?? {};
  const dryRun = options.dryRun ?? false;
  // A rollback downloads nothing: no host's settings are needed (vanilla's ask for none); its --dry-run reads the
  // panel as the rollback does. A pack names its own loader: read as vanilla is, with an installer's fields.
  const run = options.rollback
    ? { type: "vanilla" as const, list: false, dryRun: false, args }
    : isPack(options)
      ? { type: "vanilla" as const, list: false, dryRun, args, pack: true }
      : { type: wanted.type, list: options.list ?? false, dryRun, args };
  return { wanted, settings: loadSettings(ctx, run) };
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
  { wanted, settings }: JarRequest,
): Promise<number> {
  const list = options.list ?? false;
  const dryRun = options.dryRun ?? false;
  if (options.rollback) {
    return rollBack(ctx, settings, {
      stateTimeoutMs: options.stateTimeoutMs ?? 5 * 60_000,
      dryRun,
      ignoreWorldVersion: options.ignoreWorldVersion ?? false,
    });
  }
  if (isPack(options)) return packRun(ctx, options, settings);
  const { http, retryDelayMs } = hostsClient(ctx, settings);
  const source = createSource(http, settings.bases);
  if (list) return listAvailable(ctx, source, wanted);

  const dir = settings.worldDir as string;
  // A downgrade is refused before anything is fetched; the backup's settings are read before anything is done. A
  // volume with no world yet (a first install) has nothing to snapshot, and needs no backup settings.
  const ignoreWorldVersion = options.ignoreWorldVersion ?? false;
  const version = wanted.version as string;
  const snapshot =
    (await checkNotOlder(dir, version, `${labelOf(wanted.type)} ${version}`, ignoreWorldVersion)) &&
    options.backup !== false;
  const backup = snapshot && !dryRun ? settings.backup(dir) : undefined;
  const common = { dir, backup, snapshot, ignoreWorldVersion, http, retryDelayMs, source, settings };
  if (isInstallerType(wanted.type)) return installerRun(ctx, options, { ...wanted, type: wanted.type }, common);
  const artifact = await source.resolve({ ...wanted, type: wanted.type, version: wanted.version as string });
  // The Java it needs against the server's image, before anything is downloaded or changed (docs/system.md 9).
  const java = { http, bases: settings.bases };
  const image = settings.panel ? await imagePlan(java, settings.panel, artifact) : undefined;
  if (dryRun) return showPlan(ctx, artifact, join(dir, JAR), { snapshot, ignoreWorldVersion, image });
  return replaceJar(ctx, {
    artifact,
    ...jobOf(options, {
      image,
      what: describe(artifact),
      dir,
      backup,
      ignoreWorldVersion,
      http,
      retryDelayMs,
      settings,
    }),
  });
}

/** What every install takes (InstallJob), from the command line and what the run read; the panel's fields are there. */
function jobOf(
  options: JarOptions,
  run: Pick<InstallJob, "image" | "what" | "dir" | "backup" | "ignoreWorldVersion" | "http" | "retryDelayMs"> & {
    settings: Settings;
  },
): InstallJob {
  const { settings, ...rest } = run;
  return {
    ...rest,
    control: settings.control as NonNullable<typeof settings.control>,
    stop: options.stop ?? false,
    lockWaitMs: options.lockWaitMs ?? 30 * 60_000,
    stateTimeoutMs: options.stateTimeoutMs ?? 5 * 60_000,
  };
}

/** What both kinds of install share, read once in runJarDownload. */
interface Common {
  dir: string;
  backup: BackupSettings | undefined;
  snapshot: boolean;
  ignoreWorldVersion: boolean;
  http: HttpClient;
  retryDelayMs: number;
  source: Source;
  settings: Settings;
}

/**
 * A loader by its own installer (NeoForge, Forge): its plan with --dry-run, else the install (loader-install.ts). The
 * Java the game version needs, and the installer itself (Quilt's 17), is compared with the server's image first.
 */
async function installerRun(
  ctx: Pick<ToolContext, "paths" | "env" | "clock" | "stdout" | "stderr" | "signal" | "runner" | "atExit">,
  options: JarOptions,
  wanted: Wanted & { type: InstallerType },
  common: Common,
): Promise<number> {
  const { dir, backup, snapshot, ignoreWorldVersion, http, retryDelayMs, source, settings } = common;
  const dryRun = options.dryRun ?? false;
  const request = {
    type: wanted.type,
    version: wanted.version as string,
    loader: wanted.loader,
    channel: wanted.channel,
  };
  const artifact = await source.resolveInstaller(request);
  const need = await installerJava({ http, bases: settings.bases }, artifact);
  const what = `${LOADER_LABELS[artifact.type]} ${artifact.loader} for Minecraft ${artifact.game}`;
  const image = settings.panel
    ? await planImage(createPanelClient({ ...settings.panel, clock: ctx.clock }), need, what, artifact.javaAtMost)
    : undefined;
  if (dryRun) return showInstallerPlan(ctx, artifact, dir, { snapshot, ignoreWorldVersion, image });
  const installer = dockerFor(settings, what);
  return installLoader(ctx, {
    loader: { kind: "installer", artifact, ...installer },
    game: artifact.game,
    ...jobOf(options, { image, what, dir, backup, ignoreWorldVersion, http, retryDelayMs, settings }),
  });
}

/** The Java a loader's install needs: the game version's, and the installer's own (Quilt's 17), whichever is newer. */
async function installerJava(
  java: { http: HttpClient; bases: Parameters<typeof requiredJava>[0]["bases"] },
  artifact: InstallerArtifact,
): Promise<number> {
  const game = await requiredJava(java, { type: "vanilla", version: artifact.game });
  return Math.max(game ?? 0, artifact.javaAtLeast);
}

/** Docker's socket for a loader's installer, its time limit and network: DOCKER_SOCKET off is a configuration error. */
function dockerFor(settings: Settings, what: string) {
  const installer = settings.installer as NonNullable<typeof settings.installer>;
  if (!installer.socket) {
    throw new ConfigError(
      `DOCKER_SOCKET is off: ${what} is installed by its installer, run in the server's image through Docker`,
      {
        where: "DOCKER_SOCKET",
        hint: "set DOCKER_SOCKET to Wings' Docker socket, /var/run/docker.sock",
      },
    );
  }
  return { socket: installer.socket, installerTimeoutMs: installer.timeoutMs, installerNetwork: installer.network };
}

/**
 * A Modrinth modpack (--mrpack, --modrinth): the pack fetched and read (every path, address and size checked before
 * anything is written), its loader resolved as --type would, the world's version and the server's Java compared as
 * for a jar; its plan with --dry-run, else the pack and its loader installed together (loader-install.ts).
 */
async function packRun(
  ctx: Pick<ToolContext, "paths" | "env" | "clock" | "stdout" | "stderr" | "signal" | "runner" | "atExit">,
  options: JarOptions,
  settings: Settings,
): Promise<number> {
  const dryRun = options.dryRun ?? false;
  const { http, retryDelayMs } = hostsClient(ctx, settings);
  const source = createSource(http, settings.bases);
  const dir = settings.worldDir as string;
  const opened = await openPack(
    { mrpack: options.mrpack, modrinth: options.modrinth, packVersion: options.packVersion, game: options.version },
    { http, clock: ctx.clock, retryDelayMs, modrinth: settings.modrinth },
  );
  let zip: MrpackZip | undefined;
  try {
    const read = await readMrpack(opened.fd, { where: opened.where });
    zip = read.zip;
    const { pack } = read;
    if (options.version !== undefined && pack.game !== options.version) {
      throw new UsageError(
        `the modpack ${pack.name} ${pack.versionId} is for Minecraft ${pack.game}, not ${options.version}`,
        {
          where: opened.where,
          hint: "give its version for your game version with --pack-version, or leave VERSION out",
        },
      );
    }
    refuseWorldClash(dir, pack, opened.where);
    const loader = await resolvePackLoader(source, pack, opened.where);
    const what = `the modpack ${pack.name} ${pack.versionId} (Minecraft ${pack.game}, ${loaderWords(loader)})`;
    const ignoreWorldVersion = options.ignoreWorldVersion ?? false;
    const snapshot = (await checkNotOlder(dir, pack.game, what, ignoreWorldVersion)) && options.backup !== false;
    const backup = snapshot && !dryRun ? settings.backup(dir) : undefined;
    const java = { http, bases: settings.bases };
    const need =
      loader.kind === "installer"
        ? await installerJava(java, loader.artifact)
        : await requiredJava(java, { type: "fabric", version: pack.game, artifact: loader.artifact });
    const image = settings.panel
      ? await planImage(
          createPanelClient({ ...settings.panel, clock: ctx.clock }),
          need,
          what,
          loader.kind === "installer" ? loader.artifact.javaAtMost : undefined,
        )
      : undefined;
    if (dryRun)
      return showPackPlan(ctx, { pack, loader, where: opened.where, dir, snapshot, ignoreWorldVersion, image });
    return await installLoader(ctx, {
      loader:
        loader.kind === "installer"
          ? { kind: "installer", artifact: loader.artifact, ...dockerFor(settings, what) }
          : { kind: "jar", artifact: loader.artifact },
      game: pack.game,
      pack: { pack, zip, hostMap: settings.modrinth.hostMap },
      ...jobOf(options, { image, what, dir, backup, ignoreWorldVersion, http, retryDelayMs, settings }),
    });
  } finally {
    zip?.close();
    opened.close();
  }
}

/**
 * Exit 2 when a folder the pack replaces whole is the world's (server.properties' level-name, which the game's side
 * writes: `level-name=config` would have the pack move the world aside), or one of its Bukkit-style dimensions.
 */
function refuseWorldClash(dir: string, pack: ModPack, where: string): void {
  let volume: VolumeDir;
  try {
    volume = VolumeDir.open(dir);
  } catch {
    return; // no volume: installLoader says so in its own words
  }
  try {
    const level = levelName(volume);
    const worlds = [level, `${level}_nether`, `${level}_the_end`];
    const clash = packTops(pack).find((top) => worlds.includes(top.replace(/\/$/, "")));
    if (clash) {
      throw new UsageError(`the modpack replaces ${clash}, which is a world's folder here (level-name=${level})`, {
        where,
        hint: "nothing was installed; set level-name in server.properties to another folder, or use another pack",
      });
    }
    // A file of the pack's at the top would move a folder of the server's (a mod's backups/, its map) aside, to be
    // deleted with the kept directory at the next install.
    const folder = packTops(pack).find((top) => !top.endsWith("/") && volume.lstat(top)?.isDirectory());
    if (folder) {
      throw new UsageError(`the modpack's file ${folder} would replace the folder ${folder} here`, {
        where,
        hint: "nothing was installed; a pack replaces folders only with folders",
      });
    }
  } finally {
    volume.close();
  }
}

/** The Java the artifact needs, compared with the server's image: keep it, or the egg's image to switch to (exit 2: none). */
async function imagePlan(
  java: { http: HttpClient; bases: Parameters<typeof requiredJava>[0]["bases"] },
  control: { url: string; key: string; serverId: string },
  artifact: Artifact,
): Promise<ImagePlan> {
  const need = await requiredJava(java, { type: artifact.type, version: artifact.version, artifact });
  const panel = createPanelClient({ url: control.url, key: control.key, serverId: control.serverId });
  return planImage(panel, need, `${LABELS[artifact.type]} ${artifact.version}`);
}

/**
 * Exit 2 when the world was saved by a newer version than the one asked for, or level.dat says a version no game writes
 * or cannot be read (nothing fetched yet); not checked with --ignore-world-version. True when the volume holds a world
 * (its level's folder), which the pre-upgrade snapshot keeps.
 */
async function checkNotOlder(
  dir: string,
  version: string,
  what: string,
  ignoreWorldVersion: boolean,
): Promise<boolean> {
  let volume: VolumeDir;
  try {
    volume = VolumeDir.open(dir);
  } catch {
    return false; // no volume: replaceJar says so in its own words
  }
  try {
    if (!ignoreWorldVersion) refuseDowngrade(await worldSaver(volume), dataVersionOf(version), what);
    return volume.lstat(levelName(volume))?.isDirectory() === true;
  } finally {
    volume.close();
  }
}

/** --list: the versions of a type, or the builds of a version, one a line. */
async function listAvailable(ctx: Pick<ToolContext, "stdout">, source: Source, wanted: Wanted): Promise<number> {
  const lines = await source.list(wanted.type, wanted.version);
  ctx.stdout.write(lines.length ? `${lines.join("\n")}\n` : "");
  return 0;
}

/** --dry-run's image line: the switch, or the image kept and why. */
function imageLine(image: ImagePlan | undefined): string {
  if (!image) return "not checked (backup.env does not name the panel: CONTROL_URL, CONTROL_KEY, SERVER_ID)";
  if (image.kind === "switch") {
    return `${image.from} → ${image.to.image} (needs Java ${image.need}, the image has ${image.had}; switched with the swap)`;
  }
  if (image.unchecked) return `${image.image ?? "unknown"} kept (not compared: ${image.unchecked})`;
  return `${image.image} kept (needs Java ${image.need}, the image has ${image.had})`;
}

/** The plans' last lines: the snapshot taken first, and the world's version when it is not checked. */
function firstLines(plan: { snapshot: boolean; ignoreWorldVersion: boolean }): string[] {
  return [
    `  first:    ${plan.snapshot ? "a snapshot of the world, tagged pre-upgrade" : "no snapshot (no world in the volume, or --no-backup)"}`,
    ...(plan.ignoreWorldVersion ? ["  world:    its version not checked (--ignore-world-version)"] : []),
  ];
}

/** --dry-run: what would be installed, from where, verified how, and where to. */
function showPlan(
  ctx: Pick<ToolContext, "stdout">,
  artifact: Artifact,
  jar: string,
  plan: { snapshot: boolean; ignoreWorldVersion: boolean; image: ImagePlan | undefined },
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
      `  image:    ${imageLine(plan.image)}`,
      ...firstLines(plan),
      "",
    ].join("\n"),
  );
  return 0;
}

/** The installer's command line as the plan shows it (an argument with a space quoted). */
function commandLine(cmd: string[]): string {
  return cmd.map((part) => (/^[\w@%+=:,./-]+$/.test(part) ? part : `'${part.replace(/'/g, "'\\''")}'`)).join(" ");
}

/** --dry-run of a loader: which installer, from where, verified how, the command it runs, and where its output goes. */
function showInstallerPlan(
  ctx: Pick<ToolContext, "stdout">,
  artifact: InstallerArtifact,
  dir: string,
  plan: { snapshot: boolean; ignoreWorldVersion: boolean; image: ImagePlan | undefined },
): number {
  const { installer } = artifact;
  const checksum = installer.checksum
    ? `${installer.checksum.algorithm} ${installer.checksum.hex} (the maven's)`
    : "no checksum published: only its size (Content-Length) and that it is a jar";
  ctx.stdout.write(
    [
      `Would install ${LOADER_LABELS[artifact.type]} ${artifact.loader} for Minecraft ${artifact.game} (nothing done, --dry-run):`,
      `  file:     ${installer.fileName} (the installer)${installer.size ? `, ${formatBytes(installer.size)}` : ""}`,
      `  from:     ${installer.url}`,
      `  verify:   ${checksum}`,
      `  run:      ${commandLine(artifact.cmd)} (${artifact.javaAtMost === artifact.javaAtLeast ? `Java ${artifact.javaAtLeast} only` : `the installer needs Java ${artifact.javaAtLeast} or newer`})`,
      `  image:    ${imageLine(plan.image)}`,
      `  into:     ${dir} (what the installer writes; the files it replaces kept aside)`,
      ...firstLines(plan),
      "",
    ].join("\n"),
  );
  return 0;
}

/** --dry-run of a modpack: the pack, its loader and from where, the image, and where it all goes. */
function showPackPlan(
  ctx: Pick<ToolContext, "stdout">,
  plan: {
    pack: ModPack;
    loader: PackLoader;
    where: string;
    dir: string;
    snapshot: boolean;
    ignoreWorldVersion: boolean;
    image: ImagePlan | undefined;
  },
): number {
  const { pack, loader } = plan;
  const file = loader.kind === "installer" ? loader.artifact.installer : loader.artifact;
  const checksum = file.checksum ? `${file.checksum.algorithm} ${file.checksum.hex}` : "no checksum published";
  ctx.stdout.write(
    [
      `Would install the modpack ${pack.name} ${pack.versionId} (nothing done, --dry-run):`,
      ...packPlanLines(pack, loader, plan.where),
      loader.kind === "installer"
        ? `  loader:   ${file.fileName} from ${file.url} (${checksum}), run as ${commandLine(loader.artifact.cmd)} in the server's image`
        : `  loader:   ${file.fileName} from ${file.url} (${checksum}), as server.jar`,
      `  image:    ${imageLine(plan.image)}`,
      `  into:     ${plan.dir}`,
      ...firstLines(plan),
      "",
    ].join("\n"),
  );
  return 0;
}
