/**
 * The images of the Docker stand-in (docker.ts): the ones on the machine, the ones its registries hold, each with the
 * config Docker merges into a container's (docker-containers.ts), image inspect, and a pull that streams its progress
 * as moby does, after which the image is on the machine.
 *
 * Sources:
 * - The images' shapes, read in their Dockerfiles (pterodactyl/yolks and Ptero-Eggs/yolks java/<n>/Dockerfile,
 *   java/entrypoint.sh; adoptium/containers <n>/jdk/ubuntu/<release>/Dockerfile and entrypoint.sh):
 *   - pterodactyl/yolks java_8 to java_21 and java_25: `FROM eclipse-temurin:<n>-jdk…`, `USER container` (useradd,
 *     uid 1000 on focal and jammy; 1001 on noble, whose base already has `ubuntu` at 1000), `WORKDIR /home/container`,
 *     `CMD ["/bin/bash", "/entrypoint.sh"]`. The temurin base's `ENTRYPOINT ["/__cacert_entrypoint.sh"]` (added in
 *     adoptium/containers#392, August 2023) is kept: it ends in `exec "$@"`, so the CMD runs. The bases pinned before
 *     then (8u312 focal, 11.0.13 focal, 16, 18, 19: tags no longer rebuilt) have no entrypoint at all.
 *   - pterodactyl/yolks java_22 to java_24 and every Ptero-Eggs/yolks java_<n>:
 *     `ENTRYPOINT ["/usr/bin/tini", "-g", "--", "/entrypoint.sh"]`, no USER (root), no CMD (a Dockerfile's ENTRYPOINT
 *     resets the CMD the base image set). Their entrypoint.sh ignores its arguments: it shows `java -version`, turns
 *     `{{VAR}}` in `$STARTUP` into `${VAR}`, prints the result and runs it (`exec env ${PARSED}` in pterodactyl's,
 *     `eval ${PARSED}` in Ptero-Eggs'), so with no STARTUP it ends with 0 having run nothing.
 *   The stand-in runs commands on this machine, so these programs of the image (`/__cacert_entrypoint.sh`,
 *   `/usr/bin/tini`, `/entrypoint.sh`) are scripts of its own that behave like them (IMAGE_PROGRAMS), written under
 *   the stand-in's directory and put in their place in a container's command line.
 * - Inspect: moby/moby api/swagger.yaml ImageInspect; 404 "No such image: <familiar ref>" (daemon/images/image.go);
 *   from API 1.52 the empty Config fields are left out (api/docs/CHANGELOG.md v1.52).
 * - Pull, POST /images/create?fromImage=&tag= (moby/moby api/server/router/image/image_routes.go postImagesCreate,
 *   docker-v29.0.0 daemon/server/router/image): `Content-Type: application/json`, nothing flushed until the first
 *   progress message, so an error before it is the status and `{"message"}` of any error (an invalid reference 400);
 *   one after it is written into the stream as `{"errorDetail":{"message"},"error"}` (streamformatter.FormatError)
 *   with the 200 already sent. The messages (pkg/jsonmessage JSONMessage, `\r\n` after each), as the graph-driver
 *   puller writes them (distribution/pull_v2.go, xfer): `<tag>: Pulling from <path>`, per layer `Pulling fs layer`,
 *   `Waiting`, `Downloading` with `progressDetail` {current, total} and the deprecated `progress` bar,
 *   `Verifying Checksum`, `Download complete`, `Extracting`, `Pull complete`; then `Digest: sha256:…` and
 *   `Status: Downloaded newer image for <ref>` (or `Status: Image is up to date for <ref>`, no layer lines).
 *   Refusals (distribution/errors.go, registry/client errors.go): a tag the registry's repository lacks is 404
 *   `manifest for <ref> not found: manifest unknown: manifest unknown`; a repository it does not show without a login
 *   is, on Docker Hub, 404 `pull access denied for <name>, repository does not exist or may require 'docker login':
 *   denied: requested access to the resource is denied`, elsewhere (ghcr.io answers 401 to an anonymous HEAD) 500
 *   `Head "https://<host>/v2/<path>/manifests/<tag>": unauthorized`; a registry not reached is 500
 *   `Get "https://<host>/v2/": dial tcp: lookup <host>: no such host`. (Docker 29's containerd image store words
 *   these differently, e.g. 401 `error from registry: unauthorized`; the stand-in answers as the graph drivers of
 *   Debian's docker.io do.)
 */
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import { FaultQueue, sendJson } from "./http.ts";

