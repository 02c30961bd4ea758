import { JobError, UsageError } from "@mcops/core/errors";
import { HttpFailure } from "@mcops/core/http";
import * as z from "zod/mini";
import type { Channel, ChecksumAlgorithm, Hosts, InstallerType } from "./service.ts";
import { failed, getJson } from "./service.ts";

/**
 * Where the loaders that ship an installer (docs/system.md 1's heavy modpack loaders Forge and NeoForge, and Quilt)
 * come from, which loader version a game version gets, and how the installer is run (issue 33; the vendors' own
 * sources are named in /tmp/research33.md's sections 1–3 and in packages/jar-download/README.md):
 * - NeoForge: the versions in maven.neoforged.net's maven-metadata.xml; a version names its game version (21.1.x →
 *   1.21.1, 21.0.x → 1.21, year style 26.1.0.x → 26.1); "-beta" marks a pre-release. Newest stable by default.
 * - Forge: the versions "<mc>-<forge>" in maven.minecraftforge.net's metadata; the default is the promotion
 *   (files.minecraftforge.net promotions_slim.json: recommended, else latest), as the panel's Forge egg does.
 * - Quilt: meta.quiltmc.org v3's loaders for the game version (newest first; a "-" marks a beta) and its newest
 *   installer, the jar from Quilt's release repository.
 * Each installer is verified against its maven's published .sha256, else .sha1 (bare hex); with neither, only its size
 * (Content-Length) can be checked, and the plan says so.
 */

export const LOADER_LABELS: Record<InstallerType, string> = { neoforge: "NeoForge", forge: "Forge", quilt: "Quilt" };

export interface InstallerRequest {
  type: InstallerType;
  /** The game version ("1.21.1"). */
  version: string;
  /** --loader: a loader version of this game version; default the newest stable (Forge: its promotion). */
  loader?: string | undefined;
  /** BETA or ALPHA: a beta loader may be the default (NeoForge "-beta", Quilt "-beta.N"). */
  channel?: Channel | undefined;
}

export interface InstallerArtifact {
  type: InstallerType;
  /** The game version. */
  game: string;
  /** The loader version (Forge: its own part, "47.3.0"). */
  loader: string;
  installer: {
    fileName: string;
    url: string;
    size?: number;
    checksum?: { algorithm: ChecksumAlgorithm; hex: string };
  };
  /** The installer's command line inside the container, its working directory the staging directory. */
  cmd: string[];
  /** The least Java the installer itself runs on (the game may need more: java.ts). */
  javaAtLeast: number;
  /** The newest Java the loader runs on, when it has such a bound (Forge before 1.17: Java 8). */
  javaAtMost?: number | undefined;
}

/**
 * Forge before Minecraft 1.17 is a jar to start (`forge-<mc>-<v>.jar` beside `minecraft_server.<mc>.jar`), not
 * run.sh and an arguments file (MinecraftForge/Installer ServerInstall, InstallV1's serverJarPath); and it runs on
 * Java 8 only: LaunchWrapper (to 1.12.2) casts the system class loader to a URLClassLoader, which Java 9 ended, and
 * the panel's Forge egg gives these versions its Java 8 image.
 */
export function isLegacyForge(type: InstallerType, game: string): boolean {
  return type === "forge" && compareVersions(game, "1.17") < 0;
}

/** maven-metadata.xml of a loader's artifact is a few hundred KiB (Forge's, every version since 2012); far less than this. */
const METADATA_MAX_BYTES = 8 * 1024 * 1024;
/** A checksum file is one hex digest, perhaps followed by a file name. */
const CHECKSUM_MAX_BYTES = 1024;
/** More versions than any loader has published; a longer list is not read on. */
const VERSIONS_MAX = 20_000;

function enc(part: string): string {
  return encodeURIComponent(part);
}

function listHint(type: InstallerType, version?: string): string {
  return `see what there is: jar-download${version ? ` ${version}` : ""} --list --type ${type}`;
}

