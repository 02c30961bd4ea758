import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { DownloadStandIn, DownloadStandInOptions } from "../src/downloads.ts";
import { isDescriptiveUserAgent, startDownloadStandIn, zipFile } from "../src/downloads.ts";
import type { TempDir } from "../src/http.ts";
import { tempDir } from "../src/http.ts";

const UA = "mcops-jar-download/1.0 (https://example.invalid/mcops)";
const HAS_UNZIP = spawnSync("unzip", ["-v"], { stdio: "ignore", timeout: 30_000 }).status === 0;

let stand: DownloadStandIn | undefined;
let dir: TempDir | undefined;

afterEach(async () => {
  await stand?.close();
  stand = undefined;
  dir?.cleanup();
  dir = undefined;
});

async function start(options?: DownloadStandInOptions): Promise<DownloadStandIn> {
  stand = await startDownloadStandIn(options);
  return stand;
}

/**
 * A bound for a stand-in that hangs, not a measure of its speed: CI's busy machine took over 2 s for one loopback
 * answer, and a test must not fail on that.
 */
const HANG_MS = 20_000;

function get(url: string, userAgent: string | null = UA): Promise<Response> {
  return fetch(url, {
    headers: userAgent === null ? {} : { "User-Agent": userAgent },
    signal: AbortSignal.timeout(HANG_MS),
  });
}

/** A GET without any User-Agent header (fetch always adds one). */
function getWithoutUserAgent(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { timeout: HANG_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end();
  });
}

// biome-ignore lint/suspicious/noExplicitAny: the answer's JSON as the vendor documents it; a wrong guess at its shape fails the assertion that reads it
const json = (res: Response): Promise<any> => res.json();
const bytes = async (res: Response): Promise<Buffer> => Buffer.from(await res.arrayBuffer());
const digest = (algorithm: string, data: Buffer): string => createHash(algorithm).update(data).digest("hex");

/** Read a body until it ends or fails; how many bytes arrived and whether it failed. */
async function drain(res: Response): Promise<{ received: number; failed: boolean }> {
  const reader = res.body?.getReader();
  let received = 0;
  if (!reader) return { received, failed: false };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { received, failed: false };
      received += value.length;
    }
  } catch {
    return { received, failed: true };
  }
}

