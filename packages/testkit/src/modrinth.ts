/**
 * A loopback stand-in for Modrinth: its CDN (cdn.modrinth.com, the files of each version, with their real sha1 and
 * sha512) and the two API v2 routes a modpack install reads (a project's versions, one version), answered in
 * labrinth's shapes with its rate-limit headers and error bodies. And `buildMrpack`, which writes a .mrpack (a zip with
 * modrinth.index.json, overrides/ and server-overrides/) for a reader's tests, hostile ones included.
 *
 * The real hosts cannot be reached from a test, and a pack's addresses must name them (a reader refuses any other
 * host): a pack built here names https://cdn.modrinth.com/..., and the stand-in's `hostMap` tells the code under test
 * to fetch those addresses from the stand-in instead (mcops' stagePack takes it as an option).
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RouteSource } from "./contract.ts";
import { type ZipEntry, zipFile } from "./downloads.ts";
import { type HeaderMap, listenLoopback, type RateLimitOptions, sendEmpty, sendJson } from "./http.ts";

const LABRINTH = "modrinth/code apps/labrinth/src";
const OPENAPI = "modrinth/code apps/docs/public/openapi.yaml (docs.modrinth.com/api)";
const RATE_LIMIT =
  `rate limit: ${LABRINTH}/util/ratelimit.rs (rate_limit_middleware, AsyncRateLimiter: GCRA, 300 a minute with a ` +
  "burst of 300 from lib.rs; x-ratelimit-limit, -remaining and -reset on every answer; over it a 429 ratelimit_error " +
  "with remaining 0, the reset the whole window and no Retry-After), openapi.yaml (info, Ratelimits)";

/** Every route the stand-in answers, as the real host writes it, and the public source it follows. */
export const MODRINTH_ROUTES: readonly RouteSource[] = [
  {
    method: "GET",
    path: "https://cdn.modrinth.com/data/{project_id}/versions/{version_id}/{filename}",
    source:
      `${OPENAPI} (VersionFile.url); the path and its encoding, ${LABRINTH}/routes/v3/version_creation.rs; ` +
      `Content-Type by extension, ${LABRINTH}/util/ext.rs (project_file_type); the host in modrinth/docs ` +
      "docs/modpacks/format_definition.md (allowed hosts)",
  },
  {
    method: "GET",
    path: "https://api.modrinth.com/v2/project/{id|slug}/version",
    source:
      `${OPENAPI} (getProjectVersions: loaders, game_versions as JSON arrays, featured); ` +
      `${LABRINTH}/routes/v2/versions.rs (version_list; 404 without a body, routes/v2_reroute.rs flatten_404_error); ` +
      `${LABRINTH}/models/v2/projects.rs (LegacyVersion); ${RATE_LIMIT}`,
  },
  {
    method: "GET",
    path: "https://api.modrinth.com/v2/version/{id}",
    source:
      `${OPENAPI} (getVersion); ${LABRINTH}/routes/v2/versions.rs (version_get; 404 without a body); ` +
      `errors: ${LABRINTH}/models/error.rs, routes/not_found.rs (an unknown route); ${RATE_LIMIT}`,
  },
];

export interface ModrinthFileSpec {
  filename: string;
  /** Default: a small jar whose bytes depend on the project, version and name only. */
  bytes?: Buffer;
  primary?: boolean;
}

export interface ModrinthVersionSpec {
  id: string;
  versionNumber: string;
  gameVersions: string[];
  loaders: string[];
  versionType?: "release" | "beta" | "alpha";
  featured?: boolean;
  datePublished?: string;
  files: ModrinthFileSpec[];
}

export interface ModrinthProjectSpec {
  /** The 8-character base62 id ("AANobbMI"). */
  id: string;
  slug: string;
  /** Newest first, as the API lists them. */
  versions: ModrinthVersionSpec[];
}

