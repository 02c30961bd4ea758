import { JobError, UsageError } from "@mcops/core/errors";
import { checkShape, type HttpClient, HttpFailure, PanelError } from "@mcops/core/http";
import * as z from "zod/mini";
import { imageParts } from "./image-ref.ts";
import type { Bases } from "./service.ts";
import { type Artifact, mojangJava } from "./sources.ts";

/**
 * The Java a server version needs, and the Docker image that gives it (docs/system.md 9). A Pterodactyl server runs in
 * the image its egg offers and the Startup tab picks ("Java 17" → ghcr.io/pterodactyl/yolks:java_17); a jar that
 * needs a newer Java than the image has does not start ("UnsupportedClassVersionError"), and the operator would learn
 * it only from "Server did not start". So the need is read from the vendor before anything changes, and compared with
 * what the image says it runs, read from its tag or the egg's name for it; nothing is guessed.
 */

/** Fill v3's version info (PaperMC/fill model/response/v3/VersionResponse.java, model/Java.java): only the Java. */
export const fillVersionInfo = z.object({
  version: z.object({
    java: z.optional(z.object({ version: z.object({ minimum: z.number() }) })),
  }),
});

/** The smallest and largest Java major version taken from a tag or a name: anything else is not a Java version. */
const JAVA_RANGE = { min: 5, max: 99 };

function inRange(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const major = Number(text);
  return Number.isInteger(major) && major >= JAVA_RANGE.min && major <= JAVA_RANGE.max ? major : undefined;
}

/**
 * The Java an image runs, from its tag: `java_21` (Pterodactyl's yolks, ptero-eggs' yolks), `java21`, or a tag that
 * begins with the major version and a dash (`eclipse-temurin:21-jre`, `openjdk:8-jdk-slim`). Undefined when the tag
 * says neither (`latest`, a digest, a custom image): never guessed.
 */
export function imageJava(image: string): number | undefined {
  const { tag } = imageParts(image);
  if (tag === undefined) return undefined;
  const named = /(?:^|[^a-z])java[_-]?(\d{1,2})(?![\d.])/i.exec(tag);
  if (named) return inRange(named[1]);
  return inRange(/^(\d{1,2})-/.exec(tag)?.[1]);
}

/** The Java an egg's display name for an image says: "Java 21", "Java 8", "java_17". Undefined otherwise. */
export function displayJava(name: string): number | undefined {
  return inRange(/^\s*java[\s_-]*(\d{1,2})\s*$/i.exec(name)?.[1]);
}

/** An image of the egg with the Java it runs (its tag first: that is what runs; else the egg's name for it). */
export interface EggImage {
  name: string;
  image: string;
  java: number | undefined;
}

export function eggImages(dockerImages: Record<string, string>): EggImage[] {
  return Object.entries(dockerImages).map(([name, image]) => ({
    name,
    image,
    java: imageJava(image) ?? displayJava(name),
  }));
}

/**
 * The egg's image for a version that needs Java `need` (and at most `atMost`): the smallest Java that is enough (the
 * closest to what the version was built for), from the same repository as the current image when there are several;
 * undefined when none fits.
 */
export function chooseImage(
  images: EggImage[],
  need: number,
  current: string,
  atMost = Number.POSITIVE_INFINITY,
): EggImage | undefined {
  const enough = images.filter((each) => each.java !== undefined && each.java >= need && each.java <= atMost);
  const sameRepository = (each: EggImage) =>
    imageParts(each.image).repository === imageParts(current).repository ? 0 : 1;
  return enough.sort((a, b) => (a.java as number) - (b.java as number) || sameRepository(a) - sameRepository(b))[0];
}

/** What the run needs to read a version's Java: the client (its User-Agent and retries) and the hosts' bases. */
export interface JavaSource {
  http: HttpClient;
  bases: Bases;
}

/**
 * The Java major version a server version needs, undefined when the vendor does not say:
 * - Paper, Folia: Fill v3's version info, `java.version.minimum`;
 * - vanilla: the version JSON's `javaVersion.majorVersion` the artifact was resolved from (read once, with the jar);
 * - Purpur, Fabric, Quilt, Forge, NeoForge: they run Mojang's game, so Mojang's version JSON says it (8 when the
 *   field is absent, as in the oldest JSONs).
 */
export async function requiredJava(
  source: JavaSource,
  request: { type: string; version: string; artifact?: Artifact | undefined },
): Promise<number | undefined> {
  const { type, version, artifact } = request;
  if (artifact?.java !== undefined) return artifact.java;
  if (type === "paper" || type === "folia") return fillJava(source, type, version);
  return mojangJava(source.http, source.bases, version);
}

/** Fill's version info; a version Fill does not know (404) says nothing. */
async function fillJava(source: JavaSource, type: string, version: string): Promise<number | undefined> {
  const url = `${source.bases.paper}/v3/projects/${encodeURIComponent(type)}/versions/${encodeURIComponent(version)}`;
  let body: unknown;
  try {
    body = await source.http.json(url);
  } catch (error) {
    if (!(error instanceof HttpFailure)) throw error;
    if (error.status === 404) return undefined;
    throw new JobError(`asking which Java ${type} ${version} needs failed: ${error.message}`, {
      where: url,
      hint: "try again later; a mirror can be set with DOWNLOAD_BASE",
    });
  }
  const { host, pathname } = new URL(url);
  return checkShape(fillVersionInfo, body, { service: host, route: `GET ${pathname}` }).version.java?.version.minimum;
}