describe("PaperMC Fill v3", () => {
  it("lists a project's versions grouped by family, newest first", async () => {
    const s = await start({
      paper: {
        paper: { "1.20.6": [{ id: 151 }], "1.21.4": [{ id: 1 }], "1.21": [{ id: 130 }], "1.21.10": [{ id: 5 }] },
      },
    });
    expect(s.bases.paper).toBe(`${s.url}/fill`);
    const res = await get(`${s.bases.paper}/v3/projects/paper`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    const body = await json(res);
    expect(body).toEqual({
      project: { id: "paper", name: "Paper" },
      versions: { "1.21": ["1.21.10", "1.21.4", "1.21"], "1.20": ["1.20.6"] },
    });
    expect(Object.keys(body.versions)).toEqual(["1.21", "1.20"]);
  });

  it("serves builds newest first, filters by channel, and latest is the newest whatever its channel", async () => {
    const s = await start();
    const base = `${s.bases.paper}/v3/projects/paper/versions/1.21.4/builds`;
    const all = await json(await get(base));
    expect(all.map((b: { id: number; channel: string }) => [b.id, b.channel])).toEqual([
      [232, "ALPHA"],
      [231, "STABLE"],
      [230, "STABLE"],
    ]);
    const stable = await json(await get(`${base}?channel=STABLE`));
    expect(stable.map((b: { id: number }) => b.id)).toEqual([231, 230]);
    // channel is a list (Api3MetaController.getBuilds), repeated or comma-separated.
    for (const query of ["channel=STABLE&channel=ALPHA", "channel=STABLE,ALPHA"]) {
      expect((await json(await get(`${base}?${query}`))).map((b: { id: number }) => b.id)).toEqual([232, 231, 230]);
    }
    const latest = await json(await get(`${base}/latest`));
    expect(latest.id).toBe(232);
    expect(latest.channel).toBe("ALPHA");
    const build = await json(await get(`${base}/231`));
    expect(build).toEqual({
      id: 231,
      time: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      channel: "STABLE",
      commits: [{ sha: expect.stringMatching(/^[0-9a-f]{40}$/), time: build.time, message: expect.any(String) }],
      downloads: {
        "server:default": {
          name: "paper-1.21.4-231.jar",
          checksums: { sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
          size: s.jar("paper-1.21.4-231.jar").length,
          url: `${s.url}/fill-data/v1/objects/${build.downloads["server:default"].checksums.sha256}/paper-1.21.4-231.jar`,
        },
      },
    });
    expect(stable[0]).toEqual(build);
    const folia = await json(await get(`${s.bases.paper}/v3/projects/folia/versions/1.21.4/builds/latest`));
    expect(folia.downloads["server:default"].name).toBe("folia-1.21.4-10.jar");
  });

  it("serves the jar whose sha256 and size the build names", async () => {
    const s = await start();
    const build = await json(await get(`${s.bases.paper}/v3/projects/paper/versions/1.21.4/builds/231`));
    const download = build.downloads["server:default"];
    const res = await get(download.url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/java-archive");
    expect(res.headers.get("content-length")).toBe(String(download.size));
    const body = await bytes(res);
    expect(digest("sha256", body)).toBe(download.checksums.sha256);
    expect(body.equals(s.jar("paper-1.21.4-231.jar"))).toBe(true);
    expect(s.requests.map((r) => [r.route, r.status])).toEqual([
      ["paper", 200],
      ["jar", 200],
    ]);
  });

  it("answers Fill's ErrorResponse for unknown projects, versions, builds and paths", async () => {
    const s = await start();
    const cases: Array<[string, number, string, string]> = [
      ["/v3/projects/waterfall", 404, "project_not_found", "No project was found with the given identifier."],
      [
        "/v3/projects/waterfall/versions/1.21.4/builds",
        404,
        "project_not_found",
        "No project was found with the given identifier.",
      ],
      [
        "/v3/projects/paper/versions/1.8.8/builds",
        404,
        "version_not_found",
        "No version was found with the given identifier.",
      ],
      [
        "/v3/projects/paper/versions/1.21.4/builds/999",
        404,
        "build_not_found",
        "No build was found with the given identifier.",
      ],
      [
        "/v3/projects/paper/versions/1.21.4/builds/nope",
        404,
        "build_not_found",
        "No build was found with the given identifier.",
      ],
    ];
    for (const [path, status, error, message] of cases) {
      const res = await get(`${s.bases.paper}${path}`);
      expect(res.status, path).toBe(status);
      expect(await json(res), path).toEqual({ ok: false, error, message });
    }
    const unknown = await get(`${s.bases.paper}/v2/projects/paper`);
    expect(unknown.status).toBe(404);
    expect(await json(unknown)).toMatchObject({ ok: false, error: "unknown_method", message: expect.any(String) });
    const wrongSha = await get(`${s.url}/fill-data/v1/objects/${"0".repeat(64)}/paper-1.21.4-231.jar`);
    expect(wrongSha.status).toBe(404);
    expect(wrongSha.headers.get("content-type")).toBe("application/xml");
    expect(await wrongSha.text()).toContain("<Code>NoSuchKey</Code>");
  });

  it("refuses requests without a descriptive User-Agent and accepts one with a contact", async () => {
    const s = await start();
    const url = `${s.bases.paper}/v3/projects/paper`;
    for (const ua of ["curl/8.5.0", "Wget/1.21.4", "python-requests/2.32.3", "mcops/1.0", "mcops/1.0 (Linux x86_64)"]) {
      const res = await get(url, ua);
      expect(res.status, ua).toBe(403);
      expect(await json(res), ua).toEqual({
        ok: false,
        error: "user_agent_required",
        message:
          "Requests must include a User-Agent that identifies your software and a contact (https://docs.papermc.io/misc/downloads-service)",
      });
    }
    expect((await get(url, null)).status).toBe(403); // fetch's own default User-Agent
    const missing = await getWithoutUserAgent(url);
    expect(missing.status).toBe(403);
    expect(JSON.parse(missing.body)).toMatchObject({ error: "user_agent_required" });
    expect((await get(url, UA)).status).toBe(200);
    expect((await get(url, "mcops/1.0 (ops@example.org)")).status).toBe(200);
    expect(s.requests.at(-1)).toMatchObject({ route: "paper", userAgent: "mcops/1.0 (ops@example.org)", status: 200 });
    expect(s.requests.find((r) => r.userAgent === undefined)).toMatchObject({ status: 403, route: "paper" });
    // The other hosts do not care.
    expect((await get(`${s.bases.purpur}/v2/purpur`, "curl/8.5.0")).status).toBe(200);
    expect(isDescriptiveUserAgent("node")).toBe(false);
    expect(isDescriptiveUserAgent("undici")).toBe(false);
  });

  it("accepts any User-Agent when requireUserAgent is false", async () => {
    const s = await start({ requireUserAgent: false });
    expect((await get(`${s.bases.paper}/v3/projects/paper`, "curl/8.5.0")).status).toBe(200);
    expect((await getWithoutUserAgent(`${s.bases.paper}/v3/projects/paper`)).status).toBe(200);
  });
});

describe("Purpur v2", () => {
  it("serves the project, a version's builds, a build and latest", async () => {
    const s = await start({ purpur: { "1.21.4": ["2400", "2401"], "1.21.10": ["2500"], "1.20.6": ["2200"] } });
    const base = `${s.bases.purpur}/v2/purpur`;
    expect(await json(await get(base))).toEqual({
      project: "purpur",
      metadata: { current: "1.21.10" },
      versions: ["1.20.6", "1.21.4", "1.21.10"],
    });
    expect(await json(await get(`${base}/1.21.4`))).toEqual({
      project: "purpur",
      version: "1.21.4",
      builds: { latest: "2401", all: ["2400", "2401"] },
    });
    const build = await json(await get(`${base}/1.21.4/2400`));
    expect(build).toEqual({
      project: "purpur",
      version: "1.21.4",
      build: "2400",
      result: "SUCCESS",
      timestamp: expect.any(Number),
      duration: expect.any(Number),
      commits: [
        {
          author: expect.any(String),
          description: expect.any(String),
          hash: expect.stringMatching(/^[0-9a-f]{40}$/),
          email: expect.any(String),
          timestamp: expect.any(Number),
        },
      ],
      metadata: {},
      md5: digest("md5", s.jar("purpur-1.21.4-2400.jar")),
    });
    const latest = await json(await get(`${base}/1.21.4/latest`));
    expect(latest.build).toBe("2401");
  });

  it("downloads the jar whose md5 the build names, with its file name", async () => {
    const s = await start();
    const base = `${s.bases.purpur}/v2/purpur/1.21.4`;
    const { md5 } = await json(await get(`${base}/latest`));
    const res = await get(`${base}/latest/download`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/java-archive");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="purpur-1.21.4-2401.jar"');
    const body = await bytes(res);
    expect(res.headers.get("content-length")).toBe(String(body.length));
    expect(digest("md5", body)).toBe(md5);
    expect(body.equals(s.jar("purpur-1.21.4-2401"))).toBe(true);
    expect(s.requests.map((r) => r.route)).toEqual(["purpur", "jar"]);
  });

  it("answers {error} 404s", async () => {
    const s = await start();
    const base = `${s.bases.purpur}/v2/purpur`;
    for (const [path, error] of [
      ["/1.8.8", "version not found"],
      ["/1.8.8/latest", "version not found"],
      ["/1.21.4/9999", "build not found"],
      ["/1.21.4/9999/download", "build not found"],
    ]) {
      const res = await get(`${base}${path}`);
      expect(res.status, path).toBe(404);
      expect(await json(res), path).toEqual({ error });
    }
  });
});

describe("Mojang", () => {
  it("serves the manifest v2, each version's JSON with a matching sha1, and the server jar", async () => {
    const s = await start();
    const manifest = await json(await get(`${s.bases.mojang}/mc/game/version_manifest_v2.json`));
    expect(manifest.latest).toEqual({ release: "1.21.4", snapshot: "1.21.4" });
    expect(manifest.versions.map((v: { id: string; type: string }) => [v.id, v.type])).toEqual([
      ["1.21.4", "release"],
      ["25w03a", "snapshot"],
      ["1.21.3", "release"],
      ["a1.0.4", "old_alpha"],
    ]);
    const entry = manifest.versions[0];
    expect(entry).toEqual({
      id: "1.21.4",
      type: "release",
      url: `${s.url}/mojang/v1/packages/${entry.sha1}/1.21.4.json`,
      time: expect.stringMatching(/\+00:00$/),
      releaseTime: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/),
      sha1: expect.stringMatching(/^[0-9a-f]{40}$/),
      complianceLevel: 1,
    });
    const res = await get(entry.url);
    const text = Buffer.from(await res.arrayBuffer());
    expect(digest("sha1", text)).toBe(entry.sha1);
    const version = JSON.parse(text.toString("utf8"));
    expect(version).toMatchObject({
      id: "1.21.4",
      type: "release",
      mainClass: "net.minecraft.client.main.Main",
      javaVersion: { component: "java-runtime-delta", majorVersion: 21 },
      downloads: {
        client: { sha1: expect.any(String), size: expect.any(Number), url: expect.any(String) },
        server: {
          sha1: expect.stringMatching(/^[0-9a-f]{40}$/),
          size: expect.any(Number),
          url: `${s.url}/mojang-data/v1/objects/${version.downloads.server.sha1}/server.jar`,
        },
      },
    });
    const jar = await get(version.downloads.server.url);
    expect(jar.headers.get("content-type")).toBe("application/java-archive");
    const body = await bytes(jar);
    expect(body.length).toBe(version.downloads.server.size);
    expect(digest("sha1", body)).toBe(version.downloads.server.sha1);
    expect(body.equals(s.jar("vanilla-1.21.4"))).toBe(true);
    expect(s.requests.map((r) => r.route)).toEqual(["mojang", "mojang", "jar"]);
  });

  it("leaves out the server download of a version that has none, and takes latest from the order given", async () => {
    const s = await start({
      vanilla: [
        { id: "25w04a", type: "snapshot" },
        { id: "1.21.4" },
        { id: "b1.7.3", type: "old_beta", server: false },
      ],
    });
    const manifest = await json(await get(`${s.bases.mojang}/mc/game/version_manifest_v2.json`));
    expect(manifest.latest).toEqual({ release: "1.21.4", snapshot: "25w04a" });
    const old = await json(await get(manifest.versions[2].url));
    expect(Object.keys(old.downloads)).toEqual(["client"]);
    expect(old.javaVersion.majorVersion).toBe(8);
  });

  it("answers S3's XML 404 for unknown keys", async () => {
    const s = await start();
    for (const url of [
      `${s.bases.mojang}/mc/game/version_manifest.json`,
      `${s.bases.mojang}/v1/packages/${"0".repeat(40)}/1.21.4.json`,
      `${s.url}/mojang-data/v1/objects/${"0".repeat(40)}/server.jar`,
    ]) {
      const res = await get(url);
      expect(res.status, url).toBe(404);
      expect(res.headers.get("content-type")).toBe("application/xml");
      expect(await res.text()).toBe(
        '<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>',
      );
    }
  });
});

describe("Fabric meta v2", () => {
  it("lists game, loader and installer versions", async () => {
    const s = await start({
      fabric: {
        games: ["25w03a", "1.21.4"],
        loaders: [{ version: "0.16.10", stable: true }],
        installers: [{ version: "1.0.1", stable: true }],
      },
    });
    const base = `${s.bases.fabric}/v2/versions`;
    expect(await json(await get(`${base}/game`))).toEqual([
      { version: "25w03a", stable: false },
      { version: "1.21.4", stable: true },
    ]);
    expect(await json(await get(`${base}/loader`))).toEqual([
      { separator: ".", build: 10, maven: "net.fabricmc:fabric-loader:0.16.10", version: "0.16.10", stable: true },
    ]);
    const installers = await json(await get(`${base}/installer`));
    expect(installers).toEqual([
      { url: expect.any(String), maven: "net.fabricmc:fabric-installer:1.0.1", version: "1.0.1", stable: true },
    ]);
    const installer = await get(installers[0].url);
    expect(installer.status).toBe(200);
    expect((await bytes(installer)).equals(s.jar("fabric-installer-1.0.1.jar"))).toBe(true);
  });

  it("lists loaders for a game version (400 [] for an unknown one) and serves the server launcher jar", async () => {
    const s = await start();
    const base = `${s.bases.fabric}/v2/versions/loader`;
    const forGame = await json(await get(`${base}/1.21.4`));
    expect(forGame).toHaveLength(2);
    expect(forGame[0]).toMatchObject({
      loader: {
        separator: ".",
        build: 10,
        maven: "net.fabricmc:fabric-loader:0.16.10",
        version: "0.16.10",
        stable: true,
      },
      intermediary: { maven: "net.fabricmc:intermediary:1.21.4", version: "1.21.4", stable: true },
      launcherMeta: {
        version: 2,
        mainClass: {
          client: "net.fabricmc.loader.impl.launch.knot.KnotClient",
          server: "net.fabricmc.loader.impl.launch.knot.KnotServer",
        },
      },
    });
    expect(forGame[1].loader).toMatchObject({ version: "0.16.11-beta.1", stable: false });
    const unknown = await get(`${base}/9.9`);
    expect(unknown.status).toBe(400);
    expect(await json(unknown)).toEqual([]);

    const res = await get(`${base}/1.21.4/0.16.10/1.0.1/server/jar`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/java-archive");
    const name = "fabric-server-mc.1.21.4-loader.0.16.10-launcher.1.0.1.jar";
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="${name}"`);
    expect((await bytes(res)).equals(s.jar(name))).toBe(true);
    expect(s.requests.at(-1)).toMatchObject({ route: "jar", status: 200 });
  });

  it("answers 400 text for an unknown game, loader or installer", async () => {
    const s = await start();
    const base = `${s.bases.fabric}/v2/versions/loader`;
    for (const [path, message] of [
      ["/1.21.4/9.9/1.0.1", "Unable to find valid version for loader_version"],
      ["/9.9/0.16.10/1.0.1", "Unable to find valid version for game_version"],
      ["/1.21.4/0.16.10/9.9", "Unable to find valid version for installer_version"],
    ]) {
      const res = await get(`${base}${path}/server/jar`);
      expect(res.status, path).toBe(400);
      expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
      expect(await res.text()).toBe(message);
    }
  });

  it("takes stable for a version, refuses a query and loaders before 0.12, as ServerBootstrap does", async () => {
    const s = await start({
      fabric: {
        games: ["25w03a", "1.21.4"],
        loaders: [
          { version: "0.16.11-beta.1", stable: false },
          { version: "0.16.10", stable: true },
          { version: "0.11.7", stable: true },
        ],
        installers: [{ version: "1.0.1", stable: true }],
      },
    });
    const base = `${s.bases.fabric}/v2/versions/loader`;
    const stable = await get(`${base}/stable/stable/stable/server/jar`);
    expect(stable.status).toBe(200);
    const name = "fabric-server-mc.1.21.4-loader.0.16.10-launcher.1.0.1.jar";
    expect(stable.headers.get("content-disposition")).toBe(`attachment; filename="${name}"`);
    expect(stable.headers.get("cache-control")).toBe("public, max-age=120");
    expect((await bytes(stable)).equals(s.jar(name))).toBe(true);
    const pinned = await get(`${base}/1.21.4/0.16.10/1.0.1/server/jar`);
    expect(pinned.headers.get("cache-control")).toBe("public, max-age=86400");
    const query = await get(`${base}/1.21.4/0.16.10/1.0.1/server/jar?x=1`);
    expect([query.status, await query.text()]).toEqual([400, "Query params not allowed on this endpoint."]);
    const old = await get(`${base}/1.21.4/0.11.7/1.0.1/server/jar`);
    expect(old.status).toBe(400);
    expect(await old.text()).toMatch(/^Fabric loader 0\.12 or higher is required/);
    const post = await fetch(`${base}/1.21.4`, { method: "POST", headers: { "User-Agent": UA } });
    expect([post.status, await post.text()]).toEqual([404, "Not Found"]);
  });
});

describe("the installers' hosts", () => {
  it("NeoForge's maven: metadata in publication order, Reposilite's sorted versions, the installer and its checksums", async () => {
    const s = await start();
    const xml = await (await get(`${s.bases.neoforge}/releases/net/neoforged/neoforge/maven-metadata.xml`)).text();
    expect([...xml.matchAll(/<version>([^<]+)<\/version>/g)].map((m) => m[1])).toEqual([
      "20.4.237",
      "21.1.72",
      "21.4.10-beta",
      "21.1.77",
    ]);
    expect(xml).toContain("<release>21.1.77</release>");
    const api = `${s.bases.neoforge}/api/maven/versions/releases/net/neoforged/neoforge`;
    expect(await json(await get(api))).toEqual({
      isSnapshot: false,
      versions: ["20.4.237", "21.1.72", "21.1.77", "21.4.10-beta"],
    });
    expect((await json(await get(`${api}?filter=21.1.`))).versions).toEqual(["21.1.72", "21.1.77"]);
    expect((await json(await get(`${api}?filter=has:beta`))).versions).toEqual(["21.4.10-beta"]);

    const file = `${s.bases.neoforge}/releases/net/neoforged/neoforge/21.1.77/neoforge-21.1.77-installer.jar`;
    const res = await get(file);
    expect(res.headers.get("content-type")).toBe("application/java-archive");
    const jar = await bytes(res);
    expect(jar.equals(s.jar("neoforge-21.1.77-installer.jar"))).toBe(true);
    for (const algorithm of ["sha256", "sha1", "md5"]) {
      expect(await (await get(`${file}.${algorithm}`)).text()).toBe(digest(algorithm, jar));
    }
    expect((await get(`${file}.sha512`)).status).toBe(404);
    const missing = await get(`${s.bases.neoforge}/releases/net/neoforged/neoforge/9.9.9/neoforge-9.9.9-installer.jar`);
    expect(missing.status).toBe(404);
    expect(await json(missing)).toMatchObject({ status: 404 });
    expect(s.requests.map((r) => r.route)).toEqual([
      "neoforge",
      "neoforge",
      "neoforge",
      "neoforge",
      "jar",
      "neoforge",
      "neoforge",
      "neoforge",
      "neoforge",
      "neoforge",
    ]);
  });

  it("Forge's maven and promotions: versions <mc>-<forge>, promos, the installer with sha1 and md5 only", async () => {
    const s = await start();
    const xml = await (await get(`${s.bases.forge}/net/minecraftforge/forge/maven-metadata.xml`)).text();
    expect(xml).toContain("<version>1.20.1-47.3.0</version>");
    const promos = await json(await get(`${s.bases.forgeFiles}/net/minecraftforge/forge/promotions_slim.json`));
    expect(promos.promos).toEqual({
      "1.20.1-latest": "47.3.0",
      "1.20.1-recommended": "47.2.0",
      "1.21.1-latest": "52.0.10",
    });
    const file = `${s.bases.forge}/net/minecraftforge/forge/1.20.1-47.3.0/forge-1.20.1-47.3.0-installer.jar`;
    const jar = await bytes(await get(file));
    expect(jar.equals(s.jar("forge-1.20.1-47.3.0-installer.jar"))).toBe(true);
    expect(await (await get(`${file}.sha1`)).text()).toBe(digest("sha1", jar));
    expect((await get(`${file}.sha256`)).status).toBe(404);
    expect(
      (await get(`${s.bases.forge}/net/minecraftforge/forge/1.20.1-1.0/forge-1.20.1-1.0-installer.jar`)).status,
    ).toBe(404);
  });

  it("Quilt meta v3 and maven: games, loaders (for a game; 404 not_found for an unknown one), installers and the jar", async () => {
    const s = await start();
    const base = `${s.bases.quilt}/v3/versions`;
    expect(await json(await get(`${base}/game`))).toEqual([
      { version: "1.21.1", stable: true },
      { version: "1.20.4", stable: true },
    ]);
    expect((await json(await get(`${base}/loader`))).map((l: { version: string }) => l.version)).toEqual([
      "0.27.0-beta.1",
      "0.26.4",
    ]);
    const forGame = await json(await get(`${base}/loader/1.21.1`));
    expect(forGame[1]).toMatchObject({
      loader: { maven: "org.quiltmc:quilt-loader:0.26.4", version: "0.26.4" },
      hashed: { version: "1.21.1" },
      intermediary: { version: "1.21.1" },
    });
    const unknown = await get(`${base}/loader/9.9`);
    expect(unknown.status).toBe(404);
    expect(await json(unknown)).toEqual({ code: "not_found", message: "File with such name does not exist." });
    const [installer] = await json(await get(`${base}/installer`));
    expect(installer).toMatchObject({ maven: "org.quiltmc:quilt-installer:0.9.2", version: "0.9.2" });
    expect(installer.url).toBe(`${s.bases.quiltMaven}/org/quiltmc/quilt-installer/0.9.2/quilt-installer-0.9.2.jar`);
    const jar = await bytes(await get(installer.url));
    expect(jar.equals(s.jar("quilt-installer-0.9.2.jar"))).toBe(true);
    expect(await (await get(`${installer.url}.sha256`)).text()).toBe(digest("sha256", jar));
  });

  it("serves installerJar's bytes as each installer, and only the checksums asked for", async () => {
    const made: string[] = [];
    const s = await start({
      installerJar: (loader, version) => {
        made.push(`${loader} ${version}`);
        return zipFile([{ name: Buffer.from("a.txt"), data: Buffer.from(`${loader} ${version}`) }]);
      },
      checksums: { neoforge: [] },
    });
    const file = `${s.bases.neoforge}/releases/net/neoforged/neoforge/21.1.77/neoforge-21.1.77-installer.jar`;
    const jar = await bytes(await get(file));
    expect(jar.includes(Buffer.from("neoforge 21.1.77"))).toBe(true);
    expect((await get(`${file}.sha1`)).status).toBe(404);
    await bytes(
      await get(`${s.bases.forge}/net/minecraftforge/forge/1.21.1-52.0.10/forge-1.21.1-52.0.10-installer.jar`),
    );
    expect(made).toEqual(["neoforge 21.1.77", "forge 1.21.1-52.0.10"]);
  });

  it("takes faults on its routes: a 503 in Reposilite's style, a corrupt installer", async () => {
    const s = await start();
    s.inject({ kind: "status", status: 503, route: "neoforge" });
    const api = await get(`${s.bases.neoforge}/api/maven/versions/releases/net/neoforged/neoforge`);
    expect(api.status).toBe(503);
    expect(await json(api)).toMatchObject({ status: 503 });
    s.inject({ kind: "corrupt", route: "jar" });
    const file = `${s.bases.quiltMaven}/org/quiltmc/quilt-installer/0.9.2/quilt-installer-0.9.2.jar`;
    expect((await bytes(await get(file))).equals(s.jar("quilt-installer-0.9.2.jar"))).toBe(false);
    expect(s.requests.map((r) => r.fault)).toEqual(["status", "corrupt"]);
  });
});

describe("jars", () => {
  it("are valid ZIP files of about jarBytes with a manifest, the same for a name and different across names", async () => {
    const s = await start({ jarBytes: 20_000 });
    const paper = s.jar("paper-1.21.4-231.jar");
    expect(paper.length).toBe(20_000);
    expect(s.jar("paper-1.21.4-231").equals(paper)).toBe(true);
    expect(s.jar("paper-1.21.4-232.jar").equals(paper)).toBe(false);
    const again = await startDownloadStandIn({ jarBytes: 20_000 });
    try {
      expect(again.jar("paper-1.21.4-231.jar").equals(paper)).toBe(true);
    } finally {
      await again.close();
    }
    // The end of central directory says 3 entries (the manifest, version.json, the padding) and where the central
    // directory is; a Fabric launcher jar carries no version.json.
    const end = paper.subarray(paper.length - 22);
    expect(end.readUInt32LE(0)).toBe(0x06054b50);
    expect(end.readUInt16LE(10)).toBe(3);
    const fabric = s.jar("fabric-server-mc.1.21.4-loader.0.16.10-launcher.1.0.1.jar");
    expect(fabric.readUInt16LE(fabric.length - 22 + 10)).toBe(2);
    expect(paper.readUInt32LE(end.readUInt32LE(16))).toBe(0x02014b50);
    expect(paper.readUInt32LE(0)).toBe(0x04034b50);

    if (!HAS_UNZIP) return;
    dir = tempDir("mcops-testkit-jar-");
    const file = join(dir.path, "paper.jar");
    writeFileSync(file, paper);
    expect(execFileSync("unzip", ["-t", file], { encoding: "utf8", timeout: 30_000 })).toContain("No errors detected");
    const manifest = execFileSync("unzip", ["-p", file, "META-INF/MANIFEST.MF"], { encoding: "utf8", timeout: 30_000 });
    expect(manifest).toBe("Manifest-Version: 1.0\r\nMain-Class: io.papermc.paperclip.Main\r\n\r\n");
    const version = execFileSync("unzip", ["-p", file, "version.json"], { encoding: "utf8", timeout: 30_000 });
    expect(JSON.parse(version)).toMatchObject({ id: "1.21.4", world_version: 4189 });
    // A deflated zip of the same maker, as real jars have most of their entries.
    const deflated = join(dir.path, "deflated.jar");
    writeFileSync(
      deflated,
      zipFile([{ name: Buffer.from("a.txt"), data: Buffer.from("hello ".repeat(100)) }], { deflate: true }),
    );
    expect(execFileSync("unzip", ["-t", deflated], { encoding: "utf8", timeout: 30_000 })).toContain(
      "No errors detected",
    );
    expect(execFileSync("unzip", ["-p", deflated, "a.txt"], { encoding: "utf8", timeout: 30_000 })).toBe(
      "hello ".repeat(100),
    );
  });

  it("default to 64 KiB", async () => {
    const s = await start();
    expect(s.jar("vanilla-1.21.4").length).toBe(64 * 1024);
  });
});

describe("faults", () => {
  it("truncate sends the full Content-Length but fewer bytes, so reading the body fails", async () => {
    const s = await start();
    const name = "purpur-1.21.4-2401.jar";
    s.inject({ kind: "truncate", bytes: 1000 });
    // A JSON request does not take a truncate fault.
    expect((await get(`${s.bases.purpur}/v2/purpur/1.21.4/latest`)).status).toBe(200);
    const res = await get(`${s.bases.purpur}/v2/purpur/1.21.4/latest/download`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-length")).toBe(String(s.jar(name).length));
    expect(await drain(res)).toEqual({ received: 1000, failed: true });

    s.inject({ kind: "truncate", bytes: 10, route: "jar" });
    await expect(get(`${s.bases.purpur}/v2/purpur/1.21.4/latest/download`).then(bytes)).rejects.toThrow();
    expect(s.requests.map((r) => [r.route, r.status, r.fault])).toEqual([
      ["purpur", 200, undefined],
      ["jar", 200, "truncate"],
      ["jar", 200, "truncate"],
    ]);
    s.inject({ kind: "truncate", bytes: 0 });
    const empty = await get(`${s.url}/mojang-data/v1/objects/${digest("sha1", s.jar("vanilla-1.21.4"))}/server.jar`);
    expect(empty.headers.get("content-length")).toBe(String(64 * 1024));
    expect(await drain(empty)).toEqual({ received: 0, failed: true });
    // Used up: the next download is whole.
    expect((await bytes(await get(`${s.bases.purpur}/v2/purpur/1.21.4/latest/download`))).equals(s.jar(name))).toBe(
      true,
    );
  });

  it("corrupt sends the full length with a different hash", async () => {
    const s = await start();
    const build = await json(await get(`${s.bases.paper}/v3/projects/paper/versions/1.21.4/builds/latest`));
    const download = build.downloads["server:default"];
    s.inject({ kind: "corrupt" });
    const body = await bytes(await get(download.url));
    expect(body.length).toBe(download.size);
    expect(digest("sha256", body)).not.toBe(download.checksums.sha256);
    const original = s.jar(download.name);
    const differing = body.filter((byte, i) => byte !== original[i]).length;
    expect(differing).toBe(1);
    expect(digest("sha256", await bytes(await get(download.url)))).toBe(download.checksums.sha256);
  });

  it("status 503 times:2 answers the service's own error twice, then 200", async () => {
    const s = await start();
    const url = `${s.bases.paper}/v3/projects/paper`;
    s.inject({ kind: "status", status: 503, times: 2 });
    for (let i = 0; i < 2; i += 1) {
      const res = await get(url);
      expect(res.status).toBe(503);
      expect(await json(res)).toEqual({ ok: false, error: "service_unavailable", message: "Service Unavailable." });
    }
    expect((await get(url)).status).toBe(200);
    expect(s.requests.map((r) => [r.status, r.fault])).toEqual([
      [503, "status"],
      [503, "status"],
      [200, undefined],
    ]);

    s.inject({ kind: "status", status: 503 });
    const mojang = await get(`${s.bases.mojang}/mc/game/version_manifest_v2.json`);
    expect(mojang.status).toBe(503);
    expect(mojang.headers.get("content-type")).toBe("application/xml");
    expect(await mojang.text()).toContain("<Code>SlowDown</Code>");
    s.inject({ kind: "status", status: 500 });
    expect(await json(await get(`${s.bases.purpur}/v2/purpur`))).toEqual({ error: "internal server error" });
    s.inject({ kind: "status", status: 502, body: "upstream gone" });
    const fabric = await get(`${s.bases.fabric}/v2/versions/game`);
    expect(fabric.status).toBe(502);
    expect(await fabric.text()).toBe("upstream gone");
  });

  it("rate-limit answers 429 with Retry-After", async () => {
    const s = await start();
    s.inject({ kind: "rate-limit", retryAfterSeconds: 7 });
    const res = await get(`${s.bases.paper}/v3/projects/paper`);
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("7");
    expect(await json(res)).toMatchObject({ ok: false, error: "too_many_requests" });
    expect(s.requests[0]).toMatchObject({ status: 429, fault: "rate-limit" });
  });

  it("drop closes the connection and delay answers later", async () => {
    const s = await start();
    s.inject({ kind: "drop" });
    await expect(get(`${s.bases.fabric}/v2/versions/game`)).rejects.toThrow();
    expect(s.requests[0]).toMatchObject({ route: "fabric", status: 0, fault: "drop" });
    s.inject({ kind: "delay", ms: 60 });
    const started = performance.now();
    expect((await get(`${s.bases.fabric}/v2/versions/game`)).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(50);
  });

  it("a fault with a route only hits that route's requests", async () => {
    const s = await start();
    s.inject({ kind: "status", status: 503, route: "purpur" });
    expect((await get(`${s.bases.paper}/v3/projects/paper`)).status).toBe(200);
    expect((await get(`${s.bases.purpur}/v2/purpur/1.21.4/latest/download`)).status).toBe(200);
    expect((await get(`${s.bases.purpur}/v2/purpur`)).status).toBe(503);
    s.inject({ kind: "status", status: 404, route: "jar" });
    expect((await get(`${s.bases.mojang}/mc/game/version_manifest_v2.json`)).status).toBe(200);
    const jar = await get(`${s.bases.fabric}/v2/versions/loader/1.21.4/0.16.10/1.0.1/server/jar`);
    expect(jar.status).toBe(404);
    expect(await jar.text()).toBe("Not Found");
    expect(() => s.inject({ kind: "corrupt", route: "paper" })).toThrow(RangeError);
  });

  it("reset forgets requests and pending faults", async () => {
    const s = await start();
    s.inject({ kind: "status", status: 503 });
    await get(`${s.url}/nowhere`);
    expect(s.requests).toHaveLength(1);
    expect(s.requests[0]).toMatchObject({ route: "other", status: 503 });
    s.inject({ kind: "status", status: 503 });
    s.reset();
    expect(s.requests).toHaveLength(0);
    expect((await get(`${s.bases.purpur}/v2/purpur`)).status).toBe(200);
  });
});
