import { createHttpClient, UsageError } from "@mcops/core";
import { createPanelClient } from "@mcops/core/http";
import {
  DEFAULT_EGG,
  type DownloadStandIn,
  type PanelStandIn,
  type PanelStandInOptions,
  startDownloadStandIn,
  startPanelStandIn,
} from "@mcops/testkit";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  addImageStep,
  chooseImage,
  displayJava,
  eggImages,
  imageJava,
  type JavaSource,
  planImage,
  requiredJava,
} from "../src/java.ts";
import { createSource } from "../src/sources.ts";

const YOLKS = "ghcr.io/pterodactyl/yolks";

describe("the Java an image runs", () => {
  it.each([
    [`${YOLKS}:java_21`, 21],
    [`${YOLKS}:java_8`, 8],
    ["ghcr.io/ptero-eggs/yolks:java_25", 25],
    ["ghcr.io/parkervcp/yolks:java_17", 17],
    ["eclipse-temurin:21-jre", 21],
    ["openjdk:8-jdk-slim", 8],
    ["registry.example.com:5000/team/java:java17", 17],
    [`${YOLKS}:java_17@sha256:${"a".repeat(64)}`, 17],
  ])("%s → Java %i", (image, java) => {
    expect(imageJava(image)).toBe(java);
  });

  it.each([
    "ghcr.io/pterodactyl/yolks:latest",
    "ghcr.io/pterodactyl/yolks",
    "registry.example.com:5000/java_21/server",
    "eclipse-temurin:21",
    "eclipse-temurin:21.0.2_13-jre",
    `${YOLKS}:java_1.8`,
    `${YOLKS}:java_3`,
    `${YOLKS}@sha256:${"b".repeat(64)}`,
    "custom/minecraft:v2-java",
  ])("%s → unknown, not guessed", (image) => {
    expect(imageJava(image)).toBeUndefined();
  });

  it("reads the egg's display names, and nothing else", () => {
    expect(displayJava("Java 21")).toBe(21);
    expect(displayJava("java_17")).toBe(17);
    expect(displayJava(" Java 8 ")).toBe(8);
    for (const name of ["Java", "Java 21 (beta)", "GraalVM 21", "Java 1.8", "Java 210"]) {
      expect(displayJava(name), name).toBeUndefined();
    }
  });

  it("takes an image's tag over its name, and its name when the tag says nothing", () => {
    expect(
      eggImages({ "Java 21": `${YOLKS}:java_17`, "Java 11": "registry.example.com/custom:stable", Custom: "x:latest" }),
    ).toEqual([
      { name: "Java 21", image: `${YOLKS}:java_17`, java: 17 },
      { name: "Java 11", image: "registry.example.com/custom:stable", java: 11 },
      { name: "Custom", image: "x:latest", java: undefined },
    ]);
  });
});

describe("the image chosen", () => {
  const egg = eggImages(DEFAULT_EGG.dockerImages);

  it("is the smallest Java that is enough", () => {
    expect(chooseImage(egg, 21, `${YOLKS}:java_17`)?.image).toBe(`${YOLKS}:java_21`);
    expect(chooseImage(egg, 16, `${YOLKS}:java_8`)?.image).toBe(`${YOLKS}:java_16`);
    expect(chooseImage(egg, 12, `${YOLKS}:java_8`)?.image).toBe(`${YOLKS}:java_16`);
    expect(chooseImage(egg, 22, `${YOLKS}:java_17`)).toBeUndefined();
  });

  it("from the server's own family of images when two give the same Java", () => {
    const two = eggImages({
      "Java 21": `${YOLKS}:java_21`,
      "Java 21 (ptero-eggs)": "ghcr.io/ptero-eggs/yolks:java_21",
      "Java 17": "ghcr.io/ptero-eggs/yolks:java_17",
    });
    expect(chooseImage(two, 21, "ghcr.io/ptero-eggs/yolks:java_17")?.image).toBe("ghcr.io/ptero-eggs/yolks:java_21");
    expect(chooseImage(two, 21, `${YOLKS}:java_17`)?.image).toBe(`${YOLKS}:java_21`);
  });

  it("says the admin step in the panel's notation, in the server's family of images", () => {
    expect(addImageStep(21, `${YOLKS}:java_17`)).toBe(
      "add it in the panel's admin area: Nests → the egg → Docker Images, a line `Java 21|ghcr.io/pterodactyl/yolks:java_21`, then run jar-download again",
    );
    expect(addImageStep(25, "ghcr.io/ptero-eggs/yolks:java_21")).toContain(
      "`Java 25|ghcr.io/ptero-eggs/yolks:java_25`",
    );
    expect(addImageStep(21, "eclipse-temurin:17-jre")).toContain("`Java 21|ghcr.io/pterodactyl/yolks:java_21`");
  });
});

