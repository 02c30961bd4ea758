import { createHash } from "node:crypto";
import { JobError, UsageError } from "@mcops/core/errors";
import { parseJsonOrUndefined } from "@mcops/core/format";
import type { HttpClient, HttpFailure } from "@mcops/core/http";
import * as z from "zod/mini";
import { type InstallerArtifact, type InstallerRequest, listLoader, resolveInstaller } from "./loaders.ts";
import {
  type Bases,
  type Channel,
  type ChecksumAlgorithm,
  failed,
  getJson,
  type Hosts,
  type InstallerType,
  shape,
} from "./service.ts";

/**
 * Where each server type's jar comes from, and how to tell it is the right one:
 * - Paper and Folia: PaperMC's download service, Fill v3 (docs/system.md 4.3's {download_base}). The builds list comes newest
 *   first with a channel each; `builds/latest` is the newest of any channel (it can be an ALPHA), so the newest STABLE
 *   one is picked from the list. The build names its download's URL, size and sha256.
 * - Purpur: api.purpurmc.org v2; a build has an md5 and a result (only SUCCESS builds are installed).
 * - vanilla: Mojang's version manifest v2 → the version's JSON (checked against the manifest's sha1) → the server
 *   download with its sha1 and size.
 * - Fabric: Fabric meta's server launcher jar for game version + loader (newest stable unless --build) + installer
 *   (newest stable). Fabric publishes no checksum for it: the size is checked against Content-Length and the file
 *   must be a jar.
 */
export const JAR_TYPES = ["paper", "folia", "purpur", "vanilla", "fabric"] as const;
export type JarType = (typeof JAR_TYPES)[number];

/** Every type jar-download takes: a jar, or an installer. */
export type ServerType = JarType | InstallerType;

export const LABELS: Record<JarType, string> = {
  paper: "Paper",
  folia: "Folia",
  purpur: "Purpur",
  vanilla: "Minecraft",
  fabric: "Fabric",
};

export interface Artifact {
  type: JarType;
  version: string;
  /** Build number (Paper, Folia, Purpur), loader version (Fabric), or the version again (vanilla). */
  build: string;
  channel?: string;
  fileName: string;
  url: string;
  /** Bytes, when the service says; otherwise Content-Length is all there is. */
  size?: number;
  checksum?: { algorithm: ChecksumAlgorithm; hex: string };
  /** vanilla: the Java the version needs (its JSON's javaVersion.majorVersion; 8 when absent), read with the jar's URL. */
  java?: number;
}

interface Request {
  type: JarType;
  version: string;
  /** undefined or "latest": the newest build of an accepted channel. */
  build?: string | undefined;
  /** The least stable channel accepted for "latest" (Paper, Folia): default STABLE. */
  channel?: Channel | undefined;
}

export interface Source {
  resolve(request: Request): Promise<Artifact>;
  /** Where a loader's installer comes from, checked, and how it is run (loaders.ts). */
  resolveInstaller(request: InstallerRequest): Promise<InstallerArtifact>;
  /** Lines for --list: the versions, or the builds (a loader's versions) of one version. */
  list(type: ServerType, version: string | undefined): Promise<string[]>;
}

// ---------------------------------------------------------------------------------------------------------------
// Response shapes (only the fields used; the services add more), exported for the tests that hold them to the
// hosts' real answers

const fillDownload = z.object({
  name: z.string(),
  // Hex in either case (a digest is a number, not a spelling); lowered where the artifact is made.
  checksums: z.object({ sha256: z.string().check(z.regex(/^[0-9a-f]{64}$/i)) }),
  size: z.number(),
  url: z.string(),
});
const fillBuild = z.object({
  id: z.number(),
  time: z.optional(z.string()),
  channel: z.string(),
  downloads: z.record(z.string(), fillDownload),
});
export const fillBuilds = z.array(fillBuild);
export const fillProject = z.object({ versions: z.record(z.string(), z.array(z.string())) });
export const fillError = z.object({ error: z.string(), message: z.optional(z.string()) });

export const purpurProject = z.object({ versions: z.array(z.string()) });
export const purpurVersion = z.object({ builds: z.object({ latest: z.string(), all: z.array(z.string()) }) });
export const purpurBuild = z.object({ build: z.string(), result: z.string(), md5: z.optional(z.string()) });

