/**
 * The download hosts' stand-in held to the real hosts' own answers. Each exchange in test/contracts/downloads/ is
 * copied from the host's source code or documentation (PaperMC/fill, PaperMC/docs, PurpurMC/papyrus,
 * FabricMC/fabric-meta, the Minecraft Wiki; its `source` says where, the folder's README names the licences) and
 * addressed to the real host; it is replayed against the stand-in's base for that host (DOWNLOAD_HOSTS), and the answer
 * must have the real status, every header the real answer lists, and the real body's shape. A stand-in that drifts
 * from a host fails here, naming the exchange and its source.
 */
import { createHash } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { Answer, RealExchange } from "../src/contract.ts";
import {
  contractProblems,
  expectLikeReal,
  named,
  pathOf,
  realExchanges,
  replay,
  routePattern,
  standIns,
} from "../src/contract.ts";
import type { DownloadStandIn, DownloadStandInOptions } from "../src/downloads.ts";
import { DOWNLOAD_HOSTS, DOWNLOAD_ROUTES, startDownloadStandIn } from "../src/downloads.ts";

const exchanges = realExchanges("downloads");

/** What jar-download sends with every request: a descriptive User-Agent. */
const HEADERS = { "User-Agent": "mcops-testkit/1.0 (https://example.invalid/mcops)" };

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
  quilt: { games: [{ version: "1.20.1", stable: true }], loaders: ["0.26.4"], installers: ["0.9.2"] },
  jarBytes: 4096,
};

const stands = standIns(() => startDownloadStandIn(OPTIONS));

afterEach(() => stands.closeAll());

const digest = (algorithm: string, data: Buffer): string => createHash(algorithm).update(data).digest("hex");

/** The placeholders of the fixtures and of DOWNLOAD_ROUTES, per real host, with the stand-in's values. */
async function placeholders(s: DownloadStandIn): Promise<Record<string, Record<string, string>>> {
  const read = { method: "GET", path: "/mc/game/version_manifest_v2.json" };
  const manifest = (await replay(s.bases.mojang, read, { headers: HEADERS })).body as {
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
    "https://maven.neoforged.net": { version: "21.1.77", algorithm: "sha1" },
    "https://maven.minecraftforge.net": { version: "1.20.1-47.3.0", algorithm: "sha1" },
    "https://files.minecraftforge.net": {},
    "https://meta.quiltmc.org": { game: "1.20.1" },
    "https://maven.quiltmc.org": { version: "0.9.2", algorithm: "sha256" },
  };
}

/**
 * A request to a real address as jar-download makes it (a descriptive User-Agent, no body), sent to the stand-in: the
 * address's host swapped for the host's base, its placeholders filled with the stand-in's values for that host.
 */
async function send(s: DownloadStandIn, request: RealExchange["request"]): Promise<Answer> {
  const origin = /^https:\/\/[^/]+/.exec(request.path)?.[0] ?? "";
  const base = (DOWNLOAD_HOSTS as Record<string, string>)[origin];
  if (base === undefined) throw new Error(`${request.path}: no stand-in base for ${origin} in DOWNLOAD_HOSTS`);
  const values = (await placeholders(s))[origin] ?? {};
  const path = `${base}${request.path.slice(origin.length)}`;
  return replay(s.url, { method: request.method, path }, { headers: HEADERS, value: (name) => values[name] });
}

describe("the hosts' own answers, replayed against the stand-in", () => {
  it("has real exchanges to replay, for every host", () => {
    const origins = new Set(exchanges.map((e) => /^https:\/\/[^/]+/.exec(e.request.path)?.[0]));
    expect([...origins].sort()).toEqual(Object.keys(DOWNLOAD_HOSTS).sort());
  });

  // The error exchanges ask for what is not there on purpose; every other one is on a route of the table (any method).
  it("are named once each and, but the errors, on a route of DOWNLOAD_ROUTES; each route is listed once, with a host, its source and a real exchange", () => {
    const on = (e: RealExchange, route: { path: string }) => routePattern(route.path).test(pathOf(e));
    const offTable = (e: RealExchange) => e.response.status >= 400;
    expect(contractProblems(exchanges, { routes: DOWNLOAD_ROUTES, on, offTable, everyRouteReal: true })).toEqual([]);
    const hosts = Object.keys(DOWNLOAD_HOSTS);
    expect(DOWNLOAD_ROUTES.filter((r) => !hosts.some((h) => r.path.startsWith(`${h}/`))).map((r) => r.path)).toEqual(
      [],
    );
  });

  // A jar's bytes are not in the fixtures: an exchange without a body is not compared by body.
  it.each(named(exchanges))("%s", async (_name, real) => {
    expectLikeReal(real, await send(await stands.start(), real.request), { bodyless: "any" });
  });

  // Filled with things the stand-in has, every route answers 200: not the host's "no such route", nor a 404 at all.
  it.each(named(DOWNLOAD_ROUTES))("%s is answered", async (_name, route) => {
    expect((await send(await stands.start(), route)).status).toBe(200);
  });
});
