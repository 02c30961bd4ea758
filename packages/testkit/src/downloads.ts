/**
 * A loopback stand-in for the hosts a server jar is downloaded from: PaperMC's Fill v3 API (paper, folia) and its
 * fill-data object store, Purpur's v2 API, Mojang's version manifest v2 with its package and object hosts, and Fabric
 * meta v2 (with the Fabric maven for the installer), and the loaders that ship an installer instead of a server jar: NeoForge's
 * maven (Reposilite, with its JSON API), Forge's maven and its promotions file, Quilt meta v3 and Quilt's maven. One HTTP
 * server; each host lives under its own base path. The
 * answers keep the real services' shapes, status codes and error bodies; the jars are small but valid ZIP files with
 * deterministic contents, and faults (status, rate limit, drop, delay, truncated or corrupted jar) can be injected.
 *
 * Jar names (what `jar(name)` takes; ".jar" may be left off):
 * - Paper/Folia: the Fill download name, `{project}-{version}-{build}.jar` ("paper-1.21.4-231.jar");
 * - Purpur: the Content-Disposition filename, `purpur-{version}-{build}.jar` ("purpur-1.21.4-2401.jar");
 * - Mojang (always served as server.jar): `vanilla-{id}.jar` ("vanilla-1.21.4.jar"), the client
 *   `vanilla-client-{id}.jar`;
 * - Fabric: the Content-Disposition filename, `fabric-server-mc.{game}-loader.{loader}-launcher.{installer}.jar`, the
 *   installer `fabric-installer-{version}.jar`;
 * - installers: `neoforge-{version}-installer.jar`, `forge-{mc}-{forge}-installer.jar`, `quilt-installer-{version}.jar`
 *   (the bytes `installerJar` gives, when set).
 * The bytes depend on the name only, so any name gives the bytes a jar of that name would have.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { crc32, deflateRawSync } from "node:zlib";
import type { RouteSource } from "./contract.ts";
import type { Fault, HeaderMap, Loopback, StatusFault } from "./http.ts";
import { applyFault, FaultQueue, listenLoopback, reasonPhrase, sendAny, sendJson, TimerSet } from "./http.ts";

export type PaperChannel = "ALPHA" | "BETA" | "STABLE" | "RECOMMENDED";
type PaperBuild = { id: number; channel?: PaperChannel };
export type VanillaType = "release" | "snapshot" | "old_beta" | "old_alpha";
/** The API a request went to. */
export type DownloadService = "paper" | "purpur" | "mojang" | "fabric" | "neoforge" | "forge" | "quilt";
/** The loaders whose installer the stand-in serves. */
export type InstallerLoader = "neoforge" | "forge" | "quilt";
/** The checksum siblings a maven publishes next to a file (`<file>.sha1`, ...). */
export type MavenChecksum = "sha256" | "sha1" | "md5";
/** What a request asked for: one of the APIs, or "jar" for every binary jar download, whichever service serves it. */
export type DownloadRoute = DownloadService | "jar";

/**
 * Send the headers with the full Content-Length, write only the first `bytes` bytes, then destroy the socket; with
 * `stallMs`, hold the connection open that long first (a transfer that stops without closing).
 */
export interface TruncateFault {
  kind: "truncate";
  bytes: number;
  stallMs?: number;
  times?: number;
}

/** Send the full length with one byte changed in the middle (the checksums no longer match). */
export interface CorruptFault {
  kind: "corrupt";
  times?: number;
}

/**
 * A fault, optionally only for one route. Without a route it matches any request. "truncate" and "corrupt" are only
 * taken by requests answered with a jar (so their route may only be "jar" or absent).
 */
export type DownloadFault = (Fault | TruncateFault | CorruptFault) & { route?: DownloadRoute };

export interface DownloadStandInOptions {
  /** PaperMC Fill v3: project ("paper", "folia") → version → builds (any order; served newest id first). */
  paper?: Record<string, Record<string, Array<{ id: number; channel?: PaperChannel }>>>;
  /** Purpur v2: version → build numbers as strings, oldest first. */
  purpur?: Record<string, string[]>;
  /** Mojang version manifest v2: versions newest first; server:false means that version has no server download. */
  vanilla?: Array<{ id: string; type?: VanillaType; server?: boolean }>;
  /** Fabric meta v2. */
  fabric?: {
    games: string[];
    loaders: Array<{ version: string; stable: boolean }>;
    installers: Array<{ version: string; stable: boolean }>;
  };
  /**
   * NeoForge's maven: the versions of net.neoforged:neoforge in publication order, oldest first, as maven-metadata.xml
   * lists them ("21.1.77", "21.4.10-beta").
   */
  neoforge?: string[];
  /**
   * Forge's maven and files.minecraftforge.net: the versions of net.minecraftforge:forge ("1.20.1-47.3.0"), oldest
   * first, and promotions_slim.json's promos ("1.20.1-recommended" → "47.2.0").
   */
  forge?: { versions: string[]; promos: Record<string, string> };
  /** Quilt meta v3: game versions and loader and installer versions, each newest first (a beta has a "-"). */
  quilt?: { games: Array<{ version: string; stable: boolean }>; loaders: string[]; installers: string[] };
  /**
   * The checksum siblings each loader's maven has for its installer (defaults: NeoForge sha256, sha1, md5; Forge sha1,
   * md5; Quilt sha256, sha1); [] for none.
   */
  checksums?: Partial<Record<InstallerLoader, MavenChecksum[]>>;
  /**
   * The bytes served as a loader's installer (`version` is Forge's "<mc>-<forge>"); default a jar like the others, of
   * jarBytes, whose Main-Class is the installer's.
   */
  installerJar?: (loader: InstallerLoader, version: string) => Buffer;
  /** Bytes of every jar (default 64 KiB). */
  jarBytes?: number;
  /**
   * Data versions for the version.json a server jar of that version carries, over the real ones of the versions served
   * by default (a version in neither gets a jar without version.json, as before 1.14).
   */
  worldVersions?: Record<string, number>;
  /**
   * Default true: PaperMC refuses requests without a descriptive User-Agent (must contain a contact in parentheses,
   * and must not be a generic default such as curl/, Wget/, node, undici, python-requests).
   */
  requireUserAgent?: boolean;
}

export interface DownloadRequestRecord {
  /** Date.now() when the request arrived. */
  at: number;
  method: string;
  /** The path as requested, query included ("/fill/v3/projects/paper/versions/1.21.4/builds?channel=STABLE"). */
  path: string;
  userAgent: string | undefined;
  /** The status answered; 0 while pending or when a "drop" fault closed the connection. */
  status: number;
  /** "other" for a path under none of the bases. */
  route: DownloadRoute | "other";
  /** The injected fault that answered, delayed or mangled this request. */
  fault?: DownloadFault["kind"];
}

export interface DownloadStandIn {
  /** http://127.0.0.1:PORT */
  url: string;
  /** Where each service's API lives (what would be https://fill.papermc.io, https://api.purpurmc.org, ...). */
  bases: {
    /** url + "/fill": Fill v3 (`/v3/projects/...`). Its jars are served from url + "/fill-data". */
    paper: string;
    /** url + "/purpur": Purpur v2 (`/v2/purpur/...`). */
    purpur: string;
    /** url + "/mojang": piston-meta (`/mc/game/version_manifest_v2.json`). Jars come from url + "/mojang-data". */
    mojang: string;
    /** url + "/fabric": Fabric meta v2 (`/v2/versions/...`). The installer comes from url + "/fabric-maven". */
    fabric: string;
    /** url + "/neoforge-maven": maven.neoforged.net (`/releases/net/neoforged/neoforge/...`, `/api/maven/...`). */
    neoforge: string;
    /** url + "/forge-maven": maven.minecraftforge.net (`/net/minecraftforge/forge/...`). */
    forge: string;
    /** url + "/forge-files": files.minecraftforge.net (`/net/minecraftforge/forge/promotions_slim.json`). */
    forgeFiles: string;
    /** url + "/quilt": meta.quiltmc.org (`/v3/versions/...`). */
    quilt: string;
    /** url + "/quilt-maven/repository/release": Quilt's release repository (`/org/quiltmc/quilt-installer/...`). */
    quiltMaven: string;
  };
  /** Every request, in arrival order, with the status answered. */
  requests: DownloadRequestRecord[];
  /** The exact bytes served for the jar of this file name (see the naming rule at the top; ".jar" is optional). */
  jar(name: string): Buffer;
  inject(fault: DownloadFault): void;
  /** Forget requests and pending faults. */
  reset(): void;
  close(): Promise<void>;
}

const DEFAULT_PAPER: NonNullable<DownloadStandInOptions["paper"]> = {
  paper: {
    "1.21.4": [
      { id: 230, channel: "STABLE" },
      { id: 231, channel: "STABLE" },
      { id: 232, channel: "ALPHA" },
    ],
  },
  folia: { "1.21.4": [{ id: 10, channel: "STABLE" }] },
};
const DEFAULT_PURPUR: NonNullable<DownloadStandInOptions["purpur"]> = { "1.21.4": ["2400", "2401"] };
const DEFAULT_VANILLA: NonNullable<DownloadStandInOptions["vanilla"]> = [
  { id: "1.21.4", type: "release" },
  { id: "25w03a", type: "snapshot" },
  { id: "1.21.3", type: "release" },
  { id: "a1.0.4", type: "old_alpha", server: false },
];
const DEFAULT_FABRIC: NonNullable<DownloadStandInOptions["fabric"]> = {
  games: ["1.21.4", "1.21.3"],
  loaders: [
    { version: "0.16.10", stable: true },
    { version: "0.16.11-beta.1", stable: false },
  ],
  installers: [{ version: "1.0.1", stable: true }],
};
const DEFAULT_NEOFORGE: NonNullable<DownloadStandInOptions["neoforge"]> = [
  "20.4.237",
  "21.1.72",
  "21.4.10-beta",
  "21.1.77",
];
const DEFAULT_FORGE: NonNullable<DownloadStandInOptions["forge"]> = {
  versions: ["1.20.1-47.2.0", "1.20.1-47.3.0", "1.21.1-52.0.10"],
  promos: { "1.20.1-latest": "47.3.0", "1.20.1-recommended": "47.2.0", "1.21.1-latest": "52.0.10" },
};
const DEFAULT_QUILT: NonNullable<DownloadStandInOptions["quilt"]> = {
  games: [
    { version: "1.21.1", stable: true },
    { version: "1.20.4", stable: true },
  ],
  loaders: ["0.27.0-beta.1", "0.26.4"],
  installers: ["0.9.2"],
};
const DEFAULT_CHECKSUMS: Record<InstallerLoader, MavenChecksum[]> = {
  neoforge: ["sha256", "sha1", "md5"],
  forge: ["sha1", "md5"],
  quilt: ["sha256", "sha1"],
};

