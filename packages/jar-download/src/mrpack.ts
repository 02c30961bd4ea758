import { closeSync, constants, fchmodSync, fstatSync, fsyncSync, openSync, writeSync } from "node:fs";
import type { Clock } from "@mcops/core/clock";
import { JobError, UsageError } from "@mcops/core/errors";
import { formatBytes } from "@mcops/core/format";
import type { HttpClient } from "@mcops/core/http";
import { oneLine } from "@mcops/core/log";
import { setOwnerAndMode, type VolumeDir } from "@mcops/core/volume";
import yauzl, { type Entry, type ZipFile } from "yauzl";
import * as z from "zod/mini";
import { downloadVerified } from "./download.ts";
import { DescriptorReader } from "./jar-version.ts";

/**
 * Modrinth modpacks (.mrpack): reading one and staging what it installs on a server (pack.ts gets the pack for the
 * command line, loader-install.ts installs it with its loader).
 *
 * The format (modrinth/docs docs/modpacks/format_definition.md; labrinth models/v3/pack.rs and validate/modpack.rs): a
 * zip with `modrinth.index.json` at its root listing the files to download (each with its sha1 and sha512, its size,
 * where it runs, and the addresses it comes from), the game and loader versions it needs, and `overrides/` copied onto
 * the instance, then `server-overrides/` (a server) over it. Everything in a pack is its author's: every path is
 * checked to be a plain relative path inside the folders a server pack uses, every address to be https on one of the
 * hosts the format allows, every size bounded before anything is read, and any of it wrong refuses the whole pack
 * (UsageError) before a byte is downloaded or written.
 */

/** The hosts the format allows downloads from (exact match; docs.modrinth.com's list, labrinth's default adds no other). */
export const MODRINTH_HOSTS: readonly string[] = [
  "cdn.modrinth.com",
  "github.com",
  "raw.githubusercontent.com",
  "gitlab.com",
];

/**
 * The top-level folders a pack may write into on a server, and why each is there. Anything else at the top is refused:
 * a pack has no business in the world folders (their names are the server's), libraries/ (the loader's), or anywhere a
 * file could be run. `datapacks/` is not one: the game reads datapacks only from `<world>/datapacks`, and a pack that
 * wants them for every world ships them through global_packs/, openloader/ or paxi/.
 */
export const PACK_FOLDERS: ReadonlyMap<string, string> = new Map([
  ["mods", "the mods the loader loads"],
  ["config", "the mods' configuration"],
  ["defaultconfigs", "Forge/NeoForge: the server configs copied into each new world"],
  ["kubejs", "KubeJS scripts and data (server_scripts, data)"],
  ["scripts", "CraftTweaker scripts"],
  ["global_packs", "Global Packs: datapacks applied to every world"],
  ["openloader", "Open Loader: datapacks applied to every world"],
  ["paxi", "Paxi: datapacks applied to every world"],
  ["resourcepacks", "client files a pack may ship without marking them client-only; inert on a server"],
  ["shaderpacks", "client files a pack may ship without marking them client-only; inert on a server"],
]);

/**
 * Names at the top of the server's folder that are the server's own (compared without case): a pack that ships one
 * would replace the jar, its settings, its operators, its bans, its start script, the loader's libraries or a world.
 */
const RESERVED = new Set([
  "server.jar",
  "server.properties",
  "eula.txt",
  "usercache.json",
  "usernamecache.json",
  "ops.json",
  "whitelist.json",
  "run.sh",
  "run.bat",
  "unix_args.txt",
  "win_args.txt",
  "user_jvm_args.txt",
  // The launchers' own settings, naming the game jar they load: Quilt's is written by the install (a pack's would only
  // be refused once the installer has run), Fabric's launcher reads its own.
  "quilt-server-launcher.properties",
  "fabric-server-launcher.properties",
  "libraries",
  // The game's own folders: logs/latest.log is what the log tailer and the idle monitor read.
  "logs",
  "crash-reports",
  "world",
  "world_nether",
  "world_the_end",
]);
/** Also the server's own at the top: banned-players.json, banned-ips.json and any other banned-*.json. */
const RESERVED_PATTERN = /^banned-.*\.json$/i;
/** A file at the top a start command could run (a second jar, a script): refused, the server has its own. */
const RUNNABLE = /\.(jar|sh|bat|cmd|ps1)$/i;

