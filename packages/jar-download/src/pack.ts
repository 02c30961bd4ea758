import { closeSync, constants, fstatSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Clock } from "@mcops/core/clock";
import { JobError, UsageError } from "@mcops/core/errors";
import { formatBytes } from "@mcops/core/format";
import { isErrno } from "@mcops/core/fs";
import type { HttpClient } from "@mcops/core/http";
import * as z from "zod/mini";
import { downloadVerified } from "./download.ts";
import { type InstallerArtifact, LOADER_LABELS } from "./loaders.ts";
import { MAX_MRPACK_BYTES, type ModPack, mapUrl, urlProblem } from "./mrpack.ts";
import { getJson } from "./service.ts";
import { type Artifact, LABELS, type Source } from "./sources.ts";

/**
 * Modrinth modpacks on the command line (issue 33): where the .mrpack comes from (a file, an address, a Modrinth
 * project's version through its API), and the loader it names resolved as --type would. Reading, checking and staging
 * the pack is mrpack.ts's; installing it with its loader is loader-install.ts's.
 */

/** Where the pack comes from, as the command line says it. */
export interface PackRequest {
  /** --mrpack: a file's path, or an http(s) address. */
  mrpack?: string | undefined;
  /** --modrinth: a Modrinth project's id or slug. */
  modrinth?: string | undefined;
  /** --pack-version: the project's version (its version number or id); default its newest release. */
  packVersion?: string | undefined;
  /** VERSION with --modrinth: only the project's versions for this game version. */
  game?: string | undefined;
}

/** Modrinth's hosts, real or stand-in: the API, and where its CDN's addresses are fetched from. */
export interface ModrinthHosts {
  api: string;
  /** Address prefixes rewritten before fetching (MODRINTH_CDN_BASE for https://cdn.modrinth.com). */
  hostMap: Readonly<Record<string, string>>;
}

/** The .mrpack open for reading: its descriptor, what to call it, and close() (which also removes a download). */
export interface OpenPack {
  fd: number;
  where: string;
  close(): void;
}

/**
 * A project slug or id as Modrinth has them (labrinth's slug: 3 to 64 of letters, digits and !@$()`.+,_-; an id: 8
 * base62 characters), never only dots: `..` in the API's path would be another route once the address is normalized.
 */