/** Each real host and the base path it lives under in the stand-in (`url + path`). */
export const DOWNLOAD_HOSTS = {
  "https://fill.papermc.io": "/fill",
  "https://fill-data.papermc.io": "/fill-data",
  "https://api.purpurmc.org": "/purpur",
  "https://piston-meta.mojang.com": "/mojang",
  "https://piston-data.mojang.com": "/mojang-data",
  "https://meta.fabricmc.net": "/fabric",
  "https://maven.fabricmc.net": "/fabric-maven",
  "https://maven.neoforged.net": "/neoforge-maven",
  "https://maven.minecraftforge.net": "/forge-maven",
  "https://files.minecraftforge.net": "/forge-files",
  "https://meta.quiltmc.org": "/quilt",
  "https://maven.quiltmc.org": "/quilt-maven",
} as const;

const FILL = "PaperMC/fill src/main/java/io/papermc/fill";
const FILL_DOCS = "PaperMC/docs src/content/docs/misc/downloads-service.mdx";
const PAPYRUS = "PurpurMC/papyrus src/main/java/org/purpurmc/papyrus";
const FABRIC = "FabricMC/fabric-meta src/main/java/net/fabricmc/meta/web";
const JAVALIN = "javalin/javalin javalin/src/main/java/io/javalin/http/servlet at javalin-parent-5.6.3";
const WIKI = "https://minecraft.wiki/w";
const MAVEN_METADATA = "https://maven.apache.org/ref/3.0/maven-repository-metadata/repository-metadata.html";
const GRADLE_CHECKSUMS =
  "Gradle maven-publish writes .md5/.sha1/.sha256/.sha512 siblings of bare hex " +
  "(https://vanniktech.github.io/gradle-maven-publish-plugin/api/plugin/com.vanniktech.maven.publish/-checksum/index.html)";
const DAEDALUS = "modrinth/code apps/daedalus_client/src/forge.rs";
const REPOSILITE = "dzikoysk/reposilite reposilite-backend/src/main/kotlin/com/reposilite";
const QUILT_META = "QuiltMC/update-quilt-meta src/main/resources/static/openapi.yaml";
/** Where fill-data keeps a jar, as Fill's application.yaml writes it. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Fill's own placeholders, quoted from its configuration
const FILL_STORAGE_PATH = "v1/objects/${download_sha256}/${download_filename}";

/**
 * Every route the stand-in answers, as the real host writes it, and the public source it follows. The real answers
 * copied from these sources are in test/contracts/downloads/ and checked against the stand-in by
 * downloads.contract.test.ts. Only GET (and HEAD) are served, as on the real hosts.
 */
export const DOWNLOAD_ROUTES: readonly RouteSource[] = [
  // PaperMC's Fill v3 (paper, folia). Errors: controller/advice/ExceptionRestControllerAdvice.java with
  // model/response/ErrorResponse.java; the User-Agent rule is in PaperMC/docs (misc/downloads-service.mdx).
  ...[
    ["/v3/projects", "getProjects, model/response/v3/ProjectsResponse.java"],
    ["/v3/projects/{project}", "getProject, model/response/v3/ProjectResponse.java"],
    ["/v3/projects/{project}/versions", "getVersions, model/response/v3/VersionsResponse.java"],
    ["/v3/projects/{project}/versions/{version}", "getVersion, model/response/v3/VersionResponse.java"],
    [
      "/v3/projects/{project}/versions/{version}/builds",
      "getBuilds (?channel=, a list), model/response/v3/BuildResponse.java, database/BuildRepository.java",
    ],
    ["/v3/projects/{project}/versions/{version}/builds/{build}", "getBuild, model/response/v3/BuildResponse.java"],
    ["/v3/projects/{project}/versions/{version}/builds/latest", "getLatestBuild (newest of any channel)"],
  ].map(([path, what]) => ({
    method: "GET",
    path: `https://fill.papermc.io${path}`,
    source:
      `${FILL}/controller/Api3MetaController.java (${what}); errors: controller/advice/` +
      `ExceptionRestControllerAdvice.java; the User-Agent rule: ${FILL_DOCS}`,
  })),
  {
    method: "GET",
    path: "https://fill-data.papermc.io/v1/objects/{sha256}/{name}",
    source:
      `PaperMC/fill dev/application.yaml (storage path ${FILL_STORAGE_PATH}) and ` +
      `src/main/java/io/papermc/fill/service/StorageService.java (createUri); the address in ${FILL_DOCS}`,
  },
  // Purpur's API (PurpurMC/papyrus). Errors: exception/Advice.java.
  ...[
    ["/v2", "controller/v2/ProjectController.java (listProjects)"],
    ["/v2/{project}", "controller/v2/ProjectController.java (getProject)"],
    ["/v2/{project}/{version}", "controller/v2/VersionController.java (getVersion)"],
    ["/v2/{project}/{version}/{build}", "controller/v2/BuildController.java (getBuild; build may be latest)"],
    ["/v2/{project}/{version}/{build}/download", "controller/v2/BuildController.java (downloadBuild)"],
  ].map(([path, what]) => ({
    method: "GET",
    path: `https://api.purpurmc.org${path}`,
    source: `${PAPYRUS}/${what}; errors: ${PAPYRUS}/exception/Advice.java`,
  })),
  // Mojang: piston-meta and piston-data.
  {
    method: "GET",
    path: "https://piston-meta.mojang.com/mc/game/version_manifest_v2.json",
    source: `${WIKI}/Version_manifest.json (JSON format, v2 fields sha1 and complianceLevel)`,
  },
  {
    method: "GET",
    path: "https://piston-meta.mojang.com/v1/packages/{sha1}/{id}.json",
    source: `${WIKI}/Client.json (JSON format); the address and sha1 from the manifest: ${WIKI}/Version_manifest.json`,
  },
  {
    method: "GET",
    path: "https://piston-data.mojang.com/v1/objects/{sha1}/{file}",
    source: `${WIKI}/Client.json (downloads: client, client_mappings, server, server_mappings, each sha1, size, url)`,
  },
  // Fabric meta v2 (FabricMC/fabric-meta, on Javalin 5.6.3) and the Fabric maven.
  ...[
    ["/v2/versions/game", "EndpointsV2.java, models/BaseVersion.java"],
    ["/v2/versions/loader", "EndpointsV2.java, models/MavenBuildVersion.java"],
    ["/v2/versions/loader/{game_version}", "EndpointsV2.java (getLoaderInfoAll: 400 [] for an unknown game)"],
    [
      "/v2/versions/loader/{game_version}/{loader_version}",
      "EndpointsV2.java (getLoaderInfo), models/LoaderInfoV2.java",
    ],
    ["/v2/versions/installer", "EndpointsV2.java, models/MavenUrlVersion.java"],
    [
      "/v2/versions/loader/{game_version}/{loader_version}/{installer_version}/server/jar",
      "ServerBootstrap.java (boostrapHandler)",
    ],
  ].map(([path, what]) => ({
    method: "GET",
    path: `https://meta.fabricmc.net${path}`,
    source:
      `${FABRIC}/${what}; JSON and Cache-Control: ${FABRIC}/WebServer.java (handleJson); examples: ` +
      `FabricMC/fabric-meta README.md; errors: ${JAVALIN}/HttpResponseExceptionMapper.kt, DefaultTasks.kt`,
  })),
  {
    method: "GET",
    path: "https://maven.fabricmc.net/net/fabricmc/fabric-installer/{version}/fabric-installer-{version}.jar",
    source: `${FABRIC}/models/MavenUrlVersion.java (the installer's url from its maven coordinates)`,
  },
  // NeoForge's maven, a Reposilite instance: its files, and Reposilite's JSON API over the same metadata.
  {
    method: "GET",
    path: "https://maven.neoforged.net/releases/net/neoforged/neoforge/maven-metadata.xml",
    source: `${DAEDALUS} (the address, versioning/versions/version); the format: ${MAVEN_METADATA}`,
  },
  {
    method: "GET",
    path: "https://maven.neoforged.net/releases/net/neoforged/neoforge/{version}/neoforge-{version}-installer.jar",
    source: `${DAEDALUS} (the installer's address); NeoForged docs user/docs/server (java -jar … --installServer)`,
  },
  {
    method: "GET",
    path: "https://maven.neoforged.net/releases/net/neoforged/neoforge/{version}/neoforge-{version}-installer.jar.{algorithm}",
    source: GRADLE_CHECKSUMS,
  },
  {
    method: "GET",
    path: "https://maven.neoforged.net/api/maven/versions/releases/net/neoforged/neoforge",
    source:
      `${REPOSILITE}/maven/infrastructure/MavenApiEndpoints.kt (versions, ?filter=), maven/MetadataService.kt, ` +
      `maven/api/LookupApi.kt (VersionsResponse); errors: shared/ErrorResponse.kt`,
  },
  // Forge's maven and its promotions file.
  {
    method: "GET",
    path: "https://maven.minecraftforge.net/net/minecraftforge/forge/maven-metadata.xml",
    source: `${DAEDALUS} (versions <mc>-<forge>); the format: ${MAVEN_METADATA}`,
  },
  {
    method: "GET",
    path: "https://maven.minecraftforge.net/net/minecraftforge/forge/{version}/forge-{version}-installer.jar",
    source: `${DAEDALUS} (the installer's address); pterodactyl/panel database/Seeders/eggs/minecraft/egg-forge-minecraft.json (install script)`,
  },
  {
    method: "GET",
    path: "https://maven.minecraftforge.net/net/minecraftforge/forge/{version}/forge-{version}-installer.jar.{algorithm}",
    source: GRADLE_CHECKSUMS,
  },
  {
    method: "GET",
    path: "https://files.minecraftforge.net/net/minecraftforge/forge/promotions_slim.json",
    source:
      "pterodactyl/panel database/Seeders/eggs/minecraft/egg-forge-minecraft.json (install script: promos " +
      "<mc>-recommended, else <mc>-latest, the Forge part only)",
  },
  // Quilt meta v3 and Quilt's maven.
  ...[
    ["/v3/versions/game", "GameVersionV3"],
    ["/v3/versions/loader", "LoaderVersionV3"],
    ["/v3/versions/loader/{game}", "LoaderInfoV3 list; 404 NotFound for an unknown game"],
    ["/v3/versions/installer", "InstallerVersionV3; QuiltMC/update-quilt-meta src/main/java/org/quiltmc/Main.java"],
  ].map(([path, what]) => ({
    method: "GET",
    path: `https://meta.quiltmc.org${path}`,
    source: `${QUILT_META} (${what}; errors: components/responses/NotFound)`,
  })),
  {
    method: "GET",
    path: "https://maven.quiltmc.org/repository/release/org/quiltmc/quilt-installer/{version}/quilt-installer-{version}.jar",
    source:
      "QuiltMC/quilt-installer Constants.java (BASE_MAVEN_URL), MavenRepository.java; the url in meta's installer list",
  },
  {
    method: "GET",
    path: "https://maven.quiltmc.org/repository/release/org/quiltmc/quilt-installer/{version}/quilt-installer-{version}.jar.{algorithm}",
    source: GRADLE_CHECKSUMS,
  },
];

