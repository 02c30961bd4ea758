import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { createHttpClient, JobError, systemClock, UsageError } from "@mcops/core";
import { type DownloadStandIn, startDownloadStandIn, tempDir } from "@mcops/testkit";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { downloadVerified } from "../src/download.ts";
import { compareVersions, mavenVersions, neoforgeGame, publishedChecksum } from "../src/loaders.ts";
import { createSource, type Source } from "../src/sources.ts";

const UA = "mcops-jar-download/test (ops@example.com)";
let stand: DownloadStandIn;
let source: Source;

const digest = (algorithm: string, bytes: Buffer): string => createHash(algorithm).update(bytes).digest("hex");

beforeAll(async () => {
  stand = await startDownloadStandIn();
  source = createSource(createHttpClient({ userAgent: UA, retryDelayMs: 10 }), stand.bases);
});
afterAll(() => stand.close());
beforeEach(() => stand.reset());

describe("versions", () => {
  it("maps a NeoForge version to its game version, the year style too", () => {
    expect(neoforgeGame("21.1.77")).toBe("1.21.1");
    expect(neoforgeGame("21.0.167")).toBe("1.21");
    expect(neoforgeGame("20.4.237")).toBe("1.20.4");
    expect(neoforgeGame("20.2.3-beta")).toBe("1.20.2");
    expect(neoforgeGame("26.1.0.10-beta")).toBe("26.1");
    expect(neoforgeGame("26.1.2.5")).toBe("26.1.2");
    expect(neoforgeGame("47.1.82")).toBeUndefined();
    expect(neoforgeGame("1.20.1-47.1.74")).toBeUndefined();
  });

  it("orders numerically, a pre-release before its release", () => {
    const sorted = ["21.1.9", "21.1.77", "21.1.77-beta", "21.4.10-beta", "1.21"].sort(compareVersions);
    expect(sorted).toEqual(["1.21", "21.1.9", "21.1.77-beta", "21.1.77", "21.4.10-beta"]);
  });

  it("reads maven-metadata.xml's versions in the file's order", () => {
    const xml =
      "<metadata><versioning><versions><version>1.0</version>\n<version> 2.0 </version></versions></versioning></metadata>";
    expect(mavenVersions(xml)).toEqual(["1.0", "2.0"]);
  });
});

describe("NeoForge", () => {
  it("takes the newest stable build for the game version, its sha256, and runs --installServer", async () => {
    const artifact = await source.resolveInstaller({ type: "neoforge", version: "1.21.1" });
    const jar = stand.jar("neoforge-21.1.77-installer.jar");
    expect(artifact).toEqual({
      type: "neoforge",
      game: "1.21.1",
      loader: "21.1.77",
      installer: {
        fileName: "neoforge-21.1.77-installer.jar",
        url: `${stand.bases.neoforge}/releases/net/neoforged/neoforge/21.1.77/neoforge-21.1.77-installer.jar`,
        checksum: { algorithm: "sha256", hex: digest("sha256", jar) },
      },
      cmd: ["java", "-jar", "neoforge-21.1.77-installer.jar", "--installServer"],
      javaAtLeast: 8,
    });
    expect(stand.requests.every((r) => r.userAgent === UA)).toBe(true);
    expect(stand.requests.some((r) => r.route === "jar")).toBe(false);
  });

  it("takes --loader of the game version; refuses an unknown one with close matches, or one of another game", async () => {
    expect((await source.resolveInstaller({ type: "neoforge", version: "1.21.1", loader: "21.1.72" })).loader).toBe(
      "21.1.72",
    );
    const unknown = await source
      .resolveInstaller({ type: "neoforge", version: "1.21.1", loader: "21.1.99" })
      .catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(UsageError);
    expect(unknown).toMatchObject({
      message: "NeoForge has no version 21.1.99 for Minecraft 1.21.1",
      hint: "close: 21.1.77, 21.1.72; see what there is: jar-download 1.21.1 --list --type neoforge",
    });
    await expect(
      source.resolveInstaller({ type: "neoforge", version: "1.21.1", loader: "20.4.237" }),
    ).rejects.toMatchObject({ name: "UsageError", message: "NeoForge 20.4.237 is for Minecraft 1.20.4, not 1.21.1" });
  });

  it("takes a beta only with --channel beta (or by name), and says so when there is no stable one", async () => {
    const error = await source.resolveInstaller({ type: "neoforge", version: "1.21.4" }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: "UsageError",
      message: "NeoForge has no stable build for Minecraft 1.21.4 yet (newest: 21.4.10-beta)",
      hint: "take it anyway with --loader 21.4.10-beta (or --channel beta)",
    });
    expect((await source.resolveInstaller({ type: "neoforge", version: "1.21.4", channel: "BETA" })).loader).toBe(
      "21.4.10-beta",
    );
    await expect(source.resolveInstaller({ type: "neoforge", version: "1.19.2" })).rejects.toMatchObject({
      message: "NeoForge has no build for Minecraft 1.19.2",
    });
  });

  it("lists game versions and a game version's builds newest first, betas marked", async () => {
    expect(await source.list("neoforge", undefined)).toEqual(["1.21.4", "1.21.1", "1.20.4"]);
    expect(await source.list("neoforge", "1.21.1")).toEqual(["21.1.77", "21.1.72"]);
    expect(await source.list("neoforge", "1.21.4")).toEqual(["21.4.10-beta\tbeta"]);
  });
});