export const mojangManifest = z.object({
  latest: z.object({ release: z.string(), snapshot: z.string() }),
  versions: z.array(z.object({ id: z.string(), type: z.string(), url: z.string(), sha1: z.optional(z.string()) })),
});
export const mojangVersion = z.object({
  downloads: z.optional(z.record(z.string(), z.object({ sha1: z.string(), size: z.number(), url: z.string() }))),
  javaVersion: z.optional(z.object({ majorVersion: z.number() })),
});

export const fabricLoaders = z.array(z.object({ loader: z.object({ version: z.string(), stable: z.boolean() }) }));
export const fabricInstallers = z.array(z.object({ version: z.string(), stable: z.boolean() }));
export const fabricGames = z.array(z.object({ version: z.string(), stable: z.boolean() }));

// ---------------------------------------------------------------------------------------------------------------

const CHANNELS_ACCEPTED: Record<Channel, string[]> = {
  STABLE: ["STABLE", "RECOMMENDED"],
  BETA: ["STABLE", "RECOMMENDED", "BETA"],
  ALPHA: ["STABLE", "RECOMMENDED", "BETA", "ALPHA"],
};

function enc(part: string): string {
  return encodeURIComponent(part);
}

function listHint(type: JarType, version?: string): string {
  return `see what there is: jar-download --list --type ${type}${version ? ` ${version}` : ""}`;
}

function isNumber(build: string | undefined): build is string {
  return build !== undefined && /^\d+$/.test(build);
}

// -- Paper and Folia (Fill v3) -----------------------------------------------------------------------------------

function fillNotFound(type: JarType, version: string) {
  return (failure: HttpFailure): Error => {
    const error = fillError.safeParse(parseJsonOrUndefined(failure.body));
    if (error.success && error.data.error === "project_not_found") {
      return new JobError(`the download service has no project ${type}`, {
        where: failure.url,
        hint: "check DOWNLOAD_BASE: it must be PaperMC's download service or a mirror of it",
      });
    }
    return new UsageError(`${LABELS[type]} has no version ${version}`, { hint: listHint(type) });
  };
}

async function fillBuildsOf({ http, bases }: Hosts, type: JarType, version: string) {
  const url = `${bases.paper}/v3/projects/${type}/versions/${enc(version)}/builds`;
  const builds = await getJson(
    http,
    url,
    fillBuilds,
    `asking for the ${LABELS[type]} builds`,
    fillNotFound(type, version),
  );
  return builds.sort((a, b) => b.id - a.id);
}

type FillBuild = z.infer<typeof fillBuilds>[number];

/** The build asked for by number, else the newest of an accepted channel (default STABLE). */
function pickFillBuild(builds: FillBuild[], request: Request): FillBuild {
  const { type, version } = request;
  if (isNumber(request.build)) {
    const build = builds.find((b) => String(b.id) === request.build);
    if (!build) {
      throw new UsageError(`${LABELS[type]} ${version} has no build ${request.build}`, {
        hint: listHint(type, version),
      });
    }
    return build;
  }
  const channel = request.channel ?? "STABLE";
  const build = builds.find((b) => CHANNELS_ACCEPTED[channel].includes(b.channel));
  if (!build) {
    const newest = builds[0];
    throw new UsageError(
      `${LABELS[type]} ${version} has no ${channel === "STABLE" ? "stable" : `${channel} or more stable`} build yet${newest ? ` (newest: build ${newest.id}, ${newest.channel})` : ""}`,
      {
        hint: newest
          ? `take it anyway with --build ${newest.id} (or --channel ${newest.channel.toLowerCase()})`
          : listHint(type),
      },
    );
  }
  return build;
}

async function resolveFill(hosts: Hosts, request: Request): Promise<Artifact> {
  const { type, version } = request;
  const build = pickFillBuild(await fillBuildsOf(hosts, type, version), request);
  const download = build.downloads["server:default"];
  if (!download) {
    throw new JobError(`${LABELS[type]} ${version} build ${build.id} has no server download`, {
      hint: listHint(type, version),
    });
  }
  return {
    type,
    version,
    build: String(build.id),
    channel: build.channel,
    fileName: download.name,
    url: new URL(download.url, hosts.bases.paper).href,
    size: download.size,
    checksum: { algorithm: "sha256", hex: download.checksums.sha256.toLowerCase() },
  };
}

async function listFill(hosts: Hosts, type: JarType, version: string | undefined): Promise<string[]> {
  if (version) {
    return (await fillBuildsOf(hosts, type, version)).map((b) => `${b.id}\t${b.channel}${b.time ? `\t${b.time}` : ""}`);
  }
  const url = `${hosts.bases.paper}/v3/projects/${type}`;
  const project = await getJson(hosts.http, url, fillProject, `asking for the ${LABELS[type]} versions`);
  return Object.values(project.versions).flat();
}

