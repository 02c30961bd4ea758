/**
 * The download hosts' stand-in held to the real hosts' own answers. Each exchange in test/contracts/downloads/ is
 * copied from the host's source code or documentation (PaperMC/fill, PaperMC/docs, PurpurMC/papyrus,
 * FabricMC/fabric-meta, the Minecraft Wiki; its `source` says where, the folder's README names the licences) and
 * addressed to the real host; it is replayed against the stand-in's base for that host (DOWNLOAD_HOSTS), and the answer
 * must have the real status, every header the real answer lists, and the real body's shape. A stand-in that drifts
 * from a host fails here, naming the exchange and its source.
 */
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { loadExchanges, missingHeaders, type RealExchange, shapeDifferences } from "./contract.ts";
import type { DownloadStandIn, DownloadStandInOptions } from "./downloads.ts";
import { DOWNLOAD_HOSTS, DOWNLOAD_ROUTES, startDownloadStandIn } from "./downloads.ts";

const exchanges = loadExchanges(fileURLToPath(new URL("../test/contracts/downloads", import.meta.url)));

const UA = "mcops-testkit/1.0 (https://example.invalid/mcops)";

/** The state every exchange is replayed in: the versions and builds the fixtures ask for. */
const OPTIONS: DownloadStandInOptions = {
  paper: {
    paper: {
      "1.21.10": [
        { id: 47, channel: "STABLE" },
        { id: 48, channel: "STABLE" },
      ],
      "1.21.4": [{ id: 232, channel: "ALPHA" }],
    },
  },
  purpur: { "1.21.3": ["2350"], "1.21.4": ["2400", "2401"] },
  vanilla: [{ id: "1.21.4", type: "release" }],
  fabric: {
    games: ["1.21.4", "1.14", "1.14 Pre-Release 5"],
    loaders: [
      { version: "0.16.10", stable: true },
      { version: "0.4.8+build.155", stable: true },
      { version: "0.4.8+build.154", stable: false },
    ],
    installers: [{ version: "1.0.1", stable: true }],
  },
  jarBytes: 4096,
};

let stand: DownloadStandIn | undefined;

afterEach(async () => {
  await stand?.close();
  stand = undefined;
});

async function start(): Promise<DownloadStandIn> {
  stand = await startDownloadStandIn(OPTIONS);
  return stand;
}

const digest = (algorithm: string, data: Buffer): string => createHash(algorithm).update(data).digest("hex");

/** The placeholders of the fixtures and of DOWNLOAD_ROUTES, per real host, with the stand-in's values. */
async function placeholders(s: DownloadStandIn): Promise<Record<string, Record<string, string>>> {
  const manifest = (await (await get(`${s.bases.mojang}/mc/game/version_manifest_v2.json`)).json()) as {
    versions: Array<{ id: string; sha1: string }>;
  };
  const packageSha1 = manifest.versions.find((v) => v.id === "1.21.4")?.sha1 ?? "";
  const paperSha256 = digest("sha256", s.jar("paper-1.21.10-48.jar"));
  return {
    "https://fill.papermc.io": { project: "paper", version: "1.21.10", build: "48" },
    "https://fill-data.papermc.io": {
      "paper.sha256": paperSha256,
      sha256: paperSha256,
      name: "paper-1.21.10-48.jar",
    },
    "https://api.purpurmc.org": { project: "purpur", version: "1.21.4", build: "2401" },
    "https://piston-meta.mojang.com": { "package.sha1": packageSha1, sha1: packageSha1, id: "1.21.4" },
    "https://piston-data.mojang.com": {
      "server.sha1": digest("sha1", s.jar("vanilla-1.21.4.jar")),
      sha1: digest("sha1", s.jar("vanilla-1.21.4.jar")),
      file: "server.jar",
    },
    "https://meta.fabricmc.net": { game_version: "1.21.4", loader_version: "0.16.10", installer_version: "1.0.1" },
    "https://maven.fabricmc.net": { version: "1.0.1" },
  };
}