const CHANNELS: readonly string[] = ["ALPHA", "BETA", "STABLE", "RECOMMENDED"];
const USER_AGENT_REQUIRED =
  "Requests must include a User-Agent that identifies your software and a contact (https://docs.papermc.io/misc/downloads-service)";
/** Product tokens of HTTP libraries' and tools' default User-Agents. */
const GENERIC_AGENTS = new Set([
  "curl",
  "wget",
  "node",
  "undici",
  "python-requests",
  "python-urllib",
  "aiohttp",
  "java",
  "go-http-client",
  "okhttp",
  "axios",
  "got",
  "apache-httpclient",
  "libwww-perl",
]);
const CONTACT = /@|https?:\/\/|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\b/i;

/**
 * Whether PaperMC would accept this User-Agent: not a library's or tool's default, and a contact (a URL, an e-mail
 * address or a domain) in parentheses, e.g. "mcops-jar-download/1.0 (https://example.invalid/mcops)".
 */
export function isDescriptiveUserAgent(userAgent: string | undefined): boolean {
  const ua = userAgent?.trim() ?? "";
  if (ua === "") return false;
  const product = (ua.split(/[/\s]/)[0] ?? "").toLowerCase();
  if (GENERIC_AGENTS.has(product)) return false;
  for (const match of ua.matchAll(/\(([^()]*)\)/g)) if (CONTACT.test(match[1] ?? "")) return true;
  return false;
}

// ---------------------------------------------------------------------------------------------------------------
// Jars

interface Artifact {
  bytes: Buffer;
  sha256: string;
  sha1: string;
  md5: string;
}

const hex = (algorithm: string, data: string | Buffer): string => createHash(algorithm).update(data).digest("hex");

function jarName(name: string): string {
  return name.endsWith(".jar") ? name : `${name}.jar`;
}

function mainClass(name: string): string {
  if (/^(paper|folia|purpur)-/.test(name)) return "io.papermc.paperclip.Main";
  if (name.startsWith("vanilla-client-")) return "net.minecraft.client.main.Main";
  if (name.startsWith("vanilla-")) return "net.minecraft.bundler.Main";
  if (name.startsWith("fabric-server-")) return "net.fabricmc.installer.ServerLauncher";
  if (name.startsWith("fabric-installer-")) return "net.fabricmc.installer.Main";
  if (/^(neoforge|forge)-.+-installer\.jar$/.test(name)) return "net.minecraftforge.installer.SimpleInstaller";
  if (name.startsWith("quilt-installer-")) return "org.quiltmc.installer.Main";
  return "testkit.Main";
}

/** `length` bytes of sha256(name, counter) blocks: the same name always gives the same bytes. */
function pseudoRandom(name: string, length: number): Buffer {
  const out = Buffer.alloc(length);
  const counter = Buffer.alloc(4);
  for (let offset = 0, block = 0; offset < length; offset += 32, block += 1) {
    counter.writeUInt32BE(block);
    createHash("sha256").update(name).update("\0").update(counter).digest().copy(out, offset);
  }
  return out;
}

// 2025-01-01 00:00:00 in MS-DOS format.
const DOS_TIME = 0;
const DOS_DATE = ((2025 - 1980) << 9) | (1 << 5) | 1;
const LOCAL_HEADER = 30;
const CENTRAL_HEADER = 46;
const END_OF_CENTRAL_DIRECTORY = 22;

/**
 * The data version (`world_version`) of the game versions the hosts here serve, for the version.json a server jar
 * carries (minecraft.wiki, "Data version"); a jar of another version has none, as a jar from before 1.14 has none.
 */
const WORLD_VERSIONS: Record<string, number> = {
  "1.20.1": 3465,
  "1.21": 3953,
  "1.21.1": 3955,
  "1.21.3": 4082,
  "1.21.4": 4189,
};

/**
 * version.json at the root of vanilla's server jar (its bundler), and of Paper's, Folia's and Purpur's paperclip jars,
 * which carry the vanilla one: the fields of 1.21.4's. Undefined for client and Fabric jars (Fabric's server jar is a
 * launcher), and for a version not in WORLD_VERSIONS.
 */
function versionJson(name: string, worldVersions: Record<string, number>): Buffer | undefined {
  const version =
    /^(?:paper|folia|purpur)-(.+)-[^-]+\.jar$/.exec(name)?.[1] ?? /^vanilla-(?!client-)(.+)\.jar$/.exec(name)?.[1];
  const world = version === undefined ? undefined : worldVersions[version];
  if (version === undefined || world === undefined) return undefined;
  return Buffer.from(
    JSON.stringify({
      id: version,
      name: version,
      world_version: world,
      series_id: "main",
      protocol_version: 769,
      pack_version: { resource: 46, data: 61 },
      build_time: "2024-12-03T10:12:57+00:00",
      java_component: "java-runtime-delta",
      java_version: 21,
      stable: true,
      use_editor: false,
    }),
  );
}

/** A ZIP (stored, no compression) with META-INF/MANIFEST.MF, version.json and a padding entry, about `size` bytes. */
function buildJar(name: string, size: number, worldVersions: Record<string, number>): Buffer {
  const manifest = Buffer.from(`Manifest-Version: 1.0\r\nMain-Class: ${mainClass(name)}\r\n\r\n`);
  const fixed: { name: Buffer; data: Buffer }[] = [{ name: Buffer.from("META-INF/MANIFEST.MF"), data: manifest }];
  const version = versionJson(name, worldVersions);
  if (version) fixed.push({ name: Buffer.from("version.json"), data: version });
  const padName = Buffer.from("padding.bin");
  const overhead =
    fixed.reduce((sum, e) => sum + LOCAL_HEADER + CENTRAL_HEADER + 2 * e.name.length + e.data.length, 0) +
    LOCAL_HEADER +
    CENTRAL_HEADER +
    2 * padName.length +
    END_OF_CENTRAL_DIRECTORY;
  const entries = [...fixed, { name: padName, data: pseudoRandom(name, Math.max(0, size - overhead)) }];
  return zipFile(entries);
}

/**
 * One entry of `zipFile`. For the tests of a zip reader's defences: `mode` writes Unix attributes (made by Unix,
 * the mode in the external attributes' high half, e.g. 0o120777 for a symbolic link whose data is its target), and
 * `declaredSize` writes a size in the headers other than the data's (a zip bomb declares a small one).
 */
export interface ZipEntry {
  name: Buffer;
  data: Buffer;
  mode?: number;
  declaredSize?: number;
}

/**
 * A ZIP of the entries, with its central directory (what `unzip -t` accepts): stored as they are (method 0), or
 * deflated (method 8) as real jars have most of their entries.
 */
