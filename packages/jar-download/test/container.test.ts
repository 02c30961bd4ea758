import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { ConfigError, JobError } from "@mcops/core/errors";
import { VolumeDir } from "@mcops/core/volume";
import {
  type DockerStandIn,
  type DockerStandInOptions,
  type EngineVersion,
  type StandInImage,
  startDockerStandIn,
  type TempDir,
  type TestInstallerOptions,
  tempDir,
  testInstallerJar,
  waitUntil,
  YOLKS_IMAGES,
} from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { INSTALLER_LABELS, LogFrames, MAX_LINE_BYTES, runInstaller } from "../src/container.ts";
import { GUARDED_ENTRYPOINT } from "./config.ts";

const GAME = { uid: 988, gid: 988 };
const IMAGE = "ghcr.io/pterodactyl/yolks:java_21";
const JAVA_22 = "ghcr.io/pterodactyl/yolks:java_22";
const EGGS_21 = "ghcr.io/ptero-eggs/yolks:java_21";
const NEOFORGE: TestInstallerOptions = { loader: "neoforge", version: "21.1.77", game: "1.21.1" };
const CMD = ["java", "-jar", "installer.jar", "--installServer", "/home/container"];

let dir: TempDir;
let docker: DockerStandIn;
let staging: string;

beforeEach(async () => {
  dir = tempDir("mcops-container-");
  docker = await startDockerStandIn({ dir: dir.path });
  // The private staging directory: only root can pass its parent; the game's user owns it (the installer writes there).
  staging = join(dir.path, "staging");
  mkdirSync(staging, { mode: 0o700 });
  chownSync(staging, GAME.uid, GAME.gid);
});

afterEach(async () => {
  await docker.close();
  dir.cleanup();
});

/**
 * Another stand-in in place of the first, with other images or another engine, on a socket of its own (the staging
 * directory stays).
 */
let restarts = 0;
async function restart(options: Omit<DockerStandInOptions, "dir">): Promise<void> {
  await docker.close();
  restarts += 1;
  const own = join(dir.path, `docker-${restarts}`);
  mkdirSync(own);
  docker = await startDockerStandIn({ dir: own, ...options });
}

/** What runInstaller logged of the image's pull, as "INFO line" / "WARN line". */
let logged: string[] = [];
const log = {
  info: (line: string) => logged.push(`INFO ${line}`),
  warn: (line: string) => logged.push(`WARN ${line}`),
};
beforeEach(() => {
  logged = [];
});

function installer(options: Partial<TestInstallerOptions> = {}): void {
  writeFileSync(join(staging, "installer.jar"), testInstallerJar({ ...NEOFORGE, ...options }));
  chmodSync(join(staging, "installer.jar"), 0o644);
}

function run(
  lines: string[],
  extra: {
    timeoutMs?: number;
    signal?: AbortSignal;
    image?: string;
    socket?: string;
    dir?: VolumeDir;
    network?: string;
  } = {},
) {
  const dir = extra.dir ?? VolumeDir.open(staging);
  return runInstaller({
    socket: extra.socket ?? docker.socket,
    image: extra.image ?? IMAGE,
    user: GAME,
    dir,
    cmd: CMD,
    timeoutMs: extra.timeoutMs ?? 120_000,
    onLine: (line) => lines.push(line),
    log,
    signal: extra.signal,
    name: "mcops-installer-test",
    ...(extra.network ? { network: extra.network } : {}),
  }).finally(() => dir.close());
}