/** A .mrpack larger than this is not read (the largest real packs are a few hundred MiB with their overrides). */
export const MAX_MRPACK_BYTES = 512 * 1024 * 1024;
const MAX_ENTRIES = 10_000;
const MAX_INDEX_BYTES = 4 * 1024 * 1024;
/** All overrides together, inflated. */
const MAX_OVERRIDES_BYTES = 2 * 1024 * 1024 * 1024;
/** One downloaded file (labrinth stores a u32; no mod comes near 1 GiB). */
const MAX_FILE_BYTES = 1024 * 1024 * 1024;
/** All downloads together. */
const MAX_DOWNLOADS_BYTES = 8 * 1024 * 1024 * 1024;
const MAX_DEPTH = 32;
const INDEX = "modrinth.index.json";
const PREFIXES = ["overrides/", "server-overrides/"] as const;

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;

export type LoaderType = "neoforge" | "forge" | "fabric" | "quilt";
export type EnvSide = "required" | "optional" | "unsupported" | "unknown";

/** A file the pack downloads. */
export interface PackFile {
  /** Where it goes, relative to the server's folder ("mods/sodium.jar"), checked. */
  path: string;
  sha1: string;
  sha512: string;
  size: number;
  /** https addresses on an allowed host, tried in turn. */
  downloads: string[];
  /** The sides the index names (one, both or none: see PackEnv); undefined when it has no `env`. */
  env: PackEnv | undefined;
}

/**
 * A file's `env` as labrinth reads it: a map from side to side type (models/v3/pack.rs, PackFile.env:
 * `Option<HashMap<EnvType, LegacySideType>>`), so a pack Modrinth accepts may name `server` alone, `client` alone, or
 * neither. The format restricts a file only where it says so (modrinth/docs docs/modpacks/format_definition.md: `env`
 * is optional, "for files that only exist on a specific environment"), so a side left out is read as a file with no
 * `env` is: not restricted on that side. A server leaves a file out only when `server` says "unsupported"; one that
 * names `client` alone is installed. The installers pack users know do the same: the Modrinth App skips a file only
 * when its `client` is "unsupported", a missing key installs it (modrinth/code packages/app-lib/src/api/pack/
 * install_mrpack.rs), and itzg/docker-minecraft-server's helper skips only `server` "unsupported" (itzg/mc-image-helper
 * src/main/java/me/itzg/helpers/modrinth/FileInclusionCalculator.java, includeModFile).
 */
export type PackEnv = { client?: EnvSide | undefined; server?: EnvSide | undefined };

/** An entry of overrides/ or server-overrides/ in the zip. */
export interface PackOverride {
  /** Where it goes, relative to the server's folder ("config/foo.toml"), checked. */
  path: string;
  from: "overrides" | "server-overrides";
  /** The entry's name in the zip. */
  entry: string;
  directory: boolean;
  /** Inflated bytes, as the zip declares (and as it is held to). */
  size: number;
}

export interface ModPack {
  /** The pack's name and version as shown: one line, hidden characters written visibly, at most 100 characters. */
  name: string;
  versionId: string;
  summary: string | undefined;
  /** The Minecraft version the pack is for (its dependencies.minecraft). */
  game: string;
  loader: { type: LoaderType | undefined; version: string | undefined };
  /** The files a server downloads: those whose env.server is not "unsupported" (absent included: PackEnv). */
  files: PackFile[];
  /** How many files the index lists for clients only (env.server "unsupported"), left out. */
  skipped: number;
  /** overrides/ then server-overrides/, a path in both given once, from server-overrides/. */
  overrides: PackOverride[];
}

/** The open zip a ModPack was read from, for stagePack to extract its overrides; the caller closes it (not the fd). */
export interface MrpackZip {
  close(): void;
}

interface OpenZip extends MrpackZip {
  zip: ZipFile;
  entries: Map<string, Entry>;
}

