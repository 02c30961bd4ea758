import { join } from "node:path";
import { UsageError } from "@mcops/core/errors";
import { formatBytes } from "@mcops/core/format";
import { createHttpClient } from "@mcops/core/http";
import type { ToolContext } from "@mcops/core/tool";
import { VERSION } from "@mcops/core/version";
import { JAR, PREVIOUS } from "./install.ts";
import { replaceJar } from "./replace.ts";
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

interface JarOptions {
  version?: string | undefined;
  type?: string | undefined;
  build?: string | undefined;
  channel?: string | undefined;
  list?: boolean | undefined;
  dryRun?: boolean | undefined;
  stop?: boolean | undefined;
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
  if (!options.list && version === undefined) {
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
  ctx: Pick<ToolContext, "paths" | "env" | "clock" | "stdout" | "stderr" | "signal">,
  options: JarOptions,
): Promise<number> {
  const wanted = checkRequest(options);
  const list = options.list ?? false;
  const dryRun = options.dryRun ?? false;
  const settings = loadSettings(ctx, { type: wanted.type, list, dryRun, args: options.args ?? {} });
  const retryDelayMs = Number(ctx.env.MCOPS_RETRY_MS ?? 1000);
  const http = createHttpClient({ userAgent: userAgent(settings.contact), retryDelayMs, signal: ctx.signal });
  const source = createSource(http, settings.bases);
  if (list) return listAvailable(ctx, source, wanted);

  const artifact = await source.resolve({ ...wanted, version: wanted.version as string });
  const dir = settings.worldDir as string;
  if (dryRun) return showPlan(ctx, artifact, join(dir, JAR));
  return replaceJar(ctx, {
    artifact,
    what: describe(artifact),
    dir,
    control: settings.control as NonNullable<typeof settings.control>,
    http,
    retryDelayMs,
    stop: options.stop ?? false,
    lockWaitMs: options.lockWaitMs ?? 30 * 60_000,
    stateTimeoutMs: options.stateTimeoutMs ?? 5 * 60_000,
  });
}

/** --list: the versions of a type, or the builds of a version, one a line. */
async function listAvailable(ctx: Pick<ToolContext, "stdout">, source: Source, wanted: Wanted): Promise<number> {
  const lines = await source.list(wanted.type, wanted.version);
  ctx.stdout.write(lines.length ? `${lines.join("\n")}\n` : "");
  return 0;
}

/** --dry-run: what would be installed, from where, verified how, and where to. */
function showPlan(ctx: Pick<ToolContext, "stdout">, artifact: Artifact, jar: string): number {
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
      "",
    ].join("\n"),
  );
  return 0;
}