/** The stand-in's address for a real one: its placeholders filled, its host swapped for the host's base. */
function standInUrl(s: DownloadStandIn, real: string, values: Record<string, Record<string, string>>): string {
  const origin = /^https:\/\/[^/]+/.exec(real)?.[0] ?? "";
  const base = (DOWNLOAD_HOSTS as Record<string, string>)[origin];
  if (base === undefined) throw new Error(`${real}: no stand-in base for ${origin} in DOWNLOAD_HOSTS`);
  const filled = real.replace(/\{([^}]+)\}/g, (whole, name: string) => {
    const value = values[origin]?.[name];
    if (value === undefined) throw new Error(`no value for ${whole} in ${real}`);
    return value;
  });
  return `${s.url}${base}${filled.slice(origin.length)}`;
}

function get(url: string, method = "GET"): Promise<Response> {
  return fetch(url, { method, headers: { "User-Agent": UA }, signal: AbortSignal.timeout(5000) });
}

async function bodyOf(res: Response): Promise<unknown> {
  const type = res.headers.get("content-type") ?? "";
  if (type.startsWith("application/json")) return res.json();
  if (type.startsWith("text/")) return res.text();
  await res.arrayBuffer();
  return undefined;
}

/** The table's path as a pattern matching a real request's address (query left off). */
function routePattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "[^/]+");
  return new RegExp(`^${escaped}$`);
}

describe("the hosts' own answers, replayed against the stand-in", () => {
  it("has real exchanges to replay, for every host", () => {
    const origins = new Set(exchanges.map((e) => /^https:\/\/[^/]+/.exec(e.request.path)?.[0]));
    expect([...origins].sort()).toEqual(Object.keys(DOWNLOAD_HOSTS).sort());
  });

  it.each(exchanges.map((e): [string, RealExchange] => [e.name, e]))("%s", async (_name, real) => {
    const s = await start();
    const res = await get(standInUrl(s, real.request.path, await placeholders(s)), real.request.method);
    const ours = await bodyOf(res);
    const where = `${real.name} (real answer from ${real.source})`;
    expect(res.status, `status: ${where}`).toBe(real.response.status);
    expect(missingHeaders(real.response.headers, res.headers), `headers missing: ${where}`).toEqual([]);
    if (real.response.body !== undefined) {
      expect(shapeDifferences(real.response.body, ours), `body shape: ${where}`).toEqual([]);
    }
  });

  it("every exchange is on a route of DOWNLOAD_ROUTES", () => {
    const outside = exchanges.filter(
      (e) => !DOWNLOAD_ROUTES.some((r) => routePattern(r.path).test(e.request.path.split("?")[0] ?? "")),
    );
    // The error exchanges ask for what is not there on purpose; every other one is a route of the table.
    expect(outside.filter((e) => e.response.status < 400).map((e) => e.request.path)).toEqual([]);
  });
});

describe("DOWNLOAD_ROUTES", () => {
  const routes = DOWNLOAD_ROUTES.map((r): [string, (typeof DOWNLOAD_ROUTES)[number]] => [`${r.method} ${r.path}`, r]);

  it("names a host of DOWNLOAD_HOSTS in every path", () => {
    const hosts = Object.keys(DOWNLOAD_HOSTS);
    expect(DOWNLOAD_ROUTES.filter((r) => !hosts.some((h) => r.path.startsWith(`${h}/`))).map((r) => r.path)).toEqual(
      [],
    );
  });

  it.each(routes)("%s names its source", (_name, route) => {
    expect(route.source.trim()).not.toBe("");
  });

  // Filled with things the stand-in has, every route answers 200: not the host's "no such route", nor a 404 at all.
  it.each(routes)("%s is answered", async (_name, route) => {
    const s = await start();
    const res = await get(standInUrl(s, route.path, await placeholders(s)), route.method);
    await res.arrayBuffer();
    expect(res.status).toBe(200);
  });
});