describe("Forge", () => {
  it("takes the promotion (recommended, else latest), sha1 when no sha256 is published", async () => {
    const recommended = await source.resolveInstaller({ type: "forge", version: "1.20.1" });
    const jar = stand.jar("forge-1.20.1-47.2.0-installer.jar");
    expect(recommended).toMatchObject({
      game: "1.20.1",
      loader: "47.2.0",
      installer: {
        fileName: "forge-1.20.1-47.2.0-installer.jar",
        url: `${stand.bases.forge}/net/minecraftforge/forge/1.20.1-47.2.0/forge-1.20.1-47.2.0-installer.jar`,
        checksum: { algorithm: "sha1", hex: digest("sha1", jar) },
      },
      cmd: ["java", "-jar", "forge-1.20.1-47.2.0-installer.jar", "--installServer"],
      javaAtLeast: 8,
    });
    expect((await source.resolveInstaller({ type: "forge", version: "1.21.1" })).loader).toBe("52.0.10");
  });

  it("takes --loader as the Forge part or the whole version, and refuses one of another game version", async () => {
    expect((await source.resolveInstaller({ type: "forge", version: "1.20.1", loader: "47.3.0" })).loader).toBe(
      "47.3.0",
    );
    const whole = await source.resolveInstaller({ type: "forge", version: "1.20.1", loader: "1.20.1-47.3.0" });
    expect(whole.installer.fileName).toBe("forge-1.20.1-47.3.0-installer.jar");
    await expect(
      source.resolveInstaller({ type: "forge", version: "1.20.1", loader: "52.0.10" }),
    ).rejects.toMatchObject({ name: "UsageError", message: "Forge 52.0.10 is for Minecraft 1.21.1, not 1.20.1" });
    await expect(source.resolveInstaller({ type: "forge", version: "1.20.1", loader: "47.9.9" })).rejects.toMatchObject(
      {
        message: "Forge has no version 47.9.9 for Minecraft 1.20.1",
        hint: expect.stringMatching(/^close: 47\.3\.0, 47\.2\.0;/),
      },
    );
  });

  it("lists game versions and builds, the promotions marked", async () => {
    expect(await source.list("forge", undefined)).toEqual(["1.21.1", "1.20.1"]);
    expect(await source.list("forge", "1.20.1")).toEqual(["47.3.0\tlatest", "47.2.0\trecommended"]);
  });
});