export function zipFile(entries: readonly ZipEntry[], options: { deflate?: boolean } = {}): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  const method = options.deflate ? 8 : 0;
  for (const entry of entries) {
    const crc = crc32(entry.data);
    const body = options.deflate ? deflateRawSync(entry.data) : entry.data;
    const local = Buffer.alloc(LOCAL_HEADER);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(method ? 20 : 10, 4); // version needed: 2.0 (deflate) or 1.0 (stored)
    local.writeUInt16LE(0, 6); // flags
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(DOS_TIME, 10);
    local.writeUInt16LE(DOS_DATE, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    const declared = entry.declaredSize ?? entry.data.length;
    local.writeUInt32LE(declared, 22);
    local.writeUInt16LE(entry.name.length, 26);
    local.writeUInt16LE(0, 28); // extra length
    const central = Buffer.alloc(CENTRAL_HEADER);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(entry.mode === undefined ? 20 : (3 << 8) | 20, 4); // made by: MS-DOS or Unix, 2.0
    central.writeUInt16LE(method ? 20 : 10, 6);
    central.writeUInt16LE(0, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(DOS_TIME, 12);
    central.writeUInt16LE(DOS_DATE, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(declared, 24);
    central.writeUInt16LE(entry.name.length, 28);
    // extra, comment, disk number and internal attributes stay 0; the external ones hold the Unix mode, if any
    if (entry.mode !== undefined) central.writeUInt32LE((entry.mode << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, entry.name, body);
    centrals.push(central, entry.name);
    offset += LOCAL_HEADER + entry.name.length + body.length;
  }
  const centralSize = centrals.reduce((sum, part) => sum + part.length, 0);
  const end = Buffer.alloc(END_OF_CENTRAL_DIRECTORY);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(centralSize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, ...centrals, end]);
}

// ---------------------------------------------------------------------------------------------------------------
// Answers

/**
 * How a host writes its errors: Fill's ErrorResponse, Purpur's {"error"}, S3's XML, Fabric's plain text, Reposilite's
 * ErrorResponse {"status","message"}, Quilt meta's {"code","message"}.
 */
type ErrorStyle = "fill" | "purpur" | "s3" | "text" | "reposilite" | "quilt";

type Reply =
  | { kind: "json"; status: number; body: unknown; headers?: HeaderMap }
  | { kind: "text"; status: number; body: string; contentType: string; headers?: HeaderMap }
  | { kind: "jar"; name: string; headers?: HeaderMap };

const json = (status: number, body: unknown, headers?: HeaderMap): Reply => ({
  kind: "json",
  status,
  body,
  ...(headers ? { headers } : {}),
});
const text = (status: number, body: string, headers?: HeaderMap): Reply => ({
  kind: "text",
  status,
  body,
  contentType: "text/plain; charset=utf-8",
  ...(headers ? { headers } : {}),
});
const fillError = (status: number, error: string, message: string, headers?: HeaderMap): Reply =>
  json(status, { ok: false, error, message }, headers);
const purpurError = (status: number, error: string, headers?: HeaderMap): Reply => json(status, { error }, headers);

const S3_ERRORS = new Map<number, [string, string]>([
  [403, ["AccessDenied", "Access Denied"]],
  [404, ["NoSuchKey", "The specified key does not exist."]],
  [500, ["InternalError", "We encountered an internal error. Please try again."]],
  [503, ["SlowDown", "Please reduce your request rate."]],
]);

function s3Error(status: number, headers?: HeaderMap): Reply {
  const reason = reasonPhrase(status);
  const [code, message] = S3_ERRORS.get(status) ?? [reason.replace(/[^A-Za-z]/g, ""), `${reason}.`];
  const body = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`;
  return { kind: "text", status, body, contentType: "application/xml", ...(headers ? { headers } : {}) };
}

/** The host's own error for a status (what an injected status fault without a body answers). */
function styledError(style: ErrorStyle, status: number, headers?: HeaderMap): Reply {
  const reason = reasonPhrase(status);
  switch (style) {
    case "fill":
      return fillError(status, reason.toLowerCase().replace(/[^a-z]+/g, "_"), `${reason}.`, headers);
    case "purpur":
      return purpurError(status, reason.toLowerCase(), headers);
    case "s3":
      return s3Error(status, headers);
    case "text":
      return text(status, reason, headers);
    case "reposilite":
      return json(status, { status, message: reason }, headers);
    case "quilt":
      return json(status, { code: reason.toLowerCase().replace(/[^a-z]+/g, "_"), message: `${reason}.` }, headers);
  }
}

function methodNotAllowed(style: ErrorStyle): Reply {
  return styledError(style, 405, { Allow: "GET, HEAD" });
}

/** Compare dotted versions numerically; "1.21.4" > "1.21.4-rc1" > "1.21.3" > "1.21". */
function compareVersions(a: string, b: string): number {
  const parse = (v: string): { nums: number[]; suffix: string } => {
    const match = /^(\d+(?:\.\d+)*)(.*)$/.exec(v);
    return match ? { nums: (match[1] ?? "").split(".").map(Number), suffix: match[2] ?? "" } : { nums: [], suffix: v };
  };
  const pa = parse(a);
  const pb = parse(b);
  for (let i = 0; i < Math.max(pa.nums.length, pb.nums.length); i += 1) {
    const diff = (pa.nums[i] ?? -1) - (pb.nums[i] ?? -1);
    if (diff !== 0) return diff;
  }
  if (pa.suffix === pb.suffix) return 0;
  if (pa.suffix === "") return 1;
  if (pb.suffix === "") return -1;
  return pa.suffix < pb.suffix ? -1 : 1;
}

const PROJECT_NAMES: Record<string, string> = { paper: "Paper", folia: "Folia", velocity: "Velocity" };

/** Seconds, the CACHE_LENGTH_* of PaperMC/fill's Api3MetaController. */
const FILL_CACHE = {
  projects: 3600,
  project: 1800,
  versions: 300,
  version: 3600,
  builds: 300,
  build: 1800,
  latest: 300,
};
/** PaperMC/fill util/http/Caching.publicShared, as Spring writes it. */
const fillCache = (seconds: number): HeaderMap => ({
  "Cache-Control": `max-age=${seconds}, public, s-maxage=${seconds}`,
});

/** A version's Java in Fill (model/Java.java): the least major version Minecraft needs, and the flags it suggests. */
function javaOf(version: string): { version: { minimum: number }; flags: { recommended: string[] } } {
  const minimum =
    compareVersions(version, "1.20.5") >= 0
      ? 21
      : compareVersions(version, "1.18") >= 0
        ? 17
        : compareVersions(version, "1.17") >= 0
          ? 16
          : 8;
  const recommended = ["-XX:+AlwaysPreTouch", "-XX:+DisableExplicitGC", "-XX:+ParallelRefProcEnabled", "-XX:+UseG1GC"];
  return { version: { minimum }, flags: { recommended } };
}
/**
 * A version JSON's javaVersion, as Mojang writes it (PrismLauncher/meta-upstream mojang/versions/<id>.json): 1.20.5
 * and later java-runtime-delta 21, 1.18 to 1.20.4 17 (1.20.4's says java-runtime-gamma; older ones beta), 1.17 16
 * (java-runtime-alpha), older jre-legacy 8. A snapshot id ("25w03a") compares as newer than every release.
 */
function mojangJavaOf(id: string, legacy: boolean): { component: string; majorVersion: number } {
  if (legacy || compareVersions(id, "1.17") < 0) return { component: "jre-legacy", majorVersion: 8 };
  if (compareVersions(id, "1.18") < 0) return { component: "java-runtime-alpha", majorVersion: 16 };
  if (compareVersions(id, "1.20.5") < 0) return { component: "java-runtime-gamma", majorVersion: 17 };
  return { component: "java-runtime-delta", majorVersion: 21 };
}
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const EPOCH = Date.UTC(2026, 0, 1);
/** Mojang writes "2024-12-03T10:12:57+00:00". */
const mojangTime = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "+00:00");

function segments(path: string): string[] | undefined {
  try {
    return path
      .split("/")
      .filter((part) => part !== "")
      .map((part) => decodeURIComponent(part));
  } catch {
    return undefined;
  }
}

/** What the hosts' routes share: the data they serve, the jars, and the stand-in's own address. */
interface Hosts {
  paper: NonNullable<DownloadStandInOptions["paper"]>;
  purpur: NonNullable<DownloadStandInOptions["purpur"]>;
  vanilla: NonNullable<DownloadStandInOptions["vanilla"]>;
  fabric: NonNullable<DownloadStandInOptions["fabric"]>;
  neoforge: string[];
  forge: NonNullable<DownloadStandInOptions["forge"]>;
  quilt: NonNullable<DownloadStandInOptions["quilt"]>;
  checksums: Record<InstallerLoader, MavenChecksum[]>;
  installerJar: DownloadStandInOptions["installerJar"];
  jarBytes: number;
  worldVersions: Record<string, number>;
  requireUserAgent: boolean;
  /** The stand-in's address, for the download addresses it answers with. */
  origin: string;
  /** Jars made so far, by file name. */
  artifacts: Map<string, Artifact>;
  /** The file names of Fill's jars. */
  paperFiles: Set<string>;
  /** Purpur's versions, oldest first. */
  purpurVersions: string[];
  /** The versions' JSON documents, made on first use (they name the stand-in's address). */
  vanillaDocs: VanillaDoc[] | undefined;
  /** sha1 → jar name */
  vanillaObjects: Map<string, string>;
  /** sha1 → mappings file */
  vanillaTexts: Map<string, { file: string; body: string }>;
  faults: FaultQueue<DownloadFault>;
  timers: TimerSet;
  requests: DownloadRequestRecord[];
}

export async function startDownloadStandIn(options: DownloadStandInOptions = {}): Promise<DownloadStandIn> {
  const jarBytes = options.jarBytes ?? 64 * 1024;
  if (!Number.isInteger(jarBytes) || jarBytes < 0)
    throw new RangeError(`jarBytes must be a non-negative integer, got ${jarBytes}`);
  const paper = options.paper ?? DEFAULT_PAPER;
  const purpur = options.purpur ?? DEFAULT_PURPUR;
  const hosts: Hosts = {
    paper,
    purpur,
    vanilla: options.vanilla ?? DEFAULT_VANILLA,
    fabric: options.fabric ?? DEFAULT_FABRIC,
    neoforge: options.neoforge ?? DEFAULT_NEOFORGE,
    forge: options.forge ?? DEFAULT_FORGE,
    quilt: options.quilt ?? DEFAULT_QUILT,
    checksums: { ...DEFAULT_CHECKSUMS, ...options.checksums },
    installerJar: options.installerJar,
    jarBytes,
    worldVersions: { ...WORLD_VERSIONS, ...options.worldVersions },
    requireUserAgent: options.requireUserAgent ?? true,
    origin: "",
    artifacts: new Map(),
    paperFiles: paperFilesOf(paper),
    purpurVersions: Object.keys(purpur).sort(compareVersions),
    vanillaDocs: undefined,
    vanillaObjects: new Map(),
    vanillaTexts: new Map(),
    faults: new FaultQueue<DownloadFault>(),
    timers: new TimerSet(),
    requests: [],
  };
  const server = await listenLoopback((req, res) => handle(hosts, req, res));
  hosts.origin = server.url;
  return standIn(hosts, server);
}

/** The test's handle on the stand-in. */
function standIn(hosts: Hosts, server: Loopback): DownloadStandIn {
  return {
    url: server.url,
    bases: {
      paper: `${server.url}/fill`,
      purpur: `${server.url}/purpur`,
      mojang: `${server.url}/mojang`,
      fabric: `${server.url}/fabric`,
      neoforge: `${server.url}/neoforge-maven`,
      forge: `${server.url}/forge-maven`,
      forgeFiles: `${server.url}/forge-files`,
      quilt: `${server.url}/quilt`,
      quiltMaven: `${server.url}/quilt-maven/repository/release`,
    },
    requests: hosts.requests,
    jar: (name) => Buffer.from(artifact(hosts, name).bytes),
    inject(fault) {
      if ((fault.kind === "truncate" || fault.kind === "corrupt") && fault.route !== undefined && fault.route !== "jar")
        throw new RangeError(`a "${fault.kind}" fault only applies to the "jar" route, not "${fault.route}"`);
      hosts.faults.push(fault);
    },
    reset() {
      hosts.requests.length = 0;
      hosts.faults.clear();
    },
    async close() {
      hosts.timers.clearAll();
      await server.close();
    },
  };
}

/** The jar of that file name, made once. */
function artifact(hosts: Hosts, name: string): Artifact {
  const file = jarName(name);
  let found = hosts.artifacts.get(file);
  if (!found) {
    const installer = installerOf(file);
    const bytes =
      installer && hosts.installerJar
        ? Buffer.from(hosts.installerJar(installer.loader, installer.version))
        : buildJar(file, hosts.jarBytes, hosts.worldVersions);
    found = { bytes, sha256: hex("sha256", bytes), sha1: hex("sha1", bytes), md5: hex("md5", bytes) };
    hosts.artifacts.set(file, found);
  }
  return found;
}

// ---------------------------------------------------------------------------------------------------------------
// PaperMC Fill v3

function paperFilesOf(paper: Hosts["paper"]): Set<string> {
  const files = new Set<string>();
  for (const [project, versions] of Object.entries(paper))
    for (const [version, builds] of Object.entries(versions))
      for (const build of builds) files.add(`${project}-${version}-${build.id}.jar`);
  return files;
}

function paperBuilds(versions: Record<string, PaperBuild[]>, version: string): PaperBuild[] {
  return [...(versions[version] ?? [])].sort((a, b) => b.id - a.id);
}

function paperBuild(hosts: Hosts, project: string, version: string, build: PaperBuild) {
  const name = `${project}-${version}-${build.id}.jar`;
  const jar = artifact(hosts, name);
  const time = new Date(EPOCH + build.id * HOUR).toISOString();
  return {
    id: build.id,
    time,
    channel: build.channel ?? "STABLE",
    commits: [{ sha: hex("sha1", `commit ${name}`), time, message: `Build ${build.id} of ${project} ${version}` }],
    downloads: {
      "server:default": {
        name,
        checksums: { sha256: jar.sha256 },
        size: jar.bytes.length,
        url: `${hosts.origin}/fill-data/v1/objects/${jar.sha256}/${name}`,
      },
    },
  };
}

/** Api3MetaController.createVersionResponse: the version with its support and Java, and its build numbers. */
function paperVersion(versions: Record<string, PaperBuild[]>, version: string) {
  return {
    version: { id: version, support: { status: "SUPPORTED" }, java: javaOf(version) },
    builds: paperBuilds(versions, version).map((b) => b.id),
  };
}

/** Api3MetaController.createProjectResponse: versions grouped by family, newest first. */
function paperProject(project: string, versions: Record<string, PaperBuild[]>) {
  const families: Record<string, string[]> = {};
  for (const v of Object.keys(versions).sort((a, b) => compareVersions(b, a))) {
    const family = v.split(/[.-]/).slice(0, 2).join(".");
    const members = families[family] ?? [];
    members.push(v);
    families[family] = members;
  }
  const name = PROJECT_NAMES[project] ?? project.charAt(0).toUpperCase() + project.slice(1);
  return { project: { id: project, name }, versions: families };
}

// PaperMC/fill Api3MetaController (the routes) and ExceptionRestControllerAdvice (the errors); see DOWNLOAD_ROUTES.
function fill(
  hosts: Hosts,
  method: string,
  path: string,
  query: URLSearchParams,
  userAgent: string | undefined,
): Reply {
  if (hosts.requireUserAgent && !isDescriptiveUserAgent(userAgent))
    return fillError(403, "user_agent_required", USER_AGENT_REQUIRED);
  const parts = segments(path);
  // Spring's NoHandlerFoundException and HttpRequestMethodNotSupportedException messages.
  const unknown = fillError(404, "unknown_method", `No endpoint ${method} ${path}.`);
  if (parts?.[0] !== "v3" || parts[1] !== "projects" || parts.length > 7) return unknown;
  const [, , project = "", versionsWord, version = "", buildsWord, build] = parts;
  if ((versionsWord ?? "versions") !== "versions" || (buildsWord ?? "builds") !== "builds") return unknown;
  if (method !== "GET" && method !== "HEAD")
    return fillError(405, "method_not_allowed", `Request method '${method}' is not supported`);
  const { paper } = hosts;
  if (parts.length === 2) {
    const projects = Object.keys(paper).sort();
    return json(
      200,
      { projects: projects.map((p) => paperProject(p, paper[p] ?? {})) },
      fillCache(FILL_CACHE.projects),
    );
  }
  const versions = Object.hasOwn(paper, project) ? paper[project] : undefined;
  if (!versions) return fillError(404, "project_not_found", "No project was found with the given identifier.");
  if (parts.length === 3) return json(200, paperProject(project, versions), fillCache(FILL_CACHE.project));
  if (parts.length === 4) {
    const all = Object.keys(versions).sort((a, b) => compareVersions(b, a));
    return json(200, { versions: all.map((v) => paperVersion(versions, v)) }, fillCache(FILL_CACHE.versions));
  }
  if (!Object.hasOwn(versions, version))
    return fillError(404, "version_not_found", "No version was found with the given identifier.");
  if (parts.length === 5) return json(200, paperVersion(versions, version), fillCache(FILL_CACHE.version));
  const builds = paperBuilds(versions, version);
  if (build === undefined) {
    // channel is a list: ?channel=STABLE&channel=BETA or ?channel=STABLE,BETA. An unknown one fails Spring's
    // conversion to BuildChannel; the body of that 400 is not in Fill's source, this one is the stand-in's.
    const channels = query.getAll("channel").flatMap((c) => c.split(","));
    const bad = channels.find((c) => !CHANNELS.includes(c));
    if (bad !== undefined) return fillError(400, "invalid_channel", `Unknown channel ${bad}.`);
    const wanted = channels.length === 0 ? builds : builds.filter((b) => channels.includes(b.channel ?? "STABLE"));
    return json(
      200,
      wanted.map((b) => paperBuild(hosts, project, version, b)),
      fillCache(FILL_CACHE.builds),
    );
  }
  const found = build === "latest" ? builds[0] : builds.find((b) => String(b.id) === build);
  if (!found) return fillError(404, "build_not_found", "No build was found with the given identifier.");
  const cache = build === "latest" ? FILL_CACHE.latest : FILL_CACHE.build;
  return json(200, paperBuild(hosts, project, version, found), fillCache(cache));
}

/** fill-data: the jars, under v1/objects/{sha256}/{name}. */
function fillData(hosts: Hosts, path: string): Reply {
  const parts = segments(path);
  if (parts?.length !== 4 || parts[0] !== "v1" || parts[1] !== "objects") return s3Error(404);
  const [, , sha256 = "", name = ""] = parts;
  if (!hosts.paperFiles.has(name) || artifact(hosts, name).sha256 !== sha256) return s3Error(404);
  return { kind: "jar", name };
}

// ---------------------------------------------------------------------------------------------------------------
// Purpur v2

function purpurBuild(hosts: Hosts, version: string, build: string) {
  const number = Number.parseInt(build, 10) || 0;
  const timestamp = Date.UTC(2025, 0, 1) + number * HOUR;
  return {
    project: "purpur",
    version,
    build,
    result: "SUCCESS",
    timestamp,
    duration: 90_000 + (number % 60) * 1000,
    commits: [
      {
        author: "Purpur Stand-in",
        description: `Build ${build} of purpur ${version}`,
        hash: hex("sha1", `commit purpur-${version}-${build}`),
        email: "builds@example.invalid",
        timestamp: timestamp - HOUR,
      },
    ],
    // BuildResponse.metadata: the build's Metadata rows by name; the stand-in's builds have none.
    metadata: {},
    md5: artifact(hosts, `purpur-${version}-${build}.jar`).md5,
  };
}

// PurpurMC/papyrus controller/v2 (the routes) and exception/Advice.java (the errors); see DOWNLOAD_ROUTES.
function purpur(hosts: Hosts, method: string, path: string): Reply {
  const parts = segments(path);
  const routed = parts?.[0] === "v2" && parts.length <= 5 && (parts.length < 5 || parts[4] === "download");
  // Advice.noHandlerFound (spring.mvc.throw-exception-if-no-handler-found in its application.yaml).
  if (!parts || !routed) return purpurError(404, "endpoint not found");
  if (method !== "GET" && method !== "HEAD") return methodNotAllowed("purpur");
  const [, project, version = "", build, download] = parts;
  if (parts.length === 1) return json(200, { projects: ["purpur"] });
  if (project !== "purpur") return purpurError(404, "project not found");
  if (parts.length === 2) {
    const current = hosts.purpurVersions[hosts.purpurVersions.length - 1] ?? "";
    return json(200, { project: "purpur", metadata: { current }, versions: hosts.purpurVersions });
  }
  const all = Object.hasOwn(hosts.purpur, version) ? hosts.purpur[version] : undefined;
  if (!all) return purpurError(404, "version not found");
  if (build === undefined) {
    return json(200, { project: "purpur", version, builds: { latest: all[all.length - 1] ?? "", all } });
  }
  const found = build === "latest" ? all[all.length - 1] : all.find((b) => b === build);
  if (found === undefined) return purpurError(404, "build not found");
  if (download === undefined) return json(200, purpurBuild(hosts, version, found));
  const name = `purpur-${version}-${found}.jar`;
  return { kind: "jar", name, headers: { "Content-Disposition": `attachment; filename="${name}"` } };
}

// ---------------------------------------------------------------------------------------------------------------
// Mojang

interface VanillaDoc {
  id: string;
  type: VanillaType;
  text: string;
  sha1: string;
  time: string;
  releaseTime: string;
}

// The launcher's own placeholders, which a version's JSON carries as they are (https://minecraft.wiki/w/Client.json).
// biome-ignore-start lint/suspicious/noTemplateCurlyInString: the launcher's placeholders, written literally in the JSON
const LEGACY_ARGUMENTS = "${auth_player_name} ${auth_session} --gameDir ${game_directory}";
const GAME_ARGUMENTS = ["--username", "${auth_player_name}", "--version", "${version_name}"];
const LOGGING_ARGUMENT = "-Dlog4j.configurationFile=${path}";
// biome-ignore-end lint/suspicious/noTemplateCurlyInString: the launcher's placeholders, written literally in the JSON

/** The versions' JSON documents, made on first use. */
function vanillaDocs(hosts: Hosts): VanillaDoc[] {
  hosts.vanillaDocs ??= hosts.vanilla.map((entry, index) => vanillaDoc(hosts, entry, index));
  return hosts.vanillaDocs;
}

/**
 * A version's JSON as https://minecraft.wiki/w/Client.json describes it; the jars and mappings it names are served
 * from mojang-data, the asset index and logging configuration it names are not.
 */
function vanillaDoc(hosts: Hosts, entry: Hosts["vanilla"][number], index: number): VanillaDoc {
  const type = entry.type ?? "release";
  const release = Date.UTC(2025, 0, 15, 10) - index * 7 * DAY;
  const releaseTime = mojangTime(release);
  const time = mojangTime(release + 2 * HOUR);
  const legacy = type === "old_alpha" || type === "old_beta";
  const assets = legacy ? "pre-1.6" : "19";
  const indexSha1 = hex("sha1", `asset index ${assets}`);
  const logging = hex("sha1", "client-1.21.2.xml");
  const doc = {
    ...(legacy ? { minecraftArguments: LEGACY_ARGUMENTS } : { arguments: launcherArguments() }),
    assetIndex: {
      id: assets,
      sha1: indexSha1,
      size: 445_011,
      totalSize: 807_439_018,
      url: `${hosts.origin}/mojang/v1/packages/${indexSha1}/${assets}.json`,
    },
    assets,
    complianceLevel: legacy ? 0 : 1,
    downloads: vanillaDownloads(hosts, entry, legacy),
    id: entry.id,
    javaVersion: mojangJavaOf(entry.id, legacy),
    libraries: [],
    ...(legacy
      ? {}
      : {
          logging: {
            client: {
              argument: LOGGING_ARGUMENT,
              file: {
                id: "client-1.21.2.xml",
                sha1: logging,
                size: 888,
                url: `${hosts.origin}/mojang-data/v1/objects/${logging}/client-1.21.2.xml`,
              },
              type: "log4j2-xml",
            },
          },
        }),
    mainClass: "net.minecraft.client.main.Main",
    minimumLauncherVersion: 21,
    releaseTime,
    time,
    type,
  };
  const body = JSON.stringify(doc);
  return { id: entry.id, type, text: body, sha1: hex("sha1", body), time, releaseTime };
}

function launcherArguments() {
  return {
    game: GAME_ARGUMENTS,
    jvm: [{ rules: [{ action: "allow", os: { name: "osx" } }], value: ["-XstartOnFirstThread"] }],
  };
}

/** A version's `downloads`: the client, the server unless it has none, and their mappings unless it is legacy. */
function vanillaDownloads(hosts: Hosts, entry: Hosts["vanilla"][number], legacy: boolean): Record<string, unknown> {
  const download = (name: string, file: string) => {
    const jar = artifact(hosts, name);
    hosts.vanillaObjects.set(jar.sha1, name);
    return {
      sha1: jar.sha1,
      size: jar.bytes.length,
      url: `${hosts.origin}/mojang-data/v1/objects/${jar.sha1}/${file}`,
    };
  };
  const mappings = (side: string) => {
    const body = `# ${side} mappings of ${entry.id} (testkit stand-in)\n`;
    const sha1 = hex("sha1", body);
    hosts.vanillaTexts.set(sha1, { file: `${side}.txt`, body });
    return { sha1, size: Buffer.byteLength(body), url: `${hosts.origin}/mojang-data/v1/objects/${sha1}/${side}.txt` };
  };
  const downloads: Record<string, unknown> = { client: download(`vanilla-client-${entry.id}.jar`, "client.jar") };
  if (!legacy) downloads.client_mappings = mappings("client");
  if (entry.server !== false) downloads.server = download(`vanilla-${entry.id}.jar`, "server.jar");
  if (!legacy && entry.server !== false) downloads.server_mappings = mappings("server");
  return downloads;
}

/** piston-meta: the version manifest and each version's JSON. */
function mojang(hosts: Hosts, method: string, path: string): Reply {
  const parts = segments(path);
  if (method !== "GET" && method !== "HEAD") return methodNotAllowed("s3");
  if (parts?.join("/") === "mc/game/version_manifest_v2.json") {
    const docs = vanillaDocs(hosts);
    const release = docs.find((d) => d.type === "release");
    const snapshot = docs.find((d) => d.type === "release" || d.type === "snapshot");
    return json(200, {
      latest: { release: release?.id ?? "", snapshot: snapshot?.id ?? "" },
      versions: docs.map((d) => ({
        id: d.id,
        type: d.type,
        url: `${hosts.origin}/mojang/v1/packages/${d.sha1}/${d.id}.json`,
        time: d.time,
        releaseTime: d.releaseTime,
        sha1: d.sha1,
        complianceLevel: d.type === "old_alpha" || d.type === "old_beta" ? 0 : 1,
      })),
    });
  }
  if (parts?.length === 4 && parts[0] === "v1" && parts[1] === "packages") {
    const doc = vanillaDocs(hosts).find((d) => d.sha1 === parts[2] && `${d.id}.json` === parts[3]);
    if (doc) return { kind: "text", status: 200, body: doc.text, contentType: "application/json" };
  }
  return s3Error(404);
}

/** piston-data: the jars and mappings the versions' JSON names, under v1/objects/{sha1}/{file}. */
function mojangData(hosts: Hosts, method: string, path: string): Reply {
  const parts = segments(path);
  if (parts?.length !== 4 || parts[0] !== "v1" || parts[1] !== "objects") return s3Error(404);
  if (method !== "GET" && method !== "HEAD") return methodNotAllowed("s3");
  vanillaDocs(hosts);
  const mapping = hosts.vanillaTexts.get(parts[2] ?? "");
  if (mapping) {
    if (parts[3] !== mapping.file) return s3Error(404);
    return { kind: "text", status: 200, body: mapping.body, contentType: "text/plain" };
  }
  const name = hosts.vanillaObjects.get(parts[2] ?? "");
  const file = name?.startsWith("vanilla-client-") ? "client.jar" : "server.jar";
  if (name === undefined || parts[3] !== file) return s3Error(404);
  return { kind: "jar", name };
}

// ---------------------------------------------------------------------------------------------------------------
// Fabric meta v2

// FabricMC/fabric-meta web/EndpointsV2.java and ServerBootstrap.java on Javalin 5.6.3; see DOWNLOAD_ROUTES.
type FabricVersion = { version: string; stable: boolean };

const isStableGame = (version: string): boolean => /^[\d.]+$/.test(version);
/** models/MavenBuildVersion.java: separator "+build." or ".", build the number after the last dot. */
const loaderObject = (loader: FabricVersion) => ({
  separator: loader.version.includes("+build.") ? "+build." : ".",
  build: Number.parseInt(loader.version.slice(loader.version.lastIndexOf(".") + 1), 10) || 0,
  maven: `net.fabricmc:fabric-loader:${loader.version}`,
  version: loader.version,
  stable: loader.stable,
});
const loaderInfo = (loader: FabricVersion, game: string) => ({
  loader: loaderObject(loader),
  intermediary: { maven: `net.fabricmc:intermediary:${game}`, version: game, stable: isStableGame(game) },
  launcherMeta: {
    version: 2,
    min_java_version: 8,
    libraries: { client: [], common: [], server: [] },
    mainClass: {
      client: "net.fabricmc.loader.impl.launch.knot.KnotClient",
      server: "net.fabricmc.loader.impl.launch.knot.KnotServer",
    },
  },
});
const installerFile = (version: string) => `net/fabricmc/fabric-installer/${version}/fabric-installer-${version}.jar`;
/** WebServer.handleJson: Gson, application/json, cached a minute, whatever the status. */
const fabricJson = (status: number, body: unknown): Reply =>
  json(status, body, { "Cache-Control": "public, max-age=60" });
/** Javalin's HttpResponseExceptionMapper for a client that does not ask for JSON: the message as plain text. */
const javalinError = (status: number, message: string): Reply => ({
  kind: "text",
  status,
  body: message,
  contentType: "text/plain",
});
/** ServerBootstrap.getAndValidateVersion: the version as given, or the first stable one for "stable". */
const pick = (versions: FabricVersion[], wanted: string) =>
  versions.find((v) => (wanted === "stable" && v.stable) || v.version === wanted)?.version;
/** ServerBootstrap.validateLoaderVersion / validateInstallerVersion: "x.y..." at least 0.`least`. */
const atLeast = (version: string, least: number): boolean => {
  const [major = "0", minor = "0"] = version.split(".");
  return Number.parseInt(major, 10) > 0 || Number.parseInt(minor, 10) >= least;
};

/** EndpointsV2: the game, loader and installer versions, and a loader's profile for a game. */
function fabric(hosts: Hosts, method: string, path: string, query: URLSearchParams): Reply {
  const parts = segments(path);
  // Javalin: no handler, NotFoundResponse; prefer405over404 is off, so a method a route does not take is a 404.
  if (parts?.[0] !== "v2" || parts[1] !== "versions") return javalinError(404, "Not Found");
  if (method !== "GET" && method !== "HEAD") return javalinError(404, "Not Found");
  const [, , kind, game = "", loader = "", installer = "", side, what] = parts;
  const data = hosts.fabric;
  const games = data.games.map((version) => ({ version, stable: isStableGame(version) }));
  if (parts.length === 3 && kind === "game") return fabricJson(200, games);
  if (parts.length === 3 && kind === "loader") return fabricJson(200, data.loaders.map(loaderObject));
  if (parts.length === 3 && kind === "installer") {
    return fabricJson(
      200,
      data.installers.map((i) => ({
        url: `${hosts.origin}/fabric-maven/${installerFile(i.version)}`,
        maven: `net.fabricmc:fabric-installer:${i.version}`,
        version: i.version,
        stable: i.stable,
      })),
    );
  }
  if (kind !== "loader") return javalinError(404, "Not Found");
  if (parts.length === 4) {
    // getLoaderInfoAll: a game it has no data for is 400 and [] (since fabric-meta 4af6d6c; 200 [] before).
    if (!data.games.includes(game)) return fabricJson(400, []);
    return fabricJson(
      200,
      data.loaders.map((l) => loaderInfo(l, game)),
    );
  }
  if (parts.length === 5) {
    // getLoaderInfo: the loader first, then the game; the message is written as a JSON string.
    const found = data.loaders.find((l) => l.version === loader);
    if (!found) return fabricJson(400, `no loader version found for ${loader}`);
    if (!data.games.includes(game)) return fabricJson(400, `no mappings version found for ${game}`);
    return fabricJson(200, loaderInfo(found, game));
  }
  if (parts.length !== 8 || side !== "server" || what !== "jar") return javalinError(404, "Not Found");
  return fabricServerJar(data, games, { game, loader, installer }, query);
}

/** ServerBootstrap.boostrapHandler: no query, then installer, game and loader in that order, then their minimums. */
function fabricServerJar(
  data: Hosts["fabric"],
  games: FabricVersion[],
  asked: { game: string; loader: string; installer: string },
  query: URLSearchParams,
): Reply {
  const { game, loader, installer } = asked;
  if ([...query.keys()].length > 0) return javalinError(400, "Query params not allowed on this endpoint.");
  const installerVersion = pick(data.installers, installer);
  if (!installerVersion) return javalinError(400, "Unable to find valid version for installer_version");
  const gameVersion = pick(games, game);
  if (!gameVersion) return javalinError(400, "Unable to find valid version for game_version");
  const loaderVersion = pick(data.loaders, loader);
  if (!loaderVersion) return javalinError(400, "Unable to find valid version for loader_version");
  if (!atLeast(loaderVersion, 12)) {
    return javalinError(
      400,
      "Fabric loader 0.12 or higher is required for unattended server installs. Please use a newer fabric loader version, or the full installer.",
    );
  }
  if (!atLeast(installerVersion, 8))
    return javalinError(400, "Fabric Installer 0.8 or higher is required for unattended server installs.");
  const name = `fabric-server-mc.${gameVersion}-loader.${loaderVersion}-launcher.${installerVersion}.jar`;
  const stable = [game, loader, installer].includes("stable");
  return {
    kind: "jar",
    name,
    headers: {
      "Content-Disposition": `attachment; filename="${name}"`,
      "Cache-Control": `public, max-age=${stable ? 120 : 86_400}`,
    },
  };
}

/** The Fabric maven: the installer jars the installer versions name. */
function fabricMaven(hosts: Hosts, method: string, path: string): Reply {
  if (method !== "GET" && method !== "HEAD") return methodNotAllowed("text");
  const found = hosts.fabric.installers.find((i) => `/${installerFile(i.version)}` === path);
  return found ? { kind: "jar", name: `fabric-installer-${found.version}.jar` } : text(404, "Not Found");
}

// ---------------------------------------------------------------------------------------------------------------
// The installers' hosts: NeoForge's maven (Reposilite), Forge's maven and files, Quilt meta v3 and Quilt's maven

/** Which loader's installer a jar name is, and its version (Forge's "<mc>-<forge>"). */
function installerOf(name: string): { loader: InstallerLoader; version: string } | undefined {
  const neoforge = /^neoforge-(.+)-installer\.jar$/.exec(name)?.[1];
  if (neoforge !== undefined) return { loader: "neoforge", version: neoforge };
  const forge = /^forge-(.+)-installer\.jar$/.exec(name)?.[1];
  if (forge !== undefined) return { loader: "forge", version: forge };
  const quilt = /^quilt-installer-(.+)\.jar$/.exec(name)?.[1];
  if (quilt !== undefined) return { loader: "quilt", version: quilt };
  return undefined;
}

const xmlText = (value: string): string => value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** Maven's repository metadata (maven-metadata.xml), the versions in publication order; release = the last one. */
function mavenMetadata(group: string, artifactId: string, versions: string[]): Reply {
  const last = xmlText(versions[versions.length - 1] ?? "");
  const body = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    "<metadata>",
    `  <groupId>${group}</groupId>`,
    `  <artifactId>${artifactId}</artifactId>`,
    "  <versioning>",
    `    <latest>${last}</latest>`,
    `    <release>${last}</release>`,
    "    <versions>",
    ...versions.map((v) => `      <version>${xmlText(v)}</version>`),
    "    </versions>",
    "    <lastUpdated>20250101000000</lastUpdated>",
    "  </versioning>",
    "</metadata>",
    "",
  ].join("\n");
  return { kind: "text", status: 200, body, contentType: "application/xml" };
}

