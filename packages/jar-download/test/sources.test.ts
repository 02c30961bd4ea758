import { createHash } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createHttpClient, JobError, UsageError } from "@mcops/core";
import { type DownloadStandIn, startDownloadStandIn } from "@mcops/testkit";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createSource, type Source } from "../src/sources.ts";

const UA = "mcops-jar-download/test (ops@example.com)";
let stand: DownloadStandIn;
let source: Source;

function digest(algorithm: string, bytes: Buffer): string {
  return createHash(algorithm).update(bytes).digest("hex");
}

beforeAll(async () => {
  stand = await startDownloadStandIn({
    paper: {
      paper: {
        "1.21.4": [
          { id: 230, channel: "STABLE" },
          { id: 231, channel: "STABLE" },
          { id: 232, channel: "ALPHA" },
        ],
        "1.21.6": [
          { id: 1, channel: "ALPHA" },
          { id: 2, channel: "BETA" },
        ],
      },
      folia: { "1.21.4": [{ id: 10, channel: "STABLE" }] },
    },
  });
  source = createSource(createHttpClient({ userAgent: UA, retryDelayMs: 10 }), stand.bases);
});
afterAll(() => stand.close());
beforeEach(() => stand.reset());

describe("Paper and Folia (Fill v3)", () => {
  it("takes the newest STABLE build, not builds/latest (an ALPHA), with the API's URL, size and sha256", async () => {
    const artifact = await source.resolve({ type: "paper", version: "1.21.4" });
    const jar = stand.jar("paper-1.21.4-231.jar");
    expect(artifact).toMatchObject({
      build: "231",
      channel: "STABLE",
      fileName: "paper-1.21.4-231.jar",
      size: jar.length,
      checksum: { algorithm: "sha256", hex: digest("sha256", jar) },
    });
    expect(artifact.url).toMatch(/\/fill-data\/v1\/objects\/[0-9a-f]{64}\/paper-1\.21\.4-231\.jar$/);
    expect(stand.requests.every((r) => r.userAgent === UA)).toBe(true);
  });

  it("takes a build by number, or a less stable channel when asked", async () => {
    expect((await source.resolve({ type: "paper", version: "1.21.4", build: "232" })).channel).toBe("ALPHA");
    expect((await source.resolve({ type: "paper", version: "1.21.4", channel: "ALPHA" })).build).toBe("232");
    expect((await source.resolve({ type: "paper", version: "1.21.6", channel: "BETA" })).build).toBe("2");
    expect((await source.resolve({ type: "folia", version: "1.21.4" })).fileName).toBe("folia-1.21.4-10.jar");
  });

  it("says clearly when there is no such version, build or stable build", async () => {
    await expect(source.resolve({ type: "paper", version: "1.99.9" })).rejects.toMatchObject({
      name: "UsageError",
      message: "Paper has no version 1.99.9",
      hint: "see what there is: jar-download --list --type paper",
    });
    await expect(source.resolve({ type: "paper", version: "1.21.4", build: "999" })).rejects.toThrow(
      "Paper 1.21.4 has no build 999",
    );
    const error = await source.resolve({ type: "paper", version: "1.21.6" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect(error).toMatchObject({
      message: "Paper 1.21.6 has no stable build yet (newest: build 2, BETA)",
      hint: "take it anyway with --build 2 (or --channel beta)",
    });
  });

  it("retries a 5xx and a 429 and then succeeds", async () => {
    stand.inject({ kind: "status", status: 503, times: 2, route: "paper" });
    stand.inject({ kind: "rate-limit", retryAfterSeconds: 0, route: "paper" });
    expect((await source.resolve({ type: "paper", version: "1.21.4" })).build).toBe("231");
    expect(stand.requests.map((r) => r.status)).toEqual([503, 503, 429, 200]);
  });

  it("gives up after the retries with one line naming the address", async () => {
    stand.inject({ kind: "status", status: 502, times: 4, route: "paper" });
    const error = await source.resolve({ type: "paper", version: "1.21.4" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobError);
    expect((error as JobError).message).toMatch(/^asking for the Paper builds failed: 127\.0\.0\.1:\d+ answered 502/);
    expect((error as JobError).where).toContain("/v3/projects/paper/versions/1.21.4/builds");
  });

  it("says in one line which field of which route changed when Fill answers another shape", async () => {
    const renamed = [{ id: 231, channel: "STABLE", downloads: { "server:default": { name: "paper.jar", size: 1 } } }];
    stand.inject({ kind: "status", status: 200, body: renamed, route: "paper" });
    const error = await source.resolve({ type: "paper", version: "1.21.4" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobError);
    expect((error as JobError).message).toMatch(
      /^127\.0\.0\.1:\d+ answered GET \/fill\/v3\/projects\/paper\/versions\/1\.21\.4\/builds in an unexpected shape: 0\.downloads\.server:default\.checksums: expected object, got missing$/,
    );
  });

  it("is refused without a contact in the User-Agent, and says what to set", async () => {
    const anonymous = createSource(
      createHttpClient({ userAgent: "mcops-jar-download/test", retryDelayMs: 10 }),
      stand.bases,
    );
    const error = await anonymous.resolve({ type: "paper", version: "1.21.4" }).catch((e: unknown) => e);
    expect((error as JobError).message).toMatch(/answered 403: .*user_agent_required/);
    expect((error as JobError).hint).toMatch(/DOWNLOAD_CONTACT/);
  });

  it("lists versions and builds", async () => {
    expect(await source.list("paper", undefined)).toEqual(expect.arrayContaining(["1.21.4", "1.21.6"]));
    expect((await source.list("paper", "1.21.4")).map((l) => l.split("\t").slice(0, 2).join(" "))).toEqual([
      "232 ALPHA",
      "231 STABLE",
      "230 STABLE",
    ]);
  });

  it("takes a sha256 Fill spells in capitals as the same digest (issue 31)", async () => {
    // Hex is a number in either case: the artifact carries it in lower case, as the download's digest is compared.
    const jar = stand.jar("paper-1.21.4-231.jar");
    const upper = digest("sha256", jar).toUpperCase();
    const fill = createServer((req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify([
          {
            id: 231,
            channel: "STABLE",
            downloads: {
              "server:default": {
                name: "paper-1.21.4-231.jar",
                checksums: { sha256: upper },
                size: jar.length,
                url: `/x/${req.url}`,
              },
            },
          },
        ]),
      );
    });
    await new Promise<void>((resolve) => fill.listen(0, "127.0.0.1", resolve));
    try {
      const base = `http://127.0.0.1:${(fill.address() as AddressInfo).port}`;
      const own = createSource(createHttpClient({ userAgent: UA, retryDelayMs: 10 }), { ...stand.bases, paper: base });
      const artifact = await own.resolve({ type: "paper", version: "1.21.4" });
      expect(artifact.checksum).toEqual({ algorithm: "sha256", hex: digest("sha256", jar) });
    } finally {
      await new Promise((resolve) => fill.close(resolve));
    }
  });
});

describe("Purpur, vanilla and Fabric", () => {
  it("Purpur: the latest build with its md5, or a named one", async () => {
    const artifact = await source.resolve({ type: "purpur", version: "1.21.4" });
    expect(artifact).toMatchObject({
      build: "2401",
      fileName: "purpur-1.21.4-2401.jar",
      checksum: { algorithm: "md5", hex: digest("md5", stand.jar("purpur-1.21.4-2401.jar")) },
    });
    expect((await source.resolve({ type: "purpur", version: "1.21.4", build: "2400" })).build).toBe("2400");
    await expect(source.resolve({ type: "purpur", version: "1.7.10" })).rejects.toThrow("Purpur has no version 1.7.10");
    await expect(source.resolve({ type: "purpur", version: "1.21.4", build: "7" })).rejects.toThrow(
      "Purpur 1.21.4 has no build 7",
    );
    expect(await source.list("purpur", "1.21.4")).toEqual(["2401", "2400"]);
  });

  it("vanilla: the server download of the version with Mojang's sha1 and size", async () => {
    const artifact = await source.resolve({ type: "vanilla", version: "1.21.4" });
    const jar = stand.jar("vanilla-1.21.4.jar");
    expect(artifact).toMatchObject({
      build: "1.21.4",
      size: jar.length,
      checksum: { algorithm: "sha1", hex: digest("sha1", jar) },
    });
    await expect(source.resolve({ type: "vanilla", version: "a1.0.4" })).rejects.toThrow(
      "Minecraft a1.0.4 has no server jar to download",
    );
    await expect(source.resolve({ type: "vanilla", version: "9.9" })).rejects.toThrow("Minecraft has no version 9.9");
    await expect(source.resolve({ type: "vanilla", version: "1.21.4", build: "3" })).rejects.toThrow(
      "vanilla has no builds",
    );
    expect(await source.list("vanilla", undefined)).toEqual([
      "1.21.4",
      "25w03a\tsnapshot",
      "1.21.3",
      "a1.0.4\told_alpha",
    ]);
  });

  it("Fabric: the newest stable loader and installer, no checksum", async () => {
    const artifact = await source.resolve({ type: "fabric", version: "1.21.4" });
    expect(artifact).toMatchObject({
      build: "0.16.10",
      fileName: "fabric-server-mc.1.21.4-loader.0.16.10-launcher.1.0.1.jar",
    });
    expect(artifact.checksum).toBeUndefined();
    expect(artifact.url).toBe(`${stand.bases.fabric}/v2/versions/loader/1.21.4/0.16.10/1.0.1/server/jar`);
    await expect(source.resolve({ type: "fabric", version: "1.2.5" })).rejects.toThrow(
      "Fabric has no loader for Minecraft 1.2.5",
    );
    // The same [] with 400 is the same answer: a usage error (exit 2), not something to try again later.
    stand.inject({ kind: "status", status: 400, body: [], route: "fabric" });
    const refused = source.resolve({ type: "fabric", version: "1.99.9" });
    await expect(refused).rejects.toThrow("Fabric has no loader for Minecraft 1.99.9");
    await expect(refused).rejects.toBeInstanceOf(UsageError);
    await expect(source.resolve({ type: "fabric", version: "1.21.4", build: "0.1" })).rejects.toThrow(
      "Fabric has no loader 0.1 for Minecraft 1.21.4",
    );
  });
});
