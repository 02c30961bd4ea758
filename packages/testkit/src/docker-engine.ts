/**
 * A real Docker Engine for tests (issue 44): Debian's dockerd with a private socket, data root and exec root in the
 * test's own directory (`--storage-driver=vfs --iptables=false --bridge=none`: no kernel overlay, no firewall rule
 * and no docker0 on the machine), and Debian's docker-registry on 127.0.0.1 serving the images set-up built
 * (scripts/docker-images.sh; packages/testkit/fixtures/docker-images says how each follows the real one). Every pull
 * is a real pull and every container a real container.
 *
 * Two engines, both Debian's: 20.10 (Debian 12's docker.io, API 1.41, as Debian 11 and 12 ship it) and 26.1 (Debian
 * 13's, API 1.45), which `minApiVersion` runs with DOCKER_MIN_API_VERSION (moby api/server/middleware/version.go
 * honours it since Docker 25): with "1.44" it refuses API 1.41 as Docker 29.0 does by default.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** Where set-up keeps the engines and the images (MCOPS_DOCKER_CACHE names another place). */
export function dockerCache(env: NodeJS.ProcessEnv = process.env): string {
  return env.MCOPS_DOCKER_CACHE || "/var/cache/mcops-test/docker";
}

export type RealEngine = "20.10" | "26.1";

/** An image in the test registry: its reference without the registry's address, and its config as Docker has it. */
export interface TestImage {
  ref: string;
  config: { Entrypoint?: string[] | null; Cmd?: string[] | null; User?: string; WorkingDir?: string; Env?: string[] };
}

/**
 * Why the real Docker Engine cannot run here, or undefined when it can: set-up builds what it needs as root (a test
 * run that is not root, or a set-up that could not build, says so instead of failing somewhere deep).
 */
export function dockerEngineUnavailable(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (process.getuid?.() !== 0) return "dockerd needs root, and these tests do not run as root";
  if (!existsSync("/usr/sbin/dockerd")) return "Debian's docker.io is not installed: run npm run setup as root";
  if (!existsSync(join(dockerCache(env), "engine-26.1", "usr", "sbin", "dockerd")) || !imagesDir(env)) {
    return `the test images are not built in ${dockerCache(env)}: run npm run setup as root (scripts/docker-images.sh)`;
  }
  return undefined;
}

/**
 * The images-<key> folder set-up made for this clone's image files, when complete. The key is scripts/docker-images.sh's:
 * the first 12 hex digits of the sha256 of scripts/docker-image.py, then the fixtures' images.json, then their *.sh in
 * byte order, one after the other (other clones of the machine may have other keys' folders beside it).
 */
function imagesDir(env: NodeJS.ProcessEnv): string | undefined {
  const fixtures = fileURLToPath(new URL("../fixtures/docker-images/", import.meta.url));
  const scripts = fileURLToPath(new URL("../../../scripts/", import.meta.url));
  const hash = createHash("sha256");
  hash.update(readFileSync(join(scripts, "docker-image.py")));
  hash.update(readFileSync(join(fixtures, "images.json")));
  const shells = readdirSync(fixtures)
    .filter((name) => name.endsWith(".sh"))
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  for (const name of shells) hash.update(readFileSync(join(fixtures, name)));
  const dir = join(dockerCache(env), `images-${hash.digest("hex").slice(0, 12)}`);
  return existsSync(join(dir, "images.json")) ? dir : undefined;
}

/** The images set-up built, as images.json lists them. */
export function testImages(env: NodeJS.ProcessEnv = process.env): TestImage[] {
  const dir = imagesDir(env);
  if (!dir) throw new Error(dockerEngineUnavailable(env) ?? "no test images");
  const listed = JSON.parse(readFileSync(join(dir, "images.json"), "utf8")) as { images: TestImage[] };
  return listed.images;
}

export interface TestRegistry {
  /** "127.0.0.1:PORT": what an image reference starts with to be pulled from here. */
  address: string;
  /** `${address}/${ref}`. */
  image(ref: string): string;
  close(): Promise<void>;
}

/**
 * Debian's docker-registry serving the images set-up built, read-only (its maintenance read-only mode: a push is
 * refused, so no test changes the cache), on 127.0.0.1 with a port the kernel picks.
 */