const PROJECT_PATTERN = /^(?!\.+$)[A-Za-z0-9!@$()`.+,_-]{3,64}$/;

/** The project versions the API lists (only the fields used). */
const modrinthVersions = z.array(
  z.object({
    id: z.string(),
    version_number: z.string(),
    version_type: z.string(),
    files: z.array(
      z.object({
        url: z.string(),
        filename: z.string(),
        primary: z.boolean(),
        size: z.number(),
        hashes: z.looseObject({ sha1: z.optional(z.string()), sha512: z.optional(z.string()) }),
      }),
    ),
  }),
);

const SHA512 = /^[0-9a-f]{128}$/;
const SHA1 = /^[0-9a-f]{40}$/;

/** The three ways to name a pack, checked before anything is read: one of --mrpack and --modrinth, never both. */
export function checkPackRequest(request: PackRequest): void {
  if (request.mrpack !== undefined && request.modrinth !== undefined) {
    throw new UsageError("--mrpack and --modrinth name a pack each: give one", {
      hint: "--mrpack FILE|URL, or --modrinth PROJECT [--pack-version V]",
    });
  }
  if (request.packVersion !== undefined && request.modrinth === undefined) {
    throw new UsageError("--pack-version is a Modrinth project's version: it goes with --modrinth", {
      hint: "a .mrpack file or address is one version already",
    });
  }
  if (request.modrinth !== undefined && !PROJECT_PATTERN.test(request.modrinth)) {
    throw new UsageError(`"${request.modrinth}" is not a Modrinth project`, {
      hint: "give its slug or id, as in modrinth.com/modpack/<slug>",
    });
  }
  if (request.packVersion !== undefined && !/^[0-9A-Za-z._+-]{1,64}$/.test(request.packVersion)) {
    throw new UsageError(`"${request.packVersion}" is not a pack version`, { hint: "its version number or id" });
  }
  if (request.mrpack === "")
    throw new UsageError("--mrpack needs a file or an address", { hint: "--mrpack pack.mrpack" });
}

/** Opens the pack: a file as it is; an address or a Modrinth project's version downloaded first (bounded, verified). */
export async function openPack(
  request: PackRequest,
  on: { http: HttpClient; clock: Clock; retryDelayMs: number; modrinth: ModrinthHosts },
): Promise<OpenPack> {
  if (request.modrinth !== undefined) {
    const file = await modrinthFile(on.http, on.modrinth, request);
    return downloadPack(
      {
        fileName: file.filename,
        url: mapUrl(file.url, on.modrinth.hostMap),
        size: file.size,
        checksum: { algorithm: "sha512", hex: file.sha512 },
      },
      on,
      { alsoVerify: [{ algorithm: "sha1", hex: file.sha1 }], where: file.url },
    );
  }
  const given = request.mrpack as string;
  if (/^https?:\/\//i.test(given)) {
    let name: string;
    try {
      name = decodeURIComponent(new URL(given).pathname.split("/").pop() ?? "") || "modpack.mrpack";
    } catch {
      throw new UsageError(`"${given}" is not an address`, { hint: "--mrpack https://…/pack.mrpack, or a file" });
    }
    return downloadPack({ fileName: name, url: given }, on, { where: given });
  }
  return openFile(given);
}

/** A local .mrpack: a regular file, opened without blocking (a FIFO) and without following a last link. */
function openFile(path: string): OpenPack {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (error) {
    if (isErrno(error, "ENOENT")) throw new UsageError("the modpack file does not exist", { where: path });
    if (isErrno(error, "ELOOP")) {
      throw new UsageError("the modpack file is a link: give the file it names", { where: path });
    }
    throw new UsageError(`the modpack file cannot be read (${(error as NodeJS.ErrnoException).code})`, {
      where: path,
    });
  }
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw new UsageError("the modpack is not a regular file", { where: path });
  }
  return { fd, where: path, close: () => closeSync(fd) };
}

/** Downloads into a private temporary directory (mode 700), bounded; opened, then the file and directory removed. */
async function downloadPack(
  artifact: Parameters<typeof downloadVerified>[0],
  on: { http: HttpClient; clock: Clock; retryDelayMs: number },
  options: { alsoVerify?: { algorithm: "sha1"; hex: string }[]; where: string },
): Promise<OpenPack> {
  const dir = mkdtempSync(join(tmpdir(), "mcops-mrpack-"));
  try {
    const path = join(dir, "pack.mrpack");
    await downloadVerified(artifact, path, {
      http: on.http,
      clock: on.clock,
      retryDelayMs: on.retryDelayMs,
      maxBytes: MAX_MRPACK_BYTES,
      ...(options.alsoVerify ? { alsoVerify: options.alsoVerify } : {}),
      untouched: "nothing was installed",
    });
    const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    return { fd, where: options.where, close: () => closeSync(fd) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The .mrpack of a Modrinth project's version: --pack-version's, else the newest release (for VERSION, if given). */
async function modrinthFile(http: HttpClient, hosts: ModrinthHosts, request: PackRequest) {
  const project = request.modrinth as string;
  const query = request.game ? `?game_versions=${encodeURIComponent(JSON.stringify([request.game]))}` : "";
  const url = `${hosts.api}/v2/project/${encodeURIComponent(project)}/version${query}`;
  const versions = await getJson(
    http,
    url,
    modrinthVersions,
    "Modrinth's API",
    () =>
      new UsageError(`Modrinth has no project "${project}"`, {
        hint: "give its slug or id, as in modrinth.com/modpack/<slug>",
      }),
  );
  const wanted = request.packVersion;
  const version = wanted
    ? versions.find((v) => v.version_number === wanted || v.id === wanted)
    : (versions.find((v) => v.version_type === "release") ?? versions[0]);
  const forGame = request.game ? ` for Minecraft ${request.game}` : "";
  if (!version) {
    throw new UsageError(
      wanted ? `${project} has no version "${wanted}"${forGame}` : `${project} has no version${forGame}`,
      { hint: `its versions are listed at modrinth.com/modpack/${project}/versions` },
    );
  }
  const file = version.files.find((f) => f.primary) ?? version.files[0];
  if (!file?.filename.endsWith(".mrpack")) {
    throw new UsageError(`${project} ${version.version_number} has no .mrpack: it is not a modpack`, {
      hint: "give a modpack's project; a mod is installed by the pack that lists it",
    });
  }
  const problem = urlProblem(file.url, ["cdn.modrinth.com"]);
  const sha512 = file.hashes.sha512?.toLowerCase();
  const sha1 = file.hashes.sha1?.toLowerCase();
  if (problem || !sha512 || !SHA512.test(sha512) || !sha1 || !SHA1.test(sha1) || file.size > MAX_MRPACK_BYTES) {
    throw new JobError(
      `Modrinth's answer for ${project} ${version.version_number} is not one to download from (${problem ?? (file.size > MAX_MRPACK_BYTES ? `${formatBytes(file.size)}, more than ${formatBytes(MAX_MRPACK_BYTES)}` : "no sha512 and sha1")})`,
      { where: url, hint: "nothing was installed" },
    );
  }
  // As the pack's own addresses are: normalized (":443", "/../") before MODRINTH_CDN_BASE is put in its place.
  const normalized = new URL(file.url).href;
  return { filename: file.filename, url: normalized, size: file.size, sha512, sha1, version: version.version_number };
}