// -- Purpur ------------------------------------------------------------------------------------------------------

function purpurVersionOf({ http, bases }: Hosts, version: string) {
  return getJson(
    http,
    `${bases.purpur}/v2/purpur/${enc(version)}`,
    purpurVersion,
    "asking for the Purpur builds",
    () => new UsageError(`Purpur has no version ${version}`, { hint: listHint("purpur") }),
  );
}

async function resolvePurpur(hosts: Hosts, request: Request): Promise<Artifact> {
  const { version } = request;
  const base = `${hosts.bases.purpur}/v2/purpur/${enc(version)}`;
  const known = await purpurVersionOf(hosts, version);
  const wanted = isNumber(request.build) ? request.build : known.builds.latest;
  if (!known.builds.all.includes(wanted)) {
    throw new UsageError(`Purpur ${version} has no build ${wanted}`, { hint: listHint("purpur", version) });
  }
  const build = await getJson(hosts.http, `${base}/${enc(wanted)}`, purpurBuild, "asking for the Purpur build");
  if (build.result !== "SUCCESS") {
    throw new UsageError(`Purpur ${version} build ${wanted} did not build (result ${build.result})`, {
      hint: "pick another build with --build N",
    });
  }
  return {
    type: "purpur",
    version,
    build: wanted,
    fileName: `purpur-${version}-${wanted}.jar`,
    url: `${base}/${enc(wanted)}/download`,
    ...(build.md5 ? { checksum: { algorithm: "md5" as const, hex: build.md5.toLowerCase() } } : {}),
  };
}

async function listPurpur(hosts: Hosts, version: string | undefined): Promise<string[]> {
  if (version) return [...(await purpurVersionOf(hosts, version)).builds.all].reverse();
  const url = `${hosts.bases.purpur}/v2/purpur`;
  const project = await getJson(hosts.http, url, purpurProject, "asking for the Purpur versions");
  return [...project.versions].reverse();
}

// -- vanilla -----------------------------------------------------------------------------------------------------

function manifest({ http, bases }: Hosts) {
  return getJson(
    http,
    `${bases.mojang}/mc/game/version_manifest_v2.json`,
    mojangManifest,
    "reading Mojang's version manifest",
  );
}

/** The version's JSON, held to the manifest's sha1 before it is read. */
async function mojangVersionOf(hosts: Hosts, version: string, entry: { url: string; sha1?: string | undefined }) {
  let text: string;
  try {
    text = await hosts.http.text(entry.url);
  } catch (error) {
    failed(error, `reading Mojang's description of ${version}`);
  }
  if (entry.sha1 && createHash("sha1").update(text).digest("hex") !== entry.sha1) {
    throw new JobError(`Mojang's description of ${version} does not match the manifest's sha1`, {
      where: entry.url,
      hint: "try again later, or check MOJANG_BASE",
    });
  }
  return shape(mojangVersion, parseJsonOrUndefined(text), entry.url);
}

async function resolveVanilla(hosts: Hosts, request: Request): Promise<Artifact> {
  const { version } = request;
  if (request.build !== undefined && request.build !== "latest") {
    throw new UsageError("vanilla has no builds: each version has one server jar", { hint: "leave out --build" });
  }
  const entry = (await manifest(hosts)).versions.find((v) => v.id === version);
  if (!entry) throw new UsageError(`Minecraft has no version ${version}`, { hint: listHint("vanilla") });
  const described = await mojangVersionOf(hosts, version, entry);
  const server = described.downloads?.server;
  if (!server) {
    throw new UsageError(`Minecraft ${version} has no server jar to download`, {
      hint: "Mojang publishes server jars from 1.2.5 on; pick a newer version",
    });
  }
  return {
    type: "vanilla",
    version,
    build: version,
    channel: entry.type,
    fileName: `minecraft_server.${version}.jar`,
    url: server.url,
    size: server.size,
    checksum: { algorithm: "sha1", hex: server.sha1 },
    java: described.javaVersion?.majorVersion ?? 8,
  };
}

/**
 * The Java a game version needs, from Mojang's version JSON (javaVersion.majorVersion; very old JSONs have none: 8);
 * undefined when the manifest does not list the version (java.ts: the loaders and Purpur run Mojang's game).
 */
export async function mojangJava(http: HttpClient, bases: Bases, version: string): Promise<number | undefined> {
  const hosts: Hosts = { http, bases };
  const entry = (await manifest(hosts)).versions.find((v) => v.id === version);
  if (!entry) return undefined;
  return (await mojangVersionOf(hosts, version, entry)).javaVersion?.majorVersion ?? 8;
}