/**
 * A file of a maven directory `<version>/<artifact>-<version>-installer.jar` (or Quilt's `<artifact>-<version>.jar`)
 * and its checksum siblings: the jar, the hex of a published checksum, or undefined (the host's 404).
 */
function mavenFile(
  hosts: Hosts,
  loader: InstallerLoader,
  known: readonly string[],
  parts: readonly string[],
  fileOf: (version: string) => string,
): Reply | undefined {
  if (parts.length !== 2) return undefined;
  const [version = "", file = ""] = parts;
  if (!known.includes(version)) return undefined;
  const jar = fileOf(version);
  if (file === jar) return { kind: "jar", name: jar };
  const algorithm = file.startsWith(`${jar}.`) ? file.slice(jar.length + 1) : "";
  if (!(hosts.checksums[loader] as string[]).includes(algorithm)) return undefined;
  const bytes = artifact(hosts, jar);
  const digest = algorithm === "sha256" ? bytes.sha256 : algorithm === "sha1" ? bytes.sha1 : bytes.md5;
  return { kind: "text", status: 200, body: digest, contentType: "text/plain" };
}

/** The version comparator Reposilite sorts with (ascending): numbers compared as numbers, a suffix before none. */
function reposiliteSorted(versions: readonly string[]): string[] {
  return [...versions].sort(compareVersions);
}