describe("Quilt", () => {
  it("takes the newest stable loader for the game and the newest installer, run as quilt-installer's CLI says", async () => {
    const artifact = await source.resolveInstaller({ type: "quilt", version: "1.21.1" });
    const jar = stand.jar("quilt-installer-0.9.2.jar");
    expect(artifact).toEqual({
      type: "quilt",
      game: "1.21.1",
      loader: "0.26.4",
      installer: {
        fileName: "quilt-installer-0.9.2.jar",
        url: `${stand.bases.quiltMaven}/org/quiltmc/quilt-installer/0.9.2/quilt-installer-0.9.2.jar`,
        checksum: { algorithm: "sha256", hex: digest("sha256", jar) },
      },
      cmd: [
        "java",
        "-jar",
        "quilt-installer-0.9.2.jar",
        "install",
        "server",
        "1.21.1",
        "0.26.4",
        "--download-server",
        "--install-dir=.",
      ],
      javaAtLeast: 17,
    });
    expect((await source.resolveInstaller({ type: "quilt", version: "1.21.1", channel: "BETA" })).loader).toBe(
      "0.27.0-beta.1",
    );
  });

  it("says so for a game version meta does not know (its 404), and lists games and loaders", async () => {
    await expect(source.resolveInstaller({ type: "quilt", version: "1.8.9" })).rejects.toMatchObject({
      name: "UsageError",
      message: "Quilt has no build for Minecraft 1.8.9",
    });
    expect(await source.list("quilt", undefined)).toEqual(["1.21.1", "1.20.4"]);
    expect(await source.list("quilt", "1.20.4")).toEqual(["0.27.0-beta.1\tbeta", "0.26.4"]);
  });
});

describe("checksums and failures", () => {
  it("downloads the installer with downloadVerified against the maven's checksum; a corrupt one is refused", async () => {
    const dir = tempDir("mcops-loader-");
    try {
      const http = createHttpClient({ userAgent: UA, retryDelayMs: 10 });
      const { installer } = await source.resolveInstaller({ type: "forge", version: "1.20.1" });
      const path = join(dir.path, installer.fileName);
      const got = await downloadVerified(installer, path, { http, clock: systemClock, retryDelayMs: 5 });
      expect(got).toMatchObject({ algorithm: "sha1", digest: installer.checksum?.hex });
      expect(readFileSync(path)).toEqual(stand.jar(installer.fileName));

      stand.inject({ kind: "corrupt", route: "jar" });
      const bad = await downloadVerified(installer, join(dir.path, "again.jar"), { http, clock: systemClock }).catch(
        (e: unknown) => e,
      );
      expect(bad).toBeInstanceOf(JobError);
      expect((bad as JobError).message).toMatch(/^forge-1\.20\.1-47\.2\.0-installer\.jar does not match its sha1/);
    } finally {
      dir.cleanup();
    }
  });

  it("has no checksum when the maven publishes none (size only)", async () => {
    const bare = await startDownloadStandIn({ checksums: { neoforge: [] } });
    try {
      const http = createHttpClient({ userAgent: UA, retryDelayMs: 10 });
      const artifact = await createSource(http, bare.bases).resolveInstaller({ type: "neoforge", version: "1.21.1" });
      expect(artifact.installer.checksum).toBeUndefined();
      expect(bare.requests.map((r) => r.path.split("/").at(-1))).toEqual([
        "maven-metadata.xml",
        "neoforge-21.1.77-installer.jar.sha256",
        "neoforge-21.1.77-installer.jar.sha1",
      ]);
    } finally {
      await bare.close();
    }
  });

  it("refuses a checksum file that is not a digest, and cuts off one that does not end", async () => {
    const server = createServer((req, res) => {
      if (req.url === "/a.jar.sha256") res.end("<html>a login page</html>");
      else res.end("x".repeat(64 * 1024));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const hosts = { http: createHttpClient({ userAgent: UA, retryDelayMs: 10 }), bases: stand.bases };
    try {
      const error = await publishedChecksum(hosts, `${base}/a.jar`).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JobError);
      expect(error).toMatchObject({
        message: "the installer's sha256 file is not a sha256 digest",
        where: `${base}/a.jar.sha256`,
      });
      const long = await publishedChecksum(hosts, `${base}/b.jar`).catch((e: unknown) => e);
      expect((long as JobError).message).toBe("reading the installer's sha256: the answer is larger than 1024 bytes");
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("gives up on a metadata host that keeps failing with one line naming it", async () => {
    stand.inject({ kind: "status", status: 502, times: 4, route: "forge" });
    const error = await source.resolveInstaller({ type: "forge", version: "1.20.1" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobError);
    expect((error as JobError).message).toMatch(
      /^reading Forge's maven metadata failed: 127\.0\.0\.1:\d+ answered 502/,
    );
    expect((error as JobError).where).toContain("/net/minecraftforge/forge/maven-metadata.xml");
  });
});