describe("the Java a version needs", () => {
  let stand: DownloadStandIn;
  let java: JavaSource;

  beforeAll(async () => {
    stand = await startDownloadStandIn({
      paper: { paper: { "1.21.4": [{ id: 231 }], "1.20.4": [{ id: 499 }] }, folia: { "1.21.4": [{ id: 10 }] } },
      vanilla: [
        { id: "1.21", type: "release" },
        { id: "1.20.4", type: "release" },
        { id: "1.17.1", type: "release" },
        { id: "1.16.5", type: "release" },
      ],
      purpur: { "1.20.4": ["2176"] },
    });
    java = {
      http: createHttpClient({ userAgent: "mcops-test (ops@example.com)", retryDelayMs: 10 }),
      bases: stand.bases,
    };
  });
  afterAll(() => stand.close());
  beforeEach(() => stand.reset());

  it("Paper and Folia: Fill's version info, java.version.minimum", async () => {
    expect(await requiredJava(java, { type: "paper", version: "1.21.4" })).toBe(21);
    expect(await requiredJava(java, { type: "paper", version: "1.20.4" })).toBe(17);
    expect(await requiredJava(java, { type: "folia", version: "1.21.4" })).toBe(21);
    expect(stand.requests.map((r) => r.path)).toEqual([
      "/fill/v3/projects/paper/versions/1.21.4",
      "/fill/v3/projects/paper/versions/1.20.4",
      "/fill/v3/projects/folia/versions/1.21.4",
    ]);
    expect(await requiredJava(java, { type: "paper", version: "1.19.4" })).toBeUndefined();
  });

  it("vanilla: the version JSON read with the jar, not read twice", async () => {
    const artifact = await createSource(java.http, stand.bases).resolve({ type: "vanilla", version: "1.20.4" });
    const asked = stand.requests.length;
    expect(await requiredJava(java, { type: "vanilla", version: "1.20.4", artifact })).toBe(17);
    expect(stand.requests).toHaveLength(asked);
  });

  it("Purpur and the loaders: Mojang's version JSON (16 for 1.17.1, 8 for 1.16.5); a version Mojang does not list says nothing", async () => {
    expect(await requiredJava(java, { type: "purpur", version: "1.20.4" })).toBe(17);
    expect(await requiredJava(java, { type: "fabric", version: "1.21" })).toBe(21);
    expect(await requiredJava(java, { type: "neoforge", version: "1.17.1" })).toBe(16);
    expect(await requiredJava(java, { type: "forge", version: "1.16.5" })).toBe(8);
    expect(await requiredJava(java, { type: "quilt", version: "1.99" })).toBeUndefined();
  });
});