const version = z.string().check(z.regex(/^[0-9A-Za-z._+-]{1,64}$/));
const hex = (digits: number) => z.string().check(z.regex(new RegExp(`^[0-9a-fA-F]{${digits}}$`)));
// labrinth also parses "unknown" (models/v3/pack.rs EnvType); a real pack may carry it.
const side = z.enum(["required", "optional", "unsupported", "unknown"]);

/** modrinth.index.json as format_definition.md and labrinth's PackFormat define it (other hash kinds ignored). */
const indexSchema = z.object({
  formatVersion: z.literal(1),
  game: z.literal("minecraft"),
  versionId: z.string().check(z.minLength(1), z.maxLength(512)),
  name: z.string().check(z.minLength(1), z.maxLength(512)),
  summary: z.optional(z.string().check(z.maxLength(2048))),
  files: z
    .array(
      z.object({
        path: z.string().check(z.maxLength(1024)),
        hashes: z.looseObject({ sha1: hex(40), sha512: hex(128) }),
        // One side alone, or none, as labrinth takes it (PackEnv).
        env: z.optional(z.object({ client: z.optional(side), server: z.optional(side) })),
        downloads: z.array(z.string().check(z.maxLength(2048))).check(z.minLength(1), z.maxLength(16)),
        fileSize: z.int().check(z.gte(0), z.lte(MAX_FILE_BYTES)),
      }),
    )
    .check(z.maxLength(MAX_ENTRIES)),
  dependencies: z.strictObject({
    minecraft: version,
    forge: z.optional(version),
    neoforge: z.optional(version),
    "fabric-loader": z.optional(version),
    "quilt-loader": z.optional(version),
  }),
});

const LOADER_KEYS = [
  ["neoforge", "neoforge"],
  ["forge", "forge"],
  ["fabric-loader", "fabric"],
  ["quilt-loader", "quilt"],
] as const;

interface ReadOptions {
  /** The hosts downloads may come from; default MODRINTH_HOSTS (tests name their own only to test the check). */
  allowedHosts?: readonly string[];
  /** Where the pack is, for messages. */
  where?: string;
}

/** A hostile or malformed pack: one line naming what is wrong. */
function refuse(message: string, where: string): UsageError {
  return new UsageError(message, { where, hint: "nothing was downloaded or written; use a pack from its author" });
}

/**
 * Reads the .mrpack open at `fd` (the caller opened it and closes it): the zip's central directory, its index, and
 * the names of its overrides, every one checked. Nothing is written.
 */
export async function readMrpack(fd: number, options: ReadOptions = {}): Promise<{ pack: ModPack; zip: MrpackZip }> {
  const where = options.where ?? "the .mrpack";
  const stat = fstatSync(fd);
  if (!stat.isFile()) throw refuse("the modpack is not a regular file", where);
  if (stat.size > MAX_MRPACK_BYTES) {
    throw refuse(`the modpack is ${formatBytes(stat.size)}, more than ${formatBytes(MAX_MRPACK_BYTES)}`, where);
  }
  let zip: ZipFile;
  try {
    zip = await yauzl.fromRandomAccessReaderPromise(new DescriptorReader(fd), stat.size, {
      lazyEntries: true,
      autoClose: false,
      decodeStrings: false,
      validateEntrySizes: true,
    });
  } catch (error) {
    throw refuse(`the modpack is not a zip (${(error as Error).message})`, where);
  }
  try {
    if (zip.entryCount > MAX_ENTRIES) {
      throw refuse(`the modpack has ${zip.entryCount} entries, more than ${MAX_ENTRIES}`, where);
    }
    const entries = await allEntries(zip, where);
    const index = entries.get(INDEX);
    if (!index) throw refuse(`the modpack has no ${INDEX} at its root`, where);
    const parsed = parseIndex(await readIndex(zip, index, where), where);
    const pack = checkPack(parsed, entries, options.allowedHosts ?? MODRINTH_HOSTS, where);
    const open: OpenZip = { zip, entries, close: () => zip.close() };
    return { pack, zip: open };
  } catch (error) {
    zip.close();
    throw error;
  }
}