/** What an image gives a container that does not set it (moby daemon/commit.go merge), as its inspect shows it. */
export interface ImageConfig {
  Entrypoint: string[] | null;
  Cmd: string[] | null;
  User: string;
  WorkingDir: string;
  Env: string[];
}

/** An image the stand-in knows. */
export interface StandInImage {
  /** As a client names it: ghcr.io/pterodactyl/yolks:java_21. */
  ref: string;
  config: ImageConfig;
  /** The users of its /etc/passwd by name: "uid:gid". */
  users: Record<string, string>;
  /** Its programs the stand-in runs as scripts of its own: the path in the image → a key of IMAGE_PROGRAMS. */
  programs: Record<string, ImageProgram>;
  /** How many layers a pull reports for it. */
  layers: number;
}

/** Something that makes the next pulls fail (`times`, default 1). */
export type PullFault =
  /** The registry cannot be reached: 500 before anything is streamed. */
  | { kind: "unreachable"; times?: number }
  /**
   * The stream breaks after the first layer (after its first message when no layer is pulled): the error in the
   * stream, the 200 already sent; an absent image stays absent.
   */
  | { kind: "midway"; message?: string; times?: number };

/** Docker's default PATH, with temurin's Java first (its Dockerfiles: `ENV PATH=$JAVA_HOME/bin:$PATH`). */
const TEMURIN_ENV = [
  "PATH=/opt/java/openjdk/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  "JAVA_HOME=/opt/java/openjdk",
];
/** yolks' `ENV USER=container HOME=/home/container`. */
const YOLKS_ENV = [...TEMURIN_ENV, "USER=container", "HOME=/home/container"];

/**
 * The scripts that stand for an image's programs. Each is run by path in the container's command line (its shebang
 * picks the shell); the stand-in starts every command in the host directory of the working directory already, which
 * is where the entrypoints' `cd /home/container` goes.
 */
export const IMAGE_PROGRAMS = {
  /** eclipse-temurin's /__cacert_entrypoint.sh: certificates only when asked for, then the command as given. */
  "temurin-entrypoint": '#!/bin/sh\nexec "$@"\n',
  /** tini's options up to `--` (or the first word that is not one), then the command; tini's signal forwarding to the
   * process group is moot here, where a kill reaches the whole group. */
  tini: '#!/bin/sh\nwhile [ $# -gt 0 ]; do\n  case "$1" in\n    --) shift; break ;;\n    -*) shift ;;\n    *) break ;;\n  esac\ndone\nexec "$@"\n',
  /** pterodactyl/yolks java/entrypoint.sh: its arguments unread; $STARTUP with {{VAR}} as ${VAR}, run through env. */
  "pterodactyl-entrypoint": `#!/bin/bash
java -version
startup=$(printf '%s' "$STARTUP" | sed -e 's/{{/\${/g' -e 's/}}/}/g')
startup=$(eval echo "$startup")
printf 'container@pterodactyl~ %s\\n' "$startup"
# shellcheck disable=SC2086
exec env $startup
`,
  /** Ptero-Eggs/yolks java/entrypoint.sh: the same, the command run through eval. */
  "ptero-eggs-entrypoint": `#!/bin/bash
java -version
startup=$(printf '%s' "$STARTUP" | sed -e 's/{{/\${/g' -e 's/}}/}/g')
startup=$(eval echo "$startup")
printf 'container@pterodactyl~ %s\\n' "$startup"
eval "$startup"
`,
} as const;
export type ImageProgram = keyof typeof IMAGE_PROGRAMS;

const TINI_ENTRYPOINT = ["/usr/bin/tini", "-g", "--", "/entrypoint.sh"];