/** The loader a pack names, as this build installs it: by its installer (NeoForge, Forge, Quilt) or as server.jar (Fabric). */
export type PackLoader = { kind: "installer"; artifact: InstallerArtifact } | { kind: "jar"; artifact: Artifact };

/** Resolves the pack's loader where --type would; a pack without one is refused before anything. */
export async function resolvePackLoader(source: Source, pack: ModPack, where: string): Promise<PackLoader> {
  const { type, version } = pack.loader;
  if (!type || !version) {
    throw new UsageError(`the modpack ${pack.name} names no loader (forge, neoforge, fabric-loader)`, {
      where,
      hint: "a server runs a pack's mods with its loader; use the pack's server files from its author",
    });
  }
  if (type === "fabric") {
    const artifact = await source.resolve({ type: "fabric", version: pack.game, build: version });
    return { kind: "jar", artifact };
  }
  const artifact = await source.resolveInstaller({ type, version: pack.game, loader: version, channel: undefined });
  return { kind: "installer", artifact };
}

/** "Fabric 0.16.10", "NeoForge 21.1.77": the pack's loader in words. */
export function loaderWords(loader: PackLoader): string {
  return loader.kind === "installer"
    ? `${LOADER_LABELS[loader.artifact.type]} ${loader.artifact.loader}`
    : `${LABELS[loader.artifact.type]} ${loader.artifact.build}`;
}

function count(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? "" : "s"}`;
}

/** The top-level names a pack writes, a folder with its slash: each replaced whole. */
export function packTops(pack: ModPack): string[] {
  const tops = new Map<string, boolean>();
  for (const entry of [...pack.files, ...pack.overrides]) {
    const [top = entry.path, ...rest] = entry.path.split("/");
    const folder = rest.length > 0 || ("directory" in entry && entry.directory);
    tops.set(top, (tops.get(top) ?? false) || folder);
  }
  return [...tops].map(([top, folder]) => (folder ? `${top}/` : top)).sort();
}

/** The pack's lines for --dry-run: what it is, what it downloads and extracts, and what it replaces. */
export function packPlanLines(pack: ModPack, loader: PackLoader, where: string): string[] {
  const bytes = pack.files.reduce((sum, file) => sum + file.size, 0);
  return [
    `  pack:     ${pack.name} ${pack.versionId}, from ${where}`,
    `  game:     Minecraft ${pack.game}, ${loaderWords(loader)}`,
    `  files:    ${count(pack.files.length, "file")} downloaded (${formatBytes(bytes)}), each checked against its sha512 and sha1${pack.skipped ? `; ${pack.skipped} for clients only left out` : ""}`,
    `  extract:  ${count(pack.overrides.filter((o) => !o.directory).length, "file")} of overrides/ and server-overrides/`,
    `  replaces: ${packTops(pack).join(", ") || "nothing"} (each whole; what was there kept aside for --rollback)`,
  ];
}