/** Every entry by its raw name decoded as UTF-8 (a name that is not UTF-8, or given twice, is refused). */
function allEntries(zip: ZipFile, where: string): Promise<Map<string, Entry>> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const entries = new Map<string, Entry>();
  return new Promise((resolve, reject) => {
    zip.on("entry", (entry: Entry) => {
      let name: string;
      try {
        name = decoder.decode(entry.fileNameRaw);
      } catch {
        reject(
          refuse(`the modpack has an entry whose name is not UTF-8 (${entry.fileNameRaw.toString("hex")})`, where),
        );
        return;
      }
      if (entries.has(name)) {
        reject(refuse(`the modpack has two entries named ${JSON.stringify(name)}`, where));
        return;
      }
      entries.set(name, entry);
      zip.readEntry();
    });
    zip.on("end", () => resolve(entries));
    zip.on("error", (error: Error) => reject(refuse(`the modpack is not a valid zip (${error.message})`, where)));
    zip.readEntry();
  });
}

async function readIndex(zip: ZipFile, entry: Entry, where: string): Promise<Buffer> {
  if (entry.uncompressedSize > MAX_INDEX_BYTES) {
    throw refuse(
      `${INDEX} is ${formatBytes(entry.uncompressedSize)}, more than ${formatBytes(MAX_INDEX_BYTES)}`,
      where,
    );
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of await zip.openReadStreamPromise(entry)) {
      size += (chunk as Buffer).length;
      if (size > MAX_INDEX_BYTES) throw new Error(`more than ${formatBytes(MAX_INDEX_BYTES)}`);
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    throw refuse(`${INDEX} cannot be read (${(error as Error).message})`, where);
  }
  return Buffer.concat(chunks);
}

function parseIndex(bytes: Buffer, where: string): z.infer<typeof indexSchema> {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (error) {
    throw refuse(`${INDEX} is not JSON (${(error as Error).message})`, where);
  }
  const parsed = indexSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue?.path.map((key) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`)).join("") ?? "";
    throw refuse(`${INDEX}${at}: ${issue?.message ?? "invalid"}`, where);
  }
  return parsed.data;
}

/** The checked ModPack: every path, every address, every size; the overrides' entries named and sized. */
function checkPack(
  index: z.infer<typeof indexSchema>,
  entries: Map<string, Entry>,
  allowedHosts: readonly string[],
  where: string,
): ModPack {
  const loaders = LOADER_KEYS.filter(([key]) => index.dependencies[key] !== undefined);
  if (loaders.length > 1) {
    throw refuse(`${INDEX} depends on ${loaders.map(([key]) => key).join(" and ")}: a pack has one loader`, where);
  }
  const [loader] = loaders;
  const files: PackFile[] = [];
  let total = 0;
  let skipped = 0;
  for (const [i, file] of index.files.entries()) {
    const problem = pathProblem(file.path);
    if (problem) throw refuse(`${INDEX} files[${i}].path ${JSON.stringify(file.path)} ${problem}`, where);
    for (const url of file.downloads) {
      const bad = urlProblem(url, allowedHosts);
      if (bad) throw refuse(`${INDEX} files[${i}] (${file.path}) downloads from ${JSON.stringify(url)}: ${bad}`, where);
    }
    if (file.env?.server === "unsupported") {
      skipped += 1;
      continue;
    }
    total += file.fileSize;
    files.push({
      path: file.path,
      sha1: file.hashes.sha1.toLowerCase(),
      sha512: file.hashes.sha512.toLowerCase(),
      size: file.fileSize,
      downloads: file.downloads.map((url) => new URL(url).href),
      env: file.env,
    });
  }
  if (total > MAX_DOWNLOADS_BYTES) {
    throw refuse(`the pack downloads ${formatBytes(total)}, more than ${formatBytes(MAX_DOWNLOADS_BYTES)}`, where);
  }
  const overrides = collectOverrides(entries, where);
  checkCollisions(files, overrides, where);
  return {
    name: shown(index.name),
    versionId: shown(index.versionId),
    summary: index.summary,
    game: index.dependencies.minecraft,
    loader: { type: loader?.[1], version: loader ? index.dependencies[loader[0]] : undefined },
    files,
    skipped,
    overrides,
  };
}

/**
 * The pack author's text as it is shown in a line, a message and the history: one line, its hidden characters written
 * visibly (core's oneLine), at most 100 characters. A name with a line break could draw a false line in the log; a
 * U+202E turn the rest of the line around.
 */
function shown(text: string): string {
  const line = oneLine(text);
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
}

/** overrides/ then server-overrides/ (the later wins), each entry checked; other entries of the zip are not used. */
function collectOverrides(entries: Map<string, Entry>, where: string): PackOverride[] {
  const byPath = new Map<string, PackOverride>();
  let total = 0;
  for (const prefix of PREFIXES) {
    const seen = new Set<string>();
    for (const [name, entry] of entries) {
      if (!name.startsWith(prefix) || name === prefix) continue;
      const directory = name.endsWith("/");
      const path = directory ? name.slice(prefix.length, -1) : name.slice(prefix.length);
      const problem = pathProblem(path) ?? entryProblem(entry, directory);
      if (problem) throw refuse(`the modpack's entry ${JSON.stringify(name)} ${problem}`, where);
      const key = path.toLowerCase();
      if (seen.has(key)) throw refuse(`the modpack's entry ${JSON.stringify(name)} is given twice in ${prefix}`, where);
      seen.add(key);
      total += entry.uncompressedSize;
      if (total > MAX_OVERRIDES_BYTES) {
        throw refuse(`the modpack's overrides inflate to more than ${formatBytes(MAX_OVERRIDES_BYTES)}`, where);
      }
      byPath.delete(key); // a path in overrides/ given again in server-overrides/: the later wins, in its order
      byPath.set(key, {
        path,
        from: prefix === "overrides/" ? "overrides" : "server-overrides",
        entry: name,
        directory,
        size: entry.uncompressedSize,
      });
    }
  }
  return [...byPath.values()];
}