const NEOFORGE_PATH = "net/neoforged/neoforge";

/** maven.neoforged.net: the releases repository's files and Reposilite's versions API. */
function neoforgeMaven(hosts: Hosts, method: string, path: string, query: URLSearchParams): Reply {
  if (method !== "GET" && method !== "HEAD") return methodNotAllowed("reposilite");
  const notFound = json(404, { status: 404, message: `File not found: ${path.slice(1)}` });
  const api = `/api/maven/versions/releases/${NEOFORGE_PATH}`;
  if (path === api || path === `${api}/`) {
    // MavenApiEndpoints: ?filter= a prefix, or has:<text> / none:<text>; sorted ascending, latest last.
    const filter = query.get("filter") ?? "";
    const keep = (v: string) =>
      filter.startsWith("has:")
        ? v.includes(filter.slice(4))
        : filter.startsWith("none:")
          ? !v.includes(filter.slice(5))
          : v.startsWith(filter);
    return json(200, { isSnapshot: false, versions: reposiliteSorted(hosts.neoforge.filter(keep)) });
  }
  if (path.startsWith("/api/")) return json(404, { status: 404, message: "Artifact not found" });
  const prefix = `/releases/${NEOFORGE_PATH}/`;
  if (!path.startsWith(prefix)) return notFound;
  const rest = path.slice(prefix.length);
  if (rest === "maven-metadata.xml") return mavenMetadata("net.neoforged", "neoforge", hosts.neoforge);
  const parts = segments(rest) ?? [];
  return mavenFile(hosts, "neoforge", hosts.neoforge, parts, (v) => `neoforge-${v}-installer.jar`) ?? notFound;
}