/** The image a version's swap runs with: kept as it is, or switched (with the swap, the server stopped). */
export type ImagePlan =
  | {
      kind: "keep";
      /** The server's image; undefined when the panel did not say. */
      image: string | undefined;
      need: number | undefined;
      /** The Java the image runs, when known. */
      had?: number | undefined;
      /** Why nothing is compared or switched, when it is not because the image is new enough: for the log. */
      unchecked?: string;
    }
  | { kind: "switch"; from: string; to: EggImage; need: number; had: number };

/** The admin area's way to add an image to the egg, in the panel's own notation (one `Name|image` a line). */
export function addImageStep(need: number, current: string | undefined): string {
  // The same family of images as the server's, when it is one of the java_NN kind; else Pterodactyl's own yolks.
  const repo = current && /:java_\d+$/.test(current) ? imageParts(current).repository : "ghcr.io/pterodactyl/yolks";
  const image = `${repo}:java_${need}`;
  return `add it in the panel's admin area: Nests → the egg → Docker Images, a line \`Java ${need}|${image}\`, then run jar-download again`;
}

/** The short name of an image in a line: "java_21" for Pterodactyl's yolks, the whole reference otherwise. */
export function shortImage(image: string): string {
  return /:java_\d+$/.test(image) ? (image.split(":").pop() as string) : image;
}

interface PanelLike {
  details(): Promise<{ dockerImage: string | undefined; permissions: string[] | undefined }>;
  startup(): Promise<{ dockerImages: Record<string, string> }>;
}

/**
 * Compares the Java `need` of `what` ("Minecraft 1.21") with the server's image, before anything is downloaded or
 * changed: keep it when it is new enough (or when either side is unknown: said in `unchecked`, never guessed), else the
 * smallest of the egg's images that is enough. Exit 2 (UsageError) when the switch cannot be made: the egg offers no
 * image new enough (with the admin step that adds one), an administrator set the image by hand, or the key may not
 * switch it.
 */
export async function planImage(
  panel: PanelLike,
  need: number | undefined,
  what: string,
  atMost = Number.POSITIVE_INFINITY,
): Promise<ImagePlan> {
  const details = await panel.details();
  const image = details.dockerImage;
  if (need === undefined) return { kind: "keep", image, need, unchecked: `which Java ${what} needs is not published` };
  if (image === undefined) return { kind: "keep", image, need, unchecked: "the panel does not say the server's image" };
  const fits = (java: number) => java >= need && java <= atMost;
  const tagged = imageJava(image);
  if (tagged !== undefined && fits(tagged)) return { kind: "keep", image, need, had: tagged };
  const egg = eggImages((await readStartup(panel, need)).dockerImages);
  const had = tagged ?? egg.find((each) => each.image === image)?.java;
  if (had === undefined) {
    return { kind: "keep", image, need, unchecked: `which Java the image ${image} runs is not in its tag or name` };
  }
  if (fits(had)) return { kind: "keep", image, need, had };
  const to = chooseImage(egg, need, image, atMost);
  const needs = atMost === need ? `Java ${need} exactly` : `Java ${need}`;
  const runs = `${what} needs ${needs}; the server's image ${shortImage(image)} has Java ${had}`;
  if (!egg.some((each) => each.image === image)) {
    throw new UsageError(`${runs}, and an administrator set that image by hand: the panel lets only them change it`, {
      hint: `in the panel's admin area: Servers → the server → Startup → Docker Image: ${to?.image ?? `an image with Java ${need}`}, then run jar-download again`,
    });
  }
  if (!to) {
    const offered = egg.map((each) => each.name).join(", ") || "none";
    const wanted = atMost === need ? `Java ${need}` : `Java ${need} or newer`;
    throw new UsageError(`${runs}, and its egg offers no image with ${wanted} (it offers ${offered})`, {
      hint: addImageStep(need, image),
    });
  }
  const permissions = details.permissions;
  if (permissions && !permissions.includes("*") && !permissions.includes("startup.docker-image")) {
    throw new UsageError(`${runs}, and the API key's user may not switch it (no startup.docker-image)`, {
      hint: `switch it on the server's Startup tab to ${to.name} (${to.image}), or give the user Startup: Docker Image`,
    });
  }
  return { kind: "switch", from: image, to, need, had };
}

/** The egg's images; a key without startup.read is exit 2 with the way, as the switch itself would be. */
async function readStartup(panel: PanelLike, need: number) {
  try {
    return await panel.startup();
  } catch (error) {
    if (!(error instanceof PanelError) || error.kind !== "forbidden") throw error;
    throw new UsageError(`the server's image must change to one with Java ${need}, and ${error.message}`, {
      where: error.where,
      hint: `${error.hint}; or switch the image on the server's Startup tab`,
    });
  }
}

/**
 * Switches the server's image through the panel (used from the container's next start). A refusal the operator must
 * settle in the panel (an image set by an administrator, a key without startup.docker-image, an image the egg no
 * longer offers) is exit 2 with the way; other failures (the panel down) are as the panel client says them.
 */
export async function switchImage(panel: { setDockerImage(image: string): Promise<void> }, image: string) {
  try {
    await panel.setDockerImage(image);
  } catch (error) {
    if (!(error instanceof PanelError)) throw error;
    if (error.kind !== "image-locked" && error.kind !== "forbidden" && error.kind !== "image-not-offered") throw error;
    throw new UsageError(`the panel refused to switch the server's image to ${image}: ${error.message}`, {
      where: error.where,
      hint: `${error.hint ?? "look at the server in the panel's admin area"}; or switch it on the server's Startup tab`,
    });
  }
}