export interface ModrinthStandInOptions {
  projects?: ModrinthProjectSpec[];
  /**
   * The API's rate limit per address, as labrinth's (LabrinthLimiter): `limit` requests a `windowMs` with a burst of
   * `limit` (default 300 a minute, lib.rs GCRAParameters::new(300, 300)); over it, 429 `ratelimit_error`. The CDN has
   * none.
   */
  rateLimit?: RateLimitOptions;
  /** The rate limit's clock (default Date.now): a test that moves its own decides exactly what the bucket holds. */
  now?: () => number;
}

/** A file the stand-in serves, as a pack's index would name it. */
export interface ServedFile {
  /** The real address (https://cdn.modrinth.com/data/...), what a pack names. */
  url: string;
  bytes: Buffer;
  sha1: string;
  sha512: string;
  size: number;
}

export interface ModrinthRequestRecord {
  method: string;
  /** The path as requested, under the stand-in's base ("/cdn/data/...", "/api/v2/version/..."). */
  path: string;
  status: number;
}

export interface ModrinthStandIn {
  /** http://127.0.0.1:PORT */
  url: string;
  /** Where https://cdn.modrinth.com is: url + "/cdn". */
  cdn: string;
  /** Where https://api.modrinth.com is: url + "/api" (the API under "/v2"). */
  api: string;
  /** The real prefixes mapped to the stand-in's, for a `hostMap` option. */
  hostMap: Record<string, string>;
  /** The projects served: the array given (or a new one), live, so a test may add a pack made from the served files. */
  projects: ModrinthProjectSpec[];
  /** The file `filename` of a project's version, with its real address and hashes. */
  file(projectId: string, versionId: string, filename: string): ServedFile;
  requests: ModrinthRequestRecord[];
  /**
   * The next API request, whenever it comes, finds this address's allowance used up, as a burst from another program
   * behind it just before would leave it: it is labrinth's 429, whose x-ratelimit-reset is the whole window and a
   * little more (60 with the default limit); later ones are let through as the bucket fills again. The CDN is not
   * limited.
   */
  exhaust(): void;
  close(): Promise<void>;
}

/** A deterministic small jar for a file the test did not give bytes for. */
function defaultJar(project: string, version: string, filename: string): Buffer {
  const manifest = Buffer.from("Manifest-Version: 1.0\r\n\r\n");
  const marker = Buffer.from(`${project}/${version}/${filename}\n`);
  return zipFile([
    { name: Buffer.from("META-INF/MANIFEST.MF"), data: manifest },
    { name: Buffer.from("mod.txt"), data: marker },
  ]);
}

/**
 * A file name in a CDN address as labrinth writes it (routes/v3/version_creation.rs: `urlencoding::encode`, which
 * leaves only letters, digits and `-._~`; encodeURIComponent also leaves `!'()*`).
 */