/** "1.21.1" > "1.21" > "1.20.4"; "21.1.77" > "21.1.77-beta" > "21.1.72": numbers as numbers, a suffix before none. */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const match = /^(\d+(?:\.\d+)*)(.*)$/.exec(v);
    return match ? { nums: (match[1] ?? "").split(".").map(Number), suffix: match[2] ?? "" } : { nums: [], suffix: v };
  };
  const pa = parse(a);
  const pb = parse(b);
  for (let i = 0; i < Math.max(pa.nums.length, pb.nums.length); i++) {
    const diff = (pa.nums[i] ?? -1) - (pb.nums[i] ?? -1);
    if (diff !== 0) return diff;
  }
  if (pa.suffix === pb.suffix) return 0;
  if (pa.suffix === "") return 1;
  if (pb.suffix === "") return -1;
  return pa.suffix < pb.suffix ? -1 : 1;
}

const newestFirst = (versions: Iterable<string>): string[] => [...versions].sort((a, b) => compareVersions(b, a));

/**
 * The game version a NeoForge version is for (modrinth/code daedalus_client forge.rs L143-L181): A.B.C[-beta] with
 * A < 26 is 1.A when B is 0, else 1.A.B; the year style A.B.C.D[-beta] (A ≥ 26) is A.B when C is 0, else A.B.C.
 * Undefined for a version in neither shape (or a pre-release suffix that is not a word: "1.20.1-47.1.74").
 */
export function neoforgeGame(version: string): string | undefined {
  const match = /^(\d+)\.(\d+)\.(\d+)(?:\.(\d+))?(?:-[A-Za-z][0-9A-Za-z.+-]*)?$/.exec(version);
  // NeoForge's own numbering began at 20.2 (1.20.2); the legacy 1.20.1 line is another artifact.
  if (!match || Number(match[1]) < 20) return undefined;
  const [, a = "", b = "", c = "", d] = match;
  if (Number(a) >= 26) {
    if (d === undefined) return undefined;
    return c === "0" ? `${a}.${b}` : `${a}.${b}.${c}`;
  }
  if (d !== undefined) return undefined;
  return b === "0" ? `1.${a}` : `1.${a}.${b}`;
}

/** A pre-release: NeoForge's "-beta", Quilt's "-beta.1" (quilt-installer takes the first version without "-"). */
const isBeta = (version: string): boolean => version.includes("-");