const FORGE_PATH = "net/minecraftforge/forge";

/** maven.minecraftforge.net: Forge's metadata and installers. */
function forgeMaven(hosts: Hosts, method: string, path: string): Reply {
  if (method !== "GET" && method !== "HEAD") return methodNotAllowed("text");
  const prefix = `/${FORGE_PATH}/`;
  if (!path.startsWith(prefix)) return text(404, "Not Found");
  const rest = path.slice(prefix.length);
  if (rest === "maven-metadata.xml") return mavenMetadata("net.minecraftforge", "forge", hosts.forge.versions);
  const parts = segments(rest) ?? [];
  const found = mavenFile(hosts, "forge", hosts.forge.versions, parts, (v) => `forge-${v}-installer.jar`);
  return found ?? text(404, "Not Found");
}

/** files.minecraftforge.net: promotions_slim.json (static JSON). */
function forgeFiles(hosts: Hosts, method: string, path: string): Reply {
  if (method !== "GET" && method !== "HEAD") return methodNotAllowed("text");
  if (path !== `/${FORGE_PATH}/promotions_slim.json`) return text(404, "Not Found");
  return json(200, {
    homepage: "https://files.minecraftforge.net/net/minecraftforge/forge/",
    promos: hosts.forge.promos,
  });
}