/** pterodactyl/yolks java_<n>: temurin's entrypoint (none on the bases pinned before it came), yolks' CMD. */
function pterodactylTemurin(n: number): StandInImage {
  const pinned = [8, 11, 16, 18, 19].includes(n);
  return {
    ref: `ghcr.io/pterodactyl/yolks:java_${n}`,
    config: {
      Entrypoint: pinned ? null : ["/__cacert_entrypoint.sh"],
      Cmd: ["/bin/bash", "/entrypoint.sh"],
      User: "container",
      WorkingDir: "/home/container",
      Env: YOLKS_ENV,
    },
    users: { container: n === 25 ? "1001:1001" : "1000:1000" },
    programs: {
      ...(pinned ? {} : { "/__cacert_entrypoint.sh": "temurin-entrypoint" as const }),
      "/entrypoint.sh": "pterodactyl-entrypoint",
    },
    layers: 5,
  };
}

/** tini and entrypoint.sh as the ENTRYPOINT, root, no CMD: pterodactyl/yolks java_22 to 24, every Ptero-Eggs image. */
function tiniImage(ref: string, entrypoint: ImageProgram): StandInImage {
  return {
    ref,
    config: { Entrypoint: TINI_ENTRYPOINT, Cmd: null, User: "", WorkingDir: "/home/container", Env: YOLKS_ENV },
    users: {},
    programs: { "/usr/bin/tini": "tini", "/entrypoint.sh": entrypoint },
    layers: 6,
  };
}

/** The Java images of both yolks repositories, by reference. */
export const YOLKS_IMAGES: readonly StandInImage[] = [
  ...[8, 11, 16, 17, 18, 19, 21, 25].map(pterodactylTemurin),
  ...[22, 23, 24].map((n) => tiniImage(`ghcr.io/pterodactyl/yolks:java_${n}`, "pterodactyl-entrypoint")),
  ...[8, 11, 16, 17, 19, 21, 22, 23, 24, 25].map((n) =>
    tiniImage(`ghcr.io/ptero-eggs/yolks:java_${n}`, "ptero-eggs-entrypoint"),
  ),
];

/** The images the stand-in's machine has when a test names none: the eggs' Java images. */
export const DEFAULT_IMAGES = [8, 11, 16, 17, 21].map((n) => `ghcr.io/pterodactyl/yolks:java_${n}`);

/** An image given by reference only: a yolks image's shape when it is one, else one that sets nothing. */
export function imageOf(image: string | StandInImage): StandInImage {
  if (typeof image !== "string") return image;
  const known = YOLKS_IMAGES.find((each) => familiar(each.ref) === familiar(image));
  if (known) return { ...known, ref: image };
  const config = { Entrypoint: null, Cmd: null, User: "", WorkingDir: "", Env: [TEMURIN_ENV[0] as string] };
  return { ref: image, config, users: {}, programs: {}, layers: 3 };
}

/** A reference as distribution/reference reads it (normalize.go splitDockerDomain: docker.io and library/ added). */
export interface ImageRef {
  domain: string;
  path: string;
  tag?: string;
  digest?: string;
}