/** A body read whole but never past `max` bytes: a host answering something endless is cut off with one line. */
async function readBounded(response: Response, url: string, max: number, what: string): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > max) {
      await reader.cancel();
      throw new JobError(`${what}: the answer is larger than ${max} bytes`, {
        where: url,
        hint: "this is not the file the tool reads; check the *_BASE setting for this host",
      });
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

async function boundedText(hosts: Hosts, url: string, max: number, what: string): Promise<string> {
  let response: Response;
  try {
    response = await hosts.http.get(url);
  } catch (error) {
    failed(error, what);
  }
  return readBounded(response, url, max, what);
}

/** The <version>s of a maven-metadata.xml, in the file's order (publication order). */
export function mavenVersions(xml: string): string[] {
  const versions: string[] = [];
  for (const match of xml.matchAll(/<version>\s*([^<\s]{1,100})\s*<\/version>/g)) {
    versions.push(match[1] ?? "");
    if (versions.length >= VERSIONS_MAX) break;
  }
  return versions;
}

async function metadataVersions(hosts: Hosts, url: string, type: InstallerType): Promise<string[]> {
  const xml = await boundedText(hosts, url, METADATA_MAX_BYTES, `reading ${LOADER_LABELS[type]}'s maven metadata`);
  const versions = mavenVersions(xml);
  if (versions.length === 0) {
    throw new JobError(`${LOADER_LABELS[type]}'s maven metadata lists no versions`, {
      where: url,
      hint: "this is not a maven-metadata.xml; check the *_BASE setting for this host",
    });
  }
  return versions;
}

/**
 * The maven's published checksum of `url`: its .sha256 sibling, else its .sha1 (bare hex, perhaps followed by a file
 * name, as Gradle and Maven write them); undefined when neither is there (404). A sibling that is there but not a
 * digest is an error: the file would go unchecked against what the host says.
 */
export async function publishedChecksum(
  hosts: Hosts,
  url: string,
): Promise<{ algorithm: ChecksumAlgorithm; hex: string } | undefined> {
  for (const [algorithm, length] of [
    ["sha256", 64],
    ["sha1", 40],
  ] as const) {
    const file = `${url}.${algorithm}`;
    const what = `reading the installer's ${algorithm}`;
    let response: Response;
    try {
      response = await hosts.http.get(file);
    } catch (error) {
      if (error instanceof HttpFailure && error.status === 404) continue; // not published: the next one
      failed(error, what);
    }
    const text = await readBounded(response, file, CHECKSUM_MAX_BYTES, what);
    const hex = text.trim().split(/\s+/)[0]?.toLowerCase() ?? "";
    if (hex.length !== length || !/^[0-9a-f]+$/.test(hex)) {
      throw new JobError(`the installer's ${algorithm} file is not a ${algorithm} digest`, {
        where: file,
        hint: "try again later; if it stays so, the maven (or a mirror in between) serves something else",
      });
    }
    return { algorithm, hex };
  }
  return undefined;
}

/** Versions near `wanted`, for the line that refuses it: those of its series, else the newest few. */
function closeMatches(wanted: string, versions: string[]): string {
  const series = wanted.split(/[.-]/).slice(0, 2).join(".");
  const near = versions.filter((v) => v.startsWith(series));
  const shown = newestFirst(near.length > 0 ? near : versions).slice(0, 5);
  return shown.length > 0 ? `close: ${shown.join(", ")}` : "";
}

function unknownLoader(type: InstallerType, game: string, loader: string, versions: string[]): UsageError {
  const close = closeMatches(loader, versions);
  return new UsageError(`${LOADER_LABELS[type]} has no version ${loader} for Minecraft ${game}`, {
    hint: `${close ? `${close}; ` : ""}${listHint(type, game)}`,
  });
}

function noBuilds(type: InstallerType, game: string): UsageError {
  return new UsageError(`${LOADER_LABELS[type]} has no build for Minecraft ${game}`, { hint: listHint(type) });
}

/** The loader asked for (it must be one of `forGame`), else the newest stable (any with --channel beta or alpha). */
function pickLoader(type: InstallerType, request: InstallerRequest, forGame: string[], all: string[]): string {
  const game = request.version;
  if (request.loader !== undefined && request.loader !== "latest") {
    if (forGame.includes(request.loader)) return request.loader;
    throw unknownLoader(type, game, request.loader, all.includes(request.loader) ? forGame : all);
  }
  const anyChannel = request.channel === "BETA" || request.channel === "ALPHA";
  const pick = forGame.find((v) => anyChannel || !isBeta(v));
  if (pick) return pick;
  const newest = forGame[0] as string;
  throw new UsageError(`${LOADER_LABELS[type]} has no stable build for Minecraft ${game} yet (newest: ${newest})`, {
    hint: `take it anyway with --loader ${newest} (or --channel beta)`,
  });
}

// -- NeoForge ----------------------------------------------------------------------------------------------------

const NEOFORGE_PATH = "releases/net/neoforged/neoforge";

async function neoforgeVersions(hosts: Hosts): Promise<string[]> {
  return metadataVersions(hosts, `${hosts.bases.neoforge}/${NEOFORGE_PATH}/maven-metadata.xml`, "neoforge");
}

async function resolveNeoforge(hosts: Hosts, request: InstallerRequest): Promise<InstallerArtifact> {
  const game = request.version;
  const all = await neoforgeVersions(hosts);
  const forGame = newestFirst(all.filter((v) => neoforgeGame(v) === game));
  const asked = request.loader;
  if (asked !== undefined && asked !== "latest" && all.includes(asked) && !forGame.includes(asked)) {
    throw new UsageError(
      `NeoForge ${asked} is for Minecraft ${neoforgeGame(asked) ?? "another version"}, not ${game}`,
      {
        hint: `run jar-download ${neoforgeGame(asked) ?? game} --type neoforge --loader ${asked}, or ${listHint("neoforge", game)}`,
      },
    );
  }
  if (forGame.length === 0 && (asked === undefined || asked === "latest")) throw noBuilds("neoforge", game);
  const loader = pickLoader("neoforge", request, forGame, all);
  const fileName = `neoforge-${loader}-installer.jar`;
  return withChecksum(hosts, {
    type: "neoforge",
    game,
    loader,
    installer: { fileName, url: `${hosts.bases.neoforge}/${NEOFORGE_PATH}/${enc(loader)}/${fileName}` },
    cmd: ["java", "-jar", fileName, "--installServer"],
    javaAtLeast: 8,
  });
}

async function listNeoforge(hosts: Hosts, version: string | undefined): Promise<string[]> {
  const all = await neoforgeVersions(hosts);
  if (version === undefined) {
    return newestFirst(new Set(all.map(neoforgeGame).filter((g): g is string => g !== undefined)));
  }
  const forGame = newestFirst(all.filter((v) => neoforgeGame(v) === version));
  if (forGame.length === 0) throw noBuilds("neoforge", version);
  return forGame.map((v) => (isBeta(v) ? `${v}\tbeta` : v));
}

// -- Forge -------------------------------------------------------------------------------------------------------

const FORGE_PATH = "net/minecraftforge/forge";

export const forgePromotions = z.object({ promos: z.record(z.string(), z.string()) });

/** Forge's versions by game version: "1.20.1-47.3.0" → 1.20.1 → "47.3.0" (1.7.10's "-1.7.10" tail kept). */
async function forgeVersions(hosts: Hosts): Promise<Map<string, string[]>> {
  const all = await metadataVersions(hosts, `${hosts.bases.forge}/${FORGE_PATH}/maven-metadata.xml`, "forge");
  const byGame = new Map<string, string[]>();
  for (const full of all) {
    const dash = full.indexOf("-");
    if (dash <= 0 || dash === full.length - 1) continue;
    const game = full.slice(0, dash);
    byGame.set(game, [...(byGame.get(game) ?? []), full.slice(dash + 1)]);
  }
  return byGame;
}

async function forgePromos(hosts: Hosts): Promise<Record<string, string>> {
  const url = `${hosts.bases.forgeFiles}/${FORGE_PATH}/promotions_slim.json`;
  return (await getJson(hosts.http, url, forgePromotions, "reading Forge's promotions")).promos;
}

async function resolveForge(hosts: Hosts, request: InstallerRequest): Promise<InstallerArtifact> {
  const game = request.version;
  const byGame = await forgeVersions(hosts);
  const forGame = newestFirst(byGame.get(game) ?? []);
  let loader: string;
  // --loader takes the Forge part ("47.3.0") or the whole version ("1.20.1-47.3.0").
  const asked = request.loader?.startsWith(`${game}-`) ? request.loader.slice(game.length + 1) : request.loader;
  if (asked !== undefined && asked !== "latest") {
    if (!forGame.includes(asked)) {
      const elsewhere = [...byGame].find(([, loaders]) => loaders.includes(asked))?.[0];
      if (elsewhere !== undefined) {
        throw new UsageError(`Forge ${asked} is for Minecraft ${elsewhere}, not ${game}`, {
          hint: `run jar-download ${elsewhere} --type forge --loader ${asked}, or ${listHint("forge", game)}`,
        });
      }
      throw unknownLoader("forge", game, asked, forGame.length > 0 ? forGame : [...byGame.values()].flat());
    }
    loader = asked;
  } else {
    if (forGame.length === 0) throw noBuilds("forge", game);
    // The panel's Forge egg: recommended, else latest; a promotion the metadata does not list is not taken.
    const promos = await forgePromos(hosts);
    const promoted = [promos[`${game}-recommended`], promos[`${game}-latest`]].find(
      (v): v is string => v !== undefined && forGame.includes(v),
    );
    loader = promoted ?? (forGame[0] as string);
  }
  const full = `${game}-${loader}`;
  const fileName = `forge-${full}-installer.jar`;
  return withChecksum(hosts, {
    type: "forge",
    game,
    loader,
    installer: { fileName, url: `${hosts.bases.forge}/${FORGE_PATH}/${enc(full)}/${fileName}` },
    cmd: ["java", "-jar", fileName, "--installServer"],
    javaAtLeast: 8,
    ...(isLegacyForge("forge", game) ? { javaAtMost: 8 } : {}),
  });
}

async function listForge(hosts: Hosts, version: string | undefined): Promise<string[]> {
  const byGame = await forgeVersions(hosts);
  if (version === undefined) return newestFirst(byGame.keys());
  const forGame = newestFirst(byGame.get(version) ?? []);
  if (forGame.length === 0) throw noBuilds("forge", version);
  const promos = await forgePromos(hosts);
  return forGame.map((v) => {
    const marks = ["recommended", "latest"].filter((kind) => promos[`${version}-${kind}`] === v);
    return marks.length > 0 ? `${v}\t${marks.join(", ")}` : v;
  });
}

// -- Quilt -------------------------------------------------------------------------------------------------------

export const quiltGames = z.array(z.object({ version: z.string(), stable: z.boolean() }));
export const quiltLoadersForGame = z.array(z.object({ loader: z.object({ version: z.string() }) }));
export const quiltInstallers = z.array(z.object({ version: z.string() }));

async function quiltLoadersOf(hosts: Hosts, game: string): Promise<string[]> {
  const loaders = await getJson(
    hosts.http,
    `${hosts.bases.quilt}/v3/versions/loader/${enc(game)}`,
    quiltLoadersForGame,
    "asking Quilt meta for loaders",
    () => noBuilds("quilt", game),
  );
  if (loaders.length === 0) throw noBuilds("quilt", game);
  return loaders.map((l) => l.loader.version);
}

async function resolveQuilt(hosts: Hosts, request: InstallerRequest): Promise<InstallerArtifact> {
  const game = request.version;
  const loaders = await quiltLoadersOf(hosts, game);
  const loader = pickLoader("quilt", request, loaders, loaders);
  const installers = await getJson(
    hosts.http,
    `${hosts.bases.quilt}/v3/versions/installer`,
    quiltInstallers,
    "asking Quilt meta for installers",
  );
  const installer = (installers.find((i) => !isBeta(i.version)) ?? installers[0])?.version;
  if (!installer) throw new JobError("Quilt meta lists no installer", { hint: "try again later" });
  const fileName = `quilt-installer-${installer}.jar`;
  const url = `${hosts.bases.quiltMaven}/org/quiltmc/quilt-installer/${enc(installer)}/${fileName}`;
  return withChecksum(hosts, {
    type: "quilt",
    game,
    loader,
    installer: { fileName, url },
    // quilt-installer CliInstaller: --install-dir needs "="; --download-server fetches Mojang's server.jar.
    cmd: ["java", "-jar", fileName, "install", "server", game, loader, "--download-server", "--install-dir=."],
    javaAtLeast: 17,
  });
}

async function listQuilt(hosts: Hosts, version: string | undefined): Promise<string[]> {
  if (version !== undefined) return (await quiltLoadersOf(hosts, version)).map((v) => (isBeta(v) ? `${v}\tbeta` : v));
  const url = `${hosts.bases.quilt}/v3/versions/game`;
  const games = await getJson(hosts.http, url, quiltGames, "asking Quilt meta for game versions");
  return games.map((g) => (g.stable ? g.version : `${g.version}\tunstable`));
}

// ----------------------------------------------------------------------------------------------------------------

async function withChecksum(hosts: Hosts, artifact: InstallerArtifact): Promise<InstallerArtifact> {
  const checksum = await publishedChecksum(hosts, artifact.installer.url);
  return checksum ? { ...artifact, installer: { ...artifact.installer, checksum } } : artifact;
}

/** The installer of a loader for a game version: which loader version, from where, checked how, run how. */
export function resolveInstaller(hosts: Hosts, request: InstallerRequest): Promise<InstallerArtifact> {
  switch (request.type) {
    case "neoforge":
      return resolveNeoforge(hosts, request);
    case "forge":
      return resolveForge(hosts, request);
    case "quilt":
      return resolveQuilt(hosts, request);
  }
}

/** --list for a loader: the game versions it has builds for, or its versions for one, newest first, betas marked. */
export function listLoader(hosts: Hosts, type: InstallerType, version: string | undefined): Promise<string[]> {
  switch (type) {
    case "neoforge":
      return listNeoforge(hosts, version);
    case "forge":
      return listForge(hosts, version);
    case "quilt":
      return listQuilt(hosts, version);
  }
}