describe("runInstaller", () => {
  it("runs the installer in the server's image as 988:988, the staging directory its working directory", async () => {
    installer();
    const lines: string[] = [];
    const result = await run(lines);
    expect(result).toEqual({ exitCode: 0 });
    const args = "libraries/net/neoforged/neoforge/21.1.77/unix_args.txt";
    for (const file of ["run.sh", "user_jvm_args.txt", args]) {
      expect(statSync(join(staging, file)).uid).toBe(GAME.uid);
    }
    expect(readFileSync(join(staging, "run.sh"), "utf8")).toContain(`@${args}`);
    expect(lines).toContain("The server installed successfully");
    const [container] = docker.containers;
    expect(container).toMatchObject({
      name: "mcops-installer-test",
      image: IMAGE,
      user: "988:988",
      workingDir: "/home/container",
      // The command as its own Entrypoint and Cmd: the image's ENTRYPOINT does not run.
      entrypoint: GUARDED_ENTRYPOINT,
      cmd: CMD,
      labels: INSTALLER_LABELS,
      networkMode: "bridge",
      // As Wings' containers: no setuid binary of the image gains anything, and no fork bomb reaches the host's pids.
      capDrop: ["ALL"],
      securityOpt: ["no-new-privileges"],
      pidsLimit: 512,
      // Wings' installer limit: at least 1024 MiB, the server's own limit when higher.
      memory: 1024 * 1024 * 1024,
      tty: false,
      state: "removed",
    });
    expect(container?.binds).toEqual([{ source: staging, target: "/home/container", readOnly: false }]);
  });

  it("returns a failing installer's exit code, its stack trace among the lines", async () => {
    installer({ behaviour: "fail" });
    const lines: string[] = [];
    expect(await run(lines)).toEqual({ exitCode: 1 });
    expect(lines.some((line) => line.startsWith("java.io.IOException: Failed to download"))).toBe(true);
    expect(docker.containers[0]?.state).toBe("removed");
  });

  it("kills and removes an installer that hangs past the time limit: JobError", async () => {
    installer({ behaviour: "hang" });
    const error = await run([], { timeoutMs: 1500 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobError);
    expect((error as JobError).message).toBe("the installer did not finish within 1.5 s");
    expect(docker.containers[0]).toMatchObject({ state: "removed", killedWith: "SIGKILL", exitCode: 137 });
    const calls = docker.calls.map((c) => `${c.method} ${c.path.replace(/[0-9a-f]{64}/, "ID")} ${c.status}`);
    expect(calls).toContain("POST /containers/ID/kill 204");
    expect(calls.at(-1)).toBe("DELETE /containers/ID 204");
  });

  it("kills and removes it when the caller aborts (once it printed its first line)", async () => {
    installer({ behaviour: "hang" });
    const lines: string[] = [];
    const stop = new AbortController();
    const running = run(lines, { signal: stop.signal }).catch((e: unknown) => e);
    await waitUntil(() => lines.includes("Waiting for the download to start"), "the installer's line", 60_000);
    stop.abort();
    const error = await running;
    expect(error).toBeInstanceOf(JobError);
    expect((error as JobError).message).toBe("stopped while the installer ran");
    expect(docker.containers[0]).toMatchObject({ state: "removed", killedWith: "SIGKILL" });
  });

  it("no Docker socket: ConfigError naming /var/run/docker.sock", async () => {
    const socket = join(dir.path, "nothing.sock");
    expect(existsSync(socket)).toBe(false);
    const error = await run([], { socket }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).where).toBe(socket);
    expect((error as ConfigError).hint).toContain("/var/run/docker.sock");
  });
});

/** The installer's files, written by a run that ended with 0. */
function expectInstalled(result: { exitCode: number }, lines: string[]): void {
  expect(result, lines.join("\n")).toEqual({ exitCode: 0 });
  expect(readFileSync(join(staging, "run.sh"), "utf8")).toContain(
    "@libraries/net/neoforged/neoforge/21.1.77/unix_args.txt",
  );
  expect(lines).toContain("The server installed successfully");
}

describe("runInstaller: the container is never left behind", () => {
  it("a create whose answer never came: the container it made anyway is removed by its name", async () => {
    installer();
    docker.dropNextCreateAnswer();
    const dir = VolumeDir.open(staging);
    try {
      const installing = runInstaller({
        socket: docker.socket,
        image: IMAGE,
        user: GAME,
        dir,
        cmd: CMD,
        timeoutMs: 120_000,
        onLine: () => undefined,
        log,
      });
      await expect(installing).rejects.toThrow(/^Docker did not answer: /);
    } finally {
      dir.close();
    }
    expect(docker.containers).toHaveLength(1);
    expect(docker.containers[0]).toMatchObject({
      name: expect.stringMatching(/^mcops-installer-[0-9a-f]{12}$/),
      state: "removed",
    });
    expect(readdirSync(staging)).toEqual(["installer.jar"]);
  });
});

describe("runInstaller: the network (INSTALLER_NETWORK)", () => {
  it("joins the network named: Wings' own pterodactyl_nw", async () => {
    installer();
    expect((await run([], { network: "pterodactyl_nw" })).exitCode).toBe(0);
    expect(docker.containers[0]?.networkMode).toBe("pterodactyl_nw");
  });

  it("a network the engine lacks is found at the start: one line naming the setting, the container removed", async () => {
    installer();
    await expect(run([], { network: "pterodactyl-nw" })).rejects.toThrow(
      /^Docker has no network pterodactyl-nw for the installer's container \(INSTALLER_NETWORK\)$/,
    );
    expect(docker.containers[0]).toMatchObject({ state: "removed" });
    expect(readdirSync(staging)).toEqual(["installer.jar"]);
  });
});