/** A file and an override at one path, or a file where another path needs a folder: refused, never resolved. */
function checkCollisions(files: PackFile[], overrides: PackOverride[], where: string): void {
  const taken = new Map<string, string>();
  const folders = new Map<string, string>();
  const all = [
    ...files.map((file) => ({ path: file.path, what: `files[].path ${JSON.stringify(file.path)}`, directory: false })),
    ...overrides.map((o) => ({ path: o.path, what: `the entry ${JSON.stringify(o.entry)}`, directory: o.directory })),
  ];
  for (const { path, what, directory } of all) {
    const key = path.toLowerCase();
    const before = taken.get(key);
    if (before && !(directory && before.startsWith("folder "))) {
      throw refuse(`${what} is the same path as ${before.replace(/^folder /, "")}`, where);
    }
    taken.set(key, directory ? `folder ${what}` : what);
    const parts = key.split("/");
    for (let i = 1; i < parts.length; i++) folders.set(parts.slice(0, i).join("/"), what);
  }
  for (const [key, what] of taken) {
    if (!what.startsWith("folder ") && folders.has(key)) {
      throw refuse(`${what} is a file where ${folders.get(key)} needs a folder`, where);
    }
  }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: a pack path with a control character in it is refused
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** Why `path` may not be written by a pack (a phrase that follows the path), or undefined when it may. */
export function pathProblem(path: string): string | undefined {
  if (path === "") return "is empty";
  if (CONTROL.test(path)) return "has a NUL or control character in it";
  if (path.startsWith("/")) return "is absolute";
  if (path.includes("\\")) return "has a backslash in it";
  if (/^[A-Za-z]:/.test(path) || path.includes(":")) return "has a drive letter or a colon in it";
  const parts = path.split("/");
  if (parts.length > MAX_DEPTH) return `is more than ${MAX_DEPTH} folders deep`;
  for (const part of parts) {
    if (part === "") return "has an empty component";
    if (part === "." || part === "..") return `has a ${part} component`;
    if (part.startsWith(".")) return "is hidden (a component starts with a dot)";
    if (Buffer.byteLength(part) > 255) return "has a component longer than a file name can be";
  }
  const top = (parts[0] ?? "").toLowerCase();
  if (RESERVED.has(top) || RESERVED_PATTERN.test(top)) return `is the server's own ${parts[0]}`;
  if (parts.length === 1) return RUNNABLE.test(top) ? "is a file the server could run" : undefined;
  if (!PACK_FOLDERS.has(top))
    return `is in ${parts[0]}/, not a folder a server pack writes (${[...PACK_FOLDERS.keys()].join(", ")})`;
  return undefined;
}

/** Why a zip entry is not a plain file or folder: a link, a device, an encrypted or oddly compressed entry. */
function entryProblem(entry: Entry, directory: boolean): string | undefined {
  const madeByUnix = entry.versionMadeBy >> 8 === 3;
  const type = madeByUnix ? (entry.externalFileAttributes >>> 16) & S_IFMT : 0;
  if (type === S_IFLNK) return "is a symbolic link";
  if (type !== 0 && type !== S_IFREG && type !== S_IFDIR) return "is not a regular file or folder";
  if ((type === S_IFDIR && !directory) || (type === S_IFREG && directory)) return "says it is a folder and a file";
  if (entry.isEncrypted()) return "is encrypted";
  if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8)
    return `uses compression method ${entry.compressionMethod}`;
  if (directory && entry.uncompressedSize !== 0) return "is a folder with data";
  return undefined;
}