const COMPONENT = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
const REMAINDER = new RegExp(
  `^(${COMPONENT}(?:/${COMPONENT})*)(?::([\\w][\\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?$`,
);
const DOMAIN =
  /^(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?$/;

/** The parts of a reference; undefined when it is none ("invalid reference format": `~image`, upper case…). */
export function parseRef(text: string): ImageRef | undefined {
  const slash = text.indexOf("/");
  const first = slash < 0 ? "" : text.slice(0, slash);
  const hasDomain = slash >= 0 && (/[.:]/.test(first) || first === "localhost" || first !== first.toLowerCase());
  const match = REMAINDER.exec(hasDomain ? text.slice(slash + 1) : text);
  if (!match?.[1] || (hasDomain && !DOMAIN.test(first))) return undefined;
  const domain = hasDomain ? first : "docker.io";
  const path = domain === "docker.io" && !match[1].includes("/") ? `library/${match[1]}` : match[1];
  return { domain, path, ...(match[2] ? { tag: match[2] } : {}), ...(match[3] ? { digest: match[3] } : {}) };
}

/** reference.FamiliarString after TagNameOnly: docker.io/library/ dropped, `:latest` when neither tag nor digest. */
export function familiar(text: string): string {
  const ref = parseRef(text);
  if (!ref) return text;
  const name = ref.domain === "docker.io" ? ref.path.replace(/^library\//, "") : `${ref.domain}/${ref.path}`;
  const tag = ref.tag ?? (ref.digest ? undefined : "latest");
  return `${name}${tag ? `:${tag}` : ""}${ref.digest ? `@${ref.digest}` : ""}`;
}

/** The images of the machine and of its registries; pulls move the latter to the former. */
export class ImageStore {
  readonly faults = new FaultQueue<PullFault>();
  readonly #machine = new Map<string, StandInImage>();
  readonly #registry = new Map<string, StandInImage>();
  /** Where the scripts standing for the images' programs are written. */
  readonly #dir: string;

  constructor(machine: readonly (string | StandInImage)[], registry: readonly (string | StandInImage)[], dir: string) {
    for (const image of machine.map(imageOf)) this.#machine.set(familiar(image.ref), image);
    for (const image of registry.map(imageOf)) this.#registry.set(familiar(image.ref), image);
    this.#dir = dir;
  }

  /** The machine's images, by their familiar references. */
  get onMachine(): string[] {
    return [...this.#machine.keys()];
  }

  /** The machine's image of this reference. */
  get(ref: string): StandInImage | undefined {
    return this.#machine.get(familiar(ref));
  }

  /** The host path of the script that stands for an image's program, written on first use. */
  program(image: StandInImage, path: string): string | undefined {
    const program = image.programs[path];
    if (!program) return undefined;
    const dir = join(this.#dir, "image-programs");
    const file = join(dir, program);
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, IMAGE_PROGRAMS[program]);
    chmodSync(file, 0o755);
    return file;
  }

  /** GET /images/{name}/json. */
  inspect(res: ServerResponse, ref: string, api: number): void {
    const image = this.get(ref);
    if (!image) {
      sendJson(res, 404, { message: `No such image: ${familiar(ref)}` });
      return;
    }
    const id = `sha256:${sha256(familiar(ref))}`;
    // From API 1.52 the Config fields that are not set are left out (api/docs/CHANGELOG.md v1.52).
    const config = Object.fromEntries(
      Object.entries(image.config).filter(([, value]) => api < 52 || (value !== null && value !== "")),
    );
    // api/types/image/image_inspect.go InspectResponse: the fields without omitempty are always there.
    sendJson(res, 200, {
      Id: id,
      RepoTags: [familiar(ref)],
      RepoDigests: [],
      Parent: "",
      Comment: "",
      Created: "2024-05-01T00:00:00Z",
      DockerVersion: "",
      Author: "",
      Config: config,
      Architecture: "amd64",
      Os: "linux",
      Size: 0,
      GraphDriver: { Name: "overlay2", Data: {} },
      RootFS: { Type: "layers", Layers: layerIds(image).map((layer) => `sha256:${sha256(layer)}`) },
      Metadata: { LastTagTime: "0001-01-01T00:00:00Z" },
    });
  }

  /** POST /images/create?fromImage=&tag=: the refusals before anything is streamed, else the progress, then the image. */
  pull(res: ServerResponse, query: URLSearchParams): void {
    const name = (query.get("fromImage") ?? "").replace(/:$/, "");
    const tag = query.get("tag") ?? "";
    const digest = /^[A-Za-z][A-Za-z0-9]*:[0-9a-fA-F]{32,}$/.test(tag);
    const ref = parseRef(tag === "" ? name : `${name}${digest ? "@" : ":"}${tag}`);
    if (!ref || name === "") {
      sendJson(res, 400, { message: "invalid reference format" });
      return;
    }
    const wanted = familiar(refText(ref));
    const host = ref.domain === "docker.io" ? "registry-1.docker.io" : ref.domain;
    const fault = this.faults.take();
    if (fault?.kind === "unreachable") {
      sendJson(res, 500, { message: `Get "https://${host}/v2/": dial tcp: lookup ${host}: no such host` });
      return;
    }
    const image = this.#registry.get(wanted);
    if (!image) {
      sendJson(res, ...this.#refusal(ref, wanted, host));
      return;
    }
    res.writeHead(200, { "Content-Type": "application/json" });
    const write = (message: Record<string, unknown>) => res.write(`${JSON.stringify(message)}\r\n`);
    write({ status: `Pulling from ${ref.path}`, id: ref.digest ?? ref.tag ?? "latest" });
    const digestLine = { status: `Digest: sha256:${sha256(`manifest ${wanted}`)}` };
    const broken = (message = "unexpected EOF") => {
      write({ errorDetail: { message }, error: message });
      res.end();
    };
    if (this.#machine.has(wanted)) {
      if (fault?.kind === "midway") {
        broken(fault.message);
        return;
      }
      write(digestLine);
      write({ status: `Status: Image is up to date for ${wanted}` });
      res.end();
      return;
    }
    const layers = layerIds(image);
    for (const id of layers) write({ status: "Pulling fs layer", progressDetail: {}, id });
    // Three downloads at once (the daemon's max-concurrent-downloads): the others wait.
    for (const id of layers.slice(3)) write({ status: "Waiting", progressDetail: {}, id });
    for (const [index, id] of layers.entries()) {
      layerProgress(write, id);
      if (fault?.kind === "midway" && index === 0) {
        broken(fault.message);
        return;
      }
    }
    write(digestLine);
    write({ status: `Status: Downloaded newer image for ${wanted}` });
    this.#machine.set(wanted, { ...image, ref: wanted });
    res.end();
  }

  /** Why a registry gives no image for `ref`: status and body, as the daemon answers (see the sources above). */
  #refusal(ref: ImageRef, wanted: string, host: string): [number, { message: string }] {
    const repository = familiar(refText({ domain: ref.domain, path: ref.path })).replace(/:latest$/, "");
    const known = [...this.#registry.keys()].some((each) => each.startsWith(`${repository}:`));
    if (known) return [404, { message: `manifest for ${wanted} not found: manifest unknown: manifest unknown` }];
    if (ref.domain === "docker.io") {
      const message = `pull access denied for ${repository}, repository does not exist or may require 'docker login': denied: requested access to the resource is denied`;
      return [404, { message }];
    }
    const reference = ref.digest ?? ref.tag ?? "latest";
    return [500, { message: `Head "https://${host}/v2/${ref.path}/manifests/${reference}": unauthorized` }];
  }
}

/** A reference's text from its parts. */
function refText(ref: ImageRef): string {
  return `${ref.domain}/${ref.path}${ref.tag ? `:${ref.tag}` : ""}${ref.digest ? `@${ref.digest}` : ""}`;
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** An image's layers' short ids (stringid.TruncateID: 12 hex digits). */
function layerIds(image: StandInImage): string[] {
  return Array.from({ length: image.layers }, (_, i) => sha256(`${familiar(image.ref)} layer ${i}`).slice(0, 12));
}

/** How many progress messages a layer's download and extraction each send: many, as a real pull's bars do. */
const PROGRESS_STEPS = 24;

/** One layer from the first byte to `Pull complete`, with the progress bars a real pull sends. */
function layerProgress(write: (message: Record<string, unknown>) => void, id: string): void {
  const total = (Number.parseInt(id.slice(0, 6), 16) % 50_000_000) + 1_000_000;
  const bars = (status: string) => {
    for (let step = 1; step <= PROGRESS_STEPS; step++) {
      const current = Math.round((total * step) / PROGRESS_STEPS);
      write({ status, progressDetail: { current, total }, progress: bar(current, total), id });
    }
  };
  bars("Downloading");
  write({ status: "Verifying Checksum", progressDetail: {}, id });
  write({ status: "Download complete", progressDetail: {}, id });
  bars("Extracting");
  write({ status: "Pull complete", progressDetail: {}, id });
}

/** pkg/jsonmessage JSONProgress.String's shape: `[====>     ]  1.2MB/3.4MB`. */
function bar(current: number, total: number): string {
  const width = 50;
  const done = Math.floor((current * width) / total);
  const arrow = done < width ? ">" : "";
  const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)}MB`;
  return `[${"=".repeat(Math.max(0, done - (arrow ? 1 : 0)))}${arrow}${" ".repeat(width - done)}]  ${mb(current)}/${mb(total)}`;
}