describe("the plan for the server's image", () => {
  let panel: PanelStandIn;

  async function plan(
    server: NonNullable<PanelStandInOptions["servers"]>[number],
    need: number | undefined,
    atMost?: number,
  ) {
    panel = await startPanelStandIn({ servers: [server] });
    const client = createPanelClient({ url: panel.url, key: panel.apiKey, serverId: panel.server.identifier });
    return planImage(client, need, "Minecraft 1.21", atMost);
  }
  afterEach(() => panel.close());

  it("keeps an image that is new enough, without reading the egg", async () => {
    expect(await plan({ dockerImage: `${YOLKS}:java_21` }, 21)).toEqual({
      kind: "keep",
      image: `${YOLKS}:java_21`,
      need: 21,
      had: 21,
    });
    expect(panel.calls.map((c) => c.kind)).toEqual(["details"]);
  });

  it("switches an older one to the smallest of the egg's images that is enough", async () => {
    expect(await plan({ dockerImage: `${YOLKS}:java_17` }, 21)).toEqual({
      kind: "switch",
      from: `${YOLKS}:java_17`,
      to: { name: "Java 21", image: `${YOLKS}:java_21`, java: 21 },
      need: 21,
      had: 17,
    });
    expect(panel.imageChanges()).toEqual([]);
  });

  it("with a newest Java too (Forge before 1.17: 8 only), switches a newer image down to the one that fits", async () => {
    expect(await plan({ dockerImage: `${YOLKS}:java_17` }, 8, 8)).toEqual({
      kind: "switch",
      from: `${YOLKS}:java_17`,
      to: { name: "Java 8", image: `${YOLKS}:java_8`, java: 8 },
      need: 8,
      had: 17,
    });
    expect(await plan({ dockerImage: `${YOLKS}:java_8` }, 8, 8)).toMatchObject({ kind: "keep", had: 8 });
    const egg = { dockerImages: { "Java 17": `${YOLKS}:java_17`, "Java 11": `${YOLKS}:java_11` } };
    const error = await plan({ dockerImage: `${YOLKS}:java_17`, egg }, 8, 8).catch((e: unknown) => e);
    expect(error).toMatchObject({
      exitCode: 2,
      message:
        "Minecraft 1.21 needs Java 8 exactly; the server's image java_17 has Java 17, and its egg offers no image with Java 8 (it offers Java 17, Java 11)",
    });
  });

  it("refuses (exit 2) when the egg has no image new enough, with the admin step", async () => {
    const egg = { dockerImages: { "Java 17": `${YOLKS}:java_17`, "Java 11": `${YOLKS}:java_11` } };
    const error = await plan({ dockerImage: `${YOLKS}:java_17`, egg }, 21).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect(error).toMatchObject({
      exitCode: 2,
      message:
        "Minecraft 1.21 needs Java 21; the server's image java_17 has Java 17, and its egg offers no image with Java 21 or newer (it offers Java 17, Java 11)",
      hint: "add it in the panel's admin area: Nests → the egg → Docker Images, a line `Java 21|ghcr.io/pterodactyl/yolks:java_21`, then run jar-download again",
    });
  });

  it("refuses an image an administrator set by hand, and a key that may not switch it", async () => {
    const manual = await plan({ dockerImage: "registry.example.com/java:17-custom" }, 21).catch((e: unknown) => e);
    expect(manual).toMatchObject({ exitCode: 2, hint: expect.stringContaining("Servers → the server → Startup") });
    await panel.close();
    const subuser = await plan({ dockerImage: `${YOLKS}:java_17`, permissions: ["startup.read"] }, 21).catch(
      (e: unknown) => e,
    );
    expect(subuser).toMatchObject({ exitCode: 2, message: expect.stringContaining("no startup.docker-image") });
    await panel.close();
    const blind = await plan({ dockerImage: `${YOLKS}:java_17`, permissions: ["control.start"] }, 21).catch(
      (e: unknown) => e,
    );
    expect(blind).toBeInstanceOf(UsageError);
    expect((blind as UsageError).hint).toContain("startup.read");
  });

  it("switches nothing when either side is unknown, and says why", async () => {
    expect(await plan({ dockerImage: `${YOLKS}:java_17` }, undefined)).toMatchObject({
      kind: "keep",
      unchecked: "which Java Minecraft 1.21 needs is not published",
    });
    await panel.close();
    const egg = { dockerImages: { Custom: "registry.example.com/mc:stable", ...DEFAULT_EGG.dockerImages } };
    expect(await plan({ dockerImage: "registry.example.com/mc:stable", egg }, 21)).toMatchObject({
      kind: "keep",
      unchecked: "which Java the image registry.example.com/mc:stable runs is not in its tag or name",
    });
    expect(panel.imageChanges()).toEqual([]);
  });
});