describe("runInstaller: the directory Docker binds is proved to be the staging one", () => {
  it("one the game's user put at the staging directory's path before the start: nothing runs in it, JobError", async () => {
    installer();
    const made = VolumeDir.open(staging);
    try {
      // The game's user owns the volume the private directory is in: it can move it away and put its own at its path,
      // with an installer.jar of its choosing, for Docker to bind by that path.
      renameSync(staging, `${staging}.moved`);
      mkdirSync(staging);
      writeFileSync(join(staging, "installer.jar"), testInstallerJar(NEOFORGE));
      chownSync(staging, GAME.uid, GAME.gid);
      const lines: string[] = [];
      await expect(run(lines, { dir: made })).rejects.toThrow(
        /^Docker bound another directory than the installer's at \/home\/container: nothing was run$/,
      );
      expect(lines).toContain(
        "mcops: the working directory is not the one jar-download made for the installer: nothing was run",
      );
      // Nothing ran in the directory that was bound; the guard is gone from the real one, which holds what it held.
      expect(readdirSync(staging)).toEqual(["installer.jar"]);
      expect(readdirSync(`${staging}.moved`)).toEqual(["installer.jar"]);
      expect(docker.containers[0]).toMatchObject({ exitCode: 125, state: "removed" });
    } finally {
      made.close();
    }
  });

  it("binds the directory by the path it was made at (a descriptor's /proc path cannot be bound) and leaves no guard", async () => {
    installer();
    expect((await run([])).exitCode).toBe(0);
    expect(docker.containers[0]?.binds).toEqual([{ source: staging, target: "/home/container", readOnly: false }]);
    // No guard is left behind.
    expect(readdirSync(staging).filter((name) => name.startsWith(".mcops-bound-"))).toEqual([]);
  });
});

describe("runInstaller: the image's ENTRYPOINT never runs", () => {
  it.each([
    [JAVA_22, "pterodactyl/yolks java_22 to 24"],
    [EGGS_21, "every Ptero-Eggs/yolks Java image"],
  ])("installs in %s (%s: tini and an entrypoint.sh that ignores its arguments)", async (image) => {
    await restart({ images: [image] });
    installer();
    const lines: string[] = [];
    expectInstalled(await run(lines, { image }), lines);
    expect(docker.containers[0]).toMatchObject({ image, entrypoint: GUARDED_ENTRYPOINT, cmd: CMD, exitCode: 0 });
    // The image's entrypoint.sh would have shown its prompt and the empty $STARTUP.
    expect(lines.join("\n")).not.toContain("container@pterodactyl~");
  });
});

describe("runInstaller: the API version negotiated with the engine", () => {
  it.each([
    ["29.0", 52, "refuses anything below 1.44"],
    ["26.1", 45, "Debian 13's docker.io"],
    ["20.10", 41, "Debian 11 and 12's docker.io, nothing above 1.41"],
  ] as const)("Docker %s: every call at 1.%i (%s)", async (engine: EngineVersion, api: number, _why: string) => {
    await restart({ engine });
    installer();
    const lines: string[] = [];
    expectInstalled(await run(lines), lines);
    expect(docker.calls.length).toBeGreaterThan(4);
    expect(new Set(docker.calls.map((c) => c.api))).toEqual(new Set([api]));
  });
});