export async function startTestRegistry(dir: string, env: NodeJS.ProcessEnv = process.env): Promise<TestRegistry> {
  const images = imagesDir(env);
  if (!images) throw new Error(dockerEngineUnavailable(env) ?? "no test images");
  mkdirSync(dir, { recursive: true });
  const config = join(dir, "registry.yml");
  writeFileSync(
    config,
    [
      "version: 0.1",
      "log: { level: info, formatter: text }",
      "storage:",
      `  filesystem: { rootdirectory: ${JSON.stringify(join(images, "registry"))} }`,
      "  maintenance:",
      "    uploadpurging: { enabled: false }",
      "    readonly: { enabled: true }",
      "http: { addr: 127.0.0.1:0 }",
      "",
    ].join("\n"),
  );
  const child = spawn("docker-registry", ["serve", config], { stdio: ["ignore", "ignore", "pipe"] });
  endsWithTest(child);
  const address = await new Promise<string>((resolve, reject) => {
    let said = "";
    const onData = (chunk: Buffer) => {
      said = (said + chunk.toString("utf8")).slice(-64 * 1024);
      const listening = /msg="listening on (127\.0\.0\.1:\d+)"/.exec(said);
      if (listening?.[1]) {
        child.stderr?.off("data", onData);
        child.stderr?.resume();
        resolve(listening[1]);
      }
    };
    child.stderr?.on("data", onData);
    child.once("exit", (code) => reject(new Error(`docker-registry ended (${code}) before it listened: ${said}`)));
    child.once("error", reject);
  });
  return { address, image: (ref) => `${address}/${ref}`, close: () => ended(child) };
}

export interface DockerEngineOptions {
  /** The test's own directory: the socket, data root and exec root are made in it. */
  dir: string;
  engine: RealEngine;
  /** DOCKER_MIN_API_VERSION (26.1 only): "1.44" refuses what Docker 29.0 refuses. */
  minApiVersion?: string;
  env?: NodeJS.ProcessEnv;
}

export interface EngineAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface DockerEngine {
  socket: string;
  /** As the engine says it: "20.10.24+dfsg1", "26.1.5+dfsg1". */
  version: string;
  /** Its highest API version, from /_ping's Api-Version: "1.41", "1.45". */
  apiVersion: string;
  /** dockerd's log so far (what a failed test shows). */
  log(): string;
  /** One request to its API, the whole answer read (bounded): a test's own look at the engine. */
  api(method: string, path: string, body?: unknown): Promise<EngineAnswer>;
  /** Pulls an image as Wings does for the server's container (the node has run it), and throws if Docker says no. */
  pull(image: string): Promise<void>;
  /** Whether the image is on the machine (GET /images/{name}/json). */
  hasImage(image: string): Promise<boolean>;
  /** Stops dockerd (its containers with it) and waits for it to end. */
  close(): Promise<void>;
}

/** How long a dockerd may take to answer /_ping after it starts (its containerd starts first). */
const START_MS = 60_000;