function encodeFileName(name: string): string {
  return encodeURIComponent(name).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The Content-Type the CDN serves a file with: the one labrinth stored it with (util/ext.rs project_file_type). */
function fileType(filename: string): string {
  const ext = filename.slice(filename.lastIndexOf(".") + 1).toLowerCase();
  const types: Record<string, string> = {
    jar: "application/java-archive",
    zip: "application/zip",
    litemod: "application/zip",
    mrpack: "application/x-modrinth-modpack+zip",
  };
  return types[ext] ?? "application/octet-stream";
}

function served(project: string, version: string, spec: ModrinthFileSpec): ServedFile {
  const bytes = spec.bytes ?? defaultJar(project, version, spec.filename);
  return {
    url: `https://cdn.modrinth.com/data/${project}/versions/${version}/${encodeFileName(spec.filename)}`,
    bytes,
    sha1: createHash("sha1").update(bytes).digest("hex"),
    sha512: createHash("sha512").update(bytes).digest("hex"),
    size: bytes.length,
  };
}

/** labrinth's LegacyVersion (models/v2/projects.rs) for a spec. */
function versionBody(project: ModrinthProjectSpec, version: ModrinthVersionSpec) {
  return {
    id: version.id,
    project_id: project.id,
    author_id: "TEST0001",
    featured: version.featured ?? false,
    name: version.versionNumber,
    version_number: version.versionNumber,
    changelog: "",
    changelog_url: null,
    date_published: version.datePublished ?? "2025-01-01T00:00:00.000000Z",
    downloads: 0,
    version_type: version.versionType ?? "release",
    status: "listed",
    requested_status: null,
    files: version.files.map((spec, i) => {
      const file = served(project.id, version.id, spec);
      return {
        hashes: { sha1: file.sha1, sha512: file.sha512 },
        url: file.url,
        filename: spec.filename,
        primary: spec.primary ?? i === 0,
        size: file.size,
        file_type: null,
      };
    }),
    dependencies: [],
    game_versions: version.gameVersions,
    loaders: version.loaders,
    // The version's loader field, "unknown" when it has none (LegacyVersion::from).
    environment: "unknown",
  };
}

/** The 429's own CORS header (util/ratelimit.rs, before the CORS middleware would add it). */
const ANY_ORIGIN = { "Access-Control-Allow-Origin": "*" };

/** A query value the API takes as a JSON array of strings (`loaders=["fabric"]`); undefined when absent. */
function jsonArray(value: string | null): string[] | undefined {
  if (value === null) return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) ? parsed.map(String) : undefined;
  } catch {
    return undefined;
  }
}

/** A modpack's version: its primary file is a .mrpack (labrinth's v3 loaders say `mrpack`; v2 shows the pack's own). */
function isModpack(version: ModrinthVersionSpec): boolean {
  const primary = version.files.find((f) => f.primary) ?? version.files[0];
  return primary?.filename.endsWith(".mrpack") ?? false;
}

/** A project's versions as the list route filters them: `loaders`, `game_versions` (JSON arrays), `featured`. */
function listed(project: ModrinthProjectSpec, query: URLSearchParams): ModrinthVersionSpec[] {
  const loaders = jsonArray(query.get("loaders"));
  const games = jsonArray(query.get("game_versions"));
  const featured = query.get("featured");
  return project.versions.filter(
    (v) =>
      // routes/v2/versions.rs adds "mrpack" to the loader filter: a modpack's versions match any loaders.
      (!loaders || isModpack(v) || v.loaders.some((l) => loaders.includes(l))) &&
      (!games || v.gameVersions.some((g) => games.includes(g))) &&
      (featured === null || String(v.featured ?? false) === featured),
  );
}

/** One request's verdict, in the terms of labrinth's RateLimitDecision. */
interface LabrinthDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Until the bucket is whole again (x-ratelimit-reset is this in whole seconds, rounded down). */
  resetAfterMs: number;
  /** A refused request: until one more would be let through (the 429's description says it). */
  retryAfterMs: number;
}

/**
 * labrinth's limiter (apps/labrinth/src/util/ratelimit.rs, AsyncRateLimiter::check_rate_limit), for the one address
 * the stand-in has: GCRA, a "theoretical arrival time" (TAT) moved one emission interval (window / limit) on by each
 * request let through, and a burst of `limit` (max_tat_delta = interval × limit). A request is refused when the TAT is
 * more than that burst ahead of now; a refused one does not move it. Its numbers as labrinth computes them: remaining
 * `(max_tat_delta − (new_tat − now)) / interval` rounded down; reset `new_tat − now`, or on a refusal `tat − now`,
 * which is then more than a whole window (a 429's x-ratelimit-reset from a 300-a-minute limiter is 60); retry after
 * `tat − now − max_tat_delta`. A new address is as a whole bucket.
 */
class LabrinthLimiter {
  readonly #limit: number;
  readonly #interval: number;
  readonly #now: () => number;
  #tat: number | undefined;
  #exhausted = false;