/** Why a download address is refused, or undefined: https, on an allowed host (exact), no user, no port. */
export function urlProblem(url: string, allowedHosts: readonly string[]): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "not an address";
  }
  if (parsed.protocol !== "https:") return "not https";
  if (parsed.username !== "" || parsed.password !== "") return "has a user name in it";
  if (parsed.port !== "") return "names a port";
  if (!allowedHosts.includes(parsed.hostname))
    return `${parsed.hostname} is not a host a pack may download from (${allowedHosts.join(", ")})`;
  return undefined;
}

export interface StageOptions {
  http: HttpClient;
  clock: Clock;
  retryDelayMs?: number;
  /** Who the staged files and folders belong to (the game's user), given through their descriptors. */
  owner?: { uid: number; gid: number };
  /**
   * Address prefixes rewritten before fetching ("https://cdn.modrinth.com" → a test's stand-in). The pack is checked
   * against the real hosts when it is read; this only says where the bytes come from: tests use it, because the real
   * hosts cannot be reached from them.
   */
  hostMap?: Readonly<Record<string, string>>;
  /** Called before each download and each override written, for a progress line. */
  onItem?: (path: string) => void;
}

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;

/**
 * Stages the pack into `dir` (a private staging folder): each file downloaded, from each of its addresses in turn until
 * one gives it, with its size, sha512 and sha1 checked; then the overrides extracted (server-overrides/ over
 * overrides/, already merged by readMrpack), each file created new (O_EXCL|O_NOFOLLOW) and given to the owner through
 * its descriptor. Folders are made through descriptors, never following a link. On any failure, what was staged is
 * removed. Returns the top-level names staged.
 */
export async function stagePack(
  pack: ModPack,
  zip: MrpackZip,
  dir: VolumeDir,
  options: StageOptions,
): Promise<string[]> {
  const open = zip as OpenZip;
  const before = new Set(dir.list());
  try {
    for (const file of pack.files) {
      options.onItem?.(file.path);
      await stageFile(file, dir, options);
    }
    let inflated = 0;
    for (const override of pack.overrides) {
      options.onItem?.(override.path);
      if (override.directory) dir.ensureDir(override.path, options.owner).close();
      else inflated += await extract(open, override, dir, options, MAX_OVERRIDES_BYTES - inflated);
    }
  } catch (error) {
    for (const name of dir.list()) if (!before.has(name)) dir.removeTree(name);
    throw error;
  }
  const tops = new Set(
    [...pack.files.map((f) => f.path), ...pack.overrides.map((o) => o.path)].map((p) => p.split("/")[0] ?? p),
  );
  return [...tops].sort();
}