/** Starts a private dockerd of that version and waits until it answers. */
export async function startDockerEngine(options: DockerEngineOptions): Promise<DockerEngine> {
  const env = options.env ?? process.env;
  const why = dockerEngineUnavailable(env);
  if (why) throw new Error(`the real Docker Engine cannot run here: ${why}`);
  const dir = join(options.dir, "engine");
  mkdirSync(dir, { recursive: true });
  // The socket and exec root in a short folder of /tmp: containerd's socket, inside the exec root, must fit a Unix
  // socket path's 108 bytes whatever the test's directory is.
  const run = mkdtempSync("/tmp/mcops-dk-");
  const socket = join(run, "docker.sock");
  // 26.1's own containerd (and its shim) come first in its PATH: dockerd starts the containerd it finds there. Its runc
  // is the system's, Debian 12's: Debian 13's needs glibc 2.38 (scripts/docker-images.sh leaves it out).
  const engineDir = join(dockerCache(env), "engine-26.1", "usr");
  const dockerd = options.engine === "26.1" ? join(engineDir, "sbin", "dockerd") : "/usr/sbin/dockerd";
  const first = options.engine === "26.1" ? [join(engineDir, "bin")] : [];
  const childEnv: NodeJS.ProcessEnv = { PATH: [...first, "/usr/sbin", "/usr/bin", "/sbin", "/bin"].join(":") };
  if (options.minApiVersion) childEnv.DOCKER_MIN_API_VERSION = options.minApiVersion;
  const args = [
    "--storage-driver=vfs",
    "--iptables=false",
    "--ip-forward=false",
    "--ip-masq=false",
    "--bridge=none",
    `--data-root=${join(dir, "data")}`,
    `--exec-root=${join(run, "exec")}`,
    `--pidfile=${join(dir, "dockerd.pid")}`,
    `--host=unix://${socket}`,
  ];
  let log = "";
  const child = spawn(dockerd, args, { env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
  endsWithTest(child);
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString("utf8")).slice(-256 * 1024);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const stop = async () => {
    await ended(child);
    // A dockerd that ended without unmounting (killed, or its containerd never came up) leaves its mounts of the
    // data root behind: they go before the folders, so that the test's clean-up can remove them.
    unmountUnder([dir, run]);
    rmSync(run, { recursive: true, force: true });
  };
  try {
    const ping = await untilAnswers(socket, child, () => log);
    const api = (method: string, path: string, body?: unknown) => call(socket, method, path, body);
    return {
      socket,
      version: ping.version,
      apiVersion: ping.apiVersion,
      log: () => log,
      api,
      async pull(image) {
        const at = image.lastIndexOf(":");
        const query = new URLSearchParams({ fromImage: image.slice(0, at), tag: image.slice(at + 1) });
        const answer = await api("POST", `/images/create?${query}`);
        // A pull that fails once it started still answers 200: its error is the stream's last message.
        if (answer.status !== 200 || /"error"\s*:/.test(answer.body)) {
          throw new Error(`docker pull ${image}: ${answer.status} ${answer.body.slice(-500)}`);
        }
      },
      async hasImage(image) {
        return (await api("GET", `/images/${encodeURIComponent(image)}/json`)).status === 200;
      },
      close: stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** /_ping until it answers, dockerd ends, or START_MS pass. */
async function untilAnswers(
  socket: string,
  child: ChildProcess,
  log: () => string,
): Promise<{ version: string; apiVersion: string }> {
  const deadline = Date.now() + START_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `dockerd ended (${child.exitCode ?? child.signalCode}) before it answered: ${log().slice(-2000)}`,
      );
    }
    const answer = await ping(socket).catch(() => undefined);
    if (answer) return answer;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`dockerd did not answer within ${START_MS / 1000} s: ${log().slice(-2000)}`);
}

function ping(socket: string): Promise<{ version: string; apiVersion: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: socket, path: "/_ping", method: "GET", timeout: 2000 }, (res) => {
      res.resume();
      const server = String(res.headers.server ?? "");
      const apiVersion = String(res.headers["api-version"] ?? "");
      if (res.statusCode !== 200 || apiVersion === "") reject(new Error(`answered ${res.statusCode}`));
      else resolve({ version: /^Docker\/(\S+)/.exec(server)?.[1] ?? server, apiVersion });
    });
    req.on("timeout", () => req.destroy(new Error("no answer")));
    req.on("error", reject);
    req.end();
  });
}

/** The most of an answer `api` keeps. */
const ANSWER_BYTES = 4 * 1024 * 1024;

function call(socket: string, method: string, path: string, body?: unknown): Promise<EngineAnswer> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: socket, path, method, timeout: 300_000 }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => {
        if (text.length < ANSWER_BYTES) text += chunk.toString("utf8");
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`${method} ${path}: no answer`)));
    req.on("error", reject);
    if (body !== undefined) req.setHeader("Content-Type", "application/json");
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** Unmounts (lazily) every mount at or below the folders, deepest first. */
function unmountUnder(dirs: string[]): void {
  const mounts = readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[4]?.replace(/\\040/g, " "))
    .filter((point): point is string => !!point && dirs.some((d) => point === d || point.startsWith(`${d}/`)))
    .sort((a, b) => b.length - a.length);
  for (const point of mounts) spawnSync("umount", ["-l", point]);
}

/**
 * A dockerd or registry the test process started ends with it: a worker that ends without its clean-up (a file's time
 * limit, an error in a hook) must not leave a daemon running on the machine.
 */
function endsWithTest(child: ChildProcess): void {
  const stop = () => child.kill("SIGTERM");
  process.once("exit", stop);
  child.once("exit", () => process.off("exit", stop));
}

/** SIGTERM, then SIGKILL after 20 s; resolves once the process ended. */
function ended(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const hard = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.once("exit", () => {
      clearTimeout(hard);
      resolve();
    });
    child.kill("SIGTERM");
  });
}