async function listVanilla(hosts: Hosts, version: string | undefined): Promise<string[]> {
  const versions = (await manifest(hosts)).versions;
  if (version) {
    const entry = versions.find((v) => v.id === version);
    if (!entry) throw new UsageError(`Minecraft has no version ${version}`, { hint: listHint("vanilla") });
    return [`${entry.id}\t${entry.type}`];
  }
  return versions.map((v) => (v.type === "release" ? v.id : `${v.id}\t${v.type}`));
}

// -- Fabric ------------------------------------------------------------------------------------------------------

async function fabricLoadersOf({ http, bases }: Hosts, version: string) {
  const none = () => new UsageError(`Fabric has no loader for Minecraft ${version}`, { hint: listHint("fabric") });
  // fabric-meta's EndpointsV2.getLoaderInfoAll answers [] for a game version it has no intermediary for; the service
  // has also been seen to answer that [] with 400. Either is the user's version, not a failure to retry.
  const loaders = await getJson(
    http,
    `${bases.fabric}/v2/versions/loader/${enc(version)}`,
    fabricLoaders,
    "asking Fabric meta for loaders",
    none,
    [400, 404],
  );
  if (loaders.length === 0) throw none();
  return loaders.map((l) => l.loader);
}

/** The loader asked for, else the newest stable one (any with --channel beta or alpha). */
async function pickFabricLoader(hosts: Hosts, request: Request): Promise<string> {
  const { version } = request;
  const loaders = await fabricLoadersOf(hosts, version);
  if (request.build !== undefined && request.build !== "latest") {
    if (!loaders.some((l) => l.version === request.build)) {
      throw new UsageError(`Fabric has no loader ${request.build} for Minecraft ${version}`, {
        hint: listHint("fabric", version),
      });
    }
    return request.build;
  }
  const stable = loaders.find((l) => l.stable || request.channel === "ALPHA" || request.channel === "BETA");
  if (!stable) {
    throw new UsageError(`Fabric has no stable loader for Minecraft ${version}`, {
      hint: "name one with --build <loader version>",
    });
  }
  return stable.version;
}

async function resolveFabric(hosts: Hosts, request: Request): Promise<Artifact> {
  const { version } = request;
  const loader = await pickFabricLoader(hosts, request);
  const installers = await getJson(
    hosts.http,
    `${hosts.bases.fabric}/v2/versions/installer`,
    fabricInstallers,
    "asking Fabric meta for installers",
  );
  const installer = (installers.find((i) => i.stable) ?? installers[0])?.version;
  if (!installer) throw new JobError("Fabric meta lists no installer", { hint: "try again later" });
  return {
    type: "fabric",
    version,
    build: loader,
    fileName: `fabric-server-mc.${version}-loader.${loader}-launcher.${installer}.jar`,
    url: `${hosts.bases.fabric}/v2/versions/loader/${enc(version)}/${enc(loader)}/${enc(installer)}/server/jar`,
  };
}

async function listFabric(hosts: Hosts, version: string | undefined): Promise<string[]> {
  if (version) {
    return (await fabricLoadersOf(hosts, version)).map((l) => `${l.version}${l.stable ? "" : "\tunstable"}`);
  }
  const url = `${hosts.bases.fabric}/v2/versions/game`;
  const games = await getJson(hosts.http, url, fabricGames, "asking Fabric meta for game versions");
  return games.map((g) => (g.stable ? g.version : `${g.version}\tunstable`));
}

// ----------------------------------------------------------------------------------------------------------------

export function createSource(http: HttpClient, bases: Bases): Source {
  const hosts: Hosts = { http, bases };
  return {
    resolve(request) {
      switch (request.type) {
        case "paper":
        case "folia":
          return resolveFill(hosts, request);
        case "purpur":
          return resolvePurpur(hosts, request);
        case "vanilla":
          return resolveVanilla(hosts, request);
        case "fabric":
          return resolveFabric(hosts, request);
      }
    },

    resolveInstaller(request) {
      return resolveInstaller(hosts, request);
    },

    list(type, version) {
      switch (type) {
        case "paper":
        case "folia":
          return listFill(hosts, type, version);
        case "purpur":
          return listPurpur(hosts, version);
        case "vanilla":
          return listVanilla(hosts, version);
        case "fabric":
          return listFabric(hosts, version);
        default:
          return listLoader(hosts, type, version);
      }
    },
  };
}