  constructor(rate: RateLimitOptions, now: () => number) {
    if (!(rate.limit >= 1) || !(rate.windowMs > 0)) throw new RangeError("rateLimit needs limit >= 1 and windowMs > 0");
    this.#limit = rate.limit;
    this.#interval = rate.windowMs / rate.limit;
    this.#now = now;
  }

  check(): LabrinthDecision {
    const now = this.#now();
    // The TAT a burst of limit + 1 requests just before this one leaves (labrinth lets the burst and one more through).
    if (this.#exhausted) this.#tat = now + this.#interval * (this.#limit + 1);
    this.#exhausted = false;
    const tat = this.#tat ?? now;
    const burst = this.#interval * this.#limit;
    const allowance = now - tat;
    if (allowance < -burst) {
      return {
        allowed: false,
        limit: this.#limit,
        remaining: 0,
        resetAfterMs: Math.trunc(-allowance),
        retryAfterMs: Math.max(0, Math.trunc(-allowance - burst)),
      };
    }
    const next = Math.max(tat + this.#interval, now);
    this.#tat = next;
    return {
      allowed: true,
      limit: this.#limit,
      remaining: Math.max(0, Math.trunc((burst - (next - now)) / this.#interval)),
      resetAfterMs: Math.trunc(next - now),
      retryAfterMs: 0,
    };
  }

  /** The next request comes just after a burst that used the allowance up, whenever it comes. */
  exhaust(): void {
    this.#exhausted = true;
  }
}

export async function startModrinthStandIn(options: ModrinthStandInOptions = {}): Promise<ModrinthStandIn> {
  const projects = options.projects ?? [];
  const requests: ModrinthRequestRecord[] = [];
  // util/ratelimit.rs: labrinth's limiter per address (the stand-in has one), every API answer saying what is left and
  // in how many seconds the allowance is whole again (lowercase names); over it, 429 ratelimit_error with remaining 0
  // and no Retry-After.
  const limiter = new LabrinthLimiter(options.rateLimit ?? { limit: 300, windowMs: 60_000 }, options.now ?? Date.now);
  let rate: HeaderMap = {};
  const rateHeaders = (): HeaderMap => rate;
  // routes/v2_reroute.rs flatten_404_error: a v2 route's "resource not found" is a 404 without a body.
  const notFound = (res: ServerResponse) => sendEmpty(res, 404, rateHeaders());

  function findFile(projectId: string, versionId: string, filename: string): ServedFile | undefined {
    const project = projects.find((p) => p.id === projectId);
    const version = project?.versions.find((v) => v.id === versionId);
    const spec = version?.files.find((f) => f.filename === filename);
    return spec ? served(projectId, versionId, spec) : undefined;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://stand-in");
    const record: ModrinthRequestRecord = { method: req.method ?? "GET", path: url.pathname + url.search, status: 0 };
    requests.push(record);
    res.on("finish", () => {
      record.status = res.statusCode;
    });
    const cdn = /^\/cdn\/data\/([^/]+)\/versions\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    if (cdn) {
      const file = findFile(cdn[1] ?? "", cdn[2] ?? "", decodeURIComponent(cdn[3] ?? ""));
      if (!file) return void res.writeHead(404, { "Content-Type": "text/plain" }).end("Not Found");
      res.writeHead(200, { "Content-Type": fileType(file.url), "Content-Length": String(file.size) });
      return void res.end(file.bytes);
    }
    const decision = limiter.check();
    rate = {
      "x-ratelimit-limit": String(decision.limit),
      "x-ratelimit-remaining": String(decision.remaining),
      "x-ratelimit-reset": String(Math.floor(decision.resetAfterMs / 1000)),
    };
    if (!decision.allowed) {
      const description = `rate limit exceeded; retry after ${decision.retryAfterMs} milliseconds`;
      return sendJson(res, 429, { error: "ratelimit_error", description }, { ...rate, ...ANY_ORIGIN });
    }
    const list = /^\/api\/v2\/project\/([^/]+)\/version$/.exec(url.pathname);
    if (list) {
      const project = projects.find((p) => p.id === list[1] || p.slug === list[1]);
      if (!project) return notFound(res);
      const versions = listed(project, url.searchParams).map((v) => versionBody(project, v));
      return sendJson(res, 200, versions, rateHeaders());
    }
    const one = /^\/api\/v2\/version\/([^/]+)$/.exec(url.pathname);
    if (one) {
      for (const project of projects) {
        const version = project.versions.find((v) => v.id === one[1]);
        if (version) return sendJson(res, 200, versionBody(project, version), rateHeaders());
      }
      return notFound(res);
    }
    // routes/not_found.rs, the API's default service (GET only; other methods too here).
    sendJson(res, 404, { error: "not_found", description: "the requested route does not exist" }, rateHeaders());
  }

  const loopback = await listenLoopback(handle);
  return {
    url: loopback.url,
    cdn: `${loopback.url}/cdn`,
    api: `${loopback.url}/api`,
    hostMap: { "https://cdn.modrinth.com": `${loopback.url}/cdn` },
    projects,
    file(projectId, versionId, filename) {
      const file = findFile(projectId, versionId, filename);
      if (!file) throw new Error(`testkit: the stand-in serves no ${projectId}/${versionId}/${filename}`);
      return file;
    },
    requests,
    exhaust: () => limiter.exhaust(),
    close: () => loopback.close(),
  };
}

export interface MrpackOptions {
  /**
   * modrinth.index.json as an object (serialized), or its raw bytes, or null for none. Default: an empty Fabric pack
   * for 1.21.4 (mrpackIndex()).
   */
  index?: unknown;
  /** overrides/<path> → contents. */
  overrides?: Record<string, string | Buffer>;
  /** server-overrides/<path> → contents. */
  serverOverrides?: Record<string, string | Buffer>;
  /** Further entries as they are: raw names, Unix modes (a link), declared sizes (a bomb). */
  entries?: ZipEntry[];
  /** Deflate the entries (default true, as real packs are). */
  deflate?: boolean;
}

/** A minimal valid index: `files` and the rest may be overridden by the test. */
export function mrpackIndex(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    formatVersion: 1,
    game: "minecraft",
    versionId: "1.0.0",
    name: "Test Pack",
    summary: "a pack for the tests",
    files: [],
    dependencies: { minecraft: "1.21.4", "fabric-loader": "0.16.10" },
    ...fields,
  };
}

/**
 * The index's entry for a file the stand-in serves, at `path`; `env` as given, one side alone too (labrinth reads it as
 * a map from side to side type, models/v3/pack.rs PackFile.env).
 */
export function mrpackFile(
  file: ServedFile,
  path: string,
  env?: { client?: string; server?: string },
): Record<string, unknown> {
  return {
    path,
    hashes: { sha1: file.sha1, sha512: file.sha512 },
    ...(env ? { env } : {}),
    downloads: [file.url],
    fileSize: file.size,
  };
}

/** A .mrpack: the index, overrides/, server-overrides/ and any raw entries, in that order. */
export function buildMrpack(options: MrpackOptions = {}): Buffer {
  const index = options.index === undefined ? mrpackIndex() : options.index;
  const entries: ZipEntry[] = [];
  if (index !== null) {
    const data = Buffer.isBuffer(index) ? index : Buffer.from(JSON.stringify(index, null, 2));
    entries.push({ name: Buffer.from("modrinth.index.json"), data });
  }
  for (const [prefix, files] of [
    ["overrides/", options.overrides],
    ["server-overrides/", options.serverOverrides],
  ] as const) {
    for (const [path, data] of Object.entries(files ?? {})) {
      entries.push({ name: Buffer.from(prefix + path), data: Buffer.isBuffer(data) ? data : Buffer.from(data) });
    }
  }
  entries.push(...(options.entries ?? []));
  return zipFile(entries, { deflate: options.deflate ?? true });
}