/** A staged file, readable by all and written by its owner (the game's user, when one is named). */
function giveTo(fd: number, owner: StageOptions["owner"]): void {
  if (owner) setOwnerAndMode(fd, owner, 0o644);
  else fchmodSync(fd, 0o644);
}

/** The folder holding `path` in `dir` (made as needed) and the file's name. */
function parentOf(dir: VolumeDir, path: string, owner: StageOptions["owner"]): { parent: VolumeDir; name: string } {
  const cut = path.lastIndexOf("/");
  const name = path.slice(cut + 1);
  return { parent: cut < 0 ? dir.ensureDir("", owner) : dir.ensureDir(path.slice(0, cut), owner), name };
}

/** `url` with the first of `hostMap`'s prefixes it starts with rewritten (a mirror, or a test's stand-in). */
export function mapUrl(url: string, hostMap: StageOptions["hostMap"]): string {
  for (const [from, to] of Object.entries(hostMap ?? {})) {
    if (url === from || url.startsWith(`${from}/`)) return to + url.slice(from.length);
  }
  return url;
}

async function stageFile(file: PackFile, dir: VolumeDir, options: StageOptions): Promise<void> {
  const { parent, name } = parentOf(dir, file.path, options.owner);
  try {
    let failure: unknown;
    for (const url of file.downloads) {
      try {
        await downloadVerified(
          {
            fileName: file.path,
            url: mapUrl(url, options.hostMap),
            size: file.size,
            checksum: { algorithm: "sha512", hex: file.sha512 },
          },
          parent.at(name),
          {
            http: options.http,
            clock: options.clock,
            ...(options.retryDelayMs === undefined ? {} : { retryDelayMs: options.retryDelayMs }),
            alsoVerify: [{ algorithm: "sha1", hex: file.sha1 }],
            zipHeader: false,
            untouched: "nothing of the pack was installed",
          },
        );
        failure = undefined;
        break;
      } catch (error) {
        if (!(error instanceof JobError)) throw error;
        failure = error;
      }
    }
    if (failure) throw failure;
    const opened = parent.tryOpenFile(name);
    if (!opened) throw new JobError(`${file.path} vanished from the staging folder`, { where: dir.path });
    try {
      giveTo(opened.fd, options.owner);
    } finally {
      closeSync(opened.fd);
    }
  } finally {
    parent.close();
  }
}

/** Writes one override's bytes, no more than its header declares (nor than `budget`); returns the bytes written. */
async function extract(
  open: OpenZip,
  override: PackOverride,
  dir: VolumeDir,
  options: StageOptions,
  budget: number,
): Promise<number> {
  const entry = open.entries.get(override.entry);
  if (!entry) throw new Error(`no entry ${override.entry} in the zip read`);
  const { parent, name } = parentOf(dir, override.path, options.owner);
  let fd: number;
  try {
    fd = openSync(parent.at(name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
  } finally {
    parent.close();
  }
  const limit = Math.min(entry.uncompressedSize, budget);
  let size = 0;
  try {
    try {
      for await (const chunk of await open.zip.openReadStreamPromise(entry)) {
        const bytes = chunk as Buffer;
        size += bytes.length;
        if (size > limit) throw new Error(`it inflates to more than the ${formatBytes(limit)} it declares`);
        let offset = 0;
        while (offset < bytes.length) offset += writeSync(fd, bytes, offset);
      }
    } catch (error) {
      throw new UsageError(
        `the modpack's entry ${JSON.stringify(override.entry)} cannot be extracted: ${(error as Error).message}`,
        {
          hint: "nothing of the pack was installed; use a pack from its author",
        },
      );
    }
    if (size !== entry.uncompressedSize) {
      throw new UsageError(
        `the modpack's entry ${JSON.stringify(override.entry)} inflates to ${size} bytes, not the ${entry.uncompressedSize} it declares`,
        {
          hint: "nothing of the pack was installed; use a pack from its author",
        },
      );
    }
    fsyncSync(fd);
    giveTo(fd, options.owner);
  } finally {
    closeSync(fd);
  }
  return size;
}