describe("runInstaller: the image pulled first", () => {
  it("a missing image is pulled, a line per layer and the final status logged, and the install goes on", async () => {
    await restart({ images: ["ghcr.io/pterodactyl/yolks:java_17"] });
    installer();
    const lines: string[] = [];
    expectInstalled(await run(lines), lines);
    expect(docker.images).toContain(IMAGE);
    const layers = logged.filter((line) => /^INFO pull: [0-9a-f]{12}: Pull complete$/.test(line));
    expect(layers).toHaveLength(5);
    expect(logged).toEqual([
      `INFO pulling ${IMAGE}`,
      ...layers,
      expect.stringMatching(/^INFO pull: Digest: sha256:[0-9a-f]{64}$/),
      `INFO pull: Status: Downloaded newer image for ${IMAGE}`,
    ]);
    const calls = docker.calls.map((c) => `${c.method} ${c.path.split("?")[0]} ${c.status}`);
    expect(calls.slice(0, 2)).toEqual(["POST /images/create 200", "POST /containers/create 201"]);
  });

  it("an image on the machine is pulled too (as Wings does before a start): up to date, two lines", async () => {
    installer();
    const lines: string[] = [];
    expectInstalled(await run(lines), lines);
    expect(logged).toEqual([
      `INFO pulling ${IMAGE}`,
      expect.stringMatching(/^INFO pull: Digest: /),
      `INFO pull: Status: Image is up to date for ${IMAGE}`,
    ]);
  });

  it("a ~ image is local: never pulled, its container made without the ~", async () => {
    const local: StandInImage = {
      ...(YOLKS_IMAGES.find((i) => i.ref === JAVA_22) as StandInImage),
      ref: "local/yolks:java_22",
    };
    await restart({ images: [local] });
    installer();
    const lines: string[] = [];
    expectInstalled(await run(lines, { image: "~local/yolks:java_22" }), lines);
    expect(docker.calls.filter((c) => c.path.startsWith("/images/"))).toEqual([]);
    expect(docker.containers[0]?.image).toBe("local/yolks:java_22");
    expect(logged).toEqual(["INFO local/yolks:java_22 is a local image (~ in the panel): it is not pulled"]);
  });

  it("stopped before the pull: JobError, nothing created", async () => {
    const stop = new AbortController();
    stop.abort();
    const error = await run([], { signal: stop.signal }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobError);
    expect((error as JobError).message).toBe("stopped while the installer's image was pulled");
    expect(docker.containers).toEqual([]);
  });

  it("a ~ image that is not there: JobError, nothing pulled", async () => {
    const error = await run([], { image: "~local/yolks:java_22" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobError);
    expect((error as JobError).message).toBe("the image local/yolks:java_22 is not on this machine");
    expect(docker.calls.filter((c) => c.path.startsWith("/images/"))).toEqual([]);
  });

  it.each([
    [
      "the registry unreachable",
      { kind: "unreachable" } as const,
      'Get "https://ghcr.io/v2/": dial tcp: lookup ghcr.io: no such host',
    ],
    [
      "the stream broken",
      { kind: "midway", message: "read: connection reset by peer" } as const,
      "read: connection reset by peer",
    ],
  ])(
    "a pull that fails (%s) for an image on the machine: a warning, and the install goes on",
    async (_, fault, reason) => {
      docker.injectPull(fault);
      installer();
      const lines: string[] = [];
      expectInstalled(await run(lines), lines);
      expect(logged.filter((line) => line.startsWith("WARN"))).toEqual([
        `WARN could not pull ${IMAGE} (${fault.kind === "unreachable" ? "500 " : ""}${reason}): the image on this machine is used, as Wings does`,
      ]);
    },
  );

  it("a pull that fails for a missing image: one line saying why, a hint, no container", async () => {
    const missing = "ghcr.io/pterodactyl/yolks:java_99";
    const error = await run([], { image: missing }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobError);
    expect((error as JobError).message).toBe(
      `the image ${missing} is not on this machine and could not be pulled: 404 manifest for ${missing} not found: manifest unknown: manifest unknown`,
    );
    expect((error as JobError).hint).toBe(
      `check that this node reaches ghcr.io and that the egg's image exists, or pull it yourself (docker pull ${missing}), then run again`,
    );
    expect(docker.containers).toEqual([]);

    await restart({ images: [] });
    docker.injectPull({ kind: "midway", message: "read: connection reset by peer" });
    const broken = await run([], { image: IMAGE }).catch((e: unknown) => e);
    expect((broken as JobError).message).toBe(
      `the image ${IMAGE} is not on this machine and could not be pulled: read: connection reset by peer`,
    );
    expect(docker.containers).toEqual([]);
  });

  it("a pull refused for want of a login: the hint says registries' logins are not used, and how to pull it", async () => {
    const image = "ghcr.io/someone/private-yolks:java_21";
    const error = await run([], { image }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobError);
    expect((error as JobError).message).toBe(
      `the image ${image} is not on this machine and could not be pulled: 500 Head "https://ghcr.io/v2/someone/private-yolks/manifests/java_21": unauthorized`,
    );
    expect((error as JobError).message).not.toContain("\n");
    expect((error as JobError).hint).toContain("Wings' docker.registries are not read");
    expect((error as JobError).hint).toContain(`docker login ghcr.io, docker pull ${image}`);
  });
});

/** One stdcopy frame. */
function frame(stream: number, text: string | Buffer): Buffer {
  const data = Buffer.from(text);
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(data.length, 4);
  return Buffer.concat([header, data]);
}

describe("LogFrames", () => {
  it("joins lines split across frames and chunks, per stream, without control characters", () => {
    const lines: string[] = [];
    const frames = new LogFrames((line) => lines.push(line));
    const bytes = Buffer.concat([
      frame(1, "Downloading lib"),
      frame(2, "warn\x1b[31m red\x1b[0m\r\n"),
      frame(1, "raries\nDone"),
    ]);
    for (let at = 0; at < bytes.length; at += 3) frames.push(bytes.subarray(at, at + 3));
    frames.end();
    expect(lines).toEqual(["warn red", "Downloading libraries", "Done"]);
  });

  it("cuts a line past its bound and stops at an unknown stream header", () => {
    const lines: string[] = [];
    const frames = new LogFrames((line) => lines.push(line));
    frames.push(frame(1, `${"x".repeat(MAX_LINE_BYTES * 3)}\nnext\n`));
    frames.push(frame(7, "not a stream\n"));
    frames.push(frame(1, "after\n"));
    expect(lines[0]).toBe(`${"x".repeat(MAX_LINE_BYTES)} …`);
    expect(lines[1]).toBe("next");
    expect(lines[2]).toContain("unknown header 7");
    expect(lines).toHaveLength(3);
  });
});