/** LoaderVersionV3: the maven coordinates and the build (the number after the last dot, as Fabric's MavenBuildVersion). */
const quiltLoader = (version: string) => ({
  separator: ".",
  build: Number.parseInt(version.slice(version.lastIndexOf(".") + 1), 10) || 0,
  maven: `org.quiltmc:quilt-loader:${version}`,
  version,
});
const QUILT_NOT_FOUND = { code: "not_found", message: "File with such name does not exist." };
const quiltInstallerFile = (version: string) => `org/quiltmc/quilt-installer/${version}/quilt-installer-${version}.jar`;

/** meta.quiltmc.org v3: static JSON files, newest first; a name it has no file for is its NotFound. */
function quiltMeta(hosts: Hosts, method: string, path: string): Reply {
  if (method !== "GET" && method !== "HEAD") return methodNotAllowed("quilt");
  const parts = segments(path);
  const data = hosts.quilt;
  if (parts?.[0] !== "v3" || parts[1] !== "versions") return json(404, QUILT_NOT_FOUND);
  const [, , kind, game] = parts;
  if (parts.length === 3 && kind === "game") return json(200, data.games);
  if (parts.length === 3 && kind === "loader") return json(200, data.loaders.map(quiltLoader));
  if (parts.length === 3 && kind === "installer") {
    return json(
      200,
      data.installers.map((version) => ({
        url: `${hosts.origin}/quilt-maven/repository/release/${quiltInstallerFile(version)}`,
        maven: `org.quiltmc:quilt-installer:${version}`,
        version,
      })),
    );
  }
  if (parts.length === 4 && kind === "loader" && data.games.some((g) => g.version === game)) {
    return json(
      200,
      data.loaders.map((loader) => ({
        loader: quiltLoader(loader),
        hashed: { maven: `org.quiltmc:hashed:${game}`, version: game },
        intermediary: { maven: `net.fabricmc:intermediary:${game}`, version: game },
        launcherMeta: {
          version: 1,
          libraries: { client: [], common: [], server: [] },
          mainClass: {
            client: "org.quiltmc.loader.impl.launch.knot.KnotClient",
            server: "org.quiltmc.loader.impl.launch.knot.KnotServer",
            serverLauncher: "org.quiltmc.loader.impl.launch.server.QuiltServerLauncher",
          },
        },
      })),
    );
  }
  return json(404, QUILT_NOT_FOUND);
}

/** maven.quiltmc.org's release repository: the installer jars and their checksums. */
function quiltMaven(hosts: Hosts, method: string, path: string): Reply {
  if (method !== "GET" && method !== "HEAD") return methodNotAllowed("text");
  const prefix = "/repository/release/org/quiltmc/quilt-installer/";
  if (!path.startsWith(prefix)) return text(404, "Not Found");
  const parts = segments(path.slice(prefix.length)) ?? [];
  const found = mavenFile(hosts, "quilt", hosts.quilt.installers, parts, (v) => `quilt-installer-${v}.jar`);
  return found ?? text(404, "Not Found");
}

// ---------------------------------------------------------------------------------------------------------------
// The server

/** Which host a request went to, how that host writes its errors, and what it answers. */
interface Target {
  route: DownloadRoute | "other";
  style: ErrorStyle;
  reply: Reply;
}

function under(pathname: string, base: string): string | undefined {
  return pathname === base ? "/" : pathname.startsWith(`${base}/`) ? pathname.slice(base.length) : undefined;
}

function resolve(hosts: Hosts, method: string, url: URL, userAgent: string | undefined): Target {
  const p = url.pathname;
  let rest = under(p, "/fill");
  if (rest !== undefined)
    return { route: "paper", style: "fill", reply: fill(hosts, method, rest, url.searchParams, userAgent) };
  rest = under(p, "/fill-data");
  if (rest !== undefined) return { route: "jar", style: "s3", reply: fillData(hosts, rest) };
  rest = under(p, "/purpur");
  if (rest !== undefined) {
    const reply = purpur(hosts, method, rest);
    return { route: /\/download\/?$/.test(rest) ? "jar" : "purpur", style: "purpur", reply };
  }
  rest = under(p, "/mojang");
  if (rest !== undefined) return { route: "mojang", style: "s3", reply: mojang(hosts, method, rest) };
  rest = under(p, "/mojang-data");
  if (rest !== undefined) return { route: "jar", style: "s3", reply: mojangData(hosts, method, rest) };
  rest = under(p, "/fabric");
  if (rest !== undefined) {
    const reply = fabric(hosts, method, rest, url.searchParams);
    return { route: /\/server\/jar\/?$/.test(rest) ? "jar" : "fabric", style: "text", reply };
  }
  rest = under(p, "/fabric-maven");
  if (rest !== undefined) return { route: "jar", style: "text", reply: fabricMaven(hosts, method, rest) };
  return resolveInstallerHost(hosts, method, url) ?? { route: "other", style: "text", reply: text(404, "Not Found") };
}

/** The installers' hosts: a jar is the "jar" route, everything else (metadata, checksums) the loader's own. */
function resolveInstallerHost(hosts: Hosts, method: string, url: URL): Target | undefined {
  const p = url.pathname;
  const routed = (route: DownloadService, style: ErrorStyle, reply: Reply): Target => ({
    route: reply.kind === "jar" ? "jar" : route,
    style,
    reply,
  });
  let rest = under(p, "/neoforge-maven");
  if (rest !== undefined) return routed("neoforge", "reposilite", neoforgeMaven(hosts, method, rest, url.searchParams));
  rest = under(p, "/forge-maven");
  if (rest !== undefined) return routed("forge", "text", forgeMaven(hosts, method, rest));
  rest = under(p, "/forge-files");
  if (rest !== undefined) return routed("forge", "text", forgeFiles(hosts, method, rest));
  rest = under(p, "/quilt-maven");
  if (rest !== undefined) return routed("quilt", "text", quiltMaven(hosts, method, rest));
  rest = under(p, "/quilt");
  if (rest !== undefined) return routed("quilt", "quilt", quiltMeta(hosts, method, rest));
  return undefined;
}

async function handle(hosts: Hosts, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = (req.method ?? "GET").toUpperCase();
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const userAgent = req.headers["user-agent"];
  const target = resolve(hosts, method, url, userAgent);
  const record: DownloadRequestRecord = {
    at: Date.now(),
    method,
    path: url.pathname + url.search,
    userAgent,
    status: 0,
    route: target.route,
  };
  hosts.requests.push(record);
  req.resume();

  const servesJar = target.reply.kind === "jar";
  const fault = hosts.faults.take(
    (f) =>
      (f.route === undefined || f.route === target.route) &&
      (f.kind === "truncate" || f.kind === "corrupt" ? servesJar : true),
  );
  if (fault) record.fault = fault.kind;
  if (fault?.kind === "truncate" || fault?.kind === "corrupt") return send(hosts, res, record, target.reply, fault);
  const outcome = await applyFault(fault, res, hosts.timers, {
    status: (f: StatusFault) => {
      if (f.body === undefined) send(hosts, res, record, styledError(target.style, f.status, f.headers));
      else {
        record.status = f.status;
        sendAny(res, f.status, f.body, f.headers ?? {});
      }
    },
    rateLimit: (f) => {
      const wait = String(Math.ceil(Math.max(0, f.retryAfterSeconds)));
      send(hosts, res, record, styledError(target.style, 429, { "Retry-After": wait }));
    },
    dropped: () => {
      record.status = 0;
    },
  });
  if (outcome === "handled") return;
  send(hosts, res, record, target.reply);
}

function send(
  hosts: Hosts,
  res: ServerResponse,
  record: DownloadRequestRecord,
  reply: Reply,
  mangle?: TruncateFault | CorruptFault,
): void {
  if (reply.kind === "json") {
    record.status = reply.status;
    sendJson(res, reply.status, reply.body, reply.headers);
    return;
  }
  if (reply.kind === "text") {
    record.status = reply.status;
    res.writeHead(reply.status, {
      "Content-Type": reply.contentType,
      "Content-Length": String(Buffer.byteLength(reply.body)),
      ...reply.headers,
    });
    res.end(reply.body);
    return;
  }
  const bytes = artifact(hosts, reply.name).bytes;
  record.status = 200;
  res.writeHead(200, {
    "Content-Type": "application/java-archive",
    "Content-Length": String(bytes.length),
    ...reply.headers,
  });
  if (mangle?.kind === "truncate") sendTruncated(hosts, res, bytes, mangle);
  else if (mangle?.kind === "corrupt") {
    const copy = Buffer.from(bytes);
    const middle = Math.floor(copy.length / 2);
    copy[middle] = (copy[middle] ?? 0) ^ 0xff;
    res.end(copy);
  } else res.end(bytes);
}

/** The first `bytes` of the jar after its full Content-Length, then the socket destroyed (after `stallMs`). */
function sendTruncated(hosts: Hosts, res: ServerResponse, bytes: Buffer, fault: TruncateFault): void {
  const socket = res.socket;
  const keep = Math.min(Math.max(0, Math.floor(fault.bytes)), Math.max(0, bytes.length - 1));
  res.flushHeaders();
  if (!socket) return;
  const stall = Math.max(0, fault.stallMs ?? 0);
  socket.write(bytes.subarray(0, keep), () => {
    if (stall > 0) hosts.timers.set(() => socket.destroy(), stall);
    else socket.destroy();
  });
}
